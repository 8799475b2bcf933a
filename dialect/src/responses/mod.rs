//! OpenAI's Responses API (`POST /v1/responses`, what the Codex CLI and the `openai` SDK's
//! `client.responses` speak) served by a deployment that only speaks chat completions.
//!
//! - Requests: [`responses_request_to_chat`]`(body, upstream_model, history)` → a chat body, the
//!   request fields and items that had no chat equivalent and were dropped (for a response
//!   header), and this request's input as Responses items (kept by the gateway so that a later
//!   `previous_response_id` can be resolved into `history`).
//! - Answers: [`ResponseEcho::new`] once per request (the response id, `created_at`, the model
//!   the client asked for and the request fields a response echoes), then
//!   [`chat_response_to_responses`] for a whole answer or [`ChatToResponsesStream`] for a
//!   stream (a [`StreamTranslator`](crate::StreamTranslator)).
//! - Errors after the stream's head: [`responses_stream_error`], or
//!   [`ChatToResponsesStream::fail_with`] which keeps the stream's sequence numbers.
//!
//! Item ids (`msg_…`, `fc_…`, `ctc_…`, `lsh_…`, `rs_…`) are the response id's suffix and the
//! item's output index: the same answer always gets the same ids.
//!
//! What is dropped rather than refused, and why: the Responses API carries server-side state and
//! hosted tools a chat deployment does not have. Fields that only tag, store or cache
//! (`metadata`, `store`, `previous_response_id` — resolved by the gateway —, `prompt_cache_key`,
//! `service_tier`, `reasoning.summary`, `stream_options`) are dropped silently; the ones that
//! change the answer (`include`, hosted tools, `reasoning` input items, `truncation` other than
//! `disabled`, `background`, `top_logprobs`, `text.verbosity`, `max_tool_calls`, `prompt`,
//! unknown fields and item types) are dropped and named in [`ChatFromResponses::dropped`]. What
//! cannot be sent at all (a file by `file_id`, a server-side `conversation`, malformed input) is
//! refused with [`Untranslatable`](crate::Untranslatable) naming its path.

mod echo;
mod events;
mod input_items;
mod output_items;
mod request;
mod response;
mod stream;
mod tools;

pub use echo::ResponseEcho;
pub use output_items::output_items;
pub use request::{responses_request_to_chat, ChatFromResponses};
pub use response::chat_response_to_responses;
pub use stream::{responses_stream_error, ChatToResponsesStream};

/// The chat function that stands for Responses' `local_shell` tool.
pub(crate) const LOCAL_SHELL: &str = "local_shell";

#[cfg(test)]
mod request_tests;
#[cfg(test)]
mod response_tests;
#[cfg(test)]
mod stream_tests;
#[cfg(test)]
mod test_support;
