//! Keys, teams and spend in LiteLLM's database, on the request path: a key the config does
//! not know is found in the shard's cache of database keys ([`cache`]), else asked of the
//! database thread (`pointwork_db`) — the only wait, once per key and shard. Its row's rules
//! admit the request ([`admit`]), its cost is charged at once and written later ([`spend`]),
//! and the management API passes through to the thread ([`manage`]).

pub mod admit;
pub mod cache;
pub mod commands;
pub mod manage;
mod model_budgets;
pub mod spend;
mod texts;

pub use cache::ShardKeys;
