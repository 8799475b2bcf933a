//! The paths the mock answers, named once.

/// What a request path asks for; the query string is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    ChatCompletions,
    Embeddings,
    Models,
    Health,
    /// `POST /v1/messages`: Anthropic's Messages API.
    AnthropicMessages,
    /// `POST /v1/messages/count_tokens`: Anthropic's token count.
    AnthropicCountTokens,
    /// `POST /v1/responses` (and `/responses`, Azure's `/openai/v1/responses` and
    /// `/openai/responses?api-version=V`): OpenAI's Responses API.
    Responses,
    /// `GET` / `DELETE /v1/responses/{id}`: a kept Responses answer.
    ResponseById,
    MockControl,
    MockRequests,
    MockStats,
    /// `/mock/openrouter/*`: steering and observing the OpenRouter emulation.
    MockOpenRouter,
    /// `POST /api/v1/chat/completions`: a chat routed the way OpenRouter routes it.
    OpenRouterChat,
    /// `/api/v1/models`, `/api/v1/models/{author}/{slug}/endpoints`,
    /// `/api/frontend/v1/stats/endpoint`: OpenRouter's telemetry, from files.
    OpenRouterTelemetry,
    /// `POST /openai/deployments/{deployment}/chat/completions?api-version=V`: Azure OpenAI.
    AzureChat,
    /// `POST /openai/deployments/{deployment}/embeddings?api-version=V`: Azure OpenAI.
    AzureEmbeddings,
    /// Any other `/openai/…` path: Azure's 404 `Resource not found`.
    AzureOther,
    /// `POST /{tenant}/oauth2/v2.0/token`: Microsoft Entra ID's token endpoint.
    EntraToken,
    /// `POST /v1beta/models/{model}:generateContent` (and `/v1/`): the Gemini API.
    GeminiGenerateContent,
    /// `POST /v1beta/models/{model}:streamGenerateContent[?alt=sse]`.
    GeminiStreamGenerateContent,
    /// `POST /v1beta/models/{model}:embedContent`.
    GeminiEmbedContent,
    /// `POST /v1beta/models/{model}:batchEmbedContents`.
    GeminiBatchEmbedContents,
    /// `POST /v1beta/models/{model}:countTokens`.
    GeminiCountTokens,
    /// Any other `/v1beta/models/{model}:{method}`: Google's 404.
    GeminiOther,
    /// `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent`
    /// (and `/v1beta1/`): Vertex AI.
    VertexGenerateContent,
    /// `…/publishers/google/models/{model}:streamGenerateContent[?alt=sse]`.
    VertexStreamGenerateContent,
    /// `…/publishers/anthropic/models/{model}:rawPredict`: Claude on Vertex AI.
    VertexRawPredict,
    /// `…/publishers/anthropic/models/{model}:streamRawPredict`.
    VertexStreamRawPredict,
    /// Any other `/v1/projects/…` path: Google's 404.
    VertexOther,
    /// `POST /token`: Google's OAuth 2.0 token endpoint (service-account JWT grant).
    GoogleToken,
    /// `POST /model/{modelId}/converse`: Amazon Bedrock's Converse.
    BedrockConverse,
    /// `POST /model/{modelId}/converse-stream`: ConverseStream (an `application/vnd.amazon.eventstream`).
    BedrockConverseStream,
    /// `POST /model/{modelId}/invoke`: InvokeModel (Titan and Cohere embeddings).
    BedrockInvoke,
    /// Any other `/model/…` path: Bedrock's 404 `UnknownOperationException`.
    BedrockOther,
    Unknown,
}

impl Route {
    pub(crate) fn from_path(path: &str) -> Route {
        let path = path.split_once('?').map_or(path, |(path, _query)| path);
        let provider_path = path.strip_prefix("/v1").unwrap_or(path);
        match provider_path {
            "/chat/completions" => return Route::ChatCompletions,
            "/embeddings" => return Route::Embeddings,
            "/models" => return Route::Models,
            "/messages" => return Route::AnthropicMessages,
            "/messages/count_tokens" => return Route::AnthropicCountTokens,
            "/responses" | "/openai/v1/responses" | "/openai/responses" => return Route::Responses,
            _ => {}
        }
        if let Some(id) = ["/responses/", "/openai/v1/responses/", "/openai/responses/"]
            .iter()
            .find_map(|prefix| provider_path.strip_prefix(prefix))
        {
            return if id.is_empty() { Route::Unknown } else { Route::ResponseById };
        }
        match path {
            "/health" => Route::Health,
            "/mock/control" => Route::MockControl,
            "/mock/requests" => Route::MockRequests,
            "/mock/stats" => Route::MockStats,
            "/api/v1/chat/completions" => Route::OpenRouterChat,
            "/api/v1/models" | "/api/frontend/v1/stats/endpoint" => Route::OpenRouterTelemetry,
            _ if path.starts_with("/api/v1/models/") && path.ends_with("/endpoints") => Route::OpenRouterTelemetry,
            _ if path.starts_with("/mock/openrouter/") => Route::MockOpenRouter,
            _ if path.starts_with("/openai/") => Route::azure(path),
            _ if is_entra_token_path(path) => Route::EntraToken,
            "/token" => Route::GoogleToken,
            _ if path.starts_with("/model/") => Route::bedrock(path),
            _ if path.starts_with("/v1/projects/") || path.starts_with("/v1beta1/projects/") => Route::vertex(path),
            _ if path.starts_with("/v1beta/models/") || path.starts_with("/v1/models/") => Route::gemini(path),
            // An OpenAI-compatible API under a prefix of its own (Hugging Face's router's
            // `/together/v1`, Cohere's `/compatibility/v1`).
            _ if path.ends_with("/chat/completions") => Route::ChatCompletions,
            _ if path.ends_with("/embeddings") => Route::Embeddings,
            _ if path.ends_with("/responses") => Route::Responses,
            _ => Route::Unknown,
        }
    }

    /// `/model/{modelId}/{operation}`, the model id one segment (percent-encoded as sent).
    fn bedrock(path: &str) -> Route {
        let rest = path.strip_prefix("/model/").unwrap_or_default();
        match rest.split_once('/') {
            Some((model, "converse")) if !model.is_empty() => Route::BedrockConverse,
            Some((model, "converse-stream")) if !model.is_empty() => Route::BedrockConverseStream,
            Some((model, "invoke")) if !model.is_empty() => Route::BedrockInvoke,
            _ => Route::BedrockOther,
        }
    }

    /// `/v1beta/models/{model}:{method}`; a path without a method is no Gemini path.
    fn gemini(path: &str) -> Route {
        let rest = path.strip_prefix("/v1beta/models/").or_else(|| path.strip_prefix("/v1/models/"));
        let Some((model, method)) = rest.and_then(|rest| rest.split_once(':')) else {
            return Route::Unknown;
        };
        if model.is_empty() || model.contains('/') {
            return Route::GeminiOther;
        }
        match method {
            "generateContent" => Route::GeminiGenerateContent,
            "streamGenerateContent" => Route::GeminiStreamGenerateContent,
            "embedContent" => Route::GeminiEmbedContent,
            "batchEmbedContents" => Route::GeminiBatchEmbedContents,
            "countTokens" => Route::GeminiCountTokens,
            _ => Route::GeminiOther,
        }
    }

    /// `/v1/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{method}`.
    fn vertex(path: &str) -> Route {
        let Some(parts) = vertex_path(path) else {
            return Route::VertexOther;
        };
        match (parts.publisher, parts.method) {
            ("google", "generateContent") => Route::VertexGenerateContent,
            ("google", "streamGenerateContent") => Route::VertexStreamGenerateContent,
            ("anthropic", "rawPredict") => Route::VertexRawPredict,
            ("anthropic", "streamRawPredict") => Route::VertexStreamRawPredict,
            _ => Route::VertexOther,
        }
    }

    /// The Gemini API's routes: checked (API key) and answered in Google's shape.
    pub(crate) fn is_gemini(self) -> bool {
        matches!(
            self,
            Route::GeminiGenerateContent
                | Route::GeminiStreamGenerateContent
                | Route::GeminiEmbedContent
                | Route::GeminiBatchEmbedContents
                | Route::GeminiCountTokens
                | Route::GeminiOther
        )
    }

    /// Vertex AI's routes: checked (bearer token, project) and answered in Google's shape.
    pub(crate) fn is_vertex(self) -> bool {
        matches!(
            self,
            Route::VertexGenerateContent
                | Route::VertexStreamGenerateContent
                | Route::VertexRawPredict
                | Route::VertexStreamRawPredict
                | Route::VertexOther
        )
    }

    /// Bedrock runtime's routes: checked (SigV4) and answered in Bedrock's shape.
    pub(crate) fn is_bedrock(self) -> bool {
        matches!(
            self,
            Route::BedrockConverse | Route::BedrockConverseStream | Route::BedrockInvoke | Route::BedrockOther
        )
    }

    fn azure(path: &str) -> Route {
        let Some(rest) = path.strip_prefix("/openai/deployments/") else {
            return Route::AzureOther;
        };
        match rest.split_once('/') {
            Some((deployment, "chat/completions")) if !deployment.is_empty() => Route::AzureChat,
            Some((deployment, "embeddings")) if !deployment.is_empty() => Route::AzureEmbeddings,
            _ => Route::AzureOther,
        }
    }

    /// Azure OpenAI's routes: checked (api-version, key or token) and answered in Azure's shape.
    pub(crate) fn is_azure(self) -> bool {
        matches!(self, Route::AzureChat | Route::AzureEmbeddings | Route::AzureOther)
    }

    /// OpenAI's Responses API: its errors are OpenAI's, `--no-responses` turns it off.
    pub(crate) fn is_responses(self) -> bool {
        matches!(self, Route::Responses | Route::ResponseById)
    }

    /// `/mock/*` endpoints steer the mock itself: they are never faulted, delayed or recorded.
    pub(crate) fn is_mock_control(self) -> bool {
        matches!(self, Route::MockControl | Route::MockRequests | Route::MockStats | Route::MockOpenRouter)
    }

    /// Anthropic's routes: their errors and faults are in Anthropic's shape.
    pub(crate) fn is_anthropic(self) -> bool {
        matches!(self, Route::AnthropicMessages | Route::AnthropicCountTokens)
    }

    /// Requests a gateway would send to a provider, kept by the recorder. OpenRouter's
    /// telemetry is counted apart (`GET /mock/openrouter/stats`).
    pub(crate) fn is_recorded(self) -> bool {
        !self.is_mock_control() && self != Route::Health && self != Route::OpenRouterTelemetry
    }
}

/// The parts of a Vertex AI model path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VertexPath<'a> {
    pub project: &'a str,
    pub location: &'a str,
    pub publisher: &'a str,
    pub model: &'a str,
    pub method: &'a str,
}

/// Splits `/v1[beta1]/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}:{method}`.
pub(crate) fn vertex_path(path: &str) -> Option<VertexPath<'_>> {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let rest = path.strip_prefix("/v1/projects/").or_else(|| path.strip_prefix("/v1beta1/projects/"))?;
    let segments: Vec<&str> = rest.split('/').collect();
    let [project, "locations", location, "publishers", publisher, "models", model_method] = segments[..] else {
        return None;
    };
    let (model, method) = model_method.split_once(':')?;
    let parts = [project, location, publisher, model, method];
    parts.iter().all(|part| !part.is_empty()).then_some(VertexPath { project, location, publisher, model, method })
}

/// `/{tenant}/oauth2/v2.0/token`.
fn is_entra_token_path(path: &str) -> bool {
    path.strip_suffix("/oauth2/v2.0/token")
        .and_then(|tenant| tenant.strip_prefix('/'))
        .is_some_and(|tenant| !tenant.is_empty() && !tenant.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_paths_work_with_and_without_v1() {
        assert_eq!(Route::from_path("/v1/chat/completions"), Route::ChatCompletions);
        assert_eq!(Route::from_path("/chat/completions"), Route::ChatCompletions);
        assert_eq!(Route::from_path("/v1/embeddings?x=1"), Route::Embeddings);
        assert_eq!(Route::from_path("/models"), Route::Models);
        assert_eq!(Route::from_path("/v1/health"), Route::Unknown);
        assert_eq!(Route::from_path("/mock/stats"), Route::MockStats);
        // An OpenAI-compatible API under a prefix of its own.
        assert_eq!(Route::from_path("/together/v1/chat/completions"), Route::ChatCompletions);
        assert_eq!(Route::from_path("/v2/chat/other"), Route::Unknown);
    }

    #[test]
    fn responses_paths() {
        for path in
            ["/v1/responses", "/responses", "/openai/v1/responses", "/openai/responses?api-version=2025-04-01-preview"]
        {
            assert_eq!(Route::from_path(path), Route::Responses, "{path}");
        }
        assert_eq!(Route::from_path("/together/v1/responses"), Route::Responses);
        assert_eq!(Route::from_path("/v1/responses/resp_mock_1"), Route::ResponseById);
        assert_eq!(Route::from_path("/openai/v1/responses/resp_1?api-version=preview"), Route::ResponseById);
        assert_eq!(Route::from_path("/v1/responses/"), Route::Unknown);
        assert!(Route::Responses.is_responses() && Route::ResponseById.is_recorded());
        assert!(!Route::Responses.is_azure() && !Route::Responses.is_anthropic());
    }

    #[test]
    fn mock_endpoints_are_neither_faulted_nor_recorded() {
        assert!(Route::MockRequests.is_mock_control());
        assert!(!Route::MockRequests.is_recorded());
        assert!(!Route::Health.is_recorded());
        assert!(Route::Unknown.is_recorded());
        assert!(Route::MockOpenRouter.is_mock_control());
        assert!(!Route::OpenRouterTelemetry.is_recorded());
        assert!(Route::OpenRouterChat.is_recorded());
    }

    #[test]
    fn anthropic_paths_work_with_and_without_v1() {
        assert_eq!(Route::from_path("/v1/messages"), Route::AnthropicMessages);
        assert_eq!(Route::from_path("/messages"), Route::AnthropicMessages);
        assert_eq!(Route::from_path("/v1/messages?beta=true"), Route::AnthropicMessages);
        assert_eq!(Route::from_path("/v1/messages/count_tokens"), Route::AnthropicCountTokens);
        assert_eq!(Route::from_path("/messages/count_tokens?beta=true"), Route::AnthropicCountTokens);
        assert_eq!(Route::from_path("/v1/messages/batches"), Route::Unknown);
        assert!(Route::AnthropicMessages.is_anthropic() && Route::AnthropicCountTokens.is_anthropic());
        assert!(!Route::ChatCompletions.is_anthropic());
        assert!(Route::AnthropicMessages.is_recorded() && Route::AnthropicCountTokens.is_recorded());
        assert!(!Route::AnthropicMessages.is_mock_control());
    }

    #[test]
    fn openrouter_paths() {
        assert_eq!(Route::from_path("/api/v1/chat/completions"), Route::OpenRouterChat);
        assert_eq!(Route::from_path("/api/v1/models"), Route::OpenRouterTelemetry);
        assert_eq!(Route::from_path("/api/v1/models/z-ai/glm-5.2/endpoints"), Route::OpenRouterTelemetry);
        assert_eq!(
            Route::from_path("/api/frontend/v1/stats/endpoint?permaslug=z-ai%2Fglm-5.2"),
            Route::OpenRouterTelemetry
        );
        assert_eq!(Route::from_path("/api/v1/models/z-ai/glm-5.2"), Route::Unknown);
        assert_eq!(Route::from_path("/mock/openrouter/providers"), Route::MockOpenRouter);
        assert_eq!(Route::from_path("/mock/openrouterx"), Route::Unknown);
    }

    #[test]
    fn azure_paths() {
        let chat = "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21";
        assert_eq!(Route::from_path(chat), Route::AzureChat);
        assert_eq!(Route::from_path("/openai/deployments/gpt-4o-prod/chat/completions"), Route::AzureChat);
        assert_eq!(
            Route::from_path("/openai/deployments/emb/embeddings?api-version=2024-02-01"),
            Route::AzureEmbeddings
        );
        assert_eq!(Route::from_path("/openai/deployments//chat/completions"), Route::AzureOther);
        assert_eq!(Route::from_path("/openai/deployments/x/completions"), Route::AzureOther);
        assert_eq!(Route::from_path("/openai/models"), Route::AzureOther);
        assert!(Route::AzureChat.is_azure() && Route::AzureOther.is_azure() && !Route::EntraToken.is_azure());
        assert_eq!(Route::from_path("/my-tenant/oauth2/v2.0/token"), Route::EntraToken);
        assert_eq!(Route::from_path("/a/b/oauth2/v2.0/token"), Route::Unknown);
        assert_eq!(Route::from_path("/oauth2/v2.0/token"), Route::Unknown);
        assert!(Route::AzureChat.is_recorded() && Route::EntraToken.is_recorded());
    }

    #[test]
    fn gemini_vertex_and_token_paths() {
        assert_eq!(Route::from_path("/v1beta/models/gemini-2.0-flash:generateContent"), Route::GeminiGenerateContent);
        assert_eq!(
            Route::from_path("/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&key=k"),
            Route::GeminiStreamGenerateContent
        );
        assert_eq!(Route::from_path("/v1/models/text-embedding-004:embedContent"), Route::GeminiEmbedContent);
        assert_eq!(Route::from_path("/v1beta/models/e:batchEmbedContents"), Route::GeminiBatchEmbedContents);
        assert_eq!(Route::from_path("/v1beta/models/g:countTokens"), Route::GeminiCountTokens);
        assert_eq!(Route::from_path("/v1beta/models/g:predict"), Route::GeminiOther);
        assert_eq!(Route::from_path("/v1/models"), Route::Models);
        assert_eq!(Route::from_path("/v1/models/gpt-4o"), Route::Unknown);
        let vertex = "/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.0-flash";
        assert_eq!(Route::from_path(&format!("{vertex}:generateContent")), Route::VertexGenerateContent);
        assert_eq!(
            Route::from_path(&format!("{vertex}:streamGenerateContent?alt=sse")),
            Route::VertexStreamGenerateContent
        );
        let claude = "/v1beta1/projects/p1/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514";
        assert_eq!(Route::from_path(&format!("{claude}:rawPredict")), Route::VertexRawPredict);
        assert_eq!(Route::from_path(&format!("{claude}:streamRawPredict")), Route::VertexStreamRawPredict);
        assert_eq!(Route::from_path(&format!("{claude}:generateContent")), Route::VertexOther);
        assert_eq!(Route::from_path("/v1/projects/p1/locations"), Route::VertexOther);
        let raw = format!("{claude}:rawPredict");
        let parts = vertex_path(&raw).expect("parts");
        assert_eq!((parts.project, parts.location, parts.model), ("p1", "us-east5", "claude-sonnet-4@20250514"));
        assert_eq!(Route::from_path("/token"), Route::GoogleToken);
        assert!(Route::GeminiOther.is_gemini() && Route::VertexOther.is_vertex() && !Route::GoogleToken.is_vertex());
    }

    #[test]
    fn bedrock_paths() {
        let model = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0";
        assert_eq!(Route::from_path(&format!("{model}/converse")), Route::BedrockConverse);
        assert_eq!(Route::from_path(&format!("{model}/converse-stream")), Route::BedrockConverseStream);
        assert_eq!(Route::from_path("/model/amazon.titan-embed-text-v2%3A0/invoke"), Route::BedrockInvoke);
        assert_eq!(Route::from_path(&format!("{model}/invoke-with-response-stream")), Route::BedrockOther);
        assert_eq!(Route::from_path("/model//converse"), Route::BedrockOther);
        assert!(Route::BedrockOther.is_bedrock() && Route::BedrockConverse.is_recorded());
    }
}
