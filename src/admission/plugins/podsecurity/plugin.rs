//! The `PodSecurity` plugin itself (kube's `plugin/pkg/admission/security/podsecurity` over
//! k8s.io/pod-security-admission's `admission.Admission`), validating creates and updates:
//!
//! - **pods**: the namespace's policy (its labels over the configured defaults); `enforce`
//!   refuses a violating pod (403 `violates PodSecurity "<level>:<version>": ...`), `warn`
//!   adds a `would violate PodSecurity ...` warning to an admitted one. Updates are checked
//!   only when they change an image or the containers; the subresources that cannot change
//!   the pod's spec (status, binding, eviction, exec, attach, log, portforward, proxy) never.
//! - **pod templates** of Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
//!   CronJobs, ReplicationControllers and PodTemplates: warnings only, never enforced.
//! - **namespaces**: invalid level or version labels are refused (422 with kube's texts,
//!   on update only when they changed), and making `enforce` stricter warns about the
//!   existing pods that would violate it (up to 3,000 pods, 1 s), kube's texts and order.
//! - exempt usernames, namespaces and runtime classes are admitted unchecked (an exempt
//!   namespace given a policy is warned that it will be ignored).
//!
//! - **audit annotations** (`pod-security.kubernetes.io/<key>` on the request's
//!   [`crate::admission::AuditAnnotations`], for the audit log): `enforce-policy` (the
//!   enforce level a pod was checked against, `privileged:latest` in a fully privileged
//!   namespace), `audit-violations` (`would violate PodSecurity ...` against the `audit`
//!   level, pods and templates), `exempt` (`namespace`, `user` or `runtimeClass`) and
//!   `error` (invalid policy labels, an unreadable namespace of a pod controller).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::checks::evaluate;
use super::config::{self, Config};
use super::levels::{policy_to_evaluate, sets_mode, Level, LevelVersion, Policy};
use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::field_error::{aggregate_message, go_quote, FieldError};
use crate::meta::status::Status;
use crate::registry::store::{ReadAt, Scope};

/// What kind of object a request carries, for this plugin.
#[derive(Clone, Copy)]
enum Target {
    Namespace,
    Pod,
    /// A pod template at this JSON pointer; `true`: the template may be absent (kube's
    /// pointer field), and then there is nothing to check.
    Template(&'static str, bool),
}

/// The resources PodSecurity looks at (kube's `applicableResources` and
/// `defaultPodSpecResources`).
const RESOURCES: &[(&str, &str, Target)] = &[
    ("", "namespaces", Target::Namespace),
    ("", "pods", Target::Pod),
    (
        "",
        "replicationcontrollers",
        Target::Template("/spec/template", true),
    ),
    ("", "podtemplates", Target::Template("/template", false)),
    (
        "apps",
        "replicasets",
        Target::Template("/spec/template", false),
    ),
    (
        "apps",
        "deployments",
        Target::Template("/spec/template", false),
    ),
    (
        "apps",
        "statefulsets",
        Target::Template("/spec/template", false),
    ),
    (
        "apps",
        "daemonsets",
        Target::Template("/spec/template", false),
    ),
    ("batch", "jobs", Target::Template("/spec/template", false)),
    (
        "batch",
        "cronjobs",
        Target::Template("/spec/jobTemplate/spec/template", false),
    ),
];

/// Pod subresources that cannot change what the checks look at.
const IGNORED_POD_SUBRESOURCES: &[&str] = &[
    "exec",
    "attach",
    "binding",
    "eviction",
    "log",
    "portforward",
    "proxy",
    "status",
];

/// At most this many existing pods are checked when a namespace's enforce level tightens,
/// for at most this long.
const NAMESPACE_MAX_PODS: usize = 3000;
const NAMESPACE_POD_CHECK_TIMEOUT: Duration = Duration::from_secs(1);

pub struct PodSecurity {
    cfg: Config,
}

impl PodSecurity {
    /// The plugin with its configuration (`None`: everything privileged, no exemptions).
    pub fn new(config: Option<&Value>) -> Result<PodSecurity, String> {
        Ok(PodSecurity {
            cfg: config::parse(config)?,
        })
    }

    fn exempt_namespace(&self, ns: &str) -> bool {
        !ns.is_empty() && self.cfg.namespaces.iter().any(|n| n == ns)
    }

    fn exempt_user(&self, user: &str) -> bool {
        !user.is_empty() && self.cfg.usernames.iter().any(|u| u == user)
    }

    fn exempt_runtime_class(&self, spec: &Value) -> bool {
        match spec.get("runtimeClassName").and_then(Value::as_str) {
            Some(rc) if !rc.is_empty() => self.cfg.runtime_classes.iter().any(|r| r == rc),
            _ => false,
        }
    }

    /// The policy of namespace `ns` (`None`: no such namespace), with the errors of its
    /// invalid labels. The replica's state first; a namespace missing there is read again
    /// at the latest revision (kube: its informer's cache, then the API).
    async fn namespace_policy(&self, h: &Handle, ns: &str) -> Option<(Policy, Vec<FieldError>)> {
        let obj = match h.get("", "v1", "namespaces", None, ns).await {
            Some(o) => o,
            None => {
                let info = h.store.registry().builtin("", "v1", "namespaces");
                let scope = Scope {
                    info: &info,
                    namespace: None,
                };
                h.store.get(scope, ns, ReadAt::Latest).await.ok()?
            }
        };
        Some(policy_to_evaluate(labels(&obj), self.cfg.defaults))
    }

    async fn namespace(&self, a: &Attributes, h: &Handle) -> Result<Vec<String>, Status> {
        let (Some(obj), true) = (&a.object, a.subresource.is_empty()) else {
            return Ok(Vec::new());
        };
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or(&a.name)
            .to_string();
        let (new, new_errs) = policy_to_evaluate(labels(obj), self.cfg.defaults);
        let invalid = |errs| Status::invalid("Namespace", "", &name, errs);
        let exempt_warning = || {
            self.exempt_namespace_warning(&name, &new, labels(obj))
                .into_iter()
                .collect()
        };
        match a.operation {
            Operation::Create => {
                if !new_errs.is_empty() {
                    return Err(invalid(&new_errs));
                }
                if self.exempt_namespace(&name) {
                    return Ok(exempt_warning());
                }
                Ok(Vec::new())
            }
            Operation::Update => {
                let old_obj = a.old_object.as_ref().unwrap_or(&Value::Null);
                let (old, old_errs) = policy_to_evaluate(labels(old_obj), self.cfg.defaults);
                if !new_errs.is_empty() && (old_errs.is_empty() || new_errs != old_errs) {
                    return Err(invalid(&new_errs));
                }
                let (ne, oe) = (new.enforce, old.enforce);
                if ne == oe
                    || ne.level == Level::Privileged
                    || (ne.version == oe.version && !ne.level.stricter_than(oe.level))
                {
                    return Ok(Vec::new());
                }
                if self.exempt_namespace(&name) {
                    return Ok(exempt_warning());
                }
                Ok(self.evaluate_pods_in_namespace(h, &name, ne).await)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// kube's `exemptNamespaceWarning`: an exempt namespace given a policy other than the
    /// defaults is told that it is ignored, naming the modes its labels set.
    fn exempt_namespace_warning(
        &self,
        ns: &str,
        p: &Policy,
        labels: Option<&Map<String, Value>>,
    ) -> Option<String> {
        if p.fully_privileged() || p.equivalent(&self.cfg.defaults) {
            return None;
        }
        let modes: Vec<String> = [("enforce", p.enforce), ("audit", p.audit), ("warn", p.warn)]
            .iter()
            .filter(|(m, lv)| lv.level != Level::Privileged && sets_mode(labels, m))
            .map(|(m, lv)| format!("{m}={lv}"))
            .collect();
        Some(format!(
            "namespace {} is exempt from Pod Security, and the policy ({}) will be ignored",
            go_quote(ns),
            modes.join(", ")
        ))
    }

    /// kube's `EvaluatePodsInNamespace`: warnings about the existing pods of `ns` that the
    /// new enforce level refuses, one per distinct set of reasons, naming the first pod.
    async fn evaluate_pods_in_namespace(
        &self,
        h: &Handle,
        ns: &str,
        enforce: LevelVersion,
    ) -> Vec<String> {
        let deadline = Instant::now() + NAMESPACE_POD_CHECK_TIMEOUT;
        let pods = self.prioritize(h.list("", "v1", "pods", Some(ns)).await);
        let total = pods.len();
        let mut checked = total.min(NAMESPACE_MAX_PODS);
        let mut reasons: Vec<String> = Vec::new();
        let mut counts: HashMap<String, (String, usize)> = HashMap::new();
        for (i, pod) in pods.iter().take(NAMESPACE_MAX_PODS).enumerate() {
            let r = evaluate(enforce, field(pod, "metadata"), field(pod, "spec"));
            if !r.allowed() {
                let reason = r.reasons();
                let name = pod
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let c = counts.entry(reason.clone()).or_insert_with(|| {
                    reasons.push(reason);
                    (name.to_string(), 0)
                });
                if name < c.0.as_str() {
                    c.0 = name.to_string();
                }
                c.1 += 1;
            }
            if Instant::now() > deadline {
                checked = i + 1;
                break;
            }
        }
        let mut warnings = Vec::new();
        if checked < total {
            warnings.push(format!(
                "new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
            ));
        }
        if !reasons.is_empty() {
            warnings.push(format!(
                "existing pods in namespace {} violate the new PodSecurity enforce level {}",
                go_quote(ns),
                go_quote(&enforce.to_string())
            ));
        }
        let mut decorated: Vec<String> = reasons
            .iter()
            .map(|r| {
                let (pod, n) = &counts[r];
                match n {
                    1 => format!("{pod}: {r}"),
                    2 => format!("{pod} (and 1 other pod): {r}"),
                    n => format!("{pod} (and {} other pods): {r}", n - 1),
                }
            })
            .collect();
        decorated.sort();
        warnings.extend(decorated);
        warnings
    }

    /// kube's `prioritizePods`: pods of exempt runtime classes left out; one pod per
    /// controller first, the other pods of a controller last.
    fn prioritize(&self, pods: Vec<Value>) -> Vec<Value> {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for pod in pods {
            if self.exempt_runtime_class(field(&pod, "spec")) {
                continue;
            }
            let controller = pod
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array)
                .and_then(|refs| {
                    refs.iter()
                        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
                })
                .map(|r| {
                    r.get("uid")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                });
            match controller {
                Some(uid) if !seen.insert(uid.clone()) => rest.push(pod),
                _ => first.push(pod),
            }
        }
        first.extend(rest);
        first
    }

    /// The `exempt` audit annotation of an exempt namespace or user (kube checks the
    /// namespace first).
    fn exempt(&self, a: &Attributes, h: &Handle) -> bool {
        let why = if self.exempt_namespace(&a.namespace) {
            "namespace"
        } else if self.exempt_user(&a.user.name) {
            "user"
        } else {
            return false;
        };
        annotate(h, "exempt", why);
        true
    }

    async fn pod(&self, a: &Attributes, h: &Handle) -> Result<Vec<String>, Status> {
        if IGNORED_POD_SUBRESOURCES.contains(&a.subresource.as_str()) || self.exempt(a, h) {
            return Ok(Vec::new());
        }
        let Some((policy, errs)) = self.namespace_policy(h, &a.namespace).await else {
            return Err(Status::internal(format!(
                "failed to lookup namespace {}",
                go_quote(&a.namespace)
            )));
        };
        if errs.is_empty() && policy.fully_privileged() {
            annotate(h, "enforce-policy", Policy::PRIVILEGED.enforce.to_string());
            return Ok(Vec::new());
        }
        let Some(pod) = &a.object else {
            return Ok(Vec::new());
        };
        if a.operation == Operation::Update {
            if let Some(old) = &a.old_object {
                if !significant_update(pod, old) {
                    return Ok(Vec::new());
                }
            }
        }
        let (meta, spec) = (field(pod, "metadata"), field(pod, "spec"));
        self.evaluate_pod(a, h, &policy, &errs, meta, spec, true)
    }

    async fn template(
        &self,
        a: &Attributes,
        h: &Handle,
        at: &str,
        optional: bool,
    ) -> Result<Vec<String>, Status> {
        if !a.subresource.is_empty() || self.exempt(a, h) {
            return Ok(Vec::new());
        }
        // kube admits a pod controller whose namespace it cannot read.
        let Some((policy, errs)) = self.namespace_policy(h, &a.namespace).await else {
            annotate(
                h,
                "error",
                format!(
                    "failed to lookup namespace {}: namespaces {} not found",
                    go_quote(&a.namespace),
                    go_quote(&a.namespace)
                ),
            );
            return Ok(Vec::new());
        };
        if errs.is_empty()
            && policy.warn.level == Level::Privileged
            && policy.audit.level == Level::Privileged
        {
            return Ok(Vec::new());
        }
        let Some(obj) = &a.object else {
            return Ok(Vec::new());
        };
        let template = match obj.pointer(at) {
            Some(t) if !t.is_null() => t,
            _ if optional => return Ok(Vec::new()),
            _ => &Value::Null,
        };
        let (meta, spec) = (field(template, "metadata"), field(template, "spec"));
        self.evaluate_pod(a, h, &policy, &errs, meta, spec, false)
    }

    /// kube's `EvaluatePod`: enforce (pods only), audit, then warn (unless refused); the
    /// audit annotations are recorded whatever the verdict.
    #[allow(clippy::too_many_arguments)]
    fn evaluate_pod(
        &self,
        a: &Attributes,
        h: &Handle,
        policy: &Policy,
        errs: &[FieldError],
        meta: &Value,
        spec: &Value,
        enforce: bool,
    ) -> Result<Vec<String>, Status> {
        if self.exempt_runtime_class(spec) {
            annotate(h, "exempt", "runtimeClass");
            return Ok(Vec::new());
        }
        if !errs.is_empty() {
            annotate(
                h,
                "error",
                format!("Failed to parse policy: {}", aggregate_message(errs)),
            );
        }
        let mut refused = None;
        if enforce {
            annotate(h, "enforce-policy", policy.enforce.to_string());
            let r = evaluate(policy.enforce, meta, spec);
            if !r.allowed() {
                refused = Some(a.forbidden(format!(
                    "violates PodSecurity {}: {}",
                    go_quote(&policy.enforce.to_string()),
                    r.details()
                )));
            }
        }
        let r = evaluate(policy.audit, meta, spec);
        if !r.allowed() {
            annotate(
                h,
                "audit-violations",
                format!(
                    "would violate PodSecurity {}: {}",
                    go_quote(&policy.audit.to_string()),
                    r.details()
                ),
            );
        }
        if let Some(refused) = refused {
            return Err(refused);
        }
        let r = evaluate(policy.warn, meta, spec);
        if r.allowed() {
            return Ok(Vec::new());
        }
        Ok(vec![format!(
            "would violate PodSecurity {}: {}",
            go_quote(&policy.warn.to_string()),
            r.details()
        )])
    }
}

/// Records the audit annotation `pod-security.kubernetes.io/<key>` (a retried write records
/// the same value again, which is no change).
fn annotate(h: &Handle, key: &str, value: impl Into<String>) {
    let _ = h
        .audit
        .add(format!("pod-security.kubernetes.io/{key}"), value);
}

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or(&Value::Null)
}

fn labels(obj: &Value) -> Option<&Map<String, Value>> {
    obj.pointer("/metadata/labels").and_then(Value::as_object)
}

/// kube's `isSignificantPodUpdate`: a changed number of (init) containers, a changed image,
/// or an added or re-imaged ephemeral container.
fn significant_update(pod: &Value, old: &Value) -> bool {
    let list = |p: &Value, k: &str| -> Vec<Value> {
        p.pointer(&format!("/spec/{k}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let image = |c: &Value| c.get("image").cloned().unwrap_or(Value::Null);
    for k in ["containers", "initContainers"] {
        let (n, o) = (list(pod, k), list(old, k));
        if n.len() != o.len() || n.iter().zip(&o).any(|(a, b)| image(a) != image(b)) {
            return true;
        }
    }
    let old_eph = list(old, "ephemeralContainers");
    list(pod, "ephemeralContainers").iter().any(|c| {
        match old_eph.iter().find(|o| o.get("name") == c.get("name")) {
            None => true,
            Some(o) => image(o) != image(c),
        }
    })
}

#[async_trait::async_trait]
impl Plugin for PodSecurity {
    fn name(&self) -> &'static str {
        "PodSecurity"
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if !matches!(a.operation, Operation::Create | Operation::Update) {
            return Ok(());
        }
        let Some(target) = RESOURCES
            .iter()
            .find(|(g, r, _)| *g == a.resource.group && *r == a.resource.resource)
            .map(|(_, _, t)| *t)
        else {
            return Ok(());
        };
        let warnings = match target {
            Target::Pod => self.pod(a, h).await?,
            Target::Template(at, optional) => self.template(a, h, at, optional).await?,
            Target::Namespace => self.namespace(a, h).await?,
        };
        for w in warnings {
            h.warnings.add(w);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_image_and_container_changes_are_significant() {
        let pod = |image: &str, eph: Value| json!({"spec": {"containers": [{"name": "c", "image": image}], "ephemeralContainers": eph}});
        let old = pod("a", json!([]));
        assert!(!significant_update(&old, &old));
        assert!(significant_update(&pod("b", json!([])), &old));
        let with_debug = pod("a", json!([{"name": "d", "image": "busybox"}]));
        assert!(significant_update(&with_debug, &old));
        assert!(!significant_update(&with_debug, &with_debug));
        let more = json!({"spec": {"containers": [{"name": "c", "image": "a"}, {"name": "e", "image": "a"}]}});
        assert!(significant_update(&more, &old));
    }

    /// A store of one replica in `dir`, with namespaces `(name, labels)`.
    async fn store_with(dir: &std::path::Path, namespaces: &[(&str, Value)]) -> Handle {
        let kv = crate::kv::Kv::open(crate::kv::KvConfig {
            data_dir: dir.to_path_buf(),
            node_id: 1,
            ..Default::default()
        })
        .await
        .unwrap();
        let registry = std::sync::Arc::new(crate::registry::builtin::registry());
        let store = crate::registry::store::Store::new(kv, registry);
        let info = store.registry().builtin("", "v1", "namespaces");
        for (name, labels) in namespaces {
            let scope = Scope {
                info: &info,
                namespace: None,
            };
            let ns = json!({"metadata": {"name": name, "labels": labels}});
            let opts = crate::registry::object::WriteOptions {
                now: "2026-01-01T00:00:00Z".into(),
                ..Default::default()
            };
            store.create(scope, ns, &opts).await.unwrap();
        }
        Handle {
            store,
            authz: None,
            warnings: Default::default(),
            audit: Default::default(),
        }
    }

    fn create(h: &Handle, resource: &str, group: &str, ns: &str, obj: Value) -> Attributes {
        Attributes {
            operation: Operation::Create,
            resource: h.store.registry().builtin(group, "v1", resource),
            subresource: String::new(),
            name: "p".into(),
            namespace: ns.into(),
            object: Some(obj),
            old_object: None,
            options: json!({}),
            dry_run: false,
            user: crate::authn::UserInfo::anonymous(),
            reinvocation: Default::default(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn audit_annotations_follow_kubes_keys() {
        let dir = tempfile::tempdir().unwrap();
        let h = store_with(
            dir.path(),
            &[
                ("open", json!({})),
                (
                    "audited",
                    json!({"pod-security.kubernetes.io/enforce": "baseline",
                           "pod-security.kubernetes.io/audit": "restricted"}),
                ),
                (
                    "strict",
                    json!({"pod-security.kubernetes.io/enforce": "restricted",
                           "pod-security.kubernetes.io/audit": "restricted"}),
                ),
                (
                    "ex",
                    json!({"pod-security.kubernetes.io/enforce": "restricted"}),
                ),
                ("bad", json!({"pod-security.kubernetes.io/audit": "none"})),
            ],
        )
        .await;
        let cfg = json!({"apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration", "exemptions": {"namespaces": ["ex"]}});
        let p = PodSecurity::new(Some(&cfg)).unwrap();
        let plain = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let run = |ns: &'static str, resource: &'static str, group: &'static str, obj: Value| {
            let h = Handle {
                audit: Default::default(),
                ..h.clone()
            };
            let p = &p;
            async move {
                let r = p.validate(&create(&h, resource, group, ns, obj), &h).await;
                (r, h.audit.snapshot())
            }
        };
        let key = |k: &str| format!("pod-security.kubernetes.io/{k}");

        let (r, a) = run("open", "pods", "", plain.clone()).await;
        assert!(r.is_ok());
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[&key("enforce-policy")], "privileged:latest");

        let (r, a) = run("audited", "pods", "", plain.clone()).await;
        assert!(r.is_ok());
        assert_eq!(a[&key("enforce-policy")], "baseline:latest");
        let v = &a[&key("audit-violations")];
        assert!(
            v.starts_with("would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false"),
            "{v}"
        );
        assert_eq!(a.len(), 2, "{a:?}");

        // refused by enforce: the annotations are still recorded
        let (r, a) = run("strict", "pods", "", plain.clone()).await;
        assert_eq!(r.unwrap_err().code, 403);
        assert_eq!(a[&key("enforce-policy")], "restricted:latest");
        assert!(a.contains_key(&key("audit-violations")), "{a:?}");

        // a pod template: audited, never enforced
        let deploy = json!({"metadata": {"name": "p"}, "spec": {"template": plain.clone()}});
        let (r, a) = run("audited", "deployments", "apps", deploy).await;
        assert!(r.is_ok());
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a.contains_key(&key("audit-violations")), "{a:?}");

        let (r, a) = run("ex", "pods", "", plain.clone()).await;
        assert!(r.is_ok());
        assert_eq!(a.len(), 1, "{a:?}");
        assert_eq!(a[&key("exempt")], "namespace");

        let (r, a) = run("bad", "pods", "", plain.clone()).await;
        assert!(r.is_ok());
        assert_eq!(
            a[&key("error")],
            "Failed to parse policy: metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: \"none\": must be one of privileged, baseline, restricted"
        );
        assert_eq!(a[&key("enforce-policy")], "privileged:latest");
    }

    #[test]
    fn exempt_namespaces_are_told_which_modes_are_ignored() {
        let p = PodSecurity::new(None).unwrap();
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "restricted",
            "pod-security.kubernetes.io/warn": "baseline",
            "pod-security.kubernetes.io/warn-version": "v1.25",
            "pod-security.kubernetes.io/audit": "privileged",
        });
        let (policy, _) = policy_to_evaluate(labels.as_object(), Policy::PRIVILEGED);
        assert_eq!(
            p.exempt_namespace_warning("ns", &policy, labels.as_object()).as_deref(),
            Some("namespace \"ns\" is exempt from Pod Security, and the policy (enforce=restricted:latest, warn=baseline:v1.25) will be ignored")
        );
        let (policy, _) = policy_to_evaluate(None, Policy::PRIVILEGED);
        assert_eq!(p.exempt_namespace_warning("ns", &policy, None), None);
    }
}
