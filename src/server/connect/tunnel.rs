//! Port-forward over WebSocket-tunnelled SPDY (kube's `TunnelingHandler`, kubectl ≥ 1.31):
//! the client upgrades to a WebSocket with the subprotocol `SPDY/3.1+portforward.k8s.io` and
//! sends SPDY inside binary messages; the kubelet is asked for a plain SPDY upgrade
//! (`portforward.k8s.io`) and the SPDY bytes are relayed between the two, unwrapped from and
//! wrapped into WebSocket frames here. Nothing here reads SPDY itself.

use std::sync::Arc;

use base64::Engine;
use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use super::{copy_response_headers, dial_error, full, stream_body, Body};
use crate::meta::status::Status;

/// The WebSocket subprotocol kubectl tunnels SPDY port-forwarding with.
pub const PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";
const WS_GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The largest WebSocket message accepted from a client.
const MAX_FRAME: u64 = 1 << 20;

/// A WebSocket upgrade asking for the tunnelled SPDY protocol.
pub fn wanted(h: &HeaderMap) -> bool {
    super::header_has(h, header::UPGRADE, "websocket")
        && super::header_has(
            h,
            header::HeaderName::from_static("sec-websocket-protocol"),
            PROTOCOL,
        )
}

/// The `Sec-WebSocket-Accept` of a key (RFC 6455).
pub fn accept_key(key: &str) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        format!("{key}{WS_GUID}").as_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

pub async fn serve(
    app: &super::App,
    url: &str,
    authority: &str,
    req: Request<Incoming>,
    on_client: hyper::upgrade::OnUpgrade,
) -> Result<Response<Body>, Status> {
    let Some(key) = req
        .headers()
        .get("sec-websocket-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return Err(Status::bad_request("missing Sec-WebSocket-Key"));
    };
    let mut headers = super::relay_headers(req.headers(), false);
    for h in [
        "sec-websocket-key",
        "sec-websocket-version",
        "sec-websocket-protocol",
        "sec-websocket-extensions",
    ] {
        headers.remove(h);
    }
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("SPDY/3.1"));
    headers.insert(
        "x-stream-protocol-version",
        HeaderValue::from_static("portforward.k8s.io"),
    );
    let resp = app
        .kubelet
        .kubelet()
        .post(url)
        .headers(headers)
        .send()
        .await
        .map_err(|e| {
            Status::new(
                500,
                "",
                format!("error dialing backend: {}", dial_error(authority, &e)),
            )
        })?;
    if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
        let status = resp.status();
        let h = resp.headers().clone();
        let mut r = Response::new(stream_body(resp));
        *r.status_mut() = status;
        copy_response_headers(&h, r.headers_mut());
        return Ok(r);
    }
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept_key(&key)) {
        h.insert("sec-websocket-accept", v);
    }
    h.insert("sec-websocket-protocol", HeaderValue::from_static(PROTOCOL));
    tokio::spawn(async move {
        let Ok(backend) = resp.upgrade().await else {
            return;
        };
        let Ok(client) = on_client.await else {
            return;
        };
        relay(hyper_util::rt::TokioIo::new(client), backend).await;
    });
    Ok(r)
}

/// Writes one unmasked server frame.
pub(super) async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    opcode: u8,
    payload: &[u8],
) -> bool {
    let mut head = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => head.push(n as u8),
        n if n <= 0xffff => {
            head.push(126);
            head.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            head.push(127);
            head.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    w.write_all(&head).await.is_ok()
        && w.write_all(payload).await.is_ok()
        && w.flush().await.is_ok()
}

/// Reads one client frame (opcode, unmasked payload); `None` at the end, on a broken
/// frame, or on one larger than [`MAX_FRAME`].
pub(super) async fn read_frame<R: AsyncRead + Unpin>(r: &mut R) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    r.read_exact(&mut head).await.ok()?;
    let opcode = head[0] & 0x0f;
    let masked = head[1] & 0x80 != 0;
    let mut len = (head[1] & 0x7f) as u64;
    if len == 126 {
        let mut b = [0u8; 2];
        r.read_exact(&mut b).await.ok()?;
        len = u16::from_be_bytes(b) as u64;
    } else if len == 127 {
        let mut b = [0u8; 8];
        r.read_exact(&mut b).await.ok()?;
        len = u64::from_be_bytes(b);
    }
    if len > MAX_FRAME {
        return None;
    }
    let mut mask = [0u8; 4];
    if masked {
        r.read_exact(&mut mask).await.ok()?;
    }
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).await.ok()?;
    if masked {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Some((opcode, payload))
}

/// Relays WebSocket message payloads from the client to the backend and the backend's bytes
/// back as binary messages (a close frame when the backend ends), until either side ends.
async fn relay<C, B>(client: C, backend: B)
where
    C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    B: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut c_read, c_write) = tokio::io::split(client);
    let (mut b_read, mut b_write) = tokio::io::split(backend);
    let c_write = Arc::new(Mutex::new(c_write));
    let down = {
        let c_write = c_write.clone();
        async move {
            let mut buf = vec![0u8; 32 * 1024];
            loop {
                match b_read.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if !write_frame(&mut *c_write.lock().await, 0x2, &buf[..n]).await {
                            break;
                        }
                    }
                }
            }
            let _ = write_frame(&mut *c_write.lock().await, 0x8, &1000u16.to_be_bytes()).await;
        }
    };
    let up = async move {
        while let Some((opcode, payload)) = read_frame(&mut c_read).await {
            match opcode {
                0x0..=0x2 => {
                    if b_write.write_all(&payload).await.is_err() {
                        break;
                    }
                }
                0x8 => {
                    let _ = write_frame(&mut *c_write.lock().await, 0x8, &payload).await;
                    break;
                }
                0x9 => {
                    if !write_frame(&mut *c_write.lock().await, 0xA, &payload).await {
                        break;
                    }
                }
                _ => {}
            }
        }
        let _ = b_write.shutdown().await;
    };
    // Either side ending ends the tunnel (the other half is dropped, never left waiting).
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn accept_key_of_rfc6455() {
        assert_eq!(
            super::accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }
}
