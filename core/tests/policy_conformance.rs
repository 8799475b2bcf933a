//! The policy router's conformance table (`docs/routing.md`, "The policy router"): one case per
//! filter step and reason string and its position, the named residencies, each override
//! narrowing and never widening, the score and its ties, the pinned-model errors, the 409 text,
//! the failover order, the route reason and the admission checks.

use pointwork_core::policy::{
    admit, decide, first_reason, Admission, AdmitRefusal, EndpointKind, Live, Modalities, Modality, Policy,
    PolicyDecision, PolicyEndpoint, PolicyRefusal, PolicyRequest, RegionScope, Residency, ResidencyAllowed,
    SovereigntyClass, TieBreak, MAX_ATTEMPTS,
};
use pointwork_core::DeploymentIdx;

const EU_OWNED: SovereigntyClass = SovereigntyClass::EuOwnedEuOperated;
const EU_REGION: SovereigntyClass = SovereigntyClass::EuRegionOfNonEuParent;
const NON_EU: SovereigntyClass = SovereigntyClass::NonEu;
const UNKNOWN: SovereigntyClass = SovereigntyClass::CatalogueUnknown;

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

fn reason(e: &PolicyEndpoint, policy: &Policy, req: &PolicyRequest) -> Option<String> {
    first_reason(e, &e.status, policy, req).map(|r| r.to_string())
}

fn step(e: &PolicyEndpoint, policy: &Policy, req: &PolicyRequest) -> Option<u8> {
    first_reason(e, &e.status, policy, req).map(|r| r.step())
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

// --- The 14 steps, one reason each ------------------------------------------------------------

#[test]
fn every_step_gives_its_literal_reason() {
    let policy = Policy {
        providers_deny: vec!["shady".into()],
        models_deny: vec!["banned".into()],
        max_usd_per_1m: Some(2.0),
        residency_allowed: {
            let mut r = ResidencyAllowed::default();
            r.add("de");
            r.add("fr-par");
            r
        },
        ..eu_policy()
    };
    let restricted = Policy { providers_allow: vec!["acme".into()], models_allow: vec!["m".into()], ..policy.clone() };
    let image = PolicyRequest { has_image: true, needed_tokens: 9000, ..ask_residency("eu-hosted") };
    let cases: Vec<(PolicyEndpoint, &Policy, &PolicyRequest, &str, u8)> = vec![
        (with(ep("a", "m"), |e| e.kind = EndpointKind::CatalogueOnly), &policy, &image, "catalogue_only", 1),
        (with(ep("a", "m"), |e| e.status = "down".into()), &policy, &image, "endpoint_down", 2),
        (with(ep("a", "m"), |e| e.status = "maintenance".into()), &policy, &image, "endpoint_maintenance", 2),
        (with(ep("a", "m"), |e| e.class = NON_EU), &policy, &image, "residency:non_eu", 3),
        (with(ep("a", "m"), |e| e.class = UNKNOWN), &policy, &image, "residency:catalogue_unknown", 3),
        (with(ep("a", "m"), |e| e.region = "us-east".into()), &policy, &image, "residency_region:us-east", 4),
        (with(ep("a", "m"), |e| e.region = "nl-ams".into()), &policy, &image, "policy_region:nl-ams", 5),
        (
            with(ep("a", "m"), |e| e.modalities = Modalities::of(&[Modality::Embedding])),
            &policy,
            &image,
            "not_a_text_model",
            6,
        ),
        (with(ep("a", "m"), |e| e.provider = "shady".into()), &policy, &image, "provider_denied", 7),
        (with(ep("a", "m"), |e| e.provider = "other".into()), &restricted, &image, "provider_not_allowed", 8),
        (ep("a", "banned"), &policy, &image, "model_denied", 9),
        (ep("a", "other"), &restricted, &image, "model_not_allowed", 10),
        (with(ep("a", "m"), |e| e.partner = true), &policy, &image, "partner_not_allowed", 11),
        (ep("a", "m"), &policy, &image, "vision_required", 12),
        (
            with(ep("a", "m"), |e| {
                e.modalities = Modalities::of(&[Modality::Text, Modality::Vision]);
                e.context_window = Some(8192)
            }),
            &policy,
            &image,
            "context_too_small:8192<9000",
            13,
        ),
        (
            with(ep("a", "m"), |e| {
                e.modalities = Modalities::of(&[Modality::Text, Modality::Vision]);
                e.usd_per_1m = Some(2.5)
            }),
            &policy,
            &image,
            "price_above_cap:2500000",
            14,
        ),
    ];
    for (e, policy, req, expected, expected_step) in &cases {
        assert_eq!(reason(e, policy, req).as_deref(), Some(*expected), "{e:?}");
        assert_eq!(step(e, policy, req), Some(*expected_step), "{expected}");
    }
    // And one that passes them all.
    let fine = with(ep("a", "m"), |e| e.modalities = Modalities::of(&[Modality::Text, Modality::Vision]));
    assert_eq!(reason(&fine, &policy, &image), None);
    assert_eq!(cases.len(), 16);
}

#[test]
fn the_first_failed_step_is_the_one_recorded() {
    let policy = Policy { providers_deny: vec!["shady".into()], max_usd_per_1m: Some(0.5), ..eu_policy() };
    let req = PolicyRequest { has_image: true, needed_tokens: 100_000, ..PolicyRequest::default() };
    let cases: Vec<(PolicyEndpoint, &str)> = vec![
        // kind before status
        (
            with(ep("a", "m"), |e| {
                e.kind = EndpointKind::CatalogueOnly;
                e.status = "down".into()
            }),
            "catalogue_only",
        ),
        // status before residency
        (
            with(ep("a", "m"), |e| {
                e.status = "down".into();
                e.class = NON_EU
            }),
            "endpoint_down",
        ),
        // residency (3) before the provider list (7)
        (
            with(ep("a", "m"), |e| {
                e.class = NON_EU;
                e.provider = "shady".into()
            }),
            "residency:non_eu",
        ),
        // text (6) before vision (12)
        (with(ep("a", "m"), |e| e.modalities = Modalities::of(&[Modality::SpeechRecognition])), "not_a_text_model"),
        // provider (7) before partner (11)
        (
            with(ep("a", "m"), |e| {
                e.provider = "shady".into();
                e.partner = true
            }),
            "provider_denied",
        ),
        // vision (12) before the window (13) and price (14)
        (
            with(ep("a", "m"), |e| {
                e.context_window = Some(10);
                e.usd_per_1m = Some(9.0)
            }),
            "vision_required",
        ),
        // the window (13) before price (14)
        (
            with(ep("a", "m"), |e| {
                e.modalities = Modalities::of(&[Modality::Text, Modality::Vision]);
                e.context_window = Some(10);
                e.usd_per_1m = Some(9.0)
            }),
            "context_too_small:10<100000",
        ),
    ];
    for (e, expected) in cases {
        assert_eq!(reason(&e, &policy, &req).as_deref(), Some(expected));
    }
}

#[test]
fn a_degraded_endpoint_serves_and_the_shards_status_wins_over_the_config() {
    let policy = eu_policy();
    let req = PolicyRequest::default();
    let degraded = with(ep("a", "m"), |e| e.status = "degraded".into());
    assert_eq!(reason(&degraded, &policy, &req), None);
    let endpoints = [ep("a", "m"), ep("b", "m")];
    let live = |i: usize| Live { status: (i == 0).then_some("maintenance"), ..Live::UNKNOWN };
    let d = decide(&endpoints, &policy, &req, &live).unwrap();
    assert_eq!(endpoints[d.chosen()].id.as_ref(), "b");
    assert_eq!(d.rejected[0].1.to_string(), "endpoint_maintenance");
}

// --- Residency --------------------------------------------------------------------------------

#[test]
fn the_named_residencies() {
    let eu_owned = Residency::named("eu-owned").unwrap();
    assert_eq!((eu_owned.classes.clone(), eu_owned.scope.clone()), (vec![EU_OWNED], RegionScope::Eu));
    let eu_hosted = Residency::named("eu-hosted").unwrap();
    assert_eq!(eu_hosted.classes, [EU_OWNED, EU_REGION]);
    let any = Residency::named("any").unwrap();
    assert_eq!((any.classes.clone(), any.scope.clone()), (vec![EU_OWNED, EU_REGION, NON_EU], RegionScope::Anywhere));
    let de = Residency::named("de").unwrap();
    assert_eq!((de.classes.clone(), de.scope.clone()), (vec![EU_OWNED, EU_REGION], RegionScope::Country("de".into())));
    assert!(Residency::named("us").is_none() && Residency::named("eu").is_none() && Residency::named("").is_none());
    assert!(RegionScope::Eu.contains("eu-central-1") && RegionScope::Eu.contains("no-osl"));
    assert!(!RegionScope::Eu.contains("us-east-1") && !RegionScope::Eu.contains("ch-zrh"));
}

#[test]
fn a_requested_residency_narrows_the_policy_and_never_widens_it() {
    let policy = eu_policy();
    let endpoints = [
        ep("owned-de", "m"),
        with(ep("region-fr", "m"), |e| {
            e.class = EU_REGION;
            e.region = "fr-par".into()
        }),
        with(ep("us", "m"), |e| {
            e.class = NON_EU;
            e.region = "us-east".into()
        }),
    ];
    let survivors = |name: &str| {
        let d = run(&endpoints, &policy, &ask_residency(name)).unwrap();
        let mut ids: Vec<String> = d.ranked.iter().map(|s| endpoints[s.endpoint].id.to_string()).collect();
        ids.sort();
        (ids, d.rejected.iter().map(|(i, r)| format!("{}={r}", endpoints[*i].id)).collect::<Vec<_>>())
    };
    // `any` under an EU policy stays EU: the non-EU endpoint is still out.
    assert_eq!(survivors("any"), (vec!["owned-de".into(), "region-fr".into()], vec!["us=residency:non_eu".into()]));
    assert_eq!(
        survivors("eu-owned"),
        (
            vec!["owned-de".into()],
            vec!["region-fr=residency:eu_region_of_non_eu_parent".into(), "us=residency:non_eu".into()]
        )
    );
    assert_eq!(survivors("fr").0, ["region-fr"]);
    assert_eq!(survivors("fr").1[0], "owned-de=residency_region:de-ber");
    // An `any` policy admits the non-EU endpoint; eu-hosted narrows it away again.
    let open = Policy {
        residency_allowed: ResidencyAllowed { classes: vec![EU_OWNED, EU_REGION, NON_EU], regions: vec![] },
        ..eu_policy()
    };
    assert_eq!(run(&endpoints, &open, &PolicyRequest::default()).unwrap().ranked.len(), 3);
    assert_eq!(run(&endpoints, &open, &ask_residency("eu-hosted")).unwrap().ranked.len(), 2);
}

#[test]
fn a_request_without_residency_is_described_by_the_policys_own_set() {
    let eu = eu_policy();
    assert_eq!(PolicyRequest::default().residency_name(&eu), "eu-hosted");
    let owned_only =
        Policy { residency_allowed: ResidencyAllowed { classes: vec![EU_OWNED], regions: vec![] }, ..eu_policy() };
    assert_eq!(PolicyRequest::default().residency_name(&owned_only), "eu-hosted");
    let open = Policy {
        residency_allowed: ResidencyAllowed { classes: vec![EU_OWNED, NON_EU], regions: vec![] },
        ..eu_policy()
    };
    assert_eq!(PolicyRequest::default().residency_name(&open), "any");
    assert_eq!(ask_residency("eu-owned").residency_name(&open), "eu-owned");
}

#[test]
fn policy_regions_admit_countries_whole_regions_and_eu() {
    let mut r = ResidencyAllowed::default();
    r.add("de");
    r.add("fr-par");
    assert!(r.admits_region("de-ber") && r.admits_region("de-fra") && r.admits_region("fr-par"));
    assert!(!r.admits_region("fr-mrs") && !r.admits_region("nl-ams"));
    let mut eu = ResidencyAllowed::default();
    eu.add("eu");
    assert!(eu.admits_region("nl-ams") && eu.admits_region("eu-west-1") && !eu.admits_region("us-east-1"));
    assert!(ResidencyAllowed::default().admits_region("us-east-1"), "no region values: classes decide");
    // Classes in the list are classes, not regions.
    let mut classes = ResidencyAllowed { classes: vec![], regions: vec![] };
    classes.add("non_eu");
    classes.add("non_eu");
    assert_eq!((classes.classes, classes.regions), (vec![NON_EU], vec![]));
}

#[test]
fn catalogue_unknown_never_wins_even_when_alone_and_best() {
    let endpoints = [with(ep("mystery", "m"), |e| {
        e.class = UNKNOWN;
        e.usd_per_1m = Some(0.0)
    })];
    let any_policy = Policy {
        residency_allowed: ResidencyAllowed { classes: SovereigntyClass::ALL.to_vec(), regions: vec![] },
        ..eu_policy()
    };
    let err = run(&endpoints, &any_policy, &ask_residency("any")).unwrap_err();
    assert_eq!(err.code(), "no_endpoint_for_policy");
}

// --- Overrides ----------------------------------------------------------------------------------

#[test]
fn a_price_cap_in_the_request_only_lowers_the_policys() {
    let policy = Policy { max_usd_per_1m: Some(2.0), ..eu_policy() };
    let e = with(ep("a", "m"), |e| e.usd_per_1m = Some(1.5));
    let lower = PolicyRequest { max_usd_per_1m: Some(1.0), ..PolicyRequest::default() };
    let higher = PolicyRequest { max_usd_per_1m: Some(10.0), ..PolicyRequest::default() };
    assert_eq!(reason(&e, &policy, &lower).as_deref(), Some("price_above_cap:1500000"));
    assert_eq!(lower.price_cap(&policy), Some(1.0));
    assert_eq!(higher.price_cap(&policy), Some(2.0), "a higher cap is ignored");
    let pricey = with(ep("a", "m"), |e| e.usd_per_1m = Some(3.0));
    assert_eq!(reason(&pricey, &policy, &higher).as_deref(), Some("price_above_cap:3000000"));
    // Without a policy cap the request's applies; without either, nothing is capped.
    assert_eq!(reason(&pricey, &eu_policy(), &lower).as_deref(), Some("price_above_cap:3000000"));
    assert_eq!(reason(&pricey, &eu_policy(), &PolicyRequest::default()), None);
    // An unpriced endpoint is never above a cap.
    let unpriced = with(ep("a", "m"), |e| e.usd_per_1m = None);
    assert_eq!(reason(&unpriced, &policy, &lower), None);
}

#[test]
fn partners_need_the_policy_or_the_request() {
    let partner = with(ep("p", "m"), |e| e.partner = true);
    let asks = PolicyRequest { allow_partners: true, ..PolicyRequest::default() };
    assert_eq!(reason(&partner, &eu_policy(), &PolicyRequest::default()).as_deref(), Some("partner_not_allowed"));
    assert_eq!(reason(&partner, &eu_policy(), &asks), None);
    let open = Policy { allow_partner_endpoints: true, ..eu_policy() };
    assert_eq!(reason(&partner, &open, &PolicyRequest::default()), None);
}

#[test]
fn task_and_language_fit_move_the_winner() {
    let endpoints = [
        with(ep("coder", "coder-30b"), |e| e.task_fit = vec![("coding".into(), 1.0), ("chat".into(), 0.2)]),
        with(ep("talker", "chat-70b"), |e| {
            e.task_fit = vec![("coding".into(), 0.3), ("chat".into(), 0.9)];
            e.language_fit = vec![("de".into(), 1.0)]
        }),
    ];
    let task = |t: &str| PolicyRequest { task: Some(t.into()), ..PolicyRequest::default() };
    assert_eq!(winner(&endpoints, &eu_policy(), &task("coding")), "coder");
    assert_eq!(winner(&endpoints, &eu_policy(), &task("chat")), "talker");
    let german = PolicyRequest { language: Some("de".into()), ..PolicyRequest::default() };
    assert_eq!(winner(&endpoints, &eu_policy(), &german), "talker");
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
