//! What the pick reads from a request, extracted once from its body by the gateway.

use crate::affinity::AffinityKeys;

/// The API route a request came in on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteKind {
    ChatCompletions,
    Embeddings,
    /// Anthropic's `/v1/messages`.
    Messages,
    /// OpenAI's `/v1/responses`.
    Responses,
}

impl RouteKind {
    /// The path a client calls (without the `/v1` prefix).
    pub fn path(self) -> &'static str {
        match self {
            RouteKind::ChatCompletions => "/chat/completions",
            RouteKind::Embeddings => "/embeddings",
            RouteKind::Messages => "/messages",
            RouteKind::Responses => "/responses",
        }
    }

    /// The dialect of the API surface the client calls.
    pub fn dialect(self) -> crate::Dialect {
        match self {
            RouteKind::Messages => crate::Dialect::AnthropicMessages,
            RouteKind::Responses => crate::Dialect::OpenAiResponses,
            RouteKind::ChatCompletions | RouteKind::Embeddings => crate::Dialect::OpenAiChat,
        }
    }
}

/// The request parameters the unsupported-params pre-call check knows, as a bit set. Each
/// maps to one `supports_*` flag of `model_info` / the model cost map (see [`Param::ALL`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestParams(pub u8);

/// One parameter of [`RequestParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// `tools` or `functions` (`supports_function_calling`).
    Tools,
    /// `tool_choice` other than `"none"` (`supports_tool_choice`).
    ToolChoice,
    /// `parallel_tool_calls` (`supports_parallel_function_calling`).
    ParallelToolCalls,
    /// `response_format` of type `json_schema` (`supports_response_schema`).
    ResponseSchema,
    /// `reasoning_effort` (`supports_reasoning`).
    ReasoningEffort,
}

impl Param {
    pub const ALL: [Param; 5] =
        [Param::Tools, Param::ToolChoice, Param::ParallelToolCalls, Param::ResponseSchema, Param::ReasoningEffort];

    /// The request field, as error messages name it.
    pub fn request_field(self) -> &'static str {
        match self {
            Param::Tools => "tools",
            Param::ToolChoice => "tool_choice",
            Param::ParallelToolCalls => "parallel_tool_calls",
            Param::ResponseSchema => "response_format",
            Param::ReasoningEffort => "reasoning_effort",
        }
    }

    /// The `model_info` / cost map key that says whether a deployment takes it.
    pub fn supports_key(self) -> &'static str {
        match self {
            Param::Tools => "supports_function_calling",
            Param::ToolChoice => "supports_tool_choice",
            Param::ParallelToolCalls => "supports_parallel_function_calling",
            Param::ResponseSchema => "supports_response_schema",
            Param::ReasoningEffort => "supports_reasoning",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl RequestParams {
    pub const NONE: RequestParams = RequestParams(0);

    pub fn with(self, p: Param) -> RequestParams {
        RequestParams(self.0 | p.bit())
    }

    pub fn insert(&mut self, p: Param) {
        self.0 |= p.bit();
    }

    pub fn contains(self, p: Param) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn intersects(self, other: RequestParams) -> bool {
        self.0 & other.0 != 0
    }

    /// The parameters in both sets.
    pub fn and(self, other: RequestParams) -> RequestParams {
        RequestParams(self.0 & other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = Param> {
        Param::ALL.into_iter().filter(move |p| self.contains(*p))
    }
}

/// Everything the pick needs to know about one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFacts {
    pub route: RouteKind,
    /// The requested model name (a group name, an alias, or a deployment id).
    pub model: String,
    pub stream: bool,
    /// A cheap, conservative estimate of the prompt's tokens (see `docs/routing.md`, "The
    /// prompt estimate"): it may over-count, it should not under-count by much.
    pub estimated_prompt_tokens: u64,
    /// `max_tokens`, else `max_completion_tokens`.
    pub max_tokens: Option<u64>,
    /// Whether a message carries an `image_url` content part.
    pub has_image: bool,
    /// The request parameters the unsupported-params check knows.
    pub params: RequestParams,
    /// The request's tags (body, header, key; see `docs/routing.md`): plain, `!tag` or `&tag`.
    pub tags: Vec<String>,
    /// `allowed_model_region` (e.g. `eu`, `us`).
    pub allowed_model_region: Option<String>,
    /// Session and API-key hashes for affinity (the gateway sets them).
    pub affinity: AffinityKeys,
}

impl RequestFacts {
    /// Facts that ask nothing of the filters: no tokens, no params, no tags.
    pub const fn new(route: RouteKind, model: String) -> RequestFacts {
        RequestFacts {
            route,
            model,
            stream: false,
            estimated_prompt_tokens: 0,
            max_tokens: None,
            has_image: false,
            params: RequestParams::NONE,
            tags: Vec::new(),
            allowed_model_region: None,
            affinity: AffinityKeys { session: None, api_key: None },
        }
    }
}

/// Facts for a chat request that asks nothing of the filters; what [`crate::PickRequest::new`]'s
/// callers without a body (benches, tests) pass.
pub static NO_FACTS: RequestFacts = RequestFacts::new(RouteKind::ChatCompletions, String::new());
