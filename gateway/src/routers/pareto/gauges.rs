//! The walk's series at scrape time: the polls and failed polls so far; per managed model the
//! age of the telemetry its verdict stands on, whether the last poll failed, the promoted
//! winner, and the providers hot now.

use std::fmt::Write;
use std::time::Instant;

use pointwork_core::State;

use crate::metrics::escape;
use crate::routes::Routes;

/// One metric family: its header, then its samples.
struct Family {
    text: String,
}

impl Family {
    fn new(name: &str, kind: &str, help: &str) -> Family {
        Family { text: format!("# HELP {name} {help}\n# TYPE {name} {kind}\n") }
    }

    fn sample(&mut self, line: std::fmt::Arguments<'_>) {
        let _ = self.text.write_fmt(line);
        self.text.push('\n');
    }
}

/// Appends the walk's series (nothing when it is off).
pub fn render(out: &mut String, hub: &crate::hub::Hub, routes: &Routes, state: &State) {
    let Some(pareto) = &routes.pareto else { return };
    // To the microsecond: the poll times are (whole seconds made a fresh poll's age negative).
    let unix_now = crate::clock::unix_seconds();
    let telemetry = crate::routers::pareto::published(hub);
    let now = Instant::now();
    let mut polls = Family::new(
        "pointwork_pareto_polls_total",
        "counter",
        "Telemetry polls of managed models (one per model and round).",
    );
    polls.sample(format_args!("pointwork_pareto_polls_total {}", telemetry.polls));
    let mut failures = Family::new("pointwork_pareto_poll_failures_total", "counter", "Telemetry polls that failed.");
    failures.sample(format_args!("pointwork_pareto_poll_failures_total {}", telemetry.poll_failures));
    let mut age = Family::new(
        "pointwork_pareto_poll_age_seconds",
        "gauge",
        "Age of the telemetry each managed model's verdict stands on.",
    );
    let mut stale = Family::new("pointwork_pareto_stale", "gauge", "1 while a managed model's last poll failed.");
    let mut winner = Family::new("pointwork_pareto_winner", "gauge", "The promoted winner of each managed model.");
    let mut hot = Family::new(
        "pointwork_pareto_hot_providers",
        "gauge",
        "Providers at the 429 threshold within the window, by model.",
    );
    for (key, rule) in &pareto.settings.rules {
        let model = escape(key);
        hot.sample(format_args!(
            "pointwork_pareto_hot_providers{{model=\"{model}\"}} {}",
            state.providers().hot_count(key, now)
        ));
        let Some(m) = telemetry.model(key, rule.fingerprint()) else { continue };
        age.sample(format_args!(
            "pointwork_pareto_poll_age_seconds{{model=\"{model}\"}} {:.3}",
            unix_now - m.polled_at
        ));
        stale.sample(format_args!("pointwork_pareto_stale{{model=\"{model}\"}} {}", u8::from(m.stale)));
        if let Some(w) = &m.verdict.winner {
            winner.sample(format_args!("pointwork_pareto_winner{{model=\"{model}\",slug=\"{}\"}} 1", escape(w)));
        }
    }
    for family in [polls, failures, age, stale, winner, hot] {
        out.push_str(&family.text);
    }
}
