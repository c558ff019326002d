//! Impersonation (kube's `WithImpersonation` filter): `Impersonate-User`, `Impersonate-Uid`,
//! `Impersonate-Group` (repeated) and `Impersonate-Extra-<key>` headers. Each impersonated
//! attribute is authorized for the real user with the `impersonate` verb — on `users`,
//! `serviceaccounts` (a `system:serviceaccount:<ns>:<name>` user, with its groups unless
//! groups are given), `groups`, `uids` and `userextras/<key>` — before the request goes on as
//! the impersonated user. Groups, uid or extras without a user are refused as kube refuses
//! them. The headers are removed once used.

use http::HeaderMap;

use crate::authn::{UserInfo, ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED};
use crate::authz::{Attributes, Authorizer, ResourceAttributes};
use crate::meta::status::Status;

const USER: &str = "impersonate-user";
const UID: &str = "impersonate-uid";
const GROUP: &str = "impersonate-group";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// One impersonated attribute (kube renders them as ObjectReferences in its errors).
struct Wanted {
    kind: &'static str,
    namespace: String,
    name: String,
    /// `userextras` key.
    field: String,
}

impl Wanted {
    /// kube's `%v` of the ObjectReference.
    fn describe(&self) -> String {
        let api_version = match self.kind {
            "UserExtra" | "UID" => "authentication.k8s.io/v1",
            _ => "",
        };
        // Kind Namespace Name UID APIVersion ResourceVersion FieldPath
        format!(
            "{{{} {} {} {} {} {} {}}}",
            self.kind, self.namespace, self.name, "", api_version, "", self.field
        )
    }
}

/// Whether the request asks for impersonation at all.
pub fn requested(headers: &HeaderMap) -> bool {
    headers.keys().any(|k| {
        k.as_str() == USER
            || k.as_str() == UID
            || k.as_str() == GROUP
            || k.as_str().starts_with(EXTRA_PREFIX)
    })
}

/// The user the request proceeds as, or the Status to answer (403 when the real user may
/// not impersonate what it asks for). Removes the impersonation headers.
pub async fn impersonate(
    authz: &Authorizer,
    real: &UserInfo,
    headers: &mut HeaderMap,
) -> Result<UserInfo, Status> {
    let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut has_extra = false;
    let mut extra_names: Vec<String> = headers
        .keys()
        .map(|k| k.as_str().to_string())
        .filter(|k| k.starts_with(EXTRA_PREFIX))
        .collect();
    extra_names.sort();
    extra_names.dedup();
    for h in &extra_names {
        let key = crate::meta::escape::path_unescape(&h[EXTRA_PREFIX.len()..]);
        for v in headers.get_all(h.as_str()) {
            has_extra = true;
            wanted.push(Wanted {
                kind: "UserExtra",
                namespace: String::new(),
                name: text(v),
                field: key.clone(),
            });
        }
    }
    let user = headers.get(USER).map(text).unwrap_or_default();
    if !user.is_empty() {
        let sa = user
            .strip_prefix(crate::authz::rbac::SA_PREFIX)
            .and_then(|rest| rest.split_once(':'))
            .filter(|(ns, name)| !ns.is_empty() && !name.is_empty() && !name.contains(':'));
        wanted.push(match sa {
            Some((ns, name)) => Wanted {
                kind: "ServiceAccount",
                namespace: ns.into(),
                name: name.into(),
                field: String::new(),
            },
            None => Wanted {
                kind: "User",
                namespace: String::new(),
                name: user.clone(),
                field: String::new(),
            },
        });
    }
    let mut has_groups = false;
    for g in headers.get_all(GROUP) {
        has_groups = true;
        wanted.push(Wanted {
            kind: "Group",
            namespace: String::new(),
            name: text(g),
            field: String::new(),
        });
    }
    let uid = headers.get(UID).map(text).unwrap_or_default();
    if !uid.is_empty() {
        wanted.push(Wanted {
            kind: "UID",
            namespace: String::new(),
            name: uid.clone(),
            field: String::new(),
        });
    }
    if (has_groups || has_extra || !uid.is_empty()) && user.is_empty() {
        let list: Vec<String> = wanted.iter().map(Wanted::describe).collect();
        return Err(Status::internal(format!(
            "requested [{}] without impersonating a user",
            list.join(" ")
        )));
    }
    let mut out = UserInfo::default();
    for w in &wanted {
        let (group, resource, sub) = match w.kind {
            "ServiceAccount" => {
                out.name = format!(
                    "{}{}:{}",
                    crate::authz::rbac::SA_PREFIX,
                    w.namespace,
                    w.name
                );
                if !has_groups {
                    out.groups = vec![
                        "system:serviceaccounts".into(),
                        format!("system:serviceaccounts:{}", w.namespace),
                    ];
                }
                ("", "serviceaccounts", None)
            }
            "User" => {
                out.name = w.name.clone();
                ("", "users", None)
            }
            "Group" => {
                out.groups.push(w.name.clone());
                ("", "groups", None)
            }
            "UserExtra" => {
                out.extra
                    .entry(w.field.clone())
                    .or_default()
                    .push(w.name.clone());
                (
                    "authentication.k8s.io",
                    "userextras",
                    Some(w.field.as_str()),
                )
            }
            _ => {
                out.uid = w.name.clone();
                ("authentication.k8s.io", "uids", None)
            }
        };
        let attrs = Attributes::Resource(ResourceAttributes {
            verb: "impersonate",
            group,
            version: "v1",
            resource,
            subresource: sub,
            namespace: (!w.namespace.is_empty()).then_some(w.namespace.as_str()),
            name: Some(&w.name),
            field_selector: None,
        });
        authz.authorize(real, &attrs).await?;
    }
    if out.name != ANONYMOUS {
        if !out
            .groups
            .iter()
            .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
        {
            out.groups.push(AUTHENTICATED.into());
        }
    } else if !out.groups.iter().any(|g| g == UNAUTHENTICATED) {
        out.groups.push(UNAUTHENTICATED.into());
    }
    headers.remove(USER);
    headers.remove(UID);
    headers.remove(GROUP);
    for h in extra_names {
        headers.remove(h.as_str());
    }
    tracing::debug!(user = %real.name, as_user = %out.name, "impersonating");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions() {
        let w = Wanted {
            kind: "Group",
            namespace: String::new(),
            name: "g1".into(),
            field: String::new(),
        };
        assert_eq!(w.describe(), "{Group  g1    }");
    }
}
