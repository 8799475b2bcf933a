//! Flap damping across polls: a new value-winner must win `promotion_polls` consecutive polls
//! before it replaces the promoted one; a promoted winner that stops passing the hard filters
//! is replaced at once.

use crate::pareto::{ParetoRule, Selection};

/// What one rule has learned so far: the promoted winner, the challenger and its streak, and
/// the last selection the requests walk.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    pub winner: Option<String>,
    /// The last poll's value-winner and how many polls in a row it has won.
    pub challenger: Option<String>,
    pub streak: u32,
    pub selection: Selection,
}

impl Verdict {
    /// The verdict after a poll's `selection`.
    pub fn after_poll(previous: Option<&Verdict>, selection: Selection, rule: &ParetoRule) -> Verdict {
        let Some(selected) = selection.winner.clone() else {
            return Verdict { selection, ..Verdict::default() };
        };
        let same_challenger = previous.is_some_and(|p| p.challenger.as_deref() == Some(selected.as_str()));
        let streak = if same_challenger { previous.map_or(0, |p| p.streak).saturating_add(1) } else { 1 };
        let incumbent = previous.and_then(|p| p.winner.clone());
        let incumbent_eligible = incumbent.as_ref().is_some_and(|w| selection.safe_set.contains(w));
        let promote =
            !incumbent_eligible || incumbent.as_deref() == Some(selected.as_str()) || streak >= rule.promotion_polls;
        let winner = if promote { Some(selected.clone()) } else { incumbent };
        Verdict { winner, challenger: Some(selected), streak, selection }
    }
}

/// A verdict whose winner is `winner` over `points` (slug, input price per million, tokens per
/// second), every point in the safe set: the per-request tests' starting point.
#[cfg(test)]
pub(crate) fn verdict_over(winner: &str, points: &[(&str, f64, f64)]) -> Verdict {
    use crate::pareto::Point;
    let points: Vec<Point> =
        points.iter().map(|&(slug, price, tps)| Point { slug: slug.into(), input_price_m: price, tps }).collect();
    let safe_set = points.iter().map(|p| p.slug.to_string()).collect();
    Verdict {
        winner: Some(winner.into()),
        challenger: Some(winner.into()),
        streak: 1,
        selection: Selection { winner: Some(winner.into()), safe_set, points, ..Selection::default() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polled(winner: &str, safe: &[&str]) -> Selection {
        Selection {
            winner: Some(winner.into()),
            safe_set: safe.iter().map(|s| s.to_string()).collect(),
            ..Selection::default()
        }
    }

    #[test]
    fn a_new_winner_waits_for_its_polls_and_an_ineligible_one_goes_at_once() {
        let rule = ParetoRule { promotion_polls: 2, ..ParetoRule::default() };
        let v1 = Verdict::after_poll(None, polled("a", &["a", "b"]), &rule);
        assert_eq!(v1.winner.as_deref(), Some("a"), "nothing to damp against");
        let v2 = Verdict::after_poll(Some(&v1), polled("b", &["a", "b"]), &rule);
        assert_eq!((v2.winner.as_deref(), v2.streak), (Some("a"), 1), "b has won one poll");
        let v3 = Verdict::after_poll(Some(&v2), polled("b", &["a", "b"]), &rule);
        assert_eq!(v3.winner.as_deref(), Some("b"), "two in a row: promoted");
        // b flaps back to a for one poll: a is not promoted yet...
        let v4 = Verdict::after_poll(Some(&v3), polled("a", &["a", "b"]), &rule);
        assert_eq!(v4.winner.as_deref(), Some("b"));
        // ...but when b stops passing the filters, a takes over at once.
        let v5 = Verdict::after_poll(Some(&v4), polled("a", &["a"]), &rule);
        assert_eq!(v5.winner.as_deref(), Some("a"));
        // With promotion_polls 1 every poll's winner is promoted.
        let v = Verdict::after_poll(Some(&v1), polled("b", &["a", "b"]), &ParetoRule::default());
        assert_eq!(v.winner.as_deref(), Some("b"));
        // A poll without a winner forgets it.
        assert_eq!(Verdict::after_poll(Some(&v5), Selection::default(), &rule).winner, None);
    }
}
