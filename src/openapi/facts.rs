//! Schema facts about the built-in Kubernetes types, in the project's own form.
//!
//! This table is generated (by a throwaway script, not part of the project) from upstream's
//! OpenAPI v2 document of kube-apiserver v1.33.1. For every definition (e.g.
//! `io.k8s.api.apps.v1.Deployment`) it records what patching and field-set logic needs:
//! the shape of each non-scalar field (object / list / map, and of what), and the
//! `x-kubernetes-*` extensions (patch strategy, patch merge key, list type, list map keys,
//! map type) plus the definition-level `x-kubernetes-group-version-kind` and
//! `x-kubernetes-map-type`.
//!
//! Deliberately omitted: plain scalar fields without extensions (so `field()` returning `None`
//! means "scalar, or not a field at all"), descriptions, formats, validation, defaults. References
//! to string-encoded definitions (`Quantity`, `Time`, `MicroTime`, `IntOrString`) are scalars;
//! references to opaque JSON (`RawExtension`, `FieldsV1`, apiextensions' `JSON` and
//! `JSONSchemaPropsOr*`) are [`Ty::Any`]. This module does no I/O and never reads the upstream
//! document: the data is compiled in.

/// The shape of a field, as far as patching needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string, number, boolean, or a string-encoded type (Quantity, Time, IntOrString).
    Scalar,
    /// An object of the named definition.
    Ref(&'static str),
    /// A list of scalars.
    ArrayOfScalar,
    /// A list of objects of the named definition.
    ArrayOfRef(&'static str),
    /// A map (JSON object with arbitrary keys) of scalars (or of lists of strings).
    MapOfScalar,
    /// A map of objects of the named definition.
    MapOfRef(&'static str),
    /// Opaque JSON: `RawExtension`, `FieldsV1`, apiextensions `JSON` / `JSONSchemaPropsOr*`.
    Any,
}

/// One field of a definition. Empty strings / slices mean "extension absent".
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    /// `x-kubernetes-patch-strategy`, e.g. `merge`, `retainKeys`, `merge,retainKeys`, `replace`.
    pub patch_strategy: &'static str,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: &'static str,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub list_type: &'static str,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type` on the field: `atomic` or `granular`.
    pub map_type: &'static str,
}

/// One definition of the OpenAPI document.
#[derive(Debug)]
pub struct Definition {
    /// Full OpenAPI name, e.g. `io.k8s.api.apps.v1.Deployment`.
    pub name: &'static str,
    /// Non-scalar fields and fields carrying extensions, sorted by name.
    pub fields: &'static [Field],
    /// `x-kubernetes-group-version-kind` entries as (group, version, kind); group "" is core.
    pub gvk: &'static [(&'static str, &'static str, &'static str)],
    /// Definition-level `x-kubernetes-map-type` (`atomic`), or "".
    pub map_type: &'static str,
}

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

const E: &[&str] = &[];

const fn d(
    name: &'static str,
    map_type: &'static str,
    gvk: &'static [(&'static str, &'static str, &'static str)],
    fields: &'static [Field],
) -> Definition {
    Definition {
        name,
        fields,
        gvk,
        map_type,
    }
}

const fn f(name: &'static str, ty: Ty) -> Field {
    x(name, ty, "", "", "", E, "")
}

const fn x(
    name: &'static str,
    ty: Ty,
    patch_strategy: &'static str,
    patch_merge_key: &'static str,
    list_type: &'static str,
    list_map_keys: &'static [&'static str],
    map_type: &'static str,
) -> Field {
    Field {
        name,
        ty,
        patch_strategy,
        patch_merge_key,
        list_type,
        list_map_keys,
        map_type,
    }
}

// ---------------------------------------------------------------------------------------------
// Generated data below.

/// All definitions, sorted by name.
#[rustfmt::skip]
static DEFS: &[Definition] = &[
    d("io.k8s.api.admissionregistration.v1.AuditAnnotation", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.ExpressionWarning", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.MatchCondition", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.MatchResources", "atomic", &[], &[
        x("excludeResourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("objectSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("resourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.MutatingWebhook", "", &[], &[
        x("admissionReviewVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("clientConfig", Ty::Ref("io.k8s.api.admissionregistration.v1.WebhookClientConfig")),
        x("matchConditions", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.MatchCondition"), "merge", "name", "map", &["name"], ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("objectSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.RuleWithOperations"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration", "", &[("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("webhooks", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.MutatingWebhook"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.MutatingWebhookConfigurationList", "", &[("admissionregistration.k8s.io", "v1", "MutatingWebhookConfigurationList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1.NamedRuleWithOperations", "atomic", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("apiVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("operations", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resourceNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ParamKind", "atomic", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.ParamRef", "atomic", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.admissionregistration.v1.RuleWithOperations", "", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("apiVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("operations", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ServiceReference", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.TypeChecking", "", &[], &[
        x("expressionWarnings", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.ExpressionWarning"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy", "", &[("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec")),
        f("status", Ty::Ref("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus")),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding", "", &[("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec")),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingList", "", &[("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBindingList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec", "", &[], &[
        f("matchResources", Ty::Ref("io.k8s.api.admissionregistration.v1.MatchResources")),
        f("paramRef", Ty::Ref("io.k8s.api.admissionregistration.v1.ParamRef")),
        x("validationActions", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyList", "", &[("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec", "", &[], &[
        x("auditAnnotations", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.AuditAnnotation"), "", "", "atomic", E, ""),
        x("matchConditions", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.MatchCondition"), "merge", "name", "map", &["name"], ""),
        f("matchConstraints", Ty::Ref("io.k8s.api.admissionregistration.v1.MatchResources")),
        f("paramKind", Ty::Ref("io.k8s.api.admissionregistration.v1.ParamKind")),
        x("validations", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.Validation"), "", "", "atomic", E, ""),
        x("variables", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.Variable"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "", "", "map", &["type"], ""),
        f("typeChecking", Ty::Ref("io.k8s.api.admissionregistration.v1.TypeChecking")),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "", &[], &[
        x("admissionReviewVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("clientConfig", Ty::Ref("io.k8s.api.admissionregistration.v1.WebhookClientConfig")),
        x("matchConditions", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.MatchCondition"), "merge", "name", "map", &["name"], ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("objectSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.RuleWithOperations"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", "", &[("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("webhooks", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.ValidatingWebhook"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfigurationList", "", &[("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfigurationList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1.Validation", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.Variable", "atomic", &[], &[]),
    d("io.k8s.api.admissionregistration.v1.WebhookClientConfig", "", &[], &[
        f("service", Ty::Ref("io.k8s.api.admissionregistration.v1.ServiceReference")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.ApplyConfiguration", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1alpha1.JSONPatch", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1alpha1.MatchCondition", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1alpha1.MatchResources", "atomic", &[], &[
        x("excludeResourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("objectSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("resourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicy", "", &[("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicy")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicySpec")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBinding", "", &[("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyBinding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBindingSpec")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBindingList", "", &[("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyBindingList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBinding")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyBindingSpec", "", &[], &[
        f("matchResources", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.MatchResources")),
        f("paramRef", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.ParamRef")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicyList", "", &[("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicy")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.MutatingAdmissionPolicySpec", "", &[], &[
        x("matchConditions", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.MatchCondition"), "merge", "name", "map", &["name"], ""),
        f("matchConstraints", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.MatchResources")),
        x("mutations", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.Mutation"), "", "", "atomic", E, ""),
        f("paramKind", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.ParamKind")),
        x("variables", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1alpha1.Variable"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.Mutation", "", &[], &[
        f("applyConfiguration", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.ApplyConfiguration")),
        f("jsonPatch", Ty::Ref("io.k8s.api.admissionregistration.v1alpha1.JSONPatch")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.NamedRuleWithOperations", "atomic", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("apiVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("operations", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resourceNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.ParamKind", "atomic", &[], &[]),
    d("io.k8s.api.admissionregistration.v1alpha1.ParamRef", "atomic", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.admissionregistration.v1alpha1.Variable", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.AuditAnnotation", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.ExpressionWarning", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.MatchCondition", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.MatchResources", "atomic", &[], &[
        x("excludeResourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("objectSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("resourceRules", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.NamedRuleWithOperations"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.NamedRuleWithOperations", "atomic", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("apiVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("operations", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resourceNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ParamKind", "atomic", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.ParamRef", "atomic", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.TypeChecking", "", &[], &[
        x("expressionWarnings", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.ExpressionWarning"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicy", "", &[("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicy")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicySpec")),
        f("status", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyStatus")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBinding", "", &[("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyBinding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingSpec")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingList", "", &[("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyBindingList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBinding")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingSpec", "", &[], &[
        f("matchResources", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.MatchResources")),
        f("paramRef", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.ParamRef")),
        x("validationActions", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyList", "", &[("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicy")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicySpec", "", &[], &[
        x("auditAnnotations", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.AuditAnnotation"), "", "", "atomic", E, ""),
        x("matchConditions", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.MatchCondition"), "merge", "name", "map", &["name"], ""),
        f("matchConstraints", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.MatchResources")),
        f("paramKind", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.ParamKind")),
        x("validations", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.Validation"), "", "", "atomic", E, ""),
        x("variables", Ty::ArrayOfRef("io.k8s.api.admissionregistration.v1beta1.Variable"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.ValidatingAdmissionPolicyStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "", "", "map", &["type"], ""),
        f("typeChecking", Ty::Ref("io.k8s.api.admissionregistration.v1beta1.TypeChecking")),
    ]),
    d("io.k8s.api.admissionregistration.v1beta1.Validation", "", &[], &[]),
    d("io.k8s.api.admissionregistration.v1beta1.Variable", "atomic", &[], &[]),
    d("io.k8s.api.apiserverinternal.v1alpha1.ServerStorageVersion", "", &[], &[
        x("decodableVersions", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("servedVersions", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.apiserverinternal.v1alpha1.StorageVersion", "", &[("internal.apiserver.k8s.io", "v1alpha1", "StorageVersion")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionSpec")),
        f("status", Ty::Ref("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionStatus")),
    ]),
    d("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionCondition", "", &[], &[]),
    d("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionList", "", &[("internal.apiserver.k8s.io", "v1alpha1", "StorageVersionList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apiserverinternal.v1alpha1.StorageVersion")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionSpec", "", &[], &[]),
    d("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.apiserverinternal.v1alpha1.StorageVersionCondition"), "", "", "map", &["type"], ""),
        x("storageVersions", Ty::ArrayOfRef("io.k8s.api.apiserverinternal.v1alpha1.ServerStorageVersion"), "", "", "map", &["apiServerID"], ""),
    ]),
    d("io.k8s.api.apps.v1.ControllerRevision", "", &[("apps", "v1", "ControllerRevision")], &[
        f("data", Ty::Any),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
    ]),
    d("io.k8s.api.apps.v1.ControllerRevisionList", "", &[("apps", "v1", "ControllerRevisionList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apps.v1.ControllerRevision")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apps.v1.DaemonSet", "", &[("apps", "v1", "DaemonSet")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.apps.v1.DaemonSetSpec")),
        f("status", Ty::Ref("io.k8s.api.apps.v1.DaemonSetStatus")),
    ]),
    d("io.k8s.api.apps.v1.DaemonSetCondition", "", &[], &[]),
    d("io.k8s.api.apps.v1.DaemonSetList", "", &[("apps", "v1", "DaemonSetList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apps.v1.DaemonSet")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apps.v1.DaemonSetSpec", "", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
        f("updateStrategy", Ty::Ref("io.k8s.api.apps.v1.DaemonSetUpdateStrategy")),
    ]),
    d("io.k8s.api.apps.v1.DaemonSetStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.apps.v1.DaemonSetCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.apps.v1.DaemonSetUpdateStrategy", "", &[], &[
        f("rollingUpdate", Ty::Ref("io.k8s.api.apps.v1.RollingUpdateDaemonSet")),
    ]),
    d("io.k8s.api.apps.v1.Deployment", "", &[("apps", "v1", "Deployment")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.apps.v1.DeploymentSpec")),
        f("status", Ty::Ref("io.k8s.api.apps.v1.DeploymentStatus")),
    ]),
    d("io.k8s.api.apps.v1.DeploymentCondition", "", &[], &[]),
    d("io.k8s.api.apps.v1.DeploymentList", "", &[("apps", "v1", "DeploymentList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apps.v1.Deployment")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apps.v1.DeploymentSpec", "", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("strategy", Ty::Ref("io.k8s.api.apps.v1.DeploymentStrategy"), "retainKeys", "", "", E, ""),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
    ]),
    d("io.k8s.api.apps.v1.DeploymentStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.apps.v1.DeploymentCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.apps.v1.DeploymentStrategy", "", &[], &[
        f("rollingUpdate", Ty::Ref("io.k8s.api.apps.v1.RollingUpdateDeployment")),
    ]),
    d("io.k8s.api.apps.v1.ReplicaSet", "", &[("apps", "v1", "ReplicaSet")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.apps.v1.ReplicaSetSpec")),
        f("status", Ty::Ref("io.k8s.api.apps.v1.ReplicaSetStatus")),
    ]),
    d("io.k8s.api.apps.v1.ReplicaSetCondition", "", &[], &[]),
    d("io.k8s.api.apps.v1.ReplicaSetList", "", &[("apps", "v1", "ReplicaSetList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apps.v1.ReplicaSet")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apps.v1.ReplicaSetSpec", "", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
    ]),
    d("io.k8s.api.apps.v1.ReplicaSetStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.apps.v1.ReplicaSetCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.apps.v1.RollingUpdateDaemonSet", "", &[], &[]),
    d("io.k8s.api.apps.v1.RollingUpdateDeployment", "", &[], &[]),
    d("io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy", "", &[], &[]),
    d("io.k8s.api.apps.v1.StatefulSet", "", &[("apps", "v1", "StatefulSet")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.apps.v1.StatefulSetSpec")),
        f("status", Ty::Ref("io.k8s.api.apps.v1.StatefulSetStatus")),
    ]),
    d("io.k8s.api.apps.v1.StatefulSetCondition", "", &[], &[]),
    d("io.k8s.api.apps.v1.StatefulSetList", "", &[("apps", "v1", "StatefulSetList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.apps.v1.StatefulSet")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.apps.v1.StatefulSetOrdinals", "", &[], &[]),
    d("io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy", "", &[], &[]),
    d("io.k8s.api.apps.v1.StatefulSetSpec", "", &[], &[
        f("ordinals", Ty::Ref("io.k8s.api.apps.v1.StatefulSetOrdinals")),
        f("persistentVolumeClaimRetentionPolicy", Ty::Ref("io.k8s.api.apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy")),
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
        f("updateStrategy", Ty::Ref("io.k8s.api.apps.v1.StatefulSetUpdateStrategy")),
        x("volumeClaimTemplates", Ty::ArrayOfRef("io.k8s.api.core.v1.PersistentVolumeClaim"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.apps.v1.StatefulSetStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.apps.v1.StatefulSetCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.apps.v1.StatefulSetUpdateStrategy", "", &[], &[
        f("rollingUpdate", Ty::Ref("io.k8s.api.apps.v1.RollingUpdateStatefulSetStrategy")),
    ]),
    d("io.k8s.api.authentication.v1.BoundObjectReference", "", &[], &[]),
    d("io.k8s.api.authentication.v1.SelfSubjectReview", "", &[("authentication.k8s.io", "v1", "SelfSubjectReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("status", Ty::Ref("io.k8s.api.authentication.v1.SelfSubjectReviewStatus")),
    ]),
    d("io.k8s.api.authentication.v1.SelfSubjectReviewStatus", "", &[], &[
        f("userInfo", Ty::Ref("io.k8s.api.authentication.v1.UserInfo")),
    ]),
    d("io.k8s.api.authentication.v1.TokenRequest", "", &[("authentication.k8s.io", "v1", "TokenRequest")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authentication.v1.TokenRequestSpec")),
        f("status", Ty::Ref("io.k8s.api.authentication.v1.TokenRequestStatus")),
    ]),
    d("io.k8s.api.authentication.v1.TokenRequestSpec", "", &[], &[
        x("audiences", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("boundObjectRef", Ty::Ref("io.k8s.api.authentication.v1.BoundObjectReference")),
    ]),
    d("io.k8s.api.authentication.v1.TokenRequestStatus", "", &[], &[]),
    d("io.k8s.api.authentication.v1.TokenReview", "", &[("authentication.k8s.io", "v1", "TokenReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authentication.v1.TokenReviewSpec")),
        f("status", Ty::Ref("io.k8s.api.authentication.v1.TokenReviewStatus")),
    ]),
    d("io.k8s.api.authentication.v1.TokenReviewSpec", "", &[], &[
        x("audiences", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authentication.v1.TokenReviewStatus", "", &[], &[
        x("audiences", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("user", Ty::Ref("io.k8s.api.authentication.v1.UserInfo")),
    ]),
    d("io.k8s.api.authentication.v1.UserInfo", "", &[], &[
        f("extra", Ty::MapOfScalar),
        x("groups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authorization.v1.FieldSelectorAttributes", "", &[], &[
        x("requirements", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authorization.v1.LabelSelectorAttributes", "", &[], &[
        x("requirements", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authorization.v1.LocalSubjectAccessReview", "", &[("authorization.k8s.io", "v1", "LocalSubjectAccessReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authorization.v1.SubjectAccessReviewSpec")),
        f("status", Ty::Ref("io.k8s.api.authorization.v1.SubjectAccessReviewStatus")),
    ]),
    d("io.k8s.api.authorization.v1.NonResourceAttributes", "", &[], &[]),
    d("io.k8s.api.authorization.v1.NonResourceRule", "", &[], &[
        x("nonResourceURLs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("verbs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authorization.v1.ResourceAttributes", "", &[], &[
        f("fieldSelector", Ty::Ref("io.k8s.api.authorization.v1.FieldSelectorAttributes")),
        f("labelSelector", Ty::Ref("io.k8s.api.authorization.v1.LabelSelectorAttributes")),
    ]),
    d("io.k8s.api.authorization.v1.ResourceRule", "", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resourceNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("verbs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.authorization.v1.SelfSubjectAccessReview", "", &[("authorization.k8s.io", "v1", "SelfSubjectAccessReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec")),
        f("status", Ty::Ref("io.k8s.api.authorization.v1.SubjectAccessReviewStatus")),
    ]),
    d("io.k8s.api.authorization.v1.SelfSubjectAccessReviewSpec", "", &[], &[
        f("nonResourceAttributes", Ty::Ref("io.k8s.api.authorization.v1.NonResourceAttributes")),
        f("resourceAttributes", Ty::Ref("io.k8s.api.authorization.v1.ResourceAttributes")),
    ]),
    d("io.k8s.api.authorization.v1.SelfSubjectRulesReview", "", &[("authorization.k8s.io", "v1", "SelfSubjectRulesReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec")),
        f("status", Ty::Ref("io.k8s.api.authorization.v1.SubjectRulesReviewStatus")),
    ]),
    d("io.k8s.api.authorization.v1.SelfSubjectRulesReviewSpec", "", &[], &[]),
    d("io.k8s.api.authorization.v1.SubjectAccessReview", "", &[("authorization.k8s.io", "v1", "SubjectAccessReview")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.authorization.v1.SubjectAccessReviewSpec")),
        f("status", Ty::Ref("io.k8s.api.authorization.v1.SubjectAccessReviewStatus")),
    ]),
    d("io.k8s.api.authorization.v1.SubjectAccessReviewSpec", "", &[], &[
        f("extra", Ty::MapOfScalar),
        x("groups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("nonResourceAttributes", Ty::Ref("io.k8s.api.authorization.v1.NonResourceAttributes")),
        f("resourceAttributes", Ty::Ref("io.k8s.api.authorization.v1.ResourceAttributes")),
    ]),
    d("io.k8s.api.authorization.v1.SubjectAccessReviewStatus", "", &[], &[]),
    d("io.k8s.api.authorization.v1.SubjectRulesReviewStatus", "", &[], &[
        x("nonResourceRules", Ty::ArrayOfRef("io.k8s.api.authorization.v1.NonResourceRule"), "", "", "atomic", E, ""),
        x("resourceRules", Ty::ArrayOfRef("io.k8s.api.authorization.v1.ResourceRule"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.autoscaling.v1.CrossVersionObjectReference", "atomic", &[], &[]),
    d("io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler", "", &[("autoscaling", "v1", "HorizontalPodAutoscaler")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec")),
        f("status", Ty::Ref("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus")),
    ]),
    d("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerList", "", &[("autoscaling", "v1", "HorizontalPodAutoscalerList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerSpec", "", &[], &[
        f("scaleTargetRef", Ty::Ref("io.k8s.api.autoscaling.v1.CrossVersionObjectReference")),
    ]),
    d("io.k8s.api.autoscaling.v1.HorizontalPodAutoscalerStatus", "", &[], &[]),
    d("io.k8s.api.autoscaling.v1.Scale", "", &[("autoscaling", "v1", "Scale")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.autoscaling.v1.ScaleSpec")),
        f("status", Ty::Ref("io.k8s.api.autoscaling.v1.ScaleStatus")),
    ]),
    d("io.k8s.api.autoscaling.v1.ScaleSpec", "", &[], &[]),
    d("io.k8s.api.autoscaling.v1.ScaleStatus", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.ContainerResourceMetricSource", "", &[], &[
        f("target", Ty::Ref("io.k8s.api.autoscaling.v2.MetricTarget")),
    ]),
    d("io.k8s.api.autoscaling.v2.ContainerResourceMetricStatus", "", &[], &[
        f("current", Ty::Ref("io.k8s.api.autoscaling.v2.MetricValueStatus")),
    ]),
    d("io.k8s.api.autoscaling.v2.CrossVersionObjectReference", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.ExternalMetricSource", "", &[], &[
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
        f("target", Ty::Ref("io.k8s.api.autoscaling.v2.MetricTarget")),
    ]),
    d("io.k8s.api.autoscaling.v2.ExternalMetricStatus", "", &[], &[
        f("current", Ty::Ref("io.k8s.api.autoscaling.v2.MetricValueStatus")),
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
    ]),
    d("io.k8s.api.autoscaling.v2.HPAScalingPolicy", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.HPAScalingRules", "", &[], &[
        x("policies", Ty::ArrayOfRef("io.k8s.api.autoscaling.v2.HPAScalingPolicy"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler", "", &[("autoscaling", "v2", "HorizontalPodAutoscaler")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec")),
        f("status", Ty::Ref("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus")),
    ]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior", "", &[], &[
        f("scaleDown", Ty::Ref("io.k8s.api.autoscaling.v2.HPAScalingRules")),
        f("scaleUp", Ty::Ref("io.k8s.api.autoscaling.v2.HPAScalingRules")),
    ]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerList", "", &[("autoscaling", "v2", "HorizontalPodAutoscalerList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec", "", &[], &[
        f("behavior", Ty::Ref("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior")),
        x("metrics", Ty::ArrayOfRef("io.k8s.api.autoscaling.v2.MetricSpec"), "", "", "atomic", E, ""),
        f("scaleTargetRef", Ty::Ref("io.k8s.api.autoscaling.v2.CrossVersionObjectReference")),
    ]),
    d("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition"), "merge", "type", "map", &["type"], ""),
        x("currentMetrics", Ty::ArrayOfRef("io.k8s.api.autoscaling.v2.MetricStatus"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.autoscaling.v2.MetricIdentifier", "", &[], &[
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.autoscaling.v2.MetricSpec", "", &[], &[
        f("containerResource", Ty::Ref("io.k8s.api.autoscaling.v2.ContainerResourceMetricSource")),
        f("external", Ty::Ref("io.k8s.api.autoscaling.v2.ExternalMetricSource")),
        f("object", Ty::Ref("io.k8s.api.autoscaling.v2.ObjectMetricSource")),
        f("pods", Ty::Ref("io.k8s.api.autoscaling.v2.PodsMetricSource")),
        f("resource", Ty::Ref("io.k8s.api.autoscaling.v2.ResourceMetricSource")),
    ]),
    d("io.k8s.api.autoscaling.v2.MetricStatus", "", &[], &[
        f("containerResource", Ty::Ref("io.k8s.api.autoscaling.v2.ContainerResourceMetricStatus")),
        f("external", Ty::Ref("io.k8s.api.autoscaling.v2.ExternalMetricStatus")),
        f("object", Ty::Ref("io.k8s.api.autoscaling.v2.ObjectMetricStatus")),
        f("pods", Ty::Ref("io.k8s.api.autoscaling.v2.PodsMetricStatus")),
        f("resource", Ty::Ref("io.k8s.api.autoscaling.v2.ResourceMetricStatus")),
    ]),
    d("io.k8s.api.autoscaling.v2.MetricTarget", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.MetricValueStatus", "", &[], &[]),
    d("io.k8s.api.autoscaling.v2.ObjectMetricSource", "", &[], &[
        f("describedObject", Ty::Ref("io.k8s.api.autoscaling.v2.CrossVersionObjectReference")),
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
        f("target", Ty::Ref("io.k8s.api.autoscaling.v2.MetricTarget")),
    ]),
    d("io.k8s.api.autoscaling.v2.ObjectMetricStatus", "", &[], &[
        f("current", Ty::Ref("io.k8s.api.autoscaling.v2.MetricValueStatus")),
        f("describedObject", Ty::Ref("io.k8s.api.autoscaling.v2.CrossVersionObjectReference")),
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
    ]),
    d("io.k8s.api.autoscaling.v2.PodsMetricSource", "", &[], &[
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
        f("target", Ty::Ref("io.k8s.api.autoscaling.v2.MetricTarget")),
    ]),
    d("io.k8s.api.autoscaling.v2.PodsMetricStatus", "", &[], &[
        f("current", Ty::Ref("io.k8s.api.autoscaling.v2.MetricValueStatus")),
        f("metric", Ty::Ref("io.k8s.api.autoscaling.v2.MetricIdentifier")),
    ]),
    d("io.k8s.api.autoscaling.v2.ResourceMetricSource", "", &[], &[
        f("target", Ty::Ref("io.k8s.api.autoscaling.v2.MetricTarget")),
    ]),
    d("io.k8s.api.autoscaling.v2.ResourceMetricStatus", "", &[], &[
        f("current", Ty::Ref("io.k8s.api.autoscaling.v2.MetricValueStatus")),
    ]),
    d("io.k8s.api.batch.v1.CronJob", "", &[("batch", "v1", "CronJob")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.batch.v1.CronJobSpec")),
        f("status", Ty::Ref("io.k8s.api.batch.v1.CronJobStatus")),
    ]),
    d("io.k8s.api.batch.v1.CronJobList", "", &[("batch", "v1", "CronJobList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.batch.v1.CronJob")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.batch.v1.CronJobSpec", "", &[], &[
        f("jobTemplate", Ty::Ref("io.k8s.api.batch.v1.JobTemplateSpec")),
    ]),
    d("io.k8s.api.batch.v1.CronJobStatus", "", &[], &[
        x("active", Ty::ArrayOfRef("io.k8s.api.core.v1.ObjectReference"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.batch.v1.Job", "", &[("batch", "v1", "Job")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.batch.v1.JobSpec")),
        f("status", Ty::Ref("io.k8s.api.batch.v1.JobStatus")),
    ]),
    d("io.k8s.api.batch.v1.JobCondition", "", &[], &[]),
    d("io.k8s.api.batch.v1.JobList", "", &[("batch", "v1", "JobList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.batch.v1.Job")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.batch.v1.JobSpec", "", &[], &[
        f("podFailurePolicy", Ty::Ref("io.k8s.api.batch.v1.PodFailurePolicy")),
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("successPolicy", Ty::Ref("io.k8s.api.batch.v1.SuccessPolicy")),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
    ]),
    d("io.k8s.api.batch.v1.JobStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.batch.v1.JobCondition"), "merge", "type", "atomic", E, ""),
        f("uncountedTerminatedPods", Ty::Ref("io.k8s.api.batch.v1.UncountedTerminatedPods")),
    ]),
    d("io.k8s.api.batch.v1.JobTemplateSpec", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.batch.v1.JobSpec")),
    ]),
    d("io.k8s.api.batch.v1.PodFailurePolicy", "", &[], &[
        x("rules", Ty::ArrayOfRef("io.k8s.api.batch.v1.PodFailurePolicyRule"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern", "", &[], &[]),
    d("io.k8s.api.batch.v1.PodFailurePolicyRule", "", &[], &[
        f("onExitCodes", Ty::Ref("io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement")),
        x("onPodConditions", Ty::ArrayOfRef("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.batch.v1.SuccessPolicy", "", &[], &[
        x("rules", Ty::ArrayOfRef("io.k8s.api.batch.v1.SuccessPolicyRule"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.batch.v1.SuccessPolicyRule", "", &[], &[]),
    d("io.k8s.api.batch.v1.UncountedTerminatedPods", "", &[], &[
        x("failed", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("succeeded", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.certificates.v1.CertificateSigningRequest", "", &[("certificates.k8s.io", "v1", "CertificateSigningRequest")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.certificates.v1.CertificateSigningRequestSpec")),
        f("status", Ty::Ref("io.k8s.api.certificates.v1.CertificateSigningRequestStatus")),
    ]),
    d("io.k8s.api.certificates.v1.CertificateSigningRequestCondition", "", &[], &[]),
    d("io.k8s.api.certificates.v1.CertificateSigningRequestList", "", &[("certificates.k8s.io", "v1", "CertificateSigningRequestList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.certificates.v1.CertificateSigningRequest")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.certificates.v1.CertificateSigningRequestSpec", "", &[], &[
        f("extra", Ty::MapOfScalar),
        x("groups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("request", Ty::Scalar, "", "", "atomic", E, ""),
        x("usages", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.certificates.v1.CertificateSigningRequestStatus", "", &[], &[
        x("certificate", Ty::Scalar, "", "", "atomic", E, ""),
        x("conditions", Ty::ArrayOfRef("io.k8s.api.certificates.v1.CertificateSigningRequestCondition"), "", "", "map", &["type"], ""),
    ]),
    d("io.k8s.api.certificates.v1alpha1.ClusterTrustBundle", "", &[("certificates.k8s.io", "v1alpha1", "ClusterTrustBundle")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.certificates.v1alpha1.ClusterTrustBundleSpec")),
    ]),
    d("io.k8s.api.certificates.v1alpha1.ClusterTrustBundleList", "", &[("certificates.k8s.io", "v1alpha1", "ClusterTrustBundleList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.certificates.v1alpha1.ClusterTrustBundle")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.certificates.v1alpha1.ClusterTrustBundleSpec", "", &[], &[]),
    d("io.k8s.api.certificates.v1beta1.ClusterTrustBundle", "", &[("certificates.k8s.io", "v1beta1", "ClusterTrustBundle")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.certificates.v1beta1.ClusterTrustBundleSpec")),
    ]),
    d("io.k8s.api.certificates.v1beta1.ClusterTrustBundleList", "", &[("certificates.k8s.io", "v1beta1", "ClusterTrustBundleList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.certificates.v1beta1.ClusterTrustBundle")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.certificates.v1beta1.ClusterTrustBundleSpec", "", &[], &[]),
    d("io.k8s.api.coordination.v1.Lease", "", &[("coordination.k8s.io", "v1", "Lease")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.coordination.v1.LeaseSpec")),
    ]),
    d("io.k8s.api.coordination.v1.LeaseList", "", &[("coordination.k8s.io", "v1", "LeaseList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.coordination.v1.Lease")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.coordination.v1.LeaseSpec", "", &[], &[]),
    d("io.k8s.api.coordination.v1alpha2.LeaseCandidate", "", &[("coordination.k8s.io", "v1alpha2", "LeaseCandidate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.coordination.v1alpha2.LeaseCandidateSpec")),
    ]),
    d("io.k8s.api.coordination.v1alpha2.LeaseCandidateList", "", &[("coordination.k8s.io", "v1alpha2", "LeaseCandidateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.coordination.v1alpha2.LeaseCandidate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.coordination.v1alpha2.LeaseCandidateSpec", "", &[], &[]),
    d("io.k8s.api.coordination.v1beta1.LeaseCandidate", "", &[("coordination.k8s.io", "v1beta1", "LeaseCandidate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.coordination.v1beta1.LeaseCandidateSpec")),
    ]),
    d("io.k8s.api.coordination.v1beta1.LeaseCandidateList", "", &[("coordination.k8s.io", "v1beta1", "LeaseCandidateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.coordination.v1beta1.LeaseCandidate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.coordination.v1beta1.LeaseCandidateSpec", "", &[], &[]),
    d("io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.Affinity", "", &[], &[
        f("nodeAffinity", Ty::Ref("io.k8s.api.core.v1.NodeAffinity")),
        f("podAffinity", Ty::Ref("io.k8s.api.core.v1.PodAffinity")),
        f("podAntiAffinity", Ty::Ref("io.k8s.api.core.v1.PodAntiAffinity")),
    ]),
    d("io.k8s.api.core.v1.AppArmorProfile", "", &[], &[]),
    d("io.k8s.api.core.v1.AttachedVolume", "", &[], &[]),
    d("io.k8s.api.core.v1.AzureDiskVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.AzureFilePersistentVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.AzureFileVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.Binding", "", &[("", "v1", "Binding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("target", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
    ]),
    d("io.k8s.api.core.v1.CSIPersistentVolumeSource", "", &[], &[
        f("controllerExpandSecretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
        f("controllerPublishSecretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
        f("nodeExpandSecretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
        f("nodePublishSecretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
        f("nodeStageSecretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
        f("volumeAttributes", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.CSIVolumeSource", "", &[], &[
        f("nodePublishSecretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
        f("volumeAttributes", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.Capabilities", "", &[], &[
        x("add", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("drop", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.CephFSPersistentVolumeSource", "", &[], &[
        x("monitors", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.CephFSVolumeSource", "", &[], &[
        x("monitors", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.CinderPersistentVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.CinderVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.ClientIPConfig", "", &[], &[]),
    d("io.k8s.api.core.v1.ClusterTrustBundleProjection", "", &[], &[
        f("labelSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.core.v1.ComponentCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.ComponentStatus", "", &[("", "v1", "ComponentStatus")], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.ComponentCondition"), "merge", "type", "map", &["type"], ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
    ]),
    d("io.k8s.api.core.v1.ComponentStatusList", "", &[("", "v1", "ComponentStatusList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.ComponentStatus")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ConfigMap", "", &[("", "v1", "ConfigMap")], &[
        f("binaryData", Ty::MapOfScalar),
        f("data", Ty::MapOfScalar),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
    ]),
    d("io.k8s.api.core.v1.ConfigMapEnvSource", "", &[], &[]),
    d("io.k8s.api.core.v1.ConfigMapKeySelector", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.ConfigMapList", "", &[("", "v1", "ConfigMapList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.ConfigMap")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ConfigMapNodeConfigSource", "", &[], &[]),
    d("io.k8s.api.core.v1.ConfigMapProjection", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.KeyToPath"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.ConfigMapVolumeSource", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.KeyToPath"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.Container", "", &[], &[
        x("args", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("command", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("env", Ty::ArrayOfRef("io.k8s.api.core.v1.EnvVar"), "merge", "name", "map", &["name"], ""),
        x("envFrom", Ty::ArrayOfRef("io.k8s.api.core.v1.EnvFromSource"), "", "", "atomic", E, ""),
        f("lifecycle", Ty::Ref("io.k8s.api.core.v1.Lifecycle")),
        f("livenessProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("ports", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerPort"), "merge", "containerPort", "map", &["containerPort", "protocol"], ""),
        f("readinessProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("resizePolicy", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerResizePolicy"), "", "", "atomic", E, ""),
        f("resources", Ty::Ref("io.k8s.api.core.v1.ResourceRequirements")),
        f("securityContext", Ty::Ref("io.k8s.api.core.v1.SecurityContext")),
        f("startupProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("volumeDevices", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeDevice"), "merge", "devicePath", "map", &["devicePath"], ""),
        x("volumeMounts", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeMount"), "merge", "mountPath", "map", &["mountPath"], ""),
    ]),
    d("io.k8s.api.core.v1.ContainerImage", "", &[], &[
        x("names", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.ContainerPort", "", &[], &[]),
    d("io.k8s.api.core.v1.ContainerResizePolicy", "", &[], &[]),
    d("io.k8s.api.core.v1.ContainerState", "", &[], &[
        f("running", Ty::Ref("io.k8s.api.core.v1.ContainerStateRunning")),
        f("terminated", Ty::Ref("io.k8s.api.core.v1.ContainerStateTerminated")),
        f("waiting", Ty::Ref("io.k8s.api.core.v1.ContainerStateWaiting")),
    ]),
    d("io.k8s.api.core.v1.ContainerStateRunning", "", &[], &[]),
    d("io.k8s.api.core.v1.ContainerStateTerminated", "", &[], &[]),
    d("io.k8s.api.core.v1.ContainerStateWaiting", "", &[], &[]),
    d("io.k8s.api.core.v1.ContainerStatus", "", &[], &[
        f("allocatedResources", Ty::MapOfScalar),
        x("allocatedResourcesStatus", Ty::ArrayOfRef("io.k8s.api.core.v1.ResourceStatus"), "merge", "name", "map", &["name"], ""),
        f("lastState", Ty::Ref("io.k8s.api.core.v1.ContainerState")),
        f("resources", Ty::Ref("io.k8s.api.core.v1.ResourceRequirements")),
        f("state", Ty::Ref("io.k8s.api.core.v1.ContainerState")),
        f("user", Ty::Ref("io.k8s.api.core.v1.ContainerUser")),
        x("volumeMounts", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeMountStatus"), "merge", "mountPath", "map", &["mountPath"], ""),
    ]),
    d("io.k8s.api.core.v1.ContainerUser", "", &[], &[
        f("linux", Ty::Ref("io.k8s.api.core.v1.LinuxContainerUser")),
    ]),
    d("io.k8s.api.core.v1.DaemonEndpoint", "", &[], &[]),
    d("io.k8s.api.core.v1.DownwardAPIProjection", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.DownwardAPIVolumeFile"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.DownwardAPIVolumeFile", "", &[], &[
        f("fieldRef", Ty::Ref("io.k8s.api.core.v1.ObjectFieldSelector")),
        f("resourceFieldRef", Ty::Ref("io.k8s.api.core.v1.ResourceFieldSelector")),
    ]),
    d("io.k8s.api.core.v1.DownwardAPIVolumeSource", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.DownwardAPIVolumeFile"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.EmptyDirVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.EndpointAddress", "atomic", &[], &[
        f("targetRef", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
    ]),
    d("io.k8s.api.core.v1.EndpointPort", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.EndpointSubset", "", &[], &[
        x("addresses", Ty::ArrayOfRef("io.k8s.api.core.v1.EndpointAddress"), "", "", "atomic", E, ""),
        x("notReadyAddresses", Ty::ArrayOfRef("io.k8s.api.core.v1.EndpointAddress"), "", "", "atomic", E, ""),
        x("ports", Ty::ArrayOfRef("io.k8s.api.core.v1.EndpointPort"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.Endpoints", "", &[("", "v1", "Endpoints")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("subsets", Ty::ArrayOfRef("io.k8s.api.core.v1.EndpointSubset"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.EndpointsList", "", &[("", "v1", "EndpointsList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Endpoints")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.EnvFromSource", "", &[], &[
        f("configMapRef", Ty::Ref("io.k8s.api.core.v1.ConfigMapEnvSource")),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretEnvSource")),
    ]),
    d("io.k8s.api.core.v1.EnvVar", "", &[], &[
        f("valueFrom", Ty::Ref("io.k8s.api.core.v1.EnvVarSource")),
    ]),
    d("io.k8s.api.core.v1.EnvVarSource", "", &[], &[
        f("configMapKeyRef", Ty::Ref("io.k8s.api.core.v1.ConfigMapKeySelector")),
        f("fieldRef", Ty::Ref("io.k8s.api.core.v1.ObjectFieldSelector")),
        f("resourceFieldRef", Ty::Ref("io.k8s.api.core.v1.ResourceFieldSelector")),
        f("secretKeyRef", Ty::Ref("io.k8s.api.core.v1.SecretKeySelector")),
    ]),
    d("io.k8s.api.core.v1.EphemeralContainer", "", &[], &[
        x("args", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("command", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("env", Ty::ArrayOfRef("io.k8s.api.core.v1.EnvVar"), "merge", "name", "map", &["name"], ""),
        x("envFrom", Ty::ArrayOfRef("io.k8s.api.core.v1.EnvFromSource"), "", "", "atomic", E, ""),
        f("lifecycle", Ty::Ref("io.k8s.api.core.v1.Lifecycle")),
        f("livenessProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("ports", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerPort"), "merge", "containerPort", "map", &["containerPort", "protocol"], ""),
        f("readinessProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("resizePolicy", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerResizePolicy"), "", "", "atomic", E, ""),
        f("resources", Ty::Ref("io.k8s.api.core.v1.ResourceRequirements")),
        f("securityContext", Ty::Ref("io.k8s.api.core.v1.SecurityContext")),
        f("startupProbe", Ty::Ref("io.k8s.api.core.v1.Probe")),
        x("volumeDevices", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeDevice"), "merge", "devicePath", "map", &["devicePath"], ""),
        x("volumeMounts", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeMount"), "merge", "mountPath", "map", &["mountPath"], ""),
    ]),
    d("io.k8s.api.core.v1.EphemeralVolumeSource", "", &[], &[
        f("volumeClaimTemplate", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeClaimTemplate")),
    ]),
    d("io.k8s.api.core.v1.Event", "", &[("", "v1", "Event")], &[
        f("involvedObject", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("related", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
        f("series", Ty::Ref("io.k8s.api.core.v1.EventSeries")),
        f("source", Ty::Ref("io.k8s.api.core.v1.EventSource")),
    ]),
    d("io.k8s.api.core.v1.EventList", "", &[("", "v1", "EventList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Event")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.EventSeries", "", &[], &[]),
    d("io.k8s.api.core.v1.EventSource", "", &[], &[]),
    d("io.k8s.api.core.v1.ExecAction", "", &[], &[
        x("command", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.FCVolumeSource", "", &[], &[
        x("targetWWNs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("wwids", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.FlexPersistentVolumeSource", "", &[], &[
        f("options", Ty::MapOfScalar),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.FlexVolumeSource", "", &[], &[
        f("options", Ty::MapOfScalar),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.FlockerVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.GCEPersistentDiskVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.GRPCAction", "", &[], &[]),
    d("io.k8s.api.core.v1.GitRepoVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.GlusterfsPersistentVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.GlusterfsVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.HTTPGetAction", "", &[], &[
        x("httpHeaders", Ty::ArrayOfRef("io.k8s.api.core.v1.HTTPHeader"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.HTTPHeader", "", &[], &[]),
    d("io.k8s.api.core.v1.HostAlias", "", &[], &[
        x("hostnames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.HostIP", "", &[], &[]),
    d("io.k8s.api.core.v1.HostPathVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.ISCSIPersistentVolumeSource", "", &[], &[
        x("portals", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.ISCSIVolumeSource", "", &[], &[
        x("portals", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.ImageVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.KeyToPath", "", &[], &[]),
    d("io.k8s.api.core.v1.Lifecycle", "", &[], &[
        f("postStart", Ty::Ref("io.k8s.api.core.v1.LifecycleHandler")),
        f("preStop", Ty::Ref("io.k8s.api.core.v1.LifecycleHandler")),
    ]),
    d("io.k8s.api.core.v1.LifecycleHandler", "", &[], &[
        f("exec", Ty::Ref("io.k8s.api.core.v1.ExecAction")),
        f("httpGet", Ty::Ref("io.k8s.api.core.v1.HTTPGetAction")),
        f("sleep", Ty::Ref("io.k8s.api.core.v1.SleepAction")),
        f("tcpSocket", Ty::Ref("io.k8s.api.core.v1.TCPSocketAction")),
    ]),
    d("io.k8s.api.core.v1.LimitRange", "", &[("", "v1", "LimitRange")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.LimitRangeSpec")),
    ]),
    d("io.k8s.api.core.v1.LimitRangeItem", "", &[], &[
        f("default", Ty::MapOfScalar),
        f("defaultRequest", Ty::MapOfScalar),
        f("max", Ty::MapOfScalar),
        f("maxLimitRequestRatio", Ty::MapOfScalar),
        f("min", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.LimitRangeList", "", &[("", "v1", "LimitRangeList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.LimitRange")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.LimitRangeSpec", "", &[], &[
        x("limits", Ty::ArrayOfRef("io.k8s.api.core.v1.LimitRangeItem"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.LinuxContainerUser", "", &[], &[
        x("supplementalGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.LoadBalancerIngress", "", &[], &[
        x("ports", Ty::ArrayOfRef("io.k8s.api.core.v1.PortStatus"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.LoadBalancerStatus", "", &[], &[
        x("ingress", Ty::ArrayOfRef("io.k8s.api.core.v1.LoadBalancerIngress"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.LocalObjectReference", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.LocalVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.ModifyVolumeStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.NFSVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.Namespace", "", &[("", "v1", "Namespace")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.NamespaceSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.NamespaceStatus")),
    ]),
    d("io.k8s.api.core.v1.NamespaceCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.NamespaceList", "", &[("", "v1", "NamespaceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Namespace")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.NamespaceSpec", "", &[], &[
        x("finalizers", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NamespaceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.NamespaceCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.core.v1.Node", "", &[("", "v1", "Node")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.NodeSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.NodeStatus")),
    ]),
    d("io.k8s.api.core.v1.NodeAddress", "", &[], &[]),
    d("io.k8s.api.core.v1.NodeAffinity", "", &[], &[
        x("preferredDuringSchedulingIgnoredDuringExecution", Ty::ArrayOfRef("io.k8s.api.core.v1.PreferredSchedulingTerm"), "", "", "atomic", E, ""),
        f("requiredDuringSchedulingIgnoredDuringExecution", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
    ]),
    d("io.k8s.api.core.v1.NodeCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.NodeConfigSource", "", &[], &[
        f("configMap", Ty::Ref("io.k8s.api.core.v1.ConfigMapNodeConfigSource")),
    ]),
    d("io.k8s.api.core.v1.NodeConfigStatus", "", &[], &[
        f("active", Ty::Ref("io.k8s.api.core.v1.NodeConfigSource")),
        f("assigned", Ty::Ref("io.k8s.api.core.v1.NodeConfigSource")),
        f("lastKnownGood", Ty::Ref("io.k8s.api.core.v1.NodeConfigSource")),
    ]),
    d("io.k8s.api.core.v1.NodeDaemonEndpoints", "", &[], &[
        f("kubeletEndpoint", Ty::Ref("io.k8s.api.core.v1.DaemonEndpoint")),
    ]),
    d("io.k8s.api.core.v1.NodeFeatures", "", &[], &[]),
    d("io.k8s.api.core.v1.NodeList", "", &[("", "v1", "NodeList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Node")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.NodeRuntimeHandler", "", &[], &[
        f("features", Ty::Ref("io.k8s.api.core.v1.NodeRuntimeHandlerFeatures")),
    ]),
    d("io.k8s.api.core.v1.NodeRuntimeHandlerFeatures", "", &[], &[]),
    d("io.k8s.api.core.v1.NodeSelector", "atomic", &[], &[
        x("nodeSelectorTerms", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeSelectorTerm"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NodeSelectorRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NodeSelectorTerm", "atomic", &[], &[
        x("matchExpressions", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeSelectorRequirement"), "", "", "atomic", E, ""),
        x("matchFields", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeSelectorRequirement"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NodeSpec", "", &[], &[
        f("configSource", Ty::Ref("io.k8s.api.core.v1.NodeConfigSource")),
        x("podCIDRs", Ty::ArrayOfScalar, "merge", "", "set", E, ""),
        x("taints", Ty::ArrayOfRef("io.k8s.api.core.v1.Taint"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NodeStatus", "", &[], &[
        x("addresses", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeAddress"), "merge", "type", "map", &["type"], ""),
        f("allocatable", Ty::MapOfScalar),
        f("capacity", Ty::MapOfScalar),
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeCondition"), "merge", "type", "map", &["type"], ""),
        f("config", Ty::Ref("io.k8s.api.core.v1.NodeConfigStatus")),
        f("daemonEndpoints", Ty::Ref("io.k8s.api.core.v1.NodeDaemonEndpoints")),
        f("features", Ty::Ref("io.k8s.api.core.v1.NodeFeatures")),
        x("images", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerImage"), "", "", "atomic", E, ""),
        f("nodeInfo", Ty::Ref("io.k8s.api.core.v1.NodeSystemInfo")),
        x("runtimeHandlers", Ty::ArrayOfRef("io.k8s.api.core.v1.NodeRuntimeHandler"), "", "", "atomic", E, ""),
        x("volumesAttached", Ty::ArrayOfRef("io.k8s.api.core.v1.AttachedVolume"), "", "", "atomic", E, ""),
        x("volumesInUse", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.NodeSwapStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.NodeSystemInfo", "", &[], &[
        f("swap", Ty::Ref("io.k8s.api.core.v1.NodeSwapStatus")),
    ]),
    d("io.k8s.api.core.v1.ObjectFieldSelector", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.ObjectReference", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.PersistentVolume", "", &[("", "v1", "PersistentVolume")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeStatus")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaim", "", &[("", "v1", "PersistentVolumeClaim")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeClaimSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeClaimStatus")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimList", "", &[("", "v1", "PersistentVolumeClaimList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.PersistentVolumeClaim")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "", &[], &[
        x("accessModes", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("dataSource", Ty::Ref("io.k8s.api.core.v1.TypedLocalObjectReference")),
        f("dataSourceRef", Ty::Ref("io.k8s.api.core.v1.TypedObjectReference")),
        f("resources", Ty::Ref("io.k8s.api.core.v1.VolumeResourceRequirements")),
        f("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimStatus", "", &[], &[
        x("accessModes", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("allocatedResourceStatuses", Ty::MapOfScalar, "", "", "", E, "granular"),
        f("allocatedResources", Ty::MapOfScalar),
        f("capacity", Ty::MapOfScalar),
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.PersistentVolumeClaimCondition"), "merge", "type", "map", &["type"], ""),
        f("modifyVolumeStatus", Ty::Ref("io.k8s.api.core.v1.ModifyVolumeStatus")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimTemplate", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeClaimSpec")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.PersistentVolumeList", "", &[("", "v1", "PersistentVolumeList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.PersistentVolume")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeSpec", "", &[], &[
        x("accessModes", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("awsElasticBlockStore", Ty::Ref("io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource")),
        f("azureDisk", Ty::Ref("io.k8s.api.core.v1.AzureDiskVolumeSource")),
        f("azureFile", Ty::Ref("io.k8s.api.core.v1.AzureFilePersistentVolumeSource")),
        f("capacity", Ty::MapOfScalar),
        f("cephfs", Ty::Ref("io.k8s.api.core.v1.CephFSPersistentVolumeSource")),
        f("cinder", Ty::Ref("io.k8s.api.core.v1.CinderPersistentVolumeSource")),
        x("claimRef", Ty::Ref("io.k8s.api.core.v1.ObjectReference"), "", "", "", E, "granular"),
        f("csi", Ty::Ref("io.k8s.api.core.v1.CSIPersistentVolumeSource")),
        f("fc", Ty::Ref("io.k8s.api.core.v1.FCVolumeSource")),
        f("flexVolume", Ty::Ref("io.k8s.api.core.v1.FlexPersistentVolumeSource")),
        f("flocker", Ty::Ref("io.k8s.api.core.v1.FlockerVolumeSource")),
        f("gcePersistentDisk", Ty::Ref("io.k8s.api.core.v1.GCEPersistentDiskVolumeSource")),
        f("glusterfs", Ty::Ref("io.k8s.api.core.v1.GlusterfsPersistentVolumeSource")),
        f("hostPath", Ty::Ref("io.k8s.api.core.v1.HostPathVolumeSource")),
        f("iscsi", Ty::Ref("io.k8s.api.core.v1.ISCSIPersistentVolumeSource")),
        f("local", Ty::Ref("io.k8s.api.core.v1.LocalVolumeSource")),
        x("mountOptions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("nfs", Ty::Ref("io.k8s.api.core.v1.NFSVolumeSource")),
        f("nodeAffinity", Ty::Ref("io.k8s.api.core.v1.VolumeNodeAffinity")),
        f("photonPersistentDisk", Ty::Ref("io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource")),
        f("portworxVolume", Ty::Ref("io.k8s.api.core.v1.PortworxVolumeSource")),
        f("quobyte", Ty::Ref("io.k8s.api.core.v1.QuobyteVolumeSource")),
        f("rbd", Ty::Ref("io.k8s.api.core.v1.RBDPersistentVolumeSource")),
        f("scaleIO", Ty::Ref("io.k8s.api.core.v1.ScaleIOPersistentVolumeSource")),
        f("storageos", Ty::Ref("io.k8s.api.core.v1.StorageOSPersistentVolumeSource")),
        f("vsphereVolume", Ty::Ref("io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource")),
    ]),
    d("io.k8s.api.core.v1.PersistentVolumeStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.Pod", "", &[("", "v1", "Pod")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.PodSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.PodStatus")),
    ]),
    d("io.k8s.api.core.v1.PodAffinity", "", &[], &[
        x("preferredDuringSchedulingIgnoredDuringExecution", Ty::ArrayOfRef("io.k8s.api.core.v1.WeightedPodAffinityTerm"), "", "", "atomic", E, ""),
        x("requiredDuringSchedulingIgnoredDuringExecution", Ty::ArrayOfRef("io.k8s.api.core.v1.PodAffinityTerm"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.PodAffinityTerm", "", &[], &[
        f("labelSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("matchLabelKeys", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("mismatchLabelKeys", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("namespaces", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.PodAntiAffinity", "", &[], &[
        x("preferredDuringSchedulingIgnoredDuringExecution", Ty::ArrayOfRef("io.k8s.api.core.v1.WeightedPodAffinityTerm"), "", "", "atomic", E, ""),
        x("requiredDuringSchedulingIgnoredDuringExecution", Ty::ArrayOfRef("io.k8s.api.core.v1.PodAffinityTerm"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.PodCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.PodDNSConfig", "", &[], &[
        x("nameservers", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("options", Ty::ArrayOfRef("io.k8s.api.core.v1.PodDNSConfigOption"), "", "", "atomic", E, ""),
        x("searches", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.PodDNSConfigOption", "", &[], &[]),
    d("io.k8s.api.core.v1.PodIP", "", &[], &[]),
    d("io.k8s.api.core.v1.PodList", "", &[("", "v1", "PodList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Pod")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.PodOS", "", &[], &[]),
    d("io.k8s.api.core.v1.PodReadinessGate", "", &[], &[]),
    d("io.k8s.api.core.v1.PodResourceClaim", "", &[], &[]),
    d("io.k8s.api.core.v1.PodResourceClaimStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.PodSchedulingGate", "", &[], &[]),
    d("io.k8s.api.core.v1.PodSecurityContext", "", &[], &[
        f("appArmorProfile", Ty::Ref("io.k8s.api.core.v1.AppArmorProfile")),
        f("seLinuxOptions", Ty::Ref("io.k8s.api.core.v1.SELinuxOptions")),
        f("seccompProfile", Ty::Ref("io.k8s.api.core.v1.SeccompProfile")),
        x("supplementalGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("sysctls", Ty::ArrayOfRef("io.k8s.api.core.v1.Sysctl"), "", "", "atomic", E, ""),
        f("windowsOptions", Ty::Ref("io.k8s.api.core.v1.WindowsSecurityContextOptions")),
    ]),
    d("io.k8s.api.core.v1.PodSpec", "", &[], &[
        f("affinity", Ty::Ref("io.k8s.api.core.v1.Affinity")),
        x("containers", Ty::ArrayOfRef("io.k8s.api.core.v1.Container"), "merge", "name", "map", &["name"], ""),
        f("dnsConfig", Ty::Ref("io.k8s.api.core.v1.PodDNSConfig")),
        x("ephemeralContainers", Ty::ArrayOfRef("io.k8s.api.core.v1.EphemeralContainer"), "merge", "name", "map", &["name"], ""),
        x("hostAliases", Ty::ArrayOfRef("io.k8s.api.core.v1.HostAlias"), "merge", "ip", "map", &["ip"], ""),
        x("imagePullSecrets", Ty::ArrayOfRef("io.k8s.api.core.v1.LocalObjectReference"), "merge", "name", "map", &["name"], ""),
        x("initContainers", Ty::ArrayOfRef("io.k8s.api.core.v1.Container"), "merge", "name", "map", &["name"], ""),
        x("nodeSelector", Ty::MapOfScalar, "", "", "", E, "atomic"),
        f("os", Ty::Ref("io.k8s.api.core.v1.PodOS")),
        f("overhead", Ty::MapOfScalar),
        x("readinessGates", Ty::ArrayOfRef("io.k8s.api.core.v1.PodReadinessGate"), "", "", "atomic", E, ""),
        x("resourceClaims", Ty::ArrayOfRef("io.k8s.api.core.v1.PodResourceClaim"), "merge,retainKeys", "name", "map", &["name"], ""),
        f("resources", Ty::Ref("io.k8s.api.core.v1.ResourceRequirements")),
        x("schedulingGates", Ty::ArrayOfRef("io.k8s.api.core.v1.PodSchedulingGate"), "merge", "name", "map", &["name"], ""),
        f("securityContext", Ty::Ref("io.k8s.api.core.v1.PodSecurityContext")),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.core.v1.Toleration"), "", "", "atomic", E, ""),
        x("topologySpreadConstraints", Ty::ArrayOfRef("io.k8s.api.core.v1.TopologySpreadConstraint"), "merge", "topologyKey", "map", &["topologyKey", "whenUnsatisfiable"], ""),
        x("volumes", Ty::ArrayOfRef("io.k8s.api.core.v1.Volume"), "merge,retainKeys", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.core.v1.PodStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.PodCondition"), "merge", "type", "map", &["type"], ""),
        x("containerStatuses", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerStatus"), "", "", "atomic", E, ""),
        x("ephemeralContainerStatuses", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerStatus"), "", "", "atomic", E, ""),
        x("hostIPs", Ty::ArrayOfRef("io.k8s.api.core.v1.HostIP"), "merge", "ip", "atomic", E, ""),
        x("initContainerStatuses", Ty::ArrayOfRef("io.k8s.api.core.v1.ContainerStatus"), "", "", "atomic", E, ""),
        x("podIPs", Ty::ArrayOfRef("io.k8s.api.core.v1.PodIP"), "merge", "ip", "map", &["ip"], ""),
        x("resourceClaimStatuses", Ty::ArrayOfRef("io.k8s.api.core.v1.PodResourceClaimStatus"), "merge,retainKeys", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.core.v1.PodTemplate", "", &[("", "v1", "PodTemplate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
    ]),
    d("io.k8s.api.core.v1.PodTemplateList", "", &[("", "v1", "PodTemplateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.PodTemplate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.PodTemplateSpec", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.PodSpec")),
    ]),
    d("io.k8s.api.core.v1.PortStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.PortworxVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.PreferredSchedulingTerm", "", &[], &[
        f("preference", Ty::Ref("io.k8s.api.core.v1.NodeSelectorTerm")),
    ]),
    d("io.k8s.api.core.v1.Probe", "", &[], &[
        f("exec", Ty::Ref("io.k8s.api.core.v1.ExecAction")),
        f("grpc", Ty::Ref("io.k8s.api.core.v1.GRPCAction")),
        f("httpGet", Ty::Ref("io.k8s.api.core.v1.HTTPGetAction")),
        f("tcpSocket", Ty::Ref("io.k8s.api.core.v1.TCPSocketAction")),
    ]),
    d("io.k8s.api.core.v1.ProjectedVolumeSource", "", &[], &[
        x("sources", Ty::ArrayOfRef("io.k8s.api.core.v1.VolumeProjection"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.QuobyteVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.RBDPersistentVolumeSource", "", &[], &[
        x("monitors", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.RBDVolumeSource", "", &[], &[
        x("monitors", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.ReplicationController", "", &[("", "v1", "ReplicationController")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.ReplicationControllerSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.ReplicationControllerStatus")),
    ]),
    d("io.k8s.api.core.v1.ReplicationControllerCondition", "", &[], &[]),
    d("io.k8s.api.core.v1.ReplicationControllerList", "", &[("", "v1", "ReplicationControllerList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.ReplicationController")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ReplicationControllerSpec", "", &[], &[
        x("selector", Ty::MapOfScalar, "", "", "", E, "atomic"),
        f("template", Ty::Ref("io.k8s.api.core.v1.PodTemplateSpec")),
    ]),
    d("io.k8s.api.core.v1.ReplicationControllerStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.core.v1.ReplicationControllerCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.core.v1.ResourceClaim", "", &[], &[]),
    d("io.k8s.api.core.v1.ResourceFieldSelector", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.ResourceHealth", "", &[], &[]),
    d("io.k8s.api.core.v1.ResourceQuota", "", &[("", "v1", "ResourceQuota")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.ResourceQuotaSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.ResourceQuotaStatus")),
    ]),
    d("io.k8s.api.core.v1.ResourceQuotaList", "", &[("", "v1", "ResourceQuotaList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.ResourceQuota")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ResourceQuotaSpec", "", &[], &[
        f("hard", Ty::MapOfScalar),
        f("scopeSelector", Ty::Ref("io.k8s.api.core.v1.ScopeSelector")),
        x("scopes", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.ResourceQuotaStatus", "", &[], &[
        f("hard", Ty::MapOfScalar),
        f("used", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.ResourceRequirements", "", &[], &[
        x("claims", Ty::ArrayOfRef("io.k8s.api.core.v1.ResourceClaim"), "", "", "map", &["name"], ""),
        f("limits", Ty::MapOfScalar),
        f("requests", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.ResourceStatus", "", &[], &[
        x("resources", Ty::ArrayOfRef("io.k8s.api.core.v1.ResourceHealth"), "", "", "map", &["resourceID"], ""),
    ]),
    d("io.k8s.api.core.v1.SELinuxOptions", "", &[], &[]),
    d("io.k8s.api.core.v1.ScaleIOPersistentVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.SecretReference")),
    ]),
    d("io.k8s.api.core.v1.ScaleIOVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.ScopeSelector", "atomic", &[], &[
        x("matchExpressions", Ty::ArrayOfRef("io.k8s.api.core.v1.ScopedResourceSelectorRequirement"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.ScopedResourceSelectorRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.SeccompProfile", "", &[], &[]),
    d("io.k8s.api.core.v1.Secret", "", &[("", "v1", "Secret")], &[
        f("data", Ty::MapOfScalar),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("stringData", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.SecretEnvSource", "", &[], &[]),
    d("io.k8s.api.core.v1.SecretKeySelector", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.SecretList", "", &[("", "v1", "SecretList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Secret")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.SecretProjection", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.KeyToPath"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.SecretReference", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.SecretVolumeSource", "", &[], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.core.v1.KeyToPath"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.SecurityContext", "", &[], &[
        f("appArmorProfile", Ty::Ref("io.k8s.api.core.v1.AppArmorProfile")),
        f("capabilities", Ty::Ref("io.k8s.api.core.v1.Capabilities")),
        f("seLinuxOptions", Ty::Ref("io.k8s.api.core.v1.SELinuxOptions")),
        f("seccompProfile", Ty::Ref("io.k8s.api.core.v1.SeccompProfile")),
        f("windowsOptions", Ty::Ref("io.k8s.api.core.v1.WindowsSecurityContextOptions")),
    ]),
    d("io.k8s.api.core.v1.Service", "", &[("", "v1", "Service")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.core.v1.ServiceSpec")),
        f("status", Ty::Ref("io.k8s.api.core.v1.ServiceStatus")),
    ]),
    d("io.k8s.api.core.v1.ServiceAccount", "", &[("", "v1", "ServiceAccount")], &[
        x("imagePullSecrets", Ty::ArrayOfRef("io.k8s.api.core.v1.LocalObjectReference"), "", "", "atomic", E, ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("secrets", Ty::ArrayOfRef("io.k8s.api.core.v1.ObjectReference"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.core.v1.ServiceAccountList", "", &[("", "v1", "ServiceAccountList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.ServiceAccount")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ServiceAccountTokenProjection", "", &[], &[]),
    d("io.k8s.api.core.v1.ServiceList", "", &[("", "v1", "ServiceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.core.v1.Service")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.core.v1.ServicePort", "", &[], &[]),
    d("io.k8s.api.core.v1.ServiceSpec", "", &[], &[
        x("clusterIPs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("externalIPs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("ipFamilies", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("loadBalancerSourceRanges", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("ports", Ty::ArrayOfRef("io.k8s.api.core.v1.ServicePort"), "merge", "port", "map", &["port", "protocol"], ""),
        x("selector", Ty::MapOfScalar, "", "", "", E, "atomic"),
        f("sessionAffinityConfig", Ty::Ref("io.k8s.api.core.v1.SessionAffinityConfig")),
    ]),
    d("io.k8s.api.core.v1.ServiceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "merge", "type", "map", &["type"], ""),
        f("loadBalancer", Ty::Ref("io.k8s.api.core.v1.LoadBalancerStatus")),
    ]),
    d("io.k8s.api.core.v1.SessionAffinityConfig", "", &[], &[
        f("clientIP", Ty::Ref("io.k8s.api.core.v1.ClientIPConfig")),
    ]),
    d("io.k8s.api.core.v1.SleepAction", "", &[], &[]),
    d("io.k8s.api.core.v1.StorageOSPersistentVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
    ]),
    d("io.k8s.api.core.v1.StorageOSVolumeSource", "", &[], &[
        f("secretRef", Ty::Ref("io.k8s.api.core.v1.LocalObjectReference")),
    ]),
    d("io.k8s.api.core.v1.Sysctl", "", &[], &[]),
    d("io.k8s.api.core.v1.TCPSocketAction", "", &[], &[]),
    d("io.k8s.api.core.v1.Taint", "", &[], &[]),
    d("io.k8s.api.core.v1.Toleration", "", &[], &[]),
    d("io.k8s.api.core.v1.TopologySelectorLabelRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.TopologySelectorTerm", "atomic", &[], &[
        x("matchLabelExpressions", Ty::ArrayOfRef("io.k8s.api.core.v1.TopologySelectorLabelRequirement"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.TopologySpreadConstraint", "", &[], &[
        f("labelSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("matchLabelKeys", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.core.v1.TypedLocalObjectReference", "atomic", &[], &[]),
    d("io.k8s.api.core.v1.TypedObjectReference", "", &[], &[]),
    d("io.k8s.api.core.v1.Volume", "", &[], &[
        f("awsElasticBlockStore", Ty::Ref("io.k8s.api.core.v1.AWSElasticBlockStoreVolumeSource")),
        f("azureDisk", Ty::Ref("io.k8s.api.core.v1.AzureDiskVolumeSource")),
        f("azureFile", Ty::Ref("io.k8s.api.core.v1.AzureFileVolumeSource")),
        f("cephfs", Ty::Ref("io.k8s.api.core.v1.CephFSVolumeSource")),
        f("cinder", Ty::Ref("io.k8s.api.core.v1.CinderVolumeSource")),
        f("configMap", Ty::Ref("io.k8s.api.core.v1.ConfigMapVolumeSource")),
        f("csi", Ty::Ref("io.k8s.api.core.v1.CSIVolumeSource")),
        f("downwardAPI", Ty::Ref("io.k8s.api.core.v1.DownwardAPIVolumeSource")),
        f("emptyDir", Ty::Ref("io.k8s.api.core.v1.EmptyDirVolumeSource")),
        f("ephemeral", Ty::Ref("io.k8s.api.core.v1.EphemeralVolumeSource")),
        f("fc", Ty::Ref("io.k8s.api.core.v1.FCVolumeSource")),
        f("flexVolume", Ty::Ref("io.k8s.api.core.v1.FlexVolumeSource")),
        f("flocker", Ty::Ref("io.k8s.api.core.v1.FlockerVolumeSource")),
        f("gcePersistentDisk", Ty::Ref("io.k8s.api.core.v1.GCEPersistentDiskVolumeSource")),
        f("gitRepo", Ty::Ref("io.k8s.api.core.v1.GitRepoVolumeSource")),
        f("glusterfs", Ty::Ref("io.k8s.api.core.v1.GlusterfsVolumeSource")),
        f("hostPath", Ty::Ref("io.k8s.api.core.v1.HostPathVolumeSource")),
        f("image", Ty::Ref("io.k8s.api.core.v1.ImageVolumeSource")),
        f("iscsi", Ty::Ref("io.k8s.api.core.v1.ISCSIVolumeSource")),
        f("nfs", Ty::Ref("io.k8s.api.core.v1.NFSVolumeSource")),
        f("persistentVolumeClaim", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeClaimVolumeSource")),
        f("photonPersistentDisk", Ty::Ref("io.k8s.api.core.v1.PhotonPersistentDiskVolumeSource")),
        f("portworxVolume", Ty::Ref("io.k8s.api.core.v1.PortworxVolumeSource")),
        f("projected", Ty::Ref("io.k8s.api.core.v1.ProjectedVolumeSource")),
        f("quobyte", Ty::Ref("io.k8s.api.core.v1.QuobyteVolumeSource")),
        f("rbd", Ty::Ref("io.k8s.api.core.v1.RBDVolumeSource")),
        f("scaleIO", Ty::Ref("io.k8s.api.core.v1.ScaleIOVolumeSource")),
        f("secret", Ty::Ref("io.k8s.api.core.v1.SecretVolumeSource")),
        f("storageos", Ty::Ref("io.k8s.api.core.v1.StorageOSVolumeSource")),
        f("vsphereVolume", Ty::Ref("io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource")),
    ]),
    d("io.k8s.api.core.v1.VolumeDevice", "", &[], &[]),
    d("io.k8s.api.core.v1.VolumeMount", "", &[], &[]),
    d("io.k8s.api.core.v1.VolumeMountStatus", "", &[], &[]),
    d("io.k8s.api.core.v1.VolumeNodeAffinity", "", &[], &[
        f("required", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
    ]),
    d("io.k8s.api.core.v1.VolumeProjection", "", &[], &[
        f("clusterTrustBundle", Ty::Ref("io.k8s.api.core.v1.ClusterTrustBundleProjection")),
        f("configMap", Ty::Ref("io.k8s.api.core.v1.ConfigMapProjection")),
        f("downwardAPI", Ty::Ref("io.k8s.api.core.v1.DownwardAPIProjection")),
        f("secret", Ty::Ref("io.k8s.api.core.v1.SecretProjection")),
        f("serviceAccountToken", Ty::Ref("io.k8s.api.core.v1.ServiceAccountTokenProjection")),
    ]),
    d("io.k8s.api.core.v1.VolumeResourceRequirements", "", &[], &[
        f("limits", Ty::MapOfScalar),
        f("requests", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.core.v1.VsphereVirtualDiskVolumeSource", "", &[], &[]),
    d("io.k8s.api.core.v1.WeightedPodAffinityTerm", "", &[], &[
        f("podAffinityTerm", Ty::Ref("io.k8s.api.core.v1.PodAffinityTerm")),
    ]),
    d("io.k8s.api.core.v1.WindowsSecurityContextOptions", "", &[], &[]),
    d("io.k8s.api.discovery.v1.Endpoint", "", &[], &[
        x("addresses", Ty::ArrayOfScalar, "", "", "set", E, ""),
        f("conditions", Ty::Ref("io.k8s.api.discovery.v1.EndpointConditions")),
        f("deprecatedTopology", Ty::MapOfScalar),
        f("hints", Ty::Ref("io.k8s.api.discovery.v1.EndpointHints")),
        f("targetRef", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
    ]),
    d("io.k8s.api.discovery.v1.EndpointConditions", "", &[], &[]),
    d("io.k8s.api.discovery.v1.EndpointHints", "", &[], &[
        x("forNodes", Ty::ArrayOfRef("io.k8s.api.discovery.v1.ForNode"), "", "", "atomic", E, ""),
        x("forZones", Ty::ArrayOfRef("io.k8s.api.discovery.v1.ForZone"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.discovery.v1.EndpointPort", "atomic", &[], &[]),
    d("io.k8s.api.discovery.v1.EndpointSlice", "", &[("discovery.k8s.io", "v1", "EndpointSlice")], &[
        x("endpoints", Ty::ArrayOfRef("io.k8s.api.discovery.v1.Endpoint"), "", "", "atomic", E, ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("ports", Ty::ArrayOfRef("io.k8s.api.discovery.v1.EndpointPort"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.discovery.v1.EndpointSliceList", "", &[("discovery.k8s.io", "v1", "EndpointSliceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.discovery.v1.EndpointSlice")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.discovery.v1.ForNode", "", &[], &[]),
    d("io.k8s.api.discovery.v1.ForZone", "", &[], &[]),
    d("io.k8s.api.events.v1.Event", "", &[("events.k8s.io", "v1", "Event")], &[
        f("deprecatedSource", Ty::Ref("io.k8s.api.core.v1.EventSource")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("regarding", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
        f("related", Ty::Ref("io.k8s.api.core.v1.ObjectReference")),
        f("series", Ty::Ref("io.k8s.api.events.v1.EventSeries")),
    ]),
    d("io.k8s.api.events.v1.EventList", "", &[("events.k8s.io", "v1", "EventList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.events.v1.Event")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.events.v1.EventSeries", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.FlowDistinguisherMethod", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.FlowSchema", "", &[("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.flowcontrol.v1.FlowSchemaSpec")),
        f("status", Ty::Ref("io.k8s.api.flowcontrol.v1.FlowSchemaStatus")),
    ]),
    d("io.k8s.api.flowcontrol.v1.FlowSchemaCondition", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.FlowSchemaList", "", &[("flowcontrol.apiserver.k8s.io", "v1", "FlowSchemaList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.FlowSchema")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.flowcontrol.v1.FlowSchemaSpec", "", &[], &[
        f("distinguisherMethod", Ty::Ref("io.k8s.api.flowcontrol.v1.FlowDistinguisherMethod")),
        f("priorityLevelConfiguration", Ty::Ref("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationReference")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.FlowSchemaStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.FlowSchemaCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.GroupSubject", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.LimitResponse", "", &[], &[
        f("queuing", Ty::Ref("io.k8s.api.flowcontrol.v1.QueuingConfiguration")),
    ]),
    d("io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration", "", &[], &[
        f("limitResponse", Ty::Ref("io.k8s.api.flowcontrol.v1.LimitResponse")),
    ]),
    d("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule", "", &[], &[
        x("nonResourceURLs", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("verbs", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.PolicyRulesWithSubjects", "", &[], &[
        x("nonResourceRules", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.NonResourcePolicyRule"), "", "", "atomic", E, ""),
        x("resourceRules", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.ResourcePolicyRule"), "", "", "atomic", E, ""),
        x("subjects", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.Subject"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration", "", &[("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec")),
        f("status", Ty::Ref("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus")),
    ]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationCondition", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationList", "", &[("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfigurationList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.PriorityLevelConfiguration")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationReference", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationSpec", "", &[], &[
        f("exempt", Ty::Ref("io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration")),
        f("limited", Ty::Ref("io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration")),
    ]),
    d("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.flowcontrol.v1.PriorityLevelConfigurationCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.QueuingConfiguration", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.ResourcePolicyRule", "", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("namespaces", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "set", E, ""),
        x("verbs", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.flowcontrol.v1.ServiceAccountSubject", "", &[], &[]),
    d("io.k8s.api.flowcontrol.v1.Subject", "", &[], &[
        f("group", Ty::Ref("io.k8s.api.flowcontrol.v1.GroupSubject")),
        f("serviceAccount", Ty::Ref("io.k8s.api.flowcontrol.v1.ServiceAccountSubject")),
        f("user", Ty::Ref("io.k8s.api.flowcontrol.v1.UserSubject")),
    ]),
    d("io.k8s.api.flowcontrol.v1.UserSubject", "", &[], &[]),
    d("io.k8s.api.networking.v1.HTTPIngressPath", "", &[], &[
        f("backend", Ty::Ref("io.k8s.api.networking.v1.IngressBackend")),
    ]),
    d("io.k8s.api.networking.v1.HTTPIngressRuleValue", "", &[], &[
        x("paths", Ty::ArrayOfRef("io.k8s.api.networking.v1.HTTPIngressPath"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.IPAddress", "", &[("networking.k8s.io", "v1", "IPAddress")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1.IPAddressSpec")),
    ]),
    d("io.k8s.api.networking.v1.IPAddressList", "", &[("networking.k8s.io", "v1", "IPAddressList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1.IPAddress")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1.IPAddressSpec", "", &[], &[
        f("parentRef", Ty::Ref("io.k8s.api.networking.v1.ParentReference")),
    ]),
    d("io.k8s.api.networking.v1.IPBlock", "", &[], &[
        x("except", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.Ingress", "", &[("networking.k8s.io", "v1", "Ingress")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1.IngressSpec")),
        f("status", Ty::Ref("io.k8s.api.networking.v1.IngressStatus")),
    ]),
    d("io.k8s.api.networking.v1.IngressBackend", "", &[], &[
        f("resource", Ty::Ref("io.k8s.api.core.v1.TypedLocalObjectReference")),
        f("service", Ty::Ref("io.k8s.api.networking.v1.IngressServiceBackend")),
    ]),
    d("io.k8s.api.networking.v1.IngressClass", "", &[("networking.k8s.io", "v1", "IngressClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1.IngressClassSpec")),
    ]),
    d("io.k8s.api.networking.v1.IngressClassList", "", &[("networking.k8s.io", "v1", "IngressClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1.IngressClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1.IngressClassParametersReference", "", &[], &[]),
    d("io.k8s.api.networking.v1.IngressClassSpec", "", &[], &[
        f("parameters", Ty::Ref("io.k8s.api.networking.v1.IngressClassParametersReference")),
    ]),
    d("io.k8s.api.networking.v1.IngressList", "", &[("networking.k8s.io", "v1", "IngressList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1.Ingress")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1.IngressLoadBalancerIngress", "", &[], &[
        x("ports", Ty::ArrayOfRef("io.k8s.api.networking.v1.IngressPortStatus"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.IngressLoadBalancerStatus", "", &[], &[
        x("ingress", Ty::ArrayOfRef("io.k8s.api.networking.v1.IngressLoadBalancerIngress"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.IngressPortStatus", "", &[], &[]),
    d("io.k8s.api.networking.v1.IngressRule", "", &[], &[
        f("http", Ty::Ref("io.k8s.api.networking.v1.HTTPIngressRuleValue")),
    ]),
    d("io.k8s.api.networking.v1.IngressServiceBackend", "", &[], &[
        f("port", Ty::Ref("io.k8s.api.networking.v1.ServiceBackendPort")),
    ]),
    d("io.k8s.api.networking.v1.IngressSpec", "", &[], &[
        f("defaultBackend", Ty::Ref("io.k8s.api.networking.v1.IngressBackend")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.networking.v1.IngressRule"), "", "", "atomic", E, ""),
        x("tls", Ty::ArrayOfRef("io.k8s.api.networking.v1.IngressTLS"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.IngressStatus", "", &[], &[
        f("loadBalancer", Ty::Ref("io.k8s.api.networking.v1.IngressLoadBalancerStatus")),
    ]),
    d("io.k8s.api.networking.v1.IngressTLS", "", &[], &[
        x("hosts", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicy", "", &[("networking.k8s.io", "v1", "NetworkPolicy")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1.NetworkPolicySpec")),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicyEgressRule", "", &[], &[
        x("ports", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyPort"), "", "", "atomic", E, ""),
        x("to", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyPeer"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicyIngressRule", "", &[], &[
        x("from", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyPeer"), "", "", "atomic", E, ""),
        x("ports", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyPort"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicyList", "", &[("networking.k8s.io", "v1", "NetworkPolicyList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicy")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicyPeer", "", &[], &[
        f("ipBlock", Ty::Ref("io.k8s.api.networking.v1.IPBlock")),
        f("namespaceSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        f("podSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.networking.v1.NetworkPolicyPort", "", &[], &[]),
    d("io.k8s.api.networking.v1.NetworkPolicySpec", "", &[], &[
        x("egress", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyEgressRule"), "", "", "atomic", E, ""),
        x("ingress", Ty::ArrayOfRef("io.k8s.api.networking.v1.NetworkPolicyIngressRule"), "", "", "atomic", E, ""),
        f("podSelector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
        x("policyTypes", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.ParentReference", "", &[], &[]),
    d("io.k8s.api.networking.v1.ServiceBackendPort", "atomic", &[], &[]),
    d("io.k8s.api.networking.v1.ServiceCIDR", "", &[("networking.k8s.io", "v1", "ServiceCIDR")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1.ServiceCIDRSpec")),
        f("status", Ty::Ref("io.k8s.api.networking.v1.ServiceCIDRStatus")),
    ]),
    d("io.k8s.api.networking.v1.ServiceCIDRList", "", &[("networking.k8s.io", "v1", "ServiceCIDRList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1.ServiceCIDR")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1.ServiceCIDRSpec", "", &[], &[
        x("cidrs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1.ServiceCIDRStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.networking.v1beta1.IPAddress", "", &[("networking.k8s.io", "v1beta1", "IPAddress")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1beta1.IPAddressSpec")),
    ]),
    d("io.k8s.api.networking.v1beta1.IPAddressList", "", &[("networking.k8s.io", "v1beta1", "IPAddressList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1beta1.IPAddress")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1beta1.IPAddressSpec", "", &[], &[
        f("parentRef", Ty::Ref("io.k8s.api.networking.v1beta1.ParentReference")),
    ]),
    d("io.k8s.api.networking.v1beta1.ParentReference", "", &[], &[]),
    d("io.k8s.api.networking.v1beta1.ServiceCIDR", "", &[("networking.k8s.io", "v1beta1", "ServiceCIDR")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.networking.v1beta1.ServiceCIDRSpec")),
        f("status", Ty::Ref("io.k8s.api.networking.v1beta1.ServiceCIDRStatus")),
    ]),
    d("io.k8s.api.networking.v1beta1.ServiceCIDRList", "", &[("networking.k8s.io", "v1beta1", "ServiceCIDRList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.networking.v1beta1.ServiceCIDR")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.networking.v1beta1.ServiceCIDRSpec", "", &[], &[
        x("cidrs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.networking.v1beta1.ServiceCIDRStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.api.node.v1.Overhead", "", &[], &[
        f("podFixed", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.node.v1.RuntimeClass", "", &[("node.k8s.io", "v1", "RuntimeClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("overhead", Ty::Ref("io.k8s.api.node.v1.Overhead")),
        f("scheduling", Ty::Ref("io.k8s.api.node.v1.Scheduling")),
    ]),
    d("io.k8s.api.node.v1.RuntimeClassList", "", &[("node.k8s.io", "v1", "RuntimeClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.node.v1.RuntimeClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.node.v1.Scheduling", "", &[], &[
        x("nodeSelector", Ty::MapOfScalar, "", "", "", E, "atomic"),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.core.v1.Toleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.policy.v1.Eviction", "", &[("policy", "v1", "Eviction")], &[
        f("deleteOptions", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
    ]),
    d("io.k8s.api.policy.v1.PodDisruptionBudget", "", &[("policy", "v1", "PodDisruptionBudget")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.policy.v1.PodDisruptionBudgetSpec")),
        f("status", Ty::Ref("io.k8s.api.policy.v1.PodDisruptionBudgetStatus")),
    ]),
    d("io.k8s.api.policy.v1.PodDisruptionBudgetList", "", &[("policy", "v1", "PodDisruptionBudgetList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.policy.v1.PodDisruptionBudget")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "", &[], &[
        x("selector", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"), "replace", "", "", E, ""),
    ]),
    d("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "merge", "type", "map", &["type"], ""),
        f("disruptedPods", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.rbac.v1.AggregationRule", "", &[], &[
        x("clusterRoleSelectors", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.ClusterRole", "", &[("rbac.authorization.k8s.io", "v1", "ClusterRole")], &[
        f("aggregationRule", Ty::Ref("io.k8s.api.rbac.v1.AggregationRule")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.rbac.v1.PolicyRule"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.ClusterRoleBinding", "", &[("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("roleRef", Ty::Ref("io.k8s.api.rbac.v1.RoleRef")),
        x("subjects", Ty::ArrayOfRef("io.k8s.api.rbac.v1.Subject"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.ClusterRoleBindingList", "", &[("rbac.authorization.k8s.io", "v1", "ClusterRoleBindingList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.rbac.v1.ClusterRoleBinding")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.rbac.v1.ClusterRoleList", "", &[("rbac.authorization.k8s.io", "v1", "ClusterRoleList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.rbac.v1.ClusterRole")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.rbac.v1.PolicyRule", "", &[], &[
        x("apiGroups", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("nonResourceURLs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resourceNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("resources", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("verbs", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.Role", "", &[("rbac.authorization.k8s.io", "v1", "Role")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("rules", Ty::ArrayOfRef("io.k8s.api.rbac.v1.PolicyRule"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.RoleBinding", "", &[("rbac.authorization.k8s.io", "v1", "RoleBinding")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("roleRef", Ty::Ref("io.k8s.api.rbac.v1.RoleRef")),
        x("subjects", Ty::ArrayOfRef("io.k8s.api.rbac.v1.Subject"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.rbac.v1.RoleBindingList", "", &[("rbac.authorization.k8s.io", "v1", "RoleBindingList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.rbac.v1.RoleBinding")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.rbac.v1.RoleList", "", &[("rbac.authorization.k8s.io", "v1", "RoleList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.rbac.v1.Role")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.rbac.v1.RoleRef", "atomic", &[], &[]),
    d("io.k8s.api.rbac.v1.Subject", "atomic", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.AllocatedDeviceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "", "", "map", &["type"], ""),
        f("data", Ty::Any),
        f("networkData", Ty::Ref("io.k8s.api.resource.v1alpha3.NetworkDeviceData")),
    ]),
    d("io.k8s.api.resource.v1alpha3.AllocationResult", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceAllocationResult")),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
    ]),
    d("io.k8s.api.resource.v1alpha3.BasicDevice", "", &[], &[
        f("attributes", Ty::MapOfRef("io.k8s.api.resource.v1alpha3.DeviceAttribute")),
        f("capacity", Ty::MapOfScalar),
        x("consumesCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceCounterConsumption"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        x("taints", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceTaint"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.CELDeviceSelector", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.Counter", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.CounterSet", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1alpha3.Counter")),
    ]),
    d("io.k8s.api.resource.v1alpha3.Device", "", &[], &[
        f("basic", Ty::Ref("io.k8s.api.resource.v1alpha3.BasicDevice")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceAllocationConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1alpha3.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceAllocationResult", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceAllocationConfiguration"), "", "", "atomic", E, ""),
        x("results", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceRequestAllocationResult"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceAttribute", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.DeviceClaim", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceClaimConfiguration"), "", "", "atomic", E, ""),
        x("constraints", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceConstraint"), "", "", "atomic", E, ""),
        x("requests", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceRequest"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceClaimConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1alpha3.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceClass", "", &[("resource.k8s.io", "v1alpha3", "DeviceClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceClassSpec")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceClassConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1alpha3.OpaqueDeviceConfiguration")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceClassList", "", &[("resource.k8s.io", "v1alpha3", "DeviceClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceClassSpec", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceClassConfiguration"), "", "", "atomic", E, ""),
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceSelector"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceConstraint", "", &[], &[
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceCounterConsumption", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1alpha3.Counter")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceRequest", "", &[], &[
        x("firstAvailable", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceSubRequest"), "", "", "atomic", E, ""),
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceRequestAllocationResult", "", &[], &[
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceSelector", "", &[], &[
        f("cel", Ty::Ref("io.k8s.api.resource.v1alpha3.CELDeviceSelector")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceSubRequest", "", &[], &[
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceTaint", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.DeviceTaintRule", "", &[("resource.k8s.io", "v1alpha3", "DeviceTaintRule")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceTaintRuleSpec")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceTaintRuleList", "", &[("resource.k8s.io", "v1alpha3", "DeviceTaintRuleList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceTaintRule")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceTaintRuleSpec", "", &[], &[
        f("deviceSelector", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceTaintSelector")),
        f("taint", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceTaint")),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceTaintSelector", "", &[], &[
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.DeviceSelector"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.DeviceToleration", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.NetworkDeviceData", "", &[], &[
        x("ips", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.OpaqueDeviceConfiguration", "", &[], &[
        f("parameters", Ty::Any),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaim", "", &[("resource.k8s.io", "v1alpha3", "ResourceClaim")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourceClaimSpec")),
        f("status", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourceClaimStatus")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimConsumerReference", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimList", "", &[("resource.k8s.io", "v1alpha3", "ResourceClaimList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.ResourceClaim")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimSpec", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1alpha3.DeviceClaim")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimStatus", "", &[], &[
        f("allocation", Ty::Ref("io.k8s.api.resource.v1alpha3.AllocationResult")),
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.AllocatedDeviceStatus"), "", "", "map", &["driver", "device", "pool"], ""),
        x("reservedFor", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.ResourceClaimConsumerReference"), "merge", "uid", "map", &["uid"], ""),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimTemplate", "", &[("resource.k8s.io", "v1alpha3", "ResourceClaimTemplate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourceClaimTemplateSpec")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimTemplateList", "", &[("resource.k8s.io", "v1alpha3", "ResourceClaimTemplateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.ResourceClaimTemplate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceClaimTemplateSpec", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourceClaimSpec")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourcePool", "", &[], &[]),
    d("io.k8s.api.resource.v1alpha3.ResourceSlice", "", &[("resource.k8s.io", "v1alpha3", "ResourceSlice")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourceSliceSpec")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceSliceList", "", &[("resource.k8s.io", "v1alpha3", "ResourceSliceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.ResourceSlice")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1alpha3.ResourceSliceSpec", "", &[], &[
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.Device"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        f("pool", Ty::Ref("io.k8s.api.resource.v1alpha3.ResourcePool")),
        x("sharedCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1alpha3.CounterSet"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.AllocatedDeviceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "", "", "map", &["type"], ""),
        f("data", Ty::Any),
        f("networkData", Ty::Ref("io.k8s.api.resource.v1beta1.NetworkDeviceData")),
    ]),
    d("io.k8s.api.resource.v1beta1.AllocationResult", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1beta1.DeviceAllocationResult")),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
    ]),
    d("io.k8s.api.resource.v1beta1.BasicDevice", "", &[], &[
        f("attributes", Ty::MapOfRef("io.k8s.api.resource.v1beta1.DeviceAttribute")),
        f("capacity", Ty::MapOfRef("io.k8s.api.resource.v1beta1.DeviceCapacity")),
        x("consumesCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceCounterConsumption"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        x("taints", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceTaint"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.CELDeviceSelector", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.Counter", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.CounterSet", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1beta1.Counter")),
    ]),
    d("io.k8s.api.resource.v1beta1.Device", "", &[], &[
        f("basic", Ty::Ref("io.k8s.api.resource.v1beta1.BasicDevice")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceAllocationConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta1.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceAllocationResult", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceAllocationConfiguration"), "", "", "atomic", E, ""),
        x("results", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceRequestAllocationResult"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceAttribute", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.DeviceCapacity", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.DeviceClaim", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceClaimConfiguration"), "", "", "atomic", E, ""),
        x("constraints", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceConstraint"), "", "", "atomic", E, ""),
        x("requests", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceRequest"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceClaimConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta1.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceClass", "", &[("resource.k8s.io", "v1beta1", "DeviceClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta1.DeviceClassSpec")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceClassConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta1.OpaqueDeviceConfiguration")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceClassList", "", &[("resource.k8s.io", "v1beta1", "DeviceClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceClassSpec", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceClassConfiguration"), "", "", "atomic", E, ""),
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceSelector"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceConstraint", "", &[], &[
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceCounterConsumption", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1beta1.Counter")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceRequest", "", &[], &[
        x("firstAvailable", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceSubRequest"), "", "", "atomic", E, ""),
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceRequestAllocationResult", "", &[], &[
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceSelector", "", &[], &[
        f("cel", Ty::Ref("io.k8s.api.resource.v1beta1.CELDeviceSelector")),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceSubRequest", "", &[], &[
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.DeviceTaint", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.DeviceToleration", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.NetworkDeviceData", "", &[], &[
        x("ips", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta1.OpaqueDeviceConfiguration", "", &[], &[
        f("parameters", Ty::Any),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaim", "", &[("resource.k8s.io", "v1beta1", "ResourceClaim")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta1.ResourceClaimSpec")),
        f("status", Ty::Ref("io.k8s.api.resource.v1beta1.ResourceClaimStatus")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimConsumerReference", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimList", "", &[("resource.k8s.io", "v1beta1", "ResourceClaimList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.ResourceClaim")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimSpec", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1beta1.DeviceClaim")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimStatus", "", &[], &[
        f("allocation", Ty::Ref("io.k8s.api.resource.v1beta1.AllocationResult")),
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.AllocatedDeviceStatus"), "", "", "map", &["driver", "device", "pool"], ""),
        x("reservedFor", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.ResourceClaimConsumerReference"), "merge", "uid", "map", &["uid"], ""),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimTemplate", "", &[("resource.k8s.io", "v1beta1", "ResourceClaimTemplate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta1.ResourceClaimTemplateSpec")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimTemplateList", "", &[("resource.k8s.io", "v1beta1", "ResourceClaimTemplateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.ResourceClaimTemplate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceClaimTemplateSpec", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta1.ResourceClaimSpec")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourcePool", "", &[], &[]),
    d("io.k8s.api.resource.v1beta1.ResourceSlice", "", &[("resource.k8s.io", "v1beta1", "ResourceSlice")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta1.ResourceSliceSpec")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceSliceList", "", &[("resource.k8s.io", "v1beta1", "ResourceSliceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.ResourceSlice")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta1.ResourceSliceSpec", "", &[], &[
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.Device"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        f("pool", Ty::Ref("io.k8s.api.resource.v1beta1.ResourcePool")),
        x("sharedCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1beta1.CounterSet"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.AllocatedDeviceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.Condition"), "", "", "map", &["type"], ""),
        f("data", Ty::Any),
        f("networkData", Ty::Ref("io.k8s.api.resource.v1beta2.NetworkDeviceData")),
    ]),
    d("io.k8s.api.resource.v1beta2.AllocationResult", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1beta2.DeviceAllocationResult")),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
    ]),
    d("io.k8s.api.resource.v1beta2.CELDeviceSelector", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.Counter", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.CounterSet", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1beta2.Counter")),
    ]),
    d("io.k8s.api.resource.v1beta2.Device", "", &[], &[
        f("attributes", Ty::MapOfRef("io.k8s.api.resource.v1beta2.DeviceAttribute")),
        f("capacity", Ty::MapOfRef("io.k8s.api.resource.v1beta2.DeviceCapacity")),
        x("consumesCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceCounterConsumption"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        x("taints", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceTaint"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceAllocationConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta2.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceAllocationResult", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceAllocationConfiguration"), "", "", "atomic", E, ""),
        x("results", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceRequestAllocationResult"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceAttribute", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.DeviceCapacity", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.DeviceClaim", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceClaimConfiguration"), "", "", "atomic", E, ""),
        x("constraints", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceConstraint"), "", "", "atomic", E, ""),
        x("requests", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceRequest"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceClaimConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta2.OpaqueDeviceConfiguration")),
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceClass", "", &[("resource.k8s.io", "v1beta2", "DeviceClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta2.DeviceClassSpec")),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceClassConfiguration", "", &[], &[
        f("opaque", Ty::Ref("io.k8s.api.resource.v1beta2.OpaqueDeviceConfiguration")),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceClassList", "", &[("resource.k8s.io", "v1beta2", "DeviceClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceClassSpec", "", &[], &[
        x("config", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceClassConfiguration"), "", "", "atomic", E, ""),
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceSelector"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceConstraint", "", &[], &[
        x("requests", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceCounterConsumption", "", &[], &[
        f("counters", Ty::MapOfRef("io.k8s.api.resource.v1beta2.Counter")),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceRequest", "", &[], &[
        f("exactly", Ty::Ref("io.k8s.api.resource.v1beta2.ExactDeviceRequest")),
        x("firstAvailable", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceSubRequest"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceRequestAllocationResult", "", &[], &[
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceSelector", "", &[], &[
        f("cel", Ty::Ref("io.k8s.api.resource.v1beta2.CELDeviceSelector")),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceSubRequest", "", &[], &[
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.DeviceTaint", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.DeviceToleration", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.ExactDeviceRequest", "", &[], &[
        x("selectors", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceSelector"), "", "", "atomic", E, ""),
        x("tolerations", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.DeviceToleration"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.NetworkDeviceData", "", &[], &[
        x("ips", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.resource.v1beta2.OpaqueDeviceConfiguration", "", &[], &[
        f("parameters", Ty::Any),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaim", "", &[("resource.k8s.io", "v1beta2", "ResourceClaim")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta2.ResourceClaimSpec")),
        f("status", Ty::Ref("io.k8s.api.resource.v1beta2.ResourceClaimStatus")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimConsumerReference", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimList", "", &[("resource.k8s.io", "v1beta2", "ResourceClaimList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.ResourceClaim")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimSpec", "", &[], &[
        f("devices", Ty::Ref("io.k8s.api.resource.v1beta2.DeviceClaim")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimStatus", "", &[], &[
        f("allocation", Ty::Ref("io.k8s.api.resource.v1beta2.AllocationResult")),
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.AllocatedDeviceStatus"), "", "", "map", &["driver", "device", "pool"], ""),
        x("reservedFor", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.ResourceClaimConsumerReference"), "merge", "uid", "map", &["uid"], ""),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimTemplate", "", &[("resource.k8s.io", "v1beta2", "ResourceClaimTemplate")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta2.ResourceClaimTemplateSpec")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimTemplateList", "", &[("resource.k8s.io", "v1beta2", "ResourceClaimTemplateList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.ResourceClaimTemplate")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceClaimTemplateSpec", "", &[], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta2.ResourceClaimSpec")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourcePool", "", &[], &[]),
    d("io.k8s.api.resource.v1beta2.ResourceSlice", "", &[("resource.k8s.io", "v1beta2", "ResourceSlice")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.resource.v1beta2.ResourceSliceSpec")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceSliceList", "", &[("resource.k8s.io", "v1beta2", "ResourceSliceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.ResourceSlice")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.resource.v1beta2.ResourceSliceSpec", "", &[], &[
        x("devices", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.Device"), "", "", "atomic", E, ""),
        f("nodeSelector", Ty::Ref("io.k8s.api.core.v1.NodeSelector")),
        f("pool", Ty::Ref("io.k8s.api.resource.v1beta2.ResourcePool")),
        x("sharedCounters", Ty::ArrayOfRef("io.k8s.api.resource.v1beta2.CounterSet"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.scheduling.v1.PriorityClass", "", &[("scheduling.k8s.io", "v1", "PriorityClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
    ]),
    d("io.k8s.api.scheduling.v1.PriorityClassList", "", &[("scheduling.k8s.io", "v1", "PriorityClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.scheduling.v1.PriorityClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.CSIDriver", "", &[("storage.k8s.io", "v1", "CSIDriver")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.storage.v1.CSIDriverSpec")),
    ]),
    d("io.k8s.api.storage.v1.CSIDriverList", "", &[("storage.k8s.io", "v1", "CSIDriverList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1.CSIDriver")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.CSIDriverSpec", "", &[], &[
        x("tokenRequests", Ty::ArrayOfRef("io.k8s.api.storage.v1.TokenRequest"), "", "", "atomic", E, ""),
        x("volumeLifecycleModes", Ty::ArrayOfScalar, "", "", "set", E, ""),
    ]),
    d("io.k8s.api.storage.v1.CSINode", "", &[("storage.k8s.io", "v1", "CSINode")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.storage.v1.CSINodeSpec")),
    ]),
    d("io.k8s.api.storage.v1.CSINodeDriver", "", &[], &[
        f("allocatable", Ty::Ref("io.k8s.api.storage.v1.VolumeNodeResources")),
        x("topologyKeys", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.api.storage.v1.CSINodeList", "", &[("storage.k8s.io", "v1", "CSINodeList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1.CSINode")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.CSINodeSpec", "", &[], &[
        x("drivers", Ty::ArrayOfRef("io.k8s.api.storage.v1.CSINodeDriver"), "merge", "name", "map", &["name"], ""),
    ]),
    d("io.k8s.api.storage.v1.CSIStorageCapacity", "", &[("storage.k8s.io", "v1", "CSIStorageCapacity")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("nodeTopology", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector")),
    ]),
    d("io.k8s.api.storage.v1.CSIStorageCapacityList", "", &[("storage.k8s.io", "v1", "CSIStorageCapacityList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1.CSIStorageCapacity")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.StorageClass", "", &[("storage.k8s.io", "v1", "StorageClass")], &[
        x("allowedTopologies", Ty::ArrayOfRef("io.k8s.api.core.v1.TopologySelectorTerm"), "", "", "atomic", E, ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        x("mountOptions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("parameters", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.storage.v1.StorageClassList", "", &[("storage.k8s.io", "v1", "StorageClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1.StorageClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.TokenRequest", "", &[], &[]),
    d("io.k8s.api.storage.v1.VolumeAttachment", "", &[("storage.k8s.io", "v1", "VolumeAttachment")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.storage.v1.VolumeAttachmentSpec")),
        f("status", Ty::Ref("io.k8s.api.storage.v1.VolumeAttachmentStatus")),
    ]),
    d("io.k8s.api.storage.v1.VolumeAttachmentList", "", &[("storage.k8s.io", "v1", "VolumeAttachmentList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1.VolumeAttachment")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1.VolumeAttachmentSource", "", &[], &[
        f("inlineVolumeSpec", Ty::Ref("io.k8s.api.core.v1.PersistentVolumeSpec")),
    ]),
    d("io.k8s.api.storage.v1.VolumeAttachmentSpec", "", &[], &[
        f("source", Ty::Ref("io.k8s.api.storage.v1.VolumeAttachmentSource")),
    ]),
    d("io.k8s.api.storage.v1.VolumeAttachmentStatus", "", &[], &[
        f("attachError", Ty::Ref("io.k8s.api.storage.v1.VolumeError")),
        f("attachmentMetadata", Ty::MapOfScalar),
        f("detachError", Ty::Ref("io.k8s.api.storage.v1.VolumeError")),
    ]),
    d("io.k8s.api.storage.v1.VolumeError", "", &[], &[]),
    d("io.k8s.api.storage.v1.VolumeNodeResources", "", &[], &[]),
    d("io.k8s.api.storage.v1alpha1.VolumeAttributesClass", "", &[("storage.k8s.io", "v1alpha1", "VolumeAttributesClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("parameters", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.storage.v1alpha1.VolumeAttributesClassList", "", &[("storage.k8s.io", "v1alpha1", "VolumeAttributesClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1alpha1.VolumeAttributesClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storage.v1beta1.VolumeAttributesClass", "", &[("storage.k8s.io", "v1beta1", "VolumeAttributesClass")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("parameters", Ty::MapOfScalar),
    ]),
    d("io.k8s.api.storage.v1beta1.VolumeAttributesClassList", "", &[("storage.k8s.io", "v1beta1", "VolumeAttributesClassList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.api.storage.v1beta1.VolumeAttributesClass")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storagemigration.v1alpha1.GroupVersionResource", "", &[], &[]),
    d("io.k8s.api.storagemigration.v1alpha1.MigrationCondition", "", &[], &[]),
    d("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigration", "", &[("storagemigration.k8s.io", "v1alpha1", "StorageVersionMigration")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigrationSpec")),
        f("status", Ty::Ref("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigrationStatus")),
    ]),
    d("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigrationList", "", &[("storagemigration.k8s.io", "v1alpha1", "StorageVersionMigrationList")], &[
        x("items", Ty::ArrayOfRef("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigration"), "merge", "type", "map", &["type"], ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigrationSpec", "", &[], &[
        f("resource", Ty::Ref("io.k8s.api.storagemigration.v1alpha1.GroupVersionResource")),
    ]),
    d("io.k8s.api.storagemigration.v1alpha1.StorageVersionMigrationStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.api.storagemigration.v1alpha1.MigrationCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion", "", &[], &[
        f("webhook", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", "", &[("apiextensions.k8s.io", "v1", "CustomResourceDefinition")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec")),
        f("status", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList", "", &[("apiextensions.k8s.io", "v1", "CustomResourceDefinitionList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames", "", &[], &[
        x("categories", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("shortNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec", "", &[], &[
        f("conversion", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceConversion")),
        f("names", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames")),
        x("versions", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus", "", &[], &[
        f("acceptedNames", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionNames")),
        x("conditions", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition"), "", "", "map", &["type"], ""),
        x("storedVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion", "", &[], &[
        x("additionalPrinterColumns", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceColumnDefinition"), "", "", "atomic", E, ""),
        f("schema", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation")),
        x("selectableFields", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField"), "", "", "atomic", E, ""),
        f("subresources", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresources", "", &[], &[
        f("scale", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceScale")),
        f("status", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation", "", &[], &[
        f("openAPIV3Schema", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps", "", &[], &[
        f("additionalItems", Ty::Any),
        f("additionalProperties", Ty::Any),
        x("allOf", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"), "", "", "atomic", E, ""),
        x("anyOf", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"), "", "", "atomic", E, ""),
        f("default", Ty::Any),
        f("definitions", Ty::MapOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")),
        f("dependencies", Ty::MapOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray")),
        x("enum", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"), "", "", "atomic", E, ""),
        f("example", Ty::Any),
        f("externalDocs", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ExternalDocumentation")),
        f("items", Ty::Any),
        f("not", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")),
        x("oneOf", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"), "", "", "atomic", E, ""),
        f("patternProperties", Ty::MapOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")),
        f("properties", Ty::MapOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")),
        x("required", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("x-kubernetes-list-map-keys", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("x-kubernetes-validations", Ty::ArrayOfRef("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule"), "merge", "rule", "map", &["rule"], ""),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.SelectableField", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule", "", &[], &[]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig", "", &[], &[
        f("service", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference")),
    ]),
    d("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion", "", &[], &[
        f("clientConfig", Ty::Ref("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookClientConfig")),
        x("conversionReviewVersions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.api.resource.Quantity", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "", &[("", "v1", "APIGroup")], &[
        f("preferredVersion", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery")),
        x("serverAddressByClientCIDRs", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR"), "", "", "atomic", E, ""),
        x("versions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList", "", &[("", "v1", "APIGroupList")], &[
        x("groups", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource", "", &[], &[
        x("categories", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        x("shortNames", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("verbs", Ty::ArrayOfScalar),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", "", &[("", "v1", "APIResourceList")], &[
        x("resources", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.APIResource"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "", &[("", "v1", "APIVersions")], &[
        x("serverAddressByClientCIDRs", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR"), "", "", "atomic", E, ""),
        x("versions", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.Condition", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "", &[("", "v1", "DeleteOptions"), ("admission.k8s.io", "v1", "DeleteOptions"), ("admission.k8s.io", "v1beta1", "DeleteOptions"), ("admissionregistration.k8s.io", "v1", "DeleteOptions"), ("admissionregistration.k8s.io", "v1alpha1", "DeleteOptions"), ("admissionregistration.k8s.io", "v1beta1", "DeleteOptions"), ("apiextensions.k8s.io", "v1", "DeleteOptions"), ("apiextensions.k8s.io", "v1beta1", "DeleteOptions"), ("apiregistration.k8s.io", "v1", "DeleteOptions"), ("apiregistration.k8s.io", "v1beta1", "DeleteOptions"), ("apps", "v1", "DeleteOptions"), ("apps", "v1beta1", "DeleteOptions"), ("apps", "v1beta2", "DeleteOptions"), ("authentication.k8s.io", "v1", "DeleteOptions"), ("authentication.k8s.io", "v1alpha1", "DeleteOptions"), ("authentication.k8s.io", "v1beta1", "DeleteOptions"), ("authorization.k8s.io", "v1", "DeleteOptions"), ("authorization.k8s.io", "v1beta1", "DeleteOptions"), ("autoscaling", "v1", "DeleteOptions"), ("autoscaling", "v2", "DeleteOptions"), ("autoscaling", "v2beta1", "DeleteOptions"), ("autoscaling", "v2beta2", "DeleteOptions"), ("batch", "v1", "DeleteOptions"), ("batch", "v1beta1", "DeleteOptions"), ("certificates.k8s.io", "v1", "DeleteOptions"), ("certificates.k8s.io", "v1alpha1", "DeleteOptions"), ("certificates.k8s.io", "v1beta1", "DeleteOptions"), ("coordination.k8s.io", "v1", "DeleteOptions"), ("coordination.k8s.io", "v1alpha2", "DeleteOptions"), ("coordination.k8s.io", "v1beta1", "DeleteOptions"), ("discovery.k8s.io", "v1", "DeleteOptions"), ("discovery.k8s.io", "v1beta1", "DeleteOptions"), ("events.k8s.io", "v1", "DeleteOptions"), ("events.k8s.io", "v1beta1", "DeleteOptions"), ("extensions", "v1beta1", "DeleteOptions"), ("flowcontrol.apiserver.k8s.io", "v1", "DeleteOptions"), ("flowcontrol.apiserver.k8s.io", "v1beta1", "DeleteOptions"), ("flowcontrol.apiserver.k8s.io", "v1beta2", "DeleteOptions"), ("flowcontrol.apiserver.k8s.io", "v1beta3", "DeleteOptions"), ("imagepolicy.k8s.io", "v1alpha1", "DeleteOptions"), ("internal.apiserver.k8s.io", "v1alpha1", "DeleteOptions"), ("networking.k8s.io", "v1", "DeleteOptions"), ("networking.k8s.io", "v1alpha1", "DeleteOptions"), ("networking.k8s.io", "v1beta1", "DeleteOptions"), ("node.k8s.io", "v1", "DeleteOptions"), ("node.k8s.io", "v1alpha1", "DeleteOptions"), ("node.k8s.io", "v1beta1", "DeleteOptions"), ("policy", "v1", "DeleteOptions"), ("policy", "v1beta1", "DeleteOptions"), ("rbac.authorization.k8s.io", "v1", "DeleteOptions"), ("rbac.authorization.k8s.io", "v1alpha1", "DeleteOptions"), ("rbac.authorization.k8s.io", "v1beta1", "DeleteOptions"), ("resource.k8s.io", "v1alpha3", "DeleteOptions"), ("resource.k8s.io", "v1beta1", "DeleteOptions"), ("resource.k8s.io", "v1beta2", "DeleteOptions"), ("scheduling.k8s.io", "v1", "DeleteOptions"), ("scheduling.k8s.io", "v1alpha1", "DeleteOptions"), ("scheduling.k8s.io", "v1beta1", "DeleteOptions"), ("storage.k8s.io", "v1", "DeleteOptions"), ("storage.k8s.io", "v1alpha1", "DeleteOptions"), ("storage.k8s.io", "v1beta1", "DeleteOptions"), ("storagemigration.k8s.io", "v1alpha1", "DeleteOptions")], &[
        x("dryRun", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
        f("preconditions", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions")),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector", "atomic", &[], &[
        x("matchExpressions", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement"), "", "", "atomic", E, ""),
        f("matchLabels", Ty::MapOfScalar),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement", "", &[], &[
        x("values", Ty::ArrayOfScalar, "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry", "", &[], &[
        f("fieldsV1", Ty::Any),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "", &[], &[
        f("annotations", Ty::MapOfScalar),
        x("finalizers", Ty::ArrayOfScalar, "merge", "", "set", E, ""),
        f("labels", Ty::MapOfScalar),
        x("managedFields", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"), "", "", "atomic", E, ""),
        x("ownerReferences", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"), "merge", "uid", "map", &["uid"], ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference", "atomic", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.Status", "", &[("", "v1", "Status")], &[
        x("details", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails"), "", "", "atomic", E, ""),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails", "", &[], &[
        x("causes", Ty::ArrayOfRef("io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause"), "", "", "atomic", E, ""),
    ]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", "", &[("", "v1", "WatchEvent"), ("admission.k8s.io", "v1", "WatchEvent"), ("admission.k8s.io", "v1beta1", "WatchEvent"), ("admissionregistration.k8s.io", "v1", "WatchEvent"), ("admissionregistration.k8s.io", "v1alpha1", "WatchEvent"), ("admissionregistration.k8s.io", "v1beta1", "WatchEvent"), ("apiextensions.k8s.io", "v1", "WatchEvent"), ("apiextensions.k8s.io", "v1beta1", "WatchEvent"), ("apiregistration.k8s.io", "v1", "WatchEvent"), ("apiregistration.k8s.io", "v1beta1", "WatchEvent"), ("apps", "v1", "WatchEvent"), ("apps", "v1beta1", "WatchEvent"), ("apps", "v1beta2", "WatchEvent"), ("authentication.k8s.io", "v1", "WatchEvent"), ("authentication.k8s.io", "v1alpha1", "WatchEvent"), ("authentication.k8s.io", "v1beta1", "WatchEvent"), ("authorization.k8s.io", "v1", "WatchEvent"), ("authorization.k8s.io", "v1beta1", "WatchEvent"), ("autoscaling", "v1", "WatchEvent"), ("autoscaling", "v2", "WatchEvent"), ("autoscaling", "v2beta1", "WatchEvent"), ("autoscaling", "v2beta2", "WatchEvent"), ("batch", "v1", "WatchEvent"), ("batch", "v1beta1", "WatchEvent"), ("certificates.k8s.io", "v1", "WatchEvent"), ("certificates.k8s.io", "v1alpha1", "WatchEvent"), ("certificates.k8s.io", "v1beta1", "WatchEvent"), ("coordination.k8s.io", "v1", "WatchEvent"), ("coordination.k8s.io", "v1alpha2", "WatchEvent"), ("coordination.k8s.io", "v1beta1", "WatchEvent"), ("discovery.k8s.io", "v1", "WatchEvent"), ("discovery.k8s.io", "v1beta1", "WatchEvent"), ("events.k8s.io", "v1", "WatchEvent"), ("events.k8s.io", "v1beta1", "WatchEvent"), ("extensions", "v1beta1", "WatchEvent"), ("flowcontrol.apiserver.k8s.io", "v1", "WatchEvent"), ("flowcontrol.apiserver.k8s.io", "v1beta1", "WatchEvent"), ("flowcontrol.apiserver.k8s.io", "v1beta2", "WatchEvent"), ("flowcontrol.apiserver.k8s.io", "v1beta3", "WatchEvent"), ("imagepolicy.k8s.io", "v1alpha1", "WatchEvent"), ("internal.apiserver.k8s.io", "v1alpha1", "WatchEvent"), ("networking.k8s.io", "v1", "WatchEvent"), ("networking.k8s.io", "v1alpha1", "WatchEvent"), ("networking.k8s.io", "v1beta1", "WatchEvent"), ("node.k8s.io", "v1", "WatchEvent"), ("node.k8s.io", "v1alpha1", "WatchEvent"), ("node.k8s.io", "v1beta1", "WatchEvent"), ("policy", "v1", "WatchEvent"), ("policy", "v1beta1", "WatchEvent"), ("rbac.authorization.k8s.io", "v1", "WatchEvent"), ("rbac.authorization.k8s.io", "v1alpha1", "WatchEvent"), ("rbac.authorization.k8s.io", "v1beta1", "WatchEvent"), ("resource.k8s.io", "v1alpha3", "WatchEvent"), ("resource.k8s.io", "v1beta1", "WatchEvent"), ("resource.k8s.io", "v1beta2", "WatchEvent"), ("scheduling.k8s.io", "v1", "WatchEvent"), ("scheduling.k8s.io", "v1alpha1", "WatchEvent"), ("scheduling.k8s.io", "v1beta1", "WatchEvent"), ("storage.k8s.io", "v1", "WatchEvent"), ("storage.k8s.io", "v1alpha1", "WatchEvent"), ("storage.k8s.io", "v1beta1", "WatchEvent"), ("storagemigration.k8s.io", "v1alpha1", "WatchEvent")], &[
        f("object", Ty::Any),
    ]),
    d("io.k8s.apimachinery.pkg.runtime.RawExtension", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.util.intstr.IntOrString", "", &[], &[]),
    d("io.k8s.apimachinery.pkg.version.Info", "", &[], &[]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", "", &[("apiregistration.k8s.io", "v1", "APIService")], &[
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")),
        f("spec", Ty::Ref("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec")),
        f("status", Ty::Ref("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus")),
    ]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition", "", &[], &[]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceList", "", &[("apiregistration.k8s.io", "v1", "APIServiceList")], &[
        f("items", Ty::ArrayOfRef("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService")),
        f("metadata", Ty::Ref("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")),
    ]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceSpec", "", &[], &[
        x("caBundle", Ty::Scalar, "", "", "atomic", E, ""),
        f("service", Ty::Ref("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference")),
    ]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus", "", &[], &[
        x("conditions", Ty::ArrayOfRef("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition"), "merge", "type", "map", &["type"], ""),
    ]),
    d("io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.ServiceReference", "", &[], &[]),
];

/// (group, version, kind, index into DEFS), sorted.
#[rustfmt::skip]
static GVK_INDEX: &[(&str, &str, &str, u16)] = &[
    ("", "v1", "APIGroup", 673),
    ("", "v1", "APIGroupList", 674),
    ("", "v1", "APIResourceList", 676),
    ("", "v1", "APIVersions", 677),
    ("", "v1", "Binding", 195),
    ("", "v1", "ComponentStatus", 206),
    ("", "v1", "ComponentStatusList", 207),
    ("", "v1", "ConfigMap", 208),
    ("", "v1", "ConfigMapList", 211),
    ("", "v1", "DeleteOptions", 679),
    ("", "v1", "Endpoints", 233),
    ("", "v1", "EndpointsList", 234),
    ("", "v1", "Event", 240),
    ("", "v1", "EventList", 241),
    ("", "v1", "LimitRange", 265),
    ("", "v1", "LimitRangeList", 267),
    ("", "v1", "Namespace", 276),
    ("", "v1", "NamespaceList", 278),
    ("", "v1", "Node", 281),
    ("", "v1", "NodeList", 289),
    ("", "v1", "PersistentVolume", 301),
    ("", "v1", "PersistentVolumeClaim", 302),
    ("", "v1", "PersistentVolumeClaimList", 304),
    ("", "v1", "PersistentVolumeList", 309),
    ("", "v1", "Pod", 313),
    ("", "v1", "PodList", 321),
    ("", "v1", "PodTemplate", 330),
    ("", "v1", "PodTemplateList", 331),
    ("", "v1", "ReplicationController", 341),
    ("", "v1", "ReplicationControllerList", 343),
    ("", "v1", "ResourceQuota", 349),
    ("", "v1", "ResourceQuotaList", 350),
    ("", "v1", "Secret", 361),
    ("", "v1", "SecretList", 364),
    ("", "v1", "Service", 369),
    ("", "v1", "ServiceAccount", 370),
    ("", "v1", "ServiceAccountList", 371),
    ("", "v1", "ServiceList", 373),
    ("", "v1", "Status", 693),
    ("", "v1", "WatchEvent", 697),
    ("admission.k8s.io", "v1", "DeleteOptions", 679),
    ("admission.k8s.io", "v1", "WatchEvent", 697),
    ("admission.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("admission.k8s.io", "v1beta1", "WatchEvent", 697),
    ("admissionregistration.k8s.io", "v1", "DeleteOptions", 679),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", 5),
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfigurationList", 6),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy", 13),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding", 14),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBindingList", 15),
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyList", 17),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration", 21),
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfigurationList", 22),
    ("admissionregistration.k8s.io", "v1", "WatchEvent", 697),
    ("admissionregistration.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicy", 30),
    ("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyBinding", 31),
    ("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyBindingList", 32),
    ("admissionregistration.k8s.io", "v1alpha1", "MutatingAdmissionPolicyList", 34),
    ("admissionregistration.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("admissionregistration.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicy", 49),
    ("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyBinding", 50),
    ("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyBindingList", 51),
    ("admissionregistration.k8s.io", "v1beta1", "ValidatingAdmissionPolicyList", 53),
    ("admissionregistration.k8s.io", "v1beta1", "WatchEvent", 697),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", 650),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinitionList", 652),
    ("apiextensions.k8s.io", "v1", "DeleteOptions", 679),
    ("apiextensions.k8s.io", "v1", "WatchEvent", 697),
    ("apiextensions.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("apiextensions.k8s.io", "v1beta1", "WatchEvent", 697),
    ("apiregistration.k8s.io", "v1", "APIService", 701),
    ("apiregistration.k8s.io", "v1", "APIServiceList", 703),
    ("apiregistration.k8s.io", "v1", "DeleteOptions", 679),
    ("apiregistration.k8s.io", "v1", "WatchEvent", 697),
    ("apiregistration.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("apiregistration.k8s.io", "v1beta1", "WatchEvent", 697),
    ("apps", "v1", "ControllerRevision", 64),
    ("apps", "v1", "ControllerRevisionList", 65),
    ("apps", "v1", "DaemonSet", 66),
    ("apps", "v1", "DaemonSetList", 68),
    ("apps", "v1", "DeleteOptions", 679),
    ("apps", "v1", "Deployment", 72),
    ("apps", "v1", "DeploymentList", 74),
    ("apps", "v1", "ReplicaSet", 78),
    ("apps", "v1", "ReplicaSetList", 80),
    ("apps", "v1", "StatefulSet", 86),
    ("apps", "v1", "StatefulSetList", 88),
    ("apps", "v1", "WatchEvent", 697),
    ("apps", "v1beta1", "DeleteOptions", 679),
    ("apps", "v1beta1", "WatchEvent", 697),
    ("apps", "v1beta2", "DeleteOptions", 679),
    ("apps", "v1beta2", "WatchEvent", 697),
    ("authentication.k8s.io", "v1", "DeleteOptions", 679),
    ("authentication.k8s.io", "v1", "SelfSubjectReview", 95),
    ("authentication.k8s.io", "v1", "TokenRequest", 97),
    ("authentication.k8s.io", "v1", "TokenReview", 100),
    ("authentication.k8s.io", "v1", "WatchEvent", 697),
    ("authentication.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("authentication.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("authentication.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("authentication.k8s.io", "v1beta1", "WatchEvent", 697),
    ("authorization.k8s.io", "v1", "DeleteOptions", 679),
    ("authorization.k8s.io", "v1", "LocalSubjectAccessReview", 106),
    ("authorization.k8s.io", "v1", "SelfSubjectAccessReview", 111),
    ("authorization.k8s.io", "v1", "SelfSubjectRulesReview", 113),
    ("authorization.k8s.io", "v1", "SubjectAccessReview", 115),
    ("authorization.k8s.io", "v1", "WatchEvent", 697),
    ("authorization.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("authorization.k8s.io", "v1beta1", "WatchEvent", 697),
    ("autoscaling", "v1", "DeleteOptions", 679),
    ("autoscaling", "v1", "HorizontalPodAutoscaler", 120),
    ("autoscaling", "v1", "HorizontalPodAutoscalerList", 121),
    ("autoscaling", "v1", "Scale", 124),
    ("autoscaling", "v1", "WatchEvent", 697),
    ("autoscaling", "v2", "DeleteOptions", 679),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", 134),
    ("autoscaling", "v2", "HorizontalPodAutoscalerList", 137),
    ("autoscaling", "v2", "WatchEvent", 697),
    ("autoscaling", "v2beta1", "DeleteOptions", 679),
    ("autoscaling", "v2beta1", "WatchEvent", 697),
    ("autoscaling", "v2beta2", "DeleteOptions", 679),
    ("autoscaling", "v2beta2", "WatchEvent", 697),
    ("batch", "v1", "CronJob", 151),
    ("batch", "v1", "CronJobList", 152),
    ("batch", "v1", "DeleteOptions", 679),
    ("batch", "v1", "Job", 155),
    ("batch", "v1", "JobList", 157),
    ("batch", "v1", "WatchEvent", 697),
    ("batch", "v1beta1", "DeleteOptions", 679),
    ("batch", "v1beta1", "WatchEvent", 697),
    ("certificates.k8s.io", "v1", "CertificateSigningRequest", 168),
    ("certificates.k8s.io", "v1", "CertificateSigningRequestList", 170),
    ("certificates.k8s.io", "v1", "DeleteOptions", 679),
    ("certificates.k8s.io", "v1", "WatchEvent", 697),
    ("certificates.k8s.io", "v1alpha1", "ClusterTrustBundle", 173),
    ("certificates.k8s.io", "v1alpha1", "ClusterTrustBundleList", 174),
    ("certificates.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("certificates.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("certificates.k8s.io", "v1beta1", "ClusterTrustBundle", 176),
    ("certificates.k8s.io", "v1beta1", "ClusterTrustBundleList", 177),
    ("certificates.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("certificates.k8s.io", "v1beta1", "WatchEvent", 697),
    ("coordination.k8s.io", "v1", "DeleteOptions", 679),
    ("coordination.k8s.io", "v1", "Lease", 179),
    ("coordination.k8s.io", "v1", "LeaseList", 180),
    ("coordination.k8s.io", "v1", "WatchEvent", 697),
    ("coordination.k8s.io", "v1alpha2", "DeleteOptions", 679),
    ("coordination.k8s.io", "v1alpha2", "LeaseCandidate", 182),
    ("coordination.k8s.io", "v1alpha2", "LeaseCandidateList", 183),
    ("coordination.k8s.io", "v1alpha2", "WatchEvent", 697),
    ("coordination.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("coordination.k8s.io", "v1beta1", "LeaseCandidate", 185),
    ("coordination.k8s.io", "v1beta1", "LeaseCandidateList", 186),
    ("coordination.k8s.io", "v1beta1", "WatchEvent", 697),
    ("discovery.k8s.io", "v1", "DeleteOptions", 679),
    ("discovery.k8s.io", "v1", "EndpointSlice", 404),
    ("discovery.k8s.io", "v1", "EndpointSliceList", 405),
    ("discovery.k8s.io", "v1", "WatchEvent", 697),
    ("discovery.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("discovery.k8s.io", "v1beta1", "WatchEvent", 697),
    ("events.k8s.io", "v1", "DeleteOptions", 679),
    ("events.k8s.io", "v1", "Event", 408),
    ("events.k8s.io", "v1", "EventList", 409),
    ("events.k8s.io", "v1", "WatchEvent", 697),
    ("events.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("events.k8s.io", "v1beta1", "WatchEvent", 697),
    ("extensions", "v1beta1", "DeleteOptions", 679),
    ("extensions", "v1beta1", "WatchEvent", 697),
    ("flowcontrol.apiserver.k8s.io", "v1", "DeleteOptions", 679),
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema", 413),
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchemaList", 415),
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration", 423),
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfigurationList", 425),
    ("flowcontrol.apiserver.k8s.io", "v1", "WatchEvent", 697),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("flowcontrol.apiserver.k8s.io", "v1beta1", "WatchEvent", 697),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", "DeleteOptions", 679),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", "WatchEvent", 697),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "DeleteOptions", 679),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "WatchEvent", 697),
    ("imagepolicy.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("imagepolicy.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("internal.apiserver.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("internal.apiserver.k8s.io", "v1alpha1", "StorageVersion", 59),
    ("internal.apiserver.k8s.io", "v1alpha1", "StorageVersionList", 61),
    ("internal.apiserver.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("networking.k8s.io", "v1", "DeleteOptions", 679),
    ("networking.k8s.io", "v1", "IPAddress", 436),
    ("networking.k8s.io", "v1", "IPAddressList", 437),
    ("networking.k8s.io", "v1", "Ingress", 440),
    ("networking.k8s.io", "v1", "IngressClass", 442),
    ("networking.k8s.io", "v1", "IngressClassList", 443),
    ("networking.k8s.io", "v1", "IngressList", 446),
    ("networking.k8s.io", "v1", "NetworkPolicy", 455),
    ("networking.k8s.io", "v1", "NetworkPolicyList", 458),
    ("networking.k8s.io", "v1", "ServiceCIDR", 464),
    ("networking.k8s.io", "v1", "ServiceCIDRList", 465),
    ("networking.k8s.io", "v1", "WatchEvent", 697),
    ("networking.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("networking.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("networking.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("networking.k8s.io", "v1beta1", "IPAddress", 468),
    ("networking.k8s.io", "v1beta1", "IPAddressList", 469),
    ("networking.k8s.io", "v1beta1", "ServiceCIDR", 472),
    ("networking.k8s.io", "v1beta1", "ServiceCIDRList", 473),
    ("networking.k8s.io", "v1beta1", "WatchEvent", 697),
    ("node.k8s.io", "v1", "DeleteOptions", 679),
    ("node.k8s.io", "v1", "RuntimeClass", 477),
    ("node.k8s.io", "v1", "RuntimeClassList", 478),
    ("node.k8s.io", "v1", "WatchEvent", 697),
    ("node.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("node.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("node.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("node.k8s.io", "v1beta1", "WatchEvent", 697),
    ("policy", "v1", "DeleteOptions", 679),
    ("policy", "v1", "Eviction", 480),
    ("policy", "v1", "PodDisruptionBudget", 481),
    ("policy", "v1", "PodDisruptionBudgetList", 482),
    ("policy", "v1", "WatchEvent", 697),
    ("policy", "v1beta1", "DeleteOptions", 679),
    ("policy", "v1beta1", "WatchEvent", 697),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole", 486),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", 487),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBindingList", 488),
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleList", 489),
    ("rbac.authorization.k8s.io", "v1", "DeleteOptions", 679),
    ("rbac.authorization.k8s.io", "v1", "Role", 491),
    ("rbac.authorization.k8s.io", "v1", "RoleBinding", 492),
    ("rbac.authorization.k8s.io", "v1", "RoleBindingList", 493),
    ("rbac.authorization.k8s.io", "v1", "RoleList", 494),
    ("rbac.authorization.k8s.io", "v1", "WatchEvent", 697),
    ("rbac.authorization.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("rbac.authorization.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("rbac.authorization.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("rbac.authorization.k8s.io", "v1beta1", "WatchEvent", 697),
    ("resource.k8s.io", "v1alpha3", "DeleteOptions", 679),
    ("resource.k8s.io", "v1alpha3", "DeviceClass", 509),
    ("resource.k8s.io", "v1alpha3", "DeviceClassList", 511),
    ("resource.k8s.io", "v1alpha3", "DeviceTaintRule", 520),
    ("resource.k8s.io", "v1alpha3", "DeviceTaintRuleList", 521),
    ("resource.k8s.io", "v1alpha3", "ResourceClaim", 527),
    ("resource.k8s.io", "v1alpha3", "ResourceClaimList", 529),
    ("resource.k8s.io", "v1alpha3", "ResourceClaimTemplate", 532),
    ("resource.k8s.io", "v1alpha3", "ResourceClaimTemplateList", 533),
    ("resource.k8s.io", "v1alpha3", "ResourceSlice", 536),
    ("resource.k8s.io", "v1alpha3", "ResourceSliceList", 537),
    ("resource.k8s.io", "v1alpha3", "WatchEvent", 697),
    ("resource.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("resource.k8s.io", "v1beta1", "DeviceClass", 552),
    ("resource.k8s.io", "v1beta1", "DeviceClassList", 554),
    ("resource.k8s.io", "v1beta1", "ResourceClaim", 566),
    ("resource.k8s.io", "v1beta1", "ResourceClaimList", 568),
    ("resource.k8s.io", "v1beta1", "ResourceClaimTemplate", 571),
    ("resource.k8s.io", "v1beta1", "ResourceClaimTemplateList", 572),
    ("resource.k8s.io", "v1beta1", "ResourceSlice", 575),
    ("resource.k8s.io", "v1beta1", "ResourceSliceList", 576),
    ("resource.k8s.io", "v1beta1", "WatchEvent", 697),
    ("resource.k8s.io", "v1beta2", "DeleteOptions", 679),
    ("resource.k8s.io", "v1beta2", "DeviceClass", 590),
    ("resource.k8s.io", "v1beta2", "DeviceClassList", 592),
    ("resource.k8s.io", "v1beta2", "ResourceClaim", 605),
    ("resource.k8s.io", "v1beta2", "ResourceClaimList", 607),
    ("resource.k8s.io", "v1beta2", "ResourceClaimTemplate", 610),
    ("resource.k8s.io", "v1beta2", "ResourceClaimTemplateList", 611),
    ("resource.k8s.io", "v1beta2", "ResourceSlice", 614),
    ("resource.k8s.io", "v1beta2", "ResourceSliceList", 615),
    ("resource.k8s.io", "v1beta2", "WatchEvent", 697),
    ("scheduling.k8s.io", "v1", "DeleteOptions", 679),
    ("scheduling.k8s.io", "v1", "PriorityClass", 617),
    ("scheduling.k8s.io", "v1", "PriorityClassList", 618),
    ("scheduling.k8s.io", "v1", "WatchEvent", 697),
    ("scheduling.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("scheduling.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("scheduling.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("scheduling.k8s.io", "v1beta1", "WatchEvent", 697),
    ("storage.k8s.io", "v1", "CSIDriver", 619),
    ("storage.k8s.io", "v1", "CSIDriverList", 620),
    ("storage.k8s.io", "v1", "CSINode", 622),
    ("storage.k8s.io", "v1", "CSINodeList", 624),
    ("storage.k8s.io", "v1", "CSIStorageCapacity", 626),
    ("storage.k8s.io", "v1", "CSIStorageCapacityList", 627),
    ("storage.k8s.io", "v1", "DeleteOptions", 679),
    ("storage.k8s.io", "v1", "StorageClass", 628),
    ("storage.k8s.io", "v1", "StorageClassList", 629),
    ("storage.k8s.io", "v1", "VolumeAttachment", 631),
    ("storage.k8s.io", "v1", "VolumeAttachmentList", 632),
    ("storage.k8s.io", "v1", "WatchEvent", 697),
    ("storage.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("storage.k8s.io", "v1alpha1", "VolumeAttributesClass", 638),
    ("storage.k8s.io", "v1alpha1", "VolumeAttributesClassList", 639),
    ("storage.k8s.io", "v1alpha1", "WatchEvent", 697),
    ("storage.k8s.io", "v1beta1", "DeleteOptions", 679),
    ("storage.k8s.io", "v1beta1", "VolumeAttributesClass", 640),
    ("storage.k8s.io", "v1beta1", "VolumeAttributesClassList", 641),
    ("storage.k8s.io", "v1beta1", "WatchEvent", 697),
    ("storagemigration.k8s.io", "v1alpha1", "DeleteOptions", 679),
    ("storagemigration.k8s.io", "v1alpha1", "StorageVersionMigration", 644),
    ("storagemigration.k8s.io", "v1alpha1", "StorageVersionMigrationList", 645),
    ("storagemigration.k8s.io", "v1alpha1", "WatchEvent", 697),
];

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
