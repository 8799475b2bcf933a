//! Who is calling: the master key (`general_settings.master_key`), an admin or a virtual key
//! (`pointwork.auth`, known by the SHA-256 of the key), or anyone when no key is configured.
//! Built with the routes; a key's meter (its rpm / tpm / spend counters) carries over a reload
//! by digest, so that a reload neither resets a limit nor loses spend.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use pointwork_config::Auth;
use pointwork_core::{KeyLimits, KeyMeter, KeyRefusal, KeyUsage, Resolution, Snapshot};
use sha2::{Digest, Sha256};

use crate::errors::{openai_error, typed_error};
use crate::respond::Reply;

/// One virtual key as the request path sees it.
#[derive(Debug)]
pub struct VirtualKey {
    /// What logs and metrics call it.
    pub name: String,
    pub(crate) digest: [u8; 32],
    /// `None` = every model.
    pub(crate) models: Option<Vec<String>>,
    pub limits: KeyLimits,
    /// Added to every request's tags (tag routing).
    pub tags: Vec<String>,
    pub meter: Arc<KeyMeter>,
    /// `GET /v1/models` for this key: only what it may use.
    pub models_body: Option<Vec<u8>>,
    /// The policy (`pointwork.policies`) its requests run under.
    pub policy: Option<String>,
    /// The MCP servers it may use: entries naming a server (its name, prefix or server id) or an
    /// access group, as `McpServer::allowed_for` reads them; `None` = every server.
    pub mcp_servers: Option<Vec<String>>,
    /// Per server (name, prefix, server id or access group), the only tools the key may call on
    /// it (`*`: all); a server named nowhere here is not limited by tool.
    pub mcp_tools: Vec<(String, Vec<String>)>,
    /// The response cache controls its requests may set (`allowed_cache_controls`, from the
    /// config or LiteLLM's key row); empty = any.
    pub allowed_cache_controls: Vec<String>,
    /// A key from LiteLLM's database: its row and its key's, team's and user's accounts.
    pub db: Option<Arc<pointwork_db::KeyEntry>>,
}

/// Who a request is from, once authenticated.
#[derive(Clone, Debug)]
pub enum Caller {
    /// No key is configured for what was called.
    Anyone,
    Master,
    /// An admin key, by name.
    Admin(Arc<str>),
    Virtual(Arc<VirtualKey>),
}

impl Caller {
    pub fn virtual_key(&self) -> Option<&VirtualKey> {
        match self {
            Caller::Virtual(k) => Some(k),
            _ => None,
        }
    }

    /// The key's name for the access log (`master`, an admin or virtual key's name).
    pub fn name(&self) -> Option<&str> {
        match self {
            Caller::Anyone => None,
            Caller::Master => Some("master"),
            Caller::Admin(name) => Some(name),
            Caller::Virtual(k) => Some(&k.name),
        }
    }
}

#[derive(Default)]
pub struct Keys {
    master: Option<String>,
    admins: HashMap<[u8; 32], Arc<str>>,
    virtuals: HashMap<[u8; 32], Arc<VirtualKey>>,
    /// In config order, for metrics.
    listed: Vec<Arc<VirtualKey>>,
    pub metrics_need_key: bool,
    /// Keys are also looked up in LiteLLM's database.
    pub database: bool,
}

/// Why a presented key is not a caller yet.
pub enum Denied {
    /// The answer to send.
    Reply(Reply),
    /// Not a config key: its SHA-256, to look up in the database.
    Unknown([u8; 32]),
}

/// Never shows the master key (redacted to its last four characters).
impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("master", &self.master.as_deref().map(pointwork_core::redact))
            .field("admins", &self.admins.values().collect::<Vec<_>>())
            .field("virtual_keys", &self.listed)
            .field("metrics_need_key", &self.metrics_need_key)
            .finish()
    }
}

impl Keys {
    /// The keys `auth` describes; meters of keys `previous` knew (same digest) carry over.
    pub fn new(
        auth: &Auth,
        master: Option<String>,
        snapshot: &Snapshot,
        previous: Option<&Keys>,
        database: bool,
    ) -> Keys {
        let admins = auth.admin_keys.iter().map(|k| (k.sha256, Arc::from(k.name.as_str()))).collect();
        let listed: Vec<Arc<VirtualKey>> = auth
            .virtual_keys
            .iter()
            .map(|k| {
                let meter = previous.and_then(|p| p.virtuals.get(&k.sha256)).map(|old| old.meter.clone());
                let mut key = VirtualKey {
                    name: k.name.clone(),
                    digest: k.sha256,
                    models: k.models.clone(),
                    limits: k.limits.clone(),
                    tags: k.tags.clone(),
                    meter: meter.unwrap_or_default(),
                    models_body: None,
                    policy: k.policy.clone(),
                    mcp_servers: k.mcp_servers.clone(),
                    mcp_tools: k.mcp_tools.clone(),
                    allowed_cache_controls: k.allowed_cache_controls.clone(),
                    db: None,
                };
                if key.models.is_some() {
                    let names = snapshot.public_model_names().filter(|name| key.may_use(name, snapshot));
                    key.models_body = Some(crate::models_list::models_list(names));
                }
                Arc::new(key)
            })
            .collect();
        let virtuals = listed.iter().map(|k| (k.digest, k.clone())).collect();
        Keys { master, admins, virtuals, listed, metrics_need_key: auth.metrics_need_key, database }
    }

    /// The virtual keys in config order.
    pub fn virtual_keys(&self) -> impl Iterator<Item = &Arc<VirtualKey>> {
        self.listed.iter()
    }

    /// Whether `/v1/*` needs a key: the master key or a virtual key is configured.
    pub fn api_needs_key(&self) -> bool {
        self.master.is_some() || !self.virtuals.is_empty() || self.database
    }

    /// Whether `/admin/*`, the dry run (and `/metrics` when so configured) need a key: as soon
    /// as any key is configured. With virtual keys alone, nothing opens them (SIGHUP still
    /// reloads): a gateway that checks its callers never leaves its operator endpoints open.
    pub fn admin_needs_key(&self) -> bool {
        self.master.is_some() || !self.admins.is_empty() || !self.virtuals.is_empty() || self.database
    }

    /// The API caller the `Authorization` header names, the 401 to answer, or (with a
    /// database) the digest of a key the config does not know.
    /// `x_api_key`: the Anthropic API's `x-api-key` header, read when no `Authorization` came.
    pub fn api_caller(&self, authorization: Option<&[u8]>, x_api_key: Option<&[u8]>) -> Result<Caller, Denied> {
        if !self.api_needs_key() {
            return Ok(Caller::Anyone);
        }
        let presented = match (authorization.map(bearer), x_api_key) {
            (None, Some(key)) => key,
            (None, None) => return Err(Denied::Reply(unauthorized(
                "Authentication Error, no API key passed in: send Authorization: Bearer <key> (or x-api-key: <key>)",
            ))),
            (Some(None), _) => {
                return Err(Denied::Reply(unauthorized(
                    "Authentication Error, the Authorization header is not Bearer <key>",
                )))
            }
            (Some(Some(key)), _) => key,
        };
        if self.is_master(presented) {
            return Ok(Caller::Master);
        }
        let digest = sha256(presented);
        match self.virtuals.get(&digest) {
            Some(key) => Ok(Caller::Virtual(key.clone())),
            None if self.database => Err(Denied::Unknown(digest)),
            None => Err(Denied::Reply(unauthorized("Authentication Error, invalid API key"))),
        }
    }

    /// The operator calling an admin endpoint (master or admin key), or the 401 to answer.
    pub fn admin_caller(&self, authorization: Option<&[u8]>) -> Result<Caller, Reply> {
        if !self.admin_needs_key() {
            return Ok(Caller::Anyone);
        }
        let message = if self.master.is_none() && self.admins.is_empty() {
            "admin endpoints are closed while virtual keys are configured: set general_settings.master_key or pointwork.auth.admin_keys"
        } else {
            "admin endpoints need Authorization: Bearer <general_settings.master_key or an admin key>"
        };
        let presented = authorization.and_then(bearer).ok_or_else(|| unauthorized(message))?;
        if self.is_master(presented) {
            return Ok(Caller::Master);
        }
        match self.admins.get(&sha256(presented)) {
            Some(name) => Ok(Caller::Admin(name.clone())),
            None => Err(unauthorized(message)),
        }
    }

    fn is_master(&self, presented: &[u8]) -> bool {
        self.master.as_deref().is_some_and(|m| constant_time_eq(presented, m.as_bytes()))
    }

    /// Prometheus lines for every virtual key's usage (names only, never a key or digest).
    pub fn render_metrics(&self, out: &mut String, now_unix: u64) {
        if self.listed.is_empty() {
            return;
        }
        type Values = fn(&KeyUsage) -> Vec<(&'static str, f64)>;
        let families: [(&str, &str, &str, Values); 4] = [
            (
                "pointwork_key_requests_this_minute",
                "gauge",
                "Requests admitted for the key in the current minute.",
                |u| vec![("", u.requests_this_minute as f64)],
            ),
            (
                "pointwork_key_tokens_this_minute",
                "gauge",
                "Tokens the key's responses reported in the current minute (keys with tpm or a budget).",
                |u| vec![("", u.tokens_this_minute as f64)],
            ),
            ("pointwork_key_spend_usd", "gauge", "US dollars the key spent in its current budget period.", |u| {
                vec![("", u.spend)]
            }),
            ("pointwork_key_refused_total", "counter", "Requests refused by one of the key's limits.", |u| {
                vec![
                    (",limit=\"rpm\"", u.refused_rpm as f64),
                    (",limit=\"tpm\"", u.refused_tpm as f64),
                    (",limit=\"budget\"", u.refused_budget as f64),
                ]
            }),
        ];
        for (name, kind, help, values) in families {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for k in &self.listed {
                let key = escape_label(&k.name);
                for (labels, value) in values(&k.meter.usage(&k.limits, now_unix)) {
                    let _ = writeln!(out, "{name}{{key=\"{key}\"{labels}}} {value}");
                }
            }
        }
    }
}

/// What a reload changed in the virtual keys, for its log line (`None` = nothing).
pub fn key_changes(old: &Keys, new: &Keys) -> Option<String> {
    let names = |keys: &Keys, other: &Keys| -> Vec<String> {
        keys.listed.iter().filter(|k| !other.virtuals.contains_key(&k.digest)).map(|k| k.name.clone()).collect()
    };
    let (added, removed) = (names(new, old), names(old, new));
    let changed: Vec<String> = new
        .listed
        .iter()
        .filter(|k| {
            old.virtuals.get(&k.digest).is_some_and(|o| {
                (&o.models, &o.limits, &o.tags, &o.policy, &o.allowed_cache_controls)
                    != (&k.models, &k.limits, &k.tags, &k.policy, &k.allowed_cache_controls)
            })
        })
        .map(|k| k.name.clone())
        .collect();
    let parts: Vec<String> = [("added", added), ("removed", removed), ("changed", changed)]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| format!("{what} {}", names.join(", ")))
        .collect();
    (!parts.is_empty()).then(|| format!("virtual keys {}", parts.join("; ")))
}

impl VirtualKey {
    /// Whether responses must report their usage for this key: its tokens or spend are
    /// counted, or (a database key) its spend is written.
    pub fn counts_usage(&self) -> bool {
        self.limits.counts_usage() || self.db.is_some()
    }

    /// The key's SHA-256 in hex, as the config writes it.
    pub fn digest_hex(&self) -> String {
        hex(&self.digest)
    }

    /// Whether the key may ask for `requested`: named in its list (exactly, by a `prefix*`
    /// pattern, or by the group an alias or deployment id resolves to).
    pub fn may_use(&self, requested: &str, snapshot: &Snapshot) -> bool {
        self.models.as_deref().is_none_or(|models| allows(models, requested, snapshot))
    }

    /// The 401 for a model this key may not use (LiteLLM's wording).
    pub fn model_refused(&self, requested: &str) -> Reply {
        let allowed: Vec<String> = self.models.iter().flatten().map(|m| format!("'{m}'")).collect();
        let message = format!(
            "API Key not allowed to access model. This token can only access models=[{}]. Tried to access {requested}",
            allowed.join(", ")
        );
        Reply::json(401, typed_error(401, "key_model_access_denied", &message, Some("model")))
    }

    /// The answer for a request one of the key's limits refuses: 429 with `Retry-After` for
    /// rpm / tpm, 400 `budget_exceeded` for the budget (as LiteLLM).
    pub fn refused(&self, refusal: &KeyRefusal) -> Reply {
        let name = &self.name;
        let (status, message, kind) = match refusal {
            KeyRefusal::Rpm { limit, retry_after_secs } => (
                429,
                format!("Rate limit exceeded for key {name}: rpm limit {limit} reached; try again in {retry_after_secs} s"),
                "rate_limit_error",
            ),
            KeyRefusal::Tpm { limit, used, retry_after_secs } => (
                429,
                format!("Rate limit exceeded for key {name}: tpm limit {limit} reached ({used} tokens this minute); try again in {retry_after_secs} s"),
                "rate_limit_error",
            ),
            KeyRefusal::Budget { max_budget, spent, resets_in_secs } => {
                let when = match resets_in_secs {
                    Some(s) => format!("; the budget starts over in {s} s"),
                    None => String::new(),
                };
                (400, format!("Budget has been exceeded! Key={name} Current cost: {spent:.6}, Max budget: {max_budget}{when}"), "budget_exceeded")
            }
        };
        let mut reply = Reply::json(status, typed_error(status, kind, &message, None));
        if let Some(secs) = refusal.retry_after_secs() {
            reply.header("retry-after", secs.to_string().as_bytes());
        }
        reply
    }
}

/// Whether a list of models (names, `prefix*` patterns) allows `requested`: by its own name or
/// by the group an alias or deployment id resolves to.
pub(crate) fn allows(models: &[String], requested: &str, snapshot: &Snapshot) -> bool {
    let group = group_name(requested, snapshot);
    models.iter().any(|allowed| {
        let matches = |name: &str| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == allowed,
        };
        matches(requested) || group.is_some_and(matches)
    })
}

/// The model group `requested` resolves to (through an alias or a deployment id).
pub(crate) fn group_name<'s>(requested: &str, snapshot: &'s Snapshot) -> Option<&'s str> {
    match snapshot.resolve(requested) {
        Resolution::Group { group, .. } => Some(snapshot.group(group).name.as_str()),
        Resolution::Deployment(d) => Some(snapshot.group(snapshot.group_of(d)).name.as_str()),
        Resolution::Unknown => None,
    }
}

/// The token after `Bearer ` (the scheme is case-insensitive, RFC 9110 §11.1).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then(|| token.trim_ascii()).filter(|t| !t.is_empty())
}

fn sha256(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key).into()
}

/// The hex SHA-256 of a key, as `pointwork hash-key` prints it for the config.
pub fn digest_hex(key: &[u8]) -> String {
    hex(&sha256(key))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unauthorized(message: &str) -> Reply {
    Reply::json(401, openai_error(401, message, None))
}

fn escape_label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Compares without an early exit on the first differing byte (the length still shows).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"sk-1", b"sk-1"));
        assert!(!constant_time_eq(b"sk-1", b"sk-2"));
        assert!(!constant_time_eq(b"sk-1", b"sk-12"));
    }

    #[test]
    fn bearer_tokens() {
        assert_eq!(bearer(b"Bearer sk-1"), Some(&b"sk-1"[..]));
        assert_eq!(bearer(b"bearer  sk-1 "), Some(&b"sk-1"[..]));
        assert_eq!(bearer(b"Basic sk-1"), None);
        assert_eq!(bearer(b"Bearer "), None);
        assert_eq!(bearer(b"sk-1"), None);
    }

    #[test]
    fn debug_output_never_shows_the_master_key() {
        let keys = Keys { master: Some("sk-master-secret-9876".into()), ..Keys::default() };
        let text = format!("{keys:?}");
        assert!(!text.contains("secret") && text.contains("9876"), "{text}");
    }

    #[test]
    fn digests_are_lower_case_hex_sha256() {
        assert_eq!(digest_hex(b"test"), "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    }

    #[test]
    fn a_config_keys_allowed_cache_controls_reach_its_caller() {
        let config_key = |controls: &[&str]| pointwork_config::VirtualKey {
            name: "team-a".into(),
            sha256: sha256(b"sk-team-a"),
            models: None,
            limits: KeyLimits::default(),
            tags: Vec::new(),
            policy: None,
            mcp_servers: None,
            mcp_tools: Vec::new(),
            allowed_cache_controls: controls.iter().map(|c| c.to_string()).collect(),
        };
        let auth = Auth { virtual_keys: vec![config_key(&["no-cache", "ttl"])], ..Auth::default() };
        let snapshot = Snapshot::build(Vec::new(), pointwork_core::RouterSettings::default()).unwrap();
        let keys = Keys::new(&auth, None, &snapshot, None, false);
        let Ok(Caller::Virtual(key)) = keys.api_caller(Some(b"Bearer sk-team-a"), None) else { panic!("a caller") };
        assert_eq!(key.allowed_cache_controls, ["no-cache", "ttl"]);
        let other = Auth { virtual_keys: vec![config_key(&[])], ..Auth::default() };
        let changed = Keys::new(&other, None, &snapshot, Some(&keys), false);
        assert_eq!(key_changes(&keys, &changed).as_deref(), Some("virtual keys changed team-a"));
    }
}
