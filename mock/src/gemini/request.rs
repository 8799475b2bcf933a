//! The Gemini API's (and Vertex AI's) `GenerateContentRequest`, checked as Google checks it
//! (`INVALID_ARGUMENT` with Google's sentences), and the function the answer calls.

use serde_json::{Map, Value};

use crate::anthropic::messages::{example_value, ToolCall};

const TOP_LEVEL_FIELDS: [&str; 15] = [
    "contents",
    "tools",
    "toolConfig",
    "tool_config",
    "safetySettings",
    "safety_settings",
    "systemInstruction",
    "system_instruction",
    "generationConfig",
    "generation_config",
    "cachedContent",
    "cached_content",
    "labels",
    "model",
    "session_id",
];

/// A valid request, as far as the answer depends on it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GenerateCall {
    /// The function the answer calls.
    pub function: Option<ToolCall>,
}

fn unknown_name(name: &str, at: Option<&str>) -> String {
    match at {
        Some(at) => format!("Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."),
        None => format!("Invalid JSON payload received. Unknown name \"{name}\": Cannot find field."),
    }
}

/// Reads a `generateContent` body; `Err` is the 400 message.
pub(crate) fn read_generate(body: &[u8]) -> Result<GenerateCall, String> {
    let request: Value =
        serde_json::from_slice(body).map_err(|_| "Invalid JSON payload received. Unexpected token.".to_owned())?;
    let Some(object) = request.as_object() else {
        return Err("Invalid JSON payload received. Expected an object.".to_owned());
    };
    if let Some(name) = object.keys().find(|name| !TOP_LEVEL_FIELDS.contains(&name.as_str())) {
        return Err(unknown_name(name, None));
    }
    let contents = read_contents(object.get("contents"), "GenerateContentRequest")?;
    let tools = object.get("tools").and_then(Value::as_array);
    let declarations: Vec<&Value> = tools
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("functionDeclarations").or_else(|| tool.get("function_declarations")))
        .filter_map(Value::as_array)
        .flatten()
        .collect();
    if declarations.is_empty() {
        return Ok(GenerateCall { function: None });
    }
    let config = object.get("toolConfig").or_else(|| object.get("tool_config"));
    let calling =
        config.and_then(|config| config.get("functionCallingConfig").or_else(|| config.get("function_calling_config")));
    let mode = calling.and_then(|calling| calling.get("mode")).and_then(Value::as_str).unwrap_or("AUTO");
    let allowed: Vec<&str> = calling
        .and_then(|calling| calling.get("allowedFunctionNames").or_else(|| calling.get("allowed_function_names")))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let forced = mode == "ANY";
    if mode == "NONE" || (!forced && ends_with_function_response(contents)) {
        return Ok(GenerateCall { function: None });
    }
    let name_of = |declaration: &Value| declaration.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let declaration = declarations
        .iter()
        .find(|declaration| allowed.is_empty() || allowed.contains(&name_of(declaration).as_str()))
        .ok_or_else(|| {
            "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: allowed \
                        function names must be declared in tools.\n"
                .to_owned()
        })?;
    let schema = declaration
        .get("parameters")
        .or_else(|| declaration.get("parametersJsonSchema"))
        .or_else(|| declaration.get("parameters_json_schema"))
        .map(lowercase_types)
        .unwrap_or(Value::Null);
    let args = match example_value(&schema, 0) {
        Value::Object(object) => Value::Object(object),
        _ => Value::Object(Map::new()),
    };
    Ok(GenerateCall { function: Some(ToolCall { name: name_of(declaration), input: args.to_string() }) })
}

/// Checks `contents` (of a generate or count request) as Google does; returns them.
pub(crate) fn read_contents<'a>(contents: Option<&'a Value>, request: &str) -> Result<&'a [Value], String> {
    let contents = match contents {
        Some(Value::Array(contents)) if !contents.is_empty() => contents,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            return Err(format!("* {request}.contents: contents is not specified\n"))
        }
        Some(_) => return Err("Invalid JSON payload received. Expected an array for 'contents'.".to_owned()),
    };
    for (index, content) in contents.iter().enumerate() {
        let Some(fields) = content.as_object() else {
            return Err(format!("Invalid JSON payload received. Expected an object at 'contents[{index}]'."));
        };
        if let Some(name) = fields.keys().find(|name| !matches!(name.as_str(), "role" | "parts")) {
            return Err(unknown_name(name, Some(&format!("contents[{index}]"))));
        }
        match content.get("role") {
            None => {}
            Some(Value::String(role)) if role == "user" || role == "model" => {}
            Some(_) => return Err("Please use a valid role: user, model.".to_owned()),
        }
        if content.get("parts").and_then(Value::as_array).is_none_or(|parts| parts.is_empty()) {
            return Err(format!("* {request}.contents[{index}].parts: contents.parts must not be empty.\n"));
        }
    }
    Ok(contents)
}

/// The last content is the user's and carries a `functionResponse` part.
fn ends_with_function_response(contents: &[Value]) -> bool {
    contents.last().is_some_and(|last| {
        last.get("role").and_then(Value::as_str).unwrap_or("user") == "user"
            && last.get("parts").and_then(Value::as_array).is_some_and(|parts| {
                parts
                    .iter()
                    .any(|part| part.get("functionResponse").or_else(|| part.get("function_response")).is_some())
            })
    })
}

/// Gemini's OpenAPI schemas may spell types in capitals (`"OBJECT"`): lower them for the example.
fn lowercase_types(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("type", Value::String(kind)) => (key.clone(), Value::String(kind.to_lowercase())),
                    _ => (key.clone(), lowercase_types(value)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(lowercase_types).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(body: Value) -> Result<GenerateCall, String> {
        read_generate(body.to_string().as_bytes())
    }

    fn user(text: &str) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }

    #[test]
    fn refuses_what_google_refuses() {
        assert_eq!(read(json!({})), Err("* GenerateContentRequest.contents: contents is not specified\n".into()));
        assert_eq!(
            read(json!({"contents": []})),
            Err("* GenerateContentRequest.contents: contents is not specified\n".into())
        );
        assert_eq!(
            read(json!({"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]})),
            Err("Please use a valid role: user, model.".into())
        );
        assert_eq!(
            read(json!({"contents": [user("x")], "messages": []})),
            Err("Invalid JSON payload received. Unknown name \"messages\": Cannot find field.".into())
        );
        assert_eq!(
            read(json!({"contents": [{"role": "user", "content": "x"}]})),
            Err("Invalid JSON payload received. Unknown name \"content\" at 'contents[0]': Cannot find field.".into())
        );
        assert_eq!(
            read(json!({"contents": [{"role": "user", "parts": []}]})),
            Err("* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n".into())
        );
        assert!(read_generate(b"{oops").is_err());
        let system =
            json!({"contents": [user("x")], "systemInstruction": {"role": "system", "parts": [{"text": "be brief"}]}});
        assert_eq!(read(system), Ok(GenerateCall { function: None }), "Google ignores systemInstruction's role");
    }

    #[test]
    fn declared_functions_are_called_until_a_response_comes_back() {
        let tools = json!([{"functionDeclarations": [{"name": "get_weather", "parameters": {
            "type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}]);
        let call = read(json!({"contents": [user("weather?")], "tools": tools})).expect("valid");
        assert_eq!(call.function, Some(ToolCall { name: "get_weather".into(), input: r#"{"city":"mock"}"#.into() }));
        let called =
            json!({"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "x"}}}]});
        let answered =
            json!({"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {}}}]});
        let ended = read(json!({"contents": [user("weather?"), called, answered], "tools": tools})).expect("valid");
        assert_eq!(ended.function, None);
        let none = read(
            json!({"contents": [user("x")], "tools": tools, "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}),
        );
        assert_eq!(none.expect("valid").function, None);
    }
}
