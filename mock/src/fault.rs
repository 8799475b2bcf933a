//! Fault specifications (`status:429`, `reset`, `hang`, `abort-after:3`) and the deterministic
//! choice of which requests a configured fault hits.

use std::fmt;
use std::str::FromStr;

/// A misbehaviour the mock injects instead of (or in the middle of) a normal answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this status and an OpenAI-shaped error body, with `Retry-After` when given.
    Status { status: u16, retry_after: Option<u32> },
    /// Close the connection without any response, with `SO_LINGER` 0 so the peer sees a reset.
    Reset,
    /// Read the request and never answer; the connection stays open until the peer closes it.
    Hang,
    /// Streams: send the head and this many events, then close without the terminating chunk.
    /// Non-streaming answers: send the head and half the body, then close.
    AbortAfter { chunks: u32 },
    /// Azure OpenAI's content filter. On Azure's routes: the prompt's 400 with `"code":
    /// "content_filter"`, or with `completion` the answer's: a 200 whose `finish_reason` is
    /// `content_filter` (a stream ends with it). Other OpenAI-shaped routes answer the prompt's
    /// 400 either way, Anthropic's routes a 400 `invalid_request_error`.
    ContentFilter { completion: bool },
}

/// The lowest and highest status a `status:S` fault accepts: it injects errors.
const INJECTABLE_STATUS: std::ops::RangeInclusive<u16> = 400..=599;

/// Why a fault specification could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFaultError {
    spec: String,
    reason: &'static str,
}

impl fmt::Display for ParseFaultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad fault {:?}: {} (expected status:S, status:S:retry-after=N, reset, hang, abort-after:K, content_filter or \
             content_filter:completion)",
            self.spec, self.reason
        )
    }
}

impl std::error::Error for ParseFaultError {}

impl FromStr for Fault {
    type Err = ParseFaultError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let error = |reason| ParseFaultError { spec: spec.to_owned(), reason };
        let trimmed = spec.trim();
        match trimmed {
            "reset" => return Ok(Fault::Reset),
            "hang" => return Ok(Fault::Hang),
            "content_filter" => return Ok(Fault::ContentFilter { completion: false }),
            "content_filter:completion" => return Ok(Fault::ContentFilter { completion: true }),
            _ => {}
        }
        if let Some(count) = trimmed.strip_prefix("abort-after:") {
            let chunks = count.parse().map_err(|_| error("abort-after needs a non-negative event count"))?;
            return Ok(Fault::AbortAfter { chunks });
        }
        let Some(rest) = trimmed.strip_prefix("status:") else {
            return Err(error("unknown fault kind"));
        };
        let (status_text, retry_text) = match rest.split_once(':') {
            Some((status, option)) => (status, Some(option)),
            None => (rest, None),
        };
        let status: u16 = status_text.parse().map_err(|_| error("status needs a number"))?;
        if !INJECTABLE_STATUS.contains(&status) {
            return Err(error("status must be between 400 and 599"));
        }
        let retry_after = match retry_text {
            None => None,
            Some(option) => {
                let seconds = option
                    .strip_prefix("retry-after=")
                    .ok_or_else(|| error("the only status option is retry-after=N"))?;
                Some(seconds.parse().map_err(|_| error("retry-after needs whole seconds"))?)
            }
        };
        Ok(Fault::Status { status, retry_after })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Status { status, retry_after: None } => write!(f, "status:{status}"),
            Fault::Status { status, retry_after: Some(seconds) } => write!(f, "status:{status}:retry-after={seconds}"),
            Fault::Reset => f.write_str("reset"),
            Fault::Hang => f.write_str("hang"),
            Fault::AbortAfter { chunks } => write!(f, "abort-after:{chunks}"),
            Fault::ContentFilter { completion: false } => f.write_str("content_filter"),
            Fault::ContentFilter { completion: true } => f.write_str("content_filter:completion"),
        }
    }
}

/// Whether request number `n` (1-based, counted since the fault was configured) is faulted when
/// a fraction `ratio` of requests must be: exactly when `floor(n*ratio)` steps up, so the
/// faulted requests are spread evenly and the sequence is the same on every run.
pub(crate) fn nth_request_is_faulted(n: u64, ratio: f64) -> bool {
    if n == 0 {
        return false;
    }
    let now = (n as f64 * ratio).floor();
    let before = ((n - 1) as f64 * ratio).floor();
    now != before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_spec() {
        assert_eq!("status:429".parse(), Ok(Fault::Status { status: 429, retry_after: None }));
        assert_eq!("status:429:retry-after=3".parse(), Ok(Fault::Status { status: 429, retry_after: Some(3) }));
        assert_eq!("reset".parse(), Ok(Fault::Reset));
        assert_eq!("hang".parse(), Ok(Fault::Hang));
        assert_eq!("abort-after:3".parse(), Ok(Fault::AbortAfter { chunks: 3 }));
        assert_eq!("content_filter".parse(), Ok(Fault::ContentFilter { completion: false }));
        assert_eq!("content_filter:completion".parse(), Ok(Fault::ContentFilter { completion: true }));
    }

    #[test]
    fn display_round_trips() {
        for spec in [
            "status:503",
            "status:429:retry-after=7",
            "reset",
            "hang",
            "abort-after:0",
            "content_filter",
            "content_filter:completion",
        ] {
            let fault: Fault = spec.parse().expect("valid spec");
            assert_eq!(fault.to_string(), spec);
        }
    }

    #[test]
    fn rejects_malformed_specs() {
        for spec in [
            "",
            "status",
            "status:abc",
            "status:200",
            "status:429:retry=3",
            "status:429:retry-after=x",
            "abort-after:-1",
            "explode",
            "content_filter:prompt",
        ] {
            let error = spec.parse::<Fault>().expect_err(spec);
            assert!(error.to_string().contains("bad fault"), "{error}");
        }
    }

    #[test]
    fn ratio_one_faults_every_request_and_zero_none() {
        assert!((1..100).all(|n| nth_request_is_faulted(n, 1.0)));
        assert!((1..100).all(|n| !nth_request_is_faulted(n, 0.0)));
    }

    #[test]
    fn ratio_half_faults_every_second_request() {
        let faulted: Vec<u64> = (1..=10).filter(|&n| nth_request_is_faulted(n, 0.5)).collect();
        assert_eq!(faulted, vec![2, 4, 6, 8, 10]);
    }

    #[test]
    fn ratio_quarter_faults_a_quarter() {
        let count = (1..=400).filter(|&n| nth_request_is_faulted(n, 0.25)).count();
        assert_eq!(count, 100);
    }
}
