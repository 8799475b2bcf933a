//! AWS Signature Version 4: the method, the path as sent, the headers given and the body's
//! SHA-256 are signed; the `x-amz-date`, `authorization` and (with a session token)
//! `x-amz-security-token` headers are added to the request.
//!
//! The crypto and the general case are the `aws-sigv4` crate's: the day's signing key is its
//! `generate_signing_key`, and a request with a query string or dot segments in its path is
//! signed by its `sign`. The gateway's own requests (a POST to a plain path, a few headers) take
//! a direct path that writes the same canonical request and string to sign without the crate's
//! general machinery, hashing with `ring` and keeping the signing key for the UTC day: about a
//! third of the time per request. Tests hold it to AWS's test-suite vectors and to the crate's
//! own output, header for header.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwapOption;
use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use pointwork_core::upstream_auth::AwsCredentials;
use ring::{digest, hmac};

/// One deployment's credentials, ready to sign.
pub struct Signer {
    identity: Identity,
    credentials: AwsCredentials,
    /// The signing key of the day it was derived for (`YYYYMMDD`).
    day_key: ArcSwapOption<(String, hmac::Key)>,
}

/// The parts of a request that are signed.
pub struct Signable<'a> {
    pub method: &'a str,
    /// The path and query exactly as sent.
    pub path: &'a str,
    /// The headers signed: `host` first (the URI's authority), then the others.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

impl Signer {
    pub fn new(c: &AwsCredentials) -> Signer {
        let credentials = Credentials::new(
            c.access_key_id.clone(),
            c.secret_access_key.clone(),
            c.session_token.clone(),
            None,
            "pointwork-config",
        );
        Signer { identity: credentials.into(), credentials: c.clone(), day_key: ArcSwapOption::empty() }
    }

    /// The headers to add to `request` signed at `time`, as `(name, value)`: `x-amz-date`,
    /// `authorization`, then `x-amz-security-token` with a session token.
    pub fn headers(&self, request: &Signable<'_>, time: SystemTime) -> Result<Vec<(String, String)>, String> {
        match is_plain_path(request.path) {
            true => Ok(self.direct(request, time)),
            false => self.general(request, time),
        }
    }

    /// The gateway's own requests: the canonical request written and hashed directly.
    fn direct(&self, request: &Signable<'_>, time: SystemTime) -> Vec<(String, String)> {
        let c = &self.credentials;
        let date = amz_date(time);
        let day = &date[..8];
        let mut headers: Vec<(String, &str)> =
            request.headers.iter().map(|(name, value)| (name.to_ascii_lowercase(), value.trim())).collect();
        headers.push(("x-amz-date".into(), &date));
        if let Some(token) = &c.session_token {
            headers.push(("x-amz-security-token".into(), token));
        }
        headers.sort_by(|a, b| a.0.cmp(&b.0));
        let mut signed_names = String::with_capacity(64);
        for (i, (name, _)) in headers.iter().enumerate() {
            if i > 0 {
                signed_names.push(';');
            }
            signed_names.push_str(name);
        }
        let mut canonical =
            String::with_capacity(256 + request.path.len() + c.session_token.as_ref().map_or(0, String::len));
        canonical.push_str(request.method);
        canonical.push('\n');
        encode_path(request.path, &mut canonical);
        canonical.push_str("\n\n");
        for (name, value) in &headers {
            let _ = writeln!(canonical, "{name}:{value}");
        }
        canonical.push('\n');
        canonical.push_str(&signed_names);
        canonical.push('\n');
        hex(digest::digest(&digest::SHA256, request.body).as_ref(), &mut canonical);
        let scope = format!("{day}/{}/{}/aws4_request", c.region, c.service);
        let mut string_to_sign = format!("{ALGORITHM}\n{date}\n{scope}\n");
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref(), &mut string_to_sign);
        let signature = hmac::sign(&self.day_key(day, time).1, string_to_sign.as_bytes());
        let mut authorization =
            format!("{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed_names}, Signature=", c.access_key_id);
        hex(signature.as_ref(), &mut authorization);
        let mut out = vec![("x-amz-date".to_string(), date.clone()), ("authorization".to_string(), authorization)];
        if let Some(token) = &c.session_token {
            out.push(("x-amz-security-token".to_string(), token.clone()));
        }
        out
    }

    /// The day's signing key, derived by `aws-sigv4` once per UTC day.
    fn day_key(&self, day: &str, time: SystemTime) -> Arc<(String, hmac::Key)> {
        if let Some(cached) = self.day_key.load_full().filter(|k| k.0 == day) {
            return cached;
        }
        let c = &self.credentials;
        let key = v4::generate_signing_key(&c.secret_access_key, time, &c.region, &c.service);
        let fresh = Arc::new((day.to_string(), hmac::Key::new(hmac::HMAC_SHA256, key.as_ref())));
        self.day_key.store(Some(fresh.clone()));
        fresh
    }

    /// Any request, through the crate's general signer.
    fn general(&self, request: &Signable<'_>, time: SystemTime) -> Result<Vec<(String, String)>, String> {
        let c = &self.credentials;
        let params = v4::SigningParams::builder()
            .identity(&self.identity)
            .region(&c.region)
            .name(&c.service)
            .time(time)
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| format!("SigV4 parameters: {e}"))?
            .into();
        let host = request.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("host")).map_or("", |h| h.1);
        let uri = format!("https://{host}{}", request.path);
        let headers = request.headers.iter().copied();
        let signable = SignableRequest::new(request.method, uri, headers, SignableBody::Bytes(request.body))
            .map_err(|e| format!("SigV4: the request cannot be signed: {e}"))?;
        let (instructions, _signature) =
            sign(signable, &params).map_err(|e| format!("SigV4 signing failed: {e}"))?.into_parts();
        Ok(instructions.headers().map(|(name, value)| (name.to_string(), value.to_string())).collect())
    }
}

/// A path the direct signer handles as the crate would: absolute, no query, no `.` or `..`
/// segment (which the crate normalizes), no repeated space in a header (none of ours has one).
fn is_plain_path(path: &str) -> bool {
    path.starts_with('/') && !path.contains('?') && !path.split('/').any(|s| s == "." || s == "..")
}

/// The canonical URI of a path as sent: encoded once more (SigV4's double encoding for every
/// service but S3), `/` kept.
fn encode_path(path: &str, out: &mut String) {
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
}

fn hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
}

/// `YYYYMMDDTHHMMSSZ` in UTC.
fn amz_date(time: SystemTime) -> String {
    let time = aws_smithy_types::DateTime::from(time);
    let seconds = aws_smithy_types::DateTime::from_secs(time.secs());
    seconds.fmt(aws_smithy_types::date_time::Format::DateTime).unwrap_or_default().replace(['-', ':'], "")
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
