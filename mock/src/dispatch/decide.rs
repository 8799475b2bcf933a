//! Deciding the answer to one request: counts, records, picks the fault, and writes every
//! answer that is known at once into the output buffer. No IO and no waiting here: what has to
//! wait (latency, streams, hangs) comes back as a [`Plan`] for the connection to carry out.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::agent::{report_text, AgentTurn};
use crate::anthropic::exchange::{Answered, Exchange, Pacing};
use crate::azure::answer::AzureCall;
use crate::azure::filter::content_filter_body;
use crate::conn::chunked::ChunkedPlan;
use crate::conn::link::ConnectionFacts;
use crate::control::behaviour_json;
use crate::dispatch::call::Call;
use crate::dispatch::plan::{Action, Plan, Request};
use crate::fault::Fault;
use crate::openai::agent::{agent_turn as openai_agent_turn, ToolCallAnswer};
use crate::openai::body::{
    embedding_input_count, embeddings_body, models_body, write_chat_completion, AnswerId, ChatRequest,
    EmbeddingsRequest, Usage,
};
use crate::openai::stream::StreamPlan;
use crate::record::RecordedRequest;
use crate::responses::answer::{Answered as ResponsesAnswered, ResponsesCall};
use crate::state::Shared;
use crate::wire::head::Method;
use crate::wire::response::status_of;
use crate::wire::response::{write_openai_error, write_openai_error_with_code, Head, EVENT_STREAM};
use crate::wire::routes::Route;
use crate::wire::target::request_target;

/// Plans the answer to `request`, writing into `out` (and using `scratch`) as needed.
pub(crate) fn plan(
    shared: &Shared,
    request: &Request<'_>,
    facts: &mut ConnectionFacts,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) -> Plan {
    let head = request.head;
    let close = !head.keep_alive;
    if head.route == Route::OpenRouterTelemetry {
        let (status, body) = shared.openrouter.telemetry_request(head.method, request_target(request.head_bytes));
        Head::json(status, &shared.name, close).write_with_body(out, &body);
        return Plan { latency: Duration::ZERO, action: Action::Send { close } };
    }
    if head.route.is_mock_control() {
        answer_mock_endpoint(shared, request, out);
        return Plan { latency: Duration::ZERO, action: Action::Send { close } };
    }

    let number = shared.stats.requests.fetch_add(1, relaxed()) + 1;
    if !facts.carried_provider_request {
        facts.carried_provider_request = true;
        shared.stats.provider_connections.fetch_add(1, relaxed());
    }
    if let (Some(recorder), true) = (&shared.recorder, head.route.is_recorded()) {
        recorder.push(RecordedRequest::from_wire(request.head_bytes, request.body));
    }

    let overrides = match head.overrides {
        Ok(overrides) => overrides,
        Err(bad_header) => {
            let message = format!("mock {}: invalid {bad_header} header", shared.name);
            if head.route.is_anthropic() {
                Exchange { shared, body: request.body, number, close }.error(out, 400, &message);
            } else {
                write_openai_error(out, &Head::json(400, &shared.name, close), &message);
            }
            return Plan { latency: Duration::ZERO, action: Action::Send { close } };
        }
    };
    if head.route == Route::EntraToken {
        let tenant = request_target(request.head_bytes).split('/').nth(1).unwrap_or_default();
        let (status, body) = shared.entra.token_request(head.method, tenant, request.body);
        Head::json(status, &shared.name, close).write_with_body(out, &body);
        return Plan { latency: overrides.latency.unwrap_or(Duration::ZERO), action: Action::Send { close } };
    }
    if head.route == Route::GoogleToken {
        let (status, body) = shared.google.token_request(head.method, request.body, unix_seconds());
        Head::json(status, &shared.name, close).write_with_body(out, &body);
        return Plan { latency: overrides.latency.unwrap_or(Duration::ZERO), action: Action::Send { close } };
    }
    let behaviour = shared.behaviour();
    let latency = overrides.latency.unwrap_or(behaviour.latency);
    let azure = head.route.is_azure().then(|| AzureCall {
        shared,
        route: head.route,
        method: head.method,
        head_bytes: request.head_bytes,
        body: request.body,
        number,
        created: unix_seconds(),
        chunks: overrides.chunks.unwrap_or(behaviour.chunks),
        chunk_delay: overrides.chunk_delay.unwrap_or(behaviour.chunk_delay),
        reply: overrides.reply(request.head_bytes).or(behaviour.reply.as_deref()),
        close,
    });
    let azure_target = match azure.as_ref().map(|call| call.admit(out)) {
        Some(Err(())) => return Plan { latency, action: Action::Send { close } },
        Some(Ok(target)) => Some(target),
        None => None,
    };
    let fault =
        || overrides.fault.or_else(|| behaviour.fault.filter(|_| shared.next_request_faulted(behaviour.fault_ratio)));
    if let Some(action) = answer_by_provider_module(shared, request, number, &overrides, &behaviour, out, fault) {
        return Plan { latency, action };
    }
    let fault = fault();
    let answer = Answer {
        shared,
        request,
        number,
        created: unix_seconds(),
        chunks: overrides.chunks.unwrap_or(behaviour.chunks),
        chunk_delay: overrides.chunk_delay.unwrap_or(behaviour.chunk_delay),
        reply: overrides.reply(request.head_bytes).or(behaviour.reply.as_deref()),
        close,
    };
    if let (Some(call), Some(target)) = (&azure, &azure_target) {
        return Plan { latency, action: call.answer(target, fault, out) };
    }
    let action = match fault {
        None => answer.write(out, scratch, None),
        Some(Fault::Status { status, retry_after }) if head.route.is_anthropic() => {
            Exchange { shared, body: request.body, number, close }.fault(out, status, retry_after);
            Action::Send { close }
        }
        Some(Fault::Status { status, retry_after }) => {
            let message = format!("mock {} injected status {status}", shared.name);
            let head = Head { retry_after, ..Head::json(status, &shared.name, close) };
            write_openai_error(out, &head, &message);
            Action::Send { close }
        }
        Some(Fault::Reset) => Action::Reset,
        Some(Fault::Hang) => Action::Hang,
        Some(Fault::AbortAfter { chunks }) => answer.write(out, scratch, Some(chunks)),
        Some(Fault::ContentFilter { .. }) if head.route.is_anthropic() => {
            let message = format!("mock {}: the request was blocked by a content filter", shared.name);
            Exchange { shared, body: request.body, number, close }.error(out, 400, &message);
            Action::Send { close }
        }
        Some(Fault::ContentFilter { .. }) => {
            Head::json(400, &shared.name, close).write_with_body(out, &content_filter_body());
            Action::Send { close }
        }
    };
    Plan { latency, action }
}

/// The routes whose provider module checks and answers them whole (Bedrock, Gemini, Vertex AI),
/// `fault` asked once the request is admitted; `None` for the others.
fn answer_by_provider_module(
    shared: &Shared,
    request: &Request<'_>,
    number: u64,
    overrides: &crate::wire::head::Overrides,
    behaviour: &crate::options::Behaviour,
    out: &mut Vec<u8>,
    fault: impl FnOnce() -> Option<Fault>,
) -> Option<Action> {
    let route = request.head.route;
    if !route.is_bedrock() && !route.is_gemini() && !route.is_vertex() {
        return None;
    }
    let call = Call {
        shared,
        route,
        method: request.head.method,
        head_bytes: request.head_bytes,
        body: request.body,
        number,
        latency: overrides.latency.unwrap_or(behaviour.latency),
        chunks: overrides.chunks.unwrap_or(behaviour.chunks),
        chunk_delay: overrides.chunk_delay.unwrap_or(behaviour.chunk_delay),
        reply: overrides.reply(request.head_bytes).or(behaviour.reply.as_deref()),
        close: !request.head.keep_alive,
    };
    Some(if route.is_bedrock() {
        crate::bedrock::answer::answer(&call, fault, out)
    } else if route.is_gemini() {
        crate::gemini::answer::answer(&call, fault, out)
    } else {
        crate::vertex::answer::answer(&call, fault, out)
    })
}

enum ChatAnswer {
    Written {
        head_len: usize,
    },
    Stream(StreamPlan),
    /// Agent mode's streamed tool call.
    Chunked(ChunkedPlan),
}

/// The normal answer to a provider request.
struct Answer<'a> {
    shared: &'a Shared,
    request: &'a Request<'a>,
    number: u64,
    created: u64,
    chunks: u32,
    chunk_delay: Duration,
    /// The answer's text when not the default: `x-mock-reply`, else the behaviour's.
    reply: Option<&'a str>,
    close: bool,
}

impl Answer<'_> {
    /// Writes the answer, or plans its stream; `abort_after` cuts it short (a stream after that
    /// many events, anything else after half its body).
    fn write(&self, out: &mut Vec<u8>, scratch: &mut Vec<u8>, abort_after: Option<u32>) -> Action {
        let name = self.shared.name.as_str();
        let head = self.request.head;
        let ok = Head::json(200, name, self.close);
        let head_len = match (head.route, head.method) {
            (Route::ChatCompletions, Method::Post) => match self.chat(out, scratch, abort_after, None) {
                ChatAnswer::Written { head_len } => head_len,
                ChatAnswer::Stream(stream) => return Action::Stream(stream),
                ChatAnswer::Chunked(stream) => return Action::Chunked(stream),
            },
            (Route::OpenRouterChat, Method::Post) => match self.openrouter_chat(out, scratch, abort_after) {
                ChatAnswer::Written { head_len } => head_len,
                ChatAnswer::Stream(stream) => return Action::Stream(stream),
                ChatAnswer::Chunked(stream) => return Action::Chunked(stream),
            },
            (Route::AnthropicMessages, Method::Post) => {
                match self.anthropic().messages(out, self.pacing(abort_after), self.reply) {
                    Answered::Written { head_len } => head_len,
                    Answered::Stream(stream) => return Action::AnthropicStream(stream),
                }
            }
            (Route::AnthropicCountTokens, Method::Post) => self.anthropic().count_tokens(out),
            (route, _) if route.is_anthropic() => {
                self.anthropic().error(out, 405, "method not allowed on this endpoint")
            }
            (route, method) if route.is_responses() => match self.responses(method).answer(out, abort_after) {
                ResponsesAnswered::Written { head_len } => head_len,
                ResponsesAnswered::Stream(stream) => return Action::Chunked(stream),
            },
            (Route::Embeddings, Method::Post) => self.embeddings(out),
            (Route::Models, Method::Get) => ok.write_with_body(out, &models_body(self.created)),
            (Route::Health, Method::Get) => ok.write_with_body(out, br#"{"status":"ok"}"#),
            (Route::Unknown, _) => self.error(out, 404, "no such endpoint"),
            _ => self.error(out, 405, "method not allowed on this endpoint"),
        };
        match abort_after {
            None => Action::Send { close: self.close },
            Some(_) => Action::SendPartThenClose { len: head_len + (out.len() - head_len) / 2 },
        }
    }

    fn anthropic(&self) -> Exchange<'_> {
        Exchange { shared: self.shared, body: self.request.body, number: self.number, close: self.close }
    }

    fn responses(&self, method: Method) -> ResponsesCall<'_> {
        let target = request_target(self.request.head_bytes);
        ResponsesCall {
            shared: self.shared,
            route: self.request.head.route,
            method,
            path: target.split_once('?').map_or(target, |(path, _)| path),
            body: self.request.body,
            number: self.number,
            created: self.created,
            chunks: self.chunks,
            chunk_delay: self.chunk_delay,
            reply: self.reply,
            close: self.close,
        }
    }

    fn pacing(&self, abort_after: Option<u32>) -> Pacing {
        Pacing { chunks: self.chunks, chunk_delay: self.chunk_delay, abort_after }
    }

    /// An OpenRouter chat: routed to a provider (see `openrouter.rs`), which answers as
    /// [`Self::chat`] does naming itself, or OpenRouter's refusal; logged either way.
    fn openrouter_chat(&self, out: &mut Vec<u8>, scratch: &mut Vec<u8>, abort_after: Option<u32>) -> ChatAnswer {
        let routed = self.shared.openrouter.route(self.request.body);
        let provider = routed.provider.as_deref();
        let answer = match &routed.refusal {
            None => self.chat(out, scratch, abort_after, provider),
            Some((status, body)) => {
                let head = Head { provider, ..Head::json(*status, &self.shared.name, self.close) };
                ChatAnswer::Written { head_len: head.write_with_body(out, body) }
            }
        };
        let status = match answer {
            ChatAnswer::Written { .. } => status_of(out),
            ChatAnswer::Stream(_) | ChatAnswer::Chunked(_) => 200,
        };
        self.shared.openrouter.record(routed, status);
        answer
    }

    /// Writes a whole chat answer (or a 400), or plans the stream to send; `provider` names the
    /// OpenRouter provider that serves.
    fn chat(
        &self,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        abort_after: Option<u32>,
        provider: Option<&str>,
    ) -> ChatAnswer {
        let body = self.request.body;
        let parsed: ChatRequest<'_> = match serde_json::from_slice(body) {
            Ok(parsed) => parsed,
            Err(error) => {
                let head_len = self.error(out, 400, &format!("invalid JSON body: {error}"));
                return ChatAnswer::Written { head_len };
            }
        };
        let Some(model) = parsed.model else {
            let head_len = self.error(out, 400, "you must provide a model parameter");
            return ChatAnswer::Written { head_len };
        };
        if let Some(window) = self.shared.context_window.filter(|&w| (body.len() as u64).div_ceil(4) > w) {
            let message = format!(
                "This model's maximum context length is {window} tokens. However, your messages resulted in {} tokens. \
                 Please reduce the length of the messages.",
                (body.len() as u64).div_ceil(4)
            );
            let head = Head::json(400, &self.shared.name, self.close);
            let head_len = write_openai_error_with_code(out, &head, &message, "context_length_exceeded");
            return ChatAnswer::Written { head_len };
        }
        if let Some(word) = self.shared.refuse.as_deref().filter(|w| memchr::memmem::find(body, w.as_bytes()).is_some())
        {
            let message = format!("Your request was rejected as a result of our safety system ({word:?}).");
            let head = Head::json(400, &self.shared.name, self.close);
            let head_len = write_openai_error_with_code(out, &head, &message, "content_policy_violation");
            return ChatAnswer::Written { head_len };
        }
        let usage = Usage::new(body.len(), self.chunks);
        let include_usage = parsed.stream_options.and_then(|options| options.include_usage) == Some(true);
        let mut agent_reply = None;
        if self.shared.agent {
            match openai_agent_turn(body) {
                AgentTurn::CallShell(tool) => {
                    let answer = ToolCallAnswer {
                        number: self.number,
                        created: self.created,
                        model: &model,
                        system_fingerprint: &self.shared.text.system_fingerprint,
                        tool: &tool,
                    };
                    let head = Head { provider, ..Head::json(200, &self.shared.name, self.close) };
                    if parsed.stream == Some(true) {
                        let mut stream_head = Vec::new();
                        Head { content_type: EVENT_STREAM, ..head }.write_chunked(&mut stream_head);
                        let usage = include_usage.then_some(&usage);
                        let plan =
                            answer.stream(stream_head, self.chunks, self.chunk_delay, usage, abort_after, self.close);
                        return ChatAnswer::Chunked(plan);
                    }
                    return ChatAnswer::Written { head_len: head.write_with_body(out, &answer.body(&usage)) };
                }
                AgentTurn::Report(output) => agent_reply = Some(report_text(&output)),
                AgentTurn::Plain => {}
            }
        }
        let reply = agent_reply.as_deref().or(self.reply);
        if parsed.stream == Some(true) {
            return ChatAnswer::Stream(StreamPlan {
                number: self.number,
                created: self.created,
                model: model.into_owned(),
                chunks: self.chunks,
                chunk_delay: self.chunk_delay,
                usage: include_usage.then_some(usage),
                abort_after,
                close: self.close,
                provider: provider.map(str::to_owned),
                reply: reply.map(str::to_owned),
            });
        }
        let id = AnswerId { number: self.number, created: self.created, model: &model, provider };
        scratch.clear();
        let text = &self.shared.text;
        write_chat_completion(scratch, &id, text, text.content_or(reply), &usage);
        let head_len =
            Head { provider, ..Head::json(200, &self.shared.name, self.close) }.write_with_body(out, scratch);
        ChatAnswer::Written { head_len }
    }

    fn embeddings(&self, out: &mut Vec<u8>) -> usize {
        let body = self.request.body;
        let parsed: EmbeddingsRequest<'_> = match serde_json::from_slice(body) {
            Ok(parsed) => parsed,
            Err(error) => return self.error(out, 400, &format!("invalid JSON body: {error}")),
        };
        let Some(model) = parsed.model else {
            return self.error(out, 400, "you must provide a model parameter");
        };
        let Some(inputs) = embedding_input_count(parsed.input.as_ref()) else {
            return self.error(out, 400, "input must be a non-empty string or array");
        };
        let usage = Usage::new(body.len(), 0);
        let answer = embeddings_body(&model, inputs, &usage);
        Head::json(200, &self.shared.name, self.close).write_with_body(out, &answer)
    }

    fn error(&self, out: &mut Vec<u8>, status: u16, message: &str) -> usize {
        let message = format!("mock {}: {message}", self.shared.name);
        write_openai_error(out, &Head::json(status, &self.shared.name, self.close), &message)
    }
}

/// `/mock/*`: control, recorded requests, stats.
fn answer_mock_endpoint(shared: &Shared, request: &Request<'_>, out: &mut Vec<u8>) {
    let name = shared.name.as_str();
    let close = !request.head.keep_alive;
    let ok = Head::json(200, name, close);
    let error = |out: &mut Vec<u8>, status, message: &str| {
        let message = format!("mock {name}: {message}");
        write_openai_error(out, &Head::json(status, name, close), &message);
    };
    match (request.head.route, request.head.method) {
        (Route::MockControl, Method::Get) => {
            ok.write_with_body(out, &behaviour_json(&shared.behaviour()));
        }
        (Route::MockControl, Method::Post) => match shared.control(request.body) {
            Ok(behaviour) => {
                ok.write_with_body(out, &behaviour_json(&behaviour));
            }
            Err(message) => error(out, 400, &message),
        },
        (Route::MockRequests, Method::Get) => {
            let recorded = shared.recorder.as_ref().map_or_else(|| b"[]".to_vec(), |recorder| recorder.to_json());
            ok.write_with_body(out, &recorded);
        }
        (Route::MockRequests, Method::Delete) => {
            let cleared = shared.recorder.as_ref().map_or(0, |recorder| recorder.clear());
            ok.write_with_body(out, format!("{{\"cleared\":{cleared}}}").as_bytes());
        }
        (Route::MockStats, Method::Get) => {
            ok.write_with_body(out, &shared.stats.to_json());
        }
        (Route::MockOpenRouter, method) => {
            match shared.openrouter.control_request(method, request_target(request.head_bytes), request.body) {
                Ok(body) => {
                    ok.write_with_body(out, &body);
                }
                Err((status, message)) => error(out, status, &message),
            }
        }
        _ => error(out, 405, "method not allowed on this endpoint"),
    }
}

fn relaxed() -> std::sync::atomic::Ordering {
    std::sync::atomic::Ordering::Relaxed
}

fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}
