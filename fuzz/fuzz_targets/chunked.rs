//! The chunked decoder (`http1/src/chunked.rs`), fed in pieces.
//!
//! Input: one byte `n`, then `n % 8` little-endian u16 cut points, then the body bytes. The body
//! is decoded in one piece and again cut at those points (or byte by byte when the first cut
//! point is 0xffff): the data, the bytes consumed, done or not and the error must not depend on
//! the cuts. The data is then encoded again and must decode to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pointwork_http1::chunked::{encode_chunk, ChunkedDecoder, ChunkedError, LAST_CHUNK};

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let cut_count = usize::from(n % 8);
    if rest.len() < 2 * cut_count {
        return;
    }
    let (cut_bytes, body) = rest.split_at(2 * cut_count);
    let cut_points: Vec<u16> = cut_bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    let pieces =
        if cut_points.first() == Some(&u16::MAX) { body.chunks(1).collect() } else { cut_at(body, &cut_points) };

    let whole = decode(&[body]);
    let cut = decode(&pieces);
    assert_eq!(whole, cut, "the decoding depends on where the input is cut ({} pieces)", pieces.len());

    let Decoded { data: decoded, result } = whole;
    assert!(decoded.len() <= body.len());
    if let Ok((consumed, done)) = result {
        assert!(consumed <= body.len());
        // Only a finished body leaves input unread (it belongs to the next message).
        assert!(consumed == body.len() || done);
    }

    let mut encoded = Vec::new();
    encode_chunk(&decoded, &mut encoded);
    encoded.extend_from_slice(LAST_CHUNK);
    let again = decode(&[&encoded]);
    assert_eq!(again, Decoded { data: decoded, result: Ok((encoded.len(), true)) }, "encode then decode");
});

#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    data: Vec<u8>,
    /// Bytes consumed and whether the body is complete, or the error.
    result: Result<(usize, bool), ChunkedError>,
}

/// Feeds each piece in turn, as reads arrive; stops at the first error.
fn decode(pieces: &[&[u8]]) -> Decoded {
    let mut decoder = ChunkedDecoder::new();
    let mut data = Vec::new();
    let mut consumed = 0;
    for piece in pieces {
        let was_done = decoder.is_done();
        match decoder.feed(piece, &mut data) {
            Ok(n) => {
                assert!(n <= piece.len());
                assert!(n == piece.len() || decoder.is_done(), "stopped early without finishing");
                assert!(!was_done || n == 0, "consumed input after the end");
                consumed += n;
            }
            Err(e) => return Decoded { data, result: Err(e) },
        }
    }
    Decoded { data, result: Ok((consumed, decoder.is_done())) }
}

/// `body` cut at the given offsets (each taken modulo the length, sorted, duplicates giving
/// empty pieces).
fn cut_at<'b>(body: &'b [u8], cut_points: &[u16]) -> Vec<&'b [u8]> {
    let mut offsets: Vec<usize> = cut_points.iter().map(|&c| usize::from(c) % (body.len() + 1)).collect();
    offsets.sort_unstable();
    let mut pieces = Vec::with_capacity(offsets.len() + 1);
    let mut start = 0;
    for end in offsets {
        pieces.push(&body[start..end]);
        start = end;
    }
    pieces.push(&body[start..]);
    pieces
}
