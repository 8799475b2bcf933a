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
//! - `sigv4/headers/sketch/*`: the same headers from `mod sketch`, a bench-only sketch of the fix
//!   `docs/benchmarks.md` describes (asserted equal to aws-sigv4's).

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use pointwork_benches::{bedrock_chat_request, BEDROCK_CLAUDE};
use pointwork_core::upstream_auth::AwsCredentials;
use pointwork_gateway::credentials::sigv4::{Signable, Signer};
use pointwork_gateway::credentials::Authorizer;
use pointwork_gateway::dialect::bedrock::chat_request_to_converse_for;

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
        let authorizer = Authorizer::SigV4(signer(token));
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
    // The bench-only sketch of the fix (below): same headers, checked against aws-sigv4's.
    let token = session_token();
    let sketch =
        sketch::DaySigner::new("ASIAQXAMPLE7EXAMPLE4", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", Some(&token), time);
    let sketch = sketch.for_target(HOST, PATH);
    for (label, body) in [(format!("sketch/{}B", body.len()), &body[..]), ("sketch/empty_body".to_string(), &[][..])] {
        let signable = Signable { method: "POST", path: PATH, headers: &signed, body };
        assert_eq!(sketch.headers(body, time), signer.headers(&signable, time).expect("signed"));
        group.bench_function(label, |b| b.iter(|| sketch.headers(black_box(body), time)));
    }
    group.finish();
}

/// A sketch of the fix the report describes, not the gateway's code: SigV4 for one deployment's
/// fixed shape (POST, `content-type` and `host` signed, a session token or not), with the day's
/// signing key derived once and the canonical request hashed in pieces instead of built as a
/// string through `http` types. The bench asserts it gives aws-sigv4's headers byte for byte.
mod sketch {
    use std::time::{SystemTime, UNIX_EPOCH};

    use ring::{digest, hmac};

    /// Credentials and the day's signing key (derive again when the UTC day changes).
    pub struct DaySigner<'a> {
        access_key: &'a str,
        token: Option<&'a str>,
        day: String,
        key: hmac::Key,
    }

    /// One deployment's constant parts.
    pub struct Target<'a> {
        signer: &'a DaySigner<'a>,
        /// `POST\n{path, encoded again}\n\ncontent-type:…\nhost:…\nx-amz-date:`
        prefix: String,
        /// `\nx-amz-security-token:…\n\n{signed names}\n`
        middle: String,
        /// `{day}/us-east-1/bedrock/aws4_request`
        scope: String,
        /// `AWS4-HMAC-SHA256 Credential={key}/{scope}, SignedHeaders={names}, Signature=`
        auth_prefix: String,
    }

    fn sign(key: &[u8], data: &str) -> hmac::Tag {
        hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), data.as_bytes())
    }

    fn hex(bytes: &[u8], out: &mut String) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        for b in bytes {
            out.push(DIGITS[(b >> 4) as usize] as char);
            out.push(DIGITS[(b & 15) as usize] as char);
        }
    }

    /// `YYYYMMDDTHHMMSSZ` (days to a civil date: Howard Hinnant's algorithm).
    fn amz_date(time: SystemTime) -> String {
        let secs = time.duration_since(UNIX_EPOCH).expect("after 1970").as_secs();
        let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        let (h, mi, s) = (rem / 3600, rem / 60 % 60, rem % 60);
        format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z")
    }

    impl<'a> DaySigner<'a> {
        pub fn new(access_key: &'a str, secret: &str, token: Option<&'a str>, time: SystemTime) -> DaySigner<'a> {
            let day = amz_date(time)[..8].to_string();
            let mut key = sign(format!("AWS4{secret}").as_bytes(), &day);
            for part in ["us-east-1", "bedrock", "aws4_request"] {
                key = sign(key.as_ref(), part);
            }
            DaySigner { access_key, token, day, key: hmac::Key::new(hmac::HMAC_SHA256, key.as_ref()) }
        }

        pub fn for_target(&'a self, host: &str, path: &str) -> Target<'a> {
            let names = if self.token.is_some() {
                "content-type;host;x-amz-date;x-amz-security-token"
            } else {
                "content-type;host;x-amz-date"
            };
            let path = path.replace('%', "%25");
            let prefix = format!("POST\n{path}\n\ncontent-type:application/json\nhost:{host}\nx-amz-date:");
            let token = self.token.map_or(String::new(), |t| format!("\nx-amz-security-token:{t}"));
            let scope = format!("{}/us-east-1/bedrock/aws4_request", self.day);
            let auth_prefix =
                format!("AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={names}, Signature=", self.access_key);
            Target { signer: self, prefix, middle: format!("{token}\n\n{names}\n"), scope, auth_prefix }
        }
    }

    impl Target<'_> {
        pub fn headers(&self, body: &[u8], time: SystemTime) -> Vec<(String, String)> {
            let date = amz_date(time);
            let mut hexes = String::with_capacity(128);
            hex(digest::digest(&digest::SHA256, body).as_ref(), &mut hexes);
            let mut creq = digest::Context::new(&digest::SHA256);
            for piece in [&self.prefix, &date, &self.middle, &hexes] {
                creq.update(piece.as_bytes());
            }
            hexes.clear();
            hex(creq.finish().as_ref(), &mut hexes);
            let mut sts = hmac::Context::with_key(&self.signer.key);
            for piece in ["AWS4-HMAC-SHA256\n", &date, "\n", &self.scope, "\n", &hexes] {
                sts.update(piece.as_bytes());
            }
            let mut auth = String::with_capacity(self.auth_prefix.len() + 64);
            auth.push_str(&self.auth_prefix);
            hex(sts.sign().as_ref(), &mut auth);
            let mut out = vec![("x-amz-date".to_string(), date), ("authorization".to_string(), auth)];
            if let Some(token) = self.signer.token {
                out.push(("x-amz-security-token".to_string(), token.to_string()));
            }
            out
        }
    }
}

criterion_group!(benches, authorize, headers);
criterion_main!(benches);
