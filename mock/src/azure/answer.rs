//! Azure OpenAI as a real resource answers it: `POST /openai/deployments/{deployment}/chat/completions`
//! and `/embeddings`, each with `?api-version=YYYY-MM-DD[-preview]` and an `api-key` header or an
//! `Authorization: Bearer` token from the mock's Entra endpoint ([`azure_token`](crate::azure::token)).
//! Answers are OpenAI's plus Azure's `prompt_filter_results` / `content_filter_results`, the
//! model the deployment's name unless the request names one; refusals and faults are Azure's
//! bodies (`{"error":{"code","message"}}`, the content filter's 400 with `innererror`).

use std::time::Duration;

use serde_json::{json, Value};

use crate::azure::filter::{content_filter_body, filter_results, prompt_filter_results};
use crate::azure::stream::plan_stream;
use crate::azure::token::TokenCheck;
use crate::dispatch::plan::Action;
use crate::fault::Fault;
use crate::openai::body::{
    embedding_input_count, embeddings_body, write_chat_completion, AnswerId, ChatRequest, EmbeddingsRequest, Usage,
};
use crate::openai::stream::StreamPlan;
use crate::state::Shared;
use crate::wire::head::Method;
use crate::wire::response::{write_openai_error, write_openai_error_with_code, Head};
use crate::wire::routes::Route;
use crate::wire::target::request_target;

const RESOURCE_NOT_FOUND: &str = r#"{"error":{"code":"404","message":"Resource not found"}}"#;
const API_VERSION_NOT_SUPPORTED: &str = r#"{"error":{"code":"BadRequest","message":"API version not supported"}}"#;
const MISSING_KEY: &str = "Access denied due to missing subscription key. Make sure to include subscription key when \
                           making requests to an API.";
const INVALID_KEY: &str = "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide \
                           a valid key for an active subscription and use a correct regional API endpoint for your \
                           resource.";
const INVALID_TOKEN: &str = "Unauthorized. Access token is missing, invalid, audience is incorrect \
                             (https://cognitiveservices.azure.com), or have expired.";
const DEPLOYMENT_NOT_FOUND: &str = "The API deployment for this resource does not exist. If you created the \
                                    deployment within the last 5 minutes, please wait a moment and try again.";

/// The deployment and version of an admitted request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AzureTarget {
    pub deployment: String,
    pub api_version: String,
}

/// One request to an Azure route, with what the dispatcher decided for it.
pub(crate) struct AzureCall<'a> {
    pub shared: &'a Shared,
    pub route: Route,
    pub method: Method,
    pub head_bytes: &'a [u8],
    pub body: &'a [u8],
    pub number: u64,
    pub created: u64,
    pub chunks: u32,
    pub chunk_delay: Duration,
    pub reply: Option<&'a str>,
    pub close: bool,
}

impl AzureCall<'_> {
    /// Azure's checks in order — a known path, then `api-version` (missing: 404, malformed: 400),
    /// then the key or token (401), then the deployment (404 with `--azure-deployments`). `Err`
    /// once the refusal is written to `out`.
    pub(crate) fn admit(&self, out: &mut Vec<u8>) -> Result<AzureTarget, ()> {
        let target = request_target(self.head_bytes);
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        if self.route == Route::AzureOther || self.method != Method::Post {
            self.write(out, 404, RESOURCE_NOT_FOUND.as_bytes());
            return Err(());
        }
        let Some(api_version) = query_value(query, "api-version") else {
            self.write(out, 404, RESOURCE_NOT_FOUND.as_bytes());
            return Err(());
        };
        if !is_api_version(api_version) {
            self.write(out, 400, API_VERSION_NOT_SUPPORTED.as_bytes());
            return Err(());
        }
        if let Some(message) = self.auth_refusal() {
            self.write(out, 401, &code_message("401", message));
            return Err(());
        }
        let deployment = path.strip_prefix("/openai/deployments/").and_then(|rest| rest.split('/').next());
        let deployment = deployment.unwrap_or_default();
        let known = self.shared.azure_deployments.as_ref().is_none_or(|known| known.iter().any(|d| d == deployment));
        if !known {
            self.write(out, 404, &code_message("DeploymentNotFound", DEPLOYMENT_NOT_FOUND));
            return Err(());
        }
        Ok(AzureTarget { deployment: deployment.to_owned(), api_version: api_version.to_owned() })
    }

    /// The 401 message when the request carries no acceptable `api-key` or bearer token.
    fn auth_refusal(&self) -> Option<&'static str> {
        if let Some(key) = header(self.head_bytes, "api-key") {
            let expected = self.shared.azure_api_key.as_deref();
            return (key.is_empty() || expected.is_some_and(|expected| expected != key)).then_some(INVALID_KEY);
        }
        match header(self.head_bytes, "authorization") {
            None => Some(MISSING_KEY),
            Some(value) => {
                let token = value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).map(str::trim);
                match token.map(|token| self.shared.entra.check(token)) {
                    Some(TokenCheck::Valid) => None,
                    _ => Some(INVALID_TOKEN),
                }
            }
        }
    }

    /// The answer to an admitted request, or to the fault that hits it.
    pub(crate) fn answer(&self, target: &AzureTarget, fault: Option<Fault>, out: &mut Vec<u8>) -> Action {
        let (abort_after, filtered) = match fault {
            None => (None, false),
            Some(Fault::Status { status, retry_after }) => {
                self.fault(out, target, status, retry_after);
                return Action::Send { close: self.close };
            }
            Some(Fault::Reset) => return Action::Reset,
            Some(Fault::Hang) => return Action::Hang,
            Some(Fault::AbortAfter { chunks }) => (Some(chunks), false),
            Some(Fault::ContentFilter { completion: true }) if self.route == Route::AzureChat => (None, true),
            Some(Fault::ContentFilter { .. }) => {
                self.write(out, 400, &content_filter_body());
                return Action::Send { close: self.close };
            }
        };
        let head_len = match self.route {
            Route::AzureChat => match self.chat(out, target, abort_after, filtered) {
                Ok(head_len) => head_len,
                Err(stream) => return Action::AzureStream(stream),
            },
            _ => self.embeddings(out, target),
        };
        match abort_after {
            None => Action::Send { close: self.close },
            Some(_) => Action::SendPartThenClose { len: head_len + (out.len() - head_len) / 2 },
        }
    }

    /// A whole chat answer (or a 400); `Err` with the stream to send for `"stream": true`.
    fn chat(
        &self,
        out: &mut Vec<u8>,
        target: &AzureTarget,
        abort_after: Option<u32>,
        filtered: bool,
    ) -> Result<usize, crate::azure::stream::AzureStreamPlan> {
        let parsed: ChatRequest<'_> = match serde_json::from_slice(self.body) {
            Ok(parsed) => parsed,
            Err(error) => return Ok(self.openai_error(out, 400, &format!("invalid JSON body: {error}"), None)),
        };
        let tokens = (self.body.len() as u64).div_ceil(4);
        if let Some(window) = self.shared.context_window.filter(|&window| tokens > window) {
            let message = format!(
                "This model's maximum context length is {window} tokens. However, your messages resulted in {tokens} \
                 tokens. Please reduce the length of the messages."
            );
            return Ok(self.openai_error(out, 400, &message, Some("context_length_exceeded")));
        }
        let refused = self.shared.refuse.as_deref();
        if refused.is_some_and(|word| memchr::memmem::find(self.body, word.as_bytes()).is_some()) {
            return Ok(self.write(out, 400, &content_filter_body()));
        }
        let model = parsed.model.as_deref().unwrap_or(&target.deployment).to_owned();
        let usage = Usage::new(self.body.len(), self.chunks);
        let text = &self.shared.text;
        if parsed.stream == Some(true) {
            let include_usage = parsed.stream_options.and_then(|options| options.include_usage) == Some(true);
            let stream = StreamPlan {
                number: self.number,
                created: self.created,
                model,
                chunks: self.chunks,
                chunk_delay: self.chunk_delay,
                usage: include_usage.then_some(usage),
                abort_after,
                close: self.close,
                provider: None,
                reply: self.reply.map(str::to_owned),
            };
            return Err(plan_stream(text, &stream, filtered));
        }
        let id = AnswerId { number: self.number, created: self.created, model: &model, provider: None };
        let mut written = Vec::new();
        write_chat_completion(&mut written, &id, text, text.content_or(self.reply), &usage);
        let mut answer: Value = serde_json::from_slice(&written).unwrap_or_default();
        answer["prompt_filter_results"] = prompt_filter_results(None);
        answer["choices"][0]["content_filter_results"] = filter_results(filtered.then_some("violence"), false);
        if filtered {
            answer["choices"][0]["finish_reason"] = json!("content_filter");
            answer["choices"][0]["message"]["content"] = Value::Null;
        }
        Ok(self.write(out, 200, answer.to_string().as_bytes()))
    }

    fn embeddings(&self, out: &mut Vec<u8>, target: &AzureTarget) -> usize {
        let parsed: EmbeddingsRequest<'_> = match serde_json::from_slice(self.body) {
            Ok(parsed) => parsed,
            Err(error) => return self.openai_error(out, 400, &format!("invalid JSON body: {error}"), None),
        };
        let Some(inputs) = embedding_input_count(parsed.input.as_ref()) else {
            return self.openai_error(out, 400, "'input' must be a non-empty string or array", None);
        };
        let model = parsed.model.as_deref().unwrap_or(&target.deployment);
        self.write(out, 200, &embeddings_body(model, inputs, &Usage::new(self.body.len(), 0)))
    }

    /// A `status:S` fault in Azure's shape: 401 the bad key, 404 the missing deployment, 429 the
    /// rate limit (always with `retry-after`, 1 s unless given), OpenAI's shape for 400, else
    /// `{"error":{"code":"S","message":"mock NAME injected status S"}}`.
    fn fault(&self, out: &mut Vec<u8>, target: &AzureTarget, status: u16, retry_after: Option<u32>) {
        let name = &self.shared.name;
        match status {
            400 => {
                self.openai_error(out, 400, &format!("mock {name} injected status 400"), None);
            }
            401 => {
                self.write(out, 401, &code_message("401", INVALID_KEY));
            }
            404 => {
                self.write(out, 404, &code_message("DeploymentNotFound", DEPLOYMENT_NOT_FOUND));
            }
            429 => {
                let seconds = retry_after.unwrap_or(1);
                let operation =
                    if self.route == Route::AzureChat { "ChatCompletions_Create" } else { "Embeddings_Create" };
                let message = format!(
                    "Requests to the {operation} Operation under Azure OpenAI API version {} have exceeded token rate \
                     limit of your current OpenAI S0 pricing tier. Please retry after {seconds} second{}. Please go \
                     here: https://aka.ms/oai/quotaincrease if you would like to further increase the default rate \
                     limit.",
                    target.api_version,
                    if seconds == 1 { "" } else { "s" }
                );
                let extra = format!("{}retry-after-ms: {}\r\n", self.extra_headers(), u64::from(seconds) * 1000);
                let head = Head { retry_after: Some(seconds), extra: &extra, ..Head::json(429, name, self.close) };
                head.write_with_body(out, &code_message("429", &message));
            }
            _ => {
                let extra = self.extra_headers();
                let head = Head { retry_after, extra: &extra, ..Head::json(status, name, self.close) };
                head.write_with_body(
                    out,
                    &code_message(&status.to_string(), &format!("mock {name} injected status {status}")),
                );
            }
        }
    }

    /// `apim-request-id` (from the request's number) and `x-ms-region`, as Azure sends them.
    fn extra_headers(&self) -> String {
        format!("apim-request-id: 00000000-0000-4000-8000-{:012x}\r\nx-ms-region: mock\r\n", self.number)
    }

    /// Appends a JSON response with Azure's headers; returns the head's length.
    fn write(&self, out: &mut Vec<u8>, status: u16, body: &[u8]) -> usize {
        let extra = self.extra_headers();
        Head { extra: &extra, ..Head::json(status, &self.shared.name, self.close) }.write_with_body(out, body)
    }

    /// OpenAI's error body (what Azure relays for invalid requests), with Azure's headers.
    fn openai_error(&self, out: &mut Vec<u8>, status: u16, message: &str, code: Option<&str>) -> usize {
        let extra = self.extra_headers();
        let head = Head { extra: &extra, ..Head::json(status, &self.shared.name, self.close) };
        match code {
            Some(code) => write_openai_error_with_code(out, &head, message, code),
            None => write_openai_error(out, &head, message),
        }
    }
}

/// Azure's `{"error":{"code","message"}}`.
fn code_message(code: &str, message: &str) -> Vec<u8> {
    json!({"error": {"code": code, "message": message}}).to_string().into_bytes()
}

/// `YYYY-MM-DD` or `YYYY-MM-DD-preview`, a real month and day.
pub(crate) fn is_api_version(version: &str) -> bool {
    let date = version.strip_suffix("-preview").unwrap_or(version);
    let bytes = date.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .filter(|part| part.iter().all(u8::is_ascii_digit))
            .map(|part| part.iter().fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0')))
    };
    bytes.len() == 10
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && digits(0..4).is_some()
        && digits(5..7).is_some_and(|month| (1..=12).contains(&month))
        && digits(8..10).is_some_and(|day| (1..=31).contains(&day))
}

/// The first value of `name` in a query string (not percent-decoded: versions need none).
fn query_value<'q>(query: &'q str, name: &str) -> Option<&'q str> {
    query.split('&').find_map(|pair| pair.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// A header's value (trimmed), the first of that name.
fn header<'h>(head: &'h [u8], name: &str) -> Option<&'h str> {
    let head = std::str::from_utf8(head).ok()?;
    head.split("\r\n").skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
