//! `pointwork-mock`: runs the mock OpenAI-compatible provider until killed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use pointwork_mock::{spawn, Fault, MockOptions, TlsFiles};

const USAGE: &str = "\
usage: pointwork-mock [OPTIONS]

Runs a mock OpenAI-compatible provider. Prints one line
`pointwork-mock NAME listening on http://ADDR` (https:// with --tls-cert) once listening,
then serves until killed.

options:
  --listen ADDR          address to listen on (default 127.0.0.1:0, a free port)
  --threads N            serving threads (default: available cores)
  --name NAME            shown in x-mock-name and the answers (default mock)
  --latency-ms X         delay before each response head (default 0)
  --chunks N             content events per streamed answer (default 8)
  --chunk-delay-ms X     delay between streamed events (default 0)
  --context-window N     answer chats longer than N tokens (a token per 4 bytes) with OpenAI's
                         400 context_length_exceeded (Messages: Anthropic's 400 prompt is too long)
  --refuse WORD          answer chats containing WORD with OpenAI's 400 content_policy_violation
                         (Messages: a 200 with stop_reason refusal)
  --reply TEXT           the text of chat and Messages answers (default: Hello from mock NAME)
  --openrouter-telemetry DIR
                         serve OpenRouter's telemetry from DIR/{author}/{slug}/ (endpoints.json,
                         stats.json, canonical_slug.txt), re-read on every request
  --azure-api-key KEY    Azure routes accept only this api-key (default: any non-empty key)
  --azure-deployments A,B
                         the Azure deployments that exist; others get DeploymentNotFound
                         (default: every name)
  --azure-token-ttl SECS expires_in of the Entra tokens issued (default 3599; 0: expired at once)
  --azure-client-secret SECRET
                         the only client_secret the Entra token endpoint accepts (default: any)
  --gemini-api-key KEY   Gemini API routes accept only this key (default: any non-empty key)
  --vertex-service-account FILE
                         a Google service-account JSON: JWTs sent to POST /token must be its
                         account's, RS256-signed by its key (default: any well-formed JWT)
  --vertex-project P     Vertex AI paths may name only project P (default: any)
  --vertex-token-ttl SECS
                         expires_in of the Google tokens issued (default 3599; 0: expired at once)
  --aws-access-key-id ID, --aws-secret-access-key SECRET
                         Bedrock: the SigV4 credential must name ID, and its signature is verified
                         with SECRET (default: any well-formed signature)
  --aws-session-token T  Bedrock: x-amz-security-token must be T (needs the two above)
  --aws-region R         Bedrock: the only region a credential scope may name (default: any)
  --bedrock-models A,B   Bedrock: the model ids that exist; others get ValidationException
                         (default: every id)
  --fault SPEC           status:S | status:S:retry-after=N | reset | hang | abort-after:K |
                         content_filter | content_filter:completion
  --fault-ratio R        fraction of requests faulted, 0..=1 (default 1)
  --no-record            do not keep requests for GET /mock/requests
  --tls-cert FILE        serve HTTPS with this PEM certificate (chain); needs --tls-key
  --tls-key FILE         the PEM private key of --tls-cert
  -h, --help             print this help

per request: headers x-mock-fault, x-mock-latency-ms, x-mock-chunks, x-mock-chunk-delay-ms,
             x-mock-reply.
endpoints: POST /v1/chat/completions, POST /v1/embeddings, GET /v1/models, GET /health,
           GET|POST /mock/control, GET|DELETE /mock/requests, GET /mock/stats.
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

enum Command {
    Serve(Box<MockOptions>),
    Help,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut options =
        MockOptions { threads: std::thread::available_parallelism().map_or(1, usize::from), ..MockOptions::default() };
    let (mut tls_cert, mut tls_key) = (None, None);
    while let Some(flag) = args.next() {
        if flag == "-h" || flag == "--help" {
            return Ok(Command::Help);
        }
        if flag == "--no-record" {
            options.record = false;
            continue;
        }
        let (flag, inline_value) = match flag.split_once('=') {
            Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
            None => (flag, None),
        };
        let known = [
            "--listen",
            "--threads",
            "--name",
            "--latency-ms",
            "--chunks",
            "--chunk-delay-ms",
            "--fault",
            "--fault-ratio",
            "--context-window",
            "--refuse",
            "--reply",
            "--openrouter-telemetry",
            "--tls-cert",
            "--tls-key",
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
        ];
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag:?}"));
        }
        let value = inline_value.or_else(|| args.next()).ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |what: &str| format!("{flag} {value:?}: expected {what}");
        match flag.as_str() {
            "--listen" => options.listen = value.parse().map_err(|_| bad("an address like 127.0.0.1:8080"))?,
            "--threads" => {
                options.threads = value
                    .parse()
                    .ok()
                    .filter(|&threads| threads >= 1)
                    .ok_or_else(|| bad("a thread count of at least 1"))?
            }
            "--name" => options.name = value,
            "--latency-ms" => options.latency = millis(&value).ok_or_else(|| bad("milliseconds"))?,
            "--chunks" => {
                options.chunks = value
                    .parse()
                    .ok()
                    .filter(|&chunks| chunks >= 1)
                    .ok_or_else(|| bad("an event count of at least 1"))?
            }
            "--chunk-delay-ms" => options.chunk_delay = millis(&value).ok_or_else(|| bad("milliseconds"))?,
            "--context-window" => {
                options.context_window = Some(
                    value.parse().ok().filter(|&n: &u64| n >= 1).ok_or_else(|| bad("a token count of at least 1"))?,
                )
            }
            "--refuse" => options.refuse = Some(value),
            "--reply" => options.reply = Some(value),
            "--openrouter-telemetry" => options.openrouter_telemetry = Some(PathBuf::from(value)),
            "--fault" => options.fault = Some(value.parse::<Fault>().map_err(|error| error.to_string())?),
            "--fault-ratio" => {
                options.fault_ratio = value
                    .parse()
                    .ok()
                    .filter(|ratio| (0.0..=1.0).contains(ratio))
                    .ok_or_else(|| bad("a number between 0 and 1"))?
            }
            "--tls-cert" => tls_cert = Some(PathBuf::from(value)),
            "--tls-key" => tls_key = Some(PathBuf::from(value)),
            "--azure-api-key" if !value.is_empty() => options.azure_api_key = Some(value),
            "--azure-api-key" => return Err(bad("a non-empty key")),
            "--azure-client-secret" if !value.is_empty() => options.azure_client_secret = Some(value),
            "--azure-client-secret" => return Err(bad("a non-empty secret")),
            "--azure-deployments" => {
                let names: Vec<String> =
                    value.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect();
                if names.is_empty() {
                    return Err(bad("comma-separated deployment names"));
                }
                options.azure_deployments = Some(names);
            }
            "--gemini-api-key"
            | "--vertex-project"
            | "--aws-access-key-id"
            | "--aws-secret-access-key"
            | "--aws-session-token"
            | "--aws-region"
                if value.is_empty() =>
            {
                return Err(bad("a non-empty value"))
            }
            "--gemini-api-key" => options.gemini_api_key = Some(value),
            "--vertex-service-account" => options.vertex_service_account = Some(PathBuf::from(value)),
            "--vertex-project" => options.vertex_project = Some(value),
            "--vertex-token-ttl" => options.vertex_token_ttl_secs = value.parse().map_err(|_| bad("whole seconds"))?,
            "--aws-access-key-id" => options.aws_access_key_id = Some(value),
            "--aws-secret-access-key" => options.aws_secret_access_key = Some(value),
            "--aws-session-token" => options.aws_session_token = Some(value),
            "--aws-region" => options.aws_region = Some(value),
            "--bedrock-models" => {
                options.bedrock_models = Some(names(&value).ok_or_else(|| bad("comma-separated model ids"))?)
            }
            "--azure-token-ttl" => {
                options.azure_token_ttl_secs = value.parse().map_err(|_| bad("whole seconds"))?;
            }
            _ => unreachable!("every known flag is matched above"),
        }
    }
    options.tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
        (None, None) => None,
        (Some(_), None) => return Err("--tls-cert needs --tls-key".to_owned()),
        (None, Some(_)) => return Err("--tls-key needs --tls-cert".to_owned()),
    };
    Ok(Command::Serve(Box::new(options)))
}

/// Comma-separated names, `None` when there is none.
fn names(value: &str) -> Option<Vec<String>> {
    let names: Vec<String> =
        value.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect();
    (!names.is_empty()).then_some(names)
}

fn millis(value: &str) -> Option<Duration> {
    value.parse().ok().map(Duration::from_millis)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(options)) => *options,
        Ok(Command::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pointwork-mock: {message}\n(see pointwork-mock --help)");
            return ExitCode::from(2);
        }
    };
    let server = match spawn(options) {
        Ok(server) => server,
        Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("pointwork-mock: {error}\n(see pointwork-mock --help)");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("pointwork-mock: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    let announced = writeln!(stdout, "pointwork-mock {} listening on {}", server.name(), server.url())
        .and_then(|()| stdout.flush());
    drop(stdout);
    if let Err(error) = announced {
        eprintln!("pointwork-mock: cannot write to stdout: {error}");
    }
    server.wait();
    ExitCode::SUCCESS
}
