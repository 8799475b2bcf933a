//! The board every shard hands its notes to, and the page reads.

/// Whether anyone watches, and what the shards noted meanwhile.
#[derive(Default)]
pub struct UiShared {}
