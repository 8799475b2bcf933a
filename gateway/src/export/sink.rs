//! One exporter's wire format: how a batch of request records becomes one HTTP request to its
//! receiver. The exporter thread (`thread`) does the queueing, batching, sending and retrying
//! for every sink alike.

use std::sync::Arc;

use super::record::RequestRecord;

/// An exporter's encoding of batches.
pub trait Sink: Send {
    /// The exporter's name in metrics and logs (`otlp`, `langfuse`).
    fn name(&self) -> &'static str;

    /// Whether `record` goes to this receiver (Langfuse's success and failure callbacks).
    fn wants(&self, _record: &RequestRecord) -> bool {
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
    fn encode(&self, batch: &[Arc<RequestRecord>]) -> (Vec<u8>, &'static str);
}
