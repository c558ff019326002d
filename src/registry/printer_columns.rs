//! Table output from a custom resource version's `additionalPrinterColumns`, as
//! apiextensions-apiserver's table convertor renders it: a `Name` column, then one column per
//! definition (its JSONPath's first match, typed by the column's `type`); a version without
//! columns gets kube's default `Age` column.
//!
//! Pure: no clock (the caller passes `now`), no storage. Does not know: built-in printers
//! ([`super::table`]), where definitions come from.

use jiff::Timestamp;
use serde_json::Value;

use super::jsonpath::JsonPath;
use super::table::{self, human_duration, IncludeObject};
use crate::generated::table_columns::{
    META_V1_OBJECT_META_CREATION_TIMESTAMP, META_V1_OBJECT_META_NAME,
};
use crate::registry::builtin::checks::str_of;

struct Column {
    name: String,
    ty: String,
    format: String,
    description: String,
    priority: i64,
    path: Option<JsonPath>,
}

/// The columns of one custom resource version.
pub struct PrinterColumns {
    columns: Vec<Column>,
}

impl std::fmt::Debug for PrinterColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        write!(f, "PrinterColumns({names:?})")
    }
}

impl PrinterColumns {
    /// The columns of a definition's version object (`spec.versions[i]`).
    pub fn of_version(version: &Value) -> PrinterColumns {
        let defined = version
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty());
        let columns = match defined {
            Some(list) => list
                .iter()
                .map(|c| {
                    let json_path = str_of(c, "jsonPath").to_string();
                    let description = match str_of(c, "description").to_string() {
                        d if d.is_empty() => format!(
                            "Custom resource definition column (in JSONPath format): {json_path}"
                        ),
                        d => d,
                    };
                    Column {
                        name: str_of(c, "name").to_string(),
                        ty: str_of(c, "type").to_string(),
                        format: str_of(c, "format").to_string(),
                        description,
                        priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                        // Definitions are validated; a path that still does not parse prints
                        // nothing rather than failing the request.
                        path: JsonPath::parse(&json_path).ok(),
                    }
                })
                .collect(),
            None => vec![Column {
                name: "Age".into(),
                ty: "date".into(),
                format: String::new(),
                description: META_V1_OBJECT_META_CREATION_TIMESTAMP.into(),
                priority: 0,
                path: JsonPath::parse(".metadata.creationTimestamp").ok(),
            }],
        };
        PrinterColumns { columns }
    }

    /// The Table of `items`.
    pub fn table(
        &self,
        items: &[Value],
        list_meta: Value,
        include: IncludeObject,
        api_version: &str,
        now: Timestamp,
    ) -> Value {
        let mut defs = vec![table::column(
            "Name",
            "string",
            "name",
            META_V1_OBJECT_META_NAME,
            0,
        )];
        defs.extend(
            self.columns
                .iter()
                .map(|c| table::column(&c.name, &c.ty, &c.format, &c.description, c.priority)),
        );
        let rows = items.iter().map(|item| {
            let name = item
                .pointer("/metadata/name")
                .cloned()
                .unwrap_or(Value::String(String::new()));
            let mut cells = vec![name];
            for c in &self.columns {
                let first = c
                    .path
                    .as_ref()
                    .and_then(|p| p.find(item).into_iter().next());
                cells.push(match first {
                    None => Value::Null,
                    Some(v) => cell(&c.ty, v, now),
                });
            }
            (cells, None, item)
        });
        table::assemble(defs, rows, list_meta, include, api_version)
    }
}

/// kube's `cellForJSONValue` (and jsonpath's text printing for `string` columns).
fn cell(ty: &str, v: &Value, now: Timestamp) -> Value {
    match ty {
        "string" => Value::String(go_text(v)),
        "integer" => match v.as_i64() {
            Some(i) => Value::from(i),
            None => v
                .as_f64()
                .map(|f| Value::from(f as i64))
                .unwrap_or(Value::Null),
        },
        "number" => match v.as_f64() {
            // encoding/json prints a whole float64 without a fraction.
            Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => Value::from(f as i64),
            Some(f) => Value::from(f),
            None => Value::Null,
        },
        "boolean" => v.as_bool().map(Value::Bool).unwrap_or(Value::Null),
        "date" => match v.as_str() {
            None => Value::Null,
            Some("") | Some("null") => Value::String("<unknown>".into()),
            Some(s) => match s.parse::<Timestamp>() {
                Ok(t) => Value::String(human_duration(now.duration_since(t))),
                Err(_) => Value::String("<invalid>".into()),
            },
        },
        _ => Value::Null,
    }
}

/// Go's `fmt.Fprint` of a decoded JSON value, as client-go's jsonpath prints a result.
fn go_text(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(go_text).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_text(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%v` of a float64 (`%g`, shortest): an exponent below 1e-4 and from 1e6 on.
fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let exp = f.abs().log10().floor() as i32;
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mantissa, e)) => {
            let n: i32 = e.parse().unwrap_or(0);
            let sign = if n < 0 { '-' } else { '+' };
            format!("{mantissa}e{sign}{:02}", n.abs())
        }
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cells_as_kube_renders_them() {
        let now: Timestamp = "2026-01-01T00:10:00Z".parse().unwrap();
        let version = json!({"additionalPrinterColumns": [
            {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "priority": 1},
            {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
            {"name": "Whole", "type": "string", "jsonPath": ".spec.nested"},
            {"name": "Started", "type": "date", "jsonPath": ".status.started"},
            {"name": "Missing", "type": "string", "jsonPath": ".spec.none", "description": "d"}]});
        let obj = json!({"metadata": {"name": "c1"},
            "spec": {"cronSpec": "* * * * */5", "replicas": 2.0, "ratio": 3.0, "nested": {"b": [1, 2], "a": true}},
            "status": {"started": "2026-01-01T00:00:00Z", "conditions": [{"type": "Ready", "status": "True"}]}});
        let t = PrinterColumns::of_version(&version).table(
            &[obj],
            json!({}),
            IncludeObject::None,
            "meta.k8s.io/v1",
            now,
        );
        assert_eq!(
            t["rows"][0]["cells"],
            json!([
                "c1",
                "* * * * */5",
                2,
                3,
                "True",
                "map[a:true b:[1 2]]",
                "10m",
                null
            ])
        );
        let defs = &t["columnDefinitions"];
        assert_eq!(defs[0]["name"], "Name");
        assert_eq!(defs[3]["priority"], 1);
        assert_eq!(
            defs[1]["description"],
            "Custom resource definition column (in JSONPath format): .spec.cronSpec"
        );
        assert_eq!(defs[7]["description"], "d");
        let plain = PrinterColumns::of_version(&json!({}));
        let t = plain.table(&[], json!({}), IncludeObject::None, "v1", now);
        assert_eq!(t["columnDefinitions"][1]["name"], "Age");
        assert_eq!(t["columnDefinitions"][1]["type"], "date");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(100000.0), "100000");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(1e21), "1e+21");
    }
}
