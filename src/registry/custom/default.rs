//! Defaulting of custom objects from the `default`s of their structural schema, as
//! apiextensions-apiserver's `defaulting.Default` does on every decode (request bodies and
//! objects read from storage): a property that is absent, or null without being nullable,
//! gets its default (a copy, defaulted further inside); map values and list items that are
//! null without being nullable get the default of `additionalProperties`/`items`.

use serde_json::Value;

use super::node::Node;

/// Recursion guard for hostile input.
const MAX_DEPTH: usize = 256;

/// Applies the defaults of `schema` to `x`.
pub fn apply(x: &mut Value, schema: &Node) {
    walk(x, schema, 0)
}

fn non_nullable_null(v: &Value, s: &Node) -> bool {
    v.is_null() && !s.nullable
}

fn walk(x: &mut Value, s: &Node, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            for (k, p) in &s.properties {
                let Some(d) = &p.default else { continue };
                if m.get(k).is_none_or(|v| non_nullable_null(v, p)) {
                    m.insert(k.clone(), d.clone());
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(p) = s.properties.get(k) {
                    walk(v, p, depth + 1);
                } else if let Some(a) = s.additional_schema() {
                    if non_nullable_null(v, a) {
                        *v = a.default.clone().unwrap_or(Value::Null);
                    }
                    walk(v, a, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = s.items.as_deref() {
                for v in items.iter_mut() {
                    if non_nullable_null(v, item) {
                        *v = item.default.clone().unwrap_or(Value::Null);
                    }
                    walk(v, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::node::compile;
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_absent_and_null_fields() {
        let s = compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object",
            "default": {},
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "image": {"type": "string", "default": "nginx"},
                "nul": {"type": "string", "nullable": true, "default": "d"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"w": {"type": "integer", "default": 5}}}}}}}}),
        );
        let mut obj = json!({});
        apply(&mut obj, &s);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 1, "image": "nginx", "nul": "d"}})
        );
        let mut obj =
            json!({"spec": {"replicas": null, "image": "x", "nul": null, "items": [{}, {"w": 2}]}});
        apply(&mut obj, &s);
        assert_eq!(
            obj,
            json!({"spec": {"replicas": 1, "image": "x", "nul": null, "items": [{"w": 5}, {"w": 2}]}})
        );
    }
}
