//! What the telemetry poller reads, already parsed: the frontend stats rows (per provider
//! endpoint: quantization, context, data policy, prices, p50 throughput and sample size,
//! geography) and the endpoints API's uptime by tag.

/// Where a provider's organisation is based and serves from (`provider_info`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Geography {
    pub headquarters: Option<String>,
    /// `None`: not reported (unknown); empty entries count as unknown too.
    pub datacenters: Option<Vec<String>>,
}

/// One provider endpoint of the frontend stats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatsRow {
    /// `provider_slug`, e.g. `novita/fp8` (organisation, a slash, the endpoint).
    pub slug: String,
    pub quantization: Option<String>,
    pub context_length: Option<u64>,
    /// `data_policy.retainsPrompts`: zero data retention means exactly `Some(false)`.
    pub retains_prompts: Option<bool>,
    /// Tokens per second, median.
    pub p50_throughput: Option<f64>,
    /// `stats.request_count`: the sample size.
    pub request_count: Option<u64>,
    /// US dollars per prompt token (`pricing.prompt`).
    pub prompt_price: Option<f64>,
    /// US dollars per completion token.
    pub completion_price: Option<f64>,
    pub geography: Option<Geography>,
}

/// One endpoint of the endpoints API: its tag (the stats' `provider_slug`) and uptime.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UptimeRow {
    pub tag: String,
    /// Percent over the last five minutes.
    pub uptime_last_5m: Option<f64>,
}

/// The organisation of a provider slug (`novita/fp8` → `novita`).
pub fn base_slug(slug: &str) -> &str {
    slug.split_once('/').map_or(slug, |(base, _)| base)
}
