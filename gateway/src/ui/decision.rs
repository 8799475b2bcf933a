//! `GET /ui/api/decision/{seq}`: one noted decision, whole — what the list shows, with each
//! candidate's upstream model and API base, what decided before the pick and the complexity router's record.

use serde_json::{json, Value};

use crate::errors::openai_error;
use crate::respond::Reply;
use crate::shard::Shard;

pub(super) fn serve(shard: &Shard, seq: u64) -> Reply {
    let Some(noted) = shard.hub.ui.decision(seq) else {
        let message = format!("decision {seq} is not kept (the last {} are)", super::board::DECISIONS_MAX);
        return Reply::json(404, openai_error(404, &message, None));
    };
    let mut out = super::live::decision_json(&noted);
    for (json, c) in out["candidates"].as_array_mut().into_iter().flatten().zip(&noted.candidates) {
        json["upstream_model"] = json!(c.upstream_model);
        json["api_base"] = json!(c.api_base);
    }
    out["winner_detail"] = json!({"id": noted.winner, "cause": noted.cause, "route": noted.route_reason});
    out["before_pick"] = json!(noted.before_pick);
    out["routing_decision"] =
        noted.routing_decision.as_deref().and_then(|r| serde_json::from_str::<Value>(r).ok()).unwrap_or(Value::Null);
    Reply::json(200, serde_json::to_vec(&out).unwrap_or_default())
}
