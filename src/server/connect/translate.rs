//! kube's StreamTranslator for exec and attach: a client's WebSocket `v5.channel.k8s.io`
//! session is answered here and carried to the kubelet as SPDY/3.1 (`v4.channel.k8s.io`),
//! the remote command protocol every kubelet speaks. WebSocket messages are a channel byte
//! and data (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; v5's `[255, n]` closes stream n);
//! SPDY streams carry the same data, one stream per channel, created in client-go's order
//! (error, stdin, stdout, stderr, resize) with a `streamtype` header each.
//!
//! SPDY header blocks are zlib streams (one per direction of the connection): ours are
//! written as stored deflate blocks each ended by a sync flush (no compressor needed; any
//! inflater reads them), the kubelet's are skipped unread (their frames say how long they
//! are, and nothing in them is needed).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use super::tunnel::{accept_key, read_frame, write_frame};
use super::{dial_error, full, Body};
use crate::meta::status::Status;

/// The WebSocket subprotocol kube translates.
pub const V5: &str = "v5.channel.k8s.io";

/// The streams a remote command asks for (its `stdin`, `stdout`, `stderr`, `tty` flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct Streams {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

/// A WebSocket upgrade offering `v5.channel.k8s.io` (kube's
/// `IsWebSocketRequestWithStreamCloseProtocol`).
pub fn wanted(h: &http::HeaderMap) -> bool {
    super::header_has(h, header::UPGRADE, "websocket")
        && super::header_has(
            h,
            header::HeaderName::from_static("sec-websocket-protocol"),
            V5,
        )
}

/// Answers the client's upgrade and translates the session in a task of its own.
pub fn serve(
    kubelet: reqwest::Client,
    url: String,
    authority: String,
    req: Request<Incoming>,
    on_client: hyper::upgrade::OnUpgrade,
    streams: Streams,
) -> Result<Response<Body>, Status> {
    let Some(key) = req
        .headers()
        .get("sec-websocket-key")
        .and_then(|v| v.to_str().ok())
    else {
        return Err(Status::bad_request("missing Sec-WebSocket-Key"));
    };
    let mut r = Response::new(full(Bytes::new()));
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept_key(key)) {
        h.insert("sec-websocket-accept", v);
    }
    h.insert("sec-websocket-protocol", HeaderValue::from_static(V5));
    tokio::spawn(async move {
        let Ok(client) = on_client.await else {
            return;
        };
        let client = hyper_util::rt::TokioIo::new(client);
        let (c_read, c_write) = tokio::io::split(client);
        let c_write = Arc::new(Mutex::new(c_write));
        let resp = kubelet
            .post(&url)
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "SPDY/3.1")
            .header("x-stream-protocol-version", "v4.channel.k8s.io")
            .send()
            .await;
        let failure = match resp {
            Err(e) => Some(format!(
                "error dialing backend: {}",
                dial_error(&authority, &e)
            )),
            Ok(r) if r.status() != StatusCode::SWITCHING_PROTOCOLS => {
                let code = r.status();
                let body = r.text().await.unwrap_or_default();
                Some(format!(
                    "unable to upgrade connection: {}",
                    if body.trim().is_empty() {
                        code.to_string()
                    } else {
                        body.trim().to_string()
                    }
                ))
            }
            Ok(r) => match r.upgrade().await {
                Ok(k) => {
                    session(k, c_read, c_write.clone(), streams).await;
                    None
                }
                Err(e) => Some(format!("unable to upgrade connection: {e}")),
            },
        };
        let mut w = c_write.lock().await;
        if let Some(why) = failure {
            let mut msg = vec![3u8];
            msg.extend_from_slice(&crate::server::negotiate::json_bytes(
                &Status::internal(why).to_json(),
            ));
            let _ = write_frame(&mut *w, 0x2, &msg).await;
        }
        let _ = write_frame(&mut *w, 0x8, &1000u16.to_be_bytes()).await;
        let _ = w.shutdown().await;
    });
    Ok(r)
}

/// One SPDY frame of ours: a control frame (`kind`) or a data frame (`stream`).
fn control(kind: u16, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80, 0x03];
    f.extend_from_slice(&kind.to_be_bytes());
    f.push(flags);
    f.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    f.extend_from_slice(body);
    f
}

fn data(stream: u32, flags: u8, body: &[u8]) -> Vec<u8> {
    let mut f = (stream & 0x7fff_ffff).to_be_bytes().to_vec();
    f.push(flags);
    f.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    f.extend_from_slice(body);
    f
}

const FIN: u8 = 0x01;

/// A header block as SPDY/3 lays it out, zlib-wrapped in stored blocks (`first`: the
/// connection's first block, which carries the zlib header).
fn header_block(pairs: &[(&str, &str)], first: bool) -> Vec<u8> {
    let mut raw = (pairs.len() as u32).to_be_bytes().to_vec();
    for (k, v) in pairs {
        raw.extend_from_slice(&(k.len() as u32).to_be_bytes());
        raw.extend_from_slice(k.as_bytes());
        raw.extend_from_slice(&(v.len() as u32).to_be_bytes());
        raw.extend_from_slice(v.as_bytes());
    }
    let mut out = Vec::new();
    if first {
        out.extend_from_slice(&[0x78, 0x01]);
    }
    for chunk in raw.chunks(0xffff) {
        let n = chunk.len() as u16;
        out.push(0x00);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    // The sync flush: an empty stored block.
    out.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
    out
}

/// The SPDY side: streams opened, data relayed both ways, until the kubelet has finished
/// every stream it writes (or either side goes away).
async fn session<K, R, W>(kubelet: K, mut c_read: R, c_write: Arc<Mutex<W>>, s: Streams)
where
    K: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
{
    let (mut k_read, k_write) = tokio::io::split(kubelet);
    let k_write = Arc::new(Mutex::new(k_write));
    // client-go's order; channel numbers as the WebSocket protocol's.
    let mut wanted: Vec<(&str, u8)> = vec![("error", 3)];
    if s.stdin {
        wanted.push(("stdin", 0));
    }
    if s.stdout {
        wanted.push(("stdout", 1));
    }
    if s.stderr {
        wanted.push(("stderr", 2));
    }
    if s.tty {
        wanted.push(("resize", 4));
    }
    let mut by_channel: HashMap<u8, u32> = HashMap::new();
    let mut by_stream: HashMap<u32, u8> = HashMap::new();
    {
        let mut w = k_write.lock().await;
        for (i, (kind, channel)) in wanted.iter().enumerate() {
            let id = 2 * i as u32 + 1;
            let mut body = id.to_be_bytes().to_vec();
            body.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
            body.extend_from_slice(&header_block(&[("streamtype", kind)], i == 0));
            if w.write_all(&control(1, 0, &body)).await.is_err() {
                return;
            }
            by_channel.insert(*channel, id);
            by_stream.insert(id, *channel);
        }
        let _ = w.flush().await;
    }
    // The streams the kubelet writes and must finish.
    let mut open: Vec<u32> = wanted
        .iter()
        .filter(|(_, c)| matches!(c, 1..=3))
        .map(|(_, c)| by_channel[c])
        .collect();
    let down = {
        let c_write = c_write.clone();
        let k_write = k_write.clone();
        async move {
            loop {
                let mut head = [0u8; 8];
                if k_read.read_exact(&mut head).await.is_err() {
                    return;
                }
                let flags = head[4];
                let len = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
                if len > 16 << 20 {
                    return;
                }
                let mut payload = vec![0u8; len];
                if k_read.read_exact(&mut payload).await.is_err() {
                    return;
                }
                if head[0] & 0x80 != 0 {
                    match u16::from_be_bytes([head[2], head[3]]) {
                        // RST_STREAM: that stream is done.
                        3 if payload.len() >= 4 => {
                            let id = u32::from_be_bytes([
                                payload[0], payload[1], payload[2], payload[3],
                            ]) & 0x7fff_ffff;
                            open.retain(|s| *s != id);
                        }
                        // PING: answered.
                        6 => {
                            let mut w = k_write.lock().await;
                            let _ = w.write_all(&control(6, 0, &payload)).await;
                            let _ = w.flush().await;
                        }
                        // GOAWAY
                        7 => return,
                        _ => {}
                    }
                } else {
                    let id = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) & 0x7fff_ffff;
                    if let Some(channel) = by_stream.get(&id).filter(|c| matches!(c, 1..=3)) {
                        if !payload.is_empty() {
                            let mut msg = vec![*channel];
                            msg.extend_from_slice(&payload);
                            if !write_frame(&mut *c_write.lock().await, 0x2, &msg).await {
                                return;
                            }
                        }
                    }
                    if flags & FIN != 0 {
                        open.retain(|s| *s != id);
                    }
                }
                if open.is_empty() {
                    return;
                }
            }
        }
    };
    let up = async move {
        while let Some((opcode, payload)) = read_frame(&mut c_read).await {
            match opcode {
                0x1 | 0x2 if !payload.is_empty() => {
                    let frame = match payload[0] {
                        255 => payload
                            .get(1)
                            .and_then(|c| by_channel.get(c))
                            .map(|id| data(*id, FIN, &[])),
                        c => by_channel
                            .get(&c)
                            .filter(|_| matches!(c, 0 | 4))
                            .map(|id| data(*id, 0, &payload[1..])),
                    };
                    if let Some(f) = frame {
                        let mut w = k_write.lock().await;
                        if w.write_all(&f).await.is_err() || w.flush().await.is_err() {
                            return;
                        }
                    }
                }
                0x8 => return,
                0x9 => {
                    if !write_frame(&mut *c_write.lock().await, 0xA, &payload).await {
                        return;
                    }
                }
                _ => {}
            }
        }
    };
    tokio::select! {
        _ = down => {}
        _ = up => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_blocks_are_stored_deflate() {
        let b = super::header_block(&[("streamtype", "error")], true);
        assert_eq!(&b[..2], &[0x78, 0x01]);
        // stored block header, LEN 27 (count, name and value with their lengths), NLEN.
        assert_eq!(&b[2..7], &[0x00, 27, 0, !27u8, 0xff]);
        assert_eq!(&b[7..11], &1u32.to_be_bytes());
        assert_eq!(&b[b.len() - 5..], &[0x00, 0x00, 0x00, 0xff, 0xff]);
    }
}
