//! Writing Responses stream events: `event: <type>\ndata: <json>\n\n`, every data starting with
//! its `type` and `sequence_number` (counted from 0 per stream).

use std::io::Write;

use serde_json::Value;

use crate::{push_json, push_json_str};

/// One stream's event writer: the next sequence number.
#[derive(Debug, Default)]
pub(crate) struct EventWriter {
    next_sequence: u64,
}

/// Which index a delta event names besides its output index.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PartIndex {
    /// `content_index` (message text and refusals).
    Content(usize),
    /// `summary_index` (reasoning summaries).
    Summary(usize),
    /// None (tool call arguments and inputs).
    None,
}

impl EventWriter {
    /// An event whose other members are those of `fields` (an object).
    pub(crate) fn push(&mut self, out: &mut Vec<u8>, kind: &str, fields: &Value) {
        self.head(out, kind);
        for (key, value) in fields.as_object().into_iter().flatten() {
            out.push(b',');
            push_json_str(out, key);
            out.push(b':');
            push_json(out, value);
        }
        out.extend_from_slice(b"}\n\n");
    }

    /// A `*.delta` event written without a JSON value (the hot path of a stream).
    pub(crate) fn push_delta(
        &mut self,
        out: &mut Vec<u8>,
        kind: &str,
        item_id: &str,
        output_index: usize,
        index: PartIndex,
        delta: &str,
    ) {
        self.head(out, kind);
        out.extend_from_slice(b",\"item_id\":");
        push_json_str(out, item_id);
        let _ = write!(out, ",\"output_index\":{output_index}");
        match index {
            PartIndex::Content(i) => {
                let _ = write!(out, ",\"content_index\":{i}");
            }
            PartIndex::Summary(i) => {
                let _ = write!(out, ",\"summary_index\":{i}");
            }
            PartIndex::None => {}
        }
        out.extend_from_slice(b",\"delta\":");
        push_json_str(out, delta);
        if kind == "response.output_text.delta" {
            out.extend_from_slice(b",\"logprobs\":[]");
        }
        out.extend_from_slice(b"}\n\n");
    }

    fn head(&mut self, out: &mut Vec<u8>, kind: &str) {
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(b"\ndata: {\"type\":");
        push_json_str(out, kind);
        let _ = write!(out, ",\"sequence_number\":{}", self.next_sequence);
        self.next_sequence += 1;
    }
}

/// The `code` of an error event or a failed response for an HTTP status (the codes a
/// `response.error` may carry: rate_limit_exceeded, server_error, …).
pub(crate) fn error_code(status: u16) -> &'static str {
    match status {
        429 => "rate_limit_exceeded",
        400 | 413 | 422 => "invalid_prompt",
        _ => "server_error",
    }
}
