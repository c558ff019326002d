//! kube's `ServiceAccount` plugin, for pods on create: a pod without `serviceAccountName`
//! gets `default`; the service account must exist (looked up again for a while when it is
//! `default`, which the `serviceaccount` controller creates with the namespace); unless
//! `automountServiceAccountToken` is false on the pod (or else on the account) every
//! container and init container mounts a projected `kube-api-access-<random>` volume (bound
//! token, `kube-root-ca.crt`'s `ca.crt`, the namespace) at
//! `/var/run/secrets/kubernetes.io/serviceaccount`; the account's `imagePullSecrets` are
//! copied when the pod has none. Mirror pods (`kubernetes.io/config.mirror`) are not changed
//! and may not reference service accounts, secrets or token projections. An account
//! annotated `kubernetes.io/enforce-mountable-secrets: "true"` limits its pods (and the
//! ephemeral containers added to them) to the secrets it lists: secret volumes, env and
//! envFrom references in its `secrets`, image pull secrets in its `imagePullSecrets`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::admission::{Attributes, Handle, Operation, Plugin};
use crate::meta::status::Status;

pub const MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const VOLUME_PREFIX: &str = "kube-api-access-";
const MIRROR: &str = "kubernetes.io/config.mirror";
/// `serviceaccount.WarnOnlyBoundTokenExpirationSeconds`.
const EXPIRATION_SECONDS: i64 = 3607;

pub struct ServiceAccount;

const ENFORCE_MOUNTABLE: &str = "kubernetes.io/enforce-mountable-secrets";

/// `enforceMountableSecrets`: the account's annotation, read as Go's `strconv.ParseBool`
/// (anything else is false).
fn enforces_mountable_secrets(sa: &Value) -> bool {
    let v = sa
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(ENFORCE_MOUNTABLE))
        .and_then(Value::as_str);
    matches!(v, Some("1" | "t" | "T" | "true" | "TRUE" | "True"))
}

/// The names listed under `field` (`secrets`, `imagePullSecrets`) of the account.
fn listed(sa: &Value, field: &str) -> Vec<String> {
    sa.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            r.get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn name_of(v: &Value) -> &str {
    v.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The env and envFrom secret references of the containers in `list`, kube's texts with
/// `kind` (`init container`, `container`, `ephemeral container`).
fn limit_container_secrets(
    spec: &Value,
    list: &str,
    kind: &str,
    mountable: &[String],
    sa: &str,
) -> Result<(), String> {
    let allowed = |n: &str| mountable.iter().any(|m| m == n);
    for c in items(spec, list) {
        for e in items(c, "env") {
            if let Some(r) = e
                .pointer("/valueFrom/secretKeyRef")
                .filter(|r| !r.is_null())
            {
                if !allowed(name_of(r)) {
                    return Err(format!(
                        "{kind} {} with envVar {} referencing secret.secretName=\"{}\" is not allowed because service account {sa} does not reference that secret",
                        name_of(c),
                        name_of(e),
                        name_of(r)
                    ));
                }
            }
        }
        for e in items(c, "envFrom") {
            if let Some(r) = e.get("secretRef").filter(|r| !r.is_null()) {
                if !allowed(name_of(r)) {
                    return Err(format!(
                        "{kind} {} with envFrom referencing secret.secretName=\"{}\" is not allowed because service account {sa} does not reference that secret",
                        name_of(c),
                        name_of(r)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `limitSecretReferences`: secret volumes, init and regular containers' env and envFrom,
/// then image pull secrets, in kube's order and texts.
fn limit_secret_references(sa: &Value, pod: &Value) -> Result<(), String> {
    let sa_name = name_of(sa.get("metadata").unwrap_or(&Value::Null));
    let mountable = listed(sa, "secrets");
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    for v in items(spec, "volumes") {
        let Some(secret) = v.get("secret").filter(|s| !s.is_null()) else {
            continue;
        };
        let name = secret
            .get("secretName")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !mountable.iter().any(|m| m == name) {
            return Err(format!(
                "volume with secret.secretName=\"{name}\" is not allowed because service account {sa_name} does not reference that secret"
            ));
        }
    }
    limit_container_secrets(
        spec,
        "initContainers",
        "init container",
        &mountable,
        sa_name,
    )?;
    limit_container_secrets(spec, "containers", "container", &mountable, sa_name)?;
    let pull = listed(sa, "imagePullSecrets");
    for (i, r) in items(spec, "imagePullSecrets").enumerate() {
        if !pull.iter().any(|p| p == name_of(r)) {
            return Err(format!(
                "imagePullSecrets[{i}].name=\"{}\" is not allowed because service account {sa_name} does not reference that imagePullSecret",
                name_of(r)
            ));
        }
    }
    Ok(())
}

/// The ServiceAccount a pod names (kube's texts when it names none or a missing one).
async fn pod_service_account(a: &Attributes, h: &Handle, pod: &Value) -> Result<Value, Status> {
    let name = pod
        .pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        return Err(a.forbidden(format!(
            "no service account specified for pod {}/{}",
            a.namespace, a.name
        )));
    }
    lookup(h, &a.namespace, name)
        .await
        .ok_or_else(|| not_found(a, name))
}

/// `limitEphemeralContainerSecretReferences`: a `pods/ephemeralcontainers` update.
async fn limit_ephemeral(a: &Attributes, h: &Handle) -> Result<(), Status> {
    let Some(pod) = a.object.as_ref() else {
        return Ok(());
    };
    let sa = pod_service_account(a, h, pod).await?;
    if !enforces_mountable_secrets(&sa) {
        return Ok(());
    }
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    limit_container_secrets(
        spec,
        "ephemeralContainers",
        "ephemeral container",
        &listed(&sa, "secrets"),
        pod.pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or(""),
    )
    .map_err(|e| a.forbidden(e))
}

fn ephemeral_update(a: &Attributes) -> bool {
    a.operation == Operation::Update
        && matches!(a.subresource.as_str(), "ephemeralcontainers")
        && a.resource.group.is_empty()
        && a.resource.kind == "Pod"
}

fn applies(a: &Attributes) -> bool {
    a.operation == Operation::Create
        && a.subresource.is_empty()
        && a.resource.group.is_empty()
        && a.resource.kind == "Pod"
        && a.object.is_some()
}

fn is_mirror(pod: &Value) -> bool {
    pod.pointer(&format!(
        "/metadata/annotations/{}",
        MIRROR.replace('/', "~1")
    ))
    .is_some()
}

/// `getServiceAccount`: `default` is looked up several times (the controller may not have
/// created it yet), any other name once.
async fn lookup(h: &Handle, ns: &str, name: &str) -> Option<Value> {
    let attempts = if name == "default" { 10 } else { 1 };
    let pause = Duration::from_millis(100 + rand::random::<u64>() % 100);
    for i in 0..attempts {
        if i > 0 {
            tokio::time::sleep(pause).await;
        }
        if let Some(sa) = h.get("", "v1", "serviceaccounts", Some(ns), name).await {
            return Some(sa);
        }
    }
    None
}

fn not_found(a: &Attributes, name: &str) -> Status {
    a.forbidden(format!(
        "error looking up service account {}/{name}: serviceaccount \"{name}\" not found",
        a.namespace
    ))
}

fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::thread_rng();
    (0..5)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

/// `TokenVolumeSource`.
fn token_volume(name: &str) -> Value {
    json!({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ]}})
}

/// `mountServiceAccountToken`.
fn mount_token(pod: &mut Value) {
    let existing = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let name = existing
        .clone()
        .unwrap_or_else(|| format!("{VOLUME_PREFIX}{}", random_suffix()));
    let mount = json!({"name": name, "readOnly": true, "mountPath": MOUNT_PATH});
    let mut needed = false;
    for list in ["initContainers", "containers"] {
        let Some(cs) = pod
            .pointer_mut(&format!("/spec/{list}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in cs.iter_mut().filter_map(Value::as_object_mut) {
            let mounts = c.entry("volumeMounts").or_insert_with(|| json!([]));
            if !mounts.is_array() {
                *mounts = json!([]);
            }
            let Some(mounts) = mounts.as_array_mut() else {
                continue;
            };
            let taken = mounts
                .iter()
                .any(|m| m.get("mountPath").and_then(Value::as_str) == Some(MOUNT_PATH));
            if !taken {
                mounts.push(mount.clone());
                needed = true;
            }
            if mounts.is_empty() {
                c.remove("volumeMounts");
            }
        }
    }
    if existing.is_none() && needed {
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return;
        };
        let vols = spec.entry("volumes").or_insert_with(|| json!([]));
        if !vols.is_array() {
            *vols = json!([]);
        }
        if let Some(v) = vols.as_array_mut() {
            v.push(token_volume(&name));
        }
    }
}

/// Whether the pod names a Secret anywhere (`VisitPodSecretNames`, every container kind).
fn references_secrets(pod: &Value) -> bool {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let arr = |v: &Value, k: &str| -> Vec<Value> {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    if !arr(spec, "imagePullSecrets").is_empty() {
        return true;
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        for c in arr(spec, list) {
            if arr(&c, "envFrom")
                .iter()
                .any(|e| e.get("secretRef").is_some())
                || arr(&c, "env")
                    .iter()
                    .any(|e| e.pointer("/valueFrom/secretKeyRef").is_some())
            {
                return true;
            }
        }
    }
    for v in arr(spec, "volumes") {
        if v.get("secret").is_some()
            || [
                "azureFile",
                "cephfs",
                "cinder",
                "flexVolume",
                "rbd",
                "iscsi",
                "scaleIO",
                "storageos",
                "csi",
            ]
            .iter()
            .any(|k| {
                v.get(*k).is_some_and(|s| {
                    s.get("secretRef").is_some()
                        || s.get("secretName").is_some()
                        || s.get("nodePublishSecretRef").is_some()
                })
            })
            || arr(v.get("projected").unwrap_or(&Value::Null), "sources")
                .iter()
                .any(|s| s.get("secret").is_some())
        {
            return true;
        }
    }
    false
}

fn validate_mirror(a: &Attributes, pod: &Value) -> Result<(), Status> {
    let sa = pod
        .pointer("/spec/serviceAccountName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !sa.is_empty() {
        return Err(a.forbidden("a mirror pod may not reference service accounts"));
    }
    if references_secrets(pod) {
        return Err(a.forbidden("a mirror pod may not reference secrets"));
    }
    let projects_token = pod
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.pointer("/projected/sources").and_then(Value::as_array))
        .flatten()
        .any(|s| s.get("serviceAccountToken").is_some());
    if projects_token {
        return Err(a.forbidden("a mirror pod may not use ServiceAccountToken volume projections"));
    }
    Ok(())
}

#[async_trait::async_trait]
impl Plugin for ServiceAccount {
    fn name(&self) -> &'static str {
        "ServiceAccount"
    }

    /// Mutates pod creates only (the ephemeral-container check is validation's, after the
    /// strategy's own rules).
    async fn admit(&self, a: &mut Attributes, h: &Handle) -> Result<(), Status> {
        if !applies(a) {
            return Ok(());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(());
        };
        if is_mirror(pod) {
            return validate_mirror(a, pod);
        }
        let name = match pod
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
        {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => "default".to_string(),
        };
        let Some(sa) = lookup(h, &a.namespace, &name).await else {
            return Err(not_found(a, &name));
        };
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("serviceAccountName".into(), json!(name));
        }
        let automount = pod
            .pointer("/spec/automountServiceAccountToken")
            .and_then(Value::as_bool)
            .or_else(|| {
                sa.get("automountServiceAccountToken")
                    .and_then(Value::as_bool)
            })
            .unwrap_or(true);
        if automount {
            mount_token(pod);
        }
        let has_pull_secrets = pod
            .pointer("/spec/imagePullSecrets")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        let from_sa: Vec<Value> = sa
            .get("imagePullSecrets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|s| json!({"name": s.get("name").cloned().unwrap_or(json!(""))}))
            .collect();
        if !has_pull_secrets && !from_sa.is_empty() {
            pod["spec"]["imagePullSecrets"] = json!(from_sa);
        }
        // kube's Admit ends with its Validate, whose mountable-secrets check refuses here.
        if enforces_mountable_secrets(&sa) {
            limit_secret_references(&sa, pod).map_err(|e| a.forbidden(e))?;
        }
        Ok(())
    }

    async fn validate(&self, a: &Attributes, h: &Handle) -> Result<(), Status> {
        if ephemeral_update(a) {
            return limit_ephemeral(a, h).await;
        }
        if !applies(a) {
            return Ok(());
        }
        let Some(pod) = a.object.as_ref() else {
            return Ok(());
        };
        if is_mirror(pod) {
            return validate_mirror(a, pod);
        }
        let sa = pod_service_account(a, h, pod).await?;
        if enforces_mountable_secrets(&sa) {
            limit_secret_references(&sa, pod).map_err(|e| a.forbidden(e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_mounted_once() {
        let mut pod = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "volumeMounts": [{"name": "x", "mountPath": MOUNT_PATH}]}]}});
        mount_token(&mut pod);
        let vols = pod["spec"]["volumes"].as_array().unwrap();
        assert_eq!(vols.len(), 1);
        let name = vols[0]["name"].as_str().unwrap();
        assert!(name.starts_with(VOLUME_PREFIX) && name.len() == VOLUME_PREFIX.len() + 5);
        assert_eq!(
            pod["spec"]["containers"][0]["volumeMounts"][0]["name"],
            name
        );
        assert_eq!(
            pod["spec"]["containers"][1]["volumeMounts"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert!(references_secrets(
            &json!({"spec": {"volumes": [{"name": "s", "secret": {"secretName": "x"}}]}})
        ));
    }
}
