//! PATCH with the four patch types: JSON patch (RFC 6902), JSON merge patch (RFC 7386),
//! strategic merge patch (built-in types, by their patch strategies) and server-side apply
//! (`application/apply-patch+yaml`, built-in types' main resource for now; see [`apply`]).
//!
//! `fieldValidation` as kube's patchers: under Strict or Warn the patch itself is read
//! strictly (a merge or strategic patch: every duplicate field; a JSON patch: unknown and
//! duplicate fields of its operations, `json patch unknown field "[0].foo"`), then the patched
//! object's unknown fields (JSON and merge patch: as the patched document decodes, keys sorted;
//! strategic merge patch: sorted, as kube's unstructured converter reports them; custom
//! resources: unknown metadata fields, then the pruned paths). Strict refuses them with kube's
//! 422 about the `patch`, Warn warns once per problem.

use http::{header, Response, StatusCode};
use serde_json::Value;

use super::{respond_object, Ctx};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::meta::strict::{self, Errors, Node};
use crate::registry::store::Part;
use crate::server::Body;

#[derive(Clone, Copy, PartialEq, Eq)]
enum PatchType {
    Json,
    Merge,
    Strategic,
}

pub async fn handle(ctx: &Ctx, part: Part) -> Result<Response<Body>, Status> {
    let media = ctx
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let kind = match media.as_str() {
        "application/json-patch+json" => PatchType::Json,
        "application/merge-patch+json" => PatchType::Merge,
        "application/strategic-merge-patch+json" => PatchType::Strategic,
        "application/apply-patch+yaml" => return super::apply::handle(ctx, part).await,
        other => {
            return Err(Status::unsupported_media_type(
                other,
                super::accepted_patch_types(ctx),
            ))
        }
    };
    if kind == PatchType::Strategic && !ctx.info.strategy.strategic_merge_patch() {
        return Err(Status::unsupported_media_type(
            &media,
            super::ACCEPTED_PATCH_CUSTOM,
        ));
    }
    if ctx.query.get("force").is_some() {
        return Err(Status::invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            &[FieldError::forbidden(
                "force",
                "may not be specified for non-apply patch",
            )],
        ));
    }
    let opts = ctx.write_options("PatchOptions")?;
    let mode = ctx.field_validation()?;
    // Strict and Warn read the patch keeping its duplicate keys.
    let (patch, patch_errors) = if mode == "Ignore" {
        let patch: Value = serde_json::from_slice(&ctx.body)
            .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
        (patch, Vec::new())
    } else {
        let node = strict::parse_json(&ctx.body)
            .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
        let errors = match kind {
            PatchType::Json => json_patch_errors(&node),
            _ => {
                let mut e = Errors::default();
                node.duplicates(&mut String::new(), &mut e);
                e.0
            }
        };
        (node.into_value(false), errors)
    };
    let json_patch = if kind == PatchType::Json {
        Some(
            serde_json::from_value::<json_patch::Patch>(patch.clone())
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?,
        )
    } else {
        if !patch.is_object() {
            return Err(Status::bad_request(
                "error decoding patch: the patch is not a JSON object",
            ));
        }
        None
    };
    let definition = ctx.info.definition.as_str();
    let mut unknown_warnings = Vec::new();
    let mut old = None;
    let updated = ctx
        .app
        .store
        .update_with(ctx.scope(), ctx.name(), part, &opts, |stored| {
            old = Some(stored.clone());
            // The patch applies to the object in the request's version.
            let current = &*super::served(&ctx.info, stored)?;
            let mut doc = current.clone();
            // The patch applies to the current object; a resourceVersion it carries is a
            // precondition, otherwise the write retries on a lost race.
            if let Some(m) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("resourceVersion");
            }
            let rv_in_patch = match kind {
                PatchType::Json => None,
                _ => patch.pointer("/metadata/resourceVersion").cloned(),
            };
            let mut out = match kind {
                PatchType::Json => {
                    let p = json_patch.as_ref().expect("parsed above");
                    let mut d = current.clone();
                    json_patch::patch(&mut d, p).map_err(|e| {
                        Status::new(422, "Invalid", format!("the server rejected our request due to an error in our request: {e}"))
                    })?;
                    d
                }
                PatchType::Merge => {
                    json_patch::merge(&mut doc, &patch);
                    doc
                }
                PatchType::Strategic => {
                    crate::apply::strategic::strategic_merge_patch(&doc, &patch, definition)
                        .map_err(patch_status)?
                }
            };
            // A status patch carries the stored resourceVersion, as kube's patched object does
            // (the status rules of some kinds require one); it is never stale here.
            let stored_rv = current.pointer("/metadata/resourceVersion").cloned();
            let rv_in_patch = match (rv_in_patch, part == Part::Status) {
                (None, true) => stored_rv,
                (rv, _) => rv,
            };
            if kind != PatchType::Json {
                if let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) {
                    match &rv_in_patch {
                        Some(rv) => {
                            m.insert("resourceVersion".into(), rv.clone());
                        }
                        None => {
                            m.remove("resourceVersion");
                        }
                    }
                }
            } else if part != Part::Status
                && out.pointer("/metadata/resourceVersion") == current.pointer("/metadata/resourceVersion")
            {
                if let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("resourceVersion");
                }
            }
            if !out.is_object() {
                return Err(Status::bad_request(format!(
                    "{kind} in version {:?} cannot be handled as a {kind}: the patched document is not a JSON object",
                    ctx.info.version,
                    kind = ctx.info.kind
                )));
            }
            super::check_types(&ctx.info, &out)?;
            let patched = out.clone();
            let unknown = match super::prune_custom(&ctx.info, &mut out) {
                Some(unknown) => unknown,
                None => {
                    let unknown = if mode == "Ignore" {
                        Vec::new()
                    } else if kind == PatchType::Strategic {
                        // (kube's unstructured converter sorts what it finds)
                        let mut u = crate::openapi::unknown_fields(definition, &out);
                        u.sort();
                        u
                    } else {
                        crate::openapi::unknown_fields(definition, &super::sorted_keys(&out))
                    };
                    crate::openapi::prune_unknown(definition, &mut out);
                    unknown
                }
            };
            let mut errors = Errors(patch_errors.clone());
            for u in unknown {
                errors.push(u);
            }
            match mode {
                _ if errors.0.is_empty() || mode == "Ignore" => {}
                // (warned now, as kube's decoder does before admission's and the
                // strategy's warnings; again after the write, which repeats nothing)
                "Warn" => {
                    ctx.warn(errors.0.clone());
                    unknown_warnings = errors.0;
                }
                // kube's patcher: the strict decoding errors of the patched object are a 422
                // about the patch, with the patched document as Go marshals it (a strategic
                // merge patch: the patch, as Go prints a map).
                _ => {
                    let value = match kind {
                        PatchType::Strategic => strict::go_print(&patch),
                        _ => crate::meta::sorted_keys(&patched).to_string(),
                    };
                    return Err(Status::invalid(
                        "",
                        "",
                        "",
                        &[crate::meta::field_error::FieldError::invalid(
                            "patch",
                            value,
                            format!("strict decoding error: {}", errors.0.join(", ")),
                        )],
                    ));
                }
            }
            if ctx.info.converts() {
                ctx.info.strategy.to_storage(&mut out)?;
            }
            Ok(out)
        })
        .await?;
    ctx.warn(unknown_warnings);
    ctx.warn_write(&updated, old.as_ref());
    Ok(respond_object(ctx, StatusCode::OK, &updated))
}

/// The strict errors of a JSON patch's operations (`{op, path, from, value}`, the value an
/// untyped map), prefixed as kube prefixes them: `json patch unknown field "[0].foo"`.
fn json_patch_errors(node: &Node) -> Vec<String> {
    let mut out = Errors::default();
    if let Node::Array(ops) = node {
        for (i, op) in ops.iter().enumerate() {
            let Node::Object(entries) = op else { continue };
            let mut seen = std::collections::HashSet::new();
            for (k, v) in entries {
                let mut path = String::new();
                strict::push_index(&mut path, i);
                strict::push_key(&mut path, k);
                if !matches!(k.as_str(), "op" | "path" | "from" | "value") {
                    out.push(format!(
                        "json patch unknown field {}",
                        crate::meta::field_error::go_quote(&path)
                    ));
                    continue;
                }
                if !seen.insert(k.as_str()) {
                    out.push(format!("json patch {}", strict::duplicate(&path)));
                }
                if k == "value" {
                    let mut inner = Errors::default();
                    v.duplicates(&mut path, &mut inner);
                    for e in inner.0 {
                        out.push(format!("json patch {e}"));
                    }
                }
            }
        }
    }
    out.0
}

/// Strategic merge patch errors carry kube-apiserver's status code.
fn patch_status(e: crate::apply::strategic::PatchError) -> Status {
    match e.status_code() {
        400 => Status::bad_request(e.message()),
        422 => Status::new(422, "Invalid", e.message()),
        code => Status::new(code, "", e.message()),
    }
}
