//! A hit's answer: the body as it was first sent — a whole JSON body with its length, or a
//! stream's events, chunked, ending as the original did — with the cache's headers.

use std::time::Duration;

use super::look::Hit;
use super::{HEADER_CACHE, HEADER_CACHE_KEY, HEADER_LITELLM_CACHE_KEY};
use crate::http::chunked::{encode_chunk, LAST_CHUNK};
use crate::http::write;
use crate::request::write_overhead;
use crate::tcp_or_tls::ClientConn;

/// What writing a hit did.
pub(crate) struct Answered {
    pub(crate) bytes_out: u64,
    /// The client took it all.
    pub(crate) ok: bool,
}

/// Writes `hit` to `client`; `overhead`: the gateway's time so far.
pub(crate) async fn answer(client: &mut ClientConn, keep_alive: bool, hit: &Hit, overhead: Duration) -> Answered {
    let body = &hit.entry.body;
    let mut out = Vec::with_capacity(body.len() + 512);
    write::status_line(&mut out, 200);
    if hit.entry.stream {
        write::header(&mut out, "content-type", b"text/event-stream");
        write::header(&mut out, "cache-control", b"no-cache");
        write::header(&mut out, "transfer-encoding", b"chunked");
    } else {
        write::header(&mut out, "content-type", b"application/json");
        write::header_decimal(&mut out, "content-length", body.len() as u64);
    }
    write::header(&mut out, HEADER_CACHE, b"hit");
    write::header(&mut out, HEADER_CACHE_KEY, hit.hex.as_bytes());
    write::header(&mut out, HEADER_LITELLM_CACHE_KEY, hit.litellm_key.as_bytes());
    write_overhead(&mut out, overhead);
    if !keep_alive {
        write::header(&mut out, "connection", b"close");
    }
    write::end_head(&mut out);
    if hit.entry.stream {
        encode_chunk(body, &mut out);
        out.extend_from_slice(LAST_CHUNK);
    } else {
        out.extend_from_slice(body);
    }
    let bytes_out = out.len() as u64;
    let (res, _) = client.write_all(out).await;
    Answered { bytes_out, ok: res.is_ok() }
}
