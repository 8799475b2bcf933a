//! The four tiers of the complexity router's classifier, in ascending severity. A leaf below
//! the router (`crate::complexity`): a session pin (`crate::affinity`) remembers its tier.

/// A complexity tier. The order is LiteLLM's `TIER_SEVERITY_ORDER`: a keyword rule that matches
/// several tiers takes the most severe one. LiteLLM's optional `NON_REASONING` tier is left out:
/// its heuristic scorer never produces it (only the LLM classifiers do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Simple,
    Medium,
    Complex,
    Reasoning,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Simple, Tier::Medium, Tier::Complex, Tier::Reasoning];

    /// LiteLLM's name for the tier (`ComplexityTier`), as used for the keys of `tiers`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Tier::Simple => "SIMPLE",
            Tier::Medium => "MEDIUM",
            Tier::Complex => "COMPLEX",
            Tier::Reasoning => "REASONING",
        }
    }

    /// The tier named `name`, case-insensitively and ignoring surrounding whitespace (LiteLLM
    /// strips a keyword rule's tier and matches the built-in names case-insensitively).
    pub fn parse(name: &str) -> Option<Tier> {
        let name = name.trim();
        Tier::ALL.into_iter().find(|t| t.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_is_severity() {
        for t in Tier::ALL {
            assert_eq!(Tier::parse(t.as_str()), Some(t));
            assert_eq!(Tier::parse(&format!(" {} ", t.as_str().to_lowercase())), Some(t));
        }
        assert_eq!(Tier::parse("NON_REASONING"), None);
        assert!(Tier::Simple < Tier::Medium && Tier::Medium < Tier::Complex && Tier::Complex < Tier::Reasoning);
    }
}
