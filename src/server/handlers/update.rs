//! PUT: replace an object (or its status / namespace finalizers) with optimistic concurrency.

use http::{Response, StatusCode};

use super::{respond_object, Ctx};
use crate::meta::field_error::FieldError;
use crate::meta::status::Status;
use crate::registry::store::{self, Part};
use crate::server::Body;

pub async fn handle(ctx: &Ctx, part: Part) -> Result<Response<Body>, Status> {
    let opts = ctx.write_options("UpdateOptions")?;
    let obj = ctx.decode_object()?;
    let body_name = store::meta_str(&obj, "name");
    if body_name != ctx.name() {
        return Err(Status::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            ctx.name()
        )));
    }
    let unconditional = store::meta_str(&obj, "resourceVersion").is_empty();
    let mut old = None;
    let updated = ctx
        .app
        .store
        .update_with(ctx.scope(), ctx.name(), part, &opts, |current| {
            if unconditional && !ctx.info.strategy.allow_unconditional_update() {
                // kube names the resource, not the kind, in this error.
                let ri = &ctx.ri;
                return Err(Status::invalid(
                    &ri.resource,
                    &ri.group,
                    ctx.name(),
                    &[FieldError::invalid_rendered(
                        "metadata.resourceVersion",
                        "0x0",
                        "must be specified for an update",
                    )],
                ));
            }
            old = Some(current.clone());
            Ok(obj.clone())
        })
        .await;
    match updated {
        Ok(updated) => {
            ctx.warn_write(&updated, old.as_ref());
            Ok(respond_object(ctx, StatusCode::OK, &updated))
        }
        // Resources that allow it are created by a PUT of a missing object.
        Err(s)
            if s.code == 404
                && part == Part::Main
                && ctx.info.strategy.allow_create_on_update() =>
        {
            // kube authorizes the create such an update makes, not only the update.
            let ri = &ctx.ri;
            let attrs = crate::authz::Attributes::Resource(crate::authz::ResourceAttributes {
                verb: "create",
                group: &ri.group,
                version: &ri.version,
                resource: &ri.resource,
                subresource: None,
                namespace: ri.path_namespace.as_deref(),
                name: ri.name.as_deref(),
                field_selector: None,
            });
            ctx.app.authz.authorize(&ctx.user, &attrs).await?;
            let mut obj = obj;
            if let Some(m) = obj
                .get_mut("metadata")
                .and_then(serde_json::Value::as_object_mut)
            {
                m.remove("resourceVersion");
            }
            let created = ctx.app.store.create(ctx.scope(), obj, &opts).await?;
            ctx.warn_write(&created, None);
            Ok(respond_object(ctx, StatusCode::CREATED, &created))
        }
        Err(s) => Err(s),
    }
}
