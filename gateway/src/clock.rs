//! The wall clock, where a Unix time is what counts: virtual keys' and policies' limits, the
//! pareto telemetry's poll times and cache entries. The routing itself runs on `Instant`s.

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix seconds, the clock virtual keys' limits count in.
pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Unix milliseconds: the live view's clock.
pub fn unix_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Unix seconds to the microsecond: the clock of poll times, cache entries and the allow-list.
pub fn unix_seconds() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}
