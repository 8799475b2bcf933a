//! How the cluster's threads reach Redis: one connection with short timeouts, a doubling
//! backoff between attempts, and their lines on stderr.

use std::time::Duration;

/// How long connecting, and each command, may take before Redis counts as out of reach.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest wait between two attempts to reach Redis again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Waits before the next attempt to reach Redis: doubling from 100 ms up to [`MAX_BACKOFF`].
pub(crate) fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(Duration::from_millis(100), MAX_BACKOFF)
}

pub(crate) fn connect(client: &redis::Client) -> redis::RedisResult<redis::Connection> {
    let con = client.get_connection_with_timeout(COMMAND_TIMEOUT)?;
    con.set_read_timeout(Some(COMMAND_TIMEOUT))?;
    con.set_write_timeout(Some(COMMAND_TIMEOUT))?;
    Ok(con)
}

pub(crate) fn log(line: &str) {
    eprintln!("pointwork: cluster: {line}");
}
