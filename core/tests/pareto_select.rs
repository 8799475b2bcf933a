//! The pareto selection against what the published plugin computes on the same telemetry: the
//! z-ai/glm rows of `tests/fixtures/openrouter_frontend_stats_glm_composed.json` with the
//! uptimes of `openrouter_endpoints_glm.json`, written out here as the rows the poller parses.
//! Each expected value is the plugin's own output (litellm-plugin-openrouter-pareto 0.4.2,
//! `select_candidates` and `ranked_order`) for the same rule.

use pointwork_core::pareto::{ranked_order, select, Dropped, Geography, ParetoRule, StatsRow, UptimeRow};

#[allow(clippy::type_complexity)]
const ROWS: [(&str, &str, u64, bool, Option<f64>, Option<u64>, f64, &str, Option<&[&str]>); 11] = [
    ("z-ai/fp8", "fp8", 1048576, false, Some(28.0), Some(1200), 1.5e-07, "CN", Some(&["SG"])),
    ("novita/fp8", "fp8", 1048576, false, Some(27.0), Some(1297), 8.4e-08, "US", Some(&["US"])),
    ("baseten/fp8", "fp8", 1048576, false, Some(118.0), Some(1394), 1.5e-07, "US", Some(&["US"])),
    ("baseten/fp8-fast", "fp8", 1048576, false, Some(128.0), Some(1491), 1.5e-07, "US", Some(&["US"])),
    ("deepinfra/fp4", "fp4", 1048576, false, Some(12.0), Some(1588), 7.5e-08, "US", None),
    ("together", "unknown", 1048576, false, Some(98.0), Some(1685), 1.5e-07, "US", Some(&["US"])),
    ("parasail/fp8", "fp8", 1048576, false, Some(97.0), Some(1782), 1.5e-07, "US", Some(&[])),
    ("siliconflow/fp8", "fp8", 1048576, false, Some(39.0), Some(1879), 1.5e-07, "CN", Some(&["CN", "SG"])),
    ("venice", "unknown", 1048576, true, Some(16.0), Some(1976), 1.5e-07, "US", None),
    ("io-net/fp8", "fp8", 262144, false, None, None, 1.5e-07, "US", Some(&["US", "DE"])),
    ("modal/nvfp4", "nvfp4", 1048576, false, Some(61.0), Some(2170), 1.5e-07, "US", Some(&["US"])),
];

const UPTIME: [(&str, f64); 11] = [
    ("z-ai/fp8", 99.8),
    ("novita/fp8", 99.7),
    ("baseten/fp8", 97.7),
    ("baseten/fp8-fast", 98.9),
    ("deepinfra/fp4", 100.0),
    ("together", 100.0),
    ("parasail/fp8", 99.7),
    ("siliconflow/fp8", 99.8),
    ("venice", 90.2),
    ("io-net/fp8", 87.1),
    ("modal/nvfp4", 99.4),
];

fn stats() -> Vec<StatsRow> {
    ROWS.iter()
        .map(|&(slug, quant, context, retains, tps, requests, price, hq, dcs)| StatsRow {
            slug: slug.into(),
            quantization: Some(quant.into()),
            context_length: Some(context),
            retains_prompts: Some(retains),
            p50_throughput: tps,
            request_count: requests,
            prompt_price: Some(price),
            completion_price: Some(price * 10.0 / 3.0),
            geography: Some(Geography {
                headquarters: Some(hq.into()),
                datacenters: dcs.map(|d| d.iter().map(|s| s.to_string()).collect()),
            }),
        })
        .collect()
}

fn uptime() -> Vec<UptimeRow> {
    UPTIME.iter().map(|&(tag, up)| UptimeRow { tag: tag.into(), uptime_last_5m: Some(up) }).collect()
}

fn rule(precision: &[&str], min_context: u64) -> ParetoRule {
    ParetoRule { precision: precision.iter().map(|s| s.to_string()).collect(), min_context, ..ParetoRule::default() }
}

fn check(
    rule: &ParetoRule,
    winner: &str,
    safe: &[&str],
    frontier: &[&str],
    ranked: &[&str],
) -> pointwork_core::pareto::Selection {
    let s = select(&stats(), &uptime(), rule, None);
    assert_eq!(s.winner.as_deref(), Some(winner));
    assert_eq!(s.safe_set, safe);
    assert_eq!(s.frontier, frontier);
    assert_eq!(ranked_order(&s.points, rule.value_regression_tolerance, &|_| false), ranked);
    s
}

#[test]
fn fp8_at_a_million_tokens_matches_the_plugin() {
    let s = check(
        &rule(&["fp8"], 1_000_000),
        "baseten/fp8-fast",
        &["novita/fp8", "baseten/fp8-fast", "baseten/fp8", "parasail/fp8", "siliconflow/fp8", "z-ai/fp8"],
        &["novita/fp8", "baseten/fp8-fast"],
        &["baseten/fp8-fast", "baseten/fp8", "parasail/fp8", "novita/fp8", "siliconflow/fp8", "z-ai/fp8"],
    );
    let dropped: Vec<(&str, Dropped)> = s.dropped.iter().map(|(slug, why)| (slug.as_str(), *why)).collect();
    assert_eq!(
        dropped,
        [
            ("deepinfra/fp4", Dropped::Quantization),
            ("together", Dropped::Quantization),
            ("venice", Dropped::Quantization),
            ("io-net/fp8", Dropped::Context),
            ("modal/nvfp4", Dropped::Quantization),
        ]
    );
}

#[test]
fn two_precisions_and_a_smaller_context_match_the_plugin() {
    check(
        &rule(&["fp8", "fp4"], 200_000),
        "baseten/fp8-fast",
        &[
            "deepinfra/fp4",
            "novita/fp8",
            "baseten/fp8-fast",
            "baseten/fp8",
            "parasail/fp8",
            "siliconflow/fp8",
            "z-ai/fp8",
        ],
        &["deepinfra/fp4", "novita/fp8", "baseten/fp8-fast"],
        &[
            "baseten/fp8-fast",
            "baseten/fp8",
            "parasail/fp8",
            "novita/fp8",
            "siliconflow/fp8",
            "z-ai/fp8",
            "deepinfra/fp4",
        ],
    );
}

#[test]
fn excluding_a_region_matches_the_plugin_strictly_and_with_unknown_allowed() {
    let strict = ParetoRule { exclude_regions: vec!["SG".into()], ..rule(&["fp8"], 200_000) };
    let s = check(
        &strict,
        "baseten/fp8-fast",
        &["novita/fp8", "baseten/fp8-fast", "baseten/fp8"],
        &["novita/fp8", "baseten/fp8-fast"],
        &["baseten/fp8-fast", "baseten/fp8", "novita/fp8"],
    );
    assert_eq!(s.excluded_bases.iter().collect::<Vec<_>>(), ["deepinfra", "parasail", "siliconflow", "venice", "z-ai"]);
    assert_eq!(s.allowed_bases.iter().collect::<Vec<_>>(), ["baseten", "io-net", "modal", "novita", "together"]);
    let loose = ParetoRule { allow_unknown_region: true, ..strict };
    let s = check(
        &loose,
        "baseten/fp8-fast",
        &["novita/fp8", "baseten/fp8-fast", "baseten/fp8", "parasail/fp8"],
        &["novita/fp8", "baseten/fp8-fast"],
        &["baseten/fp8-fast", "baseten/fp8", "parasail/fp8", "novita/fp8"],
    );
    assert_eq!(s.excluded_bases.iter().collect::<Vec<_>>(), ["siliconflow", "z-ai"]);
}

#[test]
fn the_allow_list_and_the_filters_drop_with_their_reasons() {
    let allowed = vec!["novita".to_string(), "z-ai".to_string()];
    let s = select(&stats(), &uptime(), &rule(&["fp8"], 1_000_000), Some(&allowed));
    assert_eq!(s.winner.as_deref(), Some("novita/fp8"));
    assert_eq!(s.safe_set, ["novita/fp8", "z-ai/fp8"]);
    assert!(s.dropped.contains(&("baseten/fp8".to_string(), Dropped::NotAllowed)));
    // Low uptime, a missing sample, retention, a price cap.
    let mut rows = stats();
    rows[1].prompt_price = Some(0.0);
    rows[3].retains_prompts = None;
    let mut up = uptime();
    up[2].uptime_last_5m = Some(94.9);
    let capped = ParetoRule { max_price: Some(0.1), ..rule(&["fp8"], 1_000_000) };
    let s = select(&rows, &up, &capped, None);
    let why = |slug: &str| s.dropped.iter().find(|(s, _)| s == slug).map(|(_, w)| *w);
    assert_eq!(why("novita/fp8"), Some(Dropped::Price));
    assert_eq!(why("baseten/fp8-fast"), Some(Dropped::Retention));
    assert_eq!(why("baseten/fp8"), Some(Dropped::Uptime));
    assert_eq!(why("z-ai/fp8"), Some(Dropped::AboveMaxPrice), "0.15 per million > 0.1");
    assert_eq!(s.winner, None);
}
