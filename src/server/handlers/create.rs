//! POST: create an object (dry-run aware).

use http::{Response, StatusCode};

use super::{respond_object, Ctx};
use crate::meta::status::Status;
use crate::server::Body;

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    if ctx.info.terminating {
        // kube's custom resource handler, before it decodes anything.
        return Err(Status::new(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
        )
        .with_details(serde_json::json!({"group": ctx.ri.group, "kind": ctx.ri.resource})));
    }
    let opts = ctx.write_options("CreateOptions")?;
    let obj = ctx.decode_object()?;
    let created = ctx.app.store.create(ctx.scope(), obj, &opts).await?;
    ctx.warn_write(&created, None);
    Ok(respond_object(ctx, StatusCode::CREATED, &created))
}
