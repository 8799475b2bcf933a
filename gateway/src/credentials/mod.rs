//! Upstream credentials beyond a fixed key header (`pointwork_core::UpstreamAuth`): a request
//! signed per request (AWS SigV4, [`sigv4`]) with fixed keys or with temporary ones, or a
//! bearer token; what is obtained (tokens, temporary keys) is fetched and refreshed off the hot
//! path ([`tokens`], [`sources`], [`aws_sources`]). [`Authorizer::authorize`] adds the headers
//! to a whole request.

pub mod aws_sources;
pub mod google_jwt;
pub mod http;
pub mod sigv4;
pub mod sources;
pub mod token;
pub mod tokens;

use std::sync::Arc;
use std::time::SystemTime;

use pointwork_core::{Failure, UpstreamAuth};

use crate::errors::openai_error;
use crate::upstream::attempt_error::AttemptError;
use sigv4::{Signable, Signer};
use token::Obtained;
use tokens::TokenCell;

/// What a deployment's requests get besides its fixed head.
pub enum Authorizer {
    /// Fixed keys.
    SigV4(Box<Signer>),
    /// A bearer token or temporary AWS keys, as the refresher last obtained them.
    Obtained(Arc<TokenCell>),
}

impl Authorizer {
    /// The authorizer for `auth`. With `obtain`, a token source is registered with the
    /// refresher (one per distinct credential, kept across reloads); without, the credential is
    /// only checked and its cell stays empty. Fails when the credential cannot be used (a
    /// service-account key that does not parse).
    pub fn new(auth: &UpstreamAuth, obtain: bool) -> Result<Authorizer, String> {
        match auth {
            UpstreamAuth::AwsSigV4(aws) => Ok(Authorizer::SigV4(Box::new(Signer::new(aws)))),
            _ if obtain => tokens::registry().cell(auth).map(Authorizer::Obtained),
            _ => tokens::checked_cell(auth).map(Authorizer::Obtained),
        }
    }

    /// `request` (a whole HTTP/1.1 request, head and body) with the credential's headers added
    /// at the end of its head; an attempt error when no token is available.
    pub fn authorize(&self, request: Vec<u8>, deployment: &str) -> Result<Vec<u8>, AttemptError> {
        let headers = match self {
            Authorizer::SigV4(signer) => sign(signer, &request).map_err(|why| unavailable(deployment, &why))?,
            Authorizer::Obtained(cell) => {
                let headers = cell.with_current(|value| match value {
                    Obtained::Bearer(value) => Ok(vec![("authorization".to_string(), value.clone())]),
                    Obtained::SigV4(signer) => sign(signer, &request),
                });
                headers.and_then(|signed| signed).map_err(|why| unavailable(deployment, &why))?
            }
        };
        Ok(with_headers(request, &headers))
    }
}

/// The SigV4 headers for a request: its request line, `host`, `content-type` and body signed.
pub(crate) fn sign(signer: &Signer, request: &[u8]) -> Result<Vec<(String, String)>, String> {
    let (head, body) = split(request).ok_or("the request has no head")?;
    let head = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or("").split(' ');
    let (method, path) = (request_line.next().unwrap_or("POST"), request_line.next().unwrap_or("/"));
    let mut signed: Vec<(&str, &str)> = Vec::with_capacity(2);
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("host") || name.eq_ignore_ascii_case("content-type") {
                signed.push((name, value.trim()));
            }
        }
    }
    signer.headers(&Signable { method, path, headers: &signed, body }, SystemTime::now())
}

/// The head (without its blank line) and the body.
fn split(request: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = memchr::memmem::find(request, b"\r\n\r\n")?;
    Some((&request[..end], &request[end + 4..]))
}

/// `request` with `headers` before the blank line that ends its head.
pub(crate) fn with_headers(request: Vec<u8>, headers: &[(String, String)]) -> Vec<u8> {
    let Some(end) = memchr::memmem::find(&request, b"\r\n\r\n") else { return request };
    let added: usize = headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
    let mut out = Vec::with_capacity(request.len() + added);
    out.extend_from_slice(&request[..end + 2]);
    for (name, value) in headers {
        crate::http::write::header(&mut out, name, value.as_bytes());
    }
    out.extend_from_slice(&request[end + 2..]);
    out
}

/// The deployment cannot be called now: its failure counts like a refused connection (a
/// cooldown, the next deployment tried).
fn unavailable(deployment: &str, why: &str) -> AttemptError {
    AttemptError {
        failure: Failure::Connect,
        status: 503,
        body: openai_error(503, &format!("deployment {deployment}: no usable credential: {why}"), None),
        retry_after: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_go_at_the_end_of_the_head_and_the_body_is_kept() {
        let request = b"POST /x HTTP/1.1\r\nhost: h\r\ncontent-length: 2\r\n\r\n{}".to_vec();
        let out = with_headers(request, &[("authorization".into(), "Bearer t".into())]);
        assert_eq!(out, b"POST /x HTTP/1.1\r\nhost: h\r\ncontent-length: 2\r\nauthorization: Bearer t\r\n\r\n{}");
    }

    #[test]
    fn a_bedrock_request_is_signed_over_its_path_host_type_and_body() {
        let signer = Signer::new(&pointwork_core::upstream_auth::AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: Some("tok".into()),
            region: "us-east-1".into(),
            service: "bedrock".into(),
        });
        let request = b"POST /model/m%3A0/converse HTTP/1.1\r\nhost: bedrock-runtime.us-east-1.amazonaws.com\r\ncontent-type: application/json\r\nuser-agent: pointwork\r\ncontent-length: 2\r\n\r\n{}".to_vec();
        let out = Authorizer::SigV4(Box::new(signer)).authorize(request, "d").unwrap();
        let text = String::from_utf8(out).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert_eq!(body, "{}");
        assert!(head.contains("\r\nx-amz-security-token: tok"), "{head}");
        let auth = head.lines().find(|l| l.starts_with("authorization: ")).unwrap();
        assert!(
            auth.starts_with("authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
                && auth.contains("/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="),
            "{auth}"
        );
    }
}
