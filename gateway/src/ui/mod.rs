//! The live view in the browser (`/ui`): a page embedded in the binary, and the JSON it polls
//! (`GET /ui/api/live`, at most once a second), which scripts may read too.
//!
//! Nothing is noted for the page while nobody watches: a poll marks the board watched for
//! [`WATCH_FOR`]; each shard looks at that mark every quarter second (its housekeeping), and only
//! then notes its requests' decisions and counts and hands them to the board. A request of an
//! unwatched gateway pays one `Cell<bool>` read.

pub mod actions;
pub mod admin_blocks;
mod assets;
pub mod board;
mod decision;
mod live;
mod note;
pub mod noted;
#[cfg(test)]
mod tests;

pub use board::WATCH_FOR;
pub(crate) use note::{hand_over, note_ending};
pub(crate) use noted::Counted;

use crate::errors::openai_error;
use crate::request::Request;
use crate::respond::Reply;
use crate::shard::Shard;

/// Whether someone watched the live view in the last [`WATCH_FOR`] (for threads that gather
/// something only for it).
pub fn is_watched(hub: &crate::hub::Hub) -> bool {
    hub.ui.is_watched(board::since_start_ms(hub.started))
}

/// Serves `GET /ui{rest}`: the page's files to anyone (they hold nothing of the config), the
/// API to the master key or an admin key.
pub(crate) async fn serve(shard: &Shard, req: &Request<'_>, rest: &str) -> Reply {
    if let Some(reply) = assets::serve(rest, req.raw_head) {
        return reply;
    }
    let Some(api) = rest.strip_prefix("/api/") else {
        return Reply::json(404, openai_error(404, &format!("no route for /ui{rest}"), None));
    };
    let caller = match crate::server::admin::authorize(shard, req.authorization) {
        Ok(caller) => caller,
        Err(reply) => return reply,
    };
    let query = req.head.path.split_once('?').map_or("", |(_, q)| q);
    match api {
        "live" => live::serve(shard, &caller, query),
        _ => match api.strip_prefix("decision/").and_then(|seq| seq.parse().ok()) {
            Some(seq) => decision::serve(shard, seq),
            None => Reply::json(404, openai_error(404, &format!("no route for /ui{rest}"), None)),
        },
    }
}
