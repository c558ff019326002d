//! One `x-kubernetes-validations` rule compiled against the CEL type of its schema node:
//! the rule as written, its program (or kube's error detail), its `messageExpression`, whether
//! it is a transition rule, and its `fieldPath` as a field path.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::cel::{self, types, Program, Type};

/// A rule as written.
#[derive(Debug, Default, Clone)]
pub struct RuleSpec {
    pub rule: String,
    pub message: String,
    pub message_expression: String,
    pub reason: Option<String>,
    pub field_path: String,
    pub optional_old_self: Option<bool>,
}

impl RuleSpec {
    pub fn of(v: &Value) -> RuleSpec {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        RuleSpec {
            rule: s("rule"),
            message: s("message"),
            message_expression: s("messageExpression"),
            reason: v.get("reason").and_then(Value::as_str).map(str::to_string),
            field_path: s("fieldPath"),
            optional_old_self: v.get("optionalOldSelf").and_then(Value::as_bool),
        }
    }

    /// kube's `ruleErrorString`.
    pub fn error_string(&self) -> &str {
        if !self.message.is_empty() {
            self.message.trim()
        } else {
            self.rule.trim()
        }
    }

    /// How Go's `%#v` prints the rule (`apiextensions.ValidationRule{...}`).
    pub fn go(&self) -> String {
        let ptr = |set: bool, ty: &str| {
            if set {
                format!("(*{ty})(0xc000000000)")
            } else {
                format!("(*{ty})(nil)")
            }
        };
        format!(
            "apiextensions.ValidationRule{{Rule:{:?}, Message:{:?}, MessageExpression:{:?}, Reason:{}, FieldPath:{:?}, OptionalOldSelf:{}}}",
            self.rule,
            self.message,
            self.message_expression,
            ptr(self.reason.is_some(), "apiextensions.FieldValueErrorReason"),
            self.field_path,
            ptr(self.optional_old_self.is_some(), "bool"),
        )
    }
}

/// A compiled rule.
#[derive(Debug)]
pub struct Rule {
    pub spec: RuleSpec,
    /// The program, or the error detail kube reports for it.
    pub program: Result<Program, String>,
    pub message: Option<Result<Program, String>>,
    pub uses_old_self: bool,
    /// `fieldPath` as a field path relative to the node (`""` when unset or invalid).
    pub field_path: String,
}

/// The variables of a rule at a node of type `t`.
fn env(t: &Type, optional_old_self: bool) -> BTreeMap<String, Type> {
    let old = if optional_old_self {
        Type::Optional(Box::new(t.clone()))
    } else {
        t.clone()
    };
    [
        ("self".to_string(), t.clone()),
        ("oldSelf".to_string(), old),
    ]
    .into_iter()
    .collect()
}

pub fn compile_rule(spec: RuleSpec, t: &Type, schema: &Value) -> Rule {
    let vars = env(t, spec.optional_old_self == Some(true));
    let program = cel::compile(&spec.rule, &vars)
        .map_err(|e| format!("compilation failed: {e}"))
        .and_then(|p| {
            if matches!(p.ty, Type::Bool) {
                Ok(p)
            } else {
                Err("cel expression must evaluate to a bool".to_string())
            }
        });
    let message = (!spec.message_expression.is_empty()).then(|| {
        cel::compile(&spec.message_expression, &vars)
            .map_err(|e| format!("messageExpression compilation failed: {e}"))
            .and_then(|p| {
                if matches!(p.ty, Type::String { .. }) {
                    Ok(p)
                } else {
                    Err("messageExpression must evaluate to a string".to_string())
                }
            })
    });
    let uses_old_self = program.as_ref().is_ok_and(|p| p.uses("oldSelf"));
    let field_path = if spec.field_path.is_empty() {
        String::new()
    } else {
        valid_field_path(&spec.field_path, schema).unwrap_or_default()
    };
    Rule {
        spec,
        program,
        message,
        uses_old_self,
        field_path,
    }
}

/// The compiled rules of a schema node (`root` at a resource root or embedded resource), and
/// the CEL type they were compiled against.
pub fn compile(schema: &Value, root: bool) -> (Vec<Rule>, Option<Type>) {
    let Some(list) = schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        return (Vec::new(), None);
    };
    let Some(t) = types::of_schema(schema, root) else {
        return (Vec::new(), None);
    };
    let rules = list
        .iter()
        .map(RuleSpec::of)
        .filter(|r| !r.rule.trim().is_empty())
        .map(|r| compile_rule(r, &t, schema))
        .collect();
    (rules, Some(t))
}

/// kube's `ValidFieldPath`: a JSON path of field and map accessors (`.a.b`, `['x']`) valid
/// for `schema`, as a field path (`a.b`, `a[x]`).
pub fn valid_field_path(path: &str, schema: &Value) -> Result<String, String> {
    let mut out = String::new();
    let mut node = schema;
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    let step = |node: &Value, name: &str, out: &mut String| -> Result<Value, String> {
        if let Some(p) = node.get("properties").and_then(Value::as_object) {
            let child = p
                .get(name)
                .ok_or_else(|| "does not refer to a valid field".to_string())?;
            if out.is_empty() {
                out.push_str(name);
            } else {
                out.push('.');
                out.push_str(name);
            }
            Ok(child.clone())
        } else if let Some(ap) = node.get("additionalProperties").filter(|a| a.is_object()) {
            out.push_str(&format!("[{name}]"));
            Ok(ap.clone())
        } else {
            Err("does not refer to a valid field".to_string())
        }
    };
    let mut owned;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                i += 1;
                let start = i;
                while i < chars.len() && !matches!(chars[i], '.' | '[' | ']') {
                    i += 1;
                }
                if start == i {
                    return Err("unexpected end of JSON path".into());
                }
                let name: String = chars[start..i].iter().collect();
                owned = step(node, &name, &mut out)?;
                node = &owned;
            }
            '[' => {
                i += 1;
                if i >= chars.len() || chars[i] != '\'' {
                    return Err("expected single quoted string".into());
                }
                i += 1;
                let mut name = String::new();
                while i < chars.len() && chars[i] != '\'' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                        name.push(match chars[i] {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            '\'' => '\'',
                            '\\' => '\\',
                            c => {
                                return Err(format!(
                                    "invalid string literal: invalid escape char \\{c}"
                                ))
                            }
                        });
                    } else {
                        name.push(chars[i]);
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return Err("unexpected end of JSON path".into());
                }
                i += 1;
                if i >= chars.len() || chars[i] != ']' {
                    return Err("expected ]".into());
                }
                i += 1;
                owned = step(node, &name, &mut out)?;
                node = &owned;
            }
            c => return Err(format!("expected [ or . but got: {c}")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_paths() {
        let s = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        assert_eq!(valid_field_path(".a.b", &s).unwrap(), "a.b");
        assert_eq!(valid_field_path(".m['x.y']", &s).unwrap(), "m[x.y]");
        assert_eq!(valid_field_path("['a'].b", &s).unwrap(), "a.b");
        assert!(valid_field_path(".c", &s).is_err());
        assert!(valid_field_path("a", &s).is_err());
    }
}
