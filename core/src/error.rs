//! Why a pick produced no deployment, worded exactly as LiteLLM words it so that clients and
//! dashboards written against LiteLLM keep matching.

use std::fmt;

use crate::RejectReason;

/// A pick that found nothing to route to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// The name is neither a model group nor a deployment id.
    UnknownModel { model: String },
    /// The group exists but the filters left nothing.
    NoDeployments {
        model: String,
        /// The group's deployments cooling down, in deployment order.
        cooldown_ids: Vec<String>,
        /// Whole seconds until the soonest cooldown ends, rounded up; at least 1 when anything
        /// cools down, 0 when nothing does.
        retry_after_secs: u64,
        /// `router_settings.enable_pre_call_checks`, a common cause, so the message says it.
        pre_call_checks: bool,
        /// Usage-based routing: the deployments at their rpm or tpm limit this minute, by id,
        /// with the limit. When any are, `retry_after_secs` counts at most to the next minute.
        over_limit: Vec<(String, RejectReason)>,
    },
}

impl RouteError {
    /// The HTTP status the client gets.
    pub fn status(&self) -> u16 {
        match self {
            RouteError::UnknownModel { .. } => 400,
            RouteError::NoDeployments { .. } => 429,
        }
    }

    /// The value of a `Retry-After` header, when retrying later can help.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            RouteError::UnknownModel { .. } => None,
            RouteError::NoDeployments { retry_after_secs, .. } => Some(*retry_after_secs),
        }
    }
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::UnknownModel { model } => write!(
                f,
                "Invalid model name passed in model={model}. Call `/v1/models` to view available models for your key."
            ),
            RouteError::NoDeployments { model, cooldown_ids, retry_after_secs, pre_call_checks, over_limit } => {
                write!(
                    f,
                    "No deployments available for selected model, Try again in {retry_after_secs} seconds. Passed model={model}. pre-call-checks={}, cooldown_list=[",
                    python_bool(*pre_call_checks)
                )?;
                for (i, id) in cooldown_ids.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_python_str_repr(f, id)?;
                }
                f.write_str("]")?;
                // Not in LiteLLM's text (which ends at the cooldown list): without it, a group
                // whose deployments all reached their usage limits reads as "nothing cools down".
                if !over_limit.is_empty() {
                    f.write_str(", usage_limit_list=[")?;
                    for (i, (id, reason)) in over_limit.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        f.write_str("(")?;
                        write_python_str_repr(f, id)?;
                        write!(f, ", '{}')", reason.as_str())?;
                    }
                    f.write_str("]")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RouteError {}

fn python_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// Writes `s` as Python's `repr(str)` does for printable text: single quotes, unless the text
/// holds a single quote and no double quote; backslashes, the chosen quote and the common
/// control characters escaped.
fn write_python_str_repr(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    write!(f, "{quote}")?;
    for c in s.chars() {
        match c {
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c == quote => write!(f, "\\{c}")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(f, "\\x{:02x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    write!(f, "{quote}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_model_is_a_400_with_litellms_text() {
        let err = RouteError::UnknownModel { model: "gpt-5-nano".into() };
        assert_eq!(err.status(), 400);
        assert_eq!(err.retry_after_secs(), None);
        assert_eq!(
            err.to_string(),
            "Invalid model name passed in model=gpt-5-nano. Call `/v1/models` to view available models for your key."
        );
    }

    #[test]
    fn no_deployments_is_a_429_with_litellms_text() {
        let err = RouteError::NoDeployments {
            model: "gpt-4o".into(),
            cooldown_ids: vec!["id1".into(), "id2".into()],
            retry_after_secs: 3,
            pre_call_checks: false,
            over_limit: vec![],
        };
        assert_eq!(err.status(), 429);
        assert_eq!(err.retry_after_secs(), Some(3));
        assert_eq!(
            err.to_string(),
            "No deployments available for selected model, Try again in 3 seconds. Passed model=gpt-4o. pre-call-checks=False, cooldown_list=['id1', 'id2']"
        );
    }

    #[test]
    fn cooldown_ids_are_python_reprs() {
        let err = RouteError::NoDeployments {
            model: "m".into(),
            cooldown_ids: vec!["it's".into(), "a\\b".into(), "q'\"".into()],
            retry_after_secs: 1,
            pre_call_checks: true,
            over_limit: vec![],
        };
        assert_eq!(
            err.to_string(),
            r#"No deployments available for selected model, Try again in 1 seconds. Passed model=m. pre-call-checks=True, cooldown_list=["it's", 'a\\b', 'q\'"']"#
        );
        let empty = RouteError::NoDeployments {
            model: "m".into(),
            cooldown_ids: vec![],
            retry_after_secs: 0,
            pre_call_checks: false,
            over_limit: vec![],
        };
        assert!(empty.to_string().ends_with("cooldown_list=[]"));
        let limited = RouteError::NoDeployments {
            model: "m".into(),
            cooldown_ids: vec![],
            retry_after_secs: 12,
            pre_call_checks: false,
            over_limit: vec![("a".into(), RejectReason::TpmLimit), ("b".into(), RejectReason::RpmLimit)],
        };
        assert!(
            limited
                .to_string()
                .ends_with("cooldown_list=[], usage_limit_list=[('a', 'tpm_limit'), ('b', 'rpm_limit')]"),
            "{limited}"
        );
    }
}
