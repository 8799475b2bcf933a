use std::collections::HashMap;

use super::board::{Seen, UiShared, DECISIONS_MAX};
use super::noted::{Counts, Noted};

fn noted(model: &str) -> Noted {
    Noted { model: model.into(), ..Noted::default() }
}

fn counts(requests: u64, errors: u64) -> HashMap<String, Counts> {
    HashMap::from([("d".to_string(), Counts { requests, errors, ..Counts::default() })])
}

#[test]
fn a_poll_watches_for_five_seconds() {
    let ui = UiShared::default();
    assert!(!ui.is_watched(0));
    assert!(!ui.watch(1_000), "nobody watched before");
    assert!(ui.is_watched(5_999));
    assert!(!ui.is_watched(6_000));
    assert!(ui.watch(3_000), "watched since the first poll");
    assert!(ui.is_watched(7_999));
}

#[test]
fn decisions_are_numbered_at_hand_over_kept_to_a_bound_and_read_newest_first_after_since() {
    let ui = UiShared::default();
    ui.hand_over(0, vec![noted("a"), noted("b")], HashMap::new(), Some(HashMap::new()), 0);
    ui.hand_over(1, vec![noted("c")], HashMap::new(), Some(HashMap::new()), 0);
    let r = ui.read(1, 0);
    assert_eq!(r.last_seq, 3);
    let read: Vec<(u64, &str)> = r.decisions.iter().map(|n| (n.seq, n.model.as_str())).collect();
    assert_eq!(read, [(3, "c"), (2, "b")]);
    assert_eq!(ui.decision(1).map(|n| n.model), Some("a".into()));
    let many = (0..DECISIONS_MAX + 10).map(|_| noted("x")).collect();
    ui.hand_over(0, many, HashMap::new(), None, 0);
    let r = ui.read(0, 0);
    assert_eq!(r.decisions.len(), DECISIONS_MAX);
    assert_eq!(r.decisions[0].seq, (DECISIONS_MAX + 13) as u64);
    assert!(ui.decision(1).is_none(), "the oldest are dropped");
}

#[test]
fn counts_per_minute_sum_the_last_sixty_seconds() {
    let ui = UiShared::default();
    ui.hand_over(0, Vec::new(), counts(5, 1), None, 1_000);
    ui.hand_over(1, Vec::new(), counts(2, 0), None, 1_500);
    ui.hand_over(0, Vec::new(), counts(3, 2), None, 30_000);
    let at = |ms| ui.read(0, ms).per_minute.get("d").copied().unwrap_or_default();
    assert_eq!((at(30_000).requests, at(30_000).errors), (10, 3));
    assert_eq!((at(60_999).requests, at(60_999).errors), (10, 3));
    assert_eq!((at(61_000).requests, at(61_000).errors), (3, 2), "second 1 is more than a minute old");
    assert_eq!(at(90_000).requests, 0);
    assert!(!at(30_000).usage_read, "no usage read: tokens unknown");
}

#[test]
fn in_flight_adds_up_over_shards_and_latency_is_the_mean_of_those_that_measured() {
    let ui = UiShared::default();
    let view =
        |in_flight, latency_ms| HashMap::from([("d".to_string(), Seen { in_flight, latency_ms, ttft_ms: None })]);
    ui.hand_over(0, Vec::new(), HashMap::new(), Some(view(2, Some(10.0))), 0);
    ui.hand_over(1, Vec::new(), HashMap::new(), Some(view(1, Some(30.0))), 0);
    ui.hand_over(2, Vec::new(), HashMap::new(), Some(view(4, None)), 0);
    let seen = ui.read(0, 0).seen["d"];
    assert_eq!((seen.in_flight, seen.latency_ms, seen.ttft_ms), (7, Some(20.0), None));
    // A shard whose watch ended leaves the view.
    ui.hand_over(2, Vec::new(), HashMap::new(), None, 0);
    assert_eq!(ui.read(0, 0).seen["d"].in_flight, 3);
}

#[test]
fn the_page_reaches_no_other_host() {
    const BANNER: &[u8] = b"/*! https://github.com/leeoniya/uPlot";
    for (path, bytes) in super::assets::all() {
        for at in memchr::memmem::find_iter(bytes, b"://") {
            // uPlot's banner names its repository in a comment.
            let banner = bytes[at.saturating_sub(10)..].starts_with(BANNER);
            let around = String::from_utf8_lossy(&bytes[at.saturating_sub(20)..(at + 40).min(bytes.len())]);
            assert!(banner, "/ui{path} names another host: {around}");
        }
    }
}
