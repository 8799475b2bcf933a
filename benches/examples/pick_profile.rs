//! Loops the pick of the `pick` bench for a profiler with stable counts (callgrind):
//! `pick_profile [group size] [picks] [fresh|retry|ended|least-busy|latency|usage-v2|cost]`,
//! defaults 10000, 1000, fresh.
//!
//! `valgrind --tool=callgrind --toggle-collect='pick_profile::one_pick' \
//!     target/release/examples/pick_profile 10000 200 fresh`

use std::hint::black_box;

use pointwork_benches::pick_setup::{pick_setup_with, strategy_setup, PickSetup, GROUP, STRATEGIES};
use pointwork_core::{pick_with_scratch, PickRequest, PickScratch, Rng};

/// Out of line so that `--toggle-collect=pick_profile::one_pick` counts the pick alone.
#[inline(never)]
fn one_pick(setup: &PickSetup, req: &PickRequest<'_>, rng: &mut Rng, scratch: &mut PickScratch) -> u64 {
    let chosen = pick_with_scratch(&setup.snap, &setup.state, req, setup.now, rng, scratch).expect("pick").deployment;
    u64::from(chosen.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args.first().map_or(10_000, |a| a.parse().expect("group size"));
    let picks: u64 = args.get(1).map_or(1_000, |a| a.parse().expect("picks"));
    let variant = args.get(2).map_or("fresh", String::as_str);
    let strategy = STRATEGIES.iter().find(|(name, _)| *name == variant).map(|(_, s)| *s);
    let (retry, ended) = match variant {
        "fresh" => (false, false),
        "retry" => (true, false),
        "ended" => (false, true),
        _ if strategy.is_some() => (false, false),
        other => panic!("unknown variant {other:?}: fresh, retry, ended, least-busy, latency, usage-v2 or cost"),
    };
    let setup = match strategy {
        Some(strategy) => strategy_setup(n, strategy),
        None => pick_setup_with(n, ended),
    };
    let failed = if retry { &setup.failed[..] } else { &[][..] };
    let mut scratch = PickScratch::new();
    let mut rng = Rng::new(0x5eed);
    let mut sum = 0u64;
    for _ in 0..picks {
        let req = PickRequest {
            model: black_box(GROUP),
            failed: black_box(failed),
            stream: false,
            input_tokens: 100,
            excluded: &[],
            order: None,
            facts: &pointwork_core::NO_FACTS,
        };
        sum += one_pick(&setup, &req, &mut rng, &mut scratch);
    }
    println!("{picks} picks of {n} ({variant}): checksum {sum}");
}
