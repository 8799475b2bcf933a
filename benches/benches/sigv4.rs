//! SigV4 signing per request (issue 16; goal ≤ 5 µs): what every attempt at a Bedrock
//! deployment pays on the shard, `gateway/src/credentials/`.
//!
//! The request is what the gateway sends to Converse: its head (`POST /model/{id}/converse`,
//! `host`, `content-type`, `accept`, `user-agent`, `content-length`) and the Converse body of the
//! seven-turn chat request of `provider_translation.rs` (~1.5 KB).
//!
//! - `sigv4/authorize/*`: `Authorizer::SigV4(..).authorize(request, id)`, the whole per-request
//!   step: the head split, `Signer::headers` at `SystemTime::now()`, the request rebuilt with the
//!   headers added. `session_token` is temporary credentials (an STS token of 1 KB, signed as
//!   `x-amz-security-token`: an instance role or `aws sso`), `long_term` an access key alone.
//! - `sigv4/headers/*`: `Signer::headers` alone at a fixed time, the 1.5 KB body and an empty
//!   one (the difference is the body's SHA-256).

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pointwork_benches::{bedrock_chat_request, BEDROCK_CLAUDE};
use pointwork_core::upstream_auth::AwsCredentials;
use pointwork_dialect::bedrock::chat_request_to_converse_for;
use pointwork_gateway::credentials::sigv4::{Signable, Signer};
use pointwork_gateway::credentials::Authorizer;

const HOST: &str = "bedrock-runtime.us-east-1.amazonaws.com";
const PATH: &str = "/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse";

/// A temporary session token of an STS token's usual length (~1 KB of base64).
fn session_token() -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let body: String = (0..1020).map(|i| alphabet[(i * 37 + 11) % 64] as char).collect();
    format!("IQoJb3JpZ2luX2VjE{body}==")
}

fn signer(session_token: Option<String>) -> Signer {
    Signer::new(&AwsCredentials {
        access_key_id: if session_token.is_some() { "ASIAQXAMPLE7EXAMPLE4" } else { "AKIAIOSFODNN7EXAMPLE" }.into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        session_token,
        region: "us-east-1".into(),
        service: "bedrock".into(),
    })
}

/// The Converse body: `bedrock_chat_request` translated for Claude.
fn converse_body() -> Vec<u8> {
    let body = chat_request_to_converse_for(&bedrock_chat_request(), BEDROCK_CLAUDE).expect("translatable");
    assert!((1000..2000).contains(&body.len()), "{} bytes", body.len());
    body
}

/// The whole HTTP/1.1 request as the gateway writes it before signing.
fn request(body: &[u8]) -> Vec<u8> {
    let head = format!(
        "POST {PATH} HTTP/1.1\r\nhost: {HOST}\r\ncontent-type: application/json\r\naccept: application/json\r\n\
         user-agent: pointwork/0.1.0\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    [head.as_bytes(), body].concat()
}

fn authorize(c: &mut Criterion) {
    let body = converse_body();
    let request = request(&body);
    let mut group = c.benchmark_group("sigv4/authorize");
    group.throughput(Throughput::Elements(1));
    for (label, token) in [("session_token", Some(session_token())), ("long_term", None)] {
        let authorizer = Authorizer::SigV4(Box::new(signer(token)));
        let signed = authorizer.authorize(request.clone(), "bedrock-claude").expect("signed");
        let text = String::from_utf8(signed).expect("UTF-8");
        assert!(text.contains("\r\nauthorization: AWS4-HMAC-SHA256 Credential="), "{text}");
        // The request (a 1.5 KB copy) is made outside the timing, one at a time (as the shard
        // has one request in hand, not a batch of them alive).
        group.bench_function(format!("{label}/{}B", request.len()), |b| {
            b.iter_batched(
                || request.clone(),
                |request| authorizer.authorize(black_box(request), "bedrock-claude").is_ok(),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

fn headers(c: &mut Criterion) {
    let body = converse_body();
    let signer = signer(Some(session_token()));
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000);
    let signed = [("host", HOST), ("content-type", "application/json")];
    let mut group = c.benchmark_group("sigv4/headers");
    for (label, body) in [(format!("{}B", body.len()), &body[..]), ("empty_body".to_string(), &[][..])] {
        let signable = Signable { method: "POST", path: PATH, headers: &signed, body };
        assert_eq!(signer.headers(&signable, time).expect("signed").len(), 3);
        group.bench_function(label, |b| b.iter(|| signer.headers(black_box(&signable), time)));
    }
    group.finish();
}

criterion_group!(benches, authorize, headers);
criterion_main!(benches);
