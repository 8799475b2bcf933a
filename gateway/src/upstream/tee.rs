//! A reader of what a client is sent, head and framed body as written (the response cache's
//! tee of a miss, `crate::cache`): the relay shows it each write, and names nothing of it.

/// What reads the bytes written to a client.
pub trait Tee {
    fn saw(&self, bytes: &[u8]);
}

/// Shows `out`, about to be written to the client, to `tee` when there is one (a plain call
/// before the write: a wrapping `async fn` would cost every write a future).
pub(crate) fn show(tee: Option<&dyn Tee>, out: &[u8]) {
    if let Some(tee) = tee {
        tee.saw(out);
    }
}
