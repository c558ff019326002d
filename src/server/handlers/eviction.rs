//! `POST pods/<name>/eviction`: a pod deleted only if its PodDisruptionBudget allows it (kube's
//! `EvictionREST`; what `kubectl drain` and the cluster autoscaler use). The body is a policy/v1
//! (or v1beta1) `Eviction` in any body encoding; its `deleteOptions` apply to the delete.

use http::{Response, StatusCode};
use serde_json::{json, Map, Value};

use super::{delete, respond, Ctx};
use crate::meta::labels::Selector;
use crate::meta::status::{GroupResource, Status};
use crate::registry::object::WriteOptions;
use crate::registry::store::{self, DeleteOptions, ListOptions, Part, ReadAt, Scope};
use crate::server::negotiate::{self, Output};
use crate::server::Body;

/// Evictions refused while the PDB controller has not yet confirmed this many disruptions.
const MAX_DISRUPTED_PODS: usize = 2000;
/// Attempts when another writer changes the pod or its PDB in between.
const RETRIES: usize = 20;

const EVICTION_REFUSED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let query_opts = ctx.write_options("CreateOptions")?;
    let eviction = negotiate::decode_body(ctx.content_type(), &ctx.body)?;
    let Some(eviction) = eviction.as_object() else {
        return Err(Status::bad_request(
            "the body of the request was not a JSON object",
        ));
    };
    match (
        eviction.get("apiVersion").and_then(Value::as_str),
        eviction.get("kind").and_then(Value::as_str),
    ) {
        (Some("policy/v1" | "policy/v1beta1") | None, Some("Eviction") | None) => {}
        (api, kind) => {
            return Err(Status::bad_request(format!(
                "not a Eviction object: {}, Kind={}",
                api.unwrap_or(""),
                kind.unwrap_or("")
            )))
        }
    }
    let name = eviction
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if name != ctx.name() {
        return Err(Status::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    // The eviction's deleteOptions, with the request's dryRun pushed in (they must agree).
    let mut opts = match eviction.get("deleteOptions").and_then(Value::as_object) {
        Some(d) => delete::options_from_body(ctx, d)?,
        None => DeleteOptions {
            write: ctx.write_options("DeleteOptions")?,
            ..Default::default()
        },
    };
    // kube's propagateDryRun: the request's dryRun applies when the body's is empty (both
    // can only be ["All"] once validated, so they never disagree).
    opts.write.dry_run = opts.write.dry_run || query_opts.dry_run;
    opts.write.field_manager = query_opts.field_manager;
    delete::validate(&opts)?;
    // kube admits an eviction once, as a CREATE of pods/eviction with the Eviction as the
    // object; the delete and the budget's update that follow are not admitted again.
    if let (Some(mutate), Some(admit)) = (&query_opts.mutate, &query_opts.admit) {
        let admitted = mutate(Value::Object(eviction.clone()), None).await?;
        admit(&admitted, None).await?;
    }
    (opts.write.mutate, opts.write.admit) = (None, None);
    let rv_given = opts.precondition_rv.is_some();

    let pods = ctx.scope();
    let mut last_err = None;
    for _ in 0..RETRIES {
        let pod = ctx.app.store.get(pods, ctx.name(), ReadAt::Latest).await?;
        match evict(ctx, &pod, &opts).await {
            Ok(resp) => return Ok(resp),
            Err(e) if e.code == 409 && !rv_given && e.reason == "Conflict" => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| Status::stale(pods.gr(), ctx.name())))
}

fn success(ctx: &Ctx) -> Response<Body> {
    let out = ctx.plain_output();
    respond(
        out,
        StatusCode::CREATED,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// One attempt against the pod as read; a 409 Conflict means "read again and retry".
async fn evict(ctx: &Ctx, pod: &Value, opts: &DeleteOptions) -> Result<Response<Body>, Status> {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    let terminating = !store::meta_str(pod, "deletionTimestamp").is_empty();
    let pod_rv = store::meta_str(pod, "resourceVersion").to_string();
    let with_rv = |opts: &DeleteOptions| {
        let mut o = opts.clone();
        if o.precondition_rv.is_none() {
            o.precondition_rv = Some(pod_rv.clone());
        }
        o
    };
    // A pod that is done, not yet running or already going costs no disruption.
    if matches!(phase, "Succeeded" | "Failed" | "Pending") || terminating {
        let enforce = !matches!(phase, "Succeeded" | "Failed") && !terminating;
        let o = if enforce { with_rv(opts) } else { opts.clone() };
        ctx.app.store.delete(ctx.scope(), ctx.name(), &o).await?;
        return Ok(success(ctx));
    }
    let pdbs = matching_budgets(ctx, pod).await?;
    if pdbs.len() > 1 {
        return Ok(respond(
            Output::Json,
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    "code": 500}),
        ));
    }
    let mut delete_opts = opts.clone();
    let mut guarded = false;
    if let Some(pdb) = pdbs.into_iter().next() {
        let pdb_name = store::meta_str(&pdb, "name").to_string();
        let status = pdb.get("status").cloned().unwrap_or(json!({}));
        let int = |f: &str| status.get(f).and_then(Value::as_i64).unwrap_or(0);
        let always_allow =
            pdb.pointer("/spec/unhealthyPodEvictionPolicy") == Some(&json!("AlwaysAllow"));
        let ready = pod_ready(pod);
        if !ready
            && (always_allow
                || (int("currentHealthy") >= int("desiredHealthy") && int("desiredHealthy") > 0))
        {
            // An unready pod does not count as healthy: no budget is spent, but the delete must
            // see the pod as read (it could have become ready since).
            delete_opts = with_rv(opts);
            guarded = true;
        } else {
            // A concurrent change of the budget is a 409 Conflict: read again and retry.
            spend_budget(ctx, pdb, opts.write.dry_run).await?;
        }
        if guarded {
            return match ctx
                .app
                .store
                .delete(ctx.scope(), ctx.name(), &delete_opts)
                .await
            {
                Ok(_) => Ok(success(ctx)),
                Err(e) if e.code == 409 && opts.precondition_rv.is_none() => {
                    Err(too_many_requests(&pdb_name))
                }
                Err(e) => Err(e),
            };
        }
    }
    ctx.app
        .store
        .delete(ctx.scope(), ctx.name(), &delete_opts)
        .await?;
    Ok(success(ctx))
}

fn pod_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
        })
}

/// The policy/v1 PDBs of the pod's namespace whose (non-empty, valid) selector matches it.
async fn matching_budgets(ctx: &Ctx, pod: &Value) -> Result<Vec<Value>, Status> {
    let info = ctx
        .app
        .store
        .registry()
        .builtin("policy", "v1", "poddisruptionbudgets");
    let scope = Scope {
        info: &info,
        namespace: ctx.ri.namespace.as_deref(),
    };
    let list = ctx
        .app
        .store
        .list(
            scope,
            &ListOptions {
                read_at: Some(ReadAt::Latest),
                ..Default::default()
            },
        )
        .await?;
    Ok(list
        .items
        .into_iter()
        .filter(|pdb| {
            let sel = pdb
                .pointer("/spec/selector")
                .cloned()
                .unwrap_or(Value::Null);
            match Selector::from_label_selector(&sel) {
                Ok(s) => !s.is_empty() && s.matches_object(pod),
                Err(_) => false,
            }
        })
        .collect())
}

fn too_many_requests(pdb: &str) -> Status {
    let mut s = Status::new(429, "TooManyRequests", EVICTION_REFUSED).with_details(json!({
        "causes": [{"reason": "DisruptionBudget",
                    "message": format!("The disruption budget {pdb} is still being processed by the server.")}]
    }));
    s.retry_after = Some(10);
    s
}

/// kube's checkAndDecrement: refuses when the budget allows no disruption (or is stale), else
/// spends one and records the pod in `status.disruptedPods` (skipped for a dry run).
async fn spend_budget(ctx: &Ctx, pdb: Value, dry_run: bool) -> Result<(), Status> {
    let name = store::meta_str(&pdb, "name").to_string();
    let gr = GroupResource {
        group: "policy",
        resource: "poddisruptionbudget",
    };
    let generation = store::meta(&pdb)
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = pdb.get("status").cloned().unwrap_or(json!({}));
    let int = |f: &str| status.get(f).and_then(Value::as_i64).unwrap_or(0);
    if int("observedGeneration") < generation {
        return Err(too_many_requests(&name));
    }
    let allowed = int("disruptionsAllowed");
    if allowed < 0 {
        return Err(Status::forbidden(
            gr,
            &name,
            "pdb disruptions allowed is negative",
        ));
    }
    let disrupted = status
        .get("disruptedPods")
        .and_then(Value::as_object)
        .map(Map::len)
        .unwrap_or(0);
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(Status::forbidden(
            gr,
            &name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(Status::new(429, "TooManyRequests", EVICTION_REFUSED).with_details(json!({
            "causes": [{"reason": "DisruptionBudget",
                        "message": format!("The disruption budget {name} needs {} healthy pods and has {} currently",
                                           int("desiredHealthy"), int("currentHealthy"))}]
        })));
    }
    if dry_run {
        return Ok(());
    }
    let info = ctx
        .app
        .store
        .registry()
        .builtin("policy", "v1", "poddisruptionbudgets");
    let scope = Scope {
        info: &info,
        namespace: ctx.ri.namespace.as_deref(),
    };
    let pod = ctx.name().to_string();
    let now = ctx.now.clone();
    let write = WriteOptions {
        admit: None,
        mutate: None,
        ..ctx.write_options("UpdateOptions")?
    };
    ctx.app
        .store
        .update_with(scope, &name, Part::Status, &write, |cur| {
            // The budget as it was checked: a concurrent change is a conflict (retried).
            if store::meta_str(cur, "resourceVersion") != store::meta_str(&pdb, "resourceVersion") {
                return Err(Status::stale(gr, &name));
            }
            let mut next = pdb.clone();
            let st = &mut next["status"];
            let left = allowed - 1;
            st["disruptionsAllowed"] = json!(left);
            if !st.get("disruptedPods").is_some_and(Value::is_object) {
                st["disruptedPods"] = json!({});
            }
            st["disruptedPods"][&pod] = json!(now);
            if left == 0 {
                set_disruption_allowed(st, false, &now);
            }
            Ok(next)
        })
        .await?;
    Ok(())
}

/// `DisruptionAllowed` condition as kube's `UpdateDisruptionAllowedCondition` sets it.
fn set_disruption_allowed(status: &mut Value, allowed: bool, now: &str) {
    let observed = status
        .get("observedGeneration")
        .cloned()
        .unwrap_or(json!(0));
    let (st, reason) = if allowed {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    let conds = status["conditions"].as_array_mut().expect("array");
    match conds
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("DisruptionAllowed"))
    {
        Some(c) => {
            if c.get("status").and_then(Value::as_str) != Some(st) {
                c["lastTransitionTime"] = json!(now);
            }
            c["status"] = json!(st);
            c["reason"] = json!(reason);
            c["observedGeneration"] = observed;
        }
        None => conds.push(json!({
            "type": "DisruptionAllowed", "status": st, "reason": reason, "message": "",
            "observedGeneration": observed, "lastTransitionTime": now,
        })),
    }
}
