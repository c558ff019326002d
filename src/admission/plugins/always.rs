//! `AlwaysAdmit` (admits everything; deprecated in kube) and `AlwaysDeny` (refuses every
//! create, update, delete and connect with kube's text).

use crate::admission::{Attributes, Handle, Plugin};
use crate::meta::status::Status;

pub struct AlwaysAdmit;

#[async_trait::async_trait]
impl Plugin for AlwaysAdmit {
    fn name(&self) -> &'static str {
        "AlwaysAdmit"
    }
}

pub struct AlwaysDeny;

#[async_trait::async_trait]
impl Plugin for AlwaysDeny {
    fn name(&self) -> &'static str {
        "AlwaysDeny"
    }

    async fn admit(&self, a: &mut Attributes, _h: &Handle) -> Result<(), Status> {
        Err(a.forbidden("admission control is denying all modifications"))
    }
}
