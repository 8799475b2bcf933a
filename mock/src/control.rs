//! `POST /mock/control`: changing a running mock's behaviour, as a pure function over the
//! current behaviour and the request body.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::fault::Fault;
use crate::options::Behaviour;

/// A control request applied to the current behaviour.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ControlChange {
    pub behaviour: Behaviour,
    /// The fault or its ratio was given: the fault sequence starts again from request 1.
    pub restarts_fault_sequence: bool,
}

/// Reads `{"fault": "status:500" | null, "fault_ratio": 1.0, "latency_ms": 0, "chunks": 8,
/// "chunk_delay_ms": 0, "reply": "text" | null}`; absent fields keep their value, unknown fields
/// are refused.
pub(crate) fn apply_control(current: Behaviour, body: &[u8]) -> Result<ControlChange, String> {
    let fields: Map<String, Value> = serde_json::from_slice(body).map_err(|error| format!("control body: {error}"))?;
    let mut behaviour = current;
    let mut restarts_fault_sequence = false;
    for (key, value) in &fields {
        match key.as_str() {
            "fault" => {
                behaviour.fault = match value {
                    Value::Null => None,
                    Value::String(spec) => Some(spec.parse::<Fault>().map_err(|error| error.to_string())?),
                    _ => return Err("fault must be a fault string or null".to_owned()),
                };
                restarts_fault_sequence = true;
            }
            "fault_ratio" => {
                let ratio = value
                    .as_f64()
                    .filter(|ratio| (0.0..=1.0).contains(ratio))
                    .ok_or("fault_ratio must be a number between 0 and 1")?;
                behaviour.fault_ratio = ratio;
                restarts_fault_sequence = true;
            }
            "latency_ms" => behaviour.latency = Duration::from_millis(millis(key, value)?),
            "chunk_delay_ms" => behaviour.chunk_delay = Duration::from_millis(millis(key, value)?),
            "chunks" => {
                behaviour.chunks = value
                    .as_u64()
                    .and_then(|count| u32::try_from(count).ok())
                    .filter(|&count| count >= 1)
                    .ok_or("chunks must be a whole number of at least 1")?;
            }
            "reply" => {
                behaviour.reply = match value {
                    Value::Null => None,
                    Value::String(text) => Some(text.as_str().into()),
                    _ => return Err("reply must be a string or null".to_owned()),
                };
            }
            other => {
                return Err(format!(
                    "unknown control field {other:?} (known: fault, fault_ratio, latency_ms, \
                     chunks, chunk_delay_ms, reply)"
                ))
            }
        }
    }
    Ok(ControlChange { behaviour, restarts_fault_sequence })
}

fn millis(key: &str, value: &Value) -> Result<u64, String> {
    value.as_u64().ok_or_else(|| format!("{key} must be a whole number of milliseconds"))
}

/// The behaviour in the shape `POST /mock/control` accepts.
pub(crate) fn behaviour_json(behaviour: &Behaviour) -> Vec<u8> {
    serde_json::json!({
        "fault": behaviour.fault.map(|fault| fault.to_string()),
        "fault_ratio": behaviour.fault_ratio,
        "latency_ms": behaviour.latency.as_millis() as u64,
        "chunks": behaviour.chunks,
        "chunk_delay_ms": behaviour.chunk_delay.as_millis() as u64,
        "reply": behaviour.reply.as_deref(),
    })
    .to_string()
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MockOptions;

    fn initial() -> Behaviour {
        MockOptions::default().behaviour()
    }

    #[test]
    fn sets_given_fields_and_keeps_the_rest() {
        let change = apply_control(initial(), br#"{"fault":"status:500","latency_ms":15}"#).expect("valid control");
        assert_eq!(change.behaviour.fault, Some(Fault::Status { status: 500, retry_after: None }));
        assert_eq!(change.behaviour.latency, Duration::from_millis(15));
        assert_eq!(change.behaviour.chunks, 8);
        assert!(change.restarts_fault_sequence);
    }

    #[test]
    fn null_fault_clears_it() {
        let faulty = Behaviour { fault: Some(Fault::Reset), ..initial() };
        let change = apply_control(faulty, br#"{"fault":null}"#).expect("valid control");
        assert_eq!(change.behaviour.fault, None);
    }

    #[test]
    fn latency_alone_keeps_the_fault_sequence() {
        let change = apply_control(initial(), br#"{"chunk_delay_ms":3}"#).expect("valid");
        assert!(!change.restarts_fault_sequence);
    }

    #[test]
    fn refuses_bad_values_and_unknown_fields() {
        for body in [
            r#"{"fault":"explode"}"#,
            r#"{"fault":3}"#,
            r#"{"fault_ratio":2}"#,
            r#"{"chunks":0}"#,
            r#"{"latency_ms":-1}"#,
            r#"{"latencyms":1}"#,
            r#"[]"#,
        ] {
            assert!(apply_control(initial(), body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn behaviour_json_round_trips_through_control() {
        let behaviour = Behaviour {
            fault: Some(Fault::AbortAfter { chunks: 2 }),
            fault_ratio: 0.5,
            latency: Duration::from_millis(4),
            chunks: 3,
            chunk_delay: Duration::from_millis(9),
            reply: Some("{\"label\": \"complex\"}\nüñï".into()),
        };
        let change = apply_control(initial(), &behaviour_json(&behaviour)).expect("valid");
        assert_eq!(change.behaviour, behaviour);
    }

    #[test]
    fn reply_is_set_kept_and_cleared() {
        let change = apply_control(initial(), br#"{"reply":"COMPLEX"}"#).expect("valid");
        assert_eq!(change.behaviour.reply.as_deref(), Some("COMPLEX"));
        assert!(!change.restarts_fault_sequence);
        let kept = apply_control(change.behaviour.clone(), br#"{"latency_ms":2}"#).expect("valid");
        assert_eq!(kept.behaviour.reply.as_deref(), Some("COMPLEX"));
        let empty = apply_control(initial(), br#"{"reply":""}"#).expect("valid");
        assert_eq!(empty.behaviour.reply.as_deref(), Some(""));
        let cleared = apply_control(kept.behaviour, br#"{"reply":null}"#).expect("valid");
        assert_eq!(cleared.behaviour.reply, None);
        for body in [r#"{"reply":3}"#, r#"{"reply":["a"]}"#, r#"{"reply":{"text":"a"}}"#] {
            assert_eq!(apply_control(initial(), body.as_bytes()), Err("reply must be a string or null".to_owned()));
        }
    }

    #[test]
    fn behaviour_json_reports_the_reply() {
        let json: Value = serde_json::from_slice(&behaviour_json(&initial())).expect("JSON");
        assert_eq!(json["reply"], Value::Null);
        let options = MockOptions { reply: Some("SIMPLE".into()), ..MockOptions::default() };
        let json: Value = serde_json::from_slice(&behaviour_json(&options.behaviour())).expect("JSON");
        assert_eq!(json["reply"], "SIMPLE");
    }
}
