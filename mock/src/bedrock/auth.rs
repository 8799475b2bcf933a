//! AWS Signature Version 4, checked as Bedrock's front end checks it: the `Authorization` header's
//! shape, the credential scope (service `bedrock`, the region), `x-amz-date` within 15 minutes,
//! and — when the mock knows the secret — the signature recomputed over the request as received
//! (method, the path as sent, the query, the signed headers, the body's SHA-256). Refusals carry
//! the exception name and AWS's sentence.

use ring::{digest, hmac};

use crate::wire::clock::rfc3339;
use crate::wire::target::{headers, percent_decode};

const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// How far `x-amz-date` may be from the server's clock.
const MAX_SKEW_SECS: u64 = 15 * 60;
pub(crate) const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the signature you \
                                             provided. Check your AWS Secret Access Key and signing method. Consult \
                                             the service documentation for details.";
pub(crate) const INVALID_TOKEN: &str = "The security token included in the request is invalid.";

/// What the mock knows of the caller (`--aws-*`).
#[derive(Debug, Clone, Default)]
pub(crate) struct AwsCredentials {
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    pub region: Option<String>,
}

/// A refused request: 403, the exception's name and message (and, for a signature mismatch, the
/// canonical request the mock computed, for the `x-mock-canonical-request` header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthRefusal {
    pub kind: &'static str,
    pub message: String,
    pub canonical_request: Option<String>,
}

fn refuse<T>(kind: &'static str, message: impl Into<String>) -> Result<T, AuthRefusal> {
    Err(AuthRefusal { kind, message: message.into(), canonical_request: None })
}

/// The request as received.
pub(crate) struct SignedRequest<'a> {
    pub method: &'a str,
    /// The path as sent (percent-encoding kept).
    pub path: &'a str,
    pub query: &'a str,
    pub head: &'a [u8],
    pub body: &'a [u8],
}

/// The parts of `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`.
struct Authorization<'a> {
    credential: Option<&'a str>,
    signed_headers: Option<&'a str>,
    signature: Option<&'a str>,
}

impl AwsCredentials {
    /// `Ok` when Bedrock would let the request through to the model.
    pub(crate) fn check(&self, request: &SignedRequest<'_>, now: u64) -> Result<(), AuthRefusal> {
        let header =
            |name: &str| headers(request.head).find_map(|(key, value)| key.eq_ignore_ascii_case(name).then_some(value));
        let Some(authorization) = header("authorization") else {
            return refuse("MissingAuthenticationTokenException", "Missing Authentication Token");
        };
        let amz_date = header("x-amz-date");
        let parts = parse_authorization(authorization);
        let mut missing = String::new();
        for (name, value) in
            [("Credential", parts.credential), ("Signature", parts.signature), ("SignedHeaders", parts.signed_headers)]
        {
            if value.is_none() {
                missing.push_str(&format!("Authorization header requires '{name}' parameter. "));
            }
        }
        if amz_date.is_none() {
            missing.push_str("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. ");
        }
        let (Some(credential), Some(signed_headers), Some(signature), Some(amz_date), true) =
            (parts.credential, parts.signed_headers, parts.signature, amz_date, missing.is_empty())
        else {
            return refuse("IncompleteSignatureException", format!("{missing}Authorization={authorization}"));
        };
        let scope: Vec<&str> = credential.split('/').collect();
        let [key_id, date, region, service, terminator] = scope[..] else {
            return refuse("IncompleteSignatureException", "Credential should be scoped to a valid region. ");
        };
        if terminator != "aws4_request" {
            let message =
                format!("Credential should be scoped with a valid terminator: 'aws4_request', not '{terminator}'. ");
            return refuse("InvalidSignatureException", message);
        }
        if service != "bedrock" {
            return refuse("InvalidSignatureException", "Credential should be scoped to correct service: 'bedrock'. ");
        }
        if self.region.as_deref().is_some_and(|expected| expected != region) || region.is_empty() {
            return refuse("InvalidSignatureException", "Credential should be scoped to a valid region. ");
        }
        let Some(signed_at) = parse_amz_date(amz_date) else {
            let message = format!(
                "Date must be in ISO-8601 'basic format'. Got '{amz_date}'. See http://en.wikipedia.org/wiki/ISO_8601"
            );
            return refuse("IncompleteSignatureException", message);
        };
        if !amz_date.starts_with(date) || date.len() != 8 {
            let message = format!(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{date}' != \
                 '{}', from '{amz_date}'.",
                &amz_date[..8]
            );
            return refuse("InvalidSignatureException", message);
        }
        if signed_at + MAX_SKEW_SECS < now {
            let message = format!(
                "Signature expired: {amz_date} is now earlier than {} ({} - 15 min.)",
                amz_timestamp(now - MAX_SKEW_SECS),
                amz_timestamp(now)
            );
            return refuse("InvalidSignatureException", message);
        }
        if signed_at > now + MAX_SKEW_SECS {
            let message = format!(
                "Signature not yet current: {amz_date} is still later than {} ({} + 15 min.)",
                amz_timestamp(now + MAX_SKEW_SECS),
                amz_timestamp(now)
            );
            return refuse("InvalidSignatureException", message);
        }
        if !signed_headers.split(';').any(|name| name == "host") {
            return refuse(
                "InvalidSignatureException",
                "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
            );
        }
        if self.access_key_id.as_deref().is_some_and(|expected| expected != key_id) || key_id.is_empty() {
            return refuse("UnrecognizedClientException", INVALID_TOKEN);
        }
        let token = header("x-amz-security-token");
        let secret_known = self.secret_access_key.is_some();
        if (self.session_token.is_some() || secret_known) && token != self.session_token.as_deref() {
            return refuse("UnrecognizedClientException", INVALID_TOKEN);
        }
        let well_formed =
            signature.len() == 64 && signature.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
        let Some(secret) = &self.secret_access_key else {
            return if well_formed { Ok(()) } else { refuse("InvalidSignatureException", SIGNATURE_MISMATCH) };
        };
        let canonical = canonical_request(request, signed_headers);
        let scope = format!("{date}/{region}/{service}/aws4_request");
        let expected = signature_of(secret, &canonical, amz_date, &scope);
        if expected == signature {
            return Ok(());
        }
        Err(AuthRefusal {
            kind: "InvalidSignatureException",
            message: SIGNATURE_MISMATCH.to_owned(),
            canonical_request: Some(canonical),
        })
    }
}

fn parse_authorization(value: &str) -> Authorization<'_> {
    let mut parts = Authorization { credential: None, signed_headers: None, signature: None };
    let Some(rest) = value.strip_prefix(ALGORITHM).filter(|rest| rest.starts_with(' ')) else {
        return parts;
    };
    for pair in rest.split(',') {
        let Some((key, value)) = pair.trim().split_once('=') else {
            continue;
        };
        let slot = match key {
            "Credential" => &mut parts.credential,
            "SignedHeaders" => &mut parts.signed_headers,
            "Signature" => &mut parts.signature,
            _ => continue,
        };
        *slot = Some(value.trim()).filter(|value| !value.is_empty());
    }
    parts
}

/// SigV4's canonical request over the request as received.
pub(crate) fn canonical_request(request: &SignedRequest<'_>, signed_headers: &str) -> String {
    let mut query: Vec<(String, String)> = request
        .query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (uri_encode(&percent_decode(key), true), uri_encode(&percent_decode(value), true))
        })
        .collect();
    query.sort();
    let query: Vec<String> = query.into_iter().map(|(key, value)| format!("{key}={value}")).collect();
    let mut canonical_headers = String::new();
    for name in signed_headers.split(';') {
        let values: Vec<String> = headers(request.head)
            .filter(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        canonical_headers.push_str(&format!("{name}:{}\n", values.join(",")));
    }
    let payload = match headers(request.head).find(|(key, _)| key.eq_ignore_ascii_case("x-amz-content-sha256")) {
        Some((_, "UNSIGNED-PAYLOAD")) => "UNSIGNED-PAYLOAD".to_owned(),
        _ => hex(digest::digest(&digest::SHA256, request.body).as_ref()),
    };
    format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{payload}",
        request.method,
        uri_encode(request.path, false),
        query.join("&")
    )
}

/// The hex signature of `canonical` at `amz_date` in `scope` (`date/region/service/aws4_request`).
pub(crate) fn signature_of(secret: &str, canonical: &str, amz_date: &str, scope: &str) -> String {
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = format!("AWS4{secret}").into_bytes();
    for part in scope.split('/') {
        key = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), part.as_bytes()).as_ref().to_vec();
    }
    hex(hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &key), string_to_sign.as_bytes()).as_ref())
}

/// SigV4's URI encoding: unreserved characters kept, `/` kept in paths, the rest `%XX`. A path
/// is encoded as sent, so its own `%` escapes are encoded once more (SigV4's double encoding
/// for every service but S3).
fn uri_encode(text: &str, encode_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(byte as char),
            b'/' if !encode_slash => out.push('/'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `YYYYMMDDTHHMMSSZ` as Unix seconds.
pub(crate) fn parse_amz_date(value: &str) -> Option<u64> {
    let bytes = value.as_bytes();
    if bytes.len() != 16 || bytes[8] != b'T' || bytes[15] != b'Z' {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = value.get(range)?;
        part.bytes().all(|byte| byte.is_ascii_digit()).then(|| part.parse().ok()).flatten()
    };
    let (year, month, day) = (number(0..4)?, number(4..6)?, number(6..8)?);
    let (hour, minute, second) = (number(9..11)?, number(11..13)?, number(13..15)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hour * 3600 + minute * 60 + second).ok()
}

/// Unix seconds as `YYYYMMDDTHHMMSSZ`.
pub(crate) fn amz_timestamp(seconds: u64) -> String {
    rfc3339(seconds).replace(['-', ':'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_440_938_160; // 20150830T123600Z, the date of AWS's SigV4 examples.

    fn request<'a>(head: &'a [u8], body: &'a [u8]) -> SignedRequest<'a> {
        SignedRequest { method: "POST", path: "/model/m%3A0/converse", query: "", head, body }
    }

    fn signed_head(secret: &str, date: &str, scope_service: &str) -> String {
        let unsigned = format!("POST /model/m%3A0/converse HTTP/1.1\r\nHost: bedrock\r\nX-Amz-Date: {date}\r\n\r\n");
        let canonical = canonical_request(&request(unsigned.as_bytes(), b"{}"), "host;x-amz-date");
        let scope = format!("{}/us-east-1/{scope_service}/aws4_request", &date[..8]);
        let signature = signature_of(secret, &canonical, date, &scope);
        format!(
            "POST /model/m%3A0/converse HTTP/1.1\r\nHost: bedrock\r\nX-Amz-Date: {date}\r\nAuthorization: \
             AWS4-HMAC-SHA256 Credential=AKID/{scope}, SignedHeaders=host;x-amz-date, Signature={signature}\r\n\r\n"
        )
    }

    fn verifying() -> AwsCredentials {
        AwsCredentials {
            access_key_id: Some("AKID".into()),
            secret_access_key: Some("s3cret".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_signature_made_with_the_secret_is_accepted_and_others_refused() {
        let head = signed_head("s3cret", "20150830T123600Z", "bedrock");
        assert_eq!(verifying().check(&request(head.as_bytes(), b"{}"), NOW), Ok(()));
        let refusal = verifying().check(&request(head.as_bytes(), b"{ }"), NOW).expect_err("body changed");
        assert_eq!((refusal.kind, refusal.message.as_str()), ("InvalidSignatureException", SIGNATURE_MISMATCH));
        let canonical = refusal.canonical_request.expect("canonical");
        assert!(canonical.starts_with("POST\n/model/m%253A0/converse\n\nhost:bedrock\nx-amz-date:"), "{canonical}");
        let wrong = signed_head("other", "20150830T123600Z", "bedrock");
        assert_eq!(
            verifying().check(&request(wrong.as_bytes(), b"{}"), NOW).expect_err("wrong").kind,
            "InvalidSignatureException"
        );
        // Without the secret only the shape is checked.
        assert_eq!(AwsCredentials::default().check(&request(wrong.as_bytes(), b"{}"), NOW), Ok(()));
    }

    #[test]
    fn refusals_name_awss_exceptions() {
        let kind = |credentials: &AwsCredentials, head: &str, now: u64| {
            let refusal = credentials.check(&request(head.as_bytes(), b"{}"), now).expect_err(head);
            (refusal.kind, refusal.message)
        };
        let open = AwsCredentials::default();
        assert_eq!(
            kind(&open, "POST / HTTP/1.1\r\n\r\n", NOW),
            ("MissingAuthenticationTokenException", "Missing Authentication Token".to_owned())
        );
        let (name, message) = kind(&open, "POST / HTTP/1.1\r\nAuthorization: Bearer x\r\n\r\n", NOW);
        assert_eq!(name, "IncompleteSignatureException");
        assert!(
            message.starts_with("Authorization header requires 'Credential' parameter. ")
                && message.ends_with("Authorization=Bearer x")
        );
        let head = signed_head("s3cret", "20150830T123600Z", "s3");
        assert_eq!(kind(&open, &head, NOW).1, "Credential should be scoped to correct service: 'bedrock'. ");
        let head = signed_head("s3cret", "20150830T123600Z", "bedrock");
        let late = kind(&open, &head, NOW + 16 * 60);
        assert_eq!(
            late.1,
            "Signature expired: 20150830T123600Z is now earlier than 20150830T123700Z (20150830T125200Z - 15 min.)"
        );
        assert!(kind(&open, &head, NOW - 16 * 60)
            .1
            .starts_with("Signature not yet current: 20150830T123600Z is still later than"));
        let other_key = AwsCredentials { access_key_id: Some("AKID2".into()), ..Default::default() };
        assert_eq!(kind(&other_key, &head, NOW), ("UnrecognizedClientException", INVALID_TOKEN.to_owned()));
        let session = AwsCredentials { session_token: Some("tok".into()), ..verifying() };
        assert_eq!(kind(&session, &head, NOW).0, "UnrecognizedClientException");
        let region = AwsCredentials { region: Some("eu-west-1".into()), ..Default::default() };
        assert_eq!(kind(&region, &head, NOW).1, "Credential should be scoped to a valid region. ");
        let unsigned_host = head.replace("SignedHeaders=host;x-amz-date", "SignedHeaders=x-amz-date");
        assert!(kind(&open, &unsigned_host, NOW).1.starts_with("'Host' or ':authority'"));
    }

    #[test]
    fn dates_and_encoding() {
        assert_eq!(parse_amz_date("20150830T123600Z"), Some(NOW));
        assert_eq!(amz_timestamp(NOW), "20150830T123600Z");
        assert_eq!(parse_amz_date("2015-08-30T12:36:00Z"), None);
        assert_eq!(amz_timestamp(0), "19700101T000000Z");
        assert_eq!(uri_encode("/model/a%3A0/x y", false), "/model/a%253A0/x%20y");
        assert_eq!(uri_encode("a/b", true), "a%2Fb");
    }
}
