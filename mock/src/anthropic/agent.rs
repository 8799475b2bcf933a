//! Agent mode on the Messages API (see [`agent`](crate::agent)): Claude Code's `Bash` is called
//! with the marker command, a conversation ending with `tool_result` blocks is answered with
//! their content.

use serde::Deserialize;
use serde_json::Value;

use crate::agent::{content_text, AgentTurn, ShellTool};

/// The fields agent mode reads; the rest is skipped.
#[derive(Debug, Deserialize)]
struct AgentView {
    #[serde(default)]
    tools: Vec<ToolView>,
    #[serde(default)]
    messages: Vec<MessageView>,
    #[serde(default)]
    tool_choice: Option<ToolChoiceView>,
}

#[derive(Debug, Deserialize)]
struct ToolView {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input_schema: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct MessageView {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Value,
}

#[derive(Debug, Deserialize)]
struct ToolChoiceView {
    #[serde(rename = "type")]
    kind: String,
}

/// Agent mode's turn for a Messages body, and whether `tool_choice` forces a tool (`any`,
/// `tool`): a forced call the agent mode does not make is left to the usual choice.
pub(crate) fn agent_turn(body: &[u8], first_tool: Option<&str>) -> (AgentTurn, bool) {
    let Ok(view) = serde_json::from_slice::<AgentView>(body) else {
        return (AgentTurn::Plain, false);
    };
    let forced = view.tool_choice.as_ref().is_some_and(|choice| matches!(choice.kind.as_str(), "any" | "tool"));
    let named = view.tools.iter().filter_map(|tool| Some((tool.name.as_deref()?, tool.input_schema.as_ref())));
    let first = first_tool.filter(|wanted| view.tools.iter().any(|t| t.name.as_deref() == Some(*wanted)));
    let shell = match first {
        Some(name) => Some(ShellTool::without_arguments(name)),
        None => ShellTool::find(named.filter(|(_, schema)| schema.is_some())),
    };
    (AgentTurn::decide(shell, last_tool_results(&view.messages)), forced)
}

/// The content of the `tool_result` blocks of the last message, when it is the user's and has
/// any, joined by newlines.
fn last_tool_results(messages: &[MessageView]) -> Option<String> {
    let last = messages.last().filter(|last| last.role.as_deref() == Some("user"))?;
    let results: Vec<String> = last
        .content
        .as_array()?
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))
        .map(|block| content_text(block.get("content").unwrap_or(&Value::Null)))
        .collect();
    (!results.is_empty()).then(|| results.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(body: Value) -> (AgentTurn, bool) {
        agent_turn(body.to_string().as_bytes(), None)
    }

    #[test]
    fn bash_is_called_until_its_result_comes_back() {
        let bash =
            json!({"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}});
        let read = json!({"name": "Read", "input_schema": {"type": "object"}});
        let ask = json!({"role": "user", "content": [{"type": "text", "text": "run it"}]});
        let (call, forced) = turn(json!({"tools": [read, bash], "messages": [ask]}));
        assert!(matches!(call, AgentTurn::CallShell(ref tool) if tool.name == "Bash") && !forced);

        let result = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_mock_1", "content": [{"type": "text", "text": "POINTWORK-AGENT-42-messages"}]},
            {"type": "text", "text": "<system-reminder>…</system-reminder>"}
        ]});
        let (report, _) =
            turn(json!({"tools": [bash], "messages": [ask, {"role": "assistant", "content": []}, result]}));
        assert_eq!(report, AgentTurn::Report("POINTWORK-AGENT-42-messages".into()));
    }

    #[test]
    fn the_named_tool_is_called_before_the_shell_when_offered() {
        let bash =
            json!({"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}});
        let mcp = json!({"name": "mcp__pointwork__web-marker", "input_schema": {"type": "object"}});
        let ask = json!({"role": "user", "content": "go"});
        let body = json!({"tools": [bash, mcp], "messages": [ask]}).to_string();
        let (call, _) = agent_turn(body.as_bytes(), Some("mcp__pointwork__web-marker"));
        let AgentTurn::CallShell(tool) = call else { panic!("{call:?}") };
        assert_eq!(
            (tool.name.as_str(), tool.arguments(crate::agent::Surface::Messages).as_str()),
            ("mcp__pointwork__web-marker", "{}")
        );
        let (call, _) = agent_turn(body.as_bytes(), Some("mcp__other__x"));
        assert!(matches!(call, AgentTurn::CallShell(ref t) if t.name == "Bash"), "not offered: the shell as before");
    }

    #[test]
    fn side_requests_get_the_plain_answer() {
        let ask = json!({"role": "user", "content": "write a title"});
        assert_eq!(turn(json!({"messages": [ask]})), (AgentTurn::Plain, false));
        let forced = json!({"messages": [ask], "tools": [{"name": "t", "input_schema": {}}], "tool_choice": {"type": "tool", "name": "t"}});
        assert_eq!(turn(forced), (AgentTurn::Plain, true));
        assert_eq!(agent_turn(b"not json", None), (AgentTurn::Plain, false));
    }
}
