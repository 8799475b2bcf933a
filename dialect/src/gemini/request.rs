//! An OpenAI chat-completions request → a Gemini `GenerateContentRequest` body.

use crate::json_bytes;
use serde_json::{json, Map, Value};

use super::super::{function_tools, no_equivalent, parse_request, Untranslatable};
use super::mapping::{thinking_budget_for, GEMINI};
use super::messages::conversation_of;

/// Translates a chat-completions body into a `generateContent` / `streamGenerateContent` body, or
/// names the first field that cannot be expressed there. The model and streaming are the URL's:
/// `model`, `stream` and `stream_options` are read and not carried.
pub fn chat_request_to_gemini(body: &[u8]) -> Result<Vec<u8>, Untranslatable> {
    let request = parse_request(body)?;
    let mut config = Map::new();
    let (mut max_tokens, mut max_completion_tokens) = (None, None);
    let (mut logprobs, mut top_logprobs) = (false, None);
    let (mut tools, mut tool_choice) = (None, None);
    let mut conversation = Value::Null;
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        let is = |v: &Value, default: Value| *v == default;
        match key.as_str() {
            "model"
            | "stream"
            | "stream_options"
            | "user"
            | "safety_identifier"
            | "metadata"
            | "prompt_cache_key"
            | "parallel_tool_calls" => {}
            "messages" => conversation = value,
            "temperature" => number(&key, value, "temperature", &mut config)?,
            "top_p" => number(&key, value, "topP", &mut config)?,
            "seed" => number(&key, value, "seed", &mut config)?,
            "presence_penalty" | "frequency_penalty" if value.as_f64() == Some(0.0) => {}
            "presence_penalty" => number(&key, value, "presencePenalty", &mut config)?,
            "frequency_penalty" => number(&key, value, "frequencyPenalty", &mut config)?,
            "max_tokens" => max_tokens = Some(value),
            "max_completion_tokens" => max_completion_tokens = Some(value),
            "n" if is(&value, json!(1)) => {}
            "n" => number(&key, value, "candidateCount", &mut config)?,
            "stop" => match value {
                Value::String(stop) => {
                    config.insert("stopSequences".into(), json!([stop]));
                }
                Value::Array(stops) if stops.is_empty() => {}
                Value::Array(stops) if stops.iter().all(Value::is_string) => {
                    config.insert("stopSequences".into(), Value::Array(stops));
                }
                _ => return Err(Untranslatable::new(key, "`stop` must be a string or a list of strings")),
            },
            "logprobs" => logprobs = value == Value::Bool(true),
            "top_logprobs" if value.as_f64() == Some(0.0) => {}
            "top_logprobs" => top_logprobs = Some(value),
            "response_format" => response_format(value, &mut config)?,
            "reasoning_effort" => {
                let Some(budget) = value.as_str().and_then(thinking_budget_for) else {
                    return Err(no_equivalent(key, GEMINI));
                };
                let thinking = match budget {
                    0 => json!({"thinkingBudget": 0}),
                    _ => json!({"thinkingBudget": budget, "includeThoughts": true}),
                };
                config.insert("thinkingConfig".into(), thinking);
            }
            "tools" => tools = Some(function_declarations(value)?),
            "tool_choice" => tool_choice = Some(value),
            "store" if is(&value, json!(false)) => {}
            "logit_bias" if is(&value, json!({})) => {}
            "service_tier" if is(&value, json!("auto")) || is(&value, json!("default")) => {}
            "modalities" if is(&value, json!(["text"])) => {}
            _ => return Err(no_equivalent(key, GEMINI)),
        }
    }
    if let Some(limit) = max_completion_tokens.or(max_tokens) {
        config.insert("maxOutputTokens".into(), limit);
    }
    if logprobs {
        config.insert("responseLogprobs".into(), true.into());
        if let Some(top) = top_logprobs {
            config.insert("logprobs".into(), top);
        }
    } else if top_logprobs.is_some() {
        return Err(Untranslatable::new("top_logprobs", "`top_logprobs` needs `logprobs: true`"));
    }
    let conversation = conversation_of(conversation)?;
    let mut out = Map::new();
    out.insert("contents".into(), conversation.contents);
    if let Some(system) = conversation.system {
        out.insert("systemInstruction".into(), system);
    }
    if let Some(declarations) = tools.filter(|d| !d.is_empty()) {
        let names: Vec<&str> = declarations.iter().filter_map(|d| d.get("name").and_then(Value::as_str)).collect();
        if let Some(choice) = tool_choice {
            let calling = function_calling_config(choice, &names)?;
            out.insert("toolConfig".into(), json!({"functionCallingConfig": calling}));
        }
        out.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    } else if let Some(choice) = tool_choice {
        // Without tools only "don't call one" or "call one if you like" make sense.
        if choice != json!("none") && choice != json!("auto") {
            return Err(Untranslatable::new("tool_choice", "`tool_choice` names a tool but `tools` is empty"));
        }
    }
    if !config.is_empty() {
        out.insert("generationConfig".into(), Value::Object(config));
    }
    Ok(json_bytes(&Value::Object(out)))
}

fn number(field: &str, value: Value, gemini: &str, config: &mut Map<String, Value>) -> Result<(), Untranslatable> {
    if !value.is_number() {
        return Err(Untranslatable::new(field, format!("`{field}` must be a number")));
    }
    config.insert(gemini.into(), value);
    Ok(())
}

fn response_format(value: Value, config: &mut Map<String, Value>) -> Result<(), Untranslatable> {
    match value.get("type").and_then(Value::as_str) {
        Some("text") => {}
        Some("json_object") => {
            config.insert("responseMimeType".into(), "application/json".into());
        }
        Some("json_schema") => {
            for key in value.get("json_schema").and_then(Value::as_object).into_iter().flat_map(Map::keys) {
                if !matches!(key.as_str(), "name" | "description" | "schema" | "strict") {
                    return Err(no_equivalent(format!("response_format.json_schema.{key}"), GEMINI));
                }
            }
            config.insert("responseMimeType".into(), "application/json".into());
            if let Some(schema) = value.pointer("/json_schema/schema") {
                config.insert("responseJsonSchema".into(), schema.clone());
            }
        }
        _ => return Err(no_equivalent("response_format.type", GEMINI)),
    }
    Ok(())
}

/// Function tools as Gemini `functionDeclarations`, the JSON Schema kept whole as
/// `parametersJsonSchema`.
fn function_declarations(value: Value) -> Result<Vec<Value>, Untranslatable> {
    let functions = function_tools(value, GEMINI)?;
    let mut out = Vec::with_capacity(functions.len());
    for (i, function) in functions.into_iter().enumerate() {
        let mut declaration = Map::new();
        for (key, value) in function {
            match key.as_str() {
                "name" | "description" => {
                    declaration.insert(key, value);
                }
                "parameters" => {
                    declaration.insert("parametersJsonSchema".into(), value);
                }
                // Gemini validates arguments against the schema without a strict switch.
                "strict" => {}
                _ => return Err(no_equivalent(format!("tools[{i}].function.{key}"), GEMINI)),
            }
        }
        if !declaration.get("name").is_some_and(Value::is_string) {
            return Err(Untranslatable::new(format!("tools[{i}].function.name"), "a function needs a name"));
        }
        out.push(Value::Object(declaration));
    }
    Ok(out)
}

/// `tool_choice` as `functionCallingConfig`: auto/none/required → AUTO/NONE/ANY, a named
/// function → ANY restricted to it.
fn function_calling_config(choice: Value, names: &[&str]) -> Result<Value, Untranslatable> {
    match &choice {
        Value::String(mode) => match mode.as_str() {
            "auto" => Ok(json!({"mode": "AUTO"})),
            "none" => Ok(json!({"mode": "NONE"})),
            "required" => Ok(json!({"mode": "ANY"})),
            _ => Err(no_equivalent("tool_choice", GEMINI)),
        },
        _ => match (choice.get("type").and_then(Value::as_str), choice.pointer("/function/name")) {
            (Some("function"), Some(Value::String(name))) => {
                if !names.contains(&name.as_str()) {
                    let message = format!("`tool_choice` names `{name}`, which is not among `tools`");
                    return Err(Untranslatable::new("tool_choice.function.name", message));
                }
                Ok(json!({"mode": "ANY", "allowedFunctionNames": [name]}))
            }
            _ => Err(no_equivalent("tool_choice.type", GEMINI)),
        },
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
