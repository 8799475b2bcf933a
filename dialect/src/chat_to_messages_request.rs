//! An OpenAI chat-completions request → an Anthropic Messages request.

use crate::json_bytes;
use serde_json::{json, Map, Value};

use super::mapping::{budget_for_effort, parse_data_uri, MIN_THINKING_BUDGET};
use super::{
    function_tools, no_equivalent, parse_request, read_tool_call, take, Untranslatable, ANTHROPIC, DEFAULT_MAX_TOKENS,
};

/// Translates a chat-completions body into an Anthropic Messages body for `upstream_model`, or
/// names the first field that cannot be expressed there. A request without a token limit gets
/// [`DEFAULT_MAX_TOKENS`].
pub fn chat_request_to_messages(body: &[u8], upstream_model: &str) -> Result<Vec<u8>, Untranslatable> {
    chat_request_to_messages_with_default(body, upstream_model, DEFAULT_MAX_TOKENS)
}

/// The same with the `max_tokens` to use when the request has none (e.g. the model's output
/// limit from the cost map).
pub fn chat_request_to_messages_with_default(
    body: &[u8],
    upstream_model: &str,
    default_max_tokens: u64,
) -> Result<Vec<u8>, Untranslatable> {
    let request = parse_request(body)?;
    let mut out = Map::new();
    out.insert("model".into(), upstream_model.into());
    let (mut max_tokens, mut max_completion_tokens) = (None, None);
    let (mut user, mut safety_identifier, mut effort) = (None, None, None);
    let (mut tool_choice, mut parallel) = (None, None);
    let mut conversation = Value::Null;
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        let is = |v: &Value, default: Value| *v == default;
        match key.as_str() {
            "model" | "metadata" | "prompt_cache_key" | "stream_options" => {}
            "messages" => conversation = value,
            "max_tokens" => max_tokens = Some(value),
            "max_completion_tokens" => max_completion_tokens = Some(value),
            "temperature" if value.as_f64().is_some_and(|t| t > 1.0) => {
                let message = "Anthropic models take a temperature between 0 and 1";
                return Err(Untranslatable::new(key, message));
            }
            "temperature" | "top_p" | "stream" => {
                out.insert(key, value);
            }
            "stop" => match value {
                Value::String(stop) => {
                    out.insert("stop_sequences".into(), json!([stop]));
                }
                Value::Array(stops) if stops.is_empty() => {}
                stops => {
                    out.insert("stop_sequences".into(), stops);
                }
            },
            "tools" => {
                out.insert(key, tools(value)?);
            }
            "tool_choice" => tool_choice = Some(value),
            "parallel_tool_calls" => parallel = value.as_bool(),
            "user" => user = Some(value),
            "safety_identifier" => safety_identifier = Some(value),
            "reasoning_effort" => effort = Some(value),
            "response_format" => response_format(value, &mut out)?,
            "n" if is(&value, json!(1)) => {}
            "store" | "logprobs" if is(&value, json!(false)) => {}
            "top_logprobs" | "frequency_penalty" | "presence_penalty" if value.as_f64() == Some(0.0) => {}
            "logit_bias" if is(&value, json!({})) => {}
            "service_tier" if is(&value, json!("auto")) => {}
            "modalities" if is(&value, json!(["text"])) => {}
            _ => return Err(no_equivalent(key, ANTHROPIC)),
        }
    }
    let limit = max_completion_tokens.or(max_tokens).unwrap_or_else(|| default_max_tokens.into());
    let limit_value = limit.as_u64();
    out.insert("max_tokens".into(), limit);
    if let Some(user) = safety_identifier.or(user) {
        out.insert("metadata".into(), json!({"user_id": user}));
    }
    if let Some(effort) = effort {
        out.insert("thinking".into(), thinking(&effort, limit_value)?);
    }
    let has_tools = out.get("tools").is_some_and(|t| t.as_array().is_some_and(|t| !t.is_empty()));
    if let Some(choice) = anthropic_tool_choice(tool_choice, parallel, has_tools)? {
        out.insert("tool_choice".into(), choice);
    }
    let (system, messages) = conversation_of(conversation)?;
    if let Some(system) = system {
        out.insert("system".into(), system);
    }
    out.insert("messages".into(), messages);
    Ok(json_bytes(&Value::Object(out)))
}

fn tools(value: Value) -> Result<Value, Untranslatable> {
    let functions = function_tools(value, ANTHROPIC)?;
    let mut out = Vec::with_capacity(functions.len());
    for (i, function) in functions.into_iter().enumerate() {
        let mut anthropic = Map::new();
        for (key, value) in function {
            match key.as_str() {
                "name" | "description" => {
                    anthropic.insert(key, value);
                }
                "parameters" => {
                    anthropic.insert("input_schema".into(), value);
                }
                "strict" => {
                    if value == Value::Bool(true) {
                        anthropic.insert(key, value);
                    }
                }
                _ => return Err(no_equivalent(format!("tools[{i}].function.{key}"), ANTHROPIC)),
            }
        }
        anthropic.entry("input_schema").or_insert_with(|| json!({"type": "object", "properties": {}}));
        out.push(Value::Object(anthropic));
    }
    Ok(Value::Array(out))
}

fn anthropic_tool_choice(
    choice: Option<Value>,
    parallel: Option<bool>,
    has_tools: bool,
) -> Result<Option<Value>, Untranslatable> {
    let mut anthropic = match choice {
        None => None,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Some(json!({"type": "auto"})),
            "required" => Some(json!({"type": "any"})),
            "none" => Some(json!({"type": "none"})),
            _ => return Err(no_equivalent("tool_choice", ANTHROPIC)),
        },
        Some(object) => match (object.get("type").and_then(Value::as_str), object.pointer("/function/name")) {
            (Some("function"), Some(name)) => Some(json!({"type": "tool", "name": name})),
            _ => return Err(no_equivalent("tool_choice.type", ANTHROPIC)),
        },
    };
    // Anthropic refuses a tool_choice without tools; OpenAI allows a parallel_tool_calls without.
    if parallel == Some(false) && has_tools {
        let choice = anthropic.get_or_insert_with(|| json!({"type": "auto"}));
        if choice["type"] != "none" {
            choice["disable_parallel_tool_use"] = true.into();
        }
    }
    Ok(anthropic)
}

fn response_format(value: Value, out: &mut Map<String, Value>) -> Result<(), Untranslatable> {
    match value.get("type").and_then(Value::as_str) {
        Some("text") => Ok(()),
        Some("json_schema") => {
            let schema = value.pointer("/json_schema/schema").cloned().unwrap_or_else(|| json!({}));
            out.insert("output_config".into(), json!({"format": {"type": "json_schema", "schema": schema}}));
            Ok(())
        }
        _ => Err(no_equivalent("response_format.type", ANTHROPIC)),
    }
}

/// `reasoning_effort` as `thinking`: a budget by LiteLLM's table, kept below `max_tokens` as
/// Anthropic requires.
fn thinking(effort: &Value, max_tokens: Option<u64>) -> Result<Value, Untranslatable> {
    let effort = effort.as_str().unwrap_or("");
    if effort == "none" {
        return Ok(json!({"type": "disabled"}));
    }
    let Some(budget) = budget_for_effort(effort) else {
        return Err(no_equivalent("reasoning_effort", ANTHROPIC));
    };
    let budget = match max_tokens {
        Some(limit) if limit <= budget && limit > MIN_THINKING_BUDGET => limit - 1,
        Some(limit) if limit <= budget => {
            let message = format!("max_tokens {limit} leaves no room for Anthropic's minimum thinking budget of {MIN_THINKING_BUDGET} tokens");
            return Err(Untranslatable::new("reasoning_effort", message));
        }
        _ => budget,
    };
    Ok(json!({"type": "enabled", "budget_tokens": budget}))
}

/// System messages hoisted into `system`; the rest as Anthropic turns, consecutive tool messages
/// gathered into one user turn of tool results.
fn conversation_of(conversation: Value) -> Result<(Option<Value>, Value), Untranslatable> {
    let Value::Array(list) = conversation else {
        return Err(Untranslatable::new("messages", "`messages` must be an array"));
    };
    let mut system: Vec<Value> = Vec::new();
    let mut turns: Vec<Value> = Vec::with_capacity(list.len());
    let mut results_turn: Option<usize> = None;
    for (i, message) in list.into_iter().enumerate() {
        let Value::Object(mut message) = message else {
            return Err(Untranslatable::new(format!("messages[{i}]"), "a message must be an object"));
        };
        for (key, value) in &message {
            let allowed = matches!(key.as_str(), "role" | "content" | "tool_calls" | "tool_call_id");
            if !allowed && !value.is_null() {
                return Err(no_equivalent(format!("messages[{i}].{key}"), ANTHROPIC));
            }
        }
        let content = message.remove("content").unwrap_or(Value::Null);
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role != "tool" {
            results_turn = None;
        }
        match role {
            "system" | "developer" => system_blocks(i, content, &mut system)?,
            "user" => turns.push(json!({"role": "user", "content": user_content(i, content)?})),
            "assistant" => turns.push(assistant_turn(i, content, message.remove("tool_calls"))?),
            "tool" => {
                let result = tool_result(i, content, message.remove("tool_call_id"))?;
                match results_turn {
                    Some(at) => push_block(&mut turns[at], result),
                    None => {
                        results_turn = Some(turns.len());
                        turns.push(json!({"role": "user", "content": [result]}));
                    }
                }
            }
            _ => return Err(no_equivalent(format!("messages[{i}].role"), ANTHROPIC)),
        }
    }
    let system = match system.len() {
        0 => None,
        1 => system.pop().map(|mut block| take(&mut block, "text")),
        _ => Some(Value::Array(system)),
    };
    Ok((system, Value::Array(turns)))
}

fn push_block(turn: &mut Value, block: Value) {
    if let Some(blocks) = turn.get_mut("content").and_then(Value::as_array_mut) {
        blocks.push(block);
    }
}

fn system_blocks(i: usize, content: Value, system: &mut Vec<Value>) -> Result<(), Untranslatable> {
    match content {
        Value::String(text) => system.push(json!({"type": "text", "text": text})),
        Value::Array(parts) => {
            for (j, mut part) in parts.into_iter().enumerate() {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => system.push(json!({"type": "text", "text": take(&mut part, "text")})),
                    _ => return Err(no_equivalent(format!("messages[{i}].content[{j}].type"), ANTHROPIC)),
                }
            }
        }
        _ => return Err(Untranslatable::new(format!("messages[{i}].content"), "system content must be text")),
    }
    Ok(())
}

/// A user message's content: a string stays a string, parts become blocks.
fn user_content(i: usize, content: Value) -> Result<Value, Untranslatable> {
    let parts = match content {
        Value::Array(parts) => parts,
        other => return Ok(other),
    };
    let mut blocks = Vec::with_capacity(parts.len());
    for (j, mut part) in parts.into_iter().enumerate() {
        let at = |what: &str| format!("messages[{i}].content[{j}]{what}");
        let block = match part.get("type").and_then(Value::as_str) {
            Some("text") => json!({"type": "text", "text": take(&mut part, "text")}),
            Some("image_url") => {
                let url = match part.get_mut("image_url").map(Value::take) {
                    Some(Value::String(url)) => url,
                    Some(Value::Object(mut o)) => match o.remove("url") {
                        Some(Value::String(url)) => url,
                        _ => return Err(Untranslatable::new(at(".image_url.url"), "an image_url needs a url")),
                    },
                    _ => return Err(Untranslatable::new(at(".image_url"), "an image_url part needs its url")),
                };
                let source = match parse_data_uri(&url) {
                    Some((media_type, data)) => json!({"type": "base64", "media_type": media_type, "data": data}),
                    None => json!({"type": "url", "url": url}),
                };
                json!({"type": "image", "source": source})
            }
            Some("file") => {
                let data = part.pointer("/file/file_data").and_then(Value::as_str).and_then(parse_data_uri);
                let Some(("application/pdf", data)) = data else {
                    return Err(no_equivalent(at(".file"), ANTHROPIC));
                };
                let mut block = json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}});
                if let Some(name) = part.pointer("/file/filename").and_then(Value::as_str) {
                    block["title"] = name.into();
                }
                block
            }
            _ => return Err(no_equivalent(at(".type"), ANTHROPIC)),
        };
        blocks.push(block);
    }
    Ok(Value::Array(blocks))
}

/// An assistant message: text, then its tool calls as tool_use blocks (arguments parsed).
fn assistant_turn(i: usize, content: Value, calls: Option<Value>) -> Result<Value, Untranslatable> {
    let calls = match calls {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls,
        Some(_) => {
            return Err(Untranslatable::new(format!("messages[{i}].tool_calls"), "`tool_calls` must be an array"))
        }
    };
    if calls.is_empty() && content.is_string() {
        return Ok(json!({"role": "assistant", "content": content}));
    }
    let mut blocks = Vec::with_capacity(calls.len() + 1);
    match content {
        Value::Null => {}
        Value::String(text) => {
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
        }
        Value::Array(parts) => {
            for (j, mut part) in parts.into_iter().enumerate() {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => blocks.push(json!({"type": "text", "text": take(&mut part, "text")})),
                    _ => return Err(no_equivalent(format!("messages[{i}].content[{j}].type"), ANTHROPIC)),
                }
            }
        }
        _ => return Err(Untranslatable::new(format!("messages[{i}].content"), "content must be text or parts")),
    }
    for (j, call) in calls.into_iter().enumerate() {
        let call = read_tool_call(call, &format!("messages[{i}].tool_calls[{j}]"), ANTHROPIC)?;
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}));
    }
    Ok(json!({"role": "assistant", "content": blocks}))
}

/// A tool message as a tool_result block; text parts stay text blocks.
fn tool_result(i: usize, content: Value, id: Option<Value>) -> Result<Value, Untranslatable> {
    let content = match content {
        Value::Array(parts) => {
            let mut blocks = Vec::with_capacity(parts.len());
            for (j, mut part) in parts.into_iter().enumerate() {
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => blocks.push(json!({"type": "text", "text": take(&mut part, "text")})),
                    _ => return Err(no_equivalent(format!("messages[{i}].content[{j}].type"), ANTHROPIC)),
                }
            }
            Value::Array(blocks)
        }
        other => other,
    };
    Ok(json!({"type": "tool_result", "tool_use_id": id.unwrap_or(Value::Null), "content": content}))
}

#[cfg(test)]
#[path = "chat_to_messages_request_tests.rs"]
mod tests;
