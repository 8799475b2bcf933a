//! What a credential fetch obtains: a bearer token or temporary AWS keys, and until when it is
//! sent.

use std::time::{Duration, Instant};

use super::sigv4::Signer;

/// A token is not sent in its last 30 seconds (clock skew, the request's own time), or its last
/// tenth when it lives less than five minutes.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// What was obtained, and until when it is used.
pub struct Token {
    pub(super) value: Obtained,
    /// When it stops being sent: its expiry less the margin.
    pub(super) usable_until: Instant,
}

/// A bearer token, or temporary AWS keys ready to sign with.
pub enum Obtained {
    /// `Bearer …`
    Bearer(String),
    SigV4(Signer),
}

impl Token {
    pub fn new(value: Obtained, fetched: Instant, lifetime: Duration) -> Token {
        let margin = EXPIRY_MARGIN.min(lifetime / 10);
        Token { value, usable_until: fetched + lifetime - margin }
    }
}
