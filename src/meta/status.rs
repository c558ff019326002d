//! `metav1.Status`: the one error type that reaches the HTTP edge.
//!
//! Every layer has its own typed errors; `registry` (for storage errors) and `server` (for
//! protocol errors) translate them into a [`Status`] exactly once, with the code, reason,
//! message and details kube-apiserver would send (k8s.io/apimachinery/pkg/api/errors).
//! This module is pure: it builds values, it never writes a response.

use serde_json::{json, Map, Value};

use super::field_error::{causes, invalid_status_message, FieldError};

/// A qualified resource, `deployments.apps` or `pods` (core group prints without a dot).
#[derive(Clone, Copy, Debug)]
pub struct GroupResource<'a> {
    pub group: &'a str,
    pub resource: &'a str,
}

impl std::fmt::Display for GroupResource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// A failed (or, rarely, successful) API status.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    pub code: u16,
    /// kube's `StatusReason` (`NotFound`); a webhook's denial may carry any text.
    pub reason: std::borrow::Cow<'static, str>,
    pub message: String,
    pub details: Option<Value>,
    /// Seconds for a `Retry-After` header (and `details.retryAfterSeconds`).
    pub retry_after: Option<u64>,
    /// A fresh continue token offered with a 410 for an expired continue (ListMeta.continue).
    pub continue_token: Option<String>,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for Status {}

fn details(name: &str, gr: GroupResource<'_>) -> Value {
    let mut d = Map::new();
    if !name.is_empty() {
        d.insert("name".into(), json!(name));
    }
    if !gr.group.is_empty() {
        d.insert("group".into(), json!(gr.group));
    }
    d.insert("kind".into(), json!(gr.resource));
    Value::Object(d)
}

impl Status {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Status {
        Status {
            code,
            reason: std::borrow::Cow::Borrowed(reason),
            message: message.into(),
            details: None,
            retry_after: None,
            continue_token: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Status {
        self.details = Some(details);
        self
    }

    /// The `Status` object as JSON.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.insert(
            "metadata".into(),
            match &self.continue_token {
                Some(c) => json!({ "continue": c }),
                None => json!({}),
            },
        );
        let ok = (200..300).contains(&self.code);
        m.insert(
            "status".into(),
            json!(if ok { "Success" } else { "Failure" }),
        );
        if !self.message.is_empty() {
            m.insert("message".into(), json!(self.message));
        }
        if !self.reason.is_empty() {
            m.insert("reason".into(), json!(self.reason.as_ref()));
        }
        let mut details = self.details.clone();
        if let Some(secs) = self.retry_after {
            let d = details.get_or_insert_with(|| json!({}));
            d["retryAfterSeconds"] = json!(secs);
        }
        if let Some(d) = details {
            m.insert("details".into(), d);
        }
        m.insert("code".into(), json!(self.code));
        Value::Object(m)
    }

    pub fn not_found(gr: GroupResource<'_>, name: &str) -> Status {
        Status::new(404, "NotFound", format!("{gr} \"{name}\" not found"))
            .with_details(details(name, gr))
    }

    /// 404 for a path that names nothing the server serves.
    pub fn path_not_found() -> Status {
        Status::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn already_exists(gr: GroupResource<'_>, name: &str) -> Status {
        Status::new(
            409,
            "AlreadyExists",
            format!("{gr} \"{name}\" already exists"),
        )
        .with_details(details(name, gr))
    }

    /// 409 Conflict: `Operation cannot be fulfilled on <gr> "<name>": <why>`.
    pub fn conflict(gr: GroupResource<'_>, name: &str, why: &str) -> Status {
        Status::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {gr} \"{name}\": {why}"),
        )
        .with_details(details(name, gr))
    }

    /// The optimistic-concurrency conflict message clients retry on.
    pub fn stale(gr: GroupResource<'_>, name: &str) -> Status {
        Status::conflict(
            gr,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 422 Invalid with one cause per field error.
    pub fn invalid(kind: &str, group: &str, name: &str, errs: &[FieldError]) -> Status {
        let mut d = Map::new();
        if !name.is_empty() {
            d.insert("name".into(), json!(name));
        }
        if !group.is_empty() {
            d.insert("group".into(), json!(group));
        }
        d.insert("kind".into(), json!(kind));
        d.insert("causes".into(), Value::Array(causes(errs)));
        Status::new(
            422,
            "Invalid",
            invalid_status_message(group, kind, name, errs),
        )
        .with_details(Value::Object(d))
    }

    /// 401: a credential was presented and refused (or none, with anonymous auth off).
    pub fn unauthorized() -> Status {
        Status::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, "BadRequest", message)
    }

    pub fn forbidden(gr: GroupResource<'_>, name: &str, why: &str) -> Status {
        let message = if name.is_empty() {
            format!("{gr} is forbidden: {why}")
        } else {
            format!("{gr} \"{name}\" is forbidden: {why}")
        };
        Status::new(403, "Forbidden", message).with_details(details(name, gr))
    }

    pub fn method_not_supported(gr: GroupResource<'_>, action: &str) -> Status {
        Status::new(
            405,
            "MethodNotAllowed",
            format!("{action} is not supported on resources of kind \"{gr}\""),
        )
        .with_details(details("", gr))
    }

    /// 405 for a method the path does not serve (go-restful's answer in kube-apiserver).
    pub fn method_not_allowed() -> Status {
        Status::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(json!({}))
    }

    pub fn not_acceptable() -> Status {
        Status::new(
            406,
            "NotAcceptable",
            // kube's negotiation error lists its serializers' media types (custom resources
            // too: their codecs have protobuf for the PartialObjectMetadata transform).
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )
    }

    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Status {
        Status::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
        .with_details(json!({ "causes": [{"reason": "", "message": content_type}] }))
    }

    pub fn gone(message: impl Into<String>) -> Status {
        Status::new(410, "Expired", message)
    }

    pub fn timeout(message: impl Into<String>, retry_after: u64) -> Status {
        let mut s = Status::new(504, "Timeout", message);
        s.retry_after = Some(retry_after);
        s
    }

    pub fn too_large_resource_version(requested: i64, current: i64) -> Status {
        let mut s = Status::timeout(
            format!("Too large resource version: {requested}, current: {current}"),
            1,
        );
        s.details = Some(
            json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": format!("Too large resource version: {requested}, current: {current}")}]}),
        );
        s
    }

    pub fn service_unavailable(message: impl Into<String>) -> Status {
        let mut s = Status::new(503, "ServiceUnavailable", message);
        s.retry_after = Some(1);
        s
    }

    pub fn internal(message: impl std::fmt::Display) -> Status {
        Status::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
        .with_details(json!({"causes": [{"message": message.to_string()}]}))
    }

    /// A `Success` status as returned by some deletes.
    pub fn success_details(details: Value) -> Status {
        Status::new(200, "", "").with_details(details)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_kube() {
        let gr = GroupResource {
            group: "apps",
            resource: "deployments",
        };
        assert_eq!(
            Status::not_found(gr, "web").message,
            "deployments.apps \"web\" not found"
        );
        let core = GroupResource {
            group: "",
            resource: "pods",
        };
        let s = Status::already_exists(core, "p").to_json();
        assert_eq!(s["message"], "pods \"p\" already exists");
        assert_eq!(s["details"], json!({"name": "p", "kind": "pods"}));
        assert_eq!(s["code"], 409);
        assert_eq!(s["status"], "Failure");
        assert!(Status::stale(gr, "web")
            .message
            .starts_with("Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified"));
    }
}
