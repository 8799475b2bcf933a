//! An attempt that failed before any byte reached the client (the exchange, and a credential
//! that could not sign or authorise it).

use pointwork_core::Failure;

/// A failure before any byte reached the client, with the error the client gets if no retry serves it.
#[derive(Debug)]
pub struct AttemptError {
    pub failure: Failure,
    pub status: u16,
    pub body: Vec<u8>,
    pub retry_after: Option<String>,
}
