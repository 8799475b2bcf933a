//! The providers LiteLLM names that speak OpenAI's chat completions API at a base URL of their
//! own: one row each — the name (`litellm_params.model`'s prefix), the default base URL, and the
//! environment variables LiteLLM reads for the key and for the base URL, in its order. Read from
//! litellm 1.110.2 (`get_llm_provider_logic.py`'s `_get_openai_compatible_provider_info`, the
//! providers' `get_openai_compatible_provider_info`, `llms/openai_like/providers.json`).
//! Providers with their own `Provider` variant (OpenAI, Groq, Mistral, …) are not repeated here.

/// One OpenAI-compatible provider.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct CompatibleProvider {
    /// LiteLLM's name, the model prefix (`cerebras/llama3.1-8b`).
    pub name: &'static str,
    /// The base URL (`…/v1`, chat completions at `/chat/completions` under it); `None` for a
    /// server of one's own (LM Studio, a LiteLLM proxy): the entry must give `api_base`.
    pub api_base: Option<&'static str>,
    /// The variables LiteLLM reads the key from when the entry gives none, first set wins.
    pub key_env: &'static [&'static str],
    /// The variables LiteLLM reads the base URL from when the entry gives none.
    pub base_env: &'static [&'static str],
}

const fn row(
    name: &'static str,
    api_base: Option<&'static str>,
    key_env: &'static [&'static str],
    base_env: &'static [&'static str],
) -> CompatibleProvider {
    CompatibleProvider { name, api_base, key_env, base_env }
}

/// Every OpenAI-compatible provider without a variant of its own.
pub const COMPATIBLE: [CompatibleProvider; 81] = [
    row("anyscale", Some("https://api.endpoints.anyscale.com/v1"), &["ANYSCALE_API_KEY"], &["ANYSCALE_API_BASE"]),
    row("deepinfra", Some("https://api.deepinfra.com/v1/openai"), &["DEEPINFRA_API_KEY"], &["DEEPINFRA_API_BASE"]),
    row(
        "clf_ai_gateway",
        Some("https://api.clfaigateway.dev/v1"),
        &["CLF_AI_GATEWAY_API_KEY"],
        &["CLF_AI_GATEWAY_API_BASE"],
    ),
    row(
        "perplexity",
        Some("https://api.perplexity.ai"),
        &["PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"],
        &["PERPLEXITY_API_BASE"],
    ),
    row("empower", Some("https://app.empower.dev/api/v1"), &["EMPOWER_API_KEY"], &["EMPOWER_API_BASE"]),
    row("nvidia_nim", Some("https://integrate.api.nvidia.com/v1"), &["NVIDIA_NIM_API_KEY"], &["NVIDIA_NIM_API_BASE"]),
    row("cerebras", Some("https://api.cerebras.ai/v1"), &["CEREBRAS_API_KEY"], &["CEREBRAS_API_BASE"]),
    row("baseten", Some("https://inference.baseten.co/v1"), &["BASETEN_API_KEY"], &["BASETEN_API_BASE"]),
    row("sambanova", Some("https://api.sambanova.ai/v1"), &["SAMBANOVA_API_KEY"], &["SAMBANOVA_API_BASE"]),
    row("meta_llama", Some("https://api.llama.com/compat/v1"), &["LLAMA_API_KEY"], &["LLAMA_API_BASE"]),
    row("nebius", Some("https://api.studio.nebius.ai/v1"), &["NEBIUS_API_KEY"], &["NEBIUS_API_BASE"]),
    row("ai21_chat", Some("https://api.ai21.com/studio/v1"), &["AI21_API_KEY"], &["AI21_API_BASE"]),
    row(
        "volcengine",
        Some("https://ark.cn-beijing.volces.com/api/v3"),
        &["VOLCENGINE_API_KEY"],
        &["VOLCENGINE_API_BASE"],
    ),
    row("tencent", Some("https://tokenhub-intl.tencentcloudmaas.com/v1"), &["TENCENT_API_KEY"], &["TENCENT_API_BASE"]),
    row("github", Some("https://models.inference.ai.azure.com"), &["GITHUB_API_KEY"], &["GITHUB_API_BASE"]),
    row("zai", Some("https://api.z.ai/api/paas/v4"), &["ZAI_API_KEY"], &["ZAI_API_BASE"]),
    row("bigmodel", Some("https://open.bigmodel.cn/api/paas/v4"), &["BIGMODEL_API_KEY"], &["BIGMODEL_API_BASE"]),
    row(
        "friendliai",
        Some("https://api.friendli.ai/serverless/v1"),
        &["FRIENDLIAI_API_KEY", "FRIENDLI_TOKEN"],
        &["FRIENDLI_API_BASE"],
    ),
    row("galadriel", Some("https://api.galadriel.com/v1"), &["GALADRIEL_API_KEY"], &["GALADRIEL_API_BASE"]),
    row("novita", Some("https://api.novita.ai/v3/openai"), &["NOVITA_API_KEY"], &["NOVITA_API_BASE"]),
    row(
        "featherless_ai",
        Some("https://api.featherless.ai/v1"),
        &["FEATHERLESS_AI_API_KEY", "FEATHERLESS_API_KEY"],
        &["FEATHERLESS_AI_API_BASE", "FEATHERLESS_API_BASE"],
    ),
    row("nscale", Some("https://inference.api.nscale.com/v1"), &["NSCALE_API_KEY"], &["NSCALE_API_BASE"]),
    row(
        "dashscope",
        Some("https://dashscope.aliyuncs.com/compatible-mode/v1"),
        &["DASHSCOPE_API_KEY"],
        &["DASHSCOPE_API_BASE"],
    ),
    row(
        "modelscope",
        Some("https://api-inference.modelscope.cn/v1"),
        &["MODELSCOPE_API_KEY"],
        &["MODELSCOPE_API_BASE"],
    ),
    row("moonshot", Some("https://api.moonshot.ai/v1"), &["MOONSHOT_API_KEY"], &["MOONSHOT_API_BASE"]),
    row("v0", Some("https://api.v0.dev/v1"), &["V0_API_KEY"], &["V0_API_BASE"]),
    row("morph", Some("https://api.morphllm.com/v1"), &["MORPH_API_KEY"], &["MORPH_API_BASE"]),
    row("lambda_ai", Some("https://api.lambda.ai/v1"), &["LAMBDA_API_KEY"], &["LAMBDA_API_BASE"]),
    row("inception", Some("https://api.inceptionlabs.ai/v1"), &["INCEPTION_API_KEY"], &["INCEPTION_API_BASE"]),
    row("hyperbolic", Some("https://api.hyperbolic.xyz/v1"), &["HYPERBOLIC_API_KEY"], &["HYPERBOLIC_API_BASE"]),
    row(
        "vercel_ai_gateway",
        Some("https://ai-gateway.vercel.sh/v1"),
        &["VERCEL_AI_GATEWAY_API_KEY", "VERCEL_OIDC_TOKEN"],
        &["VERCEL_AI_GATEWAY_API_BASE"],
    ),
    row("aiml", Some("https://api.aimlapi.com/v1"), &["AIML_API_KEY"], &["AIML_API_BASE"]),
    row("wandb", Some("https://api.inference.wandb.ai/v1"), &["WANDB_API_KEY"], &["WANDB_API_BASE"]),
    row("lemonade", Some("http://localhost:8000/api/v1"), &["LEMONADE_API_KEY"], &["LEMONADE_API_BASE"]),
    row("clarifai", Some("https://api.clarifai.com/v2/ext/openai/v1"), &["CLARIFAI_API_KEY"], &[]),
    row("llamafile", Some("http://127.0.0.1:8080/v1"), &["LLAMAFILE_API_KEY"], &["LLAMAFILE_API_BASE"]),
    row("xinference", Some("http://127.0.0.1:9997/v1"), &["XINFERENCE_API_KEY"], &["XINFERENCE_API_BASE"]),
    row("lm_studio", None, &["LM_STUDIO_API_KEY"], &["LM_STUDIO_API_BASE"]),
    row("litellm_proxy", None, &["LITELLM_PROXY_API_KEY"], &["LITELLM_PROXY_API_BASE"]),
    row("publicai", Some("https://api.publicai.co/v1"), &["PUBLICAI_API_KEY"], &["PUBLICAI_API_BASE"]),
    row("helicone", Some("https://ai-gateway.helicone.ai"), &["HELICONE_API_KEY"], &[]),
    row("veniceai", Some("https://api.venice.ai/api/v1"), &["VENICE_AI_API_KEY"], &[]),
    row("xiaomi_mimo", Some("https://api.xiaomimimo.com/v1"), &["XIAOMI_MIMO_API_KEY"], &[]),
    row("scaleway", Some("https://api.scaleway.ai/v1"), &["SCW_SECRET_KEY"], &[]),
    row("synthetic", Some("https://api.synthetic.new/openai/v1"), &["SYNTHETIC_API_KEY"], &[]),
    row("apertis", Some("https://api.stima.tech/v1"), &["STIMA_API_KEY"], &[]),
    row("nano-gpt", Some("https://nano-gpt.com/api/v1"), &["NANOGPT_API_KEY"], &[]),
    row("poe", Some("https://api.poe.com/v1"), &["POE_API_KEY"], &[]),
    row("zerogpu", Some("https://api.zerogpu.ai/v1"), &["ZEROGPU_API_KEY"], &["ZEROGPU_API_BASE"]),
    row("chutes", Some("https://llm.chutes.ai/v1"), &["CHUTES_API_KEY"], &[]),
    row("abliteration", Some("https://api.abliteration.ai/v1"), &["ABLITERATION_API_KEY"], &[]),
    row("llamagate", Some("https://api.llamagate.dev/v1"), &["LLAMAGATE_API_KEY"], &[]),
    row("gmi", Some("https://api.gmi-serving.com/v1"), &["GMI_API_KEY"], &[]),
    row("sarvam", Some("https://api.sarvam.ai/v1"), &["SARVAM_API_KEY"], &[]),
    row("assemblyai", Some("https://llm-gateway.assemblyai.com/v1"), &["ASSEMBLYAI_API_KEY"], &[]),
    row(
        "charity_engine",
        Some("https://api.charityengine.services/remotejobs/v2/inference"),
        &["CHARITY_ENGINE_API_KEY"],
        &[],
    ),
    row("aihubmix", Some("https://aihubmix.com/v1"), &["AIHUBMIX_API_KEY"], &["AIHUBMIX_API_BASE"]),
    row("aiand", Some("https://api.aiand.com/v1"), &["AIAND_API_KEY"], &["AIAND_API_BASE"]),
    row("crusoe", Some("https://api.inference.crusoecloud.com/v1"), &["CRUSOE_API_KEY"], &["CRUSOE_API_BASE"]),
    row("darkbloom", Some("https://api.darkbloom.dev/v1"), &["DARKBLOOM_API_KEY"], &["DARKBLOOM_API_BASE"]),
    row("neosantara", Some("https://api.neosantara.xyz/v1"), &["NEOSANTARA_API_KEY"], &["NEOSANTARA_API_BASE"]),
    row(
        "tensormesh",
        Some("https://serverless.tensormesh.ai/v1"),
        &["TENSORMESH_INFERENCE_API_KEY"],
        &["TENSORMESH_SERVERLESS_BASE_URL"],
    ),
    row("parasail", Some("https://api.parasail.io/v1"), &["PARASAIL_API_KEY"], &["PARASAIL_API_BASE"]),
    row("libertai", Some("https://api.libertai.io/v1"), &["LIBERTAI_API_KEY"], &["LIBERTAI_API_BASE"]),
    row("empiriolabs", Some("https://api.empiriolabs.ai/v1"), &["EMPIRIOLABS_API_KEY"], &["EMPIRIOLABS_API_BASE"]),
    row("meta", Some("https://api.meta.ai/v1"), &["META_API_KEY"], &["META_API_BASE"]),
    row("cognition", Some("https://api.cognition.ai/v1"), &["COGNITION_API_KEY"], &["COGNITION_API_BASE"]),
    row(
        "coralbricks",
        Some("https://inference.coralbricks.ai/v1"),
        &["CORALBRICKS_API_KEY"],
        &["CORALBRICKS_API_BASE"],
    ),
    row("cortecs", Some("https://api.cortecs.ai/v1"), &["CORTECS_API_KEY"], &["CORTECS_API_BASE"]),
    row("pinstripes", Some("https://pinstripes.io/v1"), &["PINSTRIPES_API_KEY"], &["PINSTRIPES_API_BASE"]),
    row("scx-ai", Some("https://api.scx.ai/v1"), &["SCX_API_KEY"], &["SCX_API_BASE"]),
    row("prism", Some("https://api.prisminference.com/v1"), &["PRISM_API_KEY"], &["PRISM_API_BASE"]),
    row(
        "hostinger_router",
        Some("https://router.hostinger.com/v1"),
        &["HOSTINGER_ROUTER_API_KEY"],
        &["HOSTINGER_ROUTER_API_BASE"],
    ),
    row("sail", Some("https://api.sailresearch.com/v1"), &["SAIL_API_KEY"], &["SAIL_API_BASE"]),
    row("reka", Some("https://api.reka.ai/v1"), &["REKA_API_KEY"], &["REKA_API_BASE"]),
    row("openinfer", Some("https://api.openinfer.ai/v1"), &["OPENINFER_API_KEY"], &["OPENINFER_API_BASE"]),
    row(
        "inferenceapis",
        Some("https://api.inferenceapis.com/v1"),
        &["INFERENCEAPIS_API_KEY"],
        &["INFERENCEAPIS_API_BASE"],
    ),
    row("refuseless", Some("https://api.refuseless.com/v1"), &["REFUSELESS_API_KEY"], &[]),
    row("kyma", Some("https://kymaapi.com/v1"), &["KYMA_API_KEY"], &[]),
    row(
        "streamlake",
        Some("https://vanchin.streamlake.ai/api/gateway/v1/endpoints"),
        &["STREAMLAKE_API_KEY"],
        &["STREAMLAKE_API_BASE"],
    ),
    row("wally", Some("https://inference.runanywhere.ai/v1"), &["WALLY_API_KEY"], &["WALLY_API_BASE"]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;

    #[test]
    fn every_row_is_a_distinct_name_with_an_http_base_and_a_key_variable() {
        for (i, row) in COMPATIBLE.iter().enumerate() {
            assert!(COMPATIBLE[..i].iter().all(|other| other.name != row.name), "{} twice", row.name);
            assert!(Provider::named().iter().all(|p| p.prefix() != row.name), "{} has a variant", row.name);
            if let Some(base) = row.api_base {
                assert!(base.starts_with("https://") || base.starts_with("http://"), "{base}");
                assert!(!base.ends_with('/'), "{base}: paths are appended to it");
            }
            assert!(row.api_base.is_some() || !row.base_env.is_empty(), "{}: no way to an address", row.name);
            assert!(!row.key_env.is_empty(), "{}", row.name);
        }
    }

    #[test]
    fn each_row_is_a_provider_found_by_its_name() {
        for row in &COMPATIBLE {
            let provider = Provider::from_prefix(row.name).expect(row.name);
            assert_eq!(provider.compatible(), Some(row));
            assert_eq!(provider.default_api_base(), row.api_base);
            assert_eq!(Provider::ALL[provider.index()], provider);
        }
    }
}
