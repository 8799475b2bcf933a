//! OpenRouter's error bodies, made from the recorded ones in `tests/fixtures/` by replacing only
//! the parts that name this request (model, provider, counts, lists): every other byte, the
//! sentence structure a gateway parses included, stays the fixture's.

const RATE_LIMITED: &str = include_str!("../../../tests/fixtures/openrouter_error_429_upstream_rate_limited.json");
const CONTEXT_LENGTH: &str = include_str!("../../../tests/fixtures/openrouter_error_400_context_length.json");
const NO_ALLOWED_ACCOUNT: &str =
    include_str!("../../../tests/fixtures/openrouter_error_404_no_allowed_providers_account.json");
const NO_ALLOWED_REQUEST: &str =
    include_str!("../../../tests/fixtures/openrouter_error_404_no_allowed_providers_request_only.json");

/// `text` with the part between the ends of `start` and the beginning of `end` (the first `end`
/// after `start`) replaced by `with`; `text` unchanged when a marker is missing.
pub(crate) fn replace_between(text: &str, start: &str, end: &str, with: &str) -> String {
    let Some(from) = text.find(start).map(|at| at + start.len()) else {
        return text.to_owned();
    };
    let Some(to) = text[from..].find(end).map(|at| from + at) else {
        return text.to_owned();
    };
    format!("{}{with}{}", &text[..from], &text[to..])
}

/// `value` as it stands inside a JSON string (escaped, without the quotes).
fn json_inner(value: &str) -> String {
    let quoted = serde_json::Value::from(value).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// `values` as a JSON array of strings.
fn json_list(values: &[String]) -> String {
    serde_json::Value::from(values.to_vec()).to_string()
}

fn finish(text: String) -> Vec<u8> {
    text.trim_end().as_bytes().to_vec()
}

/// 429: `provider_name` rate-limited upstream for `model` (`metadata.raw` names the model).
pub(crate) fn rate_limited(model: &str, provider_name: &str) -> Vec<u8> {
    let text = replace_between(RATE_LIMITED, "\"raw\":\"", " is temporarily rate-limited", &json_inner(model));
    finish(replace_between(
        &text,
        "\"provider_name\":",
        ",\"is_byok\"",
        &serde_json::Value::from(provider_name).to_string(),
    ))
}

/// 400: `input_tokens` of input (plus `output_tokens` asked for) beyond `cap`.
pub(crate) fn context_length(cap: u64, input_tokens: u64, output_tokens: u64, provider_name: &str) -> Vec<u8> {
    let text = replace_between(CONTEXT_LENGTH, "maximum context length is ", " tokens.", &cap.to_string());
    let requested = format!(
        "{} tokens ({input_tokens} of text input, {output_tokens} in the output",
        input_tokens.saturating_add(output_tokens)
    );
    let text = replace_between(&text, "you requested about ", ")", &requested);
    finish(replace_between(&text, "\"provider_name\":", "}", &serde_json::Value::from(provider_name).to_string()))
}

/// 404: the account's allowed-providers setting permits none of the requested providers.
/// `serving`: the organisations serving `model`; `permitted`: the account's list.
pub(crate) fn no_allowed_providers_account(model: &str, serving: &[String], permitted: &[String]) -> Vec<u8> {
    let text = replace_between(
        NO_ALLOWED_ACCOUNT,
        "Providers serving ",
        ", but your account's",
        &json_inner(&format!("{model}: {}", serving.join(", "))),
    );
    let text = replace_between(&text, "setting permits only: ", ". To change", &json_inner(&permitted.join(", ")));
    finish(text)
}

/// 404: none of the request's `provider.only` entries (`requested`) serves `model`, which
/// `serving` (organisations) do.
pub(crate) fn no_allowed_providers_request(model: &str, serving: &[String], requested: &[String]) -> Vec<u8> {
    let text = replace_between(
        NO_ALLOWED_REQUEST,
        "Providers serving ",
        ", but your request's",
        &json_inner(&format!("{model}: {}", serving.join(", "))),
    );
    let text = replace_between(&text, "preference permits only: ", ".\"", &json_inner(&requested.join(", ")));
    let text = replace_between(&text, "\"available_providers\":", ",\"requested_providers\"", &json_list(serving));
    finish(replace_between(&text, "\"requested_providers\":", ",\"routing_funnel\"", &json_list(requested)))
}

/// 404: OpenRouter knows no endpoint for `model` (every one was filtered out or none exists).
pub(crate) fn no_endpoints(model: &str) -> Vec<u8> {
    error_body(&format!("No endpoints found for {model}."), 404)
}

/// An error an upstream provider returned with `status`, in OpenRouter's envelope.
pub(crate) fn provider_error(status: u16, provider_name: &str, raw: &str) -> Vec<u8> {
    serde_json::json!({"error": {
        "message": "Provider returned error",
        "code": status,
        "metadata": {"raw": raw, "provider_name": provider_name, "is_byok": false},
    }})
    .to_string()
    .into_bytes()
}

/// OpenRouter's plain error envelope, `{"error":{"message":…,"code":…}}`, in its field order.
pub(crate) fn error_body(message: &str, code: u16) -> Vec<u8> {
    format!("{{\"error\":{{\"message\":\"{}\",\"code\":{code}}}}}", json_inner(message)).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).expect("JSON")
    }

    fn strings(values: &[&str]) -> Vec<String> {
        values.iter().map(|value| (*value).to_owned()).collect()
    }

    #[test]
    fn the_fixture_values_give_back_the_fixtures() {
        let permitted = "meta, baidu, google-vertex, novita, openai, baseten, gmicloud, anthropic, streamlake, \
                         google-ai-studio";
        let permitted: Vec<String> = permitted.split(", ").map(str::to_owned).collect();
        let account = no_allowed_providers_account("typesafe/jev-1.13-20260917", &strings(&["typesafe"]), &permitted);
        assert_eq!(account, NO_ALLOWED_ACCOUNT.trim_end().as_bytes());
        let request = no_allowed_providers_request(
            "anthropic/claude-3-haiku",
            &strings(&["amazon-bedrock"]),
            &strings(&["anthropic"]),
        );
        assert_eq!(request, NO_ALLOWED_REQUEST.trim_end().as_bytes());
        let limited = rate_limited("deepseek/deepseek-v4-pro-0813", "DeepInfra");
        assert_eq!(limited, RATE_LIMITED.trim_end().as_bytes());
    }

    #[test]
    fn account_404_names_the_model_the_servers_and_the_configured_list() {
        let body = no_allowed_providers_account(
            "z-ai/glm-5.2",
            &strings(&["z-ai", "baseten"]),
            &strings(&["novita", "deepinfra"]),
        );
        let message = json(&body)["error"]["message"].as_str().expect("message").to_owned();
        assert_eq!(
            message,
            "No allowed providers are available for the selected model. Providers serving z-ai/glm-5.2: z-ai, \
             baseten, but your account's allowed-providers setting permits only: novita, deepinfra. To change your \
             allowed providers, visit: https://openrouter.ai/settings/privacy."
        );
        assert_eq!(json(&body)["error"]["code"], 404);
    }

    #[test]
    fn request_404_lists_what_serves_and_what_was_asked() {
        let body = no_allowed_providers_request("z-ai/glm-5.2", &strings(&["novita"]), &strings(&["nowhere/fp8"]));
        let body = json(&body);
        assert!(body["error"]["message"].as_str().is_some_and(|m| m.ends_with(
            "z-ai/glm-5.2: novita, but your request's provider.only preference permits only: nowhere/fp8."
        )));
        assert_eq!(body["error"]["metadata"]["available_providers"], serde_json::json!(["novita"]));
        assert_eq!(body["error"]["metadata"]["requested_providers"], serde_json::json!(["nowhere/fp8"]));
    }

    #[test]
    fn rate_limit_and_context_length_name_this_request() {
        let body = json(&rate_limited("z-ai/glm-5.2", "Novita"));
        assert_eq!(body["error"]["code"], 429);
        assert_eq!(body["error"]["metadata"]["provider_name"], "Novita");
        assert_eq!(body["error"]["metadata"]["limit_source"], "upstream_provider_shared_pool");
        assert!(body["error"]["metadata"]["raw"]
            .as_str()
            .is_some_and(|raw| raw.starts_with("z-ai/glm-5.2 is temporarily")));

        let body = json(&context_length(1000, 1500, 20, "BaseTen"));
        assert_eq!(body["error"]["code"], 400);
        assert_eq!(body["error"]["metadata"]["provider_name"], "BaseTen");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(
            message.starts_with(
                "This endpoint's maximum context length is 1000 tokens. However, you requested about 1520 tokens \
                 (1500 of text input, 20 in the output). Please reduce"
            ),
            "{message}"
        );
    }

    #[test]
    fn plain_envelopes_escape_their_text() {
        assert_eq!(
            json(&error_body("a \"b\"", 503)),
            serde_json::json!({"error": {"message": "a \"b\"", "code": 503}})
        );
        assert_eq!(json(&no_endpoints("x/y"))["error"]["message"], "No endpoints found for x/y.");
        assert_eq!(json(&provider_error(502, "Novita", "boom"))["error"]["metadata"]["raw"], "boom");
    }
}
