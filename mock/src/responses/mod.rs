//! OpenAI's Responses API (`/v1/responses`): answers whole or streamed as typed server-sent
//! events, kept in memory for `previous_response_id` and `GET`/`DELETE /v1/responses/{id}`.

pub(crate) mod answer;
pub(crate) mod body;
pub(crate) mod request;
pub(crate) mod store;
pub(crate) mod stream;

#[cfg(test)]
mod tests;
