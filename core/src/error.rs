//! Why a pick produced no deployment, worded exactly as LiteLLM words it so that clients and
//! dashboards written against LiteLLM keep matching.

use std::fmt;

use crate::reason::RejectReason;

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
        /// Which filter removed the last candidates, when that is worth saying: blocked
        /// deployments, a pre-call check, the tags, an exclusion. `None` when cooldowns or
        /// usage limits emptied the group (the lists above say so already).
        emptied_by: Option<Emptied>,
    },
}

/// The filter that removed the last candidates of a group, with what the client needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Emptied {
    /// Every deployment of the group has `model_info.blocked: true`.
    AllBlocked,
    /// Pre-call check `context_window`: the estimated prompt (+ `max_tokens`) fits no
    /// deployment's context window; `largest_window` = the largest the group knows.
    ContextWindow { estimated_tokens: u64, max_tokens: Option<u64>, largest_window: Option<u64> },
    /// Pre-call check `region`: no deployment is in the requested region.
    Region { allowed_model_region: String },
    /// Pre-call check `unsupported_params`: the requested parameters the last candidates
    /// declare they do not take (request field names).
    UnsupportedParams { params: Vec<&'static str> },
    /// Tag filtering: the request's tags match no deployment.
    Tags { tags: Vec<String> },
    /// A pass-through group (`model: "*"`) has no deployment of the requested name's provider
    /// (`None`: the name says no provider Pointwork serves).
    PassThrough { provider: Option<crate::Provider> },
    /// Any other filter that is not transient (blocked members, no order tier, excluded ids).
    Filter(RejectReason),
}

impl Emptied {
    /// Whether retrying later cannot help: the request itself is what no deployment takes.
    fn is_request_fault(&self) -> bool {
        matches!(
            self,
            Emptied::ContextWindow { .. }
                | Emptied::Region { .. }
                | Emptied::UnsupportedParams { .. }
                | Emptied::Tags { .. }
                | Emptied::PassThrough { .. }
        )
    }
}

impl fmt::Display for Emptied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Emptied::AllBlocked => f.write_str("every deployment of the model group is blocked (model_info.blocked)"),
            Emptied::ContextWindow { estimated_tokens, max_tokens, largest_window } => {
                write!(f, "pre-call check context_window removed the last deployment: estimated {estimated_tokens} prompt tokens")?;
                if let Some(m) = max_tokens {
                    write!(f, " + max_tokens {m}")?;
                }
                match largest_window {
                    Some(w) => write!(f, ", largest context window available {w} tokens"),
                    None => f.write_str(", no context window known"),
                }
            }
            Emptied::Region { allowed_model_region } => {
                f.write_str(
                    "pre-call check region removed the last deployment: no deployment in allowed_model_region=",
                )?;
                write_python_str_repr(f, allowed_model_region)
            }
            Emptied::UnsupportedParams { params } => write!(
                f,
                "pre-call check unsupported_params removed the last deployment: no deployment takes {}",
                params.join(", ")
            ),
            Emptied::Tags { tags } => {
                // LiteLLM's words for the tag router's refusal, then the tags as a Python list.
                f.write_str("Not allowed to access model due to tags configuration, tags=[")?;
                for (i, t) in tags.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_python_str_repr(f, t)?;
                }
                f.write_str("]")
            }
            Emptied::PassThrough { provider: Some(p) } => write!(
                f,
                "the model group passes names through to their provider, and none of its deployments is {p}'s: set {p}'s key in the gateway's environment (see docs/configuration.md, pass-through)",
                p = p.prefix()
            ),
            Emptied::PassThrough { provider: None } => f.write_str(
                "the model group passes names through to their provider, and the name says no provider Pointwork serves: write it as provider/model",
            ),
            Emptied::Filter(r) => write!(f, "the last deployment was removed by filter {}", r.as_str()),
        }
    }
}

impl RouteError {
    /// The HTTP status the client gets.
    pub fn status(&self) -> u16 {
        match self {
            RouteError::UnknownModel { .. } => 400,
            RouteError::NoDeployments { emptied_by: Some(e), .. } if e.is_request_fault() => 400,
            RouteError::NoDeployments { .. } => 429,
        }
    }

    /// Whether a pre-call check found the prompt too long for every deployment: the fallback
    /// walk routes this to `context_window_fallbacks`.
    pub fn is_context_window(&self) -> bool {
        matches!(self, RouteError::NoDeployments { emptied_by: Some(Emptied::ContextWindow { .. }), .. })
    }

    /// Which filter removed the last candidates, when the error says so.
    pub fn emptied_by(&self) -> Option<&Emptied> {
        match self {
            RouteError::NoDeployments { emptied_by, .. } => emptied_by.as_ref(),
            RouteError::UnknownModel { .. } => None,
        }
    }

    /// The value of a `Retry-After` header, when retrying later can help.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            RouteError::UnknownModel { .. } => None,
            RouteError::NoDeployments { emptied_by: Some(e), .. } if e.is_request_fault() => None,
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
            RouteError::NoDeployments {
                model,
                cooldown_ids,
                retry_after_secs,
                pre_call_checks,
                over_limit,
                emptied_by,
            } => {
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
                if let Some(e) = emptied_by {
                    write!(f, ". {e}")?;
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
            emptied_by: None,
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
            emptied_by: None,
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
            emptied_by: None,
        };
        assert!(empty.to_string().ends_with("cooldown_list=[]"));
        let limited = RouteError::NoDeployments {
            model: "m".into(),
            cooldown_ids: vec![],
            retry_after_secs: 12,
            pre_call_checks: false,
            over_limit: vec![("a".into(), RejectReason::TpmLimit), ("b".into(), RejectReason::RpmLimit)],
            emptied_by: None,
        };
        assert!(
            limited
                .to_string()
                .ends_with("cooldown_list=[], usage_limit_list=[('a', 'tpm_limit'), ('b', 'rpm_limit')]"),
            "{limited}"
        );
    }

    #[test]
    fn what_emptied_the_group_is_said_after_litellms_text() {
        let err = |emptied_by| RouteError::NoDeployments {
            model: "m".into(),
            cooldown_ids: vec![],
            retry_after_secs: 0,
            pre_call_checks: true,
            over_limit: vec![],
            emptied_by: Some(emptied_by),
        };
        let cw =
            err(Emptied::ContextWindow { estimated_tokens: 9000, max_tokens: Some(500), largest_window: Some(8192) });
        assert_eq!((cw.status(), cw.retry_after_secs(), cw.is_context_window()), (400, None, true));
        assert_eq!(
            cw.to_string(),
            "No deployments available for selected model, Try again in 0 seconds. Passed model=m. pre-call-checks=True, cooldown_list=[]. pre-call check context_window removed the last deployment: estimated 9000 prompt tokens + max_tokens 500, largest context window available 8192 tokens"
        );
        let blocked = err(Emptied::AllBlocked);
        assert_eq!((blocked.status(), blocked.is_context_window()), (429, false));
        assert!(blocked
            .to_string()
            .ends_with("cooldown_list=[]. every deployment of the model group is blocked (model_info.blocked)"));
        let tags = err(Emptied::Tags { tags: vec!["a".into(), "!b".into()] });
        assert!(tags
            .to_string()
            .ends_with(". Not allowed to access model due to tags configuration, tags=['a', '!b']"));
        assert_eq!(tags.status(), 400);
        let region = err(Emptied::Region { allowed_model_region: "eu".into() });
        assert!(region.to_string().ends_with("no deployment in allowed_model_region='eu'"), "{region}");
        let params = err(Emptied::UnsupportedParams { params: vec!["tools", "response_format"] });
        assert!(params.to_string().ends_with("no deployment takes tools, response_format"));
        let excluded = err(Emptied::Filter(RejectReason::Excluded));
        assert!(excluded.to_string().ends_with(". the last deployment was removed by filter excluded"));
        assert_eq!(excluded.status(), 429);
    }
}
