//! The generator of `src/generated/openapi_facts.rs`: from upstream's OpenAPI v2 document,
//! per definition the shape of each non-scalar field and the `x-kubernetes-*` extensions that
//! patching and field sets need (see the head of the generated file for the form).

use serde_json::{Map, Value};

/// Definitions that encode as a JSON string or number: scalars to patching.
const STRING_ENCODED: &[&str] = &[
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
];

/// Definitions that are opaque JSON.
const OPAQUE: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
];

fn ref_of(v: &Value) -> Option<&str> {
    v.get("$ref")?.as_str()?.strip_prefix("#/definitions/")
}

/// The field's shape, as the `Ty` variant's source text (`None`: a plain scalar).
fn shape(p: &Value) -> Option<String> {
    let one = |v: &Value, scalar: &str, of_ref: &str| -> Option<String> {
        match ref_of(v) {
            Some(r) if STRING_ENCODED.contains(&r) => Some(format!("Ty::{scalar}")),
            // Opaque JSON itself is `Any`; lists and maps of it keep their element's name.
            Some(r) if OPAQUE.contains(&r) && of_ref == "Ref" => Some("Ty::Any".into()),
            Some(r) => Some(format!("Ty::{of_ref}({r:?})")),
            None => None,
        }
    };
    if ref_of(p).is_some() {
        return one(p, "Scalar", "Ref").filter(|t| t != "Ty::Scalar");
    }
    match p.get("type").and_then(Value::as_str) {
        Some("array") => {
            let items = p.get("items").unwrap_or(&Value::Null);
            Some(one(items, "ArrayOfScalar", "ArrayOfRef").unwrap_or("Ty::ArrayOfScalar".into()))
        }
        Some("object") => match p.get("additionalProperties") {
            Some(a) => Some(one(a, "MapOfScalar", "MapOfRef").unwrap_or("Ty::MapOfScalar".into())),
            None => Some("Ty::Any".into()),
        },
        _ => None,
    }
}

fn ext<'a>(p: &'a Value, key: &str) -> &'a str {
    p.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The rows of the table: `d(...)` per definition, sorted, and the GVK index.
pub fn facts_table(defs: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = defs.keys().collect();
    names.sort();
    let mut out = String::from("/// All definitions, sorted by name.\n#[rustfmt::skip]\npub(crate) static DEFS: &[Definition] = &[\n");
    let mut gvks: Vec<(String, String, String, usize)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let def = &defs[*name];
        let gvk: Vec<String> = def
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|g| {
                        let (gr, v, k) = (ext(g, "group"), ext(g, "version"), ext(g, "kind"));
                        gvks.push((gr.into(), v.into(), k.into(), i));
                        format!("({gr:?}, {v:?}, {k:?})")
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut rows = Vec::new();
        if let Some(props) = def.get("properties").and_then(Value::as_object) {
            let mut keys: Vec<&String> = props.keys().collect();
            keys.sort();
            for k in keys {
                let p = &props[k];
                let strategy = ext(p, "x-kubernetes-patch-strategy");
                let merge_key = ext(p, "x-kubernetes-patch-merge-key");
                let list_type = ext(p, "x-kubernetes-list-type");
                let map_type = ext(p, "x-kubernetes-map-type");
                let keys: Vec<String> = p
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(|s| format!("{s:?}"))
                            .collect()
                    })
                    .unwrap_or_default();
                let extended = !(strategy.is_empty()
                    && merge_key.is_empty()
                    && list_type.is_empty()
                    && map_type.is_empty()
                    && keys.is_empty());
                let ty = match shape(p) {
                    Some(t) => t,
                    None if extended => "Ty::Scalar".into(),
                    None => continue,
                };
                if extended {
                    let keys = if keys.is_empty() {
                        "E".to_string()
                    } else {
                        format!("&[{}]", keys.join(", "))
                    };
                    rows.push(format!(
                        "        x({k:?}, {ty}, {strategy:?}, {merge_key:?}, {list_type:?}, {keys}, {map_type:?}),\n"
                    ));
                } else {
                    rows.push(format!("        f({k:?}, {ty}),\n"));
                }
            }
        }
        let map_type = ext(def, "x-kubernetes-map-type");
        let head = format!("    d({name:?}, {map_type:?}, &[{}], &[", gvk.join(", "));
        if rows.is_empty() {
            out.push_str(&format!("{head}]),\n"));
        } else {
            out.push_str(&format!("{head}\n{}    ]),\n", rows.concat()));
        }
    }
    out.push_str("];\n\n/// (group, version, kind, index into DEFS), sorted.\n#[rustfmt::skip]\npub(crate) static GVK_INDEX: &[(&str, &str, &str, u16)] = &[\n");
    gvks.sort();
    for (g, v, k, i) in gvks {
        out.push_str(&format!("    ({g:?}, {v:?}, {k:?}, {i}),\n"));
    }
    out.push_str("];\n");
    out
}
