//! Conversion between the versions of a custom resource (`spec.conversion`): `None` (only
//! `apiVersion` changes) or `Webhook` (a ConversionReview to the definition's webhook, as
//! kube's `webhookConverter` sends it: one review per call with every object that is not
//! already in the desired version; the reply is checked — same uid, `Success`, as many
//! objects, desired apiVersion and same kind, name, namespace and uid — and only `labels` and
//! `annotations` of the converted metadata are kept).
//!
//! Strategies are synchronous, so a webhook call blocks its worker thread
//! (`block_in_place`) for at most kube's 30 s; errors read as kube's
//! (`conversion webhook for stable.example.com/v1beta1, Kind=CronTab failed: ...`).

use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::registry::strategy::ConversionError;

/// kube's timeout of a conversion webhook call.
const TIMEOUT: Duration = Duration::from_secs(30);

/// How a definition converts its objects.
pub enum Conversion {
    None,
    Webhook(Webhook),
}

pub struct Webhook {
    url: String,
    /// The client (with the definition's `caBundle`), or why there is none.
    client: Result<reqwest::Client, String>,
    /// The ConversionReview apiVersion to send, if the webhook accepts one kube speaks.
    review: Option<&'static str>,
}

impl Conversion {
    /// The conversion of a definition's `spec`.
    pub fn of(spec: &Value) -> Conversion {
        if spec.pointer("/conversion/strategy").and_then(Value::as_str) != Some("Webhook") {
            return Conversion::None;
        }
        let hook = spec.pointer("/conversion/webhook").unwrap_or(&Value::Null);
        let cc = &hook["clientConfig"];
        let url = match cc.get("url").and_then(Value::as_str) {
            Some(u) => u.to_string(),
            None => {
                let svc = &cc["service"];
                let s = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or("");
                let port = svc.get("port").and_then(Value::as_i64).unwrap_or(443);
                format!(
                    "https://{}.{}.svc:{port}{}",
                    s("name"),
                    s("namespace"),
                    s("path")
                )
            }
        };
        let review = hook["conversionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find_map(|v| match v {
                "v1" => Some("apiextensions.k8s.io/v1"),
                "v1beta1" => Some("apiextensions.k8s.io/v1beta1"),
                _ => None,
            });
        let client = client(cc.get("caBundle").and_then(Value::as_str));
        Conversion::Webhook(Webhook {
            url,
            client,
            review,
        })
    }
}

fn client(ca_bundle: Option<&str>) -> Result<reqwest::Client, String> {
    use base64::Engine;
    let mut b = reqwest::Client::builder()
        .use_rustls_tls()
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_secs(10));
    if let Some(ca) = ca_bundle.filter(|c| !c.is_empty()) {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .map_err(|e| format!("invalid caBundle: {e}"))?;
        for cert in reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("invalid caBundle: {e}"))?
        {
            b = b.add_root_certificate(cert);
        }
    }
    b.build().map_err(|e| e.to_string())
}

/// `group/version, Kind=Kind` of an object, as Go prints a GroupVersionKind.
fn gvk(obj: &Value) -> String {
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    match api.split_once('/') {
        Some(_) => format!("{api}, Kind={kind}"),
        None => format!("/{api}, Kind={kind}"),
    }
}

fn meta_str<'a>(o: &'a Value, k: &str) -> &'a str {
    o.pointer(&format!("/metadata/{k}"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Runs `f` on this thread's runtime, blocking the thread (not the runtime) meanwhile.
fn block_on<F: std::future::Future>(f: F) -> Result<F::Output, String> {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            Ok(tokio::task::block_in_place(|| h.block_on(f)))
        }
        _ => Err("conversion webhooks need the server's multi-threaded runtime".into()),
    }
}

impl Webhook {
    /// Converts `objs` (each of any version) to `desired` (`group/version`) in one review.
    pub fn convert(&self, objs: &mut [Value], desired: &str) -> Result<(), ConversionError> {
        let todo: Vec<usize> = (0..objs.len())
            .filter(|i| objs[*i].get("apiVersion").and_then(Value::as_str) != Some(desired))
            .collect();
        let Some(first) = todo.first() else {
            return Ok(());
        };
        let what = gvk(&objs[*first]);
        let fail =
            |e: String| ConversionError(format!("conversion webhook for {what} failed: {e}"));
        let review = self
            .review
            .ok_or_else(|| fail("no supported conversion review versions".into()))?;
        let uid = uuid::Uuid::new_v4().to_string();
        let sent: Vec<Value> = todo.iter().map(|i| objs[*i].clone()).collect();
        let body = json!({"apiVersion": review, "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": sent}});
        let client = self.client.as_ref().map_err(|e| fail(e.clone()))?;
        let url = self.url.clone();
        let reply: Result<Value, String> = block_on(async move {
            let resp = client
                .post(&url)
                .json(&body)
                .send()
                .await
                .map_err(|e| format!("Post {url:?}: {}", error_chain(&e)))?;
            let code = resp.status();
            let text = resp.text().await.map_err(|e| e.to_string())?;
            if !code.is_success() {
                return Err(format!(
                    "the server responded with the status code {} but did not return more information",
                    code.as_u16()
                ));
            }
            serde_json::from_str(&text).map_err(|e| format!("invalid response: {e}"))
        })
        .map_err(fail)?;
        let reply = reply.map_err(fail)?;
        let converted = converted_objects(&reply, review, &uid).map_err(fail)?;
        if converted.len() != todo.len() {
            return Err(ConversionError(format!(
                "conversion webhook for {what} returned {} objects, expected {}",
                converted.len(),
                todo.len()
            )));
        }
        for (n, (i, mut out)) in todo.iter().zip(converted).enumerate() {
            let original = &objs[*i];
            let bad = |e: String| {
                ConversionError(format!(
                    "conversion webhook for {what} returned invalid converted object at index {n}: {e}"
                ))
            };
            let got = out.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            if got != desired {
                return Err(bad(format!(
                    "invalid groupVersion (expected {desired}, received {got})"
                )));
            }
            let (ek, gk) = (
                original.get("kind").and_then(Value::as_str).unwrap_or(""),
                out.get("kind").and_then(Value::as_str).unwrap_or(""),
            );
            if ek != gk {
                return Err(bad(format!("invalid kind (expected {ek}, received {gk})")));
            }
            for (f, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
                let (a, b) = (meta_str(original, f), meta_str(&out, f));
                if a != b {
                    return Err(bad(format!("must have the same {what}: {a} != {b}")));
                }
            }
            restore_metadata(original, &mut out).map_err(|e| {
                ConversionError(format!(
                    "conversion webhook for {what} returned invalid metadata in object at index {n}: {e}"
                ))
            })?;
            objs[*i] = out;
        }
        Ok(())
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// kube's `getConvertedObjectsFromResponse`.
fn converted_objects(reply: &Value, review: &str, uid: &str) -> Result<Vec<Value>, String> {
    let (api, kind) = (
        reply
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or(""),
        reply.get("kind").and_then(Value::as_str).unwrap_or(""),
    );
    if api != review || kind != "ConversionReview" {
        return Err(format!(
            "expected webhook response of {review}, Kind=ConversionReview, got {api}, Kind={kind}"
        ));
    }
    let resp = reply
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("no response provided")?;
    let got = resp.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    let status = resp
        .pointer("/result/status")
        .and_then(Value::as_str)
        .unwrap_or("");
    if status != "Success" {
        let msg = resp
            .pointer("/result/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !msg.is_empty() {
            return Err(msg.to_string());
        }
        return Err(format!(
            "response.result.status was '{status}', not 'Success'"
        ));
    }
    Ok(resp
        .get("convertedObjects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// kube's `restoreObjectMeta`: the original metadata, with the converted labels and
/// annotations (which must be maps of strings).
fn restore_metadata(original: &Value, out: &mut Value) -> Result<(), String> {
    let converted = match out.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
        None => return Err("missing metadata in converted object".into()),
    };
    let mut meta: Map<String, Value> = original
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for f in ["labels", "annotations"] {
        match converted.get(f) {
            None | Some(Value::Null) => {
                meta.remove(f);
            }
            Some(Value::Object(m)) => {
                if let Some((k, v)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{f}[{k}] must be a string, but is {} in converted object",
                        go_type(v)
                    ));
                }
                meta.insert(f.to_string(), Value::Object(m.clone()));
            }
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{f} of type {} in converted object",
                    go_type(other)
                ))
            }
        }
    }
    out["metadata"] = Value::Object(meta);
    Ok(())
}

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "int64",
        Value::Bool(_) => "bool",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_checked() {
        let ok = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Success"}, "convertedObjects": [{}]}});
        assert_eq!(
            converted_objects(&ok, "apiextensions.k8s.io/v1", "u")
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            converted_objects(&ok, "apiextensions.k8s.io/v1", "x").unwrap_err(),
            "expected response.uid=\"x\", got \"u\""
        );
        let failed = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "u", "result": {"status": "Failure", "message": "nope"}}});
        assert_eq!(
            converted_objects(&failed, "apiextensions.k8s.io/v1", "u").unwrap_err(),
            "nope"
        );
    }

    #[test]
    fn only_labels_and_annotations_come_back() {
        let original = json!({"metadata": {"name": "a", "uid": "1", "labels": {"x": "1"}}});
        let mut out = json!({"metadata": {"name": "a", "uid": "1", "generation": 9,
            "labels": {"y": "2"}, "annotations": {"n": "m"}}});
        restore_metadata(&original, &mut out).unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "a", "uid": "1", "labels": {"y": "2"}, "annotations": {"n": "m"}})
        );
        let mut bad = json!({"metadata": {"labels": {"y": 2}}});
        assert_eq!(
            restore_metadata(&original, &mut bad).unwrap_err(),
            "metadata.labels[y] must be a string, but is int64 in converted object"
        );
    }
}
