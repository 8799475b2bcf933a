//! Fallbacks and the retry policy, as LiteLLM configures them: which error class a failure is,
//! how many retries each class gets, and which model groups a failed group falls back to.
//!
//! - `fallbacks: [{group: [fallback, …]}, {"*": […]}]` — for every error but the two below; an
//!   exact group name wins over a provider-stripped one (`openai/gpt-4o` → `gpt-4o`), which wins
//!   over `*`. `default_fallbacks: […]` is a `*` entry.
//! - `context_window_fallbacks` — only for context-window errors (and nothing else serves them:
//!   without an entry the error stands, as in LiteLLM).
//! - `content_policy_fallbacks` — only for content-policy errors, likewise.
//! - `max_fallbacks` — how deep a fallback's own fallbacks may go (LiteLLM's default: 5).
//! - `retry_policy: {RateLimitErrorRetries: 3, …}` — retries per error class, instead of
//!   `num_retries`.

use crate::error::RouteError;
use crate::failure::Failure;

/// LiteLLM's exception classes, as far as routing treats them differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    BadRequest,
    Authentication,
    Timeout,
    RateLimit,
    ContentPolicy,
    ContextWindow,
    InternalServer,
}

impl ErrorClass {
    pub const ALL: [ErrorClass; 7] = [
        ErrorClass::BadRequest,
        ErrorClass::Authentication,
        ErrorClass::Timeout,
        ErrorClass::RateLimit,
        ErrorClass::ContentPolicy,
        ErrorClass::ContextWindow,
        ErrorClass::InternalServer,
    ];

    /// The `retry_policy` key for the class (`RateLimitErrorRetries`, …).
    pub fn retry_policy_key(self) -> &'static str {
        match self {
            ErrorClass::BadRequest => "BadRequestErrorRetries",
            ErrorClass::Authentication => "AuthenticationErrorRetries",
            ErrorClass::Timeout => "TimeoutErrorRetries",
            ErrorClass::RateLimit => "RateLimitErrorRetries",
            ErrorClass::ContentPolicy => "ContentPolicyViolationErrorRetries",
            ErrorClass::ContextWindow => "ContextWindowExceededErrorRetries",
            ErrorClass::InternalServer => "InternalServerErrorRetries",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::BadRequest => "bad_request",
            ErrorClass::Authentication => "authentication",
            ErrorClass::Timeout => "timeout",
            ErrorClass::RateLimit => "rate_limit",
            ErrorClass::ContentPolicy => "content_policy",
            ErrorClass::ContextWindow => "context_window",
            ErrorClass::InternalServer => "internal_server",
        }
    }

    /// The class of a pick that found nothing: a context-window pre-call check emptying the
    /// group is a context-window error (for `context_window_fallbacks`), another check on what
    /// the request asks (region, params, tags) a bad request, anything else — everything
    /// cooling down, over its limits — a rate limit, as LiteLLM treats "no deployments".
    pub fn of_route_error(e: &RouteError) -> ErrorClass {
        if e.is_context_window() {
            ErrorClass::ContextWindow
        } else if e.status() == 400 {
            ErrorClass::BadRequest
        } else {
            ErrorClass::RateLimit
        }
    }

    /// The class of a failed attempt; `error_body` is the upstream's error text (a 400 is a
    /// context-window or content-policy error when its code or message says so, as the
    /// providers' errors do).
    pub fn of(failure: Failure, error_body: &str) -> ErrorClass {
        match failure {
            Failure::Timeout => ErrorClass::Timeout,
            Failure::Connect | Failure::Protocol => ErrorClass::InternalServer,
            Failure::Status(401 | 403) => ErrorClass::Authentication,
            Failure::Status(408) => ErrorClass::Timeout,
            Failure::Status(429) => ErrorClass::RateLimit,
            Failure::Status(400..=499) => {
                let text = error_body.to_ascii_lowercase();
                if CONTEXT_WINDOW_MARKERS.iter().any(|m| text.contains(m)) {
                    ErrorClass::ContextWindow
                } else if CONTENT_POLICY_MARKERS.iter().any(|m| text.contains(m)) {
                    ErrorClass::ContentPolicy
                } else {
                    ErrorClass::BadRequest
                }
            }
            Failure::Status(_) => ErrorClass::InternalServer,
        }
    }
}

/// How providers say a prompt is too long (OpenAI's code, Anthropic's, Bedrock's and Gemini's
/// messages…).
const CONTEXT_WINDOW_MARKERS: [&str; 8] = [
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "too many input tokens",
    "exceeds the maximum number of tokens",
];
/// How providers say a request was refused by a safety system (OpenAI's code, Azure's and
/// Anthropic's messages…).
const CONTENT_POLICY_MARKERS: [&str; 5] = [
    "content_policy_violation",
    "content_filter",
    "content management policy",
    "safety system",
    "content filtering policy",
];

/// One fallback list: `group → [fallback groups…]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FallbackList {
    entries: Vec<(String, Vec<String>)>,
}

impl FallbackList {
    pub fn new(entries: Vec<(String, Vec<String>)>) -> FallbackList {
        FallbackList { entries }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[(String, Vec<String>)] {
        &self.entries
    }

    /// Drops every rule for a name `gone` says is gone, and every such name as a target.
    pub fn drop_names(&mut self, gone: &dyn Fn(&str) -> bool) {
        self.entries.retain(|(group, _)| !gone(group));
        for (_, targets) in &mut self.entries {
            targets.retain(|t| !gone(t));
        }
    }

    /// The groups `group` falls back to: its own entry, else the entry of its name without a
    /// provider prefix, else `*`'s.
    pub fn for_group(&self, group: &str) -> &[String] {
        let stripped = group.split_once('/').map(|(_, rest)| rest);
        let find = |key: &str| self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_slice());
        find(group).or_else(|| stripped.and_then(find)).or_else(|| find("*")).unwrap_or_default()
    }
}

/// Every fallback rule of a config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallbacks {
    pub generic: FallbackList,
    pub context_window: FallbackList,
    pub content_policy: FallbackList,
    /// How many fallback hops deep the walk may go.
    pub max_fallbacks: u32,
}

impl Default for Fallbacks {
    fn default() -> Self {
        Fallbacks {
            generic: FallbackList::default(),
            context_window: FallbackList::default(),
            content_policy: FallbackList::default(),
            max_fallbacks: 5,
        }
    }
}

impl Fallbacks {
    /// The groups a failure of class `class` in `group` falls back to, in order.
    pub fn for_failure(&self, group: &str, class: ErrorClass) -> &[String] {
        match class {
            ErrorClass::ContextWindow => self.context_window.for_group(group),
            ErrorClass::ContentPolicy => self.content_policy.for_group(group),
            _ => self.generic.for_group(group),
        }
    }
}

/// `retry_policy`: retries per error class; `None` = `num_retries`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetryPolicy {
    retries: [Option<u32>; 7],
}

impl RetryPolicy {
    pub fn set(&mut self, class: ErrorClass, retries: u32) {
        self.retries[class as usize] = Some(retries);
    }

    /// Retries a failure of `class` gets; `num_retries` when the policy does not say.
    pub fn retries_for(&self, class: ErrorClass, num_retries: u32) -> u32 {
        self.retries[class as usize].unwrap_or(num_retries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[(&str, &[&str])]) -> FallbackList {
        FallbackList::new(
            entries.iter().map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect())).collect(),
        )
    }

    #[test]
    fn classes_of_failures() {
        let cw = r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#;
        assert_eq!(ErrorClass::of(Failure::Status(400), cw), ErrorClass::ContextWindow);
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert_eq!(ErrorClass::of(Failure::Status(400), anthropic), ErrorClass::ContextWindow);
        let policy = r#"{"error":{"code":"content_policy_violation","message":"rejected by our safety system"}}"#;
        assert_eq!(ErrorClass::of(Failure::Status(400), policy), ErrorClass::ContentPolicy);
        let blocked = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by content filtering policy"}}"#;
        assert_eq!(ErrorClass::of(Failure::Status(400), blocked), ErrorClass::ContentPolicy);
        assert_eq!(ErrorClass::of(Failure::Status(400), "{}"), ErrorClass::BadRequest);
        assert_eq!(ErrorClass::of(Failure::Status(429), cw), ErrorClass::RateLimit);
        assert_eq!(ErrorClass::of(Failure::Status(401), ""), ErrorClass::Authentication);
        assert_eq!(ErrorClass::of(Failure::Status(503), ""), ErrorClass::InternalServer);
        assert_eq!(ErrorClass::of(Failure::Timeout, ""), ErrorClass::Timeout);
        assert_eq!(ErrorClass::of(Failure::Connect, ""), ErrorClass::InternalServer);
    }

    #[test]
    fn exact_then_stripped_then_wildcard() {
        let l = list(&[("*", &["any"]), ("gpt-4o", &["stripped"]), ("openai/gpt-4o", &["exact"])]);
        assert_eq!(l.for_group("openai/gpt-4o"), ["exact"]);
        assert_eq!(l.for_group("azure/gpt-4o"), ["stripped"]);
        assert_eq!(l.for_group("claude"), ["any"]);
        assert!(list(&[]).for_group("x").is_empty());
    }

    #[test]
    fn each_class_reads_its_own_list() {
        let f = Fallbacks {
            generic: list(&[("a", &["g"])]),
            context_window: list(&[("a", &["big"])]),
            content_policy: FallbackList::default(),
            max_fallbacks: 5,
        };
        assert_eq!(f.for_failure("a", ErrorClass::RateLimit), ["g"]);
        assert_eq!(f.for_failure("a", ErrorClass::ContextWindow), ["big"]);
        // A content-policy error has no list of its own here: nothing, not the generic list.
        assert!(f.for_failure("a", ErrorClass::ContentPolicy).is_empty());
    }

    #[test]
    fn the_retry_policy_overrides_num_retries_per_class() {
        let mut p = RetryPolicy::default();
        p.set(ErrorClass::RateLimit, 5);
        p.set(ErrorClass::BadRequest, 0);
        assert_eq!(p.retries_for(ErrorClass::RateLimit, 2), 5);
        assert_eq!(p.retries_for(ErrorClass::BadRequest, 2), 0);
        assert_eq!(p.retries_for(ErrorClass::Timeout, 2), 2);
        assert_eq!(ErrorClass::ALL.len(), 7);
    }
}
