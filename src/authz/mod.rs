//! Authorization: whether a user may do what a request asks, and kube's `Forbidden` message
//! when not. Until RBAC and the other authorizers arrive (their own issue), the decision is
//! interim: every authenticated user may do everything; anonymous requests may reach only
//! the health checks, `/version` and discovery.
//!
//! Owns: request [`Attributes`] (kube's `authorizer.Attributes`), the decision and the 403
//! `Status`. Does not know: authentication (who the user is), routing.

use crate::authn::UserInfo;
use crate::meta::status::Status;

/// A resource request as authorizers see it (the edge fills it from its request info).
pub struct ResourceAttributes<'a> {
    pub verb: &'a str,
    pub group: &'a str,
    pub resource: &'a str,
    pub subresource: Option<&'a str>,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// What a request does, as authorizers see it.
pub enum Attributes<'a> {
    Resource(ResourceAttributes<'a>),
    /// A non-resource path with its verb (the lower-cased HTTP method, `get` for HEAD).
    NonResource {
        path: &'a str,
        verb: String,
    },
}

impl<'a> Attributes<'a> {
    /// A non-resource request.
    pub fn path(method: &http::Method, path: &'a str) -> Self {
        Attributes::NonResource {
            path,
            verb: match *method {
                http::Method::HEAD => "get".into(),
                ref m => m.as_str().to_ascii_lowercase(),
            },
        }
    }
}

/// Paths anonymous users may reach before the authorization issue lands: kube's
/// `system:public-info-viewer` paths and discovery.
fn public_path(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    let health = ["/healthz", "/livez", "/readyz"]
        .iter()
        .any(|h| p == *h || p.starts_with(&format!("{h}/")));
    if health || p == "/version" {
        return true;
    }
    let parts: Vec<&str> = p.trim_start_matches('/').split('/').collect();
    matches!(
        parts.as_slice(),
        ["api"] | ["api", _] | ["apis"] | ["apis", _] | ["apis", _, _]
    )
}

/// `--authorization-mode`: today `AlwaysAllow`, `AlwaysDeny`, or unset (the interim rule).
/// RBAC, Node, ABAC and Webhook arrive with the authorization issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Authenticated users may do everything; anonymous ones reach only the public paths.
    #[default]
    Interim,
    /// Everything is allowed (kube also turns anonymous authentication off with it).
    AlwaysAllow,
    /// Everything is denied, except to `system:masters` (the superuser group).
    AlwaysDeny,
}

impl Mode {
    /// Parses the flag's ordered list; only one of the built-in modes for now.
    pub fn parse(flag: &str) -> Result<Mode, String> {
        let modes: Vec<&str> = flag
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .collect();
        match modes.as_slice() {
            [] => Ok(Mode::Interim),
            ["AlwaysAllow"] => Ok(Mode::AlwaysAllow),
            ["AlwaysDeny"] => Ok(Mode::AlwaysDeny),
            _ => Err(format!(
                "--authorization-mode {flag:?}: only AlwaysAllow or AlwaysDeny are built yet (RBAC, Node, ABAC and Webhook are coming)"
            )),
        }
    }
}

/// The authorizer of a replica.
#[derive(Clone, Copy, Debug, Default)]
pub struct Authorizer {
    pub mode: Mode,
}

impl Authorizer {
    /// The decision: `Err` is the 403 to answer.
    pub fn authorize(&self, user: &UserInfo, attrs: &Attributes<'_>) -> Result<(), Status> {
        if user.groups.iter().any(|g| g == "system:masters") {
            return Ok(());
        }
        match self.mode {
            Mode::AlwaysAllow => Ok(()),
            Mode::AlwaysDeny => Err(forbidden(user, attrs, "")),
            Mode::Interim => authorize(user, attrs),
        }
    }
}

/// The interim decision: `Err` is the 403 to answer.
pub fn authorize(user: &UserInfo, attrs: &Attributes<'_>) -> Result<(), Status> {
    if !user.is_anonymous() {
        return Ok(());
    }
    if let Attributes::NonResource { path, .. } = attrs {
        if public_path(path) {
            return Ok(());
        }
    }
    Err(forbidden(user, attrs, ""))
}

/// kube's 403 for a denied request, e.g. `configmaps is forbidden: User "alice" cannot list
/// resource "configmaps" in API group "" in the namespace "default"` (plus `: <reason>`).
pub fn forbidden(user: &UserInfo, attrs: &Attributes<'_>, reason: &str) -> Status {
    let suffix = if reason.is_empty() {
        String::new()
    } else {
        format!(": {reason}")
    };
    match attrs {
        Attributes::NonResource { path, verb } => Status::new(
            403,
            "Forbidden",
            format!(
                "forbidden: User {:?} cannot {verb} path {path:?}{suffix}",
                user.name
            ),
        )
        .with_details(serde_json::json!({})),
        Attributes::Resource(ri) => {
            let resource = match ri.subresource {
                Some(s) => format!("{}/{s}", ri.resource),
                None => ri.resource.to_string(),
            };
            let scope = match ri.namespace {
                Some(ns) => format!("in the namespace {ns:?}"),
                None => "at the cluster scope".into(),
            };
            let why = format!(
                "User {:?} cannot {} resource {resource:?} in API group {:?} {scope}{suffix}",
                user.name, ri.verb, ri.group
            );
            let gr = crate::meta::status::GroupResource {
                group: ri.group,
                resource: &resource,
            };
            Status::forbidden(gr, ri.name.unwrap_or(""), &why)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_public_paths() {
        let anon = UserInfo::anonymous();
        let list = ResourceAttributes {
            verb: "list",
            group: "",
            resource: "configmaps",
            subresource: None,
            namespace: Some("default"),
            name: None,
        };
        let s = authorize(&anon, &Attributes::Resource(list)).unwrap_err();
        assert_eq!(s.code, 403);
        assert_eq!(s.message, "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"");
        let get = ResourceAttributes {
            verb: "get",
            group: "",
            resource: "nodes",
            subresource: None,
            namespace: None,
            name: Some("n1"),
        };
        assert_eq!(
            forbidden(&anon, &Attributes::Resource(get), "").message,
            "nodes \"n1\" is forbidden: User \"system:anonymous\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let m = authorize(
            &anon,
            &Attributes::NonResource {
                path: "/metrics",
                verb: "get".into(),
            },
        )
        .unwrap_err()
        .message;
        assert_eq!(
            m,
            "forbidden: User \"system:anonymous\" cannot get path \"/metrics\""
        );
        for p in [
            "/healthz",
            "/readyz/etcd",
            "/version",
            "/api",
            "/api/v1",
            "/apis/apps/v1",
        ] {
            assert!(public_path(p), "{p}");
        }
        for p in ["/metrics", "/openapi/v2", "/api/v1/pods", "/logs"] {
            assert!(!public_path(p), "{p}");
        }
    }
}
