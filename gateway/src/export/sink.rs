//! One exporter's wire format: how a batch of records (proxied requests and MCP requests)
//! becomes one HTTP request to its receiver. The exporter thread (`thread`) does the queueing, batching, sending and retrying
//! for every sink alike.

use std::sync::Arc;

use super::record::Record;

/// An exporter's encoding of batches.
pub trait Sink: Send {
    /// The exporter's name in metrics and logs (`otlp`, `langfuse`).
    fn name(&self) -> &'static str;

    /// Whether `record` goes to this receiver (Langfuse's success and failure callbacks).
    fn wants(&self, _record: &Record) -> bool {
        true
    }

    /// The URL batches go to (`http://collector:4318/v1/traces`).
    fn url(&self) -> &str;

    /// The request headers besides `host`, `content-length` and `connection` (the receiver's
    /// credentials among them: never logged).
    fn headers(&self) -> &[(String, String)];

    /// How long one export may take.
    fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(10)
    }

    /// The body that exports `batch`, and its content type.
    fn encode(&self, batch: &[Arc<Record>]) -> (Vec<u8>, &'static str);

    /// The most records one export carries, below the configured batch size (a receiver that
    /// limits a request's bytes).
    fn max_batch(&self) -> usize {
        usize::MAX
    }

    /// What the receiver's 2xx `answer` to `batch` says (a receiver that answers per record).
    fn judge(&self, _batch: &[Arc<Record>], _answer: &[u8]) -> Verdict {
        Verdict::Accepted
    }
}

/// A receiver's word on a batch it answered with a 2xx.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Every record was taken.
    Accepted,
    /// Delivered, but `records` of the batch were refused for good (invalid, too large): counted
    /// as dropped, never retried.
    Rejected { records: usize, why: String },
    /// The receiver could not take some now (its own failure): the batch is tried again.
    Retry(String),
}
