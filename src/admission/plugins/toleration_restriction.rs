//! kube's `PodTolerationRestriction`: a new pod gets its namespace's default tolerations
//! (annotation `scheduler.alpha.kubernetes.io/defaultTolerations`, else the configuration's
//! `default`) merged in, and a pod that is not BestEffort the memory-pressure NoSchedule
//! toleration; then (create and update) every toleration must be covered by the namespace's
//! whitelist (`scheduler.alpha.kubernetes.io/tolerationsWhitelist`, else the configuration's
//! `whitelist`), or the request fails as kube's does (500 with no reason: the plugin's error is
//! not a Status).

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::{GroupResource, Status};

use super::tolerations;

const DEFAULTS: &str = "scheduler.alpha.kubernetes.io/defaultTolerations";
const WHITELIST: &str = "scheduler.alpha.kubernetes.io/tolerationsWhitelist";

pub struct PodTolerationRestriction {
    default: Vec<Value>,
    whitelist: Vec<Value>,
}

impl PodTolerationRestriction {
    pub fn new(config: Option<Value>) -> PodTolerationRestriction {
        let list = |k: &str| {
            config
                .as_ref()
                .and_then(|c| c.get(k))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        PodTolerationRestriction {
            default: list("default"),
            whitelist: list("whitelist"),
        }
    }
}

/// The namespace's tolerations under `annotation` (`None`: not set).
async fn from_namespace(
    a: &Attributes,
    h: &Handle,
    annotation: &str,
) -> Result<Option<Vec<Value>>, Status> {
    let Some(ns) = h.get("", "v1", "namespaces", None, &a.namespace).await else {
        return Err(Status::not_found(
            GroupResource {
                group: "",
                resource: "namespaces",
            },
            &a.namespace,
        ));
    };
    let Some(text) = ns
        .pointer(&format!(
            "/metadata/annotations/{}",
            annotation.replace('/', "~1")
        ))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(ts)) => Ok(Some(ts)),
        Ok(Value::Null) => Ok(None),
        _ => Err(Status::new(
            500,
            "",
            format!(
                "failed to parse the {annotation} annotation of namespace {}",
                a.namespace
            ),
        )),
    }
}

fn applies(a: &Attributes) -> bool {
    matches!(a.operation, Operation::Create | Operation::Update)
        && a.subresource.is_empty()
        && a.resource.group.is_empty()
        && a.resource.kind == "Pod"
        && a.object.is_some()
}

#[async_trait::async_trait]
impl Plugin for PodTolerationRestriction {
    fn name(&self) -> &'static str {
        "PodTolerationRestriction"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let mut extra = Vec::new();
        if a.operation == Operation::Create {
            extra = from_namespace(a, h, DEFAULTS)
                .await?
                .unwrap_or_else(|| self.default.clone());
        }
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        let qos =
            crate::registry::builtin::core::qos::pod_qos(pod.get("spec").unwrap_or(&Value::Null));
        if qos != "BestEffort" {
            extra.push(json!({"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}));
        }
        if !extra.is_empty() {
            let merged = tolerations::merge(&tolerations::of(pod), &extra);
            if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("tolerations".into(), Value::Array(merged));
            }
        }
        self.validate(a, h).await
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let tols = tolerations::of(a.object.as_ref().unwrap_or(&Value::Null));
        if tols.is_empty() {
            return Ok(());
        }
        let (whitelist, scope) = match from_namespace(a, h, WHITELIST).await? {
            Some(w) => (w, "namespace"),
            None => (self.whitelist.clone(), "cluster"),
        };
        let allowed = whitelist.is_empty()
            || tols
                .iter()
                .all(|t| whitelist.iter().any(|w| tolerations::is_superset(w, t)));
        if !allowed {
            return Err(Status::new(
                500,
                "",
                format!("pod tolerations (possibly merged with namespace default tolerations) conflict with its {scope} whitelist"),
            ));
        }
        Ok(())
    }
}
