//! Which of the classifier's signals fired, as a bitset (no allocation).

/// One signal: a scoring dimension that contributed, or what decided the tier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Fewer estimated tokens than `token_thresholds.simple`.
    Short,
    /// More estimated tokens than `token_thresholds.complex`.
    Long,
    /// At least one code keyword.
    Code,
    /// At least one reasoning marker.
    Reasoning,
    /// At least two technical terms.
    Technical,
    /// At least one simple/greeting marker.
    Simple,
    /// A multi-step pattern ("first … then", "step 2", "1. ", "a) ").
    MultiStep,
    /// More than three question marks.
    Questions,
    /// Two reasoning markers promoted the request to REASONING.
    ReasoningOverride,
    /// A keyword rule decided the tier.
    KeywordRule,
}

impl Signal {
    pub const ALL: [Signal; 10] = [
        Signal::Short,
        Signal::Long,
        Signal::Code,
        Signal::Reasoning,
        Signal::Technical,
        Signal::Simple,
        Signal::MultiStep,
        Signal::Questions,
        Signal::ReasoningOverride,
        Signal::KeywordRule,
    ];

    /// The name on the decision (LiteLLM's signal labels, without their details).
    pub const fn as_str(self) -> &'static str {
        match self {
            Signal::Short => "short",
            Signal::Long => "long",
            Signal::Code => "code",
            Signal::Reasoning => "reasoning",
            Signal::Technical => "technical",
            Signal::Simple => "simple",
            Signal::MultiStep => "multi-step",
            Signal::Questions => "questions",
            Signal::ReasoningOverride => "reasoning_override",
            Signal::KeywordRule => "keyword_rule",
        }
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// A set of [`Signal`]s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Signals(u16);

impl Signals {
    pub const EMPTY: Signals = Signals(0);

    #[must_use]
    pub const fn with(self, signal: Signal) -> Signals {
        Signals(self.0 | signal.bit())
    }

    pub const fn contains(self, signal: Signal) -> bool {
        self.0 & signal.bit() != 0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The signals that fired, in [`Signal::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Signal> {
        Signal::ALL.into_iter().filter(move |s| self.contains(*s))
    }
}
