//! kube-aggregator's proxy handler: a request for a remote APIService's group-version is
//! forwarded to its Service (as kube's resolver finds it) with the front-proxy client
//! certificate and the caller's identity in the requestheader headers, both bodies streamed
//! (watches stay open as long as either side does) and `Upgrade` requests (exec, attach,
//! port-forward) bridged byte for byte after the extension server's `101`.
//!
//! Authentication and authorization happened before: this module trusts the user it is
//! given and strips every credential the client sent.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use http::{header, HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, BodyStream, Full, StreamBody};
use hyper::body::{Body as _, Frame, Incoming};

use super::{identity_headers, resolve, Aggregator, Remote};
use crate::authn::UserInfo;

/// The response body the server's edge sends (`server::Body`).
pub type Body = BoxBody<Bytes, Infallible>;

/// kube's `proxyError`: a plain-text error (Go's `http.Error`).
fn plain_error(code: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(format!("{text}\n"))).boxed());
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Hop-by-hop headers (RFC 9110 §7.6.1), never forwarded.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Whether the request asks for a connection upgrade (HTTP/1.1 `Connection: Upgrade`).
pub fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

/// The headers sent to the extension server: the client's, minus hop-by-hop ones (kept
/// for an upgrade), credentials, impersonation and any identity header the client forged,
/// plus the caller's identity.
fn forwarded_headers(from: &HeaderMap, user: &UserInfo, upgrade: bool) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (k, v) in from {
        let name = k.as_str();
        let hop =
            HOP_BY_HOP.contains(&name) && !(upgrade && matches!(name, "connection" | "upgrade"));
        let forged = name.starts_with("x-remote-") || name.starts_with("impersonate-");
        if hop || forged || name == "authorization" || name == "host" {
            continue;
        }
        out.append(k.clone(), v.clone());
    }
    for (k, v) in identity_headers(user) {
        if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::from_str(&v)) {
            out.append(k, v);
        }
    }
    out
}

/// Proxies `req` to `remote`.
pub async fn serve(
    agg: Arc<Aggregator>,
    remote: Arc<Remote>,
    user: UserInfo,
    mut req: Request<Incoming>,
) -> Response<Body> {
    if !remote.available {
        return plain_error(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
    }
    let addrs =
        match resolve::resolve_service(&agg.store, &remote.namespace, &remote.service, remote.port)
            .await
        {
            Ok(a) if !a.is_empty() => a,
            Ok(_) | Err(_) => {
                tracing::warn!(apiservice = %remote.name, "error resolving the service");
                return plain_error(StatusCode::SERVICE_UNAVAILABLE, "service unavailable");
            }
        };
    let addr = addrs[0];
    let upgrade = is_upgrade(req.headers());
    let client = match agg.client(&remote, addr, false, upgrade) {
        Ok(c) => c,
        Err(e) => return plain_error(StatusCode::SERVICE_UNAVAILABLE, &e),
    };
    let path_and_query = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let url = format!(
        "https://{}:{}{path_and_query}",
        remote.server_name(),
        addr.port()
    );
    let headers = forwarded_headers(req.headers(), &user, upgrade);
    let on_upgrade = upgrade.then(|| hyper::upgrade::on(&mut req));
    let method = req.method().clone();
    let body = req.into_body();
    let mut out = client.request(method, &url).headers(headers);
    if !body.is_end_stream() {
        let stream = BodyStream::new(body).filter_map(|frame| async move {
            match frame {
                Ok(f) => f.into_data().ok().map(Ok::<Bytes, hyper::Error>),
                Err(e) => Some(Err(e)),
            }
        });
        out = out.body(reqwest::Body::wrap_stream(stream));
    }
    let resp = match out.send().await {
        Ok(r) => r,
        Err(e) => {
            let mut text = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                text = format!("{text}: {s}");
                src = s.source();
            }
            tracing::warn!(apiservice = %remote.name, "error while proxying request: {text}");
            return plain_error(StatusCode::SERVICE_UNAVAILABLE, &text);
        }
    };
    let status = resp.status();
    let mut head = HeaderMap::new();
    for (k, v) in resp.headers() {
        let hop = HOP_BY_HOP.contains(&k.as_str())
            && !(status == StatusCode::SWITCHING_PROTOCOLS
                && matches!(k.as_str(), "connection" | "upgrade"));
        if !hop {
            head.append(k.clone(), v.clone());
        }
    }
    if status == StatusCode::SWITCHING_PROTOCOLS {
        let Some(on_upgrade) = on_upgrade else {
            return plain_error(
                StatusCode::BAD_GATEWAY,
                "unexpected 101 from the extension server",
            );
        };
        tokio::spawn(async move {
            let (up, down) = match (resp.upgrade().await, on_upgrade.await) {
                (Ok(up), Ok(down)) => (up, down),
                (Err(e), _) => {
                    tracing::warn!("upgrading the extension server connection: {e}");
                    return;
                }
                (_, Err(e)) => {
                    tracing::warn!("upgrading the client connection: {e}");
                    return;
                }
            };
            let mut up = up;
            let mut down = hyper_util::rt::TokioIo::new(down);
            let _ = tokio::io::copy_bidirectional(&mut down, &mut up).await;
        });
        let mut r = Response::new(Full::new(Bytes::new()).boxed());
        *r.status_mut() = status;
        *r.headers_mut() = head;
        return r;
    }
    // The response streams as it arrives; a broken upstream ends it.
    let frames = resp.bytes_stream().scan((), |_, chunk| {
        futures::future::ready(chunk.ok().map(|b| Ok::<_, Infallible>(Frame::data(b))))
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(frames)));
    *r.status_mut() = status;
    *r.headers_mut() = head;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_forged_identities_are_not_forwarded() {
        let mut h = HeaderMap::new();
        h.insert("authorization", HeaderValue::from_static("Bearer x"));
        h.insert("x-remote-user", HeaderValue::from_static("root"));
        h.insert("impersonate-user", HeaderValue::from_static("root"));
        h.insert("connection", HeaderValue::from_static("Upgrade"));
        h.insert("upgrade", HeaderValue::from_static("websocket"));
        h.insert("accept", HeaderValue::from_static("application/json"));
        let user = UserInfo {
            name: "alice".into(),
            groups: vec!["dev".into()],
            ..Default::default()
        };
        let out = forwarded_headers(&h, &user, false);
        assert_eq!(out.get("x-remote-user").unwrap(), "alice");
        assert_eq!(out.get_all("x-remote-user").iter().count(), 1);
        assert!(out.get("authorization").is_none());
        assert!(out.get("impersonate-user").is_none());
        assert!(out.get("upgrade").is_none());
        assert_eq!(out.get("accept").unwrap(), "application/json");
        assert!(is_upgrade(&h));
        let up = forwarded_headers(&h, &user, true);
        assert_eq!(up.get("upgrade").unwrap(), "websocket");
    }
}
