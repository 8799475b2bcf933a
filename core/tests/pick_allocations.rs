//! The hot-path rule "no allocation per candidate", checked with a counting allocator: once the
//! scratch has grown, a pick that rejects nothing allocates nothing, whatever the group's size.
//! Only allocations made by the measuring thread count: the test harness's own threads allocate
//! whenever they like. (The `unsafe` below is the `GlobalAlloc` contract, forwarded to `System`
//! unchanged; test-only.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use switchyard_core::{
    pick_with_scratch, Deployment, Failure, PickRequest, PickScratch, Provider, Rng, RouterSettings, Snapshot, State,
};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set while this thread measures; `const` so reading it never allocates.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    MEASURING.with(|m| m.set(true));
    f();
    MEASURING.with(|m| m.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn a_warm_pick_allocates_only_when_it_rejects() {
    let deployments = (0..64)
        .map(|i| {
            let mut d = Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
            d.weight = Some(1 + i % 5);
            d
        })
        .collect();
    let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
    let snap = Snapshot::build(deployments, settings).unwrap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    let mut rng = Rng::new(1);
    let mut scratch = PickScratch::new();
    let fresh = PickRequest { model: "g", failed: &[] };
    pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();

    let n = allocations_during(|| {
        for _ in 0..1000 {
            let d = pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();
            std::hint::black_box(d);
        }
    });
    assert_eq!(n, 0);

    // With rejections, the decision's `rejected` list allocates: once per rejecting filter at
    // most, never once per candidate.
    for i in 0..32 {
        let idx = snap.groups[0].members[i];
        state.record_failure(&snap, idx, Failure::Connect, now);
    }
    let n = allocations_during(|| {
        let d = pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();
        assert_eq!(d.rejected.len(), 32);
    });
    assert_eq!(n, 1);
}
