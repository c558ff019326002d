//! Schema facts about the built-in Kubernetes types, in the project's own form: lookups over
//! the table generated from upstream's OpenAPI v2 document of kube-apiserver v1.33.1
//! ([`crate::generated::openapi_facts`]). For every definition (e.g.
//! `io.k8s.api.apps.v1.Deployment`) it records what patching and field-set logic needs: the
//! shape of each non-scalar field and the `x-kubernetes-*` extensions.
//!
//! Deliberately omitted: plain scalar fields without extensions (so `field()` returning `None`
//! means "scalar, or not a field at all"), descriptions, formats, validation, defaults. This
//! module does no I/O and never reads the upstream document: the data is compiled in.

pub use crate::generated::openapi_facts::{Definition, Field, Ty};
use crate::generated::openapi_facts::{DEFS, GVK_INDEX};

/// All definitions, sorted by name.
pub fn definitions() -> &'static [Definition] {
    DEFS
}

/// Looks up a definition by its full OpenAPI name.
pub fn definition(name: &str) -> Option<&'static Definition> {
    DEFS.binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| &DEFS[i])
}

/// Looks up the definition that declares the given group/version/kind (core group is "").
pub fn definition_for_gvk(group: &str, version: &str, kind: &str) -> Option<&'static Definition> {
    GVK_INDEX
        .binary_search_by(|&(g, v, k, _)| (g, v, k).cmp(&(group, version, kind)))
        .ok()
        .and_then(|i| DEFS.get(usize::from(GVK_INDEX[i].3)))
}

/// Looks up a field of a definition by its exact JSON name. `None` means the field is a plain
/// scalar without extensions, or does not exist.
pub fn field<'a>(def: &'a Definition, name: &str) -> Option<&'a Field> {
    def.fields
        .binary_search_by(|f| f.name.cmp(name))
        .ok()
        .map(|i| &def.fields[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_consistent() {
        for w in DEFS.windows(2) {
            assert!(w[0].name < w[1].name, "{} !< {}", w[0].name, w[1].name);
        }
        for d in DEFS {
            for w in d.fields.windows(2) {
                assert!(w[0].name < w[1].name, "{}: fields unsorted", d.name);
            }
            for f in d.fields {
                if let Ty::Ref(r) | Ty::ArrayOfRef(r) | Ty::MapOfRef(r) = f.ty {
                    assert!(definition(r).is_some(), "{}.{} -> {r}", d.name, f.name);
                }
            }
            for &(g, v, k) in d.gvk {
                assert_eq!(definition_for_gvk(g, v, k).map(|x| x.name), Some(d.name));
            }
        }
        for w in GVK_INDEX.windows(2) {
            assert!((w[0].0, w[0].1, w[0].2) < (w[1].0, w[1].1, w[1].2));
        }
    }

    #[test]
    fn lookups() {
        // (definition, field, ty, strategy, merge key, list type, map keys)
        type Case = (
            &'static str,
            &'static str,
            Ty,
            &'static str,
            &'static str,
            &'static str,
            &'static [&'static str],
        );
        let cases: &[Case] = &[
            (
                "io.k8s.api.core.v1.PodSpec",
                "containers",
                Ty::ArrayOfRef("io.k8s.api.core.v1.Container"),
                "merge",
                "name",
                "map",
                &["name"],
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "volumes",
                Ty::ArrayOfRef("io.k8s.api.core.v1.Volume"),
                "merge,retainKeys",
                "name",
                "map",
                &["name"],
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "tolerations",
                Ty::ArrayOfRef("io.k8s.api.core.v1.Toleration"),
                "",
                "",
                "atomic",
                &[],
            ),
            (
                "io.k8s.api.core.v1.PodSpec",
                "nodeSelector",
                Ty::MapOfScalar,
                "",
                "",
                "",
                &[],
            ),
            (
                "io.k8s.api.core.v1.Container",
                "ports",
                Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerPort"),
                "merge",
                "containerPort",
                "map",
                &["containerPort", "protocol"],
            ),
            (
                "io.k8s.api.apps.v1.DeploymentSpec",
                "strategy",
                Ty::Ref("io.k8s.api.apps.v1.DeploymentStrategy"),
                "retainKeys",
                "",
                "",
                &[],
            ),
            (
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "finalizers",
                Ty::ArrayOfScalar,
                "merge",
                "",
                "set",
                &[],
            ),
            (
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "ownerReferences",
                Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"),
                "merge",
                "uid",
                "map",
                &["uid"],
            ),
            (
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "labels",
                Ty::MapOfScalar,
                "",
                "",
                "",
                &[],
            ),
            (
                "io.k8s.api.apps.v1.ControllerRevision",
                "data",
                Ty::Any,
                "",
                "",
                "",
                &[],
            ),
            (
                "io.k8s.api.core.v1.ResourceRequirements",
                "limits",
                Ty::MapOfScalar,
                "",
                "",
                "",
                &[],
            ),
        ];
        for &(d, f, ty, ps, mk, lt, keys) in cases {
            let def = definition(d).unwrap_or_else(|| panic!("{d}"));
            let fld = field(def, f).unwrap_or_else(|| panic!("{d}.{f}"));
            assert_eq!(
                (
                    fld.ty,
                    fld.patch_strategy,
                    fld.patch_merge_key,
                    fld.list_type,
                    fld.list_map_keys
                ),
                (ty, ps, mk, lt, keys),
                "{d}.{f}"
            );
        }
        let dep = definition("io.k8s.api.apps.v1.DeploymentSpec").unwrap();
        assert!(field(dep, "replicas").is_none());
        assert!(field(dep, "nope").is_none());
        assert!(definition("io.k8s.api.apps.v1.Nope").is_none());
        assert_eq!(
            definition_for_gvk("apps", "v1", "Deployment").map(|d| d.name),
            Some("io.k8s.api.apps.v1.Deployment")
        );
        assert_eq!(
            definition_for_gvk("", "v1", "Pod").map(|d| d.name),
            Some("io.k8s.api.core.v1.Pod")
        );
        assert!(definition_for_gvk("apps", "v2", "Deployment").is_none());
        let sel = definition("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector").unwrap();
        assert_eq!(sel.map_type, "atomic");
    }
}
