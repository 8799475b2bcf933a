use pointwork_core::pareto::{select, Geography, ParetoRule};

use super::*;
use crate::pareto_poller::test_support::{fixture, ENDPOINTS, STATS};

#[test]
fn the_stats_fixture_parses_into_the_rows_the_walk_reads() {
    let parsed = stats(&fixture(STATS)).unwrap();
    assert_eq!(parsed.skipped, 0);
    let rows = parsed.rows;
    assert_eq!(rows.len(), 11);
    let novita = &rows[1];
    assert_eq!(
        *novita,
        StatsRow {
            slug: "novita/fp8".into(),
            quantization: Some("fp8".into()),
            context_length: Some(1_048_576),
            retains_prompts: Some(false),
            p50_throughput: Some(27.0),
            request_count: Some(1297),
            prompt_price: Some(8.4e-8),
            completion_price: novita.completion_price,
            geography: Some(Geography { headquarters: Some("US".into()), datacenters: Some(vec!["US".into()]) }),
        }
    );
    assert!(novita.completion_price.is_some_and(|p| p > 0.0));
    // io-net has no stats block; deepinfra no datacenters; venice retains prompts.
    let by = |slug: &str| rows.iter().find(|r| r.slug == slug).unwrap();
    assert_eq!((by("io-net/fp8").p50_throughput, by("io-net/fp8").request_count), (None, None));
    assert_eq!(by("deepinfra/fp4").geography.as_ref().unwrap().datacenters, None);
    assert_eq!(by("parasail/fp8").geography.as_ref().unwrap().datacenters, Some(vec![]));
    assert_eq!(by("venice").retains_prompts, Some(true));
}

#[test]
fn the_endpoints_fixture_parses_into_uptimes_by_tag() {
    let parsed = endpoints(&fixture(ENDPOINTS)).unwrap();
    assert_eq!(parsed.skipped, 0);
    let tags: Vec<(&str, Option<f64>)> = parsed.rows.iter().map(|r| (r.tag.as_str(), r.uptime_last_5m)).collect();
    assert_eq!(tags.len(), 11);
    assert_eq!(tags[0], ("z-ai/fp8", Some(99.8)));
    assert_eq!(tags[9], ("io-net/fp8", Some(87.1)));
}

#[test]
fn the_fixtures_select_the_winner_core_asserts() {
    let s = stats(&fixture(STATS)).unwrap().rows;
    let u = endpoints(&fixture(ENDPOINTS)).unwrap().rows;
    let selection = select(&s, &u, &ParetoRule::default(), None);
    assert_eq!(selection.winner.as_deref(), Some("baseten/fp8-fast"));
}

#[test]
fn the_model_list_maps_ids_to_canonical_slugs() {
    let body = br#"{"data":[
        {"id":"z-ai/glm-5.2","canonical_slug":"z-ai/glm-5.2-20260101","name":"GLM"},
        {"id":"no/canonical"},
        {"id":"empty/canonical","canonical_slug":""},
        {"name":"no id"},
        {"id":"x/y","canonical_slug":null}
    ]}"#;
    let parsed = models(body).unwrap();
    assert_eq!(parsed.skipped, 1);
    assert_eq!(parsed.rows.len(), 1);
    assert_eq!(parsed.rows["z-ai/glm-5.2"], "z-ai/glm-5.2-20260101");
}

#[test]
fn prices_and_counts_come_as_numbers_or_strings() {
    let body = br#"{"data":[
        {"provider_slug":"a/fp8","pricing":{"prompt":1.5e-7,"completion":"0.0000005"},
         "stats":{"p50_throughput":"42.5","request_count":"120"},"context_length":2000.0},
        {"provider_slug":"b/fp8","pricing":{"prompt":"free","completion":null},"stats":null,"provider_info":null},
        {"provider_slug":"c/fp8","stats":{"request_count":1.5}},
        {"provider_slug":"d/fp8","context_length":[1]},
        {"provider_slug":"","quantization":"fp8"},
        {"quantization":"fp8"},
        "not an object"
    ]}"#;
    let parsed = stats(body).unwrap();
    assert_eq!(parsed.skipped, 5, "c, d, the empty slug, the missing slug, the string");
    let a = &parsed.rows[0];
    assert_eq!((a.prompt_price, a.completion_price), (Some(1.5e-7), Some(5e-7)));
    assert_eq!((a.p50_throughput, a.request_count, a.context_length), (Some(42.5), Some(120), Some(2000)));
    let b = &parsed.rows[1];
    assert_eq!((b.prompt_price, b.completion_price, b.p50_throughput), (None, None, None));
}

#[test]
fn a_malformed_document_is_an_error() {
    for body in [&b"not json"[..], b"{}", b"{\"error\":{\"message\":\"nope\"}}", b"{\"data\":{}}", b"[]"] {
        assert!(stats(body).is_err(), "{}", String::from_utf8_lossy(body));
        assert!(models(body).is_err(), "{}", String::from_utf8_lossy(body));
    }
    assert!(endpoints(b"not json").is_err());
    assert!(endpoints(b"{\"data\":[]}").is_err());
    let err = stats(b"{}").unwrap_err();
    assert!(err.starts_with("the endpoint stats: not the expected JSON document"), "{err}");
    // No data (a model without endpoints) is an empty list, as the plugin reads it.
    assert_eq!(endpoints(b"{\"data\":null}").unwrap().rows, vec![]);
    let odd = endpoints(br#"{"data":{"endpoints":[{"tag":"a","uptime_last_5m":"99.5"},{"tag":7},{}]}}"#).unwrap();
    assert_eq!((odd.rows.len(), odd.skipped, odd.rows[0].uptime_last_5m), (1, 2, Some(99.5)));
}
