//! The policy router's conformance table, part two (`docs/routing.md`, "The policy router"): the
//! score and its ties, the pinned-model errors, the 409 text, the failover order, the route
//! reason and the admission checks. Part one (policy_conformance.rs): the filter steps, the
//! residencies and the overrides.

use pointwork_core::policy::{
    admit, decide, Admission, AdmitRefusal, EndpointKind, Live, Modalities, Modality, Policy, PolicyDecision,
    PolicyEndpoint, PolicyRefusal, PolicyRequest, Residency, SovereigntyClass, TieBreak, MAX_ATTEMPTS,
};
use pointwork_core::DeploymentIdx;

const NON_EU: SovereigntyClass = SovereigntyClass::NonEu;

/// An up, hosted, EU-owned text endpoint in de-ber at $1 per million tokens.
fn ep(id: &str, model: &str) -> PolicyEndpoint {
    let mut e = PolicyEndpoint::new(DeploymentIdx(0), id, model, "acme");
    e.usd_per_1m = Some(1.0);
    e
}

fn with(mut e: PolicyEndpoint, change: impl FnOnce(&mut PolicyEndpoint)) -> PolicyEndpoint {
    change(&mut e);
    e
}

fn eu_policy() -> Policy {
    Policy::new("eu-default")
}

fn ask_residency(name: &str) -> PolicyRequest {
    PolicyRequest { residency: Residency::named(name), ..PolicyRequest::default() }
}

fn no_live(_: usize) -> Live<'static> {
    Live::UNKNOWN
}

fn run<'a>(
    endpoints: &'a [PolicyEndpoint],
    policy: &Policy,
    req: &PolicyRequest,
) -> Result<PolicyDecision<'a>, PolicyRefusal> {
    decide(endpoints, policy, req, &no_live)
}

fn winner(endpoints: &[PolicyEndpoint], policy: &Policy, req: &PolicyRequest) -> String {
    let d = run(endpoints, policy, req).expect("routed");
    endpoints[d.chosen()].id.to_string()
}

// --- The score --------------------------------------------------------------------------------

#[test]
fn the_score_is_the_documented_sum_with_normalised_price_and_latency() {
    let endpoints = [
        with(ep("cheap", "m"), |e| {
            e.usd_per_1m = Some(1.0);
            e.task_fit = vec![("coding".into(), 0.8)];
            e.language_fit = vec![("en".into(), 0.6)];
            e.docs_completeness = 0.9;
            e.sovereignty_bonus = 1.0
        }),
        with(ep("dear", "m"), |e| e.usd_per_1m = Some(3.0)),
        with(ep("mid", "m"), |e| e.usd_per_1m = Some(2.0)),
    ];
    let latency = [Some(100.0), Some(300.0), None];
    let live = |i: usize| Live { latency_ms: latency[i], error_rate: if i == 1 { 0.5 } else { 0.0 }, status: None };
    let req = PolicyRequest { task: Some("coding".into()), language: Some("en".into()), ..PolicyRequest::default() };
    let d = decide(&endpoints, &eu_policy(), &req, &live).unwrap();
    let by_id = |id: &str| *d.ranked.iter().find(|s| &*endpoints[s.endpoint].id == id).unwrap();
    let cheap = by_id("cheap");
    // 0.8×5 + 0.6×3 + 0.9 + 1.0×2 − 0×2 − 0×2 − 0×3
    assert!((cheap.score - (4.0 + 1.8 + 0.9 + 2.0)).abs() < 1e-9, "{cheap:?}");
    let mid = by_id("mid");
    // defaults: 0.5×5 + 0.5×3 + 0.5 + 1.0×2 − 0.5×2 (price) − 1.0×2 (500 ms, the slowest) − 0
    assert_eq!(mid.latency_ms, 500.0);
    assert!((mid.score - (2.5 + 1.5 + 0.5 + 2.0 - 1.0 - 2.0)).abs() < 1e-9, "{mid:?}");
    let dear = by_id("dear");
    // − 1.0×2 (dearest) − 0.5×2 (300 ms of 100..500) − 0.5×3 (error rate)
    assert!((dear.score - (2.5 + 1.5 + 0.5 + 2.0 - 2.0 - 1.0 - 1.5)).abs() < 1e-9, "{dear:?}");
    assert_eq!(d.ranked.iter().map(|s| &*endpoints[s.endpoint].id).collect::<Vec<_>>(), ["cheap", "mid", "dear"]);
    assert_eq!(d.tie_break, TieBreak::Score);
}

#[test]
fn one_survivor_and_equal_values_normalise_to_zero() {
    let endpoints = [ep("a", "m")];
    let d = run(&endpoints, &eu_policy(), &PolicyRequest::default()).unwrap();
    assert_eq!((d.ranked[0].terms.price, d.ranked[0].terms.latency), (0.0, 0.0));
    assert_eq!(d.tie_break, TieBreak::Alone);
}

#[test]
fn an_unpriced_survivor_counts_the_highest_price() {
    let endpoints =
        [with(ep("unpriced", "m"), |e| e.usd_per_1m = None), with(ep("priced", "m"), |e| e.usd_per_1m = Some(4.0))];
    let d = run(&endpoints, &eu_policy(), &PolicyRequest::default()).unwrap();
    assert!(d.ranked.iter().all(|s| s.usd_per_1m == 4.0));
}

#[test]
fn ties_break_on_price_then_latency_then_id() {
    // Equal scores need equal normalised terms: two endpoints alike but for price would differ
    // in score; the price term is 0 for both only when prices are equal. So a tie on score with
    // different prices comes from compensating fits.
    let price_tie = [
        with(ep("b-cheaper", "m"), |e| {
            e.usd_per_1m = Some(1.0);
            e.docs_completeness = 0.5
        }),
        with(ep("a-dearer", "m"), |e| {
            e.usd_per_1m = Some(2.0);
            e.docs_completeness = 0.5 + 2.0 // the price term costs it exactly 2
        }),
    ];
    let d = run(&price_tie, &eu_policy(), &PolicyRequest::default()).unwrap();
    assert_eq!((price_tie[d.chosen()].id.as_ref(), d.tie_break), ("b-cheaper", TieBreak::Price));

    let latency_tie = [ep("b-fast", "m"), with(ep("a-slow", "m"), |e| e.docs_completeness = 0.5 + 2.0)];
    let live = |i: usize| Live { latency_ms: Some(if i == 0 { 100.0 } else { 200.0 }), ..Live::UNKNOWN };
    let d = decide(&latency_tie, &eu_policy(), &PolicyRequest::default(), &live).unwrap();
    assert_eq!((latency_tie[d.chosen()].id.as_ref(), d.tie_break), ("b-fast", TieBreak::Latency));

    let id_tie = [ep("zeta", "m"), ep("alpha", "m"), ep("mu", "m")];
    let d = run(&id_tie, &eu_policy(), &PolicyRequest::default()).unwrap();
    assert_eq!((id_tie[d.chosen()].id.as_ref(), d.tie_break), ("alpha", TieBreak::Id));
    assert_eq!(d.failover_order().map(|i| &*id_tie[i].id).collect::<Vec<_>>(), ["alpha", "mu", "zeta"]);
}

#[test]
fn the_same_request_routes_the_same_way_whatever_the_endpoint_order() {
    let mut endpoints: Vec<PolicyEndpoint> = (0..12).map(|i| ep(&format!("e{i:02}"), "m")).collect();
    let req = PolicyRequest::default();
    let first = winner(&endpoints, &eu_policy(), &req);
    endpoints.reverse();
    assert_eq!(winner(&endpoints, &eu_policy(), &req), first);
    endpoints.rotate_left(5);
    assert_eq!(winner(&endpoints, &eu_policy(), &req), first);
    assert_eq!(first, "e00");
}

// --- A named model is pinned --------------------------------------------------------------------

fn pinned(model: &str) -> PolicyRequest {
    PolicyRequest { model: Some(model.into()), ..PolicyRequest::default() }
}

#[test]
fn a_named_model_is_pinned_and_its_refusal_names_why() {
    let policy = Policy { models_deny: vec!["banned".into()], providers_deny: vec!["shady".into()], ..eu_policy() };
    let endpoints = [
        ep("good", "good-model"),
        ep("other", "other-model"),
        with(ep("cat", "catalogue-model"), |e| e.kind = EndpointKind::CatalogueOnly),
        ep("banned", "banned"),
        with(ep("shady", "shady-model"), |e| e.provider = "shady".into()),
        with(ep("asr", "whisper"), |e| e.modalities = Modalities::of(&[Modality::SpeechRecognition])),
        with(ep("far", "far-model"), |e| e.class = NON_EU),
    ];
    let refusal = |model: &str| run(&endpoints, &policy, &pinned(model)).unwrap_err();
    assert_eq!(refusal("nope"), PolicyRefusal::ModelNotFound("nope".into()));
    assert_eq!(refusal("catalogue-model"), PolicyRefusal::HostedUnavailable("catalogue-model".into()));
    assert_eq!(refusal("banned"), PolicyRefusal::ModelDenied("banned".into()));
    assert_eq!(refusal("shady-model"), PolicyRefusal::ModelDenied("shady-model".into()), "its provider is denied");
    assert_eq!(refusal("whisper"), PolicyRefusal::NotATextModel("whisper".into()));
    // An existing, allowed, text-capable model that residency removes: the 409.
    assert_eq!(
        refusal("far-model"),
        PolicyRefusal::NoEndpoint { residency: "eu-hosted".into(), model: Some("far-model".into()) }
    );
    // Pinned: only its own endpoints compete, and the others are not counted as excluded.
    let d = run(&endpoints, &policy, &pinned("other-model")).unwrap();
    assert_eq!((endpoints[d.chosen()].id.as_ref(), d.rejected.len()), ("other", 0));
    let codes: Vec<&str> =
        ["nope", "catalogue-model", "banned", "whisper", "far-model"].iter().map(|m| refusal(m).code()).collect();
    assert_eq!(
        codes,
        ["model_not_found", "hosted_unavailable", "model_denied", "not_a_text_model", "no_endpoint_for_policy"]
    );
}

#[test]
fn a_model_with_one_hosted_row_among_catalogue_rows_is_not_hosted_unavailable() {
    let endpoints = [
        with(ep("cat", "m"), |e| e.kind = EndpointKind::CatalogueOnly),
        with(ep("down", "m"), |e| e.status = "down".into()),
    ];
    assert_eq!(run(&endpoints, &eu_policy(), &pinned("m")).unwrap_err().code(), "no_endpoint_for_policy");
}

// --- 409 ----------------------------------------------------------------------------------------

#[test]
fn the_409_sentence_names_the_residency_and_the_model() {
    let endpoints = [with(ep("us", "m"), |e| e.class = NON_EU)];
    let auto = run(&endpoints, &eu_policy(), &ask_residency("eu-owned")).unwrap_err();
    assert_eq!(auto.to_string(), "No endpoint satisfies residency eu-owned. Residency is never relaxed silently.");
    assert_eq!(auto.model(), None);
    let named = run(&endpoints, &eu_policy(), &pinned("m")).unwrap_err();
    assert_eq!(
        named.to_string(),
        "No endpoint satisfies residency eu-hosted for model m. Residency is never relaxed silently."
    );
    assert_eq!(named.model(), Some("m"));
    // The rule, not a transient failure: the same request fails the same way again.
    assert_eq!(run(&endpoints, &eu_policy(), &pinned("m")).unwrap_err(), named);
}

#[test]
fn nothing_at_all_is_a_409_too() {
    assert_eq!(run(&[], &eu_policy(), &PolicyRequest::default()).unwrap_err().code(), "no_endpoint_for_policy");
}

// --- Failover -----------------------------------------------------------------------------------

#[test]
fn failover_walks_the_scored_order_inside_the_filtered_set_three_attempts_at_most() {
    let endpoints = [
        with(ep("us-best", "m"), |e| {
            e.class = NON_EU;
            e.usd_per_1m = Some(0.1)
        }),
        with(ep("d", "m"), |e| e.usd_per_1m = Some(4.0)),
        with(ep("a", "m"), |e| e.usd_per_1m = Some(1.0)),
        with(ep("c", "m"), |e| e.usd_per_1m = Some(3.0)),
        with(ep("b", "m"), |e| e.usd_per_1m = Some(2.0)),
    ];
    let d = run(&endpoints, &eu_policy(), &PolicyRequest::default()).unwrap();
    let order: Vec<&str> = d.failover_order().map(|i| &*endpoints[i].id).collect();
    assert_eq!(order, ["a", "b", "c"]);
    assert_eq!(MAX_ATTEMPTS, 3);
    assert!(!order.contains(&"us-best"));
    let two = [ep("x", "m"), with(ep("y", "m"), |e| e.class = NON_EU)];
    assert_eq!(run(&two, &eu_policy(), &PolicyRequest::default()).unwrap().failover_order().count(), 1);
}

// --- Route reason ---------------------------------------------------------------------------------

#[test]
fn the_route_reason_is_one_sentence_in_the_documented_form() {
    let mut endpoints = vec![with(ep("qwen-de", "qwen3-coder-30b"), |e| e.task_fit = vec![("coding".into(), 1.0)])];
    endpoints.extend([
        with(ep("us", "m"), |e| e.class = NON_EU),
        with(ep("cat", "m"), |e| e.kind = EndpointKind::CatalogueOnly),
        with(ep("down", "m"), |e| e.status = "down".into()),
        with(ep("partner", "m"), |e| e.partner = true),
    ]);
    let req = PolicyRequest { task: Some("coding".into()), ..ask_residency("eu-hosted") };
    let d = run(&endpoints, &eu_policy(), &req).unwrap();
    assert_eq!(
        d.route_reason(&endpoints, &eu_policy(), &req),
        r#"auto routing for task "coding" + residency eu-hosted + qwen3-coder-30b @ de-ber (EU-owned, EU-operated); 4 endpoint(s) excluded; partner endpoints not allowed."#
    );
    let partners =
        PolicyRequest { allow_partners: true, model: Some("qwen3-coder-30b".into()), ..PolicyRequest::default() };
    let d = run(&endpoints, &eu_policy(), &partners).unwrap();
    assert_eq!(
        d.route_reason(&endpoints, &eu_policy(), &partners),
        r#"pinned routing for task "general" + residency eu-hosted + qwen3-coder-30b @ de-ber (EU-owned, EU-operated); 0 endpoint(s) excluded; partner endpoints allowed."#
    );
}

#[test]
fn every_rejected_endpoint_keeps_its_first_reason_on_the_decision() {
    let endpoints =
        [ep("ok", "m"), with(ep("us", "m"), |e| e.class = NON_EU), with(ep("x", "m"), |e| e.status = "down".into())];
    let d = run(&endpoints, &eu_policy(), &PolicyRequest::default()).unwrap();
    let rejected: Vec<(String, String)> =
        d.rejected.iter().map(|(i, r)| (endpoints[*i].id.to_string(), r.to_string())).collect();
    assert_eq!(rejected, [("us".into(), "residency:non_eu".into()), ("x".into(), "endpoint_down".into())]);
}

// --- Admission ------------------------------------------------------------------------------------

#[test]
fn retention_data_class_and_the_daily_budget_are_checked_before_routing() {
    let policy = Policy {
        data_classes_allowed: vec!["public".into(), "internal".into()],
        max_usd_per_day: Some(5.0),
        ..eu_policy()
    };
    assert_eq!(admit(&policy, &Admission::default()), Ok(()));
    assert_eq!(admit(&policy, &Admission { retention: Some(0), ..Admission::default() }), Ok(()));
    let more = admit(&policy, &Admission { retention: Some(30), ..Admission::default() }).unwrap_err();
    assert_eq!(more, AdmitRefusal::Retention { asked: 30, allowed: 0 });
    assert_eq!(more.code(), "retention_not_allowed");
    let class = admit(&policy, &Admission { data_class: Some("secret"), ..Admission::default() }).unwrap_err();
    assert_eq!(
        (class.code(), class.to_string().as_str()),
        ("data_class_not_allowed", r#"llmeu.data_class "secret" is not among the policy's data_classes_allowed"#)
    );
    assert_eq!(admit(&policy, &Admission { data_class: Some("internal"), ..Admission::default() }), Ok(()));
    let spent = admit(&policy, &Admission { spent_today_usd: 5.0, ..Admission::default() }).unwrap_err();
    assert_eq!(spent.code(), "budget_exceeded");
    assert_eq!(admit(&policy, &Admission { spent_today_usd: 4.99, ..Admission::default() }), Ok(()));
    // No list, no limit: anything goes.
    assert_eq!(
        admit(&eu_policy(), &Admission { data_class: Some("x"), spent_today_usd: 1e9, ..Admission::default() }),
        Ok(())
    );
}
