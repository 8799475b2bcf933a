//! Loops the pick of the `pick` bench for a profiler with stable counts (callgrind):
//! `pick_profile [group size] [picks] [fresh|retry] [core|one_pass_dense]`,
//! defaults 10000, 1000, fresh, core (`one_pass_dense` is the prototype's, see `pick_prototype`).
//!
//! `valgrind --tool=callgrind --toggle-collect='pick_profile::one_pick' \
//!     target/release/examples/pick_profile 10000 200 fresh`

use std::hint::black_box;

use switchyard_benches::pick_prototype::{fused_pick, Dense, PrototypeScratch};
use switchyard_benches::pick_setup::{pick_setup, PickSetup, GROUP};
use switchyard_core::{pick_with_scratch, PickRequest, PickScratch, Rng};

enum Which {
    Core(PickScratch),
    Prototype(Dense, PrototypeScratch),
}

/// Out of line so that `--toggle-collect=pick_profile::one_pick` counts the pick alone.
#[inline(never)]
fn one_pick(setup: &PickSetup, req: &PickRequest<'_>, rng: &mut Rng, which: &mut Which) -> u64 {
    let chosen = match which {
        Which::Core(scratch) => {
            pick_with_scratch(&setup.snap, &setup.state, req, setup.now, rng, scratch).expect("pick").deployment
        }
        Which::Prototype(dense, scratch) => {
            fused_pick(&setup.snap, req, setup.now, rng, dense, scratch).expect("pick").0
        }
    };
    u64::from(chosen.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = args.first().map_or(10_000, |a| a.parse().expect("group size"));
    let picks: u64 = args.get(1).map_or(1_000, |a| a.parse().expect("picks"));
    let retry = args.get(2).is_some_and(|a| a == "retry");
    let which = args.get(3).map_or("core", String::as_str);
    let setup = pick_setup(n);
    let failed = if retry { &setup.failed[..] } else { &[][..] };
    let members = &setup.snap.group(setup.snap.group_by_name(GROUP).expect("group")).members;
    let mut state = match which {
        "core" => Which::Core(PickScratch::new()),
        "one_pass_dense" => {
            Which::Prototype(Dense::new(&setup.snap, &setup.state, members, setup.now), PrototypeScratch::default())
        }
        other => panic!("unknown pick {other:?}: core or one_pass_dense"),
    };
    let mut rng = Rng::new(0x5eed);
    let mut sum = 0u64;
    for _ in 0..picks {
        let req = PickRequest { model: black_box(GROUP), failed: black_box(failed) };
        sum += one_pick(&setup, &req, &mut rng, &mut state);
    }
    println!("{picks} {which} picks of {n} ({}): checksum {sum}", if retry { "retry" } else { "fresh" });
    // What each candidate drags through the cache: the strategy reads one `Deployment`, the
    // cooldown filter one `DeploymentState`.
    println!(
        "size_of Deployment {} B, DeploymentState {} B",
        std::mem::size_of::<switchyard_core::Deployment>(),
        std::mem::size_of::<switchyard_core::DeploymentState>()
    );
}
