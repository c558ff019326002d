//! The apiextensions.k8s.io group's strategy: CustomResourceDefinitions (defaults, the
//! initial status, and `ValidateCustomResourceDefinition`: the definition's shape, its
//! versions, schemas (see `schema`), conversion and stored versions).

mod schema;

use crate::registry::object::Part;
use crate::registry::strategy::{default_reset_fields, ResetFields};
use serde_json::{json, Map, Value};

use crate::registry::builtin::checks::str_at as text;

use crate::meta::field_error::{go_is_print, FieldError};
use crate::meta::validation::{is_dns1035_label, is_dns1123_subdomain};
use crate::registry::builtin::admissionregistration::webhook::{
    is_absolute_url, review_version_items, validate_service, validate_url,
};
use crate::registry::object::meta;
use crate::registry::strategy::{obj_entry, Strategy};

pub struct CustomResourceDefinitions;

/// The finalizer under which the definition's objects are deleted before it goes.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// Sets (or replaces) the condition `ty` of a definition's status, keeping its transition time
/// when the status does not change (kube's `SetCRDCondition`).
pub fn set_condition(
    crd: &mut Value,
    ty: &str,
    status: bool,
    reason: &str,
    message: &str,
    now: &str,
) {
    let status_text = if status { "True" } else { "False" };
    let conditions = obj_entry(crd, "status")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let mut next = json!({"type": ty, "status": status_text, "lastTransitionTime": now,
                          "reason": reason, "message": message});
    match list.iter_mut().find(|c| c["type"] == ty) {
        Some(c) => {
            if c["status"] == status_text {
                next["lastTransitionTime"] = c["lastTransitionTime"].clone();
            }
            *c = next;
        }
        None => list.push(next),
    }
}

impl Strategy for CustomResourceDefinitions {
    /// kube's status strategy here resets the metadata too.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        match part {
            Part::Status => &[&["metadata"], &["spec"]],
            _ => default_reset_fields(part, has_status),
        }
    }

    fn allow_unconditional_update(&self) -> bool {
        false
    }

    fn core_object_meta(&self) -> bool {
        false
    }

    /// kube's CRD REST Delete: the cleanup finalizer and `Terminating`, so the definition
    /// stays until the finalizing controller has deleted its objects.
    fn prepare_for_delete(&self, obj: &mut Value, now: &str) {
        let m = crate::registry::object::meta_mut(obj);
        let fins = m.entry("finalizers").or_insert_with(|| json!([]));
        if !fins.is_array() {
            *fins = json!([]);
        }
        if let Some(list) = fins.as_array_mut() {
            if !list.iter().any(|f| f == CLEANUP_FINALIZER) {
                list.push(json!(CLEANUP_FINALIZER));
            }
        }
        set_condition(
            obj,
            "Terminating",
            true,
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            now,
        );
    }

    /// `SetDefaults_CustomResourceDefinition(Spec)`.
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        if !spec.get("conversion").is_some_and(Value::is_object) {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
        if let Some(svc) = spec
            .get_mut("conversion")
            .and_then(|c| c.pointer_mut("/webhook/clientConfig/service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert(json!(443));
        }
        let names = spec.entry("names").or_insert_with(|| json!({}));
        if let Some(n) = names.as_object_mut() {
            let kind = n
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if n.get("singular")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                n.insert("singular".into(), json!(kind.to_lowercase()));
            }
            if n.get("listKind")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
                && !kind.is_empty()
            {
                n.insert("listKind".into(), json!(format!("{kind}List")));
            }
        }
    }

    /// PrepareForCreate: the status starts empty but for the storage version.
    fn initialize(&self, obj: &mut Value) {
        let stored: Vec<Value> = versions(obj)
            .iter()
            .find(|v| v.get("storage") == Some(&json!(true)))
            .and_then(|v| v.get("name").cloned())
            .into_iter()
            .collect();
        // A nil slice (no storage version) encodes as null, as Go's does.
        let stored = if stored.is_empty() {
            Value::Null
        } else {
            Value::Array(stored)
        };
        obj["status"] = json!({
            "acceptedNames": {"plural": "", "kind": ""},
            "storedVersions": stored,
        });
    }

    /// PrepareForUpdate beyond the kept status: a new storage version joins
    /// `status.storedVersions`.
    fn prepare_for_update(&self, new: &mut Value, _old: &Value) {
        let Some(storage) = versions(new)
            .iter()
            .find(|v| v.get("storage") == Some(&json!(true)))
            .and_then(|v| v.get("name").cloned())
        else {
            return;
        };
        let stored = obj_entry(new, "status")
            .entry("storedVersions")
            .or_insert_with(|| json!([]));
        if !stored.is_array() {
            *stored = json!([]);
        }
        if let Some(list) = stored.as_array_mut() {
            if !list.contains(&storage) {
                list.push(storage);
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        validate(obj, None)
    }

    /// `ValidateCustomResourceDefinitionUpdate`: as on create, plus the immutable group and
    /// plural (and, once established, scope and kind).
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        validate(new, Some(old))
    }

    /// `ValidateUpdateCustomResourceDefinitionStatus`: the accepted names' formats (the
    /// stored versions are checked by updates of the definition, not of its status).
    fn validate_status_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let names = new.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
        validate_names(names, "status.acceptedNames", &mut errs);
        errs
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}

fn versions(obj: &Value) -> &[Value] {
    obj.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Go's `%#v` of the internal versions slice (only nil and empty can be shown exactly).
fn go_versions(obj: &Value) -> String {
    match obj.pointer("/spec/versions").and_then(Value::as_array) {
        None => "[]apiextensions.CustomResourceDefinitionVersion(nil)".into(),
        Some(a) if a.is_empty() => "[]apiextensions.CustomResourceDefinitionVersion{}".into(),
        Some(_) => "[]apiextensions.CustomResourceDefinitionVersion{...}".into(),
    }
}

/// `ValidateCustomResourceDefinition`, in upstream's order, for what Rafter checks of it.
fn validate(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let group = text(spec, "/group");
    let plural = text(spec, "/names/plural");
    let name = meta(obj).get("name").and_then(Value::as_str).unwrap_or("");
    // Only a create checks the name (an update runs ValidateObjectMetaUpdate instead).
    if old.is_none() && !name.is_empty() && name != format!("{plural}.{group}") {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }
    if group.is_empty() {
        errs.push(FieldError::required("spec.group", ""));
    } else {
        let msgs = is_dns1123_subdomain(group);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid("spec.group", group, msgs.join(",")));
        } else if group.split('.').count() < 2 {
            errs.push(FieldError::invalid(
                "spec.group",
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    match text(spec, "/scope") {
        "" => errs.push(FieldError::required("spec.scope", "")),
        "Cluster" | "Namespaced" => {}
        s => errs.push(FieldError::not_supported(
            "spec.scope",
            s,
            &["Cluster", "Namespaced"],
        )),
    }
    let vs = versions(obj);
    let top_schema = spec.pointer("/validation/openAPIV3Schema").is_some();
    for (i, v) in vs.iter().enumerate() {
        if !top_schema && v.pointer("/schema/openAPIV3Schema").is_none() {
            errs.push(FieldError::required(
                format!("spec.versions[{i}].schema.openAPIV3Schema"),
                "schemas are required",
            ));
        }
    }
    // As kube's conversion to the internal type does, identical per-version schemas are
    // validated once, as the top-level `spec.validation`.
    let schema_of = |v: &Value| v.get("schema").filter(|s| !s.is_null()).cloned();
    let shared_schema = vs
        .first()
        .map(schema_of)
        .filter(|first| vs.iter().all(|v| schema_of(v) == *first));
    let status_of = |v: &Value| {
        v.pointer("/subresources/status")
            .is_some_and(|s| !s.is_null())
    };
    let subresources_of = |v: &Value| v.get("subresources").filter(|s| !s.is_null()).cloned();
    let shared_subresources = vs
        .first()
        .map(subresources_of)
        .filter(|first| vs.iter().all(|v| subresources_of(v) == *first));
    // Semantic equality: an empty list is no list.
    let columns_of = |v: &Value| {
        v.get("additionalPrinterColumns")
            .filter(|c| !c.is_null() && c.as_array().is_none_or(|a| !a.is_empty()))
            .cloned()
    };
    let shared_columns = vs
        .first()
        .map(columns_of)
        .filter(|first| vs.iter().all(|v| columns_of(v) == *first));
    let selectable_of = |v: &Value| {
        v.get("selectableFields")
            .filter(|c| !c.is_null() && c.as_array().is_none_or(|a| !a.is_empty()))
            .cloned()
    };
    let shared_selectable = vs
        .first()
        .map(selectable_of)
        .filter(|first| vs.iter().all(|v| selectable_of(v) == *first));
    let mut seen = std::collections::BTreeSet::new();
    let mut unique = true;
    for (i, v) in vs.iter().enumerate() {
        let n = text(v, "/name");
        let msgs = is_dns1035_label(n);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("spec.versions[{i}].name"),
                n,
                msgs.join(","),
            ));
        }
        unique &= seen.insert(n);
        validate_deprecation_warning(v, i, &mut errs);
        if shared_schema.is_none() {
            if let Some(s) = v.pointer("/schema/openAPIV3Schema") {
                errs.extend(schema::validate(
                    s,
                    status_of(v),
                    &format!("spec.versions[{i}].schema"),
                ));
            }
        }
        if shared_subresources.is_none() {
            if let Some(s) = v.get("subresources") {
                validate_subresources(s, &format!("spec.versions[{i}].subresources"), &mut errs);
            }
        }
        if shared_columns.is_none() {
            if let Some(c) = v.get("additionalPrinterColumns") {
                validate_columns(c, &format!("spec.versions[{i}]"), &mut errs);
            }
        }
        if shared_selectable.is_none() {
            if let Some(f) = selectable_of(v) {
                let schema = v.pointer("/schema/openAPIV3Schema");
                validate_selectable(&f, schema, &format!("spec.versions[{i}]"), &mut errs);
            }
        }
    }
    if !unique {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(obj),
            "must contain unique version names",
        ));
    }
    let storage = vs
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .count();
    if storage != 1 {
        errs.push(FieldError::invalid_rendered(
            "spec.versions",
            &go_versions(obj),
            "must have exactly one version marked as storage version",
        ));
    }
    // The internal `spec.version` is the first version's name.
    if let Some(first) = vs
        .first()
        .map(|v| text(v, "/name"))
        .filter(|n| !n.is_empty())
    {
        let msgs = is_dns1035_label(first);
        if !msgs.is_empty() {
            errs.push(FieldError::invalid("spec.version", first, msgs.join(",")));
        }
    }
    let names = spec
        .get("names")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    for f in ["plural", "singular", "kind", "listKind"] {
        if text(&names, &format!("/{f}")).is_empty() {
            errs.push(FieldError::required(format!("spec.names.{f}"), ""));
        }
    }
    validate_names(&names, "spec.names", &mut errs);
    if let Some(s) = shared_schema
        .as_ref()
        .and_then(Option::as_ref)
        .and_then(|s| s.get("openAPIV3Schema"))
    {
        errs.extend(schema::validate(
            s,
            vs.iter().any(status_of),
            "spec.validation",
        ));
    }
    if let Some(s) = shared_subresources.as_ref().and_then(Option::as_ref) {
        validate_subresources(s, "spec.subresources", &mut errs);
    }
    if let Some(c) = shared_columns.as_ref().and_then(Option::as_ref) {
        validate_columns(c, "spec", &mut errs);
    }
    if let Some(f) = shared_selectable.as_ref().and_then(Option::as_ref) {
        let schema = vs
            .first()
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"));
        validate_selectable(f, schema, "spec", &mut errs);
    }
    validate_conversion(spec, &mut errs);
    if let Some(old) = old {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        let mut fixed = vec![
            ("/group", "spec.group"),
            ("/names/plural", "spec.names.plural"),
        ];
        if crate::registry::custom::established(old) {
            fixed.splice(
                0..0,
                [("/scope", "spec.scope"), ("/names/kind", "spec.names.kind")],
            );
        }
        for (ptr, path) in fixed {
            let v = text(spec, ptr);
            if v != text(old_spec, ptr) {
                errs.push(FieldError::invalid(path, v, "field is immutable"));
            }
        }
    }
    validate_stored_versions(obj, vs, &mut errs);
    validate_api_approval(obj, old, group, &mut errs);
    if spec.get("preserveUnknownFields") == Some(&json!(true)) {
        errs.push(FieldError::invalid(
            "spec.preserveUnknownFields",
            true,
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errs
}

/// `validateDeprecationWarning` for version `i`.
fn validate_deprecation_warning(v: &Value, i: usize, errs: &mut Vec<FieldError>) {
    let Some(w) = v.get("deprecationWarning").and_then(Value::as_str) else {
        return;
    };
    let path = format!("spec.versions[{i}].deprecationWarning");
    if v.get("deprecated") != Some(&json!(true)) {
        errs.push(FieldError::invalid(
            path,
            w,
            "can only be set for deprecated versions",
        ));
        return;
    }
    if w.len() > 256 {
        errs.push(FieldError::invalid(
            &path,
            w,
            "must be <= 256 characters long",
        ));
    }
    if w.is_empty() {
        errs.push(FieldError::invalid(&path, w, "must not be an empty string"));
    }
    // Upstream tests printability first, so its "control character" branch never fires.
    if let Some((at, _)) = w.char_indices().find(|(_, c)| !go_is_print(*c)) {
        errs.push(FieldError::invalid(
            &path,
            w,
            format!("must only contain printable UTF-8 characters; non-printable character found at index {at}"),
        ));
    }
}

/// `apihelpers.GetAPIApprovalState`: 0 invalid, 1 approved, 2 bypassed, 3 missing.
fn approval_state(obj: &Value) -> u8 {
    let a = meta(obj)
        .get("annotations")
        .and_then(|a| a.get(APPROVAL))
        .and_then(Value::as_str)
        .unwrap_or("");
    if a.is_empty() {
        3
    } else if a.starts_with("unapproved") {
        2
    } else if is_absolute_url(a) {
        1
    } else {
        0
    }
}

const APPROVAL: &str = "api-approved.kubernetes.io";

/// `validateAPIApproval`: definitions in the k8s.io and kubernetes.io groups need the
/// approval annotation (an update that leaves its state alone passes).
fn validate_api_approval(
    obj: &Value,
    old: Option<&Value>,
    group: &str,
    errs: &mut Vec<FieldError>,
) {
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")));
    let state = approval_state(obj);
    if !protected || old.is_some_and(|o| approval_state(o) == state) {
        return;
    }
    let path = format!("metadata.annotations[{APPROVAL}]");
    let see = "see https://github.com/kubernetes/enhancements/pull/1111";
    match state {
        3 => errs.push(FieldError::required(
            path,
            format!("protected groups must have approval annotation \"{APPROVAL}\", {see}"),
        )),
        0 => {
            let a = meta(obj)
                .get("annotations")
                .and_then(|a| a.get(APPROVAL))
                .and_then(Value::as_str)
                .unwrap_or("");
            errs.push(FieldError::invalid(
                path,
                a,
                format!("protected groups must have approval annotation \"{APPROVAL}\" with either a URL or a reason starting with \"unapproved\", {see}"),
            ));
        }
        _ => {}
    }
}

/// `validateSimpleJSONPath`; false when it refused `s`.
fn validate_simple_json_path(s: &str, path: &str, errs: &mut Vec<FieldError>) -> bool {
    let detail = if s.is_empty() {
        "must not be empty"
    } else if !s.starts_with('.') {
        "must be a simple json path starting with ."
    } else {
        return true;
    };
    errs.push(FieldError::invalid(path, s, detail));
    false
}

/// `ValidateCustomResourceDefinitionSubresources`: the scale subresource's paths.
fn validate_subresources(sub: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let Some(scale) = sub.get("scale").filter(|s| !s.is_null()) else {
        return;
    };
    for (f, prefix, under) in [
        ("specReplicasPath", ".spec.", ".spec"),
        ("statusReplicasPath", ".status.", ".status"),
    ] {
        let p = format!("{path}.scale.{f}");
        let v = text(scale, &format!("/{f}"));
        if v.is_empty() {
            errs.push(FieldError::required(p, ""));
        } else if validate_simple_json_path(v, &p, errs) && !v.starts_with(prefix) {
            errs.push(FieldError::invalid(
                p,
                v,
                format!("should be a json path under {under}"),
            ));
        }
    }
    let sel = text(scale, "/labelSelectorPath");
    let p = format!("{path}.scale.labelSelectorPath");
    if !sel.is_empty()
        && validate_simple_json_path(sel, &p, errs)
        && !sel.starts_with(".spec.")
        && !sel.starts_with(".status.")
    {
        errs.push(FieldError::invalid(
            p,
            sel,
            "should be a json path under either .spec or .status",
        ));
    }
}

/// `ValidateCustomResourceColumnDefinition` for each of `additionalPrinterColumns` under
/// `parent` (the internal type names the path field `JSONPath`).
fn validate_columns(cols: &Value, parent: &str, errs: &mut Vec<FieldError>) {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    for (i, c) in cols.as_array().into_iter().flatten().enumerate() {
        let p = format!("{parent}.additionalPrinterColumns[{i}]");
        if text(c, "/name").is_empty() {
            errs.push(FieldError::required(format!("{p}.name"), ""));
        }
        let ty = text(c, "/type");
        let types_msg = format!("must be one of {TYPES}");
        if ty.is_empty() {
            errs.push(FieldError::required(format!("{p}.type"), types_msg));
        } else if !TYPES.split(',').any(|t| t == ty) {
            errs.push(FieldError::invalid(format!("{p}.type"), ty, types_msg));
        }
        let format = text(c, "/format");
        if !format.is_empty() && !FORMATS.split(',').any(|f| f == format) {
            errs.push(FieldError::invalid(
                format!("{p}.format"),
                format,
                format!("must be one of {FORMATS}"),
            ));
        }
        let jp = text(c, "/jsonPath");
        if jp.is_empty() {
            errs.push(FieldError::required(format!("{p}.JSONPath"), ""));
        } else {
            validate_simple_json_path(jp, &format!("{p}.JSONPath"), errs);
        }
    }
}

/// At most this many selectable fields per version.
const MAX_SELECTABLE_FIELDS: usize = 8;

/// `ValidateCustomResourceSelectableFields` for the `selectableFields` under `parent`, with
/// the version's schema (`None`: the version has none).
fn validate_selectable(
    fields: &Value,
    schema: Option<&Value>,
    parent: &str,
    errs: &mut Vec<FieldError>,
) {
    let p = format!("{parent}.selectableFields");
    let Some(schema) = schema.filter(|s| !s.is_null()) else {
        errs.push(FieldError::invalid(
            p,
            "",
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        ));
        return;
    };
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.as_array().into_iter().flatten().enumerate() {
        let at = format!("{p}[{i}].jsonPath");
        let jp = text(f, "/jsonPath");
        if jp.is_empty() {
            errs.push(FieldError::required(at, ""));
            continue;
        }
        let (path, found) = match selectable_path(jp, schema) {
            Ok(x) => x,
            Err(e) => {
                errs.push(FieldError::invalid(
                    at,
                    jp,
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if path.split(['.', '[']).next() == Some("metadata") {
            errs.push(FieldError::invalid(
                &at,
                jp,
                "must not point to fields in metadata",
            ));
        }
        let ty = found.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(ty, "string" | "boolean" | "integer") {
            errs.push(FieldError::invalid(&at, jp, "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."));
        }
        if unique.contains(&path) {
            errs.push(FieldError::duplicate(at, jp));
        } else {
            unique.push(path);
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError::too_many(
            p,
            unique.len() as i64,
            MAX_SELECTABLE_FIELDS as i64,
        ));
    }
}

/// kube's `ValidFieldPath` without array notation: walks `.a.b` through the schema's
/// properties (or `additionalProperties` keys); the field path and the schema found.
fn selectable_path<'a>(jp: &str, schema: &'a Value) -> Result<(String, &'a Value), String> {
    let mut at = schema;
    let mut path = String::new();
    let mut rest = jp;
    while !rest.is_empty() {
        if rest.starts_with('[') {
            return Err("array notation is not allowed".into());
        }
        let Some(after) = rest.strip_prefix('.') else {
            let tok: String = rest.chars().take_while(|c| !".[]".contains(*c)).collect();
            return Err(format!("expected [ or . but got: {tok}"));
        };
        let end = after.find(['.', '[', ']']).unwrap_or(after.len());
        let (tok, tail) = after.split_at(end);
        if tok.is_empty() {
            return Err("unexpected end of JSON path".into());
        }
        if let Some(props) = at.get("properties").and_then(Value::as_object) {
            at = props.get(tok).ok_or("does not refer to a valid field")?;
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(tok);
        } else if let Some(ap) = at.get("additionalProperties").filter(|a| a.is_object()) {
            at = ap;
            path.push_str(&format!("[{}]", crate::meta::field_error::go_quote(tok)));
        } else {
            return Err("does not refer to a valid field".into());
        }
        rest = tail;
    }
    Ok((path, at))
}

/// `validateCustomResourceConversion` over the v1 shape (`webhook.clientConfig` is the
/// internal `webhookClientConfig`, `webhook.conversionReviewVersions` its review versions).
fn validate_conversion(spec: &Value, errs: &mut Vec<FieldError>) {
    let Some(conv) = spec.get("conversion").filter(|c| c.is_object()) else {
        return;
    };
    let strategy = text(conv, "/strategy");
    if strategy != "None" && spec.get("preserveUnknownFields") == Some(&json!(true)) {
        errs.push(FieldError::invalid(
            "spec.conversion.strategy",
            strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    match strategy {
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        "None" | "Webhook" => {}
        s => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            s,
            &["None", "Webhook"],
        )),
    }
    let cc = conv
        .pointer("/webhook/clientConfig")
        .filter(|c| !c.is_null());
    let review: Vec<&str> = conv
        .pointer("/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    const CC: &str = "spec.conversion.webhookClientConfig";
    const RV: &str = "spec.conversion.conversionReviewVersions";
    if strategy != "Webhook" {
        if cc.is_some() {
            errs.push(FieldError::forbidden(
                CC,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review.is_empty() {
            errs.push(FieldError::forbidden(
                RV,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        return;
    }
    match cc {
        None => errs.push(FieldError::required(
            CC,
            "required when strategy is set to Webhook",
        )),
        Some(cc) => {
            let url = cc.get("url").filter(|u| !u.is_null());
            let svc = cc.get("service").filter(|s| !s.is_null());
            match (url, svc) {
                (Some(u), None) => {
                    validate_url(u.as_str().unwrap_or(""), &format!("{CC}.url"), errs)
                }
                (None, Some(s)) => validate_service(s, &format!("{CC}.service"), errs),
                _ => errs.push(FieldError::required(
                    CC,
                    "exactly one of url or service is required",
                )),
            }
        }
    }
    if review.is_empty() {
        errs.push(FieldError::required(RV, ""));
        return;
    }
    if !review_version_items(&review, RV, errs) {
        errs.push(FieldError::invalid(
            RV,
            json!(review),
            "must include at least one of v1, v1beta1",
        ));
    }
}

/// `ValidateCustomResourceDefinitionNames` (beyond the required names of a spec): the
/// formats of the names at `path` (`spec.names` or `status.acceptedNames`).
fn validate_names(names: &Value, path: &str, errs: &mut Vec<FieldError>) {
    for f in ["plural", "singular"] {
        let v = text(&names, &format!("/{f}"));
        let msgs = is_dns1035_label(v);
        if !v.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{f}"),
                v,
                msgs.join(","),
            ));
        }
    }
    for f in ["kind", "listKind"] {
        let v = text(&names, &format!("/{f}"));
        let msgs = is_dns1035_label(&v.to_lowercase());
        if !v.is_empty() && !msgs.is_empty() {
            errs.push(FieldError::invalid(
                format!("{path}.{f}"),
                v,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    msgs.join(",")
                ),
            ));
        }
    }
    let dns1035_list = |list: &str, errs: &mut Vec<FieldError>| {
        for (i, v) in names
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let s = v.as_str().unwrap_or("");
            let msgs = is_dns1035_label(s);
            if !msgs.is_empty() {
                errs.push(FieldError::invalid(
                    format!("{path}.{list}[{i}]"),
                    s,
                    msgs.join(","),
                ));
            }
        }
    };
    dns1035_list("shortNames", errs);
    let kind = text(&names, "/kind");
    if !kind.is_empty() && kind == text(&names, "/listKind") {
        errs.push(FieldError::invalid(
            format!("{path}.listKind"),
            kind,
            "kind and listKind may not be the same",
        ));
    }
    dns1035_list("categories", errs);
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
fn validate_stored_versions(obj: &Value, vs: &[Value], errs: &mut Vec<FieldError>) {
    const PATH: &str = "status.storedVersions";
    let stored = obj
        .pointer("/status/storedVersions")
        .and_then(Value::as_array);
    let Some(stored) = stored.filter(|s| !s.is_empty()) else {
        let rendered = match stored {
            None => "[]string(nil)",
            Some(_) => "[]string{}",
        };
        errs.push(FieldError::invalid_rendered(
            PATH,
            rendered,
            "must have at least one stored version",
        ));
        return;
    };
    let names: Vec<&str> = stored.iter().map(|v| v.as_str().unwrap_or("")).collect();
    // Go keeps the last index of a repeated name.
    let mut left: Vec<(usize, &str)> = Vec::new();
    for (i, n) in names.iter().enumerate() {
        left.retain(|(_, m)| m != n);
        left.push((i, n));
    }
    for v in vs {
        let n = text(v, "/name");
        let listed = left.iter().any(|(_, m)| *m == n);
        if v.get("storage") == Some(&json!(true)) && !listed {
            errs.push(FieldError::invalid(
                PATH,
                json!(names),
                format!("must have the storage version {n}"),
            ));
        }
        left.retain(|(_, m)| *m != n);
    }
    // Upstream walks a map here; Rafter reports in index order.
    left.sort();
    for (i, v) in left {
        errs.push(FieldError::invalid(
            format!("{PATH}[{i}]"),
            v,
            format!("missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::field_error::aggregate_message;

    #[test]
    fn empty_spec_is_refused_as_kube_refuses_it() {
        let s = CustomResourceDefinitions;
        let mut obj = json!({"metadata": {"name": "foo"}, "spec": {}});
        s.default(&mut obj);
        s.initialize(&mut obj);
        let errs = s.validate(&obj);
        assert_eq!(
            aggregate_message(&errs),
            "[metadata.name: Invalid value: \"foo\": must be spec.names.plural+\".\"+spec.group, spec.group: Required value, spec.scope: Required value, spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion(nil): must have exactly one version marked as storage version, spec.names.plural: Required value, spec.names.singular: Required value, spec.names.kind: Required value, spec.names.listKind: Required value, status.storedVersions: Invalid value: []string(nil): must have at least one stored version]"
        );
    }

    #[test]
    fn a_good_definition_passes() {
        let s = CustomResourceDefinitions;
        let mut obj = json!({"metadata": {"name": "crontabs.stable.example.com"}, "spec": {
            "group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        s.default(&mut obj);
        s.initialize(&mut obj);
        assert_eq!(s.validate(&obj), vec![]);
        assert_eq!(obj["spec"]["names"]["singular"], "crontab");
        assert_eq!(obj["spec"]["names"]["listKind"], "CronTabList");
        assert_eq!(obj["status"]["storedVersions"], json!(["v1"]));
    }
}
