//! `pointwork-mock`: an OpenAI-compatible provider for tests, benchmarks and the demo.
//!
//! It answers chat completions (whole or streamed as server-sent events), embeddings and the
//! model list, injects faults (error statuses, resets, hangs, cut-off answers) by option, by
//! ratio, per request through `x-mock-*` headers or at run time through `POST /mock/control`,
//! and records what it was sent for `GET /mock/requests`. It serves plain HTTP, or HTTPS with
//! [`MockOptions::tls`]. On the `/api/…` paths it also plays OpenRouter: telemetry from the
//! files of [`MockOptions::openrouter_telemetry`], chats routed by their `provider` block,
//! per-provider 429s and input caps, the account's allowed providers, steered through
//! `/mock/openrouter/*`. On `/v1/messages` it speaks Anthropic's Messages API: answers, streams,
//! tool calls, `count_tokens`, and errors and faults in Anthropic's shape. On
//! `/openai/deployments/…` it is an Azure OpenAI resource (`api-version`, `api-key` or Entra
//! bearer tokens from its own `/{tenant}/oauth2/v2.0/token`, content filter results and
//! errors). On `/model/{modelId}/…` it is Amazon Bedrock's runtime (Converse, ConverseStream as an
//! event stream, InvokeModel embeddings; SigV4 checked, verified with `--aws-secret-access-key`;
//! `BEDROCK.md`). On `/v1beta/models/{model}:…` it is the Gemini API (API key), on
//! `/v1/projects/…` Vertex AI (Gemini and Claude, bearer tokens from its own Google `/token`
//! endpoint, service-account JWTs verified with `--vertex-service-account`; `GOOGLE.md`).
//! See `mock/README.md`.
//!
//! ```no_run
//! use pointwork_mock::{spawn, MockOptions};
//! let server = spawn(MockOptions { name: "alpha".into(), ..MockOptions::default() })?;
//! println!("{}/v1/chat/completions", server.url());
//! # Ok::<(), std::io::Error>(())
//! ```

mod agent;
mod anthropic;
mod azure;
mod bedrock;
mod conn;
mod control;
mod dispatch;
mod fault;
mod gemini;
mod openai;
mod openrouter;
mod options;
mod record;
mod responses;
mod server;
mod shutdown;
mod state;
mod tls;
mod vertex;
mod wire;

pub use fault::{Fault, ParseFaultError};
pub use options::MockOptions;
pub use server::{spawn, MockServer};
pub use tls::TlsFiles;
