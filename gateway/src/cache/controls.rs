//! What a request says about the cache (helper: controls): the body's `cache` object
//! (LiteLLM's `no-cache`, `no-store`, `ttl`, `s-maxage` / `s-max-age`, `namespace`,
//! `use-cache`), the `Cache-Control` header, and what the caller's key allows
//! (`allowed_cache_controls`).

use std::time::Duration;

use serde_json::{Map, Value};

/// The request's cache controls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Controls {
    /// Do not read: the answer comes from upstream (and is stored, unless `no_store`).
    pub(crate) no_cache: bool,
    /// Do not store the answer.
    pub(crate) no_store: bool,
    /// The entry's time to live, instead of the config's.
    pub(crate) ttl: Option<Duration>,
    /// Only an entry younger than this is a hit.
    pub(crate) max_age: Option<Duration>,
    /// The namespace, instead of the config's.
    pub(crate) namespace: Option<String>,
    /// `use-cache: true`: under `mode: default_off`, this request is cached.
    pub(crate) use_cache: bool,
}

/// Why a request's controls are refused: the status (400 for a bad value, 403 for a control
/// its key may not set) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) status: u16,
    pub(crate) message: String,
}

/// Reads the controls of a request: its body, its head (`raw_head`, for `Cache-Control`), and
/// the controls its key may set (`None` or empty: any).
pub(crate) fn read(body: &Map<String, Value>, raw_head: &[u8], allowed: Option<&[String]>) -> Result<Controls, Refused> {
    let _ = (body, raw_head, allowed);
    Ok(Controls::default())
}
