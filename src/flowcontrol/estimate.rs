//! How many seats a request takes (kube's `WorkEstimator`): one for most requests; a LIST
//! one per hundred objects it will go through (all the stored ones when it is served from the
//! watch cache, twice the page from storage, the stored ones plus the page with selectors),
//! a watch that asks for its initial events the same; a write as many as it will wake
//! watchers, a seat per ten, held for five milliseconds per seat after it ends. Never more
//! than the level's maximum, never more than ten.

use std::time::Duration;

use super::queueset::Work;
use crate::server::request_info::RequestInfo;

const OBJECTS_PER_SEAT: f64 = 100.0;
const WATCHES_PER_SEAT: f64 = 10.0;
const EVENT_ADDITIONAL_DURATION: Duration = Duration::from_millis(5);
pub const MAXIMUM_SEATS_LIMIT: usize = 10;

/// The stored objects and watchers of the request's resource, when it is served here.
pub type Counts = Option<(usize, usize)>;

fn param<'a>(query: Option<&'a str>, key: &str) -> Option<std::borrow::Cow<'a, str>> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// The work of a request; `max_seats` is the level's (0: the overall limit).
pub fn estimate(
    info: Option<&RequestInfo>,
    query: Option<&str>,
    counts: impl FnOnce() -> Counts,
    max_seats: usize,
) -> Work {
    let max_seats = if max_seats == 0 {
        MAXIMUM_SEATS_LIMIT
    } else {
        max_seats.min(MAXIMUM_SEATS_LIMIT)
    };
    let Some(info) = info else {
        return Work::one();
    };
    match info.verb {
        "list" | "watch" => {
            if info.verb == "watch" && param(query, "sendInitialEvents").as_deref() != Some("true")
            {
                return Work::one();
            }
            let Some((stored, _)) = counts() else {
                return Work::one();
            };
            let limit = param(query, "limit")
                .and_then(|l| l.parse::<usize>().ok())
                .filter(|l| *l > 0 && *l < stored)
                .unwrap_or(stored);
            let from_storage = info.verb == "list"
                && (param(query, "continue").is_some_and(|c| !c.is_empty())
                    || param(query, "resourceVersionMatch").as_deref() == Some("Exact"));
            let selectors = ["labelSelector", "fieldSelector"]
                .iter()
                .any(|k| param(query, k).is_some_and(|v| !v.is_empty()));
            let objects = if !from_storage {
                stored
            } else if selectors {
                stored + limit
            } else {
                2 * limit
            };
            let seats = ((objects as f64) / OBJECTS_PER_SEAT).ceil() as usize;
            Work {
                initial_seats: seats.clamp(1, max_seats),
                ..Work::one()
            }
        }
        "create" | "update" | "patch" | "delete" | "deletecollection" => {
            let watchers = counts().map(|(_, w)| w).unwrap_or(0);
            if (watchers as f64) < WATCHES_PER_SEAT {
                return Work::one();
            }
            let seats = ((watchers as f64) / WATCHES_PER_SEAT).ceil();
            let work = seats * EVENT_ADDITIONAL_DURATION.as_secs_f64();
            let final_seats = (seats as usize).min(max_seats).max(1);
            Work {
                initial_seats: 1,
                final_seats,
                additional_latency: Duration::from_secs_f64(work / final_seats as f64),
            }
        }
        _ => Work::one(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(verb: &'static str) -> RequestInfo {
        RequestInfo {
            resource: "configmaps".into(),
            version: "v1".into(),
            verb,
            ..Default::default()
        }
    }

    #[test]
    fn lists_cost_by_object_count() {
        let l = info("list");
        assert_eq!(
            estimate(Some(&l), None, || Some((250, 0)), 0).initial_seats,
            3
        );
        assert_eq!(
            estimate(Some(&l), None, || Some((5000, 0)), 0).initial_seats,
            10
        );
        assert_eq!(
            estimate(Some(&l), None, || Some((5000, 0)), 4).initial_seats,
            4
        );
        // From storage, a page of 50: twice the page.
        let q = Some("limit=50&continue=abc");
        assert_eq!(
            estimate(Some(&l), q, || Some((5000, 0)), 0).initial_seats,
            1
        );
        assert_eq!(estimate(Some(&l), None, || None, 0).initial_seats, 1);
        // A plain watch is one seat; one asking for its initial events costs as a list.
        let w = info("watch");
        assert_eq!(
            estimate(Some(&w), None, || Some((5000, 0)), 0).initial_seats,
            1
        );
        assert_eq!(
            estimate(
                Some(&w),
                Some("sendInitialEvents=true"),
                || Some((500, 0)),
                0
            )
            .initial_seats,
            5
        );
    }

    #[test]
    fn writes_cost_by_watchers() {
        let c = info("create");
        assert_eq!(estimate(Some(&c), None, || Some((0, 9)), 0), Work::one());
        let w = estimate(Some(&c), None, || Some((0, 250)), 0);
        assert_eq!((w.initial_seats, w.final_seats), (1, 10));
        assert_eq!(w.additional_latency, Duration::from_micros(12_500));
    }
}
