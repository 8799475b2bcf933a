//! The pick's conformance suite (`docs/routing.md`, issue 5): one case per rule and edge case
//! of the filter chain, table-driven, without sockets. Each case gives deployments (group `g`),
//! settings, the request's facts, the shard's state and the attempt (failed, excluded, order),
//! and expects either the set of deployments that can win (over many rng seeds) with the
//! rejections in chain order — the same for every seed — or the error's text and status.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use pointwork_core::{
    pick, CooldownStarted, Deployment, DeploymentIdx, Event, Failure, Param, PickRequest, Provider, RequestFacts,
    RequestParams, Rng, RouteKind, RouterSettings, Snapshot, State,
};

// ---- the table's vocabulary ----

/// A deployment of group `g`.
#[derive(Clone)]
struct D(Deployment);

fn d(id: &str) -> D {
    D(Deployment::new(id, "g", Provider::OpenAi, "m", "http://127.0.0.1:1/v1"))
}

impl D {
    /// A pass-through deployment (`model: "*"`) of group `*` instead of `g`.
    fn pass_through(mut self) -> D {
        self.0.pass_through = true;
        self.0.model_name = "*".into();
        self
    }
    fn provider(mut self, p: Provider) -> D {
        self.0.provider = p;
        self
    }
    fn blocked(mut self) -> D {
        self.0.blocked = true;
        self
    }
    fn vision(mut self, v: bool) -> D {
        self.0.supports_vision = Some(v);
        self
    }
    fn order(mut self, o: u32) -> D {
        self.0.order = Some(o);
        self
    }
    fn tags(mut self, t: &[&str]) -> D {
        self.0.tags = t.iter().map(|s| s.to_string()).collect();
        self
    }
    fn region(mut self, r: &str) -> D {
        self.0.region_name = Some(r.into());
        self
    }
    fn input_window(mut self, n: u64) -> D {
        self.0.max_input_tokens = Some(n);
        self
    }
    fn total_window(mut self, n: u64) -> D {
        self.0.max_tokens = Some(n);
        self
    }
    fn declines(mut self, p: Param) -> D {
        self.0.unsupported_params.insert(p);
        self
    }
}

#[derive(Clone, Copy, Default)]
struct S {
    health: bool,
    policy: bool,
    pre_call: bool,
    tags: bool,
    match_all: bool,
    session_affinity: bool,
    /// An OpenAI budget of one dollar a day.
    openai_budget: bool,
}

fn s() -> S {
    S::default()
}

impl S {
    fn health(self) -> S {
        S { health: true, ..self }
    }
    fn policy(self) -> S {
        S { policy: true, ..self }
    }
    fn pre_call(self) -> S {
        S { pre_call: true, ..self }
    }
    fn tags(self) -> S {
        S { tags: true, ..self }
    }
    fn match_all(self) -> S {
        S { tags: true, match_all: true, ..self }
    }
    fn session_affinity(self) -> S {
        S { session_affinity: true, ..self }
    }
    fn openai_budget(self) -> S {
        S { openai_budget: true, ..self }
    }
    fn build(self) -> RouterSettings {
        let kinds = pointwork_core::AffinityKinds { session: self.session_affinity, deployment: false };
        RouterSettings {
            affinity: pointwork_core::AffinitySettings { all_groups: kinds, ..Default::default() },
            provider_budgets: if self.openai_budget {
                vec![pointwork_core::ProviderBudget {
                    provider: Provider::OpenAi,
                    budget_limit: 1.0,
                    time_period: Duration::from_secs(86_400),
                }]
            } else {
                Vec::new()
            },
            enable_health_check_routing: self.health,
            allowed_fails_policy: self.policy.then(|| {
                let mut p = pointwork_core::AllowedFailsPolicy::default();
                p.set("RateLimitErrorAllowedFails", 3);
                p
            }),
            enable_pre_call_checks: self.pre_call,
            enable_tag_filtering: self.tags,
            tag_filtering_match_any: !self.match_all,
            ..RouterSettings::default()
        }
    }
}

/// The request's facts.
#[derive(Clone)]
struct F(RequestFacts);

fn chat() -> F {
    F(RequestFacts::new(RouteKind::ChatCompletions, "g".into()))
}

fn embeddings() -> F {
    F(RequestFacts::new(RouteKind::Embeddings, "g".into()))
}

impl F {
    fn tokens(mut self, n: u64) -> F {
        self.0.estimated_prompt_tokens = n;
        self
    }
    fn max_tokens(mut self, n: u64) -> F {
        self.0.max_tokens = Some(n);
        self
    }
    fn image(mut self) -> F {
        self.0.has_image = true;
        self
    }
    fn param(mut self, p: Param) -> F {
        self.0.params.insert(p);
        self
    }
    fn tags(mut self, t: &[&str]) -> F {
        self.0.tags = t.iter().map(|s| s.to_string()).collect();
        self
    }
    fn region(mut self, r: &str) -> F {
        self.0.allowed_model_region = Some(r.into());
        self
    }
    fn session(mut self, id: &str) -> F {
        self.0.affinity.session = Some(pointwork_core::affinity_hash(id.as_bytes()));
        self
    }
}

/// The shard's state and the attempt.
#[derive(Clone, Copy, Default)]
struct St {
    cooling: &'static [&'static str],
    unhealthy: &'static [&'static str],
    failed: &'static [&'static str],
    excluded: &'static [&'static str],
    order: Option<u32>,
    model: Option<&'static str>,
    /// The deployment the request's session is pinned to.
    pinned: Option<&'static str>,
    /// Dollars OpenAI spent this period.
    openai_spend: f64,
}

fn st() -> St {
    St::default()
}

impl St {
    fn cooling(self, ids: &'static [&'static str]) -> St {
        St { cooling: ids, ..self }
    }
    fn unhealthy(self, ids: &'static [&'static str]) -> St {
        St { unhealthy: ids, ..self }
    }
    fn failed(self, ids: &'static [&'static str]) -> St {
        St { failed: ids, ..self }
    }
    fn excluded(self, ids: &'static [&'static str]) -> St {
        St { excluded: ids, ..self }
    }
    fn order(self, o: u32) -> St {
        St { order: Some(o), ..self }
    }
    fn model(self, m: &'static str) -> St {
        St { model: Some(m), ..self }
    }
    fn pinned(self, id: &'static str) -> St {
        St { pinned: Some(id), ..self }
    }
    fn openai_spent(self, dollars: f64) -> St {
        St { openai_spend: dollars, ..self }
    }
}

enum Expect {
    /// The deployments that can win, and each rejection `(id, reason)` in chain order.
    Winners(&'static [&'static str], &'static [(&'static str, &'static str)]),
    /// The error's status and its whole text.
    Error(u16, &'static str),
}

use Expect::{Error, Winners};

struct Case {
    name: &'static str,
    deployments: Vec<D>,
    settings: S,
    facts: F,
    state: St,
    expect: Expect,
}

fn case(name: &'static str, deployments: Vec<D>, settings: S, facts: F, state: St, expect: Expect) -> Case {
    Case { name, deployments, settings, facts, state, expect }
}

const NO_DEPLOYMENTS: &str = "No deployments available for selected model";

// ---- the table ----

fn cases() -> Vec<Case> {
    use Provider::*;
    vec![
        // 1. Route capability.
        case("embeddings skip a chat-only provider", vec![d("a"), d("b").provider(Groq)], s(), embeddings(), st(),
            Winners(&["a"], &[("b", "route_unsupported")])),
        case("embeddings skip deepseek and openrouter", vec![d("a").provider(OpenRouter), d("b").provider(DeepSeek), d("c").provider(Mistral)], s(), embeddings(), st(),
            Winners(&["c"], &[("a", "route_unsupported"), ("b", "route_unsupported")])),
        case("embeddings serve on hosted_vllm, together_ai, fireworks_ai", vec![d("a").provider(HostedVllm), d("b").provider(TogetherAi), d("c").provider(FireworksAi)], s(), embeddings(), st(),
            Winners(&["a", "b", "c"], &[])),
        case("route capability fails open when no provider serves the route", vec![d("a").provider(Groq), d("b").provider(DeepSeek)], s(), embeddings(), st(),
            Winners(&["a", "b"], &[])),
        case("chat goes to every provider", vec![d("a").provider(Groq), d("b").provider(OpenRouter)], s(), chat(), st(),
            Winners(&["a", "b"], &[])),
        case("route capability runs before cooldowns", vec![d("a").provider(Groq), d("b"), d("c")], s(), embeddings(), st().cooling(&["b"]),
            Winners(&["c"], &[("a", "route_unsupported"), ("b", "cooldown")])),
        case("route capability's fail-open looks only at what is left when it runs", vec![d("a").provider(Groq), d("b")], s(), embeddings(), st().cooling(&["b"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=False, cooldown_list=['b']")),
        // 0. Pass-through (it runs first): a name goes to its provider's deployment.
        case("a pass-through group keeps the requested name's provider", vec![d("a").pass_through(), d("b").provider(Anthropic).pass_through()], s(), chat(), st().model("claude-3-5-haiku"),
            Winners(&["b"], &[("a", "other_provider")])),
        case("a pass-through group without the name's provider", vec![d("a").pass_through()], s(), chat(), st().model("groq/llama"),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=groq/llama. pre-call-checks=False, cooldown_list=[]. the model group passes names through to their provider, and none of its deployments is groq's: set groq's key in the gateway's environment (see docs/configuration.md, pass-through)")),
        // 2. Health checks.
        case("an unhealthy deployment is dropped", vec![d("a"), d("b")], s().health(), chat(), st().unhealthy(&["a"]),
            Winners(&["b"], &[("a", "unhealthy")])),
        case("health fails open when every deployment is unhealthy", vec![d("a"), d("b")], s().health(), chat(), st().unhealthy(&["a", "b"]),
            Winners(&["a", "b"], &[])),
        case("health results count only with health-check routing", vec![d("a"), d("b")], s(), chat(), st().unhealthy(&["a"]),
            Winners(&["a", "b"], &[])),
        case("an unhealthy deployment cooling down is reported unhealthy", vec![d("a"), d("b")], s().health(), chat(), st().unhealthy(&["a"]).cooling(&["a"]),
            Winners(&["b"], &[("a", "unhealthy")])),
        // 3. Cooldowns.
        case("a cooling deployment is dropped", vec![d("a"), d("b")], s(), chat(), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown")])),
        case("all cooling: no deployments, with the list and the wait", vec![d("a"), d("b")], s(), chat(), st().cooling(&["a", "b"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=False, cooldown_list=['a', 'b']")),
        case("health routing + allowed_fails_policy ignore cooldowns that would leave nothing", vec![d("a"), d("b")], s().health().policy(), chat(), st().cooling(&["a", "b"]),
            Winners(&["a", "b"], &[])),
        case("the cooldown fail-open needs health-check routing", vec![d("a")], s().policy(), chat(), st().cooling(&["a"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=False, cooldown_list=['a']")),
        case("the cooldown fail-open needs an allowed_fails_policy", vec![d("a")], s().health(), chat(), st().cooling(&["a"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=False, cooldown_list=['a']")),
        case("the cooldown fail-open keeps dropping while another remains", vec![d("a"), d("b")], s().health().policy(), chat(), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown")])),
        // 5. Callback filters: the provider budget limiter.
        case("a provider over its budget is dropped", vec![d("a"), d("b").provider(Groq)], s().openai_budget(), chat(), st().openai_spent(1.5),
            Winners(&["b"], &[("a", "provider_budget")])),
        case("a provider under its budget stays", vec![d("a"), d("b").provider(Groq)], s().openai_budget(), chat(), st().openai_spent(0.5),
            Winners(&["a", "b"], &[])),
        case("spend without a budget limits nothing", vec![d("a")], s(), chat(), st().openai_spent(100.0),
            Winners(&["a"], &[])),
        case("every provider over budget: the error says so", vec![d("a"), d("b")], s().openai_budget(), chat(), st().openai_spent(1.0),
            Error(429, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. the last deployment was removed by filter provider_budget")),
        // 5. Callback filters: session affinity.
        case("a pinned session keeps only its deployment", vec![d("a"), d("b"), d("c")], s().session_affinity(), chat().session("s1"), st().pinned("b"),
            Winners(&["b"], &[("a", "affinity_pinned"), ("c", "affinity_pinned")])),
        case("a pinned deployment cooling down lets the session move", vec![d("a"), d("b")], s().session_affinity(), chat().session("s1"), st().pinned("b").cooling(&["b"]),
            Winners(&["a"], &[("b", "cooldown")])),
        case("a pin counts only with session affinity on", vec![d("a"), d("b")], s(), chat().session("s1"), st().pinned("b"),
            Winners(&["a", "b"], &[])),
        case("a request without a session id is not pinned", vec![d("a"), d("b")], s().session_affinity(), chat(), st().pinned("b"),
            Winners(&["a", "b"], &[])),
        case("a blocked pinned deployment lets the session move", vec![d("a"), d("b").blocked()], s().session_affinity(), chat().session("s1"), st().pinned("b"),
            Winners(&["a"], &[("b", "blocked")])),
        case("affinity runs before the pre-call checks (chain order)", vec![d("a").input_window(10), d("b").input_window(100)], s().session_affinity().pre_call(), chat().session("s1").tokens(50), st().pinned("a"),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=True, cooldown_list=[]. pre-call check context_window removed the last deployment: estimated 50 prompt tokens, largest context window available 100 tokens")),
        // 4. Blocked.
        case("a blocked deployment is dropped", vec![d("a").blocked(), d("b")], s(), chat(), st(),
            Winners(&["b"], &[("a", "blocked")])),
        case("every deployment blocked: the error says so", vec![d("a").blocked(), d("b").blocked()], s(), chat(), st(),
            Error(429, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. every deployment of the model group is blocked (model_info.blocked)")),
        case("blocked never fails open", vec![d("a").blocked()], s(), chat(), st(),
            Error(429, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. every deployment of the model group is blocked (model_info.blocked)")),
        case("blocked removing the last after cooldowns names the filter", vec![d("a").blocked(), d("b")], s(), chat(), st().cooling(&["b"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=False, cooldown_list=['b']. the last deployment was removed by filter blocked")),
        case("a blocked deployment is still served by its id", vec![d("a").blocked(), d("b")], s(), chat(), st().model("a"),
            Winners(&["a"], &[])),
        // 6. Pre-call checks: context window.
        case("context windows count only with pre-call checks", vec![d("a").input_window(100)], s(), chat().tokens(1000), st(),
            Winners(&["a"], &[])),
        case("a prompt over the input window drops the deployment", vec![d("a").input_window(100), d("b").input_window(10_000)], s().pre_call(), chat().tokens(1000), st(),
            Winners(&["b"], &[("a", "context_window")])),
        case("an unknown window keeps the deployment", vec![d("a"), d("b").input_window(10)], s().pre_call(), chat().tokens(1000), st(),
            Winners(&["a"], &[("b", "context_window")])),
        case("a prompt that exactly fits stays", vec![d("a").input_window(1000)], s().pre_call(), chat().tokens(1000), st(),
            Winners(&["a"], &[])),
        case("an input window ignores max_tokens", vec![d("a").input_window(1000)], s().pre_call(), chat().tokens(900).max_tokens(200), st(),
            Winners(&["a"], &[])),
        case("a total window counts max_tokens", vec![d("a").total_window(1000), d("b").total_window(1100)], s().pre_call(), chat().tokens(900).max_tokens(200), st(),
            Winners(&["b"], &[("a", "context_window")])),
        case("max_input_tokens wins over max_tokens", vec![d("a").input_window(950).total_window(1000)], s().pre_call(), chat().tokens(900).max_tokens(200), st(),
            Winners(&["a"], &[])),
        case("context window emptied: the error names the check, the estimate and the largest window", vec![d("a").total_window(1000), d("b").input_window(500)], s().pre_call(), chat().tokens(900).max_tokens(200), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=True, cooldown_list=[]. pre-call check context_window removed the last deployment: estimated 900 prompt tokens + max_tokens 200, largest context window available 1000 tokens")),
        // 6. Pre-call checks: region.
        case("allowed_model_region keeps the deployments in that region", vec![d("a").region("eu-west-1"), d("b").region("us-east-1")], s().pre_call(), chat().region("eu"), st(),
            Winners(&["a"], &[("b", "region")])),
        case("a deployment without region_name is outside every region", vec![d("a"), d("b").region("eu-central-1")], s().pre_call(), chat().region("eu"), st(),
            Winners(&["b"], &[("a", "region")])),
        case("Azure and GCP region names count as eu or us", vec![d("a").region("westeurope"), d("b").region("europe-west4"), d("c").region("eastus2")], s().pre_call(), chat().region("eu"), st(),
            Winners(&["a", "b"], &[("c", "region")])),
        case("a full region name matches itself", vec![d("a").region("us-east-1"), d("b").region("us-west-2")], s().pre_call(), chat().region("us-west-2"), st(),
            Winners(&["b"], &[("a", "region")])),
        case("no allowed_model_region: every region", vec![d("a").region("eu-west-1"), d("b")], s().pre_call(), chat(), st(),
            Winners(&["a", "b"], &[])),
        case("regions count only with pre-call checks", vec![d("a").region("us-east-1")], s(), chat().region("eu"), st(),
            Winners(&["a"], &[])),
        case("region emptied: the error names the region", vec![d("a").region("us-east-1")], s().pre_call(), chat().region("eu"), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=True, cooldown_list=[]. pre-call check region removed the last deployment: no deployment in allowed_model_region='eu'")),
        // 6. Pre-call checks: unsupported params.
        case("a deployment declining tools is dropped for a request with tools", vec![d("a").declines(Param::Tools), d("b")], s().pre_call(), chat().param(Param::Tools), st(),
            Winners(&["b"], &[("a", "unsupported_params")])),
        case("params not declared are taken", vec![d("a")], s().pre_call(), chat().param(Param::Tools).param(Param::ResponseSchema), st(),
            Winners(&["a"], &[])),
        case("a request without the param goes anywhere", vec![d("a").declines(Param::Tools)], s().pre_call(), chat().param(Param::ReasoningEffort), st(),
            Winners(&["a"], &[])),
        case("unsupported params emptied: the error names the params", vec![d("a").declines(Param::Tools).declines(Param::ResponseSchema), d("b").declines(Param::Tools)], s().pre_call(), chat().param(Param::Tools).param(Param::ResponseSchema), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=True, cooldown_list=[]. pre-call check unsupported_params removed the last deployment: no deployment takes tools, response_format")),
        case("params count only with pre-call checks", vec![d("a").declines(Param::Tools)], s(), chat().param(Param::Tools), st(),
            Winners(&["a"], &[])),
        case("the pre-call checks run context window, region, params", vec![d("a").input_window(10).declines(Param::Tools), d("b").region("us-east-1").declines(Param::Tools), d("c").region("eu-west-1").declines(Param::Tools), d("d").region("eu-west-1")], s().pre_call(), chat().tokens(100).region("eu").param(Param::Tools), st(),
            Winners(&["d"], &[("a", "context_window"), ("b", "region"), ("c", "unsupported_params")])),
        // 7. Tags.
        case("tags count only with enable_tag_filtering", vec![d("a").tags(&["x"]), d("b")], s(), chat().tags(&["y"]), st(),
            Winners(&["a", "b"], &[])),
        case("a tagged request keeps the deployments with its tag", vec![d("a").tags(&["x"]), d("b").tags(&["y"]), d("c")], s().tags(), chat().tags(&["x"]), st(),
            Winners(&["a"], &[("b", "tag_mismatch"), ("c", "tag_mismatch")])),
        case("match any: any of the request's tags", vec![d("a").tags(&["x"]), d("b").tags(&["y"]), d("c").tags(&["z"])], s().tags(), chat().tags(&["x", "y"]), st(),
            Winners(&["a", "b"], &[("c", "tag_mismatch")])),
        case("match all: every one of the request's tags", vec![d("a").tags(&["x", "y"]), d("b").tags(&["x"])], s().match_all(), chat().tags(&["x", "y"]), st(),
            Winners(&["a"], &[("b", "tag_mismatch")])),
        case("no match: the default deployments serve", vec![d("a").tags(&["x"]), d("b").tags(&["default"])], s().tags(), chat().tags(&["z"]), st(),
            Winners(&["b"], &[("a", "tag_mismatch")])),
        case("a match wins over default", vec![d("a").tags(&["x"]), d("b").tags(&["default"])], s().tags(), chat().tags(&["x"]), st(),
            Winners(&["a"], &[("b", "tag_mismatch")])),
        case("a default deployment that matches serves with the others", vec![d("a").tags(&["x", "default"]), d("b").tags(&["x"]), d("c").tags(&["y"])], s().tags(), chat().tags(&["x"]), st(),
            Winners(&["a", "b"], &[("c", "tag_mismatch")])),
        case("no match and no default: refused with LiteLLM's words", vec![d("a").tags(&["x"]), d("b")], s().tags(), chat().tags(&["z"]), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. Not allowed to access model due to tags configuration, tags=['z']")),
        case("tags compare exactly (case matters)", vec![d("a").tags(&["X"])], s().tags(), chat().tags(&["x"]), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. Not allowed to access model due to tags configuration, tags=['x']")),
        case("an untagged request goes to the default deployments", vec![d("a").tags(&["x"]), d("b").tags(&["default"]), d("c")], s().tags(), chat(), st(),
            Winners(&["b"], &[("a", "tag_not_default"), ("c", "tag_not_default")])),
        case("an untagged request without defaults goes anywhere", vec![d("a").tags(&["x"]), d("b")], s().tags(), chat(), st(),
            Winners(&["a", "b"], &[])),
        case("!tag excludes the deployments carrying it", vec![d("a").tags(&["beta"]), d("b").tags(&["x"]), d("c")], s().tags(), chat().tags(&["!beta"]), st(),
            Winners(&["b", "c"], &[("a", "tag_excluded")])),
        case("&tag requires it", vec![d("a").tags(&["x", "eu"]), d("b").tags(&["x"])], s().tags(), chat().tags(&["x", "&eu"]), st(),
            Winners(&["a"], &[("b", "tag_required")])),
        case("!tag applies to default deployments too", vec![d("a").tags(&["beta", "default"]), d("b").tags(&["default"]), d("c")], s().tags(), chat().tags(&["!beta"]), st(),
            Winners(&["b"], &[("a", "tag_excluded"), ("c", "tag_not_default")])),
        case("exclusions, then requirements, then the match", vec![d("a").tags(&["x", "beta", "eu"]), d("b").tags(&["x"]), d("c").tags(&["y", "eu"]), d("d").tags(&["x", "eu"])], s().tags(), chat().tags(&["x", "!beta", "&eu"]), st(),
            Winners(&["d"], &[("a", "tag_excluded"), ("b", "tag_required"), ("c", "tag_mismatch")])),
        case("&tag nobody carries leaves nothing", vec![d("a").tags(&["x"])], s().tags(), chat().tags(&["&gpu"]), st(),
            Error(400, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. Not allowed to access model due to tags configuration, tags=['&gpu']")),
        case("the tags see only what earlier filters left", vec![d("a").tags(&["x"]), d("b").tags(&["default"])], s().tags(), chat().tags(&["x"]), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown")])),
        // 9. Text-only.
        case("an image skips deployments without vision", vec![d("a").vision(true), d("b"), d("c").vision(false)], s(), chat().image(), st(),
            Winners(&["a"], &[("b", "no_vision"), ("c", "no_vision")])),
        case("text-only fails open when no deployment declares vision", vec![d("a"), d("b").vision(false)], s(), chat().image(), st(),
            Winners(&["a", "b"], &[])),
        case("a request without an image goes anywhere", vec![d("a").vision(false), d("b")], s(), chat(), st(),
            Winners(&["a", "b"], &[])),
        case("text-only fails open on what is left", vec![d("a").vision(true), d("b")], s(), chat().image(), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown")])),
        // 10. Order.
        case("the lowest order serves", vec![d("a").order(1), d("b").order(2)], s(), chat(), st(),
            Winners(&["a"], &[("b", "order_tier")])),
        case("a tier keeps all its members", vec![d("a").order(1), d("b").order(1), d("c").order(2)], s(), chat(), st(),
            Winners(&["a", "b"], &[("c", "order_tier")])),
        case("the lowest order among the survivors", vec![d("a").order(1), d("b").order(2), d("c").order(3)], s(), chat(), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown"), ("c", "order_tier")])),
        case("while any survivor sets an order, one without is dropped", vec![d("a").order(2), d("b")], s(), chat(), st(),
            Winners(&["a"], &[("b", "no_order")])),
        case("no order anywhere: nothing to drop", vec![d("a"), d("b")], s(), chat(), st(),
            Winners(&["a", "b"], &[])),
        case("when every ordered deployment is gone the unordered serve", vec![d("a").order(1), d("b")], s(), chat(), st().cooling(&["a"]),
            Winners(&["b"], &[("a", "cooldown")])),
        case("an order fallback targets its order", vec![d("a").order(1), d("b").order(2), d("c")], s(), chat(), st().order(2),
            Winners(&["b"], &[("c", "no_order"), ("a", "order_tier")])),
        case("an order fallback to an order nobody has leaves nothing", vec![d("a").order(1)], s(), chat(), st().order(3),
            Error(429, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. the last deployment was removed by filter order_tier")),
        case("a retry stays in its tier (order 2 is for order fallbacks)", vec![d("a").order(1), d("b").order(1), d("c").order(2)], s(), chat(), st().failed(&["a", "b"]),
            Winners(&["a", "b"], &[("c", "order_tier")])),
        // 11. Excluded and retry-skipped.
        case("an excluded id is dropped", vec![d("a"), d("b")], s(), chat(), st().excluded(&["a"]),
            Winners(&["b"], &[("a", "excluded")])),
        case("an excluded id is never picked", vec![d("a")], s(), chat(), st().excluded(&["a"]),
            Error(429, "No deployments available for selected model, Try again in 0 seconds. Passed model=g. pre-call-checks=False, cooldown_list=[]. the last deployment was removed by filter excluded")),
        case("a retry skips what failed", vec![d("a"), d("b")], s(), chat(), st().failed(&["a"]),
            Winners(&["b"], &[("a", "retry_skipped")])),
        case("retry-skip fails open", vec![d("a"), d("b")], s(), chat(), st().failed(&["a", "b"]),
            Winners(&["a", "b"], &[])),
        case("excluded, then retry-skipped", vec![d("a"), d("b"), d("c")], s(), chat(), st().excluded(&["a"]).failed(&["b"]),
            Winners(&["c"], &[("a", "excluded"), ("b", "retry_skipped")])),
        case("retry-skip fails open after exclusions", vec![d("a"), d("b")], s(), chat(), st().excluded(&["a"]).failed(&["b"]),
            Winners(&["b"], &[("a", "excluded")])),
        // The chain's order, all at once.
        case("every filter in the spec's order", vec![
                d("a").provider(Groq).order(1).tags(&["x"]),
                d("b").order(1).tags(&["x"]),
                d("c").order(1).tags(&["x"]),
                d("d").order(1).tags(&["x"]).blocked(),
                d("e").order(1).tags(&["x"]).input_window(10),
                d("f").order(1).tags(&["y"]),
                d("g").order(2).tags(&["x"]),
                d("h").order(1).tags(&["x"]),
                d("i").order(1).tags(&["x"]),
                d("j").order(1).tags(&["x"]),
            ], s().health().pre_call().tags(), embeddings().tokens(100).image().tags(&["x"]), st().unhealthy(&["b"]).cooling(&["c"]).excluded(&["i"]).failed(&["j"]),
            Winners(&["h"], &[("a", "route_unsupported"), ("b", "unhealthy"), ("c", "cooldown"), ("d", "blocked"), ("e", "context_window"), ("f", "tag_mismatch"), ("g", "order_tier"), ("i", "excluded"), ("j", "retry_skipped")])),
        // Resolution shortcuts and errors.
        case("a deployment id serves while cooling down", vec![d("a"), d("b")], s(), chat(), st().cooling(&["a"]).model("a"),
            Winners(&["a"], &[])),
        case("an unknown name", vec![d("a")], s(), chat(), st().model("nope"),
            Error(400, "Invalid model name passed in model=nope. Call `/v1/models` to view available models for your key.")),
        case("pre-call-checks=True is said in a cooldown error", vec![d("a")], s().pre_call(), chat(), st().cooling(&["a"]),
            Error(429, "No deployments available for selected model, Try again in 5 seconds. Passed model=g. pre-call-checks=True, cooldown_list=['a']")),
    ]
}

// ---- running a case ----

fn idx(snap: &Snapshot, id: &str) -> DeploymentIdx {
    snap.deployment_by_id(id).unwrap_or_else(|| panic!("no deployment {id}"))
}

/// Builds the snapshot and state of a case; the time at which its cooldowns are live.
fn setup(c: &Case) -> (Snapshot, State, Instant) {
    let deployments = c.deployments.iter().map(|d| d.0.clone()).collect();
    let snap = Snapshot::build(deployments, c.settings.build()).unwrap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    for id in c.state.cooling {
        let started =
            CooldownStarted { idx: idx(&snap, id), until: now + Duration::from_secs(5), cause: Failure::Status(429) };
        state.apply_cooldown(started);
    }
    for id in c.state.unhealthy {
        state.apply(&Event::Health { idx: idx(&snap, id), healthy: false, checked_at: now });
    }
    if c.state.openai_spend > 0.0 {
        state.record_spend(Provider::OpenAi, c.state.openai_spend, now, Duration::from_secs(86_400));
    }
    if let Some(id) = c.state.pinned {
        let group = pointwork_core::GroupIdx(0);
        for key in snap.pin_keys(group, c.facts.0.affinity).into_iter().flatten() {
            state.pin(key, pointwork_core::Pin::new(idx(&snap, id), now + Duration::from_secs(60)), now);
        }
    }
    (snap, state, now)
}

fn run(c: &Case) {
    let (snap, state, now) = setup(c);
    let failed: Vec<DeploymentIdx> = c.state.failed.iter().map(|id| idx(&snap, id)).collect();
    let excluded: Vec<DeploymentIdx> = c.state.excluded.iter().map(|id| idx(&snap, id)).collect();
    let model = c.state.model.unwrap_or("g");
    let req = PickRequest {
        failed: &failed,
        excluded: &excluded,
        order: c.state.order,
        ..PickRequest::new(model, &c.facts.0)
    };
    match &c.expect {
        Winners(winners, rejected) => {
            let mut seen = BTreeSet::new();
            for seed in 0..64 {
                let d = pick(&snap, &state, &req, now, &mut Rng::new(seed))
                    .unwrap_or_else(|e| panic!("{}: expected a winner, got {e}", c.name));
                seen.insert(snap.deployment(d.deployment).id.clone());
                let got: Vec<(String, &str)> =
                    d.rejected.iter().map(|&(i, r)| (snap.deployment(i).id.clone(), r.as_str())).collect();
                let want: Vec<(String, &str)> = rejected.iter().map(|&(i, r)| (i.to_string(), r)).collect();
                assert_eq!(got, want, "{}: rejections", c.name);
            }
            let want: BTreeSet<String> = winners.iter().map(|w| w.to_string()).collect();
            assert_eq!(seen, want, "{}: winners", c.name);
        }
        Error(status, text) => {
            let e = pick(&snap, &state, &req, now, &mut Rng::new(1))
                .map(|d| snap.deployment(d.deployment).id.clone())
                .expect_err(c.name);
            assert_eq!(e.to_string(), *text, "{}", c.name);
            assert_eq!(e.status(), *status, "{}", c.name);
            if text.starts_with(NO_DEPLOYMENTS) {
                assert_eq!(e.is_context_window(), text.contains("context_window"), "{}", c.name);
            }
        }
    }
}

#[test]
fn the_conformance_table() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut names = BTreeSet::new();
    for c in &cases {
        assert!(names.insert(c.name), "duplicate case name {}", c.name);
        run(c);
    }
}

#[test]
fn every_reason_string_is_exercised_by_the_table() {
    let mut used = BTreeSet::new();
    for c in cases() {
        if let Winners(_, rejected) = c.expect {
            used.extend(rejected.iter().map(|(_, r)| *r));
        }
        if let Error(_, text) = c.expect {
            used.extend(pointwork_core::RejectReason::ALL.iter().map(|r| r.as_str()).filter(|r| text.ends_with(r)));
        }
    }
    // The usage limits have their own tests (usage-based routing); every other reason is here.
    let missing: Vec<&str> = pointwork_core::RejectReason::ALL
        .iter()
        .filter(|r| !r.is_usage_limit())
        .map(|r| r.as_str())
        .filter(|r| !used.contains(r))
        .collect();
    assert!(missing.is_empty(), "reasons without a case: {missing:?}");
    let _ = RequestParams::NONE;
}
