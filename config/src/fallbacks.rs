//! The fallback and retry keys, in `router_settings` or `litellm_settings` (LiteLLM reads both;
//! `router_settings` wins): `fallbacks`, `context_window_fallbacks`, `content_policy_fallbacks`
//! (each a list of one-key maps `{group: [fallback groups…]}`), `default_fallbacks` (a list of
//! groups: a `*` entry of `fallbacks`), `max_fallbacks`, and `retry_policy`
//! (`{RateLimitErrorRetries: 3, …}`, strict keys).
//!
//! Every name a fallback uses must route somewhere; the check runs once the model list is read
//! ([`crate::references`]).

use pointwork_core::{ErrorClass, FallbackList, Fallbacks, RetryPolicy};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;
use crate::node::Node;

/// What one section sets; `None` = not set there.
#[derive(Default)]
pub(crate) struct FallbackKeys {
    generic: Option<Vec<(String, Vec<String>)>>,
    context_window: Option<Vec<(String, Vec<String>)>>,
    content_policy: Option<Vec<(String, Vec<String>)>>,
    default: Option<Vec<String>>,
    max_fallbacks: Option<u32>,
    retry_policy: Option<RetryPolicy>,
    /// Every name a fallback mentions, with its key path.
    pub(crate) references: Vec<(KeyPath, String)>,
}

impl FallbackKeys {
    pub(crate) fn read(c: &mut Checker, fields: &mut Fields) -> FallbackKeys {
        let mut keys = FallbackKeys::default();
        keys.generic = read_lists(c, fields, "fallbacks", &mut keys.references);
        keys.context_window = read_lists(c, fields, "context_window_fallbacks", &mut keys.references);
        keys.content_policy = read_lists(c, fields, "content_policy_fallbacks", &mut keys.references);
        if let Some((node, path)) = fields.take("default_fallbacks") {
            if let Some(groups) = c.read(node, &path, &kinds::STRING_LIST) {
                keys.references.extend(groups.iter().enumerate().map(|(i, g)| (path.index(i), g.clone())));
                keys.default = Some(groups);
            }
        }
        keys.max_fallbacks = c.optional(fields, "max_fallbacks", &kinds::NON_NEGATIVE_U32);
        if let Some(mut policy_fields) = c.optional_map(fields, "retry_policy") {
            let mut policy = RetryPolicy::default();
            for class in ErrorClass::ALL {
                if let Some(n) = c.optional(&mut policy_fields, class.retry_policy_key(), &kinds::NON_NEGATIVE_U32) {
                    policy.set(class, n);
                }
            }
            let valid: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.retry_policy_key()).collect();
            // Strict: a misspelt class would silently keep num_retries.
            c.refuse_unknown(&policy_fields, &valid);
            keys.retry_policy = Some(policy);
        }
        keys
    }

    /// Lays `self` over what `base` set (`router_settings` over `litellm_settings`).
    pub(crate) fn over(self, base: FallbackKeys) -> FallbackKeys {
        let mut references = base.references;
        references.extend(self.references);
        FallbackKeys {
            generic: self.generic.or(base.generic),
            context_window: self.context_window.or(base.context_window),
            content_policy: self.content_policy.or(base.content_policy),
            default: self.default.or(base.default),
            max_fallbacks: self.max_fallbacks.or(base.max_fallbacks),
            retry_policy: self.retry_policy.or(base.retry_policy),
            references,
        }
    }

    pub(crate) fn into_settings(self) -> (Fallbacks, RetryPolicy) {
        let mut generic = self.generic.unwrap_or_default();
        if let Some(default) = self.default {
            generic.push(("*".to_string(), default));
        }
        let defaults = Fallbacks::default();
        let fallbacks = Fallbacks {
            generic: FallbackList::new(generic),
            context_window: FallbackList::new(self.context_window.unwrap_or_default()),
            content_policy: FallbackList::new(self.content_policy.unwrap_or_default()),
            max_fallbacks: self.max_fallbacks.unwrap_or(defaults.max_fallbacks),
        };
        (fallbacks, self.retry_policy.unwrap_or_default())
    }
}

/// `key: [{group: [fallback, …]}, …]`.
fn read_lists(
    c: &mut Checker,
    fields: &mut Fields,
    key: &str,
    references: &mut Vec<(KeyPath, String)>,
) -> Option<Vec<(String, Vec<String>)>> {
    let (node, path) = fields.take(key)?;
    if matches!(node, Node::Null) {
        return None;
    }
    let items = c.list(node, &path)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        let Node::Map(entries) = item else {
            c.error(&item_path, format!("expected a map {{group: [fallback groups]}}, got {}", item.describe()));
            continue;
        };
        if entries.len() != 1 {
            c.error(&item_path, format!("expected one group per entry, got {} keys", entries.len()));
            continue;
        }
        let (group, value) = &entries[0];
        let value_path = item_path.key(group);
        if let Some(groups) = c.read(value, &value_path, &kinds::STRING_LIST) {
            if group != "*" {
                references.push((item_path.clone(), group.clone()));
            }
            references.extend(groups.iter().enumerate().map(|(j, g)| (value_path.index(j), g.clone())));
            out.push((group.clone(), groups));
        }
    }
    Some(out)
}
