//! An OpenAI chat-completions request → a Bedrock Converse request body.

use crate::json_bytes;
use serde_json::{json, Map, Value};

use super::super::mapping::{budget_for_effort, parse_data_uri, MIN_THINKING_BUDGET};
use super::super::{
    function_tools, no_equivalent, parse_request, read_tool_call, take, Untranslatable, DEFAULT_MAX_TOKENS,
};
use super::{is_anthropic_model, CONVERSE};

/// Translates a chat-completions body into a Converse body, not knowing the deployment's model:
/// `reasoning_effort` (whose Converse form depends on the model) is refused.
pub fn chat_request_to_converse(body: &[u8]) -> Result<Vec<u8>, Untranslatable> {
    chat_request_to_converse_for(body, "")
}

/// The same for the Bedrock model id (or inference profile, or ARN) the request goes to: an
/// Anthropic Claude model takes `reasoning_effort` as `additionalModelRequestFields.thinking`.
pub fn chat_request_to_converse_for(body: &[u8], model_id: &str) -> Result<Vec<u8>, Untranslatable> {
    let request = parse_request(body)?;
    let mut out = Map::new();
    let mut inference = Map::new();
    let (mut max_tokens, mut max_completion_tokens, mut effort) = (None, None, None);
    let (mut tools, mut tool_choice, mut output_config) = (None, None, None);
    let mut conversation = Value::Null;
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        let is = |v: &Value, default: Value| *v == default;
        match key.as_str() {
            // The model id and streaming are in the URL; the rest changes no answer (module doc).
            "model" | "stream" | "stream_options" | "user" | "safety_identifier" | "metadata" | "prompt_cache_key" => {}
            "messages" => conversation = value,
            "max_tokens" => max_tokens = Some(value),
            "max_completion_tokens" => max_completion_tokens = Some(value),
            "temperature" => {
                inference.insert("temperature".into(), value);
            }
            "top_p" => {
                inference.insert("topP".into(), value);
            }
            "stop" => match value {
                Value::String(stop) if stop.is_empty() => {}
                Value::String(stop) => {
                    inference.insert("stopSequences".into(), json!([stop]));
                }
                Value::Array(stops) if stops.is_empty() => {}
                stops @ Value::Array(_) => {
                    inference.insert("stopSequences".into(), stops);
                }
                _ => return Err(Untranslatable::new(key, "`stop` must be a string or an array of strings")),
            },
            "tools" => tools = Some(tool_specs(value)?),
            "tool_choice" => tool_choice = Some(value),
            "parallel_tool_calls" if is(&value, json!(true)) => {}
            "reasoning_effort" => effort = Some(value),
            "response_format" => output_config = response_format(value)?,
            "service_tier" => match value.as_str() {
                Some("auto" | "default") => {}
                Some(tier @ ("flex" | "priority")) => {
                    out.insert("serviceTier".into(), json!({"type": tier}));
                }
                _ => return Err(no_equivalent(key, CONVERSE)),
            },
            "n" if is(&value, json!(1)) => {}
            "store" | "logprobs" if is(&value, json!(false)) => {}
            "top_logprobs" | "frequency_penalty" | "presence_penalty" if value.as_f64() == Some(0.0) => {}
            "logit_bias" if is(&value, json!({})) => {}
            "modalities" if is(&value, json!(["text"])) => {}
            _ => return Err(no_equivalent(key, CONVERSE)),
        }
    }
    let mut limit = max_completion_tokens.or(max_tokens);
    if let Some(effort) = effort {
        if !is_anthropic_model(model_id) {
            let message = "`reasoning_effort` reaches Bedrock only as an Anthropic Claude model's thinking budget, and this deployment's model is not known to be one; remove it";
            return Err(Untranslatable::new("reasoning_effort", message));
        }
        if let Some(thinking) = thinking(&effort, &mut limit)? {
            out.insert("additionalModelRequestFields".into(), json!({"thinking": thinking}));
        }
    }
    if let Some(limit) = limit {
        inference.insert("maxTokens".into(), limit);
    }
    let (system, messages, has_tool_blocks) = conversation_of(conversation)?;
    if !system.is_empty() {
        out.insert("system".into(), Value::Array(system));
    }
    out.insert("messages".into(), messages);
    if !inference.is_empty() {
        out.insert("inferenceConfig".into(), Value::Object(inference));
    }
    if let Some(config) = tool_config(tools, tool_choice, has_tool_blocks)? {
        out.insert("toolConfig".into(), config);
    }
    if let Some(config) = output_config {
        out.insert("outputConfig".into(), config);
    }
    Ok(json_bytes(&Value::Object(out)))
}

/// `reasoning_effort` as Claude's `thinking` (LiteLLM's budgets, as the Anthropic translator),
/// `None` for `none`. The budget stays below `maxTokens`, which is set when the request has none.
fn thinking(effort: &Value, limit: &mut Option<Value>) -> Result<Option<Value>, Untranslatable> {
    let effort = effort.as_str().unwrap_or("");
    if effort == "none" {
        return Ok(None);
    }
    let Some(budget) = budget_for_effort(effort) else {
        return Err(no_equivalent("reasoning_effort", CONVERSE));
    };
    let max = limit.get_or_insert_with(|| DEFAULT_MAX_TOKENS.into()).as_u64();
    let budget = match max {
        Some(max) if max <= budget && max > MIN_THINKING_BUDGET => max - 1,
        Some(max) if max <= budget => {
            let message = format!(
                "max_tokens {max} leaves no room for Claude's minimum thinking budget of {MIN_THINKING_BUDGET} tokens"
            );
            return Err(Untranslatable::new("reasoning_effort", message));
        }
        _ => budget,
    };
    Ok(Some(json!({"type": "enabled", "budget_tokens": budget})))
}

fn tool_specs(value: Value) -> Result<Vec<Value>, Untranslatable> {
    let functions = function_tools(value, CONVERSE)?;
    let mut out = Vec::with_capacity(functions.len());
    for (i, function) in functions.into_iter().enumerate() {
        let mut spec = Map::new();
        let mut schema = json!({"type": "object", "properties": {}});
        for (key, value) in function {
            match key.as_str() {
                "name" => {
                    spec.insert(key, value);
                }
                // Converse refuses an empty description.
                "description" if value.as_str().is_some_and(str::is_empty) => {}
                "description" => {
                    spec.insert(key, value);
                }
                "parameters" if !value.is_null() => schema = value,
                "parameters" => {}
                "strict" => {
                    if value == Value::Bool(true) {
                        spec.insert(key, value);
                    }
                }
                _ => return Err(no_equivalent(format!("tools[{i}].function.{key}"), CONVERSE)),
            }
        }
        spec.insert("inputSchema".into(), json!({"json": schema}));
        out.push(json!({"toolSpec": spec}));
    }
    Ok(out)
}

/// `toolConfig` from the tools and `tool_choice`. `none` leaves the tools out (Converse has no
/// "none"; a model cannot call a tool it is not told of), which Converse refuses when the
/// conversation holds tool calls or results: that case is refused here, naming `tool_choice`.
fn tool_config(
    tools: Option<Vec<Value>>,
    choice: Option<Value>,
    has_tool_blocks: bool,
) -> Result<Option<Value>, Untranslatable> {
    let choice = match choice {
        None => None,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Some(json!({"auto": {}})),
            "required" => Some(json!({"any": {}})),
            "none" if has_tool_blocks && tools.as_ref().is_some_and(|t| !t.is_empty()) => {
                let message = "Converse cannot forbid tool calls: `tool_choice: none` would leave the tools out, which Converse refuses when the conversation holds tool calls; remove it";
                return Err(Untranslatable::new("tool_choice", message));
            }
            "none" => return Ok(None),
            _ => return Err(no_equivalent("tool_choice", CONVERSE)),
        },
        Some(object) => match (object.get("type").and_then(Value::as_str), object.pointer("/function/name")) {
            (Some("function"), Some(name)) => Some(json!({"tool": {"name": name}})),
            _ => return Err(no_equivalent("tool_choice.type", CONVERSE)),
        },
    };
    let Some(tools) = tools.filter(|t| !t.is_empty()) else {
        // OpenAI ignores a tool_choice without tools (auto); a forced one has nothing to force.
        return match choice {
            Some(c) if c.get("auto").is_none() => {
                Err(Untranslatable::new("tool_choice", "`tool_choice` forces a tool but `tools` names none"))
            }
            _ => Ok(None),
        };
    };
    let mut config = json!({"tools": tools});
    if let Some(choice) = choice {
        config["toolChoice"] = choice;
    }
    Ok(Some(config))
}

/// `response_format`: `json_schema` as Converse's native structured output
/// (`outputConfig.textFormat`, the schema as a JSON string); `text` is the default.
fn response_format(value: Value) -> Result<Option<Value>, Untranslatable> {
    match value.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_schema") => {
            let spec = value.get("json_schema");
            let schema = spec.and_then(|s| s.get("schema")).cloned().unwrap_or_else(|| json!({}));
            let mut definition = json!({"schema": schema.to_string()});
            for key in ["name", "description"] {
                if let Some(text) = spec.and_then(|s| s.get(key)).filter(|v| v.is_string()) {
                    definition[key] = text.clone();
                }
            }
            Ok(Some(json!({"textFormat": {"type": "json_schema", "structure": {"jsonSchema": definition}}})))
        }
        _ => Err(no_equivalent("response_format.type", CONVERSE)),
    }
}

/// System messages as `system` blocks; the rest as Converse turns, consecutive turns of one role
/// merged (Converse requires alternation; tool results are user content). Also says whether any
/// turn holds a toolUse or toolResult block.
fn conversation_of(conversation: Value) -> Result<(Vec<Value>, Value, bool), Untranslatable> {
    let Value::Array(list) = conversation else {
        return Err(Untranslatable::new("messages", "`messages` must be an array"));
    };
    let mut system = Vec::new();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(list.len());
    let mut has_tool_blocks = false;
    for (i, message) in list.into_iter().enumerate() {
        let Value::Object(mut message) = message else {
            return Err(Untranslatable::new(format!("messages[{i}]"), "a message must be an object"));
        };
        for (key, value) in &message {
            let allowed = matches!(key.as_str(), "role" | "content" | "tool_calls" | "tool_call_id" | "cache_control");
            if !allowed && !value.is_null() {
                return Err(no_equivalent(format!("messages[{i}].{key}"), CONVERSE));
            }
        }
        let content = message.remove("content").unwrap_or(Value::Null);
        let (role, blocks) = match message.get("role").and_then(Value::as_str).unwrap_or("") {
            "system" | "developer" => {
                system.extend(text_blocks(i, content, "system content must be text")?);
                continue;
            }
            "user" => ("user", user_blocks(i, content)?),
            "assistant" => ("assistant", assistant_blocks(i, content, message.remove("tool_calls"))?),
            "tool" => ("user", vec![tool_result(i, content, message.remove("tool_call_id"))?]),
            _ => return Err(no_equivalent(format!("messages[{i}].role"), CONVERSE)),
        };
        has_tool_blocks |= blocks.iter().any(|b| b.get("toolUse").is_some() || b.get("toolResult").is_some());
        match turns.last_mut() {
            Some((last, held)) if *last == role => held.extend(blocks),
            // An assistant message with nothing in it carries nothing (Converse refuses empty content).
            _ if blocks.is_empty() => {}
            _ => turns.push((role, blocks)),
        }
    }
    let messages = turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect();
    Ok((system, Value::Array(messages), has_tool_blocks))
}

/// Content that may only be text: a string or text parts, as `{"text"}` blocks.
fn text_blocks(i: usize, content: Value, not_text: &str) -> Result<Vec<Value>, Untranslatable> {
    match content {
        Value::String(text) => Ok(vec![json!({"text": text})]),
        Value::Array(parts) => parts
            .into_iter()
            .enumerate()
            .map(|(j, mut part)| match part.get("type").and_then(Value::as_str) {
                Some("text") => Ok(json!({"text": take(&mut part, "text")})),
                _ => Err(no_equivalent(format!("messages[{i}].content[{j}].type"), CONVERSE)),
            })
            .collect(),
        _ => Err(Untranslatable::new(format!("messages[{i}].content"), not_text)),
    }
}

fn user_blocks(i: usize, content: Value) -> Result<Vec<Value>, Untranslatable> {
    let parts = match content {
        Value::Array(parts) => parts,
        Value::String(text) => return Ok(vec![json!({"text": text})]),
        _ => return Err(Untranslatable::new(format!("messages[{i}].content"), "content must be text or parts")),
    };
    let mut blocks = Vec::with_capacity(parts.len());
    for (j, mut part) in parts.into_iter().enumerate() {
        let at = |what: &str| format!("messages[{i}].content[{j}]{what}");
        let block = match part.get("type").and_then(Value::as_str) {
            Some("text") => json!({"text": take(&mut part, "text")}),
            Some("image_url") => {
                let url = match part.get_mut("image_url").map(Value::take) {
                    Some(Value::String(url)) => url,
                    Some(Value::Object(mut o)) => match o.remove("url") {
                        Some(Value::String(url)) => url,
                        _ => return Err(Untranslatable::new(at(".image_url.url"), "an image_url needs a url")),
                    },
                    _ => return Err(Untranslatable::new(at(".image_url"), "an image_url part needs its url")),
                };
                image_block(&url).map_err(|message| Untranslatable::new(at(".image_url.url"), message))?
            }
            Some("file") => {
                let data = part.pointer("/file/file_data").and_then(Value::as_str).and_then(parse_data_uri);
                let Some((media_type, data)) = data else {
                    let message = "Converse takes a file only as `file_data`, a base64 `data:` URI";
                    return Err(Untranslatable::new(at(".file"), message));
                };
                let Some(format) = document_format(media_type) else {
                    return Err(Untranslatable::new(
                        at(".file.file_data"),
                        format!(
                            "Converse documents are pdf, csv, doc, docx, xls, xlsx, html, txt or md, not {media_type}"
                        ),
                    ));
                };
                let name = part.pointer("/file/filename").and_then(Value::as_str).unwrap_or("document");
                json!({"document": {"format": format, "name": document_name(name), "source": {"bytes": data}}})
            }
            _ => return Err(no_equivalent(at(".type"), CONVERSE)),
        };
        blocks.push(block);
    }
    Ok(blocks)
}

/// A `data:` URI image as a Converse image block; a URL is refused (Converse reads no URLs, and a
/// translator does no IO to fetch one).
fn image_block(url: &str) -> Result<Value, String> {
    let Some((media_type, data)) = parse_data_uri(url) else {
        return Err("Converse takes images only as base64 `data:` URIs, not URLs (the gateway does not download them); send the image inline".into());
    };
    let format = match media_type {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Converse images are png, jpeg, gif or webp, not {other}")),
    };
    Ok(json!({"image": {"format": format, "source": {"bytes": data}}}))
}

fn document_format(media_type: &str) -> Option<&'static str> {
    Some(match media_type {
        "application/pdf" => "pdf",
        "text/csv" => "csv",
        "application/msword" => "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.ms-excel" => "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        "text/html" => "html",
        "text/plain" => "txt",
        "text/markdown" => "md",
        _ => return None,
    })
}

/// A document name as Converse allows it: letters, digits, single spaces, hyphens, parentheses
/// and square brackets (anything else, such as the extension's dot, becomes a hyphen).
fn document_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = match c {
            c if c.is_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') => c,
            c if c.is_whitespace() => ' ',
            _ => '-',
        };
        if !(c == ' ' && out.ends_with(' ')) {
            out.push(c);
        }
    }
    let trimmed = out.trim();
    if trimmed.is_empty() {
        "document".to_string()
    } else {
        trimmed.to_string()
    }
}

/// An assistant message: text blocks (empty ones left out: Converse refuses them), then its tool
/// calls as toolUse blocks (arguments parsed).
fn assistant_blocks(i: usize, content: Value, calls: Option<Value>) -> Result<Vec<Value>, Untranslatable> {
    let calls = match calls {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls,
        Some(_) => {
            return Err(Untranslatable::new(format!("messages[{i}].tool_calls"), "`tool_calls` must be an array"))
        }
    };
    let mut blocks = match content {
        Value::Null => Vec::new(),
        other => text_blocks(i, other, "content must be text or parts")?,
    };
    blocks.retain(|b| b["text"].as_str().is_some_and(|t| !t.is_empty()));
    for (j, call) in calls.into_iter().enumerate() {
        let call = read_tool_call(call, &format!("messages[{i}].tool_calls[{j}]"), CONVERSE)?;
        blocks.push(json!({"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}));
    }
    Ok(blocks)
}

/// A tool message as a toolResult block of text (OpenAI tool messages carry text only and no
/// error flag, so `status` is left out).
fn tool_result(i: usize, content: Value, id: Option<Value>) -> Result<Value, Untranslatable> {
    let content = match content {
        Value::Null => vec![json!({"text": ""})],
        other => text_blocks(i, other, "tool content must be text")?,
    };
    Ok(json!({"toolResult": {"toolUseId": id.unwrap_or(Value::Null), "content": content}}))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
