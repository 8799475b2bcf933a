//! Answering Anthropic's routes (`/v1/messages`, `/v1/messages/count_tokens`): what
//! [`dispatch`](crate::dispatch::decide) calls for them, errors and faults included, every answer
//! carrying `request-id: req_mock_N`.

use std::time::Duration;

use crate::agent::{report_text, AgentTurn, Surface, CALL_TEXT};
use crate::anthropic::agent::agent_turn;
use crate::anthropic::errors::{error_body, fault_body, prompt_too_long, DEFAULT_CONTEXT_WINDOW};
use crate::anthropic::messages::{read_count_tokens_request, read_messages_request, Message, MessagesCall, ToolCall};
use crate::anthropic::stream::{plan_stream, AnthropicStreamPlan};
use crate::state::Shared;
use crate::wire::response::Head;

/// One request to an Anthropic route.
pub(crate) struct Exchange<'a> {
    pub shared: &'a Shared,
    pub body: &'a [u8],
    /// The request's number: `msg_mock_N`, `toolu_mock_N`, `req_mock_N`.
    pub number: u64,
    pub close: bool,
}

/// How a stream is cut into events and paced.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pacing {
    pub chunks: u32,
    pub chunk_delay: Duration,
    /// `abort-after:K`: K deltas, then the `error` event.
    pub abort_after: Option<u32>,
}

/// A Messages answer: written whole, or a stream to send.
pub(crate) enum Answered {
    Written { head_len: usize },
    Stream(AnthropicStreamPlan),
}

impl Exchange<'_> {
    fn head(&self, status: u16) -> Head<'_> {
        Head { request_id: Some(self.number), ..Head::json(status, &self.shared.name, self.close) }
    }

    /// Writes an error of the status's type; returns the head's length.
    pub(crate) fn error(&self, out: &mut Vec<u8>, status: u16, message: &str) -> usize {
        self.head(status).write_with_body(out, &error_body(status, message, self.number))
    }

    /// Writes the answer to a `status:S` fault (see [`fault_body`]).
    pub(crate) fn fault(&self, out: &mut Vec<u8>, status: u16, retry_after: Option<u32>) -> usize {
        let window = self.shared.context_window.unwrap_or(DEFAULT_CONTEXT_WINDOW);
        let body = fault_body(status, &self.shared.name, prompt_tokens(self.body), window, self.number);
        Head { retry_after, ..self.head(status) }.write_with_body(out, &body)
    }

    /// `POST /v1/messages`: a 400 for a request Anthropic refuses or a prompt beyond
    /// `--context-window`, a refusal for one containing the `--refuse` word, else the answer, its
    /// text `reply` when given (else "Hello from mock NAME").
    pub(crate) fn messages(&self, out: &mut Vec<u8>, pacing: Pacing, reply: Option<&str>) -> Answered {
        let call = match read_messages_request(self.body) {
            Ok(call) => call,
            Err(message) => return Answered::Written { head_len: self.error(out, 400, &message) },
        };
        let tokens = prompt_tokens(self.body);
        if let Some(window) = self.shared.context_window.filter(|&window| tokens > window) {
            let head_len = self.head(400).write_with_body(out, &prompt_too_long(tokens, window, self.number));
            return Answered::Written { head_len };
        }
        let stream = call.stream;
        let refused = self
            .shared
            .refuse
            .as_deref()
            .is_some_and(|word| memchr::memmem::find(self.body, word.as_bytes()).is_some());
        let message = if refused {
            Message::refusal(self.number, call.model, self.body.len())
        } else if self.shared.agent {
            let (call, text) = self.agent_answer(call, reply);
            Message::answer(self.number, call, &text, self.body.len())
        } else {
            Message::answer(self.number, call, self.shared.text.content_or(reply), self.body.len())
        };
        if stream {
            return Answered::Stream(plan_stream(
                &message,
                pacing.chunks,
                pacing.chunk_delay,
                pacing.abort_after,
                self.close,
            ));
        }
        let mut body = Vec::new();
        message.write(&mut body, false);
        Answered::Written { head_len: self.head(200).write_with_body(out, &body) }
    }

    /// Agent mode's answer: `Bash` called with the marker command, a tool's result reported, or
    /// the plain text without a tool call (unless `tool_choice` forces one).
    fn agent_answer(&self, mut call: MessagesCall, reply: Option<&str>) -> (MessagesCall, String) {
        let (turn, forced) = agent_turn(self.body, self.shared.agent_tool.as_deref());
        let text = match turn {
            AgentTurn::CallShell(tool) => {
                call.tool = Some(ToolCall { input: tool.arguments(Surface::Messages), name: tool.name });
                return (call, CALL_TEXT.to_owned());
            }
            AgentTurn::Report(output) => report_text(&output),
            AgentTurn::Plain => self.shared.text.content_or(reply).to_owned(),
        };
        if !forced {
            call.tool = None;
        }
        (call, text)
    }

    /// `POST /v1/messages/count_tokens`: `{"input_tokens": body bytes / 4}`.
    pub(crate) fn count_tokens(&self, out: &mut Vec<u8>) -> usize {
        match read_count_tokens_request(self.body) {
            Ok(()) => {
                let body = format!("{{\"input_tokens\":{}}}", self.body.len() / 4);
                self.head(200).write_with_body(out, body.as_bytes())
            }
            Err(message) => self.error(out, 400, &message),
        }
    }
}

/// The prompt's size against a context window: a token per 4 bytes, rounded up (as for chats).
fn prompt_tokens(body: &[u8]) -> u64 {
    (body.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MockOptions;
    use serde_json::{json, Value};

    fn shared(options: MockOptions) -> Shared {
        Shared::new(&MockOptions { name: "m1".into(), ..options })
    }

    fn split(out: &[u8], head_len: usize) -> (String, Value) {
        let head = String::from_utf8(out[..head_len].to_vec()).expect("ascii head");
        (head, serde_json::from_slice(&out[head_len..]).expect("JSON body"))
    }

    const PACING: Pacing = Pacing { chunks: 2, chunk_delay: Duration::ZERO, abort_after: None };

    fn written(answered: Answered) -> usize {
        match answered {
            Answered::Written { head_len } => head_len,
            Answered::Stream(_) => panic!("expected a whole answer"),
        }
    }

    #[test]
    fn answers_carry_the_request_id_and_the_fixture_shape() {
        let shared = shared(MockOptions::default());
        let body = json!({"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
        let body = body.to_string();
        let exchange = Exchange { shared: &shared, body: body.as_bytes(), number: 4, close: false };
        let mut out = Vec::new();
        let head_len = written(exchange.messages(&mut out, PACING, None));
        let (head, answer) = split(&out, head_len);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("request-id: req_mock_4\r\n"), "{head}");
        let fixture: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/anthropic_messages_response.json"))
                .expect("fixture");
        let keys = |value: &Value| value.as_object().map(|object| object.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&answer), keys(&fixture));
        assert_eq!(keys(&answer["usage"]), keys(&fixture["usage"]));
        assert_eq!(answer["id"], "msg_mock_4");
        assert_eq!(answer["model"], "claude-x");
        assert_eq!(answer["content"], json!([{"type": "text", "text": "Hello from mock m1"}]));
        assert_eq!(answer["stop_reason"], "end_turn");
        assert_eq!(answer["usage"]["input_tokens"], body.len() / 4);
        assert_eq!(answer["usage"]["output_tokens"], "Hello from mock m1".len().div_ceil(4));
    }

    #[test]
    fn a_reply_replaces_the_text_whole_and_streamed() {
        let shared = shared(MockOptions::default());
        let reply = "{\"tier\": \"simple\"}\nüñï \\ done";
        let body = json!({"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
        let body = body.to_string();
        let exchange = Exchange { shared: &shared, body: body.as_bytes(), number: 5, close: false };
        let mut out = Vec::new();
        let head_len = written(exchange.messages(&mut out, PACING, Some(reply)));
        let (_, answer) = split(&out, head_len);
        assert_eq!(answer["content"], json!([{"type": "text", "text": reply}]));
        assert_eq!(answer["stop_reason"], "end_turn");
        assert_eq!(answer["usage"]["output_tokens"], reply.len().div_ceil(4));

        let streamed =
            json!({"model": "c", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let streamed = streamed.to_string();
        let exchange = Exchange { shared: &shared, body: streamed.as_bytes(), number: 6, close: false };
        let pacing = Pacing { chunks: 5, ..PACING };
        let Answered::Stream(plan) = exchange.messages(&mut Vec::new(), pacing, Some(reply)) else {
            panic!("expected a stream");
        };
        assert_eq!(plan.deltas.len(), 5);
        let framed: Vec<u8> = plan.deltas.concat();
        let text: String = String::from_utf8(framed)
            .expect("utf-8")
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .filter_map(|event| event["delta"]["text"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(text, reply);

        // A refusal stays a refusal.
        let shared = self::shared(MockOptions { refuse: Some("hi".into()), ..MockOptions::default() });
        let exchange = Exchange { shared: &shared, body: body.as_bytes(), number: 7, close: false };
        let mut out = Vec::new();
        let head_len = written(exchange.messages(&mut out, PACING, Some(reply)));
        assert_eq!(split(&out, head_len).1["content"], json!([]));
    }

    #[test]
    fn invalid_requests_get_anthropics_400() {
        let shared = shared(MockOptions::default());
        for (body, message) in [
            (r#"{"max_tokens":1,"messages":[{"role":"user","content":"x"}]}"#, "model: Field required"),
            (r#"{"model":"c","messages":[{"role":"user","content":"x"}]}"#, "max_tokens: Field required"),
            (r#"{"model":"c","max_tokens":1,"messages":[]}"#, "messages: at least one message is required"),
        ] {
            let exchange = Exchange { shared: &shared, body: body.as_bytes(), number: 1, close: false };
            let mut out = Vec::new();
            let head_len = written(exchange.messages(&mut out, PACING, None));
            let (head, error) = split(&out, head_len);
            assert!(head.starts_with("HTTP/1.1 400 "), "{head}");
            assert_eq!(error["type"], "error");
            assert_eq!(error["error"]["type"], "invalid_request_error");
            assert_eq!(error["error"]["message"], message);
        }
    }

    #[test]
    fn context_window_refusal_and_count_tokens() {
        let shared = shared(MockOptions {
            context_window: Some(10),
            refuse: Some("forbidden".into()),
            ..MockOptions::default()
        });
        let long = json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "x".repeat(100)}]});
        let long = long.to_string();
        let exchange = Exchange { shared: &shared, body: long.as_bytes(), number: 2, close: false };
        let mut out = Vec::new();
        let head_len = written(exchange.messages(&mut out, PACING, None));
        let (_, error) = split(&out, head_len);
        let expected = format!("prompt is too long: {} tokens > 10 maximum", long.len().div_ceil(4));
        assert_eq!(error["error"]["message"], expected);

        let shared = self::shared(MockOptions { refuse: Some("forbidden".into()), ..MockOptions::default() });
        let body = r#"{"model":"c","max_tokens":5,"messages":[{"role":"user","content":"a forbidden thing"}]}"#;
        let exchange = Exchange { shared: &shared, body: body.as_bytes(), number: 3, close: false };
        let mut out = Vec::new();
        let head_len = written(exchange.messages(&mut out, PACING, None));
        let (_, refusal) = split(&out, head_len);
        assert_eq!(refusal["stop_reason"], "refusal");
        assert_eq!(refusal["content"], json!([]));

        let count = r#"{"model":"c","messages":[{"role":"user","content":"hello there"}]}"#;
        let exchange = Exchange { shared: &shared, body: count.as_bytes(), number: 4, close: false };
        let mut out = Vec::new();
        let head_len = exchange.count_tokens(&mut out);
        assert_eq!(split(&out, head_len).1, json!({"input_tokens": count.len() / 4}));
        let exchange = Exchange { shared: &shared, body: br#"{"model":"c"}"#, number: 5, close: false };
        let mut out = Vec::new();
        let head_len = exchange.count_tokens(&mut out);
        assert_eq!(split(&out, head_len).1["error"]["message"], "messages: Field required");
    }

    #[test]
    fn faults_carry_retry_after_and_the_fixture_bodies() {
        let shared = shared(MockOptions::default());
        let exchange = Exchange { shared: &shared, body: b"{}", number: 8, close: true };
        let mut out = Vec::new();
        let head_len = exchange.fault(&mut out, 429, Some(3));
        let (head, error) = split(&out, head_len);
        assert!(head.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{head}");
        assert!(head.contains("retry-after: 3\r\n") && head.contains("request-id: req_mock_8\r\n"), "{head}");
        assert!(head.contains("connection: close\r\n"));
        assert_eq!(error["error"]["type"], "rate_limit_error");
        assert_eq!(error["request_id"], "req_mock_8");
        let mut out = Vec::new();
        let head_len = exchange.fault(&mut out, 529, None);
        let (head, error) = split(&out, head_len);
        assert!(head.starts_with("HTTP/1.1 529 Overloaded\r\n") && !head.contains("retry-after"), "{head}");
        assert_eq!(error["error"]["type"], "overloaded_error");
    }
}
