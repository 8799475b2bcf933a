//! `GET /ui/api/live`: everything the page shows, as one JSON object.

use crate::keys::Caller;
use crate::respond::Reply;
use crate::shard::Shard;

pub(super) fn serve(_shard: &Shard, _caller: &Caller, _query: &str) -> Reply {
    Reply::json(200, b"{}".to_vec())
}
