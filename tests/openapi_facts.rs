//! Oracle test: the compiled-in `rafter::openapi::facts` table must agree with upstream's
//! OpenAPI v2 document (kube-apiserver v1.33.1) on every definition, every non-scalar field's
//! shape, every `x-kubernetes-*` patch/list/map extension and every group-version-kind.
//! The document lives outside the project (`../shared/`); the test is skipped when absent.

use rafter::openapi::facts::{self, Ty};
use serde_json::Value;

const SWAGGER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/data/kubernetes-openapi/swagger-v1.33.1.json"
);

/// Definitions the facts table models as opaque JSON.
const OPAQUE: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
];

fn str_ext<'a>(p: &'a Value, key: &str) -> &'a str {
    p.get(key).and_then(Value::as_str).unwrap_or("")
}

fn ref_name(v: &Value) -> Option<&str> {
    v.get("$ref")
        .and_then(Value::as_str)
        .map(|r| r.trim_start_matches("#/definitions/"))
}

/// The shape upstream's property implies, in the facts' vocabulary.
fn expected_ty(defs: &serde_json::Map<String, Value>, p: &Value) -> Ty {
    // (is_opaque_or_typeless, is_string_encoded)
    let classify = |name: &str| {
        let d = &defs[name];
        let opaque = OPAQUE.contains(&name) || d.get("type").is_none();
        let scalar = !opaque && d.get("type").and_then(Value::as_str) != Some("object");
        (opaque, scalar)
    };
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    if let Some(r) = ref_name(p) {
        return match classify(r) {
            (true, _) => Ty::Any,
            (_, true) => Ty::Scalar,
            _ => Ty::Ref(leak(r)),
        };
    }
    match p.get("type").and_then(Value::as_str) {
        Some("array") => match ref_name(&p["items"]) {
            Some(r) if !classify(r).1 => Ty::ArrayOfRef(leak(r)),
            _ => Ty::ArrayOfScalar,
        },
        Some("object") => match p.get("additionalProperties") {
            None => Ty::Any,
            Some(ap) => match ref_name(ap) {
                Some(r) if !classify(r).1 => Ty::MapOfRef(leak(r)),
                _ => Ty::MapOfScalar,
            },
        },
        _ => Ty::Scalar,
    }
}

#[test]
fn facts_match_upstream_openapi() {
    let text = match std::fs::read_to_string(SWAGGER) {
        Ok(t) => t,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but {SWAGGER} cannot be read: {e}"
            );
            eprintln!("skipping: cannot read {SWAGGER}: {e}");
            return;
        }
    };
    let doc: Value = serde_json::from_str(&text).expect("swagger parses");
    let defs = doc["definitions"].as_object().expect("definitions");
    let mut problems = Vec::new();
    let mut checked_ext = 0usize;

    assert_eq!(facts::definitions().len(), defs.len(), "definition count");
    for (name, d) in defs {
        let Some(fd) = facts::definition(name) else {
            problems.push(format!("{name}: missing definition"));
            continue;
        };
        if fd.map_type != str_ext(d, "x-kubernetes-map-type") {
            problems.push(format!("{name}: map type {:?}", fd.map_type));
        }
        let gvk: Vec<(&str, &str, &str)> = d
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|g| {
                        (
                            str_ext(g, "group"),
                            str_ext(g, "version"),
                            str_ext(g, "kind"),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if fd.gvk != gvk.as_slice() {
            problems.push(format!("{name}: gvk {:?} != {gvk:?}", fd.gvk));
        }
        for &(g, v, k) in &gvk {
            if facts::definition_for_gvk(g, v, k).map(|x| x.name) != Some(name.as_str()) {
                problems.push(format!("{name}: definition_for_gvk({g},{v},{k})"));
            }
        }
        let props = d.get("properties").and_then(Value::as_object);
        let nprops = props.map_or(0, |p| p.len());
        for f in fd.fields {
            if props.and_then(|p| p.get(f.name)).is_none() {
                problems.push(format!("{name}.{}: not upstream", f.name));
            }
        }
        assert!(fd.fields.len() <= nprops);
        for (pname, p) in props.into_iter().flatten() {
            let ty = expected_ty(defs, p);
            let strategy = str_ext(p, "x-kubernetes-patch-strategy");
            let key = str_ext(p, "x-kubernetes-patch-merge-key");
            let list_type = str_ext(p, "x-kubernetes-list-type");
            let map_type = str_ext(p, "x-kubernetes-map-type");
            let keys: Vec<&str> = p
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let has_ext = !(strategy.is_empty()
                && key.is_empty()
                && list_type.is_empty()
                && map_type.is_empty()
                && keys.is_empty());
            match facts::field(fd, pname) {
                None if ty == Ty::Scalar && !has_ext => {}
                None => problems.push(format!("{name}.{pname}: missing ({ty:?})")),
                Some(f) => {
                    checked_ext += usize::from(has_ext);
                    let got = (f.ty, f.patch_strategy, f.patch_merge_key, f.list_type);
                    if got != (ty, strategy, key, list_type)
                        || f.list_map_keys != keys.as_slice()
                        || f.map_type != map_type
                    {
                        problems.push(format!(
                            "{name}.{pname}: facts {f:?}, upstream ({ty:?}, {strategy:?}, {key:?}, {list_type:?}, {keys:?}, {map_type:?})"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        checked_ext > 350,
        "only {checked_ext} fields with extensions checked"
    );
    assert!(
        problems.is_empty(),
        "{} mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
