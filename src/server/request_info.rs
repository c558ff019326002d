//! Request info: what a URL and method name (kube's `RequestInfoFactory`).
//!
//! `/api/v1/...` and `/apis/<group>/<version>/...` are resource requests; everything else is a
//! non-resource path (discovery roots, health, metrics, openapi, version).

use http::Method;

/// A parsed resource request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestInfo {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    /// The namespace as kube's RequestInfo reads it from the path, for authorization: for a
    /// namespace itself (`/api/v1/namespaces/<name>`) that is its own name.
    pub path_namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
    /// get, list, watch, create, update, patch, delete, deletecollection.
    pub verb: &'static str,
    /// The deprecated `/watch/` path prefix was used.
    pub watch_path: bool,
}

/// Namespace subresources: `/namespaces/<name>/status` names the namespace itself.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// Parses a resource path. `None` for non-resource paths and for group/version roots
/// (`/api`, `/api/v1`, `/apis/apps/v1`), which discovery serves.
pub fn parse(method: &Method, path: &str, watch_param: bool) -> Option<RequestInfo> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, mut rest) = match parts.as_slice() {
        ["api", v, rest @ ..] if !rest.is_empty() => ("", *v, rest),
        ["apis", g, v, rest @ ..] if !rest.is_empty() => (*g, *v, rest),
        _ => return None,
    };
    let mut info = RequestInfo {
        group: group.into(),
        version: version.into(),
        ..Default::default()
    };
    if rest.first() == Some(&"watch") {
        info.watch_path = true;
        rest = &rest[1..];
    }
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        info.namespace = Some(rest[1].to_string());
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
        }
    }
    match rest {
        [resource] => info.resource = resource.to_string(),
        [resource, name] => {
            info.resource = resource.to_string();
            info.name = Some(name.to_string());
        }
        [resource, name, sub] => {
            info.resource = resource.to_string();
            info.name = Some(name.to_string());
            info.subresource = Some(sub.to_string());
        }
        // A proxy's path goes on after the subresource (`pods/p/proxy/a/b`).
        [resource, name, sub @ "proxy", _, ..] => {
            info.resource = resource.to_string();
            info.name = Some(name.to_string());
            info.subresource = Some(sub.to_string());
        }
        _ => return None,
    }
    if info.resource.is_empty() || info.name.as_deref() == Some("") {
        return None;
    }
    info.path_namespace = info.namespace.clone();
    if info.resource == "namespaces" {
        info.namespace = None;
    }
    let watch = info.watch_path || watch_param;
    info.verb = match *method {
        Method::GET | Method::HEAD => match (&info.name, watch) {
            (_, true) => "watch",
            (None, false) => "list",
            (Some(_), false) => "get",
        },
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => {
            if info.name.is_some() {
                "delete"
            } else {
                "deletecollection"
            }
        }
        _ => "unknown",
    };
    Some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(
        method: Method,
        path: &str,
    ) -> Option<(
        String,
        String,
        Option<String>,
        String,
        Option<String>,
        Option<String>,
        &'static str,
    )> {
        parse(&method, path, false).map(|i| {
            (
                i.group,
                i.version,
                i.namespace,
                i.resource,
                i.name,
                i.subresource,
                i.verb,
            )
        })
    }

    #[test]
    fn proxy_paths_keep_their_subresource() {
        let i = parse(
            &Method::GET,
            "/api/v1/namespaces/ns/pods/p:80/proxy/a/b",
            false,
        )
        .unwrap();
        assert_eq!(
            (
                i.resource.as_str(),
                i.name.as_deref(),
                i.subresource.as_deref(),
                i.verb
            ),
            ("pods", Some("p:80"), Some("proxy"), "get")
        );
        let i = parse(&Method::POST, "/api/v1/nodes/n/proxy/x", false).unwrap();
        assert_eq!(
            (i.subresource.as_deref(), i.verb),
            (Some("proxy"), "create")
        );
        assert!(parse(&Method::GET, "/api/v1/namespaces/ns/pods/p/status/x", false).is_none());
    }

    #[test]
    fn paths() {
        let s = |x: &str| x.to_string();
        assert_eq!(
            p(Method::GET, "/api/v1/namespaces/default/pods"),
            Some((
                s(""),
                s("v1"),
                Some(s("default")),
                s("pods"),
                None,
                None,
                "list"
            ))
        );
        assert_eq!(
            p(
                Method::GET,
                "/apis/apps/v1/namespaces/a/deployments/web/scale"
            ),
            Some((
                s("apps"),
                s("v1"),
                Some(s("a")),
                s("deployments"),
                Some(s("web")),
                Some(s("scale")),
                "get"
            ))
        );
        assert_eq!(
            p(Method::GET, "/api/v1/namespaces/kube-system"),
            Some((
                s(""),
                s("v1"),
                None,
                s("namespaces"),
                Some(s("kube-system")),
                None,
                "get"
            ))
        );
        assert_eq!(
            p(Method::PUT, "/api/v1/namespaces/x/finalize"),
            Some((
                s(""),
                s("v1"),
                None,
                s("namespaces"),
                Some(s("x")),
                Some(s("finalize")),
                "update"
            ))
        );
        assert_eq!(
            p(Method::DELETE, "/api/v1/nodes"),
            Some((
                s(""),
                s("v1"),
                None,
                s("nodes"),
                None,
                None,
                "deletecollection"
            ))
        );
        assert_eq!(
            p(Method::GET, "/api/v1/watch/namespaces/d/pods/x"),
            Some((
                s(""),
                s("v1"),
                Some(s("d")),
                s("pods"),
                Some(s("x")),
                None,
                "watch"
            ))
        );
        assert_eq!(p(Method::GET, "/api/v1"), None);
        assert_eq!(p(Method::GET, "/apis/apps/v1"), None);
        assert_eq!(p(Method::GET, "/api/v1/namespaces/a/pods/b/c/d"), None);
    }
}
