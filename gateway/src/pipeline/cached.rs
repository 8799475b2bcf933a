//! A request the response cache answers (`crate::cache`): no router runs, nothing is sent
//! upstream; it is recorded as a hit, and a database key's spend row says so and costs nothing.

use super::record;
use crate::cache::hit;
use crate::cache::look::Hit;
use crate::request::{Ending, RequestInfo};
use crate::routers::Cx;
use crate::tcp_or_tls::ClientConn;
use crate::usage::{Reading, UsageTail};

/// Answers the request with `hit`. Returns whether the client connection can carry another
/// request.
pub(super) async fn answer(
    cx: &Cx<'_>,
    info: &RequestInfo<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
    hit: Hit,
) -> bool {
    let answered = hit::answer(client, keep_alive, &hit, info.started.elapsed()).await;
    if cx.key.is_some_and(|k| k.db.is_some()) {
        let mut tail = UsageTail::new(Reading::Usage);
        tail.push(&hit.entry.body);
        crate::database::spend::from_cache(cx, info.started, tail.usage().unwrap_or_default());
    }
    let ending = Ending {
        group: cx.routes.snapshot.group_by_name(info.model),
        stream: hit.entry.stream,
        cache_hit: true,
        ..Ending::refused(200, answered.bytes_out as usize)
    };
    record::finish(cx.shard, cx.routes, info, ending);
    answered.ok && keep_alive
}
