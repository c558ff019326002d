//! The `audit.k8s.io/v1` `Event` as kube encodes it (Go's field order, its `omitempty`
//! rules, `MicroTime` timestamps), the `EventList` a webhook receives, the legacy one-line
//! format, and kube's `SourceIPs` (`X-Forwarded-For`, `X-Real-Ip`, the peer address).

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::Serialize;
use serde_json::Value;

use super::policy::{Level, Stage};

/// `authentication.k8s.io/v1` `UserInfo`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UserInfo {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl From<&crate::authn::UserInfo> for UserInfo {
    fn from(u: &crate::authn::UserInfo) -> UserInfo {
        UserInfo {
            username: u.name.clone(),
            uid: u.uid.clone(),
            groups: u.groups.clone(),
            extra: u.extra.clone(),
        }
    }
}

/// The object a request is about.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The `metav1.Status` of `responseStatus` (its empty `metadata` printed, as Go prints it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ResponseStatus {
    pub metadata: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(skip_serializing_if = "is_zero")]
    pub code: u16,
}

fn is_zero(c: &u16) -> bool {
    *c == 0
}

impl ResponseStatus {
    pub fn code(code: u16) -> ResponseStatus {
        ResponseStatus {
            code,
            ..Default::default()
        }
    }

    /// The fields of a `Status` response body.
    pub fn from_status(body: &Value, code: u16) -> ResponseStatus {
        let s = |k: &str| {
            body.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        ResponseStatus {
            metadata: Default::default(),
            status: s("status"),
            message: s("message"),
            reason: s("reason"),
            details: body.get("details").cloned(),
            code: body
                .get("code")
                .and_then(Value::as_u64)
                .map(|c| c as u16)
                .unwrap_or(code),
        }
    }
}

/// One audit event.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<&'static str>,
    #[serde(serialize_with = "level")]
    pub level: Level,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    #[serde(serialize_with = "stage")]
    pub stage: Stage,
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    pub verb: String,
    pub user: UserInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<UserInfo>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    #[serde(serialize_with = "micro_time")]
    pub request_received_timestamp: chrono::DateTime<chrono::Utc>,
    #[serde(serialize_with = "micro_time")]
    pub stage_timestamp: chrono::DateTime<chrono::Utc>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

fn level<S: serde::Serializer>(l: &Level, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(l.as_str())
}

fn stage<S: serde::Serializer>(st: &Stage, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(st.as_str())
}

/// `metav1.MicroTime`: RFC 3339 in UTC with six fractional digits.
pub fn micro(t: &chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Go's `time.RFC3339Nano` in UTC (trailing zeros of the fraction dropped).
fn rfc3339_nano(t: &chrono::DateTime<chrono::Utc>) -> String {
    let frac = t.format("%.9f").to_string();
    let frac = frac.trim_end_matches('0').trim_end_matches('.');
    format!("{}{frac}Z", t.format("%Y-%m-%dT%H:%M:%S"))
}

fn micro_time<S: serde::Serializer>(
    t: &chrono::DateTime<chrono::Utc>,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(&micro(t))
}

impl Event {
    /// The event as a log line's JSON (with its kind and apiVersion), newline-terminated.
    pub fn json_line(&self) -> Vec<u8> {
        let mut ev = self.clone();
        ev.kind = Some("Event");
        ev.api_version = Some("audit.k8s.io/v1");
        let mut out = serde_json::to_vec(&ev).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// kube's `EventString`: the legacy format's line.
    pub fn legacy_line(&self) -> String {
        let q = |s: &str| crate::meta::field_error::go_quote(s);
        let list = |l: &[String]| l.iter().map(|g| q(g)).collect::<Vec<_>>().join(",");
        let (mut username, mut groups) = ("<none>".to_string(), "<none>".to_string());
        if !self.user.username.is_empty() {
            username = self.user.username.clone();
            if !self.user.groups.is_empty() {
                groups = list(&self.user.groups);
            }
        }
        let (mut asuser, mut asgroups) = ("<self>".to_string(), "<lookup>".to_string());
        if let Some(i) = &self.impersonated_user {
            asuser = i.username.clone();
            if !i.groups.is_empty() {
                asgroups = list(&i.groups);
            }
        }
        let namespace = self
            .object_ref
            .as_ref()
            .map(|o| o.namespace.as_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("<none>");
        let response = self
            .response_status
            .as_ref()
            .map(|r| r.code.to_string())
            .unwrap_or_else(|| "<deferred>".into());
        let ip = self
            .source_ips
            .first()
            .map(String::as_str)
            .unwrap_or("<unknown>");
        format!(
            "{} AUDIT: id={} stage={} ip={} method={} user={} groups={} as={} asgroups={} user-agent={} namespace={} uri={} response=\"{}\"\n",
            rfc3339_nano(&self.request_received_timestamp),
            q(&self.audit_id),
            q(self.stage.as_str()),
            q(ip),
            q(&self.verb),
            q(&username),
            q(&groups),
            q(&asuser),
            q(&asgroups),
            q(&self.user_agent),
            q(namespace),
            q(&self.request_uri),
            response
        )
    }
}

/// The `audit.k8s.io/v1` `EventList` of a webhook batch (items without kind and apiVersion,
/// as Go encodes a list's items).
pub fn event_list(events: &[std::sync::Arc<Event>]) -> Value {
    serde_json::json!({
        "kind": "EventList",
        "apiVersion": "audit.k8s.io/v1",
        "metadata": {},
        "items": events.iter().map(|e| serde_json::to_value(&**e).unwrap_or(Value::Null)).collect::<Vec<_>>(),
    })
}

/// kube's `utilnet.SourceIPs`: every valid address of `X-Forwarded-For`, then `X-Real-Ip`
/// when the chain lacks it, then the peer address unless it is already the last.
pub fn source_ips(headers: &http::HeaderMap, peer: Option<IpAddr>) -> Vec<String> {
    let mut ips: Vec<IpAddr> = Vec::new();
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let fwd = header("x-forwarded-for");
    if !fwd.is_empty() {
        ips.extend(fwd.split(',').filter_map(|p| parse_ip(p.trim())));
    }
    let real = header("x-real-ip");
    if !real.is_empty() {
        if let Some(ip) = parse_ip(&real) {
            if !ips.contains(&ip) {
                ips.push(ip);
            }
        }
    }
    if let Some(peer) = peer.map(unmap) {
        if ips.last() != Some(&peer) {
            ips.push(peer);
        }
    }
    ips.iter().map(IpAddr::to_string).collect()
}

/// An IPv4-mapped IPv6 address is the IPv4 address (Go's `net.IP` equality).
fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// `netutils.ParseIPSloppy`: leading zeros in IPv4 octets allowed.
fn parse_ip(s: &str) -> Option<IpAddr> {
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(unmap(ip));
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() == 4 {
        let mut o = [0u8; 4];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            o[i] = p.parse().ok()?;
        }
        return Some(IpAddr::from(o));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ips_as_kube() {
        let peer: Option<IpAddr> = Some("127.0.0.1".parse().unwrap());
        let mut h = http::HeaderMap::new();
        assert_eq!(source_ips(&h, peer), vec!["127.0.0.1"]);
        h.insert(
            "x-forwarded-for",
            "10.0.0.1, bogus, 010.0.0.2".parse().unwrap(),
        );
        assert_eq!(
            source_ips(&h, peer),
            vec!["10.0.0.1", "10.0.0.2", "127.0.0.1"]
        );
        h.insert("x-real-ip", "10.0.0.1".parse().unwrap());
        assert_eq!(
            source_ips(&h, peer),
            vec!["10.0.0.1", "10.0.0.2", "127.0.0.1"]
        );
        h.insert("x-real-ip", "10.0.0.3".parse().unwrap());
        h.insert("x-forwarded-for", "10.0.0.1,127.0.0.1".parse().unwrap());
        assert_eq!(
            source_ips(&h, peer),
            vec!["10.0.0.1", "127.0.0.1", "10.0.0.3", "127.0.0.1"]
        );
        h.remove("x-real-ip");
        assert_eq!(source_ips(&h, peer), vec!["10.0.0.1", "127.0.0.1"]);
    }

    #[test]
    fn event_json_as_go_prints_it() {
        let t = chrono::DateTime::parse_from_rfc3339("2025-01-02T03:04:05.123456789Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let ev = Event {
            kind: None,
            api_version: None,
            level: Level::Metadata,
            audit_id: "id".into(),
            stage: Stage::ResponseComplete,
            request_uri: "/api/v1/namespaces/default/pods?limit=500".into(),
            verb: "list".into(),
            user: UserInfo {
                username: "admin".into(),
                groups: vec!["system:masters".into()],
                ..Default::default()
            },
            impersonated_user: None,
            source_ips: vec!["127.0.0.1".into()],
            user_agent: "kubectl".into(),
            object_ref: Some(ObjectRef {
                resource: "pods".into(),
                namespace: "default".into(),
                api_version: "v1".into(),
                ..Default::default()
            }),
            response_status: Some(ResponseStatus::code(200)),
            request_object: None,
            response_object: None,
            request_received_timestamp: t,
            stage_timestamp: t,
            annotations: [(
                "authorization.k8s.io/decision".to_string(),
                "allow".to_string(),
            )]
            .into_iter()
            .collect(),
        };
        assert_eq!(
            String::from_utf8(ev.json_line()).unwrap(),
            concat!(
                r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id","stage":"ResponseComplete","#,
                r#""requestURI":"/api/v1/namespaces/default/pods?limit=500","verb":"list","user":{"username":"admin","groups":["system:masters"]},"#,
                r#""sourceIPs":["127.0.0.1"],"userAgent":"kubectl","objectRef":{"resource":"pods","namespace":"default","apiVersion":"v1"},"#,
                r#""responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2025-01-02T03:04:05.123456Z","#,
                r#""stageTimestamp":"2025-01-02T03:04:05.123456Z","annotations":{"authorization.k8s.io/decision":"allow"}}"#,
                "\n"
            )
        );
        assert_eq!(
            ev.legacy_line(),
            "2025-01-02T03:04:05.123456789Z AUDIT: id=\"id\" stage=\"ResponseComplete\" ip=\"127.0.0.1\" method=\"list\" user=\"admin\" groups=\"\\\"system:masters\\\"\" as=\"<self>\" asgroups=\"<lookup>\" user-agent=\"kubectl\" namespace=\"default\" uri=\"/api/v1/namespaces/default/pods?limit=500\" response=\"200\"\n"
        );
    }
}
