//! OpenAI's chat completions and embeddings, and every provider that speaks them as OpenAI
//! does: `{api_base}/chat/completions` (a Messages request translated to it),
//! `{api_base}/embeddings`, the key as `authorization: Bearer`.
//!
//! | prefix | what differs, and where |
//! |---|---|
//! | `openai`, `openrouter`, `groq`, `together_ai`, `deepseek`, `mistral`, `fireworks_ai` | the default `api_base` (`Provider::default_api_base`) |
//! | `hosted_vllm` | no default `api_base`: it is required |
//! | `xai` | the default `api_base`, `XAI_API_KEY` (`provider_params.rs`); no embeddings (`Provider::serves_embeddings`) |
//! | `codestral` | the default `api_base`, `CODESTRAL_API_KEY` (`pointwork-config`'s `provider_params.rs`) |
//! | `ollama`, `ollama_chat` | the server root with `/v1` added, `OLLAMA_API_BASE`, `OLLAMA_API_KEY` (`provider_params.rs`) |
//! | `huggingface` | the router's model naming, `HF_TOKEN` (`provider_params.rs`) |
//! | `cohere`, `cohere_chat` | LiteLLM's `v1/` / `v2/` model prefix cut, `COHERE_API_KEY` (`provider_params.rs`) |

use pointwork_core::{Deployment, RouteKind};

use super::ProviderAdapter;

pub(super) struct OpenAiCompatible;

impl ProviderAdapter for OpenAiCompatible {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, _model: &str, route: RouteKind, _stream: bool) {
        out.extend_from_slice(d.provider.upstream_path(route).as_bytes());
    }
}
