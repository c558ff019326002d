//! `EventRateLimit`: token buckets on core Event creates and updates, configured by an
//! `eventratelimit.admission.k8s.io/v1alpha1` `Configuration` whose `limits` each name a
//! `type` (`Server`: one bucket; `Namespace`, `User`, `SourceAndObject`: a bucket per key, the
//! `cacheSize` most recently used kept, 4096 by default), a `qps` refill rate and a `burst`.
//! A request every bucket of its keys cannot pay for is refused with 429 `Too many requests:
//! limit reached on type <type> for key <key>`; dry runs are not counted. The configuration
//! is required and validated as kube does.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

const DEFAULT_CACHE_SIZE: usize = 4096;
const TYPES: &[&str] = &["Server", "Namespace", "User", "SourceAndObject"];

/// `x/time/rate`'s limiter as client-go's token bucket uses it: starts full.
#[derive(Clone, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Buckets by key, each with the tick it was last used at, and the current tick.
type Buckets = (HashMap<String, (Bucket, u64)>, u64);

struct Limit {
    kind: String,
    qps: f64,
    burst: f64,
    cache_size: usize,
    /// The least recently used bucket is evicted when the cache is full.
    buckets: Mutex<Buckets>,
}

impl Limit {
    fn key(&self, a: &Attributes) -> String {
        match self.kind.as_str() {
            "Namespace" => a.namespace.clone(),
            "User" => a.user.name.clone(),
            "SourceAndObject" => {
                let Some(ev) = &a.object else {
                    return String::new();
                };
                let s = |p: &str| ev.pointer(p).and_then(Value::as_str).unwrap_or("");
                [
                    "/source/component",
                    "/source/host",
                    "/involvedObject/kind",
                    "/involvedObject/namespace",
                    "/involvedObject/name",
                    "/involvedObject/uid",
                    "/involvedObject/apiVersion",
                ]
                .iter()
                .map(|p| s(p))
                .collect()
            }
            _ => String::new(),
        }
    }

    /// `TryAccept` on the key's bucket (created full when new).
    fn accept(&self, key: &str) -> bool {
        let now = Instant::now();
        let mut guard = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let (map, tick) = &mut *guard;
        *tick += 1;
        if !map.contains_key(key) && map.len() >= self.cache_size.max(1) {
            if let Some(oldest) = map
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| k.clone())
            {
                map.remove(&oldest);
            }
        }
        let (bucket, used) = map.entry(key.to_string()).or_insert_with(|| {
            (
                Bucket {
                    tokens: self.burst,
                    at: now,
                },
                0,
            )
        });
        *used = *tick;
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

pub struct EventRateLimit {
    limits: Vec<Limit>,
}

/// `%#v` of a Go value for the field errors.
fn go_value(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "0".into(),
        Some(v) => v.to_string(),
    }
}

impl EventRateLimit {
    /// The plugin from its configuration (kube's decoding and `ValidateConfiguration`).
    pub fn new(config: Option<Value>) -> Result<EventRateLimit, String> {
        let config = config.unwrap_or(Value::Null);
        if !config.is_null() {
            let api = config
                .get("apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let kind = config.get("kind").and_then(Value::as_str).unwrap_or("");
            if api != "eventratelimit.admission.k8s.io/v1alpha1" || kind != "Configuration" {
                return Err(format!(
                    "no kind {kind:?} is registered for version {api:?} in scheme \"pkg/runtime/scheme.go:100\""
                ));
            }
        }
        let limits = config
            .get("limits")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut errs = Vec::new();
        if limits.is_empty() {
            errs.push(format!(
                "limits: Invalid value: []eventratelimit.Limit{}: must not be empty",
                if config.get("limits").is_some_and(Value::is_array) {
                    "{}"
                } else {
                    "(nil)"
                }
            ));
        }
        let mut out = Vec::new();
        for (i, l) in limits.iter().enumerate() {
            let kind = l.get("type").and_then(Value::as_str).unwrap_or("");
            if !TYPES.contains(&kind) {
                let supported: Vec<String> = TYPES.iter().map(|t| format!("{t:?}")).collect();
                errs.push(format!(
                    "limits[{i}].type: Unsupported value: {kind:?}: supported values: {}",
                    supported.join(", ")
                ));
            }
            let num = |f: &str| l.get(f).and_then(Value::as_i64).unwrap_or(0);
            if num("burst") <= 0 {
                errs.push(format!(
                    "limits[{i}].burst: Invalid value: {}: must be positive",
                    go_value(l.get("burst"))
                ));
            }
            if num("qps") <= 0 {
                errs.push(format!(
                    "limits[{i}].qps: Invalid value: {}: must be positive",
                    go_value(l.get("qps"))
                ));
            }
            if kind != "Server" && num("cacheSize") < 0 {
                errs.push(format!(
                    "limits[{i}].cacheSize: Invalid value: {}: must not be negative",
                    num("cacheSize")
                ));
            }
            let cache = match num("cacheSize") {
                n if n > 0 => n as usize,
                _ => DEFAULT_CACHE_SIZE,
            };
            out.push(Limit {
                kind: kind.to_string(),
                qps: num("qps") as f64,
                burst: num("burst") as f64,
                cache_size: if kind == "Server" { 1 } else { cache },
                buckets: Mutex::new((HashMap::new(), 0)),
            });
        }
        match errs.len() {
            0 => Ok(EventRateLimit { limits: out }),
            1 => Err(errs.remove(0)),
            _ => Err(format!("[{}]", errs.join(", "))),
        }
    }
}

#[async_trait::async_trait]
impl Plugin for EventRateLimit {
    fn name(&self) -> &'static str {
        "EventRateLimit"
    }

    async fn validate(&self, a: &Attributes, _h: &Handle) -> Result<(), Status> {
        if !matches!(a.operation, Operation::Create | Operation::Update)
            || !a.resource.group.is_empty()
            || a.kind() != "Event"
            || a.dry_run
        {
            return Ok(());
        }
        let refused: Vec<String> = self
            .limits
            .iter()
            .filter_map(|l| {
                let key = l.key(a);
                (!l.accept(&key)).then(|| format!("limit reached on type {} for key {key}", l.kind))
            })
            .collect();
        let message = match refused.len() {
            0 => return Ok(()),
            1 => refused[0].clone(),
            _ => format!("[{}]", refused.join(", ")),
        };
        Err(Status::new(
            429,
            "TooManyRequests",
            format!("Too many requests: {message}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(limits: Value) -> Value {
        json!({"apiVersion": "eventratelimit.admission.k8s.io/v1alpha1", "kind": "Configuration", "limits": limits})
    }

    #[test]
    fn configurations_are_validated() {
        let e = EventRateLimit::new(None).err().unwrap();
        assert_eq!(
            e,
            "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"
        );
        let e = EventRateLimit::new(Some(cfg(json!([{"type": "Server", "qps": 1}]))))
            .err()
            .unwrap();
        assert_eq!(e, "limits[0].burst: Invalid value: 0: must be positive");
        let e = EventRateLimit::new(Some(json!({"apiVersion": "v1", "kind": "X"})))
            .err()
            .unwrap();
        assert!(e.starts_with("no kind \"X\" is registered"), "{e}");
        assert!(
            EventRateLimit::new(Some(cfg(json!([{"type": "User", "qps": 1, "burst": 2}])))).is_ok()
        );
    }

    #[test]
    fn buckets_refill_and_evict() {
        let l = Limit {
            kind: "Namespace".into(),
            qps: 1000.0,
            burst: 1.0,
            cache_size: 1,
            buckets: Mutex::new((HashMap::new(), 0)),
        };
        assert!(l.accept("a"));
        assert!(l.accept("b"), "a new key has its own full bucket");
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(l.accept("b"), "refilled");
        assert_eq!(l.buckets.lock().unwrap().0.len(), 1, "a was evicted");
    }
}
