//! Several instances sharing one key's limits ([`KeyMeter::reconciled`]): the others' counts
//! count, a restarted instance takes its counts back, and the rpm share bounds what instances
//! with stale views of each other admit together: at most `limit + (n − 1) × ⌈limit / n⌉` in a
//! minute, checked here over random schedules against a record kept as Redis keeps it.

use proptest::prelude::*;

use super::*;

/// The first second of a minute (Unix time), in 2027.
const MINUTE: u64 = 1_800_000_000;

fn limits(rpm: Option<u64>, tpm: Option<u64>, budget: Option<f64>) -> KeyLimits {
    KeyLimits { rpm, tpm, max_budget: budget, budget_duration: None }
}

fn shared(rpm: u64, m: &KeyMeter, t: u64, own_recorded: u64, others: u64, instances: u64) {
    let l = limits(Some(rpm), None, None);
    let windows = MeterWindows::at(&l, t);
    let recorded = OwnCounts { requests: own_recorded, ..OwnCounts::default() };
    m.reconciled(&l, windows, recorded, OthersCounts { requests: others, instances, ..OthersCounts::default() });
}

#[test]
fn the_others_requests_count_against_the_limit() {
    let (m, l) = (KeyMeter::default(), limits(Some(10), None, None));
    shared(10, &m, MINUTE, 0, 8, 1);
    assert_eq!(m.admit(&l, MINUTE + 1), Ok(()));
    assert_eq!(m.admit(&l, MINUTE + 1), Ok(()));
    assert!(matches!(m.admit(&l, MINUTE + 1), Err(KeyRefusal::Rpm { .. })));
    assert_eq!(m.usage(&l, MINUTE + 1).requests_this_minute, 10);
    assert_eq!(m.usage(&l, MINUTE + 60).requests_this_minute, 0, "the others' minute ends too");
}

#[test]
fn sharing_instances_each_admit_their_part_of_what_is_left_until_the_next_reconcile() {
    let (m, l) = (KeyMeter::default(), limits(Some(100), None, None));
    // 3 instances, 10 used by others, none by us: 90 left, a third each.
    shared(100, &m, MINUTE, 0, 10, 3);
    let admitted = (0..100).filter(|_| m.admit(&l, MINUTE + 1).is_ok()).count();
    assert_eq!(admitted, 30);
    // The next reconcile: the others used 40 more, we used our 30: 20 left, a third each.
    shared(100, &m, MINUTE + 1, 30, 50, 3);
    let admitted = (0..100).filter(|_| m.admit(&l, MINUTE + 2).is_ok()).count();
    assert_eq!(admitted, 7);
}

#[test]
fn a_minute_no_reconcile_saw_yet_gives_an_even_part_of_the_limit() {
    let (m, l) = (KeyMeter::default(), limits(Some(100), None, None));
    shared(100, &m, MINUTE, 0, 0, 4);
    let next = MINUTE + 61;
    assert_eq!((0..100).filter(|_| m.admit(&l, next).is_ok()).count(), 25);
}

#[test]
fn out_of_reach_instances_admit_up_to_the_whole_limit_less_what_they_last_knew() {
    let (m, l) = (KeyMeter::default(), limits(Some(100), None, None));
    shared(100, &m, MINUTE, 0, 60, 3);
    m.unshared();
    assert_eq!((0..100).filter(|_| m.admit(&l, MINUTE + 1).is_ok()).count(), 40);
}

#[test]
fn a_restarted_instance_takes_back_its_recorded_counts_and_never_counts_twice() {
    let l = KeyLimits { max_budget: Some(1.0), tpm: Some(1_000), ..limits(Some(100), None, None) };
    let m = KeyMeter::default();
    let windows = MeterWindows::at(&l, MINUTE);
    let recorded = OwnCounts { requests: 5, tokens: 300, spend_micros: 250_000 };
    m.reconciled(&l, windows, recorded, OthersCounts { instances: 2, ..OthersCounts::default() });
    assert_eq!(m.own_counts(windows), recorded);
    // The same record again (a reconcile after a lost answer) adds nothing.
    m.reconciled(&l, windows, recorded, OthersCounts { instances: 2, ..OthersCounts::default() });
    assert_eq!(m.own_counts(windows), recorded);
    let u = m.usage(&l, MINUTE);
    assert_eq!((u.requests_this_minute, u.tokens_this_minute, u.spend), (5, 300, 0.25));
}

#[test]
fn the_others_spend_and_tokens_count_against_budget_and_tpm() {
    let l = KeyLimits { max_budget: Some(1.0), tpm: Some(1_000), ..limits(None, None, None) };
    let m = KeyMeter::default();
    let windows = MeterWindows::at(&l, MINUTE);
    let others = OthersCounts { tokens: 1_000, spend_micros: 0, instances: 2, requests: 0 };
    m.reconciled(&l, windows, OwnCounts::default(), others);
    assert!(matches!(m.admit(&l, MINUTE), Err(KeyRefusal::Tpm { used: 1_000, .. })));
    let others = OthersCounts { spend_micros: 1_000_000, ..others };
    m.reconciled(&l, windows, OwnCounts::default(), others);
    assert!(matches!(m.admit(&l, MINUTE), Err(KeyRefusal::Budget { .. })));
}

/// The shared record as the reconcile script keeps it: each instance's own absolute count.
struct Record(Vec<u64>);

impl Record {
    /// One instance's reconcile: its field raised to its count, the others' sum read back.
    fn reconcile(&mut self, i: usize, m: &KeyMeter, l: &KeyLimits, t: u64) {
        let windows = MeterWindows::at(l, t);
        let own = m.own_counts(windows).requests;
        self.0[i] = self.0[i].max(own);
        let others: u64 = self.0.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c).sum();
        let recorded = OwnCounts { requests: self.0[i], ..OwnCounts::default() };
        let n = self.0.len() as u64;
        m.reconciled(l, windows, recorded, OthersCounts { requests: others, instances: n, ..OthersCounts::default() });
    }
}

proptest! {
    /// Instances reconcile in any order while requests arrive at any of them, in bursts of any
    /// size: together they admit at least the limit (no instance starves once others are done)
    /// and never more than the bound.
    #[test]
    fn instances_with_stale_views_admit_at_most_the_bound(
        n in 2usize..6,
        limit in 1u64..300,
        steps in proptest::collection::vec((0usize..6, any::<bool>(), 1u64..200), 1..400),
    ) {
        let l = limits(Some(limit), None, None);
        let meters: Vec<KeyMeter> = (0..n).map(|_| KeyMeter::default()).collect();
        let mut record = Record(vec![0; n]);
        for (i, m) in meters.iter().enumerate() {
            record.reconcile(i, m, &l, MINUTE);
        }
        let t = MINUTE + 1;
        for (who, reconcile, burst) in steps {
            let i = who % n;
            if reconcile {
                record.reconcile(i, &meters[i], &l, t);
            } else {
                for _ in 0..burst {
                    let _ = meters[i].admit(&l, t);
                }
            }
        }
        // Then every instance keeps trying and reconciling until nobody admits more.
        for _ in 0..limit + 2 {
            for (i, m) in meters.iter().enumerate() {
                record.reconcile(i, m, &l, t);
                while m.admit(&l, t).is_ok() {}
            }
        }
        let admitted: u64 = meters.iter().map(|m| m.own_counts(MeterWindows::at(&l, t)).requests).sum();
        let bound = limit + (n as u64 - 1) * limit.div_ceil(n as u64);
        prop_assert!(admitted >= limit, "{admitted} < {limit}");
        prop_assert!(admitted <= bound, "{admitted} > {bound}");
    }
}
