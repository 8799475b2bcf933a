//! What latency-based routing learns from finished requests: per deployment, an EWMA of the
//! whole response time (non-streaming requests), of the time to first token (streams), and of
//! the time per output token (both).
//!
//! The average is a plain per-sample EWMA with α = 0.3: the newest sample weighs 30%, the one
//! before 21%, and samples older than the last ~6 weigh together under 12%. LiteLLM averages the
//! last 10 samples; this follows a change about as fast, in 16 bytes and without a list. A
//! time-decayed average (linkerd's peak-EWMA) would also forget a deployment nobody picks, but
//! it needs the clock at every sample; here a quiet deployment keeps its last known latency,
//! as in LiteLLM. The first sample is taken as is, so one slow first answer is not averaged
//! with an imaginary 0.

use std::time::Duration;

/// How much of each new sample enters the average.
pub(crate) const ALPHA: f64 = 0.3;

/// An exponentially weighted moving average of seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Ewma {
    value: f64,
    samples: u32,
}

impl Ewma {
    fn add(&mut self, sample: f64) {
        if !sample.is_finite() || sample < 0.0 {
            return;
        }
        self.value = if self.samples == 0 { sample } else { self.value + ALPHA * (sample - self.value) };
        self.samples = self.samples.saturating_add(1);
    }

    /// The average in seconds; 0 before the first sample.
    pub(crate) fn seconds(&self) -> f64 {
        self.value
    }

    pub(crate) fn has_samples(&self) -> bool {
        self.samples > 0
    }

    fn get(&self) -> Option<Duration> {
        self.has_samples().then(|| Duration::from_secs_f64(self.value))
    }
}

/// One finished request, as the gateway measured it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencySample {
    pub stream: bool,
    /// From sending the request upstream to the end of the response.
    pub total: Duration,
    /// From sending the request to the first output token (streams).
    pub first_token: Option<Duration>,
    /// Output tokens the response reported, if it did.
    pub output_tokens: Option<u64>,
}

/// One deployment's latency averages, local to the shard that measured them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub(crate) total: Ewma,
    pub(crate) first_token: Ewma,
    pub(crate) per_output_token: Ewma,
}

impl Latency {
    /// Adds one request. A non-streaming request's total time enters the total average; a
    /// stream's time to first token enters the first-token average (a stream that ended before
    /// its first token counts its whole time there: that is how long its client waited). With
    /// output tokens, the time after the first token (the whole time without streaming) per
    /// token enters the per-token average.
    pub(crate) fn record(&mut self, sample: LatencySample) {
        let total = sample.total.as_secs_f64();
        let before_tokens = if sample.stream {
            let first = sample.first_token.map_or(total, |d| d.as_secs_f64());
            self.first_token.add(first);
            sample.first_token.map_or(total, |d| d.as_secs_f64())
        } else {
            self.total.add(total);
            0.0
        };
        if let Some(tokens) = sample.output_tokens.filter(|&t| t > 0) {
            self.per_output_token.add((total - before_tokens).max(0.0) / tokens as f64);
        }
    }

    /// The seconds latency-based routing compares for a request that does (or does not)
    /// stream: the first-token average for a stream once there is one, else the total average;
    /// 0 before any sample, so that an untried deployment is tried first (as in LiteLLM).
    pub(crate) fn routing_seconds(&self, stream: bool) -> (f64, LatencyMeasure) {
        if stream && self.first_token.has_samples() {
            (self.first_token.seconds(), LatencyMeasure::TimeToFirstToken)
        } else if self.total.has_samples() {
            (self.total.seconds(), LatencyMeasure::Total)
        } else if self.first_token.has_samples() {
            // Only streams so far: their first-token time is the best estimate there is.
            (self.first_token.seconds(), LatencyMeasure::TimeToFirstToken)
        } else {
            (0.0, LatencyMeasure::Untried)
        }
    }

    /// The average response time of non-streaming requests.
    pub fn total(&self) -> Option<Duration> {
        self.total.get()
    }

    /// The average time to first token of streams.
    pub fn time_to_first_token(&self) -> Option<Duration> {
        self.first_token.get()
    }

    /// The average time per output token.
    pub fn time_per_output_token(&self) -> Option<Duration> {
        self.per_output_token.get()
    }
}

/// Which average latency-based routing compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LatencyMeasure {
    /// The response time of non-streaming requests.
    Total,
    /// The time to first token of streams.
    TimeToFirstToken,
    /// No sample yet: counts as 0, so that it is tried.
    Untried,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn plain(total: Duration) -> LatencySample {
        LatencySample { stream: false, total, first_token: None, output_tokens: None }
    }

    #[test]
    fn the_first_sample_is_taken_then_each_moves_the_average_by_alpha() {
        let mut l = Latency::default();
        assert_eq!(l.routing_seconds(false), (0.0, LatencyMeasure::Untried));
        l.record(plain(ms(100)));
        assert_eq!(l.total(), Some(ms(100)));
        l.record(plain(ms(200)));
        // 100 + 0.3 × (200 − 100)
        let (secs, measure) = l.routing_seconds(false);
        assert!((secs - 0.130).abs() < 1e-9, "{secs}");
        assert_eq!(measure, LatencyMeasure::Total);
    }

    #[test]
    fn streams_feed_the_first_token_average_and_per_token_time() {
        let mut l = Latency::default();
        l.record(LatencySample { stream: true, total: ms(1100), first_token: Some(ms(100)), output_tokens: Some(100) });
        assert_eq!(l.total(), None);
        assert_eq!(l.time_to_first_token(), Some(ms(100)));
        assert_eq!(l.time_per_output_token(), Some(ms(10)));
        // A stream compares first-token times; a plain request with no plain sample yet
        // falls back to them too.
        assert_eq!(l.routing_seconds(true).1, LatencyMeasure::TimeToFirstToken);
        assert_eq!(l.routing_seconds(false).1, LatencyMeasure::TimeToFirstToken);
        l.record(plain(ms(900)));
        assert_eq!(l.routing_seconds(false), (0.9, LatencyMeasure::Total));
        assert_eq!(l.routing_seconds(true), (0.1, LatencyMeasure::TimeToFirstToken));
    }

    #[test]
    fn a_stream_without_a_first_token_counts_its_whole_time() {
        let mut l = Latency::default();
        l.record(LatencySample { stream: true, total: ms(300), first_token: None, output_tokens: Some(0) });
        assert_eq!(l.time_to_first_token(), Some(ms(300)));
        assert_eq!(l.time_per_output_token(), None);
    }
}
