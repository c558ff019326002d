//! One watcher's side: its initial events, then its bounded queue, with periodic bookmarks,
//! the end-of-timeout bookmark, and the 410 ERROR when the dispatcher dropped it.

use std::collections::VecDeque;
use std::sync::Weak;

use tokio::sync::watch;
use tokio::time::{Instant, Interval};

use super::cache::Inner;
use super::queue::Receiver;
use super::{Out, Request};
use crate::kv::Revision;

/// The events of one watch, in order. Dropping it unregisters the watcher.
pub struct WatchStream {
    inner: Weak<Inner>,
    resource: Vec<u8>,
    id: u64,
    initial: VecDeque<Out>,
    rx: Option<Receiver>,
    revision: Option<watch::Receiver<Revision>>,
    /// The watch receives events after this revision.
    from: Revision,
    /// Highest revision of an event handed out.
    last_sent: Revision,
    deadline: Instant,
    bookmarks: bool,
    /// Periodic bookmarks (only for watches that allow them: an idle watcher without
    /// bookmarks holds no timer besides its deadline).
    ticker: Option<Box<Interval>>,
    bookmark_due: bool,
    done: bool,
}

impl WatchStream {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        inner: Weak<Inner>,
        req: &Request,
        resource: Vec<u8>,
        id: u64,
        initial: VecDeque<Out>,
        rx: Option<Receiver>,
        from: Revision,
    ) -> WatchStream {
        let (interval, revision) = match inner.upgrade() {
            Some(i) => (i.opts.bookmark_interval, Some(i.revision.subscribe())),
            None => (std::time::Duration::from_secs(60), None),
        };
        let interval = interval.max(std::time::Duration::from_millis(10));
        let ticker = req.bookmarks.then(|| {
            let mut t = tokio::time::interval_at(Instant::now() + interval, interval);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            Box::new(t)
        });
        WatchStream {
            inner,
            resource,
            id,
            initial,
            rx,
            revision,
            from,
            last_sent: from,
            // A huge timeoutSeconds must not overflow the clock: cap at a year.
            deadline: Instant::now()
                + req
                    .timeout
                    .min(std::time::Duration::from_secs(365 * 24 * 3600)),
            bookmarks: req.bookmarks,
            ticker,
            bookmark_due: false,
            done: false,
        }
    }

    /// A revision the client may resume from without missing anything: the cache revision if
    /// everything queued has been handed out, else the last revision handed out.
    fn progress(&self) -> Revision {
        let cache = self.revision.as_ref().map(|r| *r.borrow()).unwrap_or(0);
        let drained = self.rx.as_ref().is_none_or(|rx| rx.is_empty());
        if drained && self.initial.is_empty() {
            cache.max(self.from).max(self.last_sent)
        } else {
            self.last_sent.max(self.from)
        }
    }

    fn sent(&mut self, out: Out) -> Option<Out> {
        if let Out::Event(e, _) = &out {
            self.last_sent = self.last_sent.max(e.revision);
        }
        Some(out)
    }

    /// The next event, or None when the watch is over.
    pub async fn next(&mut self) -> Option<Out> {
        loop {
            if let Some(o) = self.initial.pop_front() {
                if matches!(o, Out::Error(_)) {
                    self.initial.clear();
                    self.done = true;
                    self.rx = None;
                }
                if self.initial.is_empty() {
                    // The initial state's slots are not kept for the watch's lifetime.
                    self.initial = VecDeque::new();
                }
                return self.sent(o);
            }
            if self.done {
                return None;
            }
            if self.bookmark_due && self.rx.as_ref().is_some_and(|rx| rx.is_empty()) {
                self.bookmark_due = false;
                return Some(Out::Bookmark(self.progress(), false));
            }
            let Some(rx) = self.rx.as_mut() else {
                self.done = true;
                return None;
            };
            tokio::select! {
                biased;
                m = rx.recv() => match m {
                    Some(o) => return self.sent(o),
                    None => {
                        self.done = true;
                        return rx.failed().map(|s| Out::Error(Box::new(s.clone())));
                    }
                },
                _ = tokio::time::sleep_until(self.deadline) => {
                    self.done = true;
                    if self.bookmarks {
                        return Some(Out::Bookmark(self.progress(), false));
                    }
                    return None;
                }
                _ = tick(&mut self.ticker), if self.bookmarks => {
                    self.bookmark_due = true;
                }
            }
        }
    }
}

/// The next tick of a ticker that is there (watches with bookmarks).
async fn tick(t: &mut Option<Box<Interval>>) {
    match t {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

impl Drop for WatchStream {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.unregister(&self.resource, self.id);
        }
    }
}
