//! One watcher's bounded queue, between the dispatcher (which never waits) and the watcher's
//! stream: a `VecDeque` behind a mutex plus a `Notify`, which costs nothing until events
//! arrive (an idle watcher holds no preallocated block, unlike a channel) and carries the
//! 410 the dispatcher ends a watcher with.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tokio::sync::Notify;

use super::Out;
use crate::meta::status::Status;

/// A queue that kept more than this many slots once drained gives them back.
const KEEP_SLOTS: usize = 32;

struct Shared {
    items: Mutex<VecDeque<Out>>,
    cap: usize,
    notify: Notify,
    /// The dispatcher dropped its end (the watcher was removed).
    sender_gone: AtomicBool,
    /// The stream dropped its end.
    receiver_gone: AtomicBool,
    /// Why the dispatcher removed the watcher (sent as the last, ERROR, event).
    failed: OnceLock<Status>,
}

impl Shared {
    fn items(&self) -> MutexGuard<'_, VecDeque<Out>> {
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The dispatcher's end.
pub(super) struct Sender(Arc<Shared>);

/// The stream's end.
pub(super) struct Receiver(Arc<Shared>);

/// Why [`Sender::try_send`] did not queue.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SendError {
    Full,
    Closed,
}

/// A queue of at most `cap` events.
pub(super) fn queue(cap: usize) -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        items: Mutex::new(VecDeque::new()),
        cap: cap.max(1),
        notify: Notify::new(),
        sender_gone: AtomicBool::new(false),
        receiver_gone: AtomicBool::new(false),
        failed: OnceLock::new(),
    });
    (Sender(shared.clone()), Receiver(shared))
}

impl Sender {
    pub(super) fn try_send(&self, out: Out) -> Result<(), SendError> {
        if self.is_closed() {
            return Err(SendError::Closed);
        }
        {
            let mut q = self.0.items();
            if q.len() >= self.0.cap {
                return Err(SendError::Full);
            }
            q.push_back(out);
        }
        self.0.notify.notify_one();
        Ok(())
    }

    pub(super) fn is_closed(&self) -> bool {
        self.0.receiver_gone.load(Ordering::Acquire)
    }

    pub(super) fn max_capacity(&self) -> usize {
        self.0.cap
    }

    /// Records why the watcher is being removed (the first reason wins).
    pub(super) fn fail(&self, status: Status) {
        let _ = self.0.failed.set(status);
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.0.sender_gone.store(true, Ordering::Release);
        self.0.notify.notify_one();
    }
}

impl Receiver {
    /// The next queued event; `None` once the queue is empty and the dispatcher let go.
    /// Cancel safe: an event is only taken in the poll that returns it.
    pub(super) async fn recv(&mut self) -> Option<Out> {
        loop {
            {
                let mut q = self.0.items();
                if let Some(o) = q.pop_front() {
                    if q.is_empty() && q.capacity() > KEEP_SLOTS {
                        *q = VecDeque::new();
                    }
                    return Some(o);
                }
            }
            if self.0.sender_gone.load(Ordering::Acquire) {
                // Pushed before the sender went away?
                return self.0.items().pop_front();
            }
            // A notification sent after the check above is kept as a permit.
            self.0.notify.notified().await;
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.items().is_empty()
    }

    /// Why the dispatcher removed the watcher, if it did.
    pub(super) fn failed(&self) -> Option<&Status> {
        self.0.failed.get()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.0.receiver_gone.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bounded_then_closed() {
        let (tx, mut rx) = queue(2);
        assert_eq!(tx.try_send(Out::Bookmark(1, false)), Ok(()));
        assert_eq!(tx.try_send(Out::Bookmark(2, false)), Ok(()));
        assert_eq!(tx.try_send(Out::Bookmark(3, false)), Err(SendError::Full));
        assert!(matches!(rx.recv().await, Some(Out::Bookmark(1, _))));
        assert!(!rx.is_empty());
        tx.fail(Status::gone("x".to_string()));
        drop(tx);
        // What was queued before the dispatcher let go still arrives, then the end.
        assert!(matches!(rx.recv().await, Some(Out::Bookmark(2, _))));
        assert!(rx.recv().await.is_none());
        assert_eq!(rx.failed().map(|s| s.code), Some(410));
    }

    #[tokio::test]
    async fn wakes_a_waiting_receiver_and_sees_it_gone() {
        let (tx, mut rx) = queue(4);
        let waiter = tokio::spawn(async move {
            let got = rx.recv().await;
            (got.is_some(), rx)
        });
        tokio::task::yield_now().await;
        tx.try_send(Out::Bookmark(5, false)).unwrap();
        let (got, rx) = tokio::time::timeout(std::time::Duration::from_secs(10), waiter)
            .await
            .unwrap()
            .unwrap();
        assert!(got);
        drop(rx);
        assert!(tx.is_closed());
        assert_eq!(tx.try_send(Out::Bookmark(6, false)), Err(SendError::Closed));
    }
}
