//! `application/vnd.kubernetes.protobuf`: decoding request bodies into the JSON the same
//! object has in kube's JSON encoding (so the rest of the server only ever sees JSON), and
//! encoding responses (objects, lists, `Status`, `PartialObjectMetadata`, watch frames) from
//! that JSON.
//!
//! Owns: the `k8s\0` envelope (`runtime.Unknown`), the apiVersion/kind → definition lookup
//! (built-in kinds through the OpenAPI facts, plus `DeleteOptions` under any group-version
//! as clients send it, and the meta.k8s.io `PartialObjectMetadata(List)` kinds), the watch
//! stream framing (a 4-byte big-endian length, then a `WatchEvent` without envelope whose
//! object is an enveloped message, as kube's raw stream serializer writes it). The wire
//! reader and JSON rendering live in `decode.rs`, the writer in `encode.rs`, the generated
//! schema table in `crate::generated::protobuf_schema`.
//!
//! Does not know: HTTP content negotiation (the caller checks Content-Type and Accept),
//! custom resources (they have no protobuf form), defaulting, validation.

mod apidiscovery;
mod decode;
mod encode;
use crate::generated::protobuf_schema as schema;

use serde_json::{Map, Value};

use crate::openapi::facts;

/// The media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The 4-byte prefix of every Kubernetes protobuf object.
const MAGIC: [u8; 4] = [b'k', b'8', b's', 0];

/// A message by its definition name: the generated table, then aggregated discovery's.
fn message(name: &str) -> Option<&'static schema::Message> {
    schema::message(name).or_else(|| apidiscovery::message(name))
}

const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";

/// Decodes a protobuf-encoded object: the 4-byte magic "k8s\0", then a runtime.Unknown
/// { typeMeta(1): TypeMeta{apiVersion(1), kind(2)}, raw(2): bytes, contentEncoding(3), contentType(4) },
/// whose `raw` is the message of the type named by apiVersion/kind. Returns the object as
/// JSON with "apiVersion" and "kind" set first, as kube's JSON encoding would produce.
pub fn decode_object(body: &[u8]) -> Result<Value, String> {
    decode_nested(body, 0)
}

/// [`decode_object`] at a nesting depth (a `RawExtension` may carry a nested envelope).
fn decode_nested(body: &[u8], depth: usize) -> Result<Value, String> {
    let Some(rest) = body.strip_prefix(&MAGIC) else {
        return Err(format!(
            "provided data does not appear to be a protobuf message, expected prefix {:?}",
            MAGIC
        ));
    };
    let unknown = envelope(rest)?;
    if !unknown.content_encoding.is_empty() {
        return Err(format!(
            "unsupported protobuf content encoding {:?}",
            unknown.content_encoding
        ));
    }
    if unknown.kind.is_empty() {
        return Err("Object 'Kind' is missing in protobuf body".into());
    }
    let definition = definition_for(&unknown.api_version, &unknown.kind)?;
    let msg = message(definition)
        .filter(|m| m.shape == schema::Shape::Object)
        .ok_or_else(|| {
            format!(
                "protobuf decoding of {} {} is not supported",
                unknown.api_version, unknown.kind
            )
        })?;
    let body = decode::object(msg, unknown.raw, depth)?;
    let mut out = Map::with_capacity(body.len() + 2);
    // (Discovery's APIVersions has none.)
    if !unknown.api_version.is_empty() {
        out.insert("apiVersion".into(), Value::String(unknown.api_version));
    }
    out.insert("kind".into(), Value::String(unknown.kind));
    for (k, v) in body {
        if k != "apiVersion" && k != "kind" {
            out.insert(k, v);
        }
    }
    Ok(Value::Object(out))
}

const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";

/// The content type of a protobuf watch stream.
pub const STREAM_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf;stream=watch";

/// Why an object could not be encoded: its kind has no protobuf encoding (kube: the Go type
/// does not implement the protobuf marshalling interface; answered 406 NotAcceptable), or
/// (`invalid`) a value does not fit its field's type (a server fault, answered 500).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotMarshalable(pub String, pub bool);

impl NotMarshalable {
    pub fn invalid(&self) -> bool {
        self.1
    }
}

impl std::fmt::Display for NotMarshalable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Encodes an object (kube's JSON form, with `apiVersion` and `kind`) as the `k8s\0` +
/// `runtime.Unknown` envelope kube's protobuf serializer writes: typeMeta(1){apiVersion,
/// kind}, raw(2) the message, contentEncoding(3) and contentType(4) empty (both always on the
/// wire, as gogo writes non-pointer strings).
pub fn encode_object(v: &Value) -> Result<Vec<u8>, NotMarshalable> {
    let api_version = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut raw = Vec::with_capacity(256);
    message_for_kind(&mut raw, api_version, kind, v)?;
    Ok(envelope_bytes(api_version, kind, &raw))
}

/// The message body of `v` as the type apiVersion/kind names.
fn message_for_kind(
    out: &mut Vec<u8>,
    api_version: &str,
    kind: &str,
    v: &Value,
) -> Result<(), NotMarshalable> {
    let not = |why: String| NotMarshalable(why, true);
    let meta_group = matches!(api_version, "meta.k8s.io/v1" | "meta.k8s.io/v1beta1");
    let definition = match kind {
        "PartialObjectMetadata" if meta_group => {
            return encode::partial_object_metadata(out, v).map_err(not);
        }
        "PartialObjectMetadataList" if meta_group => {
            let list = (|| {
                let meta = v.get("metadata").unwrap_or(&Value::Null);
                encode_nested(out, 1, LIST_META, meta)?;
                for item in v
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let mut body = Vec::new();
                    encode::partial_object_metadata(&mut body, item)?;
                    encode::bytes_field(out, 2, &body);
                }
                Ok::<_, String>(())
            })();
            return list.map_err(not);
        }
        "Status" => STATUS,
        _ => match definition_for(api_version, kind) {
            Ok(d) if message(d).is_some_and(|m| m.shape == schema::Shape::Object) => d,
            _ => {
                let version = api_version.rsplit('/').next().unwrap_or(api_version);
                return Err(NotMarshalable(
                    format!("object *{version}.{kind} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"),
                    false,
                ));
            }
        },
    };
    encode::message_body(out, definition, v, 0).map_err(not)
}

/// Encodes a list of `kind` (a built-in list kind of `api_version`) from its list metadata
/// and items (kube's JSON form of each item; their kind and apiVersion are not on the wire)
/// without building the list's JSON first.
pub fn encode_list<V: std::borrow::Borrow<Value>>(
    api_version: &str,
    kind: &str,
    list_meta: &Value,
    items: impl IntoIterator<Item = V>,
) -> Result<Vec<u8>, NotMarshalable> {
    let not_list = || {
        let version = api_version.rsplit('/').next().unwrap_or(api_version);
        NotMarshalable(
            format!("object *{version}.{kind} does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message"),
            false,
        )
    };
    let list = definition_for(api_version, kind)
        .ok()
        .and_then(message)
        .ok_or_else(not_list)?;
    let (Some(meta), Some(items_field)) = (
        list.fields.iter().find(|f| f.json == "metadata"),
        list.fields.iter().find(|f| f.json == "items"),
    ) else {
        return Err(not_list());
    };
    let (schema::Ty::Msg(meta_def), schema::Ty::Msg(item_def)) = (meta.ty, items_field.ty) else {
        return Err(not_list());
    };
    let fail = |e: String| NotMarshalable(e, true);
    let mut meta_bytes = Vec::with_capacity(64);
    encode::message_body(&mut meta_bytes, meta_def, list_meta, 0).map_err(fail)?;
    // ListMeta is field 1 and items field 2 in every list type; fields go in tag order, and
    // the items are encoded one at a time as they come (a caller may parse each on the fly).
    let meta_first = meta.tag < items_field.tag;
    let mut raw = Vec::with_capacity(4096);
    if meta_first {
        encode::bytes_field(&mut raw, meta.tag, &meta_bytes);
    }
    let mut body = Vec::with_capacity(1024);
    for item in items {
        body.clear();
        encode::message_body(&mut body, item_def, item.borrow(), 0).map_err(fail)?;
        encode::bytes_field(&mut raw, items_field.tag, &body);
    }
    if !meta_first {
        encode::bytes_field(&mut raw, meta.tag, &meta_bytes);
    }
    Ok(envelope_bytes(api_version, kind, &raw))
}

fn envelope_bytes(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut tm = Vec::with_capacity(api_version.len() + kind.len() + 4);
    encode::bytes_field(&mut tm, 1, api_version.as_bytes());
    encode::bytes_field(&mut tm, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + tm.len() + 16);
    out.extend_from_slice(&MAGIC);
    encode::bytes_field(&mut out, 1, &tm);
    encode::bytes_field(&mut out, 2, raw);
    encode::bytes_field(&mut out, 3, b"");
    encode::bytes_field(&mut out, 4, b"");
    out
}

fn encode_nested(out: &mut Vec<u8>, tag: u32, name: &str, v: &Value) -> Result<(), String> {
    let mut body = Vec::new();
    encode::message_body(&mut body, name, v, 0)?;
    encode::bytes_field(out, tag, &body);
    Ok(())
}

/// One frame of a protobuf watch stream: the 4-byte big-endian length of a
/// `meta.v1.WatchEvent{type(1), object(2): RawExtension{raw(1)}}` (no envelope: kube's
/// stream serializer is the raw one), whose raw bytes are `object` enveloped.
pub fn watch_frame(event_type: &str, object: &Value) -> Result<Vec<u8>, NotMarshalable> {
    let obj = encode_object(object)?;
    let mut raw_ext = Vec::with_capacity(obj.len() + 6);
    encode::bytes_field(&mut raw_ext, 1, &obj);
    let mut ev = Vec::with_capacity(raw_ext.len() + 16);
    encode::bytes_field(&mut ev, 1, event_type.as_bytes());
    encode::bytes_field(&mut ev, 2, &raw_ext);
    let mut out = Vec::with_capacity(ev.len() + 4);
    out.extend_from_slice(&(ev.len() as u32).to_be_bytes());
    out.extend_from_slice(&ev);
    Ok(out)
}

/// The fields of `runtime.Unknown` that matter.
struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
}

fn envelope(buf: &[u8]) -> Result<Unknown<'_>, String> {
    let mut u = Unknown {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
        content_encoding: String::new(),
    };
    let mut r = decode::Reader::new(buf);
    while let Some((tag, w)) = r.next_field()? {
        let decode::Wire::Bytes(b) = w else {
            if (1..=4).contains(&tag) {
                return Err(format!(
                    "wrong wire type for field {tag} of runtime.Unknown"
                ));
            }
            continue;
        };
        match tag {
            1 => {
                let mut tm = decode::Reader::new(b);
                while let Some((t, w)) = tm.next_field()? {
                    match (t, w) {
                        (1, decode::Wire::Bytes(s)) => u.api_version = utf8(s)?,
                        (2, decode::Wire::Bytes(s)) => u.kind = utf8(s)?,
                        (1 | 2, _) => {
                            return Err(format!("wrong wire type for field {t} of TypeMeta"))
                        }
                        _ => {}
                    }
                }
            }
            2 => u.raw = b,
            3 => u.content_encoding = utf8(b)?,
            _ => {}
        }
    }
    Ok(u)
}

fn utf8(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| "invalid UTF-8 in protobuf TypeMeta".to_string())
}

/// The OpenAPI definition name of the body type named by apiVersion/kind.
fn definition_for(api_version: &str, kind: &str) -> Result<&'static str, String> {
    match kind {
        "DeleteOptions" => return Ok(DELETE_OPTIONS),
        // Discovery documents (served without an apiVersion, or as v1).
        "APIVersions" | "APIGroupList" | "APIGroup" | "APIResourceList"
            if matches!(api_version, "" | "v1") =>
        {
            return Ok(match kind {
                "APIVersions" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
                "APIGroupList" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
                "APIGroup" => "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
                _ => "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
            });
        }
        "APIGroupDiscoveryList" => {
            if let Some(d) = apidiscovery::list_definition(api_version) {
                return Ok(d);
            }
        }
        _ => {}
    }
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    };
    facts::definition_for_gvk(group, version, kind)
        .map(|d| d.name)
        .ok_or_else(|| {
            format!(
                "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/api/legacyscheme/scheme.go:30\""
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds an envelope by hand (the integration tests use prost for real objects).
    fn env(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        fn ld(out: &mut Vec<u8>, tag: u8, b: &[u8]) {
            out.push(tag << 3 | 2);
            let mut n = b.len();
            loop {
                let byte = (n & 0x7f) as u8;
                n >>= 7;
                if n == 0 {
                    out.push(byte);
                    break;
                }
                out.push(byte | 0x80);
            }
            out.extend_from_slice(b);
        }
        let mut tm = Vec::new();
        ld(&mut tm, 1, api_version.as_bytes());
        ld(&mut tm, 2, kind.as_bytes());
        let mut out = MAGIC.to_vec();
        ld(&mut out, 1, &tm);
        ld(&mut out, 2, raw);
        out
    }

    #[test]
    fn status_and_watch_frames_round_trip() {
        let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "too old resource version: 1 (5)", "reason": "Expired",
            "code": 410});
        let env = encode_object(&status).unwrap();
        assert!(env.starts_with(&MAGIC));
        assert_eq!(decode_object(&env).unwrap(), status);
        // A frame: big-endian length, then WatchEvent{type, object{raw: envelope}}.
        let frame = watch_frame("ERROR", &status).unwrap();
        let len = u32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(len, frame.len() - 4);
        let ev = schema::message("io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent").unwrap();
        let ev = decode::object(ev, &frame[4..], 0).unwrap();
        assert_eq!(ev["type"], "ERROR");
        assert_eq!(ev["object"], status);
        // A list: ListMeta then items, without the items' kind and apiVersion.
        let items = [serde_json::json!({"metadata": {"name": "a"}, "data": {"k": "v"}})];
        let list = encode_list(
            "v1",
            "ConfigMapList",
            &serde_json::json!({"resourceVersion": "7"}),
            items.iter(),
        )
        .unwrap();
        assert_eq!(
            decode_object(&list).unwrap(),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMapList",
                "metadata": {"resourceVersion": "7"}, "items": [{"metadata": {"name": "a"}, "data": {"k": "v"}}]})
        );
        // Kinds without protobuf (custom resources, Table) are refused as kube refuses them.
        let err =
            encode_object(&serde_json::json!({"apiVersion": "meta.k8s.io/v1", "kind": "Table"}))
                .unwrap_err();
        assert_eq!(err.0, "object *v1.Table does not implement the protobuf marshalling interface and cannot be encoded to a protobuf message");
        assert!(encode_list(
            "example.com/v1",
            "WidgetList",
            &Value::Null,
            [&Value::Null; 0]
        )
        .is_err());
    }

    #[test]
    fn errors() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                b"{\"kind\":\"x\"}".to_vec(),
                "does not appear to be a protobuf message",
            ),
            (b"k8s".to_vec(), "does not appear to be a protobuf message"),
            (env("v1", "", &[]), "'Kind' is missing"),
            (
                env("v1", "Nope", &[]),
                "no kind \"Nope\" is registered for version \"v1\"",
            ),
            (env("v1", "Namespace", &[0x0a]), "unexpected end"),
            (
                env("v1", "Namespace", &[0x0a, 0x02, 0x0a]),
                "unexpected end",
            ),
            (env("v1", "Namespace", &[0x08, 0x01]), "wrong wire type"),
            (
                env("v1", "Namespace", &[0x0b]),
                "unsupported protobuf wire type",
            ),
            (vec![b'k', b'8', b's', 0, 0x0a, 0x7f], "unexpected end"),
            (vec![b'k', b'8', b's', 0, 0x08, 0x01], "wrong wire type"),
        ];
        for (body, want) in cases {
            let err = decode_object(&body).expect_err(want);
            assert!(err.contains(want), "{err:?} does not contain {want:?}");
        }
    }

    #[test]
    fn minimal_namespace_and_delete_options() {
        // metadata(1){name(1)="x"}
        let ns = env("v1", "Namespace", &[0x0a, 0x03, 0x0a, 0x01, b'x']);
        assert_eq!(
            decode_object(&ns).unwrap().to_string(),
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}"#
        );
        // gracePeriodSeconds(1)=0, propagationPolicy(4)="Foreground"
        let mut raw = vec![0x08, 0x00, 0x22, 10];
        raw.extend_from_slice(b"Foreground");
        let del = env("apps/v1", "DeleteOptions", &raw);
        assert_eq!(
            decode_object(&del).unwrap().to_string(),
            r#"{"apiVersion":"apps/v1","kind":"DeleteOptions","gracePeriodSeconds":0,"propagationPolicy":"Foreground"}"#
        );
    }

    #[test]
    fn body_kinds_resolve() {
        for (api_version, kind, want) in [
            ("v1", "Namespace", "io.k8s.api.core.v1.Namespace"),
            ("v1", "Binding", "io.k8s.api.core.v1.Binding"),
            ("apps/v1", "Deployment", "io.k8s.api.apps.v1.Deployment"),
            ("autoscaling/v1", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
            ("policy/v1", "Eviction", "io.k8s.api.policy.v1.Eviction"),
            (
                "authentication.k8s.io/v1",
                "TokenRequest",
                "io.k8s.api.authentication.v1.TokenRequest",
            ),
            (
                "authorization.k8s.io/v1",
                "SelfSubjectAccessReview",
                "io.k8s.api.authorization.v1.SelfSubjectAccessReview",
            ),
            (
                "apiregistration.k8s.io/v1",
                "APIService",
                "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
            ),
            ("meta.k8s.io/v1", "DeleteOptions", DELETE_OPTIONS),
            ("storage.k8s.io/v1", "DeleteOptions", DELETE_OPTIONS),
        ] {
            assert_eq!(
                definition_for(api_version, kind),
                Ok(want),
                "{api_version} {kind}"
            );
            assert!(schema::message(want).is_some(), "{want}");
        }
    }

    #[test]
    fn every_gvk_definition_has_a_message() {
        for def in facts::definitions() {
            if def.gvk.is_empty() || def.name.contains("apimachinery.pkg.apis.meta.v1") {
                continue;
            }
            assert!(
                schema::message(def.name).is_some(),
                "{} has a GVK but no protobuf message",
                def.name
            );
        }
    }

    #[test]
    fn deeply_nested_input_is_an_error_not_a_crash() {
        // JSONSchemaProps.items(...) nesting: properties map → JSONSchemaProps → ...
        // Build 200 levels of CRD-less nesting with LabelSelector-free Status.details? Simplest:
        // JSONSchemaPropsOrArray.schema(1) → JSONSchemaProps.items(24) → ...
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..200 {
            let mut or_array = vec![0x0a];
            push_len(&mut or_array, inner.len());
            or_array.extend_from_slice(&inner);
            let mut props = vec![0xc2, 0x01]; // field 24 (items), wire type 2
            push_len(&mut props, or_array.len());
            props.extend_from_slice(&or_array);
            inner = props;
        }
        let r = decode::message_value(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
            &inner,
            0,
        );
        assert!(r.unwrap_err().contains("nesting"));
    }

    fn push_len(out: &mut Vec<u8>, mut n: usize) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }
}
