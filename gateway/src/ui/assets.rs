//! The page's files, embedded at build time (cargo rebuilds when one changes). They reach
//! nothing but this gateway: the content security policy says so to the browser too.

use crate::respond::Reply;

/// One embedded file: the path after `/ui`, its type, its bytes.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const ASSETS: &[Asset] = &[
    Asset { path: "", content_type: "text/html; charset=utf-8", bytes: include_bytes!("assets/index.html") },
    Asset { path: "/", content_type: "text/html; charset=utf-8", bytes: include_bytes!("assets/index.html") },
    Asset { path: "/app.js", content_type: "text/javascript; charset=utf-8", bytes: include_bytes!("assets/app.js") },
    Asset {
        path: "/views.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/views.js"),
    },
    Asset {
        path: "/charts.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/charts.js"),
    },
    Asset { path: "/app.css", content_type: "text/css; charset=utf-8", bytes: include_bytes!("assets/app.css") },
    Asset {
        path: "/vendor/uPlot.iife.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/vendor/uPlot.iife.min.js"),
    },
    Asset {
        path: "/vendor/uPlot.min.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("assets/vendor/uPlot.min.css"),
    },
];

/// Every file comes from here and speaks only to here; no frame may hold the page.
const POLICY: &[u8] = b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The file at `rest`, if there is one (`If-None-Match` with its tag: 304).
pub(super) fn serve(rest: &str, raw_head: &[u8]) -> Option<Reply> {
    let asset = ASSETS.iter().find(|a| a.path == rest)?;
    let tag = etag(asset.bytes);
    let fresh = crate::mcp::headers::find(raw_head, "if-none-match").is_some_and(|v| v == tag.as_bytes());
    let mut reply = if fresh { Reply::json(304, Vec::new()) } else { Reply::json(200, asset.bytes.to_vec()) };
    reply.content_type = asset.content_type;
    reply.header("etag", tag.as_bytes());
    reply.header("cache-control", b"no-cache");
    reply.header("content-security-policy", POLICY);
    reply.header("x-content-type-options", b"nosniff");
    reply.header("referrer-policy", b"no-referrer");
    reply.header("x-frame-options", b"DENY");
    Some(reply)
}

/// A tag that changes with the bytes (FNV-1a, quoted as HTTP wants it).
fn etag(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("\"{hash:016x}\"")
}

#[cfg(test)]
pub(super) fn all() -> impl Iterator<Item = (&'static str, &'static [u8])> {
    ASSETS.iter().map(|a| (a.path, a.bytes))
}
