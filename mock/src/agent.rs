//! Agent mode (`--agent`): the deterministic model a coding agent's tool loop runs against.
//!
//! Stateless, the same on every surface (chat completions, Messages, Responses): when the request
//! offers a shell tool and its conversation does not end with a tool's result, the answer is one
//! call of that tool running [`shell_command`]; when it ends with a tool's result, the answer is a
//! text holding that output verbatim ([`report_text`]); anything else (titles, summaries, topic
//! checks, quota probes) gets the plain answer.
//!
//! The command prints [`marker`], a text the command itself does not contain (`$((6*7))` is
//! expanded by the shell), so the marker in an agent's final answer proves the shell ran.

use serde_json::Value;

/// The start of every marker.
pub(crate) const MARKER_PREFIX: &str = "POINTWORK-AGENT-";

/// The shell tools of the agents: Claude Code's `Bash`, Codex's `exec_command` (unified exec, a
/// `cmd` string), and the `shell` / `shell_command` / `local_shell` of other Codex versions.
const SHELL_TOOL_NAMES: [&str; 6] = ["Bash", "bash", "exec_command", "shell", "shell_command", "local_shell"];

/// The argument names a shell tool takes its command in, in the order they are looked for.
const COMMAND_ARGUMENTS: [&str; 2] = ["command", "cmd"];

/// The surface an answer is given on; its tag ends the marker, so a test also sees which
/// surface of the mock answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    ChatCompletions,
    Messages,
    Responses,
}

impl Surface {
    fn tag(self) -> &'static str {
        match self {
            Surface::ChatCompletions => "chat",
            Surface::Messages => "messages",
            Surface::Responses => "responses",
        }
    }
}

/// The command the shell tool is called with: `echo POINTWORK-AGENT-$((6*7))-TAG`.
pub(crate) fn shell_command(surface: Surface) -> String {
    format!("echo {MARKER_PREFIX}$((6*7))-{}", surface.tag())
}

/// What [`shell_command`] prints: `POINTWORK-AGENT-42-TAG`.
#[cfg(test)]
pub(crate) fn marker(surface: Surface) -> String {
    format!("{MARKER_PREFIX}42-{}", surface.tag())
}

/// The answer to a conversation ending with a tool's result: the output verbatim.
pub(crate) fn report_text(output: &str) -> String {
    format!("The command printed:\n{output}")
}

/// The text sent with a shell call (Messages answers carry a text block before the call).
pub(crate) const CALL_TEXT: &str = "Running the command.";

/// A shell tool the request offers: its name and how it takes the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellTool {
    pub name: String,
    /// `command` (Claude Code's `Bash`) or `cmd` (Codex's `exec_command`).
    argument: &'static str,
    /// The command is an argv list (`["bash", "-lc", "…"]`, Codex's older `shell`), not a string.
    argv: bool,
}

impl ShellTool {
    /// `name`, called without arguments (`--agent-tool`).
    pub(crate) fn without_arguments(name: &str) -> ShellTool {
        ShellTool { name: name.to_owned(), argument: "", argv: false }
    }

    /// The first shell tool among `(name, parameters schema)` pairs: a known name whose schema
    /// (when it has one) takes a command.
    pub(crate) fn find<'a>(tools: impl IntoIterator<Item = (&'a str, Option<&'a Value>)>) -> Option<ShellTool> {
        tools.into_iter().find_map(|(name, schema)| {
            if !SHELL_TOOL_NAMES.contains(&name) {
                return None;
            }
            let properties = schema.and_then(|schema| schema.get("properties"));
            let Some(properties) = properties else {
                return Some(ShellTool { name: name.to_owned(), argument: "command", argv: false });
            };
            let argument = COMMAND_ARGUMENTS.into_iter().find(|argument| properties.get(argument).is_some())?;
            let argv = properties[argument].get("type").and_then(Value::as_str) == Some("array");
            Some(ShellTool { name: name.to_owned(), argument, argv })
        })
    }

    /// The call's arguments, a JSON object text.
    pub(crate) fn arguments(&self, surface: Surface) -> String {
        if self.argument.is_empty() {
            return "{}".to_owned();
        }
        let command = shell_command(surface);
        let value = if self.argv { serde_json::json!(["bash", "-lc", command]) } else { Value::from(command) };
        let mut object = serde_json::Map::new();
        object.insert(self.argument.to_owned(), value);
        Value::Object(object).to_string()
    }
}

/// What agent mode answers one request with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AgentTurn {
    /// Call the shell tool with [`shell_command`].
    CallShell(ShellTool),
    /// Report a tool's output: [`report_text`].
    Report(String),
    /// No shell tool offered: the plain answer.
    Plain,
}

impl AgentTurn {
    /// The turn for a conversation whose last message is `tool_output` (a tool's result) or not,
    /// offering `shell` or not.
    pub(crate) fn decide(shell: Option<ShellTool>, tool_output: Option<String>) -> AgentTurn {
        match (tool_output, shell) {
            (Some(output), _) => AgentTurn::Report(output),
            (None, Some(shell)) => AgentTurn::CallShell(shell),
            (None, None) => AgentTurn::Plain,
        }
    }
}

/// The text of a tool result's content: a string, or the `text` of its parts (`text`,
/// `input_text`, `output_text` blocks) joined by newlines.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect();
            texts.join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_marker_is_not_in_the_command() {
        for surface in [Surface::ChatCompletions, Surface::Messages, Surface::Responses] {
            let command = shell_command(surface);
            assert!(command.starts_with("echo POINTWORK-AGENT-"), "{command}");
            assert!(!command.contains(&marker(surface)), "{command}");
        }
        assert_eq!(marker(Surface::Responses), "POINTWORK-AGENT-42-responses");
    }

    #[test]
    fn finds_the_agents_shell_tools_and_their_argument() {
        let bash = json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]});
        let exec = json!({"type": "object", "properties": {"cmd": {"type": "string"}}});
        let argv = json!({"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}});
        let read = json!({"type": "object", "properties": {"file_path": {"type": "string"}}});

        let tool = ShellTool::find([("Read", Some(&read)), ("Bash", Some(&bash))]).expect("Bash");
        assert_eq!(tool.name, "Bash");
        assert_eq!(tool.arguments(Surface::Messages), r#"{"command":"echo POINTWORK-AGENT-$((6*7))-messages"}"#);
        let tool = ShellTool::find([("exec_command", Some(&exec))]).expect("exec_command");
        assert_eq!(tool.arguments(Surface::Responses), r#"{"cmd":"echo POINTWORK-AGENT-$((6*7))-responses"}"#);
        let tool = ShellTool::find([("shell", Some(&argv))]).expect("shell");
        let arguments: Value = serde_json::from_str(&tool.arguments(Surface::Responses)).expect("JSON");
        assert_eq!(arguments["command"][1], "-lc");
        assert_eq!(ShellTool::find([("Read", Some(&read))]), None);
        assert_eq!(ShellTool::find([("Bash", Some(&read))]), None, "a Bash without a command is no shell");
    }

    #[test]
    fn a_tool_result_is_reported_else_the_shell_is_called() {
        let shell = ShellTool::find([("Bash", None)]);
        assert_eq!(AgentTurn::decide(shell.clone(), Some("out".into())), AgentTurn::Report("out".into()));
        assert!(matches!(AgentTurn::decide(shell, None), AgentTurn::CallShell(_)));
        assert_eq!(AgentTurn::decide(None, None), AgentTurn::Plain);
        assert!(report_text("POINTWORK-AGENT-42-chat\n").contains("POINTWORK-AGENT-42-chat"));
    }

    #[test]
    fn content_text_reads_strings_and_parts() {
        assert_eq!(content_text(&json!("a")), "a");
        assert_eq!(content_text(&json!([{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}])), "a\nb");
        assert_eq!(content_text(&Value::Null), "");
    }
}
