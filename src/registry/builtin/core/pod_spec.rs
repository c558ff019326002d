//! Defaults shared by every object that embeds a PodSpec (pods, pod templates and the
//! workload kinds' templates): kube's `SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_Volume`, `SetDefaults_Probe` and friends.

use serde_json::{json, Map, Value};

/// The template of a workload's `spec` (a PodTemplateSpec), if it has one.
pub fn default_template(spec: &mut Map<String, Value>) {
    if let Some(t) = spec.get_mut("template").and_then(Value::as_object_mut) {
        default_template_object(t);
    }
}

/// A PodTemplateSpec.
pub fn default_template_object(t: &mut Map<String, Value>) {
    t.entry("metadata").or_insert(json!({}));
    let ps = t.entry("spec").or_insert(json!({}));
    if let Some(ps) = ps.as_object_mut() {
        default_pod_spec(ps);
    }
}

/// Volume sources that have a `defaultMode` (0644).
const MODE_SOURCES: &[&str] = &["secret", "configMap", "downwardAPI", "projected"];

fn default_volume(v: &mut Map<String, Value>) {
    // A volume with no source is an emptyDir.
    if v.iter().all(|(k, val)| k == "name" || val.is_null()) {
        v.insert("emptyDir".into(), json!({}));
    }
    for src in MODE_SOURCES {
        if let Some(s) = v.get_mut(*src).and_then(Value::as_object_mut) {
            s.entry("defaultMode").or_insert(json!(420));
        }
    }
    if let Some(h) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        h.entry("type").or_insert(json!(""));
    }
}

fn default_probe(p: &mut Map<String, Value>) {
    p.entry("timeoutSeconds").or_insert(json!(1));
    p.entry("periodSeconds").or_insert(json!(10));
    p.entry("successThreshold").or_insert(json!(1));
    p.entry("failureThreshold").or_insert(json!(3));
    if let Some(h) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
        h.entry("path").or_insert(json!("/"));
        h.entry("scheme").or_insert(json!("HTTP"));
    }
}

/// A PodSpec.
pub fn default_pod_spec(ps: &mut Map<String, Value>) {
    ps.entry("restartPolicy").or_insert(json!("Always"));
    ps.entry("terminationGracePeriodSeconds")
        .or_insert(json!(30));
    ps.entry("dnsPolicy").or_insert(json!("ClusterFirst"));
    ps.entry("securityContext").or_insert(json!({}));
    ps.entry("schedulerName")
        .or_insert(json!("default-scheduler"));
    if let Some(vs) = ps.get_mut("volumes").and_then(Value::as_array_mut) {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            default_volume(v);
        }
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(cs) = ps.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                c.entry("terminationMessagePath")
                    .or_insert(json!("/dev/termination-log"));
                c.entry("terminationMessagePolicy").or_insert(json!("File"));
                c.entry("resources").or_insert(json!({}));
                let image = c
                    .get("image")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                c.entry("imagePullPolicy")
                    .or_insert(json!(pull_policy(&image)));
                if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
                    for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                        p.entry("protocol").or_insert(json!("TCP"));
                    }
                }
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
                        default_probe(p);
                    }
                }
                if let Some(env) = c.get_mut("env").and_then(Value::as_array_mut) {
                    for e in env.iter_mut() {
                        if let Some(f) = e
                            .pointer_mut("/valueFrom/fieldRef")
                            .and_then(Value::as_object_mut)
                        {
                            f.entry("apiVersion").or_insert(json!("v1"));
                        }
                    }
                }
            }
        }
    }
}

/// `Always` for `:latest` or untagged images, else `IfNotPresent`.
pub fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        None => "Always",
        Some((_, "latest")) => "Always",
        Some(_) => "IfNotPresent",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies() {
        for (image, want) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("app@sha256:abc", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), want, "{image}");
        }
    }
}
