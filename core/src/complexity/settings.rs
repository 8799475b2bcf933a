//! The heuristic classifier's settings and their defaults, which are LiteLLM's
//! (`litellm/router_strategy/complexity_router/config.py`, v1.110.2): the keyword lists
//! (`DEFAULT_*_KEYWORDS`), `DEFAULT_DIMENSION_WEIGHTS`, `DEFAULT_TIER_BOUNDARIES`,
//! `DEFAULT_TOKEN_THRESHOLDS`, `reasoning_override_min_score` (unset) and `keyword_tier_rules`
//! (none).

use super::Tier;

/// The weight of each scoring dimension (LiteLLM's `dimension_weights`, keyed there by
/// `tokenCount`, `codePresence`, `reasoningMarkers`, `technicalTerms`, `simpleIndicators`,
/// `multiStepPatterns`, `questionComplexity`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub token_count: f64,
    pub code_presence: f64,
    pub reasoning_markers: f64,
    pub technical_terms: f64,
    pub simple_indicators: f64,
    pub multi_step_patterns: f64,
    pub question_complexity: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            token_count: 0.10,
            code_presence: 0.30,
            reasoning_markers: 0.25,
            technical_terms: 0.25,
            simple_indicators: 0.05,
            multi_step_patterns: 0.03,
            question_complexity: 0.02,
        }
    }
}

/// The score cut-offs between tiers (LiteLLM's `tier_boundaries`): a score below `simple_medium`
/// is SIMPLE, below `medium_complex` MEDIUM, below `complex_reasoning` COMPLEX, else REASONING.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TierBoundaries {
    pub simple_medium: f64,
    pub medium_complex: f64,
    pub complex_reasoning: f64,
}

impl Default for TierBoundaries {
    fn default() -> Self {
        TierBoundaries { simple_medium: 0.15, medium_complex: 0.35, complex_reasoning: 0.60 }
    }
}

/// Estimated-token cut-offs (LiteLLM's `token_thresholds`; tokens are characters / 4): fewer
/// than `simple` scores the length dimension -1, more than `complex` scores it +1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenThresholds {
    pub simple: usize,
    pub complex: usize,
}

impl Default for TokenThresholds {
    fn default() -> Self {
        TokenThresholds { simple: 15, complex: 400 }
    }
}

/// Everything the heuristic classifier reads. Keyword lists replace LiteLLM's defaults when
/// configured (its `code_keywords`, `reasoning_keywords`, `technical_keywords`,
/// `simple_keywords`); a keyword with a space (or a CJK character) matches as a substring, any
/// other keyword on word boundaries.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassifierSettings {
    pub code_keywords: Vec<String>,
    pub reasoning_keywords: Vec<String>,
    pub technical_keywords: Vec<String>,
    pub simple_keywords: Vec<String>,
    pub weights: Weights,
    pub boundaries: TierBoundaries,
    pub token_thresholds: TokenThresholds,
    /// The least score at which two or more reasoning markers promote a request straight to
    /// REASONING; `None` tracks `boundaries.simple_medium`, as in LiteLLM.
    pub reasoning_override_min_score: Option<f64>,
    /// `keyword_tier_rules` flattened to (keyword, tier) in the configured order. Checked before
    /// scoring; when several match, the most severe tier wins, and among its keywords the first.
    pub keyword_tier_rules: Vec<(String, Tier)>,
}

impl ClassifierSettings {
    /// The score floor of the reasoning override in effect.
    pub fn effective_reasoning_override_min_score(&self) -> f64 {
        self.reasoning_override_min_score.unwrap_or(self.boundaries.simple_medium)
    }
}

fn owned(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

pub const DEFAULT_CODE_KEYWORDS: &[&str] = &[
    "function",
    "class",
    "def",
    "const",
    "let",
    "var",
    "import",
    "export",
    "return",
    "async",
    "await",
    "try",
    "catch",
    "exception",
    "error",
    "debug",
    "api",
    "endpoint",
    "request",
    "response",
    "database",
    "sql",
    "query",
    "schema",
    "algorithm",
    "implement",
    "refactor",
    "optimize",
    "python",
    "javascript",
    "typescript",
    "java",
    "rust",
    "golang",
    "react",
    "vue",
    "angular",
    "node",
    "docker",
    "kubernetes",
    "git",
    "commit",
    "merge",
    "branch",
    "pull request",
];

pub const DEFAULT_REASONING_KEYWORDS: &[&str] = &[
    "step by step",
    "think through",
    "let's think",
    "reason through",
    "analyze this",
    "break down",
    "explain your reasoning",
    "show your work",
    "chain of thought",
    "think carefully",
    "consider all",
    "evaluate",
    "pros and cons",
    "compare and contrast",
    "weigh the options",
    "logical",
    "deduce",
    "infer",
    "conclude",
];

pub const DEFAULT_TECHNICAL_KEYWORDS: &[&str] = &[
    "architecture",
    "distributed",
    "scalable",
    "microservice",
    "machine learning",
    "neural network",
    "deep learning",
    "encryption",
    "authentication",
    "authorization",
    "performance",
    "latency",
    "throughput",
    "benchmark",
    "concurrency",
    "parallel",
    "threading",
    "memory",
    "cpu",
    "gpu",
    "optimization",
    "protocol",
    "tcp",
    "http",
    "grpc",
    "websocket",
    "container",
    "orchestration",
];

pub const DEFAULT_SIMPLE_KEYWORDS: &[&str] = &[
    "what is",
    "what's",
    "define",
    "definition of",
    "who is",
    "who was",
    "when did",
    "when was",
    "where is",
    "where was",
    "how many",
    "how much",
    "yes or no",
    "true or false",
    "simple",
    "brief",
    "short",
    "quick",
    "hello",
    "hi",
    "hey",
    "thanks",
    "thank you",
    "goodbye",
    "bye",
    "okay",
];

impl Default for ClassifierSettings {
    fn default() -> Self {
        ClassifierSettings {
            code_keywords: owned(DEFAULT_CODE_KEYWORDS),
            reasoning_keywords: owned(DEFAULT_REASONING_KEYWORDS),
            technical_keywords: owned(DEFAULT_TECHNICAL_KEYWORDS),
            simple_keywords: owned(DEFAULT_SIMPLE_KEYWORDS),
            weights: Weights::default(),
            boundaries: TierBoundaries::default(),
            token_thresholds: TokenThresholds::default(),
            reasoning_override_min_score: None,
            keyword_tier_rules: Vec::new(),
        }
    }
}
