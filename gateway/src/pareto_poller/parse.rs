//! The three OpenRouter documents the poller reads, as typed rows: the model list (each model's
//! `canonical_slug`, the stats API's permaslug), a model's endpoints (uptime by tag) and the
//! frontend stats (per provider endpoint: quantization, context, data policy, prices, p50
//! throughput and sample size, geography). Only the fields the walk reads are looked at.
//!
//! A document that is not JSON or has no `data` is an error (the poll fails); a row that does
//! not have the shape is skipped and counted.

use std::collections::HashMap;

use pointwork_core::pareto::{Geography, StatsRow, UptimeRow};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A document's rows and how many were skipped as malformed.
#[derive(Debug, PartialEq)]
pub struct Parsed<T> {
    pub rows: T,
    pub skipped: usize,
}

fn document<'a, T: Deserialize<'a>>(what: &str, body: &'a [u8]) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| format!("{what}: not the expected JSON document: {e}"))
}

/// Each row of `raw` that parses as `T`, and how many did not.
fn rows<'a, T: Deserialize<'a>>(raw: &[&'a RawValue]) -> (Vec<T>, usize) {
    let mut ok = Vec::with_capacity(raw.len());
    for row in raw {
        if let Ok(row) = serde_json::from_str::<T>(row.get()) {
            ok.push(row);
        }
    }
    let skipped = raw.len() - ok.len();
    (ok, skipped)
}

#[derive(Deserialize)]
struct ListDoc<'a> {
    #[serde(borrow)]
    data: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
    #[serde(default)]
    canonical_slug: Option<String>,
}

/// `GET /api/v1/models`: each model id's canonical slug (models without one are left out).
pub fn models(body: &[u8]) -> Result<Parsed<HashMap<String, String>>, String> {
    let doc: ListDoc = document("the model list", body)?;
    let (entries, skipped) = rows::<ModelEntry>(&doc.data);
    let rows = entries.into_iter().filter_map(|m| Some((m.id, m.canonical_slug.filter(|s| !s.is_empty())?))).collect();
    Ok(Parsed { rows, skipped })
}

#[derive(Deserialize)]
struct EndpointsDoc<'a> {
    #[serde(borrow)]
    data: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct EndpointsBody<'a> {
    #[serde(borrow, default)]
    endpoints: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct EndpointEntry {
    tag: String,
    #[serde(default, deserialize_with = "lenient_f64")]
    uptime_last_5m: Option<f64>,
}

/// `GET /api/v1/models/{author}/{slug}/endpoints`: each endpoint's tag and 5-minute uptime.
pub fn endpoints(body: &[u8]) -> Result<Parsed<Vec<UptimeRow>>, String> {
    let doc: EndpointsDoc = document("the endpoints list", body)?;
    // `data` is an object (serde would take a struct from an array too) or null.
    let raw = match doc.data.map(RawValue::get).filter(|d| *d != "null") {
        None => Vec::new(),
        Some(data) if data.starts_with('{') => {
            document::<EndpointsBody>("the endpoints list", data.as_bytes())?.endpoints
        }
        Some(_) => return Err("the endpoints list: `data` is not an object".to_string()),
    };
    let (entries, skipped) = rows::<EndpointEntry>(&raw);
    let rows = entries.into_iter().map(|e| UptimeRow { tag: e.tag, uptime_last_5m: e.uptime_last_5m }).collect();
    Ok(Parsed { rows, skipped })
}

#[derive(Deserialize)]
struct StatsEntry {
    provider_slug: String,
    #[serde(default)]
    quantization: Option<String>,
    #[serde(default, deserialize_with = "lenient_u64")]
    context_length: Option<u64>,
    #[serde(default)]
    data_policy: Option<DataPolicy>,
    #[serde(default)]
    pricing: Option<Pricing>,
    #[serde(default)]
    stats: Option<Sample>,
    #[serde(default)]
    provider_info: Option<ProviderInfo>,
}

#[derive(Deserialize)]
struct DataPolicy {
    #[serde(rename = "retainsPrompts", default)]
    retains_prompts: Option<bool>,
}

#[derive(Deserialize)]
struct Pricing {
    #[serde(default, deserialize_with = "lenient_f64")]
    prompt: Option<f64>,
    #[serde(default, deserialize_with = "lenient_f64")]
    completion: Option<f64>,
}

#[derive(Deserialize)]
struct Sample {
    #[serde(default, deserialize_with = "lenient_f64")]
    p50_throughput: Option<f64>,
    #[serde(default, deserialize_with = "lenient_u64")]
    request_count: Option<u64>,
}

#[derive(Deserialize)]
struct ProviderInfo {
    #[serde(default)]
    headquarters: Option<String>,
    #[serde(default)]
    datacenters: Option<Vec<String>>,
}

/// `GET /api/frontend/v1/stats/endpoint?permaslug=…`: one row per provider endpoint.
pub fn stats(body: &[u8]) -> Result<Parsed<Vec<StatsRow>>, String> {
    let doc: ListDoc = document("the endpoint stats", body)?;
    let (entries, mut skipped) = rows::<StatsEntry>(&doc.data);
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if e.provider_slug.is_empty() {
            skipped += 1;
            continue;
        }
        let sample = e.stats;
        out.push(StatsRow {
            slug: e.provider_slug,
            quantization: e.quantization,
            context_length: e.context_length,
            retains_prompts: e.data_policy.and_then(|d| d.retains_prompts),
            p50_throughput: sample.as_ref().and_then(|s| s.p50_throughput),
            request_count: sample.as_ref().and_then(|s| s.request_count),
            prompt_price: e.pricing.as_ref().and_then(|p| p.prompt),
            completion_price: e.pricing.as_ref().and_then(|p| p.completion),
            geography: e
                .provider_info
                .map(|info| Geography { headquarters: info.headquarters, datacenters: info.datacenters }),
        });
    }
    Ok(Parsed { rows: out, skipped })
}

/// A number the API sends as a JSON number or a decimal string (prices are strings).
#[derive(Deserialize)]
#[serde(untagged)]
enum Numeric {
    Number(f64),
    Text(String),
}

/// A number, a numeric string, or null. A string that is no number is `None` (the filters then
/// drop the row with their own reason); any other type makes the row malformed.
fn lenient_f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match Option::<Numeric>::deserialize(d)? {
        None => None,
        Some(Numeric::Number(n)) => Some(n),
        Some(Numeric::Text(s)) => s.trim().parse::<f64>().ok(),
    })
}

/// [`lenient_f64`] for counts: a whole, non-negative number.
fn lenient_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match lenient_f64(d)? {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= u64::MAX as f64 => Ok(Some(n as u64)),
        Some(n) => Err(de::Error::custom(format!("{n} is not a count"))),
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
