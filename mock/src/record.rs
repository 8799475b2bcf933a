//! The recorder (a bounded ring of provider requests shared by all threads) and the counters
//! behind `GET /mock/stats`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::Serialize;

/// One request as the gateway sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// `[name, value]` pairs in the order received.
    pub headers: Vec<(String, String)>,
    /// The decoded body (chunked bodies de-chunked), lossily as UTF-8.
    pub body: String,
}

impl RecordedRequest {
    /// Copies a request out of its head bytes (as `httparse` accepted them) and body.
    pub(crate) fn from_wire(head: &[u8], body: &[u8]) -> Self {
        let mut headers = [httparse::EMPTY_HEADER; crate::wire::head::MAX_HEADERS];
        let mut request = httparse::Request::new(&mut headers);
        // The head was parsed successfully before; a failure here leaves the fields empty.
        let _ = request.parse(head);
        RecordedRequest {
            method: request.method.unwrap_or_default().to_owned(),
            path: request.path.unwrap_or_default().to_owned(),
            headers: request
                .headers
                .iter()
                .map(|header| (header.name.to_owned(), String::from_utf8_lossy(header.value).into_owned()))
                .collect(),
            body: String::from_utf8_lossy(body).into_owned(),
        }
    }
}

/// The last `limit` recorded requests, oldest first.
#[derive(Debug)]
pub(crate) struct Recorder {
    limit: usize,
    requests: Mutex<VecDeque<RecordedRequest>>,
}

impl Recorder {
    pub(crate) fn new(limit: usize) -> Self {
        Recorder { limit, requests: Mutex::new(VecDeque::with_capacity(limit.min(1024))) }
    }

    fn locked(&self) -> MutexGuard<'_, VecDeque<RecordedRequest>> {
        // A panic while holding this lock cannot leave the ring inconsistent: keep using it.
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn push(&self, request: RecordedRequest) {
        if self.limit == 0 {
            return;
        }
        let mut requests = self.locked();
        while requests.len() >= self.limit {
            requests.pop_front();
        }
        requests.push_back(request);
    }

    pub(crate) fn to_json(&self) -> Vec<u8> {
        let requests = self.locked();
        // Strings and string pairs always serialise.
        serde_json::to_vec(&*requests).unwrap_or_else(|_| b"[]".to_vec())
    }

    /// Empties the ring; returns how many requests it held.
    pub(crate) fn clear(&self) -> usize {
        let mut requests = self.locked();
        let count = requests.len();
        requests.clear();
        count
    }
}

/// Counters since the server started.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    /// Requests other than `/mock/*`.
    pub requests: AtomicU64,
    /// TCP connections accepted, whatever they carried.
    pub connections: AtomicU64,
    /// Connections that carried at least one request other than `/mock/*`.
    pub provider_connections: AtomicU64,
}

impl Stats {
    pub(crate) fn to_json(&self) -> Vec<u8> {
        serde_json::json!({
            "requests": self.requests.load(Ordering::Relaxed),
            "connections": self.connections.load(Ordering::Relaxed),
            "provider_connections": self.provider_connections.load(Ordering::Relaxed),
        })
        .to_string()
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(body: &str) -> RecordedRequest {
        RecordedRequest::from_wire(b"POST /v1/x HTTP/1.1\r\nA: b\r\n\r\n", body.as_bytes())
    }

    #[test]
    fn copies_method_path_headers_and_body() {
        let recorded = request("{}");
        assert_eq!(recorded.method, "POST");
        assert_eq!(recorded.path, "/v1/x");
        assert_eq!(recorded.headers, vec![("A".to_owned(), "b".to_owned())]);
        assert_eq!(recorded.body, "{}");
    }

    #[test]
    fn ring_keeps_the_newest_and_clears() {
        let recorder = Recorder::new(2);
        for body in ["1", "2", "3"] {
            recorder.push(request(body));
        }
        let json: serde_json::Value = serde_json::from_slice(&recorder.to_json()).expect("json");
        assert_eq!(json[0]["body"], "2");
        assert_eq!(json[1]["body"], "3");
        assert_eq!(json[1]["headers"][0][1], "b");
        assert_eq!(recorder.clear(), 2);
        assert_eq!(recorder.to_json(), b"[]");
    }
}
