//! `ImagePolicyWebhook`: pod creates and updates (and `pods/ephemeralcontainers` writes) are
//! reviewed by a remote service: an `imagepolicy.k8s.io/v1alpha1` `ImageReview` of the
//! images (containers, then init containers; or the ephemeral containers), the pod's
//! `*.image-policy.k8s.io/*` annotations and the namespace is POSTed to the server of the
//! kubeconfig `imagePolicy.kubeConfigFile` names. Answers are cached by review for `allowTTL`
//! (seconds, 5 minutes by default) or `denyTTL` (30 seconds); failed calls are retried on 429
//! and 5xx answers every `retryBackoff` milliseconds (500) growing by half, 5 tries; a
//! backend that still fails admits the pod with `defaultAllow: true` and refuses it
//! otherwise. A TTL of -1 disables that cache. kube's texts and limits.
//!
//! Not as kube: a transport failure's text is reqwest's, not Go's; no audit annotations; no
//! retry on a 503 that sends Retry-After.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::authn::webhook::KubeconfigClient;
use crate::meta::status::Status;
use crate::registry::object::meta;

const CACHE_SIZE: usize = 1024;
const TRIES: usize = 5;

pub struct ImagePolicyWebhook {
    client: KubeconfigClient,
    allow_ttl: Duration,
    deny_ttl: Duration,
    retry_backoff: Duration,
    default_allow: bool,
    /// Review spec (as JSON) → (allowed, reason, expires).
    cache: Mutex<HashMap<String, (bool, String, Instant)>>,
}

/// Go's `time.Duration.String` for the values the range errors print.
fn go_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    let trim = |whole: u128, frac: u128, digits: usize, unit: &str| {
        let f = format!("{frac:0digits$}");
        let f = f.trim_end_matches('0');
        if f.is_empty() {
            format!("{whole}{unit}")
        } else {
            format!("{whole}.{f}{unit}")
        }
    };
    if ns == 0 {
        return "0s".into();
    }
    if ns < 1_000 {
        return format!("{ns}ns");
    }
    if ns < 1_000_000 {
        return trim(ns / 1_000, ns % 1_000, 3, "µs");
    }
    if ns < 1_000_000_000 {
        return trim(ns / 1_000_000, ns % 1_000_000, 6, "ms");
    }
    let (h, rest) = (ns / 3_600_000_000_000, ns % 3_600_000_000_000);
    let (m, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let s = trim(rest / 1_000_000_000, rest % 1_000_000_000, 9, "s");
    match (h, m) {
        (0, 0) => s,
        (0, m) => format!("{m}m{s}"),
        (h, m) => format!("{h}h{m}m{s}"),
    }
}

/// `normalizeConfigDuration`: -1 disables, 0 is the default, else `value × scale` within
/// (min, max].
fn duration(
    value: Option<&Value>,
    scale: Duration,
    min: Duration,
    max: Duration,
    default: Duration,
) -> Result<Duration, String> {
    let v = value.and_then(Value::as_i64).unwrap_or(0);
    match v {
        -1 => return Ok(Duration::ZERO),
        0 => return Ok(default),
        _ => {}
    }
    let d = if v < 0 {
        None
    } else {
        scale.checked_mul(u32::try_from(v).unwrap_or(u32::MAX))
    };
    match d {
        Some(d) if d > min && d <= max => Ok(d),
        _ => {
            let shown = match d {
                Some(d) => go_duration(d),
                None => format!("-{}", go_duration(scale * u32::try_from(-v).unwrap_or(1))),
            };
            Err(format!(
                "valid value is between {} and {}, got {shown}",
                go_duration(min),
                go_duration(max)
            ))
        }
    }
}

impl ImagePolicyWebhook {
    /// The plugin from its configuration (`{"imagePolicy": {...}}`).
    pub fn new(config: Option<Value>) -> Result<ImagePolicyWebhook, String> {
        let Some(config) = config else {
            return Err("no config specified".into());
        };
        let wh = config.get("imagePolicy").cloned().unwrap_or(json!({}));
        let retry_backoff = duration(
            wh.get("retryBackoff"),
            Duration::from_millis(1),
            Duration::from_nanos(1),
            Duration::from_secs(300),
            Duration::from_millis(500),
        )?;
        let allow_ttl = duration(
            wh.get("allowTTL"),
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::from_secs(1800),
            Duration::from_secs(300),
        )?;
        let deny_ttl = duration(
            wh.get("denyTTL"),
            Duration::from_secs(1),
            Duration::from_secs(1),
            Duration::from_secs(1800),
            Duration::from_secs(30),
        )?;
        let file = wh
            .get("kubeConfigFile")
            .and_then(Value::as_str)
            .unwrap_or("");
        let client = KubeconfigClient::load(Path::new(file))?;
        Ok(ImagePolicyWebhook {
            client,
            allow_ttl,
            deny_ttl,
            retry_backoff,
            default_allow: wh.get("defaultAllow").and_then(Value::as_bool) == Some(true),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The backend's answer (allowed, reason), from the cache or a round trip.
    async fn review(&self, spec: &Value) -> Result<(bool, String), String> {
        let key = spec.to_string();
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((allowed, reason, until)) = cache.get(&key) {
                if Instant::now() < *until {
                    return Ok((*allowed, reason.clone()));
                }
            }
        }
        let review = json!({
            "kind": "ImageReview",
            "apiVersion": "imagepolicy.k8s.io/v1alpha1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": {"allowed": false},
        });
        let mut delay = self.retry_backoff;
        let mut attempt = 0;
        let (code, ctype, body) = loop {
            attempt += 1;
            let answer = self.client.post_raw(&review).await?;
            // client-go's DefaultShouldRetry: internal errors, timeouts, too many requests.
            let transient = answer.0 == 429 || (answer.0 >= 500 && answer.0 != 503);
            if !transient || attempt >= TRIES {
                break answer;
            }
            tokio::time::sleep(delay).await;
            delay = delay.mul_f64(1.5);
        };
        if !(200..300).contains(&code) {
            return Err(server_error(code, &ctype, &body));
        }
        let answer: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let status = answer.get("status").cloned().unwrap_or(Value::Null);
        let allowed = status.get("allowed").and_then(Value::as_bool) == Some(true);
        let reason = status
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ttl = if allowed {
            self.allow_ttl
        } else {
            self.deny_ttl
        };
        if !ttl.is_zero() {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            cache.retain(|_, (_, _, until)| *until > now);
            if cache.len() >= CACHE_SIZE {
                if let Some(k) = cache
                    .iter()
                    .min_by_key(|(_, (_, _, until))| *until)
                    .map(|(k, _)| k.clone())
                {
                    cache.remove(&k);
                }
            }
            cache.insert(key, (allowed, reason.clone(), now + ttl));
        }
        Ok((allowed, reason))
    }
}

/// How client-go reports a non-2xx answer: the message of a `Status` body, else
/// `NewGenericServerResponse`'s text for the code (with the body when it is text).
fn server_error(code: u16, ctype: &str, body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        if v.get("kind").and_then(Value::as_str) == Some("Status") {
            if let Some(m) = v.get("message").and_then(Value::as_str) {
                return m.to_string();
            }
        }
    }
    let media = ctype.split(';').next().unwrap_or("").trim();
    let text = media.is_empty() || media.starts_with("text/");
    let shown: String = if text {
        String::from_utf8_lossy(&body[..body.len().min(1024)])
            .trim()
            .to_string()
    } else {
        "unknown".into()
    };
    match code {
        409 => "the server reported a conflict".into(),
        404 => "the server could not find the requested resource".into(),
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 => shown,
        405 => "the server does not allow this method on the requested resource".into(),
        406 | 415 => {
            "the server was unable to respond with a content type that the client supports".into()
        }
        422 => "the server rejected our request due to an error in our request".into(),
        429 => {
            "the server has received too many requests and has asked us to try again later".into()
        }
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        c if c >= 500 => format!(
            "an error on the server ({shown:?}) has prevented the request from succeeding"
        ),
        300..=399 | 100..=199 => format!("Error contacting webhook: {code}"),
        c => format!("the server responded with the status code {c} but did not return more information"),
    }
}

#[async_trait::async_trait]
impl Plugin for ImagePolicyWebhook {
    fn name(&self) -> &'static str {
        "ImagePolicyWebhook"
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        let sub = a.subresource.as_str();
        if !matches!(a.operation, Operation::Create | Operation::Update)
            || !a.resource.group.is_empty()
            || a.kind() != "Pod"
            || !matches!(sub, "" | "ephemeralcontainers")
        {
            return Ok(());
        }
        let Some(pod) = &a.object else {
            return Ok(());
        };
        let spec = pod.get("spec").unwrap_or(&Value::Null);
        let lists: &[&str] = if sub.is_empty() {
            &["containers", "initContainers"]
        } else {
            &["ephemeralContainers"]
        };
        let containers: Vec<Value> = lists
            .iter()
            .flat_map(|k| spec.get(*k).and_then(Value::as_array).into_iter().flatten())
            .map(|c| {
                let image = c.get("image").and_then(Value::as_str).unwrap_or("");
                if image.is_empty() {
                    json!({})
                } else {
                    json!({"image": image})
                }
            })
            .collect();
        let annotations: BTreeMap<String, Value> = meta(pod)
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.contains(".image-policy.k8s.io/"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut review = serde_json::Map::new();
        if !containers.is_empty() {
            review.insert("containers".into(), json!(containers));
        }
        if !annotations.is_empty() {
            review.insert("annotations".into(), json!(annotations));
        }
        if !a.namespace.is_empty() {
            review.insert("namespace".into(), json!(a.namespace));
        }
        match self.review(&Value::Object(review)).await {
            Ok((true, _)) => Ok(()),
            Ok((false, reason)) if !reason.is_empty() => Err(a.forbidden(format!(
                "image policy webhook backend denied one or more images: {reason}"
            ))),
            Ok((false, _)) => Err(a.forbidden("one or more images rejected by webhook backend")),
            Err(_) if self.default_allow => Ok(()),
            Err(e) => Err(a.forbidden(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_go_prints_them() {
        assert_eq!(go_duration(Duration::from_secs(1800)), "30m0s");
        assert_eq!(go_duration(Duration::from_secs(2400)), "40m0s");
        assert_eq!(go_duration(Duration::from_secs(1)), "1s");
        assert_eq!(go_duration(Duration::from_nanos(1)), "1ns");
        assert_eq!(go_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(go_duration(Duration::from_secs(3661)), "1h1m1s");
        let s = Duration::from_secs(1);
        let e = duration(Some(&json!(2400)), s, s, s * 1800, s * 300).unwrap_err();
        assert_eq!(e, "valid value is between 1s and 30m0s, got 40m0s");
        assert_eq!(
            duration(Some(&json!(-1)), s, s, s * 1800, s * 300),
            Ok(Duration::ZERO)
        );
        assert_eq!(duration(None, s, s, s * 1800, s * 300), Ok(s * 300));
    }
}
