//! `GET /spend/logs`: `LiteLLM_SpendLogs` rows, newest first (at most 10 000, LiteLLM's cap),
//! or — when both `start_date` and `end_date` are given and `summarize` is not false — one
//! entry per day: `{<api_key>: spend…, "startTime": "YYYY-MM-DD", "spend", "users", "models"}`.

use serde_json::{json, Map, Value};

use super::common::{bad_request, floats, row_json, token_of, Answer, Query};
use super::sql::Params;
use super::{Ctx, ManageCall, ManageReply};

/// `SPEND_LOGS_PAGINATION_COUNT_CAP`.
const CAP: i64 = 10_000;

/// A `YYYY-MM-DD` date (PostgreSQL refuses what the shape lets through, e.g. `2025-02-30`).
fn date(q: &Query, name: &str) -> Result<Option<String>, ManageReply> {
    let Some(text) = q.get(name) else { return Ok(None) };
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return Err(bad_request(&format!("{name} must be a date as YYYY-MM-DD, got '{text}'"), Some(name)));
    }
    Ok(Some(text.to_string()))
}

pub(crate) async fn logs(cx: &Ctx, call: &ManageCall) -> Answer {
    let q = Query::parse(&call.query);
    let (start, end) = (date(&q, "start_date")?, date(&q, "end_date")?);
    let summarize = q.bool("summarize", true)?;
    let mut params = Params::default();
    let mut filters = vec!["true".to_string()];
    if let Some(key) = q.get("api_key") {
        filters.push(format!("s.api_key = {}", params.text(token_of(key))));
    }
    if let Some(user) = q.get("user_id") {
        filters.push(format!("s.\"user\" = {}", params.text(user)));
    }
    if let Some(id) = q.get("request_id") {
        let id = params.text(id);
        filters.push(format!("(s.request_id = {id} OR s.litellm_call_id = {id})"));
    }
    let days = match (start, end) {
        (Some(start), Some(end)) => {
            // The end date's whole day counts (LiteLLM compares with its midnight).
            let (s, e) = (params.text(start), params.text(end.clone()));
            filters.push(format!("s.\"startTime\" >= {s}::date AND s.\"startTime\" < {e}::date + 1"));
            Some(end)
        }
        _ => None,
    };
    let filter = filters.join(" AND ");
    match days {
        Some(end) if summarize => summary(cx, &mut params, &filter, &end).await,
        _ => {
            let cap = params.int(CAP);
            let sql = format!(
                "SELECT to_jsonb(s) FROM \"LiteLLM_SpendLogs\" s WHERE {filter} ORDER BY s.\"startTime\" DESC LIMIT {cap}"
            );
            let rows = params.query(&cx.client, &sql).await?;
            Ok(Value::Array(rows.iter().map(|r| row_json(r.get(0))).collect()))
        }
    }
}

/// Per day, spend by key (top-level fields named by the key's hash), by user and by model;
/// days after the last one with spend, up to `end`, appear with zero spend (as in LiteLLM).
async fn summary(cx: &Ctx, params: &mut Params, filter: &str, end: &str) -> Answer {
    let end = params.text(end);
    let sql = format!(
        "WITH g AS (SELECT date_trunc('day', s.\"startTime\")::date AS day, s.api_key, s.\"user\", s.model, sum(s.spend) AS spend \
         FROM \"LiteLLM_SpendLogs\" s WHERE {filter} GROUP BY 1, 2, 3, 4), \
         d AS (SELECT day, to_char(day, 'YYYY-MM-DD') AS label, sum(spend) AS spend, \
           (SELECT jsonb_object_agg(k, v) FROM (SELECT api_key k, sum(spend) v FROM g g2 WHERE g2.day = g.day AND api_key IS NOT NULL GROUP BY 1) x) AS keys, \
           (SELECT jsonb_object_agg(COALESCE(k, ''), v) FROM (SELECT \"user\" k, sum(spend) v FROM g g2 WHERE g2.day = g.day GROUP BY 1) x) AS users, \
           (SELECT jsonb_object_agg(k, v) FROM (SELECT model k, sum(spend) v FROM g g2 WHERE g2.day = g.day GROUP BY 1) x) AS models \
           FROM g GROUP BY day) \
         SELECT label, spend, keys, users, models FROM d \
         UNION ALL SELECT to_char(p, 'YYYY-MM-DD'), 0, NULL, NULL, NULL FROM \
           generate_series((SELECT max(day) + 1 FROM d)::timestamp, {end}::date::timestamp, interval '1 day') p \
         ORDER BY 1"
    );
    let rows = params.query(&cx.client, &sql).await?;
    let days = rows.iter().map(|r| {
        let keys = r.get::<_, Option<Value>>(2).map(floats);
        let mut item: Map<String, Value> = keys.and_then(|v| v.as_object().cloned()).unwrap_or_default();
        item.insert("startTime".into(), json!(r.get::<_, String>(0)));
        item.insert("spend".into(), json!(r.get::<_, f64>(1)));
        item.insert("users".into(), r.get::<_, Option<Value>>(3).map(floats).unwrap_or(json!({})));
        item.insert("models".into(), r.get::<_, Option<Value>>(4).map(floats).unwrap_or(json!({})));
        Value::Object(item)
    });
    Ok(Value::Array(days.collect()))
}
