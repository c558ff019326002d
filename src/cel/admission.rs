//! The CEL environment of admission expressions (ValidatingAdmissionPolicy validations,
//! variables, audit annotations and message expressions; webhook and policy match
//! conditions), as kube's `plugin/pkg/cel` declares it: `object` and `oldObject` (dyn, since
//! the matched resource is not known when a policy is written), `request` (the typed
//! admission request), `namespaceObject`, `params` only with a `paramKind`, `authorizer` and
//! `authorizer.requestResource` where allowed, and `variables` with the types of the
//! policy's earlier variables.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::types::{Object, Type};
use super::{compile, Program};

/// Which optional variables an expression sees (kube's `OptionalVariableDeclarations`).
#[derive(Clone, Copy, Default)]
pub struct Declarations {
    pub params: bool,
    pub authorizer: bool,
}

/// What an expression must evaluate to (its `ReturnTypes`).
#[derive(Clone, Copy, PartialEq)]
pub enum Returns {
    Bool,
    String,
    StringOrNull,
    Any,
}

fn object(name: &str, fields: &[(&str, Type)]) -> Type {
    Type::Object(Arc::new(Object {
        name: name.to_string(),
        fields: fields
            .iter()
            .map(|(k, t)| (k.to_string(), t.clone()))
            .collect(),
        min_size: 2,
        max: None,
    }))
}

fn request() -> Type {
    let s = Type::string;
    let gvk = object(
        "kubernetes.GroupVersionKind",
        &[("group", s()), ("version", s()), ("kind", s())],
    );
    let gvr = object(
        "kubernetes.GroupVersionResource",
        &[("group", s()), ("version", s()), ("resource", s())],
    );
    let user = object(
        "kubernetes.UserInfo",
        &[
            ("username", s()),
            ("uid", s()),
            ("groups", Type::list(s())),
            ("extra", Type::map(s(), Type::list(s()))),
        ],
    );
    object(
        "kubernetes.AdmissionRequest",
        &[
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", s()),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", s()),
            ("name", s()),
            ("namespace", s()),
            ("operation", s()),
            ("userInfo", user),
            ("dryRun", Type::Bool),
            ("options", Type::Dyn),
        ],
    )
}

fn namespace() -> Type {
    object(
        "kubernetes.Namespace",
        &[
            ("apiVersion", Type::string()),
            ("kind", Type::string()),
            ("metadata", Type::Dyn),
            ("spec", Type::Dyn),
            ("status", Type::Dyn),
        ],
    )
}

/// The variables of an admission expression; `variables` are the policy's variables
/// compiled so far (name and result type), declared only when the policy has some.
pub fn env(d: Declarations, variables: Option<&[(String, Type)]>) -> BTreeMap<String, Type> {
    let mut vars = BTreeMap::new();
    vars.insert("object".to_string(), Type::Dyn);
    vars.insert("oldObject".to_string(), Type::Dyn);
    vars.insert("request".to_string(), request());
    vars.insert("namespaceObject".to_string(), namespace());
    if d.params {
        vars.insert("params".to_string(), Type::Dyn);
    }
    if d.authorizer {
        vars.insert(
            "authorizer".to_string(),
            Type::Opaque("kubernetes.authorization.Authorizer"),
        );
    }
    if let Some(vs) = variables {
        let fields: Vec<(&str, Type)> = vs.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        vars.insert(
            "variables".to_string(),
            object("kubernetes.variables", &fields),
        );
    }
    vars
}

/// kube's `CompileCELExpression`: the program, or the error detail (`compilation failed:
/// ...`, `must evaluate to bool`).
pub fn compile_expression(
    src: &str,
    returns: Returns,
    vars: &BTreeMap<String, Type>,
) -> Result<Program, String> {
    let p = compile(src, vars).map_err(|e| format!("compilation failed: {e}"))?;
    let ok = match returns {
        Returns::Bool => matches!(p.ty, Type::Bool),
        Returns::String => matches!(p.ty, Type::String { .. }),
        Returns::StringOrNull => matches!(p.ty, Type::String { .. } | Type::Null),
        Returns::Any => true,
    };
    if ok {
        return Ok(p);
    }
    Err(match returns {
        Returns::Bool => "must evaluate to bool".into(),
        Returns::String => "must evaluate to string".into(),
        Returns::StringOrNull => "must evaluate to one of [string null_type]".into(),
        Returns::Any => unreachable!(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_variables() {
        let d = Declarations {
            params: false,
            authorizer: true,
        };
        let e = env(d, None);
        assert!(compile_expression(
            "object.spec.replicas <= 5 && request.userInfo.username != ''",
            Returns::Bool,
            &e
        )
        .is_ok());
        assert!(compile_expression(
            "authorizer.group('apps').resource('deployments').check('create').allowed()",
            Returns::Bool,
            &e
        )
        .is_ok());
        let err = compile_expression("params.max > 1", Returns::Bool, &e).unwrap_err();
        assert!(err.contains("undeclared reference to 'params'"), "{err}");
        assert_eq!(
            compile_expression("object.spec", Returns::Bool, &e).unwrap_err(),
            "must evaluate to bool"
        );
        let e = env(d, Some(&[("limit".to_string(), Type::Int)]));
        assert!(compile_expression("variables.limit > 2", Returns::Bool, &e).is_ok());
        assert!(compile_expression("variables.nope > 2", Returns::Bool, &e)
            .unwrap_err()
            .contains("undefined field 'nope'"));
    }
}
