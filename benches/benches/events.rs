//! Cross-shard events: what a shard pays before every pick to catch up (an empty inbox, one
//! cooldown event), and how long an event takes to reach another thread.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use pointwork_config::GatewaySettings;
use pointwork_core::{CooldownStarted, Deployment, DeploymentIdx, Event, Failure, Provider, RouterSettings, Snapshot};
use pointwork_gateway::access_log::AccessLog;
use pointwork_gateway::events::{Mesh, ShardEvent};
use pointwork_gateway::hub::Hub;
use pointwork_gateway::routes::Routes;
use pointwork_gateway::shard::{Shard, ShardParts};

fn routes(n: usize) -> Routes {
    let deployments = (0..n)
        .map(|i| Deployment::new(&format!("d{i}"), "gpt", Provider::OpenAi, "gpt-4o-mini", "http://127.0.0.1:9/v1"))
        .collect();
    Routes::build(Snapshot::build(deployments, RouterSettings::default()).expect("snapshot")).expect("routes")
}

fn cooldown(idx: u32) -> Event {
    let until = Instant::now() + Duration::from_secs(3600);
    Event::Cooldown(CooldownStarted { idx: DeploymentIdx(idx), until, cause: Failure::Status(500) })
}

fn sync(c: &mut Criterion) {
    let (control, _control_rx) = crossbeam_channel::unbounded();
    let hub = Hub::new(routes(10), control);
    let (mesh, mut inboxes) = Mesh::new(2, None);
    let inbox = inboxes.remove(0);
    let shard = Shard::new(ShardParts {
        id: 0,
        hub: hub.clone(),
        inbox,
        mesh: mesh.clone(),
        settings: Arc::new(GatewaySettings::default()),
        tls: pointwork_gateway::upstream::conn::tls_connector().expect("tls"),
        access_log: AccessLog::default(),
        seed: 1,
    });
    let published = hub.routes.load_full();
    let mut group = c.benchmark_group("events");
    group.bench_function("sync_empty_inbox", |b| b.iter(|| black_box(shard.sync())));
    let event = cooldown(3);
    group.bench_function("send_and_apply_one_cooldown", |b| {
        b.iter(|| {
            mesh.broadcast(Some(1), &published, black_box(&event));
            black_box(shard.sync())
        })
    });
    group.finish();
}

/// One way across threads: half a ping-pong's round trip, both sides spinning on `try_recv` —
/// the channel's own delay, as a busy shard sees it at its next pick. (An idle shard finds the
/// event when its next request arrives: no request sees a longer delay.)
fn propagation(c: &mut Criterion) {
    let published = Arc::new(routes(10));
    let (to_peer, peer_inbox) = crossbeam_channel::unbounded::<ShardEvent>();
    let (to_me, my_inbox) = crossbeam_channel::unbounded::<ShardEvent>();
    let peer = std::thread::spawn(move || loop {
        match peer_inbox.try_recv() {
            Ok(e) => {
                if to_me.send(e).is_err() {
                    return;
                }
            }
            Err(crossbeam_channel::TryRecvError::Empty) => std::hint::spin_loop(),
            Err(crossbeam_channel::TryRecvError::Disconnected) => return,
        }
    });
    c.bench_function("events/propagation_one_way", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                to_peer.send(ShardEvent { routes: published.clone(), event: cooldown(1) }).expect("peer alive");
                loop {
                    if let Ok(e) = my_inbox.try_recv() {
                        black_box(e);
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
            start.elapsed() / 2
        })
    });
    drop(to_peer);
    let _ = peer.join();
}

criterion_group!(benches, sync, propagation);
criterion_main!(benches);
