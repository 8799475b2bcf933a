//! An entry as it is kept: a small binary envelope (`PWC1`, when it was stored, whether it is a
//! stream) around the body the client was sent. Anything else — another version, a truncated
//! value, what another program wrote under the key — does not decode, and is a miss.

use std::sync::Arc;

const MAGIC: &[u8; 4] = b"PWC1";
/// The magic, the time stored (milliseconds since the epoch, little-endian) and the flags.
const HEAD_LEN: usize = 4 + 8 + 1;
const STREAM: u8 = 1;

/// An answer as the cache keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// When it was stored (milliseconds since the epoch): `s-maxage` compares against it.
    pub(crate) stored_ms: u64,
    /// A stream's events (`text/event-stream`), else a whole JSON body.
    pub(crate) stream: bool,
    /// The body the client was sent: de-chunked, as it went out.
    pub(crate) body: Arc<[u8]>,
}

impl Entry {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEAD_LEN + self.body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.stored_ms.to_le_bytes());
        out.push(if self.stream { STREAM } else { 0 });
        out.extend_from_slice(&self.body);
        out
    }

    /// The entry `bytes` holds, or `None` when they are no entry of this version.
    pub(crate) fn decode(bytes: &[u8]) -> Option<Entry> {
        if bytes.len() < HEAD_LEN || &bytes[..4] != MAGIC || bytes[12] > STREAM {
            return None;
        }
        let stored_ms = u64::from_le_bytes(bytes[4..12].try_into().ok()?);
        Some(Entry { stored_ms, stream: bytes[12] == STREAM, body: Arc::from(&bytes[HEAD_LEN..]) })
    }

    /// How much memory it takes, about: its body and its bookkeeping.
    pub(crate) fn weight(&self, key: &str) -> usize {
        self.body.len() + key.len() + 96
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_round_trips_and_anything_else_is_refused() {
        let e = Entry { stored_ms: 1_765_000_000_123, stream: true, body: Arc::from(&b"data: x\n\n"[..]) };
        assert_eq!(Entry::decode(&e.encode()), Some(e.clone()));
        let whole = Entry { stream: false, ..e.clone() };
        assert_eq!(Entry::decode(&whole.encode()), Some(whole));
        assert_eq!(Entry::decode(b"PWC1"), None);
        assert_eq!(Entry::decode(b"{\"timestamp\": 1, \"response\": {}}"), None);
        let mut bad_flag = e.encode();
        bad_flag[12] = 7;
        assert_eq!(Entry::decode(&bad_flag), None);
    }
}
