//! How a mock server is started, and the part of it that `/mock/control` can change at run time.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::fault::Fault;
use crate::tls::TlsFiles;

/// Everything [`spawn`](super::spawn) needs to start a mock provider.
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Where to listen; port 0 picks a free port (see [`MockServer::addr`](super::MockServer::addr)).
    pub listen: SocketAddr,
    /// Serving threads, each a monoio runtime with its own `SO_REUSEPORT` listener.
    pub threads: usize,
    /// Shown in `x-mock-name`, the answer text and `system_fingerprint`. ASCII without spaces.
    pub name: String,
    /// Delay before the response head.
    pub latency: Duration,
    /// Content events of a streamed answer (at least 1).
    pub chunks: u32,
    /// Delay between two content events of a streamed answer.
    pub chunk_delay: Duration,
    /// Fault injected into the requests chosen by `fault_ratio`.
    pub fault: Option<Fault>,
    /// Fraction of requests (0..=1) that get `fault`.
    pub fault_ratio: f64,
    /// Keep the provider requests for `GET /mock/requests`.
    pub record: bool,
    /// How many recorded requests are kept; the oldest go first.
    pub record_limit: usize,
    /// Serve HTTPS with this certificate and key instead of plain HTTP.
    pub tls: Option<TlsFiles>,
    /// The model's context window in tokens (a token per 4 request bytes): a chat request
    /// beyond it gets OpenAI's 400 `context_length_exceeded`, a Messages request Anthropic's 400
    /// `prompt is too long`.
    pub context_window: Option<u64>,
    /// A word that the mock's "safety system" refuses: a chat containing it gets OpenAI's 400
    /// `content_policy_violation`, a Messages request a 200 with `stop_reason` `refusal`.
    pub refuse: Option<String>,
    /// The answer's text instead of "Hello from mock NAME": the content of chat answers (split
    /// across the events of a stream) and the text block of Messages answers. Any UTF-8 text;
    /// `POST /mock/control` `"reply"` and the `x-mock-reply` header replace it.
    pub reply: Option<String>,
    /// OpenRouter's telemetry: `DIR/{author}/{slug}/` with `endpoints.json`, `stats.json` and
    /// optionally `canonical_slug.txt`, re-read on every request. `None`: the telemetry
    /// endpoints answer 503 and chats have no telemetry to route by.
    pub openrouter_telemetry: Option<PathBuf>,
    /// Azure OpenAI: the only `api-key` accepted; `None`: any non-empty key.
    pub azure_api_key: Option<String>,
    /// Azure OpenAI: the deployments that exist (others get `DeploymentNotFound`); `None`: all.
    pub azure_deployments: Option<Vec<String>>,
    /// Entra ID: `expires_in` of the tokens issued, in seconds (0: expired at once).
    pub azure_token_ttl_secs: u64,
    /// Entra ID: the only client secret accepted; `None`: any non-empty secret.
    pub azure_client_secret: Option<String>,
    /// Gemini API: the only API key accepted (`x-goog-api-key` or `?key=`); `None`: any non-empty key.
    pub gemini_api_key: Option<String>,
    /// Vertex AI: a Google service-account JSON (`private_key` PEM PKCS#8, `client_email`,
    /// `token_uri`); the JWTs sent to `/token` must be its account's, RS256-signed by its key.
    /// `None`: any well-formed JWT (the signature is not checked).
    pub vertex_service_account: Option<PathBuf>,
    /// Vertex AI: the only project in the paths; `None`: any.
    pub vertex_project: Option<String>,
    /// Google's token endpoint: `expires_in` of the tokens issued, in seconds (0: expired at once).
    pub vertex_token_ttl_secs: u64,
    /// Bedrock: the access key id the SigV4 signature must name; with the secret the signature is
    /// verified. `None` (both): any well-formed signature.
    pub aws_access_key_id: Option<String>,
    /// Bedrock: the secret access key signatures are verified with (needs `aws_access_key_id`).
    pub aws_secret_access_key: Option<String>,
    /// Bedrock: the session token `x-amz-security-token` must carry; `None`: none is required.
    pub aws_session_token: Option<String>,
    /// Bedrock: the only region a credential scope may name; `None`: any.
    pub aws_region: Option<String>,
    /// Bedrock: the model ids that exist (others get `ValidationException`); `None`: all.
    pub bedrock_models: Option<Vec<String>>,
    /// Agent mode: a request offering a shell tool (Claude Code's `Bash`, Codex's
    /// `exec_command`) is answered with one call of it printing a marker, a conversation ending
    /// with a tool's result with that output; on chat completions, Messages and Responses.
    pub agent: bool,
    /// Agent mode: the tool called (without arguments) when a request offers it, before any
    /// shell: an MCP tool, for instance (`mcp__pointwork__web-marker`).
    pub agent_tool: Option<String>,
    /// Serve OpenAI's Responses API (`/v1/responses`); `false`: those paths answer 404
    /// `{"detail":"Not Found"}`, as a self-hosted server without it does.
    pub serve_responses: bool,
    /// How many answers of `/v1/responses` are kept for `previous_response_id` and
    /// `GET /v1/responses/{id}`; the oldest go first.
    pub responses_limit: usize,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 1,
            name: "mock".to_owned(),
            latency: Duration::ZERO,
            chunks: 8,
            chunk_delay: Duration::ZERO,
            fault: None,
            fault_ratio: 1.0,
            record: true,
            record_limit: 1000,
            tls: None,
            context_window: None,
            refuse: None,
            reply: None,
            openrouter_telemetry: None,
            azure_api_key: None,
            azure_deployments: None,
            azure_token_ttl_secs: 3599,
            azure_client_secret: None,
            gemini_api_key: None,
            vertex_service_account: None,
            vertex_project: None,
            vertex_token_ttl_secs: 3599,
            aws_access_key_id: None,
            aws_secret_access_key: None,
            aws_session_token: None,
            aws_region: None,
            bedrock_models: None,
            agent: false,
            agent_tool: None,
            serve_responses: true,
            responses_limit: 1000,
        }
    }
}

impl MockOptions {
    /// Refuses options the server cannot honour, naming the field.
    pub(crate) fn validate(&self) -> io::Result<()> {
        let invalid = |message: String| Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        if self.threads == 0 {
            return invalid("mock threads must be at least 1".to_owned());
        }
        if !is_valid_name(&self.name) {
            return invalid(format!(
                "mock name {:?} must be non-empty printable ASCII without spaces or quotes",
                self.name
            ));
        }
        if !(0.0..=1.0).contains(&self.fault_ratio) {
            return invalid(format!("mock fault_ratio {} must be between 0 and 1", self.fault_ratio));
        }
        let strings = [
            ("gemini_api_key", &self.gemini_api_key),
            ("vertex_project", &self.vertex_project),
            ("aws_access_key_id", &self.aws_access_key_id),
            ("aws_secret_access_key", &self.aws_secret_access_key),
            ("aws_session_token", &self.aws_session_token),
            ("aws_region", &self.aws_region),
        ];
        if let Some((field, _)) = strings.iter().find(|(_, value)| value.as_deref() == Some("")) {
            return invalid(format!("mock {field} must not be empty"));
        }
        if self.aws_access_key_id.is_some() != self.aws_secret_access_key.is_some() {
            return invalid("mock aws_access_key_id and aws_secret_access_key go together".to_owned());
        }
        if self.aws_session_token.is_some() && self.aws_access_key_id.is_none() {
            return invalid("mock aws_session_token needs aws_access_key_id and aws_secret_access_key".to_owned());
        }
        if self.bedrock_models.as_ref().is_some_and(|models| models.is_empty() || models.iter().any(String::is_empty)) {
            return invalid("mock bedrock_models must be non-empty model ids".to_owned());
        }
        Ok(())
    }

    pub(crate) fn behaviour(&self) -> Behaviour {
        Behaviour {
            fault: self.fault,
            fault_ratio: self.fault_ratio,
            latency: self.latency,
            chunks: self.chunks.max(1),
            chunk_delay: self.chunk_delay,
            reply: self.reply.as_deref().map(Arc::from),
        }
    }
}

/// The name goes verbatim into a header and into JSON strings, so it is kept to characters
/// that need no escaping in either.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\')
}

/// The behaviour shared by all threads and replaced as a whole by `POST /mock/control`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Behaviour {
    pub fault: Option<Fault>,
    pub fault_ratio: f64,
    pub latency: Duration,
    pub chunks: u32,
    pub chunk_delay: Duration,
    /// The answer text; `None`: "Hello from mock NAME". Shared, so copying the behaviour for a
    /// request does not copy the text.
    pub reply: Option<Arc<str>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_ones() {
        let options = MockOptions::default();
        assert_eq!(options.threads, 1);
        assert_eq!(options.chunks, 8);
        assert_eq!(options.fault_ratio, 1.0);
        assert!(options.record);
        assert_eq!(options.record_limit, 1000);
        assert_eq!(options.tls, None);
        assert_eq!(options.reply, None);
        assert_eq!(options.gemini_api_key, None);
        assert_eq!(options.vertex_service_account, None);
        assert_eq!(options.vertex_token_ttl_secs, 3599);
        assert_eq!((options.aws_access_key_id.as_deref(), options.aws_region.as_deref()), (None, None));
        assert_eq!(options.bedrock_models, None);
        assert!(!options.agent && options.serve_responses);
        assert_eq!(options.responses_limit, 1000);
        assert!(options.validate().is_ok());
    }

    #[test]
    fn rejects_bad_names_ratios_and_thread_counts() {
        for name in ["", "a b", "quo\"te", "back\\slash", "ünï"] {
            let options = MockOptions { name: name.to_owned(), ..MockOptions::default() };
            assert!(options.validate().is_err(), "{name:?}");
        }
        let options = MockOptions { fault_ratio: 1.5, ..MockOptions::default() };
        assert!(options.validate().is_err());
        let options = MockOptions { threads: 0, ..MockOptions::default() };
        assert!(options.validate().is_err());
    }

    #[test]
    fn rejects_half_aws_credentials_and_empty_provider_values() {
        let key = || Some("AKIDEXAMPLE".to_owned());
        let secret = || Some("secret".to_owned());
        let both = MockOptions { aws_access_key_id: key(), aws_secret_access_key: secret(), ..MockOptions::default() };
        assert!(both.validate().is_ok());
        let session = MockOptions { aws_session_token: Some("token".into()), ..both.clone() };
        assert!(session.validate().is_ok());
        for options in [
            MockOptions { aws_access_key_id: key(), ..MockOptions::default() },
            MockOptions { aws_secret_access_key: secret(), ..MockOptions::default() },
            MockOptions { aws_session_token: Some("token".into()), ..MockOptions::default() },
            MockOptions { aws_region: Some(String::new()), ..MockOptions::default() },
            MockOptions { gemini_api_key: Some(String::new()), ..MockOptions::default() },
            MockOptions { vertex_project: Some(String::new()), ..MockOptions::default() },
            MockOptions { bedrock_models: Some(vec![]), ..MockOptions::default() },
        ] {
            assert!(options.validate().is_err(), "{options:?}");
        }
    }
}
