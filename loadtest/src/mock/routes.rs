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
            _ => {}
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
            _ => Route::Unknown,
        }
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
        assert_eq!(Route::from_path("/v2/chat/completions"), Route::Unknown);
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
}
