//! What the pick reads from a request, extracted once from its body by the gateway.

/// The API route a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteKind {
    ChatCompletions,
    Embeddings,
}

impl RouteKind {
    /// The path appended to a deployment's `api_base`.
    pub fn upstream_path(self) -> &'static str {
        match self {
            RouteKind::ChatCompletions => "/chat/completions",
            RouteKind::Embeddings => "/embeddings",
        }
    }
}

/// Everything the pick needs to know about one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFacts {
    pub route: RouteKind,
    /// The requested model name (a group name, an alias, or a deployment id).
    pub model: String,
    pub stream: bool,
}
