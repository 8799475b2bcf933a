//! `Config::summary()`: the one screen `pointwork check` prints when a config compiles.
//! Keys are shown redacted (`…` and the last 4 characters), never whole.

use std::fmt::Write;
use std::time::Duration;

use pointwork_core::complexity::{ClassifierFallback, RouterConfig, Tier};
use pointwork_core::pareto::{ParetoRule, DEFAULT_RULE_MODEL};
use pointwork_core::policy::{EndpointKind, Policy, PolicyAttrs};
use pointwork_core::{Deployment, RoutingStrategy};

use crate::router::strategy_name;
use crate::{AccessLogTarget, CacheMode, CacheStore, Config, HealthCheckSharing, TlsOrigin, TlsSettings};
use pointwork_core::redact;

impl Config {
    pub fn summary(&self) -> String {
        self.summary_with_tls_expiry(None)
    }

    /// The summary, its `tls:` line saying when the listener's certificate expires: `pointwork
    /// check` reads the certificate (this crate only reads paths) and passes the seconds left.
    pub fn summary_with_tls_expiry(&self, tls_seconds_left: Option<i64>) -> String {
        let mut out = String::new();
        self.write_files(&mut out);
        self.write_groups(&mut out);
        self.write_left_out(&mut out);
        self.write_policies(&mut out);
        self.write_router(&mut out);
        self.write_pareto(&mut out);
        self.write_gateway(&mut out, tls_seconds_left);
        self.write_cluster(&mut out);
        self.write_cache(&mut out);
        if let Some(key) = &self.master_key {
            line(&mut out, format_args!("general: master_key {}", redact(key)));
        }
        self.write_auth(&mut out);
        self.write_mcp(&mut out);
        line(&mut out, format_args!("warnings: {}", self.warning_count));
        out
    }

    /// Key names and limits; digests are not keys, but there is no reason to print them.
    fn write_auth(&self, out: &mut String) {
        let auth = &self.auth;
        if auth.admin_keys.is_empty() && auth.virtual_keys.is_empty() && !auth.metrics_need_key {
            return;
        }
        let admins: Vec<&str> = auth.admin_keys.iter().map(|k| k.name.as_str()).collect();
        let metrics = if auth.metrics_need_key { "key" } else { "open" };
        line(out, format_args!("auth: metrics {metrics}, admin keys [{}]", admins.join(", ")));
        for k in &auth.virtual_keys {
            let mut text = format!("  key {}", k.name);
            let l = &k.limits;
            match &k.models {
                Some(models) => write!(text, ", models [{}]", models.join(", ")),
                None => write!(text, ", every model"),
            }
            .ok();
            let limits = [("rpm", l.rpm), ("tpm", l.tpm)];
            for (name, value) in limits.iter().filter_map(|(n, v)| Some((n, (*v)?))) {
                let _ = write!(text, ", {name} {value}");
            }
            if let Some(budget) = l.max_budget {
                let _ = write!(text, ", budget ${budget}");
                if let Some(period) = l.budget_duration {
                    let _ = write!(text, " per {}s", period.as_secs());
                }
            }
            if !k.tags.is_empty() {
                let _ = write!(text, ", tags [{}]", k.tags.join(", "));
            }
            if let Some(policy) = &k.policy {
                let _ = write!(text, ", policy {policy}");
            }
            if let Some(servers) = &k.mcp_servers {
                let _ = write!(text, ", mcp servers [{}]", servers.join(", "));
            }
            if !k.allowed_cache_controls.is_empty() {
                let _ = write!(text, ", cache controls [{}]", k.allowed_cache_controls.join(", "));
            }
            line(out, format_args!("{text}"));
        }
    }

    /// The MCP servers, each with its transport, when there are any.
    fn write_mcp(&self, out: &mut String) {
        if self.mcp.servers.is_empty() {
            return;
        }
        let servers: Vec<String> = self
            .mcp
            .servers
            .iter()
            .map(|s| {
                let transport = match s.transport {
                    crate::McpTransport::Http { .. } => "http",
                    crate::McpTransport::Sse { .. } => "sse",
                    crate::McpTransport::Stdio { .. } => "stdio",
                };
                match s.prefix == s.name {
                    true => format!("{} {transport}", s.name),
                    false => format!("{} {transport} as {}", s.name, s.prefix),
                }
            })
            .collect();
        line(out, format_args!("mcp servers: {} ({})", servers.len(), servers.join(", ")));
    }

    /// One line per policy (residency, lists, caps) and per auto model (its pool).
    fn write_policies(&self, out: &mut String) {
        if !self.policies.is_empty() {
            let default = self.default_policy.as_deref().map_or(String::new(), |d| format!(" (default {d})"));
            line(out, format_args!("policies: {}{default}", self.policies.len()));
            for p in &self.policies {
                line(out, format_args!("  {}: {}", p.id, policy_line(p)));
            }
        }
        for r in &self.policy_routers {
            line(out, format_args!("policy router {}: pool [{}]", r.model_name, r.pool.join(", ")));
        }
        for r in &self.complexity_routers {
            line(out, format_args!("complexity router {}: {}", r.name, complexity_line(r)));
        }
    }

    /// The entries that do not serve here: `pointwork check --strict` fails on any.
    fn write_left_out(&self, out: &mut String) {
        if self.left_out.is_empty() {
            return;
        }
        line(out, format_args!("left out: {}", self.left_out.len()));
        for l in &self.left_out {
            line(out, format_args!("  {} ({} → {}): {}", l.source, l.model_name, l.model, l.because));
        }
    }

    fn write_files(&self, out: &mut String) {
        if self.files.is_empty() {
            return;
        }
        let names: Vec<String> = self.files.iter().map(|f| f.display().to_string()).collect();
        line(out, format_args!("files: {}", names.join(", ")));
    }

    fn write_groups(&self, out: &mut String) {
        // Groups in order of first appearance, as the snapshot orders them.
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, d) in self.deployments.iter().enumerate() {
            match groups.iter_mut().find(|(name, _)| *name == d.model_name) {
                Some((_, members)) => members.push(i),
                None => groups.push((&d.model_name, vec![i])),
            }
        }
        line(out, format_args!("model groups: {}, deployments: {}", groups.len(), self.deployments.len()));
        let rows: Vec<[String; 5]> = self.deployments.iter().map(row).collect();
        // The last column (details) is not padded.
        let mut widths = [0usize; 4];
        for r in &rows {
            for (w, cell) in widths.iter_mut().zip(r.iter()) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for (name, members) in &groups {
            line(out, format_args!("  {name}"));
            for &i in members {
                let r = &rows[i];
                let mut text = String::from("    ");
                for (cell, w) in r.iter().zip(widths) {
                    let _ = write!(text, "{cell:<w$}  ");
                }
                text.push_str(&r[4]);
                line(out, format_args!("{}", text.trim_end()));
            }
        }
    }

    fn write_router(&self, out: &mut String) {
        let r = &self.router;
        let allowed_fails = r.allowed_fails.map_or("not set".to_string(), |n| n.to_string());
        let stream_timeout = r.stream_timeout.map_or("= timeout".to_string(), secs);
        line(
            out,
            format_args!(
                "router: {}{}, num_retries {}, allowed_fails {allowed_fails}, cooldown_time {}{}, \
                 timeout {}, stream_timeout {stream_timeout}, pre-call checks {}{}",
                strategy_name(r.routing_strategy),
                match r.routing_strategy {
                    RoutingStrategy::LatencyBased => format!(" (lowest_latency_buffer {})", r.lowest_latency_buffer),
                    _ => String::new(),
                },
                r.num_retries,
                secs(r.cooldown_time),
                if r.disable_cooldowns { " (cooldowns disabled)" } else { "" },
                secs(r.timeout),
                if r.enable_pre_call_checks { "on" } else { "off" },
                if r.enable_health_check_routing {
                    format!(
                        ", health-check routing on (results stale after {})",
                        secs(r.health_check_staleness_threshold)
                    )
                } else {
                    String::new()
                },
            ),
        );
    }

    /// The best-value walk, when on: its rules (wildcard or pinned) and where telemetry comes from.
    fn write_pareto(&self, out: &mut String) {
        let Some(p) = &self.pareto else { return };
        let built_in =
            p.rules.len() == 1 && p.rules[0].0 == DEFAULT_RULE_MODEL && p.rules[0].1 == ParetoRule::built_in();
        let rules: Vec<String> = p
            .rules
            .iter()
            .map(|(key, rule)| format!("{key} {}", if rule.wildcard { "wildcard" } else { "pinned" }))
            .collect();
        let count = if built_in { "the built-in rule".to_string() } else { format!("{} rules", rules.len()) };
        line(
            out,
            format_args!(
                "openrouter best-value walk: {count}: {}; telemetry {} every {}",
                rules.join(", "),
                p.telemetry.base_url,
                secs(p.telemetry.poll_interval)
            ),
        );
    }

    fn write_gateway(&self, out: &mut String, tls_seconds_left: Option<i64>) {
        let g = &self.gateway;
        let shards = g.shards.map_or("one per core".to_string(), |n| n.to_string());
        line(out, format_args!("gateway: listen {}, shards {shards}, io_driver {}", g.listen, g.io_driver.name()));
        if let Some(tls) = &g.tls {
            line(out, format_args!("  {}", tls_line(tls, tls_seconds_left)));
        }
        line(
            out,
            format_args!(
                "  limits: max_header_bytes {}, max_headers {}, max_body_bytes {}",
                g.limits.max_header_bytes, g.limits.max_headers, g.limits.max_body_bytes
            ),
        );
        let t = &g.timeouts;
        line(
            out,
            format_args!(
                "  timeouts: connect {}, keepalive_idle {}, upstream_idle {}",
                secs(t.connect),
                secs(t.keepalive_idle),
                secs(t.upstream_idle)
            ),
        );
        let log = match &g.access_log {
            AccessLogTarget::Off => "off".to_string(),
            AccessLogTarget::Stdout => "stdout".to_string(),
            AccessLogTarget::File(path) => path.display().to_string(),
        };
        line(out, format_args!("  drain_timeout {}, access_log {log}", secs(g.drain_timeout)));
        let h = &g.health_checks;
        let probes = if h.background || self.router.enable_health_check_routing { "on" } else { "off" };
        let groups = h.model_groups.as_ref().map_or_else(|| "all groups".to_string(), |g| g.join(", "));
        line(
            out,
            format_args!(
                "  health checks {probes}: every {} ({groups}), timeout {}, max_tokens {}",
                secs(h.interval),
                secs(h.timeout),
                h.max_tokens
            ),
        );
    }

    /// The response cache on one line: store, TTL, namespace, mode, what it caches.
    fn write_cache(&self, out: &mut String) {
        let Some(cache) = &self.cache else { return };
        let store = match cache.store {
            CacheStore::Local => "local (in memory)",
            CacheStore::Redis => "redis (the cluster's)",
        };
        let mode = match cache.mode {
            CacheMode::DefaultOn => "default_on",
            CacheMode::DefaultOff => "default_off",
        };
        let s = &cache.surfaces;
        let surfaces: Vec<&str> =
            [(s.chat, "chat"), (s.embeddings, "embeddings"), (s.messages, "messages"), (s.responses, "responses")]
                .iter()
                .filter_map(|(on, name)| on.then_some(*name))
                .collect();
        let max_messages = cache.max_messages.map_or_else(|| "no limit".to_string(), |n| n.to_string());
        line(
            out,
            format_args!(
                "cache: {store}, ttl {}, namespace {}, mode {mode}, caches {}, max_messages {max_messages}",
                secs(cache.ttl),
                cache.namespace.as_deref().unwrap_or("none"),
                surfaces.join(", "),
            ),
        );
    }

    /// Where Redis is (never its password) and how this instance uses it; nothing without Redis.
    fn write_cluster(&self, out: &mut String) {
        if let Some(why) = &self.cluster_off {
            line(out, format_args!("cluster: off ({why})"));
            return;
        }
        let Some(cl) = &self.gateway.cluster else { return };
        line(
            out,
            format_args!(
                "cluster: Redis at {} ({}), instance {}, key prefix {}, sync every {}{}",
                cl.redis.display(),
                cl.named_by,
                cl.instance.as_deref().unwrap_or("auto"),
                cl.key_prefix,
                secs(cl.sync_interval),
                match cl.health_checks {
                    HealthCheckSharing::EveryInstance => "",
                    HealthCheckSharing::OneInstance => ", health checks by one instance at a time",
                }
            ),
        );
    }
}

/// `tls: certificate /etc/pw/cert.pem (expires in 83 days), client certificates required
/// (client_ca /etc/pw/ca.pem)`; the variables' names when they named the files.
fn tls_line(tls: &TlsSettings, seconds_left: Option<i64>) -> String {
    let mut notes = Vec::new();
    if let Some(left) = seconds_left {
        notes.push(expiry(left));
    }
    if tls.origin == TlsOrigin::Environment {
        notes.push(format!("from {} and {}", tls.origin.cert_name(), tls.origin.key_name()));
    }
    let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
    let callers = match &tls.client_ca {
        Some(ca) => format!("client certificates required (client_ca {})", ca.display()),
        None => "no client certificates asked for".to_string(),
    };
    format!("tls: certificate {}{notes}, key {}, {callers}", tls.cert.display(), tls.key.display())
}

/// `expires in 83 days`, `expires in 5 hours`, `expired 2 days ago`.
fn expiry(seconds_left: i64) -> String {
    const DAY: i64 = 86_400;
    match seconds_left {
        s if s <= 0 => format!("expired {} days ago", -s / DAY),
        s if s < DAY => format!("expires in {} hours", s / 3_600),
        s => format!("expires in {} days", s / DAY),
    }
}

/// id, provider, upstream model, api_base, then the optional details.
fn row(d: &Deployment) -> [String; 5] {
    let mut details = Vec::new();
    if let Some(w) = d.weight {
        details.push(format!("weight {w}"));
    }
    if let Some(o) = d.order {
        details.push(format!("order {o}"));
    }
    if let Some(rpm) = d.rpm {
        details.push(format!("rpm {rpm}"));
    }
    if let Some(tpm) = d.tpm {
        details.push(format!("tpm {tpm}"));
    }
    if let Some(p) = &d.policy {
        details.extend(endpoint_details(p, d.region_name.as_deref()));
    }
    details.push(format!("wire {}", d.dialect().name()));
    match (&d.auth, d.api_key.as_deref(), d.azure_ad_token.as_deref()) {
        (Some(auth), _, _) => details.push(format!("auth {}", auth.kind())),
        (None, None, Some(token)) => details.push(format!("token {}", redact(token))),
        (None, key, _) => details.push(format!("key {}", key.map_or("none".to_string(), redact))),
    }
    [d.id.clone(), d.provider.prefix().to_string(), d.upstream_model.clone(), d.api_base.clone(), details.join(", ")]
}

/// `SIMPLE [a, b], MEDIUM [c], COMPLEX (→ default), …; default c; classifier heuristic; shuffle`.
fn complexity_line(r: &RouterConfig) -> String {
    let tiers: Vec<String> = Tier::ALL
        .into_iter()
        .zip(&r.tiers)
        .map(|(tier, pool)| match (pool.is_empty(), &r.default_model) {
            (false, _) => format!("{tier} [{}]", pool.join(", ")),
            (true, Some(_)) => format!("{tier} (default_model)"),
            (true, None) => format!("{tier} (MEDIUM's)"),
        })
        .collect();
    let mut parts = vec![tiers.join(", ")];
    if let Some(default) = &r.default_model {
        parts.push(format!("default_model {default}"));
    }
    let classifier = match &r.llm {
        Some(llm) => format!("classifier llm {} (timeout {})", llm.model, secs(llm.timeout)),
        None => "classifier heuristic".to_string(),
    };
    let fallback = match (r.fallback, &r.llm) {
        (_, None) => "",
        (ClassifierFallback::Heuristic, Some(_)) => ", falls back to heuristic",
        (ClassifierFallback::DefaultModel, Some(_)) => ", falls back to default_model",
    };
    parts.push(format!("{classifier}{fallback}"));
    if !r.classifier.keyword_tier_rules.is_empty() {
        parts.push(format!("{} keyword rules", r.classifier.keyword_tier_rules.len()));
    }
    parts.push(format!("tier_selection {}", r.selection.as_str()));
    if r.session_affinity {
        parts.push(format!("session affinity {}", secs(r.session_ttl)));
    }
    parts.join("; ")
}

/// `eu_owned_eu_operated in de, fr; providers deny [x]; max $5 per 1M tokens`.
fn policy_line(p: &Policy) -> String {
    let r = &p.residency_allowed;
    let classes: Vec<&str> = r.classes.iter().map(|c| c.as_str()).collect();
    let regions: Vec<&str> = r.regions.iter().map(|r| &**r).collect();
    let regions = if regions.is_empty() { "any region".to_string() } else { regions.join(", ") };
    let mut parts = vec![format!("{} in {regions}", classes.join(", "))];
    let lists = [
        ("providers allow", &p.providers_allow),
        ("providers deny", &p.providers_deny),
        ("models allow", &p.models_allow),
        ("models deny", &p.models_deny),
        ("data classes", &p.data_classes_allowed),
    ];
    for (name, list) in lists.into_iter().filter(|(_, l)| !l.is_empty()) {
        let names: Vec<&str> = list.iter().map(|n| &**n).collect();
        parts.push(format!("{name} [{}]", names.join(", ")));
    }
    if p.allow_partner_endpoints {
        parts.push("partners allowed".to_string());
    }
    if let Some(cap) = p.max_usd_per_1m {
        parts.push(format!("max ${cap} per 1M tokens"));
    }
    if let Some(budget) = p.max_usd_per_day {
        parts.push(format!("max ${budget} per day"));
    }
    if let Some(days) = p.retention {
        parts.push(format!("retention {days}"));
    }
    parts.join("; ")
}

/// `eu_owned_eu_operated @ de-ber`, then what is not the default: kind, status, partner.
/// `region_name`: the region when `model_info.region` does not say.
fn endpoint_details(p: &PolicyAttrs, region_name: Option<&str>) -> Vec<String> {
    let class = p.class.map_or("catalogue_unknown", |c| c.as_str());
    let region = p.region.as_deref().or(region_name).unwrap_or("no region");
    let mut details = vec![format!("{class} @ {region}")];
    if p.kind != EndpointKind::Hosted {
        details.push(p.kind.as_str().to_string());
    }
    if let Some(status) = p.status.as_deref().filter(|s| *s != "up") {
        details.push(format!("status {status}"));
    }
    if p.partner {
        details.push("partner".to_string());
    }
    details
}

fn secs(d: Duration) -> String {
    format!("{d:?}")
}

fn line(out: &mut String, args: std::fmt::Arguments) {
    // Writing to a String cannot fail.
    let _ = out.write_fmt(args);
    out.push('\n');
}
