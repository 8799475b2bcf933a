//! Bedrock's Converse request, checked as Bedrock checks it (`ValidationException` with its
//! sentences), and the tool the answer calls.

use serde_json::{Map, Value};

use crate::anthropic::messages::{example_value, ToolCall};

pub(crate) const MALFORMED: &str = "Malformed input request, please reformat your input and try again.";
const MUST_START_WITH_USER: &str =
    "A conversation must start with a user message. Try again with a conversation that starts with a user message.";
const MUST_ALTERNATE: &str = "A conversation must alternate between user and assistant roles. Make sure the \
                              conversation alternates between user and assistant roles and try again.";
const TOOL_CONFIG_NEEDED: &str =
    "The toolConfig field must be defined when using toolUse and toolResult content blocks.";

/// A valid Converse request, as far as the answer depends on it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConverseCall {
    /// The tool the answer calls.
    pub tool: Option<ToolCall>,
    /// The request names a guardrail (`guardrailConfig`).
    pub guardrail: bool,
}

/// Reads a Converse (or ConverseStream) body; `Err` is the `ValidationException` message.
pub(crate) fn read_converse(body: &[u8]) -> Result<ConverseCall, String> {
    let request: Value = serde_json::from_slice(body).map_err(|_| MALFORMED.to_owned())?;
    let Some(request) = request.as_object() else {
        return Err(MALFORMED.to_owned());
    };
    let messages = match request.get("messages") {
        None | Some(Value::Null) => return Err(MUST_START_WITH_USER.to_owned()),
        Some(Value::Array(messages)) => messages,
        Some(_) => return Err(MALFORMED.to_owned()),
    };
    let mut previous_role = None;
    let mut uses_tools = false;
    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str);
        match role {
            Some("user" | "assistant") => {}
            Some(other) => {
                return Err(format!(
                    "1 validation error detected: Value '{other}' at 'messages.{}.member.role' failed to satisfy \
                     constraint: Member must satisfy enum value set: [user, assistant]",
                    index + 1
                ))
            }
            None => {
                return Err(format!(
                    "1 validation error detected: Value null at 'messages.{}.member.role' failed to satisfy \
                     constraint: Member must not be null",
                    index + 1
                ))
            }
        }
        if index == 0 && role != Some("user") {
            return Err(MUST_START_WITH_USER.to_owned());
        }
        if previous_role == role {
            return Err(MUST_ALTERNATE.to_owned());
        }
        previous_role = role;
        let Some(content) = message.get("content").and_then(Value::as_array) else {
            return Err(format!(
                "1 validation error detected: Value null at 'messages.{}.member.content' failed to satisfy \
                 constraint: Member must not be null",
                index + 1
            ));
        };
        for (block_index, block) in content.iter().enumerate() {
            if block.get("text").and_then(Value::as_str).is_some_and(|text| text.trim().is_empty()) {
                return Err(format!(
                    "The text field in the ContentBlock object at messages.{index}.content.{block_index} is blank. \
                     Add text to the text field, and try again."
                ));
            }
            uses_tools |= block.get("toolUse").is_some() || block.get("toolResult").is_some();
        }
    }
    if messages.is_empty() {
        return Err(MUST_START_WITH_USER.to_owned());
    }
    let tool_config = request.get("toolConfig").filter(|config| !config.is_null());
    if uses_tools && tool_config.is_none() {
        return Err(TOOL_CONFIG_NEEDED.to_owned());
    }
    let tool = match tool_config {
        Some(config) => choose_tool(config, messages)?,
        None => None,
    };
    Ok(ConverseCall { tool, guardrail: request.get("guardrailConfig").is_some_and(|config| !config.is_null()) })
}

/// The tool the answer calls: `toolChoice` `tool` names it, `any` forces the first, `auto`
/// (the default) calls the first unless the last message carries a `toolResult` (so an agent
/// loop ends).
fn choose_tool(config: &Value, messages: &[Value]) -> Result<Option<ToolCall>, String> {
    let specs: Vec<&Value> = config
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("toolSpec"))
        .collect();
    if specs.is_empty() {
        return Err("1 validation error detected: Value '[]' at 'toolConfig.tools' failed to satisfy constraint: \
                    Member must have length greater than or equal to 1"
            .to_owned());
    }
    let name_of = |spec: &Value| spec.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let choice = config.get("toolChoice");
    let forced_name = choice
        .and_then(|choice| choice.get("tool"))
        .map(|tool| tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned());
    let forced = forced_name.is_some() || choice.is_some_and(|choice| choice.get("any").is_some());
    let ends_with_result = messages.last().is_some_and(|last| {
        last.get("role").and_then(Value::as_str) == Some("user")
            && last
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|content| content.iter().any(|block| block.get("toolResult").is_some()))
    });
    if !forced && ends_with_result {
        return Ok(None);
    }
    let spec = match &forced_name {
        Some(name) => *specs.iter().find(|spec| name_of(spec) == *name).ok_or_else(|| {
            format!("The tool {name} in toolChoice is not defined in toolConfig.tools. Define the tool and try again.")
        })?,
        None => specs[0],
    };
    let schema = spec.get("inputSchema").and_then(|schema| schema.get("json")).unwrap_or(&Value::Null);
    let input = match example_value(schema, 0) {
        Value::Object(object) => Value::Object(object),
        _ => Value::Object(Map::new()),
    };
    Ok(Some(ToolCall { name: name_of(spec), input: input.to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(body: Value) -> Result<ConverseCall, String> {
        read_converse(body.to_string().as_bytes())
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": [{"text": text}]})
    }

    #[test]
    fn refuses_what_bedrock_refuses() {
        assert_eq!(read_converse(b"{not json"), Err(MALFORMED.to_owned()));
        assert_eq!(read(json!({})), Err(MUST_START_WITH_USER.to_owned()));
        assert_eq!(read(json!({"messages": []})), Err(MUST_START_WITH_USER.to_owned()));
        let assistant_first = json!({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]});
        assert_eq!(read(assistant_first), Err(MUST_START_WITH_USER.to_owned()));
        assert_eq!(read(json!({"messages": [user("a"), user("b")]})), Err(MUST_ALTERNATE.to_owned()));
        let system = read(json!({"messages": [user("a"), {"role": "system", "content": []}]})).expect_err("role");
        assert!(system.contains("Value 'system' at 'messages.2.member.role'"), "{system}");
        let blank = read(json!({"messages": [user(" ")]})).expect_err("blank");
        assert!(blank.starts_with("The text field in the ContentBlock object at messages.0.content.0 is blank."));
        let no_content = read(json!({"messages": [{"role": "user"}]})).expect_err("content");
        assert!(no_content.contains("'messages.1.member.content'"));
        let tool_use = json!({"messages": [user("a"), {"role": "assistant", "content": [{"toolUse": {}}]}, user("b")]});
        assert_eq!(read(tool_use), Err(TOOL_CONFIG_NEEDED.to_owned()));
    }

    #[test]
    fn offered_tools_are_called_until_a_result_comes_back() {
        let tools = json!({"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": {
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}}]});
        let call = read(json!({"messages": [user("weather?")], "toolConfig": tools})).expect("valid");
        assert_eq!(call.tool, Some(ToolCall { name: "get_weather".into(), input: r#"{"city":"mock"}"#.into() }));
        assert!(!call.guardrail);
        let result =
            json!({"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [{"text": "sunny"}]}}]});
        let asked = json!({"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "get_weather", "input": {}}}]});
        let ended = read(json!({"messages": [user("weather?"), asked, result], "toolConfig": tools})).expect("valid");
        assert_eq!(ended.tool, None);
        let mut forced = tools.clone();
        forced["toolChoice"] = json!({"tool": {"name": "nope"}});
        assert!(read(json!({"messages": [user("x")], "toolConfig": forced})).is_err());
        let guarded = read(json!({"messages": [user("x")], "guardrailConfig": {"guardrailIdentifier": "g"}}));
        assert!(guarded.expect("valid").guardrail);
    }
}
