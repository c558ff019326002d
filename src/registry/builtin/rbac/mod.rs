//! The rbac.authorization.k8s.io group's strategies: rules of roles, role references and
//! subjects of bindings (kube's `ValidateRole` / `ValidateRoleBinding`, whose paths have no
//! `spec.` prefix), defaults of subjects and role references, and the binding printers.

use serde_json::{json, Value};

use crate::meta::field_error::{go_quote, FieldError};
use crate::meta::validation::{
    is_dns1123_subdomain, validate_label_selector, validate_path_segment_name,
};
use crate::registry::builtin::checks::{list_of as list, str_of as text};
use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

const GROUP: &str = "rbac.authorization.k8s.io";

/// Roles (`namespaced`) and ClusterRoles.
pub struct Roles {
    pub namespaced: bool,
}

impl Strategy for Roles {
    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for (i, rule) in list(obj, "rules").iter().enumerate() {
            let p = format!("rules[{i}]");
            if list(rule, "verbs").is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.verbs"),
                    "verbs must contain at least one value",
                ));
            }
            let urls = list(rule, "nonResourceURLs");
            if !urls.is_empty() {
                let rendered = Value::Array(urls.to_vec());
                if self.namespaced {
                    errs.push(FieldError::invalid(
                        format!("{p}.nonResourceURLs"),
                        rendered.clone(),
                        "namespaced rules cannot apply to non-resource URLs",
                    ));
                }
                if ["apiGroups", "resources", "resourceNames"]
                    .iter()
                    .any(|f| !list(rule, f).is_empty())
                {
                    errs.push(FieldError::invalid(
                        format!("{p}.nonResourceURLs"),
                        rendered,
                        "rules cannot apply to both regular resources and non-resource URLs",
                    ));
                }
                continue;
            }
            if list(rule, "apiGroups").is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.apiGroups"),
                    "resource rules must supply at least one api group",
                ));
            }
            if list(rule, "resources").is_empty() {
                errs.push(FieldError::required(
                    format!("{p}.resources"),
                    "resource rules must supply at least one resource",
                ));
            }
        }
        if let Some(agg) = obj.get("aggregationRule").filter(|v| !v.is_null()) {
            let sels = list(agg, "clusterRoleSelectors");
            if sels.is_empty() {
                errs.push(FieldError::required(
                    "aggregationRule.clusterRoleSelectors",
                    "at least one clusterRoleSelector required if aggregationRule is non-nil",
                ));
            }
            for (i, s) in sels.iter().enumerate() {
                errs.extend(validate_label_selector(
                    s,
                    &format!("aggregationRule.clusterRoleSelectors[{i}]"),
                ));
            }
        }
        errs
    }
}

/// RoleBindings (`namespaced`) and ClusterRoleBindings.
pub struct Bindings {
    pub namespaced: bool,
}

/// Go's `%#v` of an `rbac.RoleRef`.
fn go_role_ref(r: &Value) -> String {
    format!(
        "rbac.RoleRef{{APIGroup:{}, Kind:{}, Name:{}}}",
        go_quote(text(r, "apiGroup")),
        go_quote(text(r, "kind")),
        go_quote(text(r, "name"))
    )
}

impl Strategy for Bindings {
    fn allow_create_on_update(&self) -> bool {
        true
    }

    /// `SetDefaults_RoleBinding` / `SetDefaults_Subject`.
    fn default(&self, obj: &mut Value) {
        if let Some(r) = obj.get_mut("roleRef").and_then(Value::as_object_mut) {
            if r.get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                r.insert("apiGroup".into(), json!(GROUP));
            }
        }
        if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
            for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
                let kind = s
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if s.get("apiGroup")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                    && matches!(kind.as_str(), "User" | "Group")
                {
                    s.insert("apiGroup".into(), json!(GROUP));
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let r = obj.get("roleRef").unwrap_or(&Value::Null);
        let group = text(r, "apiGroup");
        if group != GROUP {
            errs.push(FieldError::not_supported(
                "roleRef.apiGroup",
                group,
                &[GROUP],
            ));
        }
        let kind = text(r, "kind");
        if self.namespaced && !matches!(kind, "Role" | "ClusterRole") {
            errs.push(FieldError::not_supported(
                "roleRef.kind",
                kind,
                &["Role", "ClusterRole"],
            ));
        } else if !self.namespaced && kind != "ClusterRole" {
            errs.push(FieldError::not_supported(
                "roleRef.kind",
                kind,
                &["ClusterRole"],
            ));
        }
        let name = text(r, "name");
        if name.is_empty() {
            errs.push(FieldError::required("roleRef.name", ""));
        } else {
            for m in validate_path_segment_name(name, false) {
                errs.push(FieldError::invalid("roleRef.name", name, m));
            }
        }
        for (i, s) in list(obj, "subjects").iter().enumerate() {
            let p = format!("subjects[{i}]");
            let name = text(s, "name");
            if name.is_empty() {
                errs.push(FieldError::required(format!("{p}.name"), ""));
            }
            let group = text(s, "apiGroup");
            match text(s, "kind") {
                "ServiceAccount" => {
                    if !name.is_empty() {
                        for m in is_dns1123_subdomain(name) {
                            errs.push(FieldError::invalid(format!("{p}.name"), name, m));
                        }
                    }
                    if !group.is_empty() {
                        errs.push(FieldError::not_supported(
                            format!("{p}.apiGroup"),
                            group,
                            &[""],
                        ));
                    }
                    if !self.namespaced && text(s, "namespace").is_empty() {
                        errs.push(FieldError::required(format!("{p}.namespace"), ""));
                    }
                }
                k @ ("User" | "Group") => {
                    if name.is_empty() {
                        errs.push(FieldError::invalid(
                            format!("{p}.name"),
                            "",
                            format!("{} name cannot be empty", k.to_lowercase()),
                        ));
                    }
                    if group != GROUP {
                        errs.push(FieldError::not_supported(
                            format!("{p}.apiGroup"),
                            group,
                            &[GROUP],
                        ));
                    }
                }
                other => errs.push(FieldError::not_supported(
                    format!("{p}.kind"),
                    other,
                    &["ServiceAccount", "User", "Group"],
                )),
            }
        }
        errs
    }

    /// A binding's role reference never changes.
    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate(new);
        let (n, o) = (new.get("roleRef"), old.get("roleRef"));
        if n != o {
            errs.push(FieldError::invalid_rendered(
                "roleRef",
                &go_role_ref(n.unwrap_or(&Value::Null)),
                "cannot change roleRef",
            ));
        }
        errs
    }

    fn printer(&self) -> Printer {
        if self.namespaced {
            printers::RB
        } else {
            printers::CRB
        }
    }
}
