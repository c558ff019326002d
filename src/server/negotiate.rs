//! Content negotiation: which representation a response takes (JSON, YAML, Kubernetes
//! protobuf, Table, PartialObjectMetadata in JSON or protobuf) and how a request body is
//! decoded (JSON, YAML or protobuf), plus whether this request's error `Status` goes out as
//! protobuf.

use serde_json::Value;

use crate::meta::status::Status;

/// The representation a client asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
    /// meta.k8s.io Table, in the given version (v1 or v1beta1).
    Table(&'static str),
    /// meta.k8s.io PartialObjectMetadata(List), in the given version.
    PartialMetadata(&'static str),
    /// `application/vnd.kubernetes.protobuf` (built-in kinds only).
    Protobuf,
    /// meta.k8s.io PartialObjectMetadata(List) as protobuf (custom resources too: kube encodes
    /// the transformed object with meta.k8s.io's codecs).
    PartialMetadataProtobuf(&'static str),
}

impl Output {
    /// The representation of a response that is not the resource itself (a Status, a
    /// review, a subresource object): YAML when asked for, else JSON (never a Table).
    pub fn plain(self) -> Output {
        match self {
            Output::Yaml => Output::Yaml,
            Output::Protobuf => Output::Protobuf,
            _ => Output::Json,
        }
    }

    /// Whether the body is Kubernetes protobuf.
    pub fn is_protobuf(self) -> bool {
        matches!(self, Output::Protobuf | Output::PartialMetadataProtobuf(_))
    }

    /// The wire format of a transformed object (JSON, or protobuf for
    /// `PartialMetadataProtobuf`).
    pub fn wire(self) -> Output {
        if self.is_protobuf() {
            Output::Protobuf
        } else {
            Output::Json
        }
    }

    pub fn content_type(&self) -> &'static str {
        match self {
            Output::Yaml => "application/yaml",
            Output::Protobuf | Output::PartialMetadataProtobuf(_) => {
                crate::server::protobuf::MEDIA_TYPE
            }
            _ => "application/json",
        }
    }
}

/// [`output`] for a resource: without a protobuf encoding (custom resources), protobuf
/// clauses are passed over (kube's CRD endpoints serve JSON and YAML; only the
/// PartialObjectMetadata transform has protobuf there).
pub fn output_for(accept: Option<&str>, protobuf: bool) -> Result<Output, Status> {
    output_with(accept, protobuf)
}

/// Picks the first acceptable representation from an `Accept` header (kube honours order).
pub fn output(accept: Option<&str>) -> Result<Output, Status> {
    output_with(accept, true)
}

fn output_with(accept: Option<&str>, protobuf: bool) -> Result<Output, Status> {
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Output::Json);
    };
    for clause in accept.split(',') {
        let mut parts = clause.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        let (mut as_, mut g, mut v) = (None, None, None);
        for p in parts {
            if let Some((k, val)) = p.split_once('=') {
                let val = val.trim().trim_matches('"').to_string();
                match k.trim() {
                    "as" => as_ = Some(val),
                    "g" => g = Some(val),
                    "v" => v = Some(val),
                    _ => {}
                }
            }
        }
        let base = match media.as_str() {
            "application/json" | "*/*" | "application/*" | "application/json+watch" => Output::Json,
            "application/yaml" => Output::Yaml,
            crate::server::protobuf::MEDIA_TYPE => Output::Protobuf,
            _ => continue,
        };
        match as_.as_deref() {
            None if base == Output::Protobuf && !protobuf => continue,
            None => return Ok(base),
            Some(kind) => {
                // kube: Table only as JSON or YAML (not protobuf: Table has no protobuf form),
                // PartialObjectMetadata as JSON or protobuf.
                let ok = base == Output::Json || (base == Output::Protobuf && kind != "Table");
                if !ok || g.as_deref() != Some("meta.k8s.io") {
                    continue;
                }
                let version = match v.as_deref() {
                    Some("v1") => "v1",
                    Some("v1beta1") => "v1beta1",
                    _ => continue,
                };
                match kind {
                    "Table" => return Ok(Output::Table(version)),
                    "PartialObjectMetadata" | "PartialObjectMetadataList" => {
                        return Ok(if base == Output::Protobuf {
                            Output::PartialMetadataProtobuf(version)
                        } else {
                            Output::PartialMetadata(version)
                        });
                    }
                    _ => continue,
                }
            }
        }
    }
    Err(Status::not_acceptable())
}

/// Decodes a JSON or YAML request body into a JSON value.
pub fn decode_body(content_type: Option<&str>, body: &[u8]) -> Result<Value, Status> {
    let media = content_type
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "" | "application/json" | "*/*" => serde_json::from_slice(body)
            .map_err(|e| Status::bad_request(format!("error decoding request body: {e}"))),
        "application/yaml" | "application/x-yaml" | "text/yaml" => {
            let v: Value = serde_yaml::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error converting YAML to JSON: {e}")))?;
            Ok(v)
        }
        crate::server::protobuf::MEDIA_TYPE => {
            crate::server::protobuf::decode_object(body).map_err(Status::bad_request)
        }
        other => Err(Status::unsupported_media_type(
            other,
            &[
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ],
        )),
    }
}

/// A request body decoded for a strict read: the value (the last of duplicate keys kept, as
/// kube's non-strict decoder keeps it), and what a strict decoder needs besides: the JSON tree
/// with its duplicate keys, or the duplicate-key errors of a YAML body (go-yaml's lines).
/// Protobuf bodies have neither (kube's protobuf decoder has no strict mode).
pub struct Strict {
    pub value: Value,
    pub json: Option<crate::meta::strict::Node>,
    pub yaml_duplicates: Vec<String>,
}

/// [`decode_body`], keeping what a strict decoder reports.
pub fn decode_body_strict(content_type: Option<&str>, body: &[u8]) -> Result<Strict, Status> {
    let media = content_type
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "" | "application/json" | "*/*" => {
            let node = crate::meta::strict::parse_json(body)
                .map_err(|e| Status::bad_request(format!("error decoding request body: {e}")))?;
            Ok(Strict {
                value: node.clone().into_value(false),
                json: Some(node),
                yaml_duplicates: Vec::new(),
            })
        }
        "application/yaml" | "application/x-yaml" | "text/yaml" => Ok(Strict {
            value: decode_body(content_type, body)?,
            json: None,
            yaml_duplicates: std::str::from_utf8(body)
                .map(crate::meta::strict::yaml_duplicates)
                .unwrap_or_default(),
        }),
        _ => Ok(Strict {
            value: decode_body(content_type, body)?,
            json: None,
            yaml_duplicates: Vec::new(),
        }),
    }
}

/// Serializes a value in the negotiated format.
pub fn encode(out: Output, v: &Value) -> Vec<u8> {
    match out {
        Output::Yaml => serde_yaml::to_string(v).unwrap_or_default().into_bytes(),
        _ => json_bytes(v),
    }
}

tokio::task_local! {
    static PRETTY: bool;
    static PROTOBUF_STATUS: std::cell::Cell<bool>;
}

/// Whether an error `Status` for this `Accept` is encoded as protobuf: the first clause a
/// plain serializer takes (no `as=` transform, which errors do not get) is protobuf.
pub fn status_as_protobuf(accept: Option<&str>) -> bool {
    for clause in accept.unwrap_or("").split(',') {
        let mut parts = clause.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        if parts.any(|p| p.trim_start().starts_with("as=")) {
            continue;
        }
        match media.as_str() {
            crate::server::protobuf::MEDIA_TYPE => return true,
            "application/json" | "application/yaml" | "*/*" | "application/*" => return false,
            _ => {}
        }
    }
    false
}

/// Runs `f` with its error `Status` responses in protobuf when `protobuf` is set (see
/// [`status_as_protobuf`]); [`no_protobuf_status`] turns that off for a custom resource.
pub async fn with_protobuf_status<F: std::future::Future>(protobuf: bool, f: F) -> F::Output {
    PROTOBUF_STATUS
        .scope(std::cell::Cell::new(protobuf), f)
        .await
}

/// This request's errors go out as JSON (its endpoint has no protobuf serializer).
pub fn no_protobuf_status() {
    let _ = PROTOBUF_STATUS.try_with(|c| c.set(false));
}

/// Whether the current request's error `Status` is protobuf.
pub fn protobuf_status() -> bool {
    PROTOBUF_STATUS.try_with(|c| c.get()).unwrap_or(false)
}

/// Runs `f` with its JSON responses indented (`?pretty`, or curl and wget by default).
pub async fn with_pretty<F: std::future::Future>(pretty: bool, f: F) -> F::Output {
    PRETTY.scope(pretty, f).await
}

/// Whether the current request's JSON is indented.
pub fn pretty() -> bool {
    PRETTY.try_with(|p| *p).unwrap_or(false)
}

/// kube's `isPrettyPrint`: `?pretty=` parsed as Go's `strconv.ParseBool`; without it,
/// curl and wget get indented output.
pub fn wants_pretty(query: Option<&str>, user_agent: Option<&str>) -> bool {
    let asked = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "pretty")
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.is_empty());
    match asked {
        Some(v) => matches!(v.as_str(), "1" | "t" | "T" | "TRUE" | "true" | "True"),
        None => user_agent.is_some_and(|ua| ua.starts_with("curl") || ua.starts_with("Wget")),
    }
}

/// JSON as kube's encoder writes a body: compact (indented by two spaces when pretty), then
/// a newline.
pub fn json_bytes(v: &Value) -> Vec<u8> {
    let mut b = if pretty() {
        serde_json::to_vec_pretty(v)
    } else {
        serde_json::to_vec(v)
    }
    .unwrap_or_default();
    b.push(b'\n');
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers() {
        assert_eq!(output(None).unwrap(), Output::Json);
        assert_eq!(
            output(Some("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")).unwrap(),
            Output::Table("v1")
        );
        assert_eq!(output(Some("application/yaml")).unwrap(), Output::Yaml);
        assert_eq!(
            output(Some(
                "application/vnd.kubernetes.protobuf, application/json"
            ))
            .unwrap(),
            Output::Protobuf
        );
        assert_eq!(
            output_for(
                Some("application/vnd.kubernetes.protobuf, application/json"),
                false
            )
            .unwrap(),
            Output::Json
        );
        assert_eq!(
            output_for(Some("application/vnd.kubernetes.protobuf"), false)
                .unwrap_err()
                .code,
            406
        );
        // Table is never protobuf; the next clause answers.
        assert_eq!(
            output(Some(
                "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json"
            ))
            .unwrap(),
            Output::Json
        );
        assert_eq!(
            output_for(Some("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"), false).unwrap(),
            Output::PartialMetadataProtobuf("v1")
        );
        assert!(status_as_protobuf(Some(
            "application/vnd.kubernetes.protobuf, application/json"
        )));
        assert!(!status_as_protobuf(Some(
            "application/json, application/vnd.kubernetes.protobuf"
        )));
        assert!(!status_as_protobuf(Some("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json")));
        assert!(!status_as_protobuf(None));
        assert_eq!(output(Some("text/html")).unwrap_err().code, 406);
        assert_eq!(
            output(Some("application/json;as=Foo;g=meta.k8s.io;v=v1"))
                .unwrap_err()
                .code,
            406
        );
    }
}
