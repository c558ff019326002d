//! `/healthz`, `/livez`, `/readyz` with kube-apiserver's output format: `?verbose` lists
//! `[+]name ok` lines, `?exclude=name` skips a check, `/<endpoint>/<check>` runs one check.

use std::sync::Arc;

use http::{header, HeaderValue, Response, StatusCode};

use super::{full, App, Body};

/// The checks of one endpoint, in order.
fn checks(endpoint: &str) -> &'static [&'static str] {
    match endpoint {
        "readyz" => &[
            "ping",
            "log",
            "raft",
            "poststarthook/rbac/bootstrap-roles",
            "watch-cache",
            "shutdown",
            "drain",
        ],
        _ => &["ping", "log", "raft"],
    }
}

fn run(app: &App, endpoint: &str, check: &str) -> Result<(), String> {
    // kube-apiserver's delayed liveness checks: healthy until the grace period has passed.
    if endpoint == "livez" && app.started.elapsed() < app.livez_grace_period {
        return Ok(());
    }
    match check {
        "ping" | "log" => Ok(()),
        "raft" => app.store.kv().health(),
        // The watch cache keeps up with what this replica applied.
        "watch-cache" => {
            if app.watch.lagging(std::time::Duration::from_secs(5)) {
                Err("the watch cache lags the applied revision".into())
            } else {
                Ok(())
            }
        }
        // The authorizers' indexes have loaded this replica's state once.
        "poststarthook/rbac/bootstrap-roles" => {
            if app.authz.is_synced() {
                Ok(())
            } else {
                Err("not finished".into())
            }
        }
        "shutdown" => {
            if app.is_shutting_down() {
                Err("process is shutting down".into())
            } else {
                Ok(())
            }
        }
        // `rafter admin drain`: out of service for maintenance.
        "drain" => {
            if app.store.kv().is_drained() {
                Err("replica is drained for maintenance".into())
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn text(code: StatusCode, body: String) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Serves `path` if it is a health path; `None` otherwise.
pub fn serve(app: &Arc<App>, path: &str, query: &[(String, String)]) -> Option<Response<Body>> {
    let trimmed = path.trim_matches('/');
    let (endpoint, single) = match trimmed.split_once('/') {
        Some((e, c)) => (e, Some(c)),
        None => (trimmed, None),
    };
    if !matches!(endpoint, "healthz" | "livez" | "readyz") {
        return None;
    }
    let all = checks(endpoint);
    if let Some(check) = single {
        if !all.contains(&check) {
            return Some(text(StatusCode::NOT_FOUND, "404 page not found\n".into()));
        }
        return Some(match run(app, endpoint, check) {
            Ok(()) => text(StatusCode::OK, "ok".into()),
            Err(e) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {e}\n"),
            ),
        });
    }
    let verbose = query.iter().any(|(k, _)| k == "verbose");
    let excluded: Vec<&str> = query
        .iter()
        .filter(|(k, _)| k == "exclude")
        .map(|(_, v)| v.as_str())
        .collect();
    let mut out = String::new();
    let mut failed = false;
    for check in all {
        if excluded.contains(check) {
            out.push_str(&format!("[+]{check} excluded: ok\n"));
            continue;
        }
        match run(app, endpoint, check) {
            Ok(()) => out.push_str(&format!("[+]{check} ok\n")),
            Err(_) => {
                failed = true;
                out.push_str(&format!("[-]{check} failed: reason withheld\n"));
            }
        }
    }
    let unknown: Vec<String> = excluded
        .iter()
        .filter(|e| !all.contains(e))
        .map(|e| format!("{e:?}"))
        .collect();
    if !unknown.is_empty() {
        out.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unknown.join(",")
        ));
    }
    if failed {
        out.push_str(&format!("{endpoint} check failed\n"));
        return Some(text(StatusCode::INTERNAL_SERVER_ERROR, out));
    }
    if verbose {
        out.push_str(&format!("{endpoint} check passed\n"));
        Some(text(StatusCode::OK, out))
    } else {
        Some(text(StatusCode::OK, "ok".into()))
    }
}
