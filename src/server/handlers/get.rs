//! GET of one object (or of its status subresource).

use http::{Response, StatusCode};

use super::{read_at, respond_object, Ctx};
use crate::meta::status::Status;
use crate::server::Body;

pub async fn handle(ctx: &Ctx) -> Result<Response<Body>, Status> {
    let at = read_at(&ctx.query, "GetOptions")?;
    let obj = ctx.app.watch.get(ctx.scope(), ctx.name(), at).await?;
    Ok(respond_object(ctx, StatusCode::OK, &obj))
}
