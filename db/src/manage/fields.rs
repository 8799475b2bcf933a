//! Body fields → LiteLLM's columns. The body goes to PostgreSQL whole, as one `jsonb`
//! parameter, and each column reads its field from it (`($1->>'max_budget')::float8`): one
//! statement, whatever the fields, with PostgreSQL doing the casts after the types were
//! checked here (a wrong type is FastAPI's 422, naming the field, as LiteLLM answers it).

use serde_json::{Map, Value};

use super::common::{detail, unprocessable};
use super::ManageReply;
use crate::duration::to_interval;

/// A column's type, and the JSON a body may give for it (always also `null`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    /// `text[]` from a list of strings.
    Texts,
    Float,
    /// `bigint` (tpm/rpm limits), never negative.
    Limit,
    Int,
    Bool,
    /// A NOT NULL `jsonb` object column (`{}` when cleared).
    Object,
    /// A NOT NULL `jsonb` column holding a list (`members_with_roles`).
    List,
}

/// A body field written to the column of the same name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Field {
    pub name: &'static str,
    pub kind: Kind,
}

pub(crate) const fn f(name: &'static str, kind: Kind) -> Field {
    Field { name, kind }
}

/// Fields LiteLLM keeps inside `metadata` rather than in columns of their own.
pub(crate) const METADATA_FIELDS: &[Field] = &[
    f("tags", Kind::Texts),
    f("guardrails", Kind::Texts),
    f("prompts", Kind::Texts),
    f("model_rpm_limit", Kind::Object),
    f("model_tpm_limit", Kind::Object),
];

/// Checks the type of every field of `fields` the body gives; every mistake in one 422.
pub(crate) fn check(body: &Map<String, Value>, fields: &[&[Field]]) -> Result<(), ManageReply> {
    let mut errors = Vec::new();
    for field in fields.iter().flat_map(|f| f.iter()) {
        let Some(value) = body.get(field.name) else { continue };
        if value.is_null() {
            continue;
        }
        let wrong = match field.kind {
            Kind::Text => (!value.is_string()).then_some(("string_type", "Input should be a valid string")),
            Kind::Texts => {
                let ok = value.as_array().is_some_and(|a| a.iter().all(Value::is_string));
                (!ok).then_some(("list_type", "Input should be a valid list of strings"))
            }
            Kind::Float => (!value.is_number()).then_some(("float_type", "Input should be a valid number")),
            Kind::Int => value.as_i64().is_none().then_some(("int_type", "Input should be a valid integer")),
            Kind::Limit => match value.as_i64() {
                None => Some(("int_type", "Input should be a valid integer")),
                Some(n) if n < 0 => Some(("greater_than_equal", "Input should be greater than or equal to 0")),
                Some(_) => None,
            },
            Kind::Bool => (!value.is_boolean()).then_some(("bool_type", "Input should be a valid boolean")),
            Kind::Object => (!value.is_object()).then_some(("dict_type", "Input should be a valid dictionary")),
            Kind::List => (!value.is_array()).then_some(("list_type", "Input should be a valid list")),
        };
        if let Some((kind, msg)) = wrong {
            errors.push(detail(kind, &["body", field.name], msg, value.clone()));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(unprocessable(errors))
    }
}

/// The SQL that reads field `name` of the `jsonb` parameter `p` as its column's type.
pub(crate) fn expr(p: &str, field: &Field) -> String {
    let name = field.name;
    match field.kind {
        Kind::Text => format!("({p}->>'{name}')"),
        Kind::Texts => format!(
            "(CASE WHEN jsonb_typeof({p}->'{name}') = 'array' THEN ARRAY(SELECT jsonb_array_elements_text({p}->'{name}')) END)"
        ),
        Kind::Float => format!("({p}->>'{name}')::float8"),
        Kind::Limit => format!("({p}->>'{name}')::int8"),
        Kind::Int => format!("({p}->>'{name}')::int4"),
        Kind::Bool => format!("({p}->>'{name}')::boolean"),
        Kind::Object => format!("COALESCE(NULLIF({p}->'{name}', 'null'::jsonb), '{{}}'::jsonb)"),
        Kind::List => format!("COALESCE(NULLIF({p}->'{name}', 'null'::jsonb), '[]'::jsonb)"),
    }
}

/// The fields of `fields` present in `doc`: (column, expression) for an INSERT or an UPDATE.
pub(crate) fn columns(p: &str, doc: &Map<String, Value>, fields: &[Field]) -> Vec<(String, String)> {
    fields.iter().filter(|f| doc.contains_key(f.name)).map(|f| (format!("\"{}\"", f.name), expr(p, f))).collect()
}

/// `metadata` as the change leaves it: the body's `metadata` replaces the stored one, and
/// `tags` & co. are merged into it (LiteLLM's `prepare_metadata_fields`). `None`: unchanged.
pub(crate) fn merged_metadata(body: &Map<String, Value>, stored: Option<&Value>) -> Option<Value> {
    let given = METADATA_FIELDS.iter().any(|f| body.get(f.name).is_some_and(|v| !v.is_null()));
    if !body.contains_key("metadata") && !given {
        return None;
    }
    let base = match body.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        Some(_) => Map::new(),
        None => stored.and_then(Value::as_object).cloned().unwrap_or_default(),
    };
    let mut metadata = base;
    for field in METADATA_FIELDS {
        if let Some(value) = body.get(field.name).filter(|v| !v.is_null()) {
            metadata.insert(field.name.to_string(), value.clone());
        }
    }
    Some(Value::Object(metadata))
}

/// A `duration` field: absent → `None`; `null` (or one of `never`) → `Some(None)`; else the
/// PostgreSQL interval (`"30d"` → `30 days`), or a 400 naming the field.
pub(crate) fn interval(
    body: &Map<String, Value>,
    name: &str,
    never: &[&str],
) -> Result<Option<Option<String>>, ManageReply> {
    period(body, name, |text| match to_interval(text) {
        _ if never.contains(&text) => Ok(None),
        Some(interval) => Ok(Some(interval)),
        None => Err(format!("Invalid {name} '{text}': expected a number and a unit s, m, h, d, w or mo (e.g. '30d')")),
    })
}

/// A `budget_duration` field: absent → `None`; `null` → `Some(None)`; else the period as
/// written, if LiteLLM can reset a budget on it, or its 400 (`budget_duration_error`).
pub(crate) fn budget_period(body: &Map<String, Value>, name: &str) -> Result<Option<Option<String>>, ManageReply> {
    period(body, name, |text| match crate::duration::is_budget_period(text) {
        true => Ok(Some(text.to_string())),
        false => Err(format!("Invalid {name} '{text}'. Use a format like '1h', '24h', '7d', or '30d'.")),
    })
}

/// A text field read by `read` (its error a 400 naming the field); `null` → `Some(None)`, a
/// value of another type → FastAPI's 422.
fn period(
    body: &Map<String, Value>,
    name: &str,
    read: impl Fn(&str) -> Result<Option<String>, String>,
) -> Result<Option<Option<String>>, ManageReply> {
    match body.get(name) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(text)) => read(text).map(Some).map_err(|e| super::common::bad_request(&e, Some(name))),
        Some(other) => Err(unprocessable(vec![detail(
            "string_type",
            &["body", name],
            "Input should be a valid string",
            other.clone(),
        )])),
    }
}

/// `budget_reset_at` for the budget period in parameter `p`, on LiteLLM's calendar.
pub(crate) fn reset_at(p: &str) -> String {
    crate::duration::next_reset_sql(&format!("{p}::text"))
}

/// `max_budget` must be a non-negative number (LiteLLM's 400 text).
pub(crate) fn check_budget(body: &Map<String, Value>, name: &str) -> Result<(), ManageReply> {
    match body.get(name).and_then(Value::as_f64) {
        Some(v) if v < 0.0 || !v.is_finite() => {
            Err(super::common::http_error(400, &format!("{name} must be a non-negative finite number. Received: {v}")))
        }
        _ => Ok(()),
    }
}

/// The UTC "now" of LiteLLM's `timestamp without time zone` columns.
pub(crate) const NOW: &str = "(now() AT TIME ZONE 'UTC')";

/// `now + interval` from a text parameter that may be NULL (then the result is NULL).
pub(crate) fn later(p: &str) -> String {
    format!("({NOW} + {p}::text::interval)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_are_checked_per_field() {
        let fields: &[Field] = &[f("models", Kind::Texts), f("tpm_limit", Kind::Limit), f("max_budget", Kind::Float)];
        let body = json!({"models": ["a"], "tpm_limit": 5, "max_budget": null});
        assert!(check(body.as_object().unwrap(), &[fields]).is_ok());
        let body = json!({"models": "a", "tpm_limit": -1});
        let err = check(body.as_object().unwrap(), &[fields]).unwrap_err();
        assert_eq!(err.status, 422);
        let v: Value = serde_json::from_slice(&err.body).unwrap();
        assert_eq!(v["detail"][0]["loc"], json!(["body", "models"]));
        assert_eq!(v["detail"][1]["loc"], json!(["body", "tpm_limit"]));
    }

    #[test]
    fn tags_merge_into_metadata() {
        let body = json!({"tags": ["a"]});
        let stored = json!({"team": "x"});
        assert_eq!(
            merged_metadata(body.as_object().unwrap(), Some(&stored)),
            Some(json!({"team": "x", "tags": ["a"]}))
        );
        let body = json!({"metadata": {"k": 1}});
        assert_eq!(merged_metadata(body.as_object().unwrap(), Some(&stored)), Some(json!({"k": 1})));
        assert_eq!(merged_metadata(&Map::new(), Some(&stored)), None);
    }

    #[test]
    fn durations() {
        let body = json!({"duration": "30d", "b": null, "c": "-1", "d": "soon"});
        let body = body.as_object().unwrap();
        assert_eq!(interval(body, "duration", &[]).unwrap(), Some(Some("30 days".into())));
        assert_eq!(interval(body, "b", &[]).unwrap(), Some(None));
        assert_eq!(interval(body, "c", &["-1"]).unwrap(), Some(None));
        assert_eq!(interval(body, "d", &[]).unwrap_err().status, 400);
        assert_eq!(interval(body, "zz", &[]).unwrap(), None);
    }
}
