//! kube's `PodNodeSelector`: a new pod's node selector is merged with its namespace's
//! (`scheduler.alpha.kubernetes.io/node-selector`, else the configuration's
//! `clusterDefaultNodeSelector`); a conflicting key is refused, and so is a selector outside
//! the namespace's whitelist from the configuration (`podNodeSelectorPluginConfig`:
//! namespace → `k=v,...`).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::{GroupResource, Status};

const ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";

pub struct PodNodeSelector {
    /// `clusterDefaultNodeSelector` and per-namespace whitelists.
    config: BTreeMap<String, String>,
}

type Labels = BTreeMap<String, String>;

impl PodNodeSelector {
    pub fn new(config: Option<Value>) -> PodNodeSelector {
        let config = config
            .as_ref()
            .and_then(|c| {
                c.as_object()?
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("podNodeSelectorPluginConfig"))
                    .map(|(_, v)| v.clone())
            })
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| v.as_str().map(|s| (k, s.to_string())))
            .collect();
        PodNodeSelector { config }
    }

    async fn namespace_selector(&self, a: &Attributes, h: &Handle) -> Result<Labels, Status> {
        let Some(ns) = h.get("", "v1", "namespaces", None, &a.namespace).await else {
            return Err(Status::not_found(
                GroupResource {
                    group: "",
                    resource: "namespaces",
                },
                &a.namespace,
            ));
        };
        let given = ns
            .pointer(&format!(
                "/metadata/annotations/{}",
                ANNOTATION.replace('/', "~1")
            ))
            .and_then(Value::as_str);
        match given {
            Some(s) => to_labels(s).map_err(Status::internal),
            None => to_labels(
                self.config
                    .get("clusterDefaultNodeSelector")
                    .map_or("", String::as_str),
            )
            .map_err(Status::internal),
        }
    }

    async fn check(&self, a: &Attributes, h: &Handle, pod: &Labels) -> Result<Labels, Status> {
        let ns = self.namespace_selector(a, h).await?;
        if conflicts(&ns, pod) {
            return Err(a.forbidden(
                "pod node label selector conflicts with its namespace node label selector",
            ));
        }
        Ok(ns)
    }
}

/// `labels.ConvertSelectorToLabelsMap`.
fn to_labels(s: &str) -> Result<Labels, String> {
    let mut out = Labels::new();
    if s.trim().is_empty() {
        return Ok(out);
    }
    for part in s.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("invalid selector: {s}"));
        };
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

fn conflicts(x: &Labels, y: &Labels) -> bool {
    x.iter().any(|(k, v)| y.get(k).is_some_and(|w| w != v))
}

fn pod_selector(pod: &Value) -> Labels {
    pod.pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

fn applies(a: &Attributes) -> bool {
    a.operation == Operation::Create
        && a.subresource.is_empty()
        && a.resource.group.is_empty()
        && a.resource.kind == "Pod"
        && a.object.is_some()
}

#[async_trait::async_trait]
impl Plugin for PodNodeSelector {
    fn name(&self) -> &'static str {
        "PodNodeSelector"
    }

    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let current = pod_selector(a.object.as_ref().unwrap_or(&Value::Null));
        let mut merged = self.check(a, h, &current).await?;
        merged.extend(current);
        if let Some(spec) = a
            .object
            .as_mut()
            .and_then(|p| p.get_mut("spec"))
            .and_then(Value::as_object_mut)
        {
            if !merged.is_empty() {
                spec.insert("nodeSelector".into(), json!(merged));
            }
        }
        self.validate(a, h).await
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let current = pod_selector(a.object.as_ref().unwrap_or(&Value::Null));
        self.check(a, h, &current).await?;
        let whitelist = to_labels(self.config.get(&a.namespace).map_or("", String::as_str))
            .map_err(Status::internal)?;
        let subset =
            whitelist.is_empty() || current.iter().all(|(k, v)| whitelist.get(k) == Some(v));
        if !subset {
            return Err(a.forbidden(
                "pod node label selector labels conflict with its namespace whitelist",
            ));
        }
        Ok(())
    }
}
