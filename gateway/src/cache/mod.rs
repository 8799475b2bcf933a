//! The response cache (issue 35, docs/operations.md "Caching"): LiteLLM's
//! `litellm_settings.cache: true`, in this instance's memory (`local`) or shared by every
//! instance through the cluster's Redis (`redis`).
//!
//! A request to a cached surface is looked up after it is authenticated and before any router
//! runs, so a hit needs no healthy deployment ([`look`]). A miss carries what the client is sent
//! through a tee ([`keep::Keep`]) and stores it once the answer ended well — whole, or a stream
//! that ended as its API ends one ([`Miss::store`]). A hit is answered as it was first sent
//! ([`hit`]). Every answer says `x-pointwork-cache: hit|miss|bypass` and the key's digest.
//!
//! Without a cache configured none of this runs: `Routes::cache` is `None`.

pub(crate) mod admin;
pub(crate) mod controls;
pub(crate) mod counts;
pub(crate) mod entry;
pub(crate) mod hit;
pub(crate) mod keep;
pub(crate) mod key;
pub(crate) mod local;
pub(crate) mod look;
pub(crate) mod redis;
pub(crate) mod routes;

pub(crate) use look::{look, Looked, Miss};

/// The response header saying what the cache did: `hit`, `miss` or `bypass`.
pub(crate) const HEADER_CACHE: &str = "x-pointwork-cache";
/// The response header carrying the request's key digest (64 hex digits).
pub(crate) const HEADER_CACHE_KEY: &str = "x-pointwork-cache-key";
/// LiteLLM's header carrying the key of a hit.
pub(crate) const HEADER_LITELLM_CACHE_KEY: &str = "x-litellm-cache-key";
