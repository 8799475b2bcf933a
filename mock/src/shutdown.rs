//! Stopping a mock: the [`MockServer`](super::MockServer) asks each thread across threads, and
//! each thread then ends its own connections (idle keep-alive and hanging ones included) before
//! its runtime goes away.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::pin::pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Poll, Waker};

/// Set from any thread, awaited by one serving thread.
#[derive(Debug, Default)]
pub(crate) struct ThreadStop {
    requested: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl ThreadStop {
    pub(crate) fn request(&self) {
        self.requested.store(true, Ordering::Release);
        let waker = self.waker.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub(crate) async fn requested(&self) {
        poll_fn(|cx| {
            // Register before checking, so a request between the two still wakes us.
            *self.waker.lock().unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
            if self.requested.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

/// The live connections of one thread, so they can all be ended at once.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    stopping: Cell<bool>,
    next_id: Cell<u64>,
    /// Each live connection, with the waker of its task once it has waited.
    live: RefCell<HashMap<u64, Option<Waker>>>,
    /// The thread's main future, waiting for `live` to empty.
    drained: RefCell<Option<Waker>>,
}

impl Connections {
    /// Runs `connection` until it ends or the thread stops.
    pub(crate) async fn run<F: Future<Output = ()>>(self: Rc<Self>, connection: F) {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        self.live.borrow_mut().insert(id, None);
        let _ticket = Ticket { connections: &self, id };
        let mut connection = pin!(connection);
        poll_fn(|cx| {
            if self.stopping.get() {
                return Poll::Ready(());
            }
            if connection.as_mut().poll(cx).is_ready() {
                return Poll::Ready(());
            }
            if let Some(slot) = self.live.borrow_mut().get_mut(&id) {
                if !slot.as_ref().is_some_and(|known| known.will_wake(cx.waker())) {
                    *slot = Some(cx.waker().clone());
                }
            }
            Poll::Pending
        })
        .await;
    }

    /// Ends every connection at its next poll and waits until all are gone.
    pub(crate) async fn stop_all(&self) {
        self.stopping.set(true);
        let wakers: Vec<Waker> = self.live.borrow_mut().values_mut().filter_map(Option::take).collect();
        for waker in wakers {
            waker.wake();
        }
        poll_fn(|cx| {
            if self.live.borrow().is_empty() {
                Poll::Ready(())
            } else {
                *self.drained.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.get()
    }
}

/// Removes a connection from the live set however its task ends.
struct Ticket<'a> {
    connections: &'a Connections,
    id: u64,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let now_empty = {
            let mut live = self.connections.live.borrow_mut();
            live.remove(&self.id);
            live.is_empty()
        };
        if now_empty {
            if let Some(waker) = self.connections.drained.borrow_mut().take() {
                waker.wake();
            }
        }
    }
}
