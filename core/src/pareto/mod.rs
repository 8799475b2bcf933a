//! The best-value provider walk for OpenRouter (docs/routing.md, "The pareto walk"): per managed
//! model, hard filters over the poller's telemetry, the pareto frontier of input price vs p50
//! throughput, the greedy value walk with flap damping; per request, the winner or the walk
//! re-run without the providers that are unavailable now.

mod choose;
mod cooldown;
mod narrow;
mod promotion;
mod published;
mod region;
mod rule;
mod select;
mod settings;
mod telemetry;
mod walk;

pub use choose::{availability, choose, Availability, Choice, Reason};
pub use cooldown::{is_input_cap_error, parse_allowed_providers, CooldownSettings, ModelView, ProviderCooldowns};
pub use narrow::{narrow, region_allows, region_of, Narrowing};
pub use promotion::Verdict;
pub use published::{AllowList, ModelTelemetry, ParetoTelemetry};
pub use region::{region_bases, verdict as region_verdict, RegionVerdict};
pub use rule::{rule_key, ParetoRule, UnverifiedRegionPolicy, DEFAULT_RULE_MODEL};
pub use select::{select, Candidate, Dropped, Selection, UPTIME_FLOOR};
pub use settings::{ParetoSettings, TelemetrySettings};
pub use telemetry::{base_slug, Geography, StatsRow, UptimeRow};
pub use walk::{first_usable, frontier_slugs, ranked_order, value_winner, Point};
