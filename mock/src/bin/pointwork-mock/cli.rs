//! The command line of `pointwork-mock`: one clap declaration ([`Cli`]) for its flags, values and
//! help, turned into [`MockOptions`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, Parser};
use pointwork_mock::{Fault, MockOptions, TlsFiles};

const AFTER_HELP: &str = "\
per request: headers x-mock-fault, x-mock-latency-ms, x-mock-chunks, x-mock-chunk-delay-ms,
             x-mock-reply.
endpoints: POST /v1/chat/completions, POST /v1/embeddings, GET /v1/models, GET /health,
           GET|POST /mock/control, GET|DELETE /mock/requests, GET /mock/stats.
responses: POST /v1/responses (and /responses, /openai/v1/responses, /openai/responses),
           GET|DELETE /v1/responses/{id}; previous_response_id continues a kept answer.
anthropic: POST /v1/messages (and /messages), POST /v1/messages/count_tokens; errors and
           faults there in Anthropic's shape, abort-after:K a stream's `event: error`.
openrouter: POST /api/v1/chat/completions, GET /api/v1/models,
            GET /api/v1/models/{author}/{slug}/endpoints,
            GET /api/frontend/v1/stats/endpoint?permaslug=SLUG,
            GET|POST /mock/openrouter/providers, GET|POST /mock/openrouter/account,
            GET|DELETE /mock/openrouter/requests, GET /mock/openrouter/stats,
            POST /mock/openrouter/reset.
azure: POST /openai/deployments/{deployment}/chat/completions?api-version=V,
       POST /openai/deployments/{deployment}/embeddings?api-version=V (api-key or Bearer token),
       POST /{tenant}/oauth2/v2.0/token (Entra ID client credentials).
gemini: POST /v1beta/models/{model}:generateContent, :streamGenerateContent[?alt=sse],
        :embedContent, :batchEmbedContents, :countTokens (x-goog-api-key or ?key=).
vertex: POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent,
        :streamGenerateContent; .../publishers/anthropic/models/{m}:rawPredict, :streamRawPredict
        (Bearer tokens from POST /token, Google's service-account JWT grant; GOOGLE.md).
bedrock: POST /model/{modelId}/converse, POST /model/{modelId}/converse-stream (event stream),
         POST /model/{modelId}/invoke (Titan, Cohere embeddings); SigV4-signed (BEDROCK.md).
";

/// The flags of `pointwork-mock`, each documented as `--help` prints it.
#[derive(Debug, Parser)]
#[command(
    name = "pointwork-mock",
    about = "Runs a mock OpenAI-compatible provider. Prints one line\n\
             `pointwork-mock NAME listening on http://ADDR` (https:// with --tls-cert) once listening,\n\
             then serves until killed.",
    override_usage = "pointwork-mock [OPTIONS]",
    help_template = "usage: {usage}\n\n{about}\n\noptions:\n{options}{after-help}",
    after_help = AFTER_HELP,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
pub struct Cli {
    /// address to listen on (default 127.0.0.1:0, a free port)
    #[arg(long, value_name = "ADDR", value_parser = address)]
    pub listen: Option<SocketAddr>,
    /// serving threads (default: available cores)
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>("a thread count of at least 1"))]
    pub threads: Option<usize>,
    /// shown in x-mock-name and the answers (default mock)
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub name: Option<String>,
    /// delay before each response head (default 0)
    #[arg(long = "latency-ms", value_name = "X", value_parser = millis)]
    pub latency: Option<Duration>,
    /// content events per streamed answer (default 8)
    #[arg(long, value_name = "N", value_parser = at_least_one::<u32>("an event count of at least 1"))]
    pub chunks: Option<u32>,
    /// delay between streamed events (default 0)
    #[arg(long = "chunk-delay-ms", value_name = "X", value_parser = millis)]
    pub chunk_delay: Option<Duration>,
    /// answer chats longer than N tokens (a token per 4 bytes) with OpenAI's 400
    /// context_length_exceeded (Messages: Anthropic's 400 prompt is too long)
    #[arg(long, value_name = "N", value_parser = at_least_one::<u64>("a token count of at least 1"))]
    pub context_window: Option<u64>,
    /// answer chats containing WORD with OpenAI's 400 content_policy_violation (Messages: a 200
    /// with stop_reason refusal)
    #[arg(long, value_name = "WORD", allow_hyphen_values = true)]
    pub refuse: Option<String>,
    /// the text of chat and Messages answers (default: Hello from mock NAME)
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    pub reply: Option<String>,
    /// serve OpenRouter's telemetry from DIR/{author}/{slug}/ (endpoints.json, stats.json,
    /// canonical_slug.txt), re-read on every request
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    pub openrouter_telemetry: Option<PathBuf>,
    /// Azure routes accept only this api-key (default: any non-empty key)
    #[arg(long, value_name = "KEY", allow_hyphen_values = true, value_parser = non_empty("a non-empty key"))]
    pub azure_api_key: Option<String>,
    /// the Azure deployments that exist; others get DeploymentNotFound (default: every name)
    #[arg(long, value_name = "A,B", allow_hyphen_values = true, value_parser = names("comma-separated deployment names"))]
    pub azure_deployments: Option<Names>,
    /// expires_in of the Entra tokens issued (default 3599; 0: expired at once)
    #[arg(long = "azure-token-ttl", value_name = "SECS", value_parser = seconds)]
    pub azure_token_ttl_secs: Option<u64>,
    /// the only client_secret the Entra token endpoint accepts (default: any)
    #[arg(long, value_name = "SECRET", allow_hyphen_values = true, value_parser = non_empty("a non-empty secret"))]
    pub azure_client_secret: Option<String>,
    /// Gemini API routes accept only this key (default: any non-empty key)
    #[arg(long, value_name = "KEY", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub gemini_api_key: Option<String>,
    /// a Google service-account JSON: JWTs sent to POST /token must be its account's,
    /// RS256-signed by its key (default: any well-formed JWT)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub vertex_service_account: Option<PathBuf>,
    /// Vertex AI paths may name only project P (default: any)
    #[arg(long, value_name = "P", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub vertex_project: Option<String>,
    /// expires_in of the Google tokens issued (default 3599; 0: expired at once)
    #[arg(long = "vertex-token-ttl", value_name = "SECS", value_parser = seconds)]
    pub vertex_token_ttl_secs: Option<u64>,
    /// Bedrock: the SigV4 credential must name ID (default: any well-formed signature)
    #[arg(long, value_name = "ID", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub aws_access_key_id: Option<String>,
    /// Bedrock: the signature is verified with SECRET (default: any well-formed signature)
    #[arg(long, value_name = "SECRET", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub aws_secret_access_key: Option<String>,
    /// Bedrock: x-amz-security-token must be T (needs the two above)
    #[arg(long, value_name = "T", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub aws_session_token: Option<String>,
    /// Bedrock: the only region a credential scope may name (default: any)
    #[arg(long, value_name = "R", allow_hyphen_values = true, value_parser = non_empty("a non-empty value"))]
    pub aws_region: Option<String>,
    /// Bedrock: the model ids that exist; others get ValidationException (default: every id)
    #[arg(long, value_name = "A,B", allow_hyphen_values = true, value_parser = names("comma-separated model ids"))]
    pub bedrock_models: Option<Names>,
    /// status:S | status:S:retry-after=N | reset | hang | abort-after:K | content_filter |
    /// content_filter:completion
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true, value_parser = fault)]
    pub fault: Option<Fault>,
    /// fraction of requests faulted, 0..=1 (default 1)
    #[arg(long, value_name = "R", value_parser = ratio)]
    pub fault_ratio: Option<f64>,
    /// do not keep requests for GET /mock/requests
    #[arg(long)]
    pub no_record: bool,
    /// agent mode: a request offering a shell tool (Bash, exec_command) gets one call of it
    /// printing POINTWORK-AGENT-42-SURFACE; one ending with a tool's result, that output
    #[arg(long)]
    pub agent: bool,
    /// agent mode: call the tool NAME (without arguments) when a request offers it, before any
    /// shell (e.g. an MCP tool, mcp__SERVER__TOOL)
    #[arg(long, value_name = "NAME")]
    pub agent_tool: Option<String>,
    /// answer /v1/responses with 404 {"detail":"Not Found"}, as a server without it does
    #[arg(long)]
    pub no_responses: bool,
    /// serve HTTPS with this PEM certificate (chain); needs --tls-key
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub tls_cert: Option<PathBuf>,
    /// the PEM private key of --tls-cert
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub tls_key: Option<PathBuf>,
    /// print this help
    #[arg(short = 'h', long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// Comma-separated names (at least one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names(pub Vec<String>);

pub enum Command {
    Serve(Box<MockOptions>),
    Help,
}

/// The help `--help` prints, its value names as this tool has always written them (`--flag
/// VALUE`, not clap's `--flag <VALUE>`; the columns stay aligned).
pub fn usage() -> String {
    Cli::command().render_help().to_string().replace('<', "").replace('>', "  ")
}

/// Parses the arguments after the program name; a refusal is its message.
pub fn parse_args(args: impl Iterator<Item = String>) -> Result<Command, String> {
    match Cli::try_parse_from(std::iter::once("pointwork-mock".to_owned()).chain(args)) {
        Ok(cli) => cli.into_options().map(|options| Command::Serve(Box::new(options))),
        Err(error) if error.kind() == ErrorKind::DisplayHelp => Ok(Command::Help),
        Err(error) => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            Err(first.strip_prefix("error: ").unwrap_or(first).to_owned())
        }
    }
}

impl Cli {
    fn into_options(self) -> Result<MockOptions, String> {
        let defaults = MockOptions::default();
        let tls = match (self.tls_cert, self.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            (Some(_), None) => return Err("--tls-cert needs --tls-key".to_owned()),
            (None, Some(_)) => return Err("--tls-key needs --tls-cert".to_owned()),
        };
        Ok(MockOptions {
            listen: self.listen.unwrap_or(defaults.listen),
            threads: self.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)),
            name: self.name.unwrap_or(defaults.name),
            latency: self.latency.unwrap_or(defaults.latency),
            chunks: self.chunks.unwrap_or(defaults.chunks),
            chunk_delay: self.chunk_delay.unwrap_or(defaults.chunk_delay),
            fault: self.fault.or(defaults.fault),
            fault_ratio: self.fault_ratio.unwrap_or(defaults.fault_ratio),
            context_window: self.context_window.or(defaults.context_window),
            refuse: self.refuse.or(defaults.refuse),
            reply: self.reply.or(defaults.reply),
            record: !self.no_record && defaults.record,
            openrouter_telemetry: self.openrouter_telemetry.or(defaults.openrouter_telemetry),
            tls,
            azure_api_key: self.azure_api_key.or(defaults.azure_api_key),
            azure_deployments: self.azure_deployments.map(|names| names.0).or(defaults.azure_deployments),
            azure_token_ttl_secs: self.azure_token_ttl_secs.unwrap_or(defaults.azure_token_ttl_secs),
            azure_client_secret: self.azure_client_secret.or(defaults.azure_client_secret),
            gemini_api_key: self.gemini_api_key.or(defaults.gemini_api_key),
            vertex_service_account: self.vertex_service_account.or(defaults.vertex_service_account),
            vertex_project: self.vertex_project.or(defaults.vertex_project),
            vertex_token_ttl_secs: self.vertex_token_ttl_secs.unwrap_or(defaults.vertex_token_ttl_secs),
            aws_access_key_id: self.aws_access_key_id.or(defaults.aws_access_key_id),
            aws_secret_access_key: self.aws_secret_access_key.or(defaults.aws_secret_access_key),
            aws_session_token: self.aws_session_token.or(defaults.aws_session_token),
            aws_region: self.aws_region.or(defaults.aws_region),
            bedrock_models: self.bedrock_models.map(|names| names.0).or(defaults.bedrock_models),
            agent: self.agent || self.agent_tool.is_some() || defaults.agent,
            agent_tool: self.agent_tool.or(defaults.agent_tool),
            serve_responses: !self.no_responses && defaults.serve_responses,
            ..defaults
        })
    }
}

fn address(value: &str) -> Result<SocketAddr, String> {
    value.parse().map_err(|_| "expected an address like 127.0.0.1:8080".to_owned())
}

/// A count of at least 1; `what` names it in the refusal.
fn at_least_one<T>(what: &'static str) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: FromStr + PartialOrd + From<u8>,
{
    move |value| value.parse().ok().filter(|count| *count >= T::from(1)).ok_or_else(|| format!("expected {what}"))
}

fn millis(value: &str) -> Result<Duration, String> {
    value.parse().map(Duration::from_millis).map_err(|_| "expected milliseconds".to_owned())
}

fn seconds(value: &str) -> Result<u64, String> {
    value.parse().map_err(|_| "expected whole seconds".to_owned())
}

fn ratio(value: &str) -> Result<f64, String> {
    value
        .parse()
        .ok()
        .filter(|ratio| (0.0..=1.0).contains(ratio))
        .ok_or_else(|| "expected a number between 0 and 1".to_owned())
}

fn fault(value: &str) -> Result<Fault, String> {
    value.parse::<Fault>().map_err(|error| error.to_string())
}

fn non_empty(what: &'static str) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |value| if value.is_empty() { Err(format!("expected {what}")) } else { Ok(value.to_owned()) }
}

fn names(what: &'static str) -> impl Fn(&str) -> Result<Names, String> + Clone + Send + Sync + 'static {
    move |value| {
        let names: Vec<String> =
            value.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect();
        if names.is_empty() {
            Err(format!("expected {what}"))
        } else {
            Ok(Names(names))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FLAGS: [&str; 32] = [
        "--listen",
        "--threads",
        "--name",
        "--latency-ms",
        "--chunks",
        "--chunk-delay-ms",
        "--context-window",
        "--refuse",
        "--reply",
        "--openrouter-telemetry",
        "--azure-api-key",
        "--azure-deployments",
        "--azure-token-ttl",
        "--azure-client-secret",
        "--gemini-api-key",
        "--vertex-service-account",
        "--vertex-project",
        "--vertex-token-ttl",
        "--aws-access-key-id",
        "--aws-secret-access-key",
        "--aws-session-token",
        "--aws-region",
        "--bedrock-models",
        "--fault",
        "--fault-ratio",
        "--no-record",
        "--tls-cert",
        "--tls-key",
        "-h",
        "--agent",
        "--no-responses",
        "--help",
    ];

    fn serve(args: &[&str]) -> MockOptions {
        match parse_args(args.iter().map(|arg| (*arg).to_owned())) {
            Ok(Command::Serve(options)) => *options,
            Ok(Command::Help) => panic!("{args:?}: help"),
            Err(message) => panic!("{args:?}: {message}"),
        }
    }

    #[test]
    fn every_documented_flag_parses() {
        let help = usage();
        let readme = include_str!("../../../README.md");
        for flag in FLAGS {
            assert!(help.contains(flag), "--help documents {flag}:\n{help}");
            assert!(flag == "-h" || readme.contains(flag), "mock/README.md documents {flag}");
        }
        let options = serve(&[
            "--listen",
            "127.0.0.1:9301",
            "--threads",
            "3",
            "--name",
            "n",
            "--latency-ms",
            "5",
            "--chunks",
            "2",
            "--chunk-delay-ms",
            "7",
            "--context-window",
            "100",
            "--refuse",
            "bomb",
            "--reply",
            "hi",
            "--openrouter-telemetry",
            "tele",
            "--azure-api-key",
            "k",
            "--azure-deployments",
            "a, b",
            "--azure-token-ttl",
            "0",
            "--azure-client-secret",
            "s",
            "--gemini-api-key",
            "g",
            "--vertex-service-account",
            "sa.json",
            "--vertex-project",
            "p",
            "--vertex-token-ttl",
            "60",
            "--aws-access-key-id",
            "AKID",
            "--aws-secret-access-key",
            "secret",
            "--aws-session-token",
            "t",
            "--aws-region",
            "us-east-1",
            "--bedrock-models",
            "m1,m2",
            "--fault=reset",
            "--fault-ratio",
            "0.5",
            "--no-record",
            "--agent",
            "--no-responses",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
        ]);
        assert_eq!(options.listen, "127.0.0.1:9301".parse().unwrap());
        assert_eq!((options.threads, options.name.as_str()), (3, "n"));
        assert_eq!((options.latency, options.chunk_delay), (Duration::from_millis(5), Duration::from_millis(7)));
        assert_eq!((options.chunks, options.context_window), (2, Some(100)));
        assert_eq!((options.refuse.as_deref(), options.reply.as_deref()), (Some("bomb"), Some("hi")));
        assert_eq!(options.openrouter_telemetry, Some(PathBuf::from("tele")));
        assert_eq!(options.azure_api_key.as_deref(), Some("k"));
        assert_eq!(options.azure_deployments, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!((options.azure_token_ttl_secs, options.vertex_token_ttl_secs), (0, 60));
        assert_eq!(options.azure_client_secret.as_deref(), Some("s"));
        assert_eq!(options.gemini_api_key.as_deref(), Some("g"));
        assert_eq!(options.vertex_service_account, Some(PathBuf::from("sa.json")));
        assert_eq!(options.vertex_project.as_deref(), Some("p"));
        assert_eq!(options.aws_access_key_id.as_deref(), Some("AKID"));
        assert_eq!(options.aws_secret_access_key.as_deref(), Some("secret"));
        assert_eq!(options.aws_session_token.as_deref(), Some("t"));
        assert_eq!(options.aws_region.as_deref(), Some("us-east-1"));
        assert_eq!(options.bedrock_models, Some(vec!["m1".to_owned(), "m2".to_owned()]));
        assert_eq!((options.fault, options.fault_ratio), (Some(Fault::Reset), 0.5));
        assert!(!options.record);
        assert!(options.agent && !options.serve_responses);
        assert_eq!(options.tls, Some(TlsFiles { cert: "c.pem".into(), key: "k.pem".into() }));
        for help in ["-h", "--help"] {
            assert!(matches!(parse_args([help.to_owned()].into_iter()), Ok(Command::Help)), "{help}");
        }
    }

    #[test]
    fn no_flags_are_the_library_defaults_on_every_core() {
        let options = serve(&[]);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let expected = MockOptions { threads: cores, ..MockOptions::default() };
        assert_eq!(format!("{options:?}"), format!("{expected:?}"));
    }

    #[test]
    fn an_unknown_flag_is_refused() {
        let error = Cli::try_parse_from(["pointwork-mock", "--bogus"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        assert!(parse_args(["--bogus".to_owned()].into_iter()).is_err());
        for args in [&["--threads", "0"][..], &["--listen"], &["--fault-ratio", "3"], &["--azure-api-key", ""]] {
            assert!(parse_args(args.iter().map(|arg| (*arg).to_owned())).is_err(), "{args:?}");
        }
    }
}
