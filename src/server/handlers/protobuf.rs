//! Kubernetes protobuf responses: an object (or list, Status, PartialObjectMetadata) as the
//! `k8s\0` envelope with `Content-Type: application/vnd.kubernetes.protobuf`, and the frames
//! of a protobuf watch (`application/vnd.kubernetes.protobuf;stream=watch`).
//!
//! Owns: turning an object without a protobuf form into kube's 406 (the protobuf serializer's
//! "does not implement the protobuf marshalling interface" Status), the per-event frame of a
//! watch (objects, PartialObjectMetadata, BOOKMARK, ERROR).
//!
//! Does not know: negotiation (`negotiate`), the wire format (`server::protobuf`), which
//! events a watch yields (`watch`).

use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode};
use serde_json::Value;

use crate::meta::status::Status;
use crate::registry::resource::Resource;
use crate::server::protobuf::{self, NotMarshalable};
use crate::server::{full, Body};
use crate::watch;

/// A protobuf response with a status code; a kind without protobuf gets kube's 406.
pub fn respond(code: StatusCode, v: &Value) -> Response<Body> {
    match protobuf::encode_object(v) {
        Ok(b) => with_type(code, b, protobuf::MEDIA_TYPE),
        Err(e) => crate::server::status_response(&not_marshalable(&e)),
    }
}

/// A built-in list in protobuf, its items encoded one at a time as `items` yields them.
pub fn respond_list<V: std::borrow::Borrow<Value>>(
    info: &Resource,
    items: impl IntoIterator<Item = V>,
    list_meta: &serde_json::Map<String, Value>,
) -> Response<Body> {
    let meta = Value::Object(list_meta.clone());
    match protobuf::encode_list(&info.api_version(), &info.list_kind, &meta, items) {
        Ok(b) => with_type(StatusCode::OK, b, protobuf::MEDIA_TYPE),
        Err(e) => crate::server::status_response(&not_marshalable(&e)),
    }
}

fn not_marshalable(e: &NotMarshalable) -> Status {
    if e.invalid() {
        Status::internal(e.to_string())
    } else {
        Status::new(406, "NotAcceptable", e.to_string())
    }
}

fn with_type(code: StatusCode, body: Vec<u8>, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = code;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// One watch frame for `out`. `conv` is the event's object as served (converted) when it
/// differs from the stored one, or the conversion's failure; `partial` the
/// PartialObjectMetadata version when the client asked for that transform.
pub fn watch_frame(
    out: &watch::Out,
    info: &Resource,
    conv: Option<Result<Option<Value>, Status>>,
    partial: Option<&str>,
) -> Bytes {
    let frame = |t: &str, obj: &Value| -> Vec<u8> {
        match protobuf::watch_frame(t, obj) {
            Ok(f) => f,
            Err(e) => error_frame(&not_marshalable(&e)),
        }
    };
    // A cached event whose stored form is served as is: one frame per event, shared.
    if let (watch::Out::Event(e, t), None | Some(Ok(None)), None) = (out, &conv, partial) {
        return e.frame(*t, |t, obj| Bytes::from(frame(t.as_str(), obj)));
    }
    let bytes = match (out.object(), conv) {
        (Some(_), Some(Err(e))) => error_frame(&e),
        (Some((t, obj)), conv) => {
            let obj = conv
                .and_then(Result::ok)
                .flatten()
                .unwrap_or_else(|| obj.value());
            match partial {
                Some(v) => frame(t.as_str(), &super::partial(&obj, v)),
                None => frame(t.as_str(), &obj),
            }
        }
        (None, _) => match out {
            watch::Out::Bookmark(rev, end) => {
                let b = watch::bookmark_object(info, *rev, *end);
                match partial {
                    Some(v) => frame("BOOKMARK", &super::partial(&b, v)),
                    None => frame("BOOKMARK", &b),
                }
            }
            watch::Out::Error(s) => error_frame(s),
            _ => Vec::new(),
        },
    };
    Bytes::from(bytes)
}

fn error_frame(s: &Status) -> Vec<u8> {
    protobuf::watch_frame("ERROR", &s.to_json()).unwrap_or_default()
}
