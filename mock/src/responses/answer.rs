//! Answering the Responses API's routes: `POST /v1/responses` (whole or streamed, agent mode
//! included), `GET` and `DELETE /v1/responses/{id}`, and the 404 of a server without them
//! (`--no-responses`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::agent::{report_text, AgentTurn, Surface};
use crate::conn::chunked::ChunkedPlan;
use crate::responses::body::{OutputItem, ResponseAnswer};
use crate::responses::request::{last_tool_output, read_request, InvalidRequest, ResponsesRequest};
use crate::responses::store::StoredResponse;
use crate::responses::stream::plan_stream;
use crate::state::Shared;
use crate::wire::head::Method;
use crate::wire::response::{write_openai_error, Head, EVENT_STREAM};
use crate::wire::routes::Route;

/// What a self-hosted OpenAI-compatible server (vLLM's FastAPI) answers on a path it lacks.
const NOT_FOUND_BODY: &[u8] = br#"{"detail":"Not Found"}"#;

/// One request to a Responses route.
pub(crate) struct ResponsesCall<'a> {
    pub shared: &'a Shared,
    pub route: Route,
    pub method: Method,
    /// The path as sent, without the query.
    pub path: &'a str,
    pub body: &'a [u8],
    /// The request's number: `resp_mock_N`, `msg_mock_N`, `fc_mock_N`, `call_mock_N`.
    pub number: u64,
    pub created: u64,
    pub chunks: u32,
    pub chunk_delay: Duration,
    /// `x-mock-reply`, else the behaviour's reply.
    pub reply: Option<&'a str>,
    pub close: bool,
}

/// An answer written whole, or a stream to send.
pub(crate) enum Answered {
    Written { head_len: usize },
    Stream(ChunkedPlan),
}

impl ResponsesCall<'_> {
    fn head(&self, status: u16) -> Head<'_> {
        Head::json(status, &self.shared.name, self.close)
    }

    /// Answers the request; `abort_after` cuts a stream after that many deltas.
    pub(crate) fn answer(&self, out: &mut Vec<u8>, abort_after: Option<u32>) -> Answered {
        if !self.shared.serve_responses {
            return Answered::Written { head_len: self.head(404).write_with_body(out, NOT_FOUND_BODY) };
        }
        let head_len = match (self.route, self.method) {
            (Route::Responses, Method::Post) => return self.create(out, abort_after),
            (Route::ResponseById, Method::Get) => self.retrieve(out),
            (Route::ResponseById, Method::Delete) => self.delete(out),
            _ => self.error(out, 405, "method not allowed on this endpoint"),
        };
        Answered::Written { head_len }
    }

    /// `POST /v1/responses`.
    fn create(&self, out: &mut Vec<u8>, abort_after: Option<u32>) -> Answered {
        let request = match read_request(self.body) {
            Ok(request) => request,
            Err(invalid) => return Answered::Written { head_len: self.invalid(out, 400, &invalid) },
        };
        let mut conversation = match &request.previous_response_id {
            None => Vec::new(),
            Some(id) => match self.shared.responses.get(id) {
                Some(previous) => previous.conversation.to_vec(),
                None => {
                    let invalid = InvalidRequest {
                        message: format!("Previous response with id '{id}' not found."),
                        param: Some("previous_response_id"),
                        code: Some("previous_response_not_found"),
                    };
                    return Answered::Written { head_len: self.invalid(out, 400, &invalid) };
                }
            },
        };
        conversation.extend(request.input.iter().cloned());
        let answer = ResponseAnswer {
            id: format!("resp_mock_{}", self.number),
            created_at: self.created,
            model: request.model.clone(),
            previous_response_id: request.previous_response_id.clone(),
            store: request.store,
            output: vec![self.output_item(&request, &conversation)],
            input_tokens: (self.body.len() / 4) as u64,
            echoed: request.echoed.clone(),
        };
        if request.store {
            conversation.extend(answer.output.iter().map(|item| item.json(true)));
            let stored = StoredResponse { response: Arc::new(answer.json(true)), conversation: Arc::new(conversation) };
            self.shared.responses.insert(answer.id.clone(), stored);
        }
        if request.stream {
            let mut head = Vec::new();
            Head { content_type: EVENT_STREAM, ..self.head(200) }.write_chunked(&mut head);
            return Answered::Stream(plan_stream(
                &answer,
                head,
                self.chunks,
                self.chunk_delay,
                abort_after,
                self.close,
            ));
        }
        let body = answer.json(true).to_string();
        Answered::Written { head_len: self.head(200).write_with_body(out, body.as_bytes()) }
    }

    /// The answer's one output item: in agent mode a shell call or a report, else the text.
    fn output_item(&self, request: &ResponsesRequest, conversation: &[Value]) -> OutputItem {
        let message = |text: String| OutputItem::Message { id: format!("msg_mock_{}", self.number), text };
        let plain = || message(self.shared.text.content_or(self.reply).to_owned());
        if !self.shared.agent {
            return plain();
        }
        match AgentTurn::decide(request.shell_tool(), last_tool_output(conversation)) {
            AgentTurn::CallShell(tool) => OutputItem::FunctionCall {
                id: format!("fc_mock_{}", self.number),
                call_id: format!("call_mock_{}", self.number),
                arguments: tool.arguments(Surface::Responses),
                name: tool.name,
            },
            AgentTurn::Report(output) => message(report_text(&output)),
            AgentTurn::Plain => plain(),
        }
    }

    /// The `{id}` of `/…/responses/{id}`.
    fn id(&self) -> &str {
        self.path.rsplit_once("/responses/").map_or("", |(_, id)| id)
    }

    /// `GET /v1/responses/{id}`: a kept answer.
    fn retrieve(&self, out: &mut Vec<u8>) -> usize {
        match self.shared.responses.get(self.id()) {
            Some(stored) => self.head(200).write_with_body(out, stored.response.to_string().as_bytes()),
            None => self.not_found(out),
        }
    }

    /// `DELETE /v1/responses/{id}`: forgets a kept answer.
    fn delete(&self, out: &mut Vec<u8>) -> usize {
        let id = self.id();
        if !self.shared.responses.remove(id) {
            return self.not_found(out);
        }
        let body = serde_json::json!({"id": id, "object": "response", "deleted": true}).to_string();
        self.head(200).write_with_body(out, body.as_bytes())
    }

    fn not_found(&self, out: &mut Vec<u8>) -> usize {
        let invalid =
            InvalidRequest { message: format!("Response with id '{}' not found.", self.id()), param: None, code: None };
        self.invalid(out, 404, &invalid)
    }

    fn invalid(&self, out: &mut Vec<u8>, status: u16, invalid: &InvalidRequest) -> usize {
        let body = serde_json::json!({"error": {
            "message": invalid.message, "type": "invalid_request_error", "param": invalid.param, "code": invalid.code,
        }});
        self.head(status).write_with_body(out, body.to_string().as_bytes())
    }

    fn error(&self, out: &mut Vec<u8>, status: u16, message: &str) -> usize {
        let message = format!("mock {}: {message}", self.shared.name);
        write_openai_error(out, &self.head(status), &message)
    }
}
