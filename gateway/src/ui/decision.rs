//! `GET /ui/api/decision/{seq}`: one noted decision, whole.

use crate::respond::Reply;
use crate::shard::Shard;

pub(super) fn serve(_shard: &Shard, _seq: u64) -> Reply {
    Reply::json(404, Vec::new())
}
