//! The policy router's conformance table (`docs/routing.md`, "The policy router"): one case per
//! filter step and reason string and its position, the named residencies, each override
//! narrowing and never widening. The score, ties, refusals, failover, route reason and admission
//! are in policy_decision.rs.

use pointwork_core::policy::{
    decide, first_reason, EndpointKind, Live, Modalities, Modality, Policy, PolicyDecision, PolicyEndpoint,
    PolicyRefusal, PolicyRequest, RegionScope, Residency, ResidencyAllowed, SovereigntyClass,
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
