//! Agent mode on chat completions (see [`agent`](crate::agent)): the shell tool among the
//! request's `tools` is called (a `tool_calls` answer, whole or streamed as `delta.tool_calls`
//! pieces like `tests/fixtures/openai_chat_stream_tool_calls.sse`), a conversation ending with a
//! `tool` message is answered with its content.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::agent::{content_text, AgentTurn, ShellTool, Surface};
use crate::conn::chunked::ChunkedPlan;
use crate::openai::body::{content_piece, Usage, DONE_EVENT};

/// The fields agent mode reads; the rest is skipped.
#[derive(Debug, Deserialize)]
struct AgentView {
    #[serde(default)]
    tools: Vec<ToolView>,
    #[serde(default)]
    messages: Vec<MessageView>,
}

#[derive(Debug, Deserialize)]
struct ToolView {
    #[serde(default)]
    function: Option<FunctionView>,
}

#[derive(Debug, Deserialize)]
struct FunctionView {
    name: String,
    #[serde(default)]
    parameters: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct MessageView {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Value,
}

/// Agent mode's turn for a chat body.
pub(crate) fn agent_turn(body: &[u8]) -> AgentTurn {
    let Ok(view) = serde_json::from_slice::<AgentView>(body) else {
        return AgentTurn::Plain;
    };
    let functions = view.tools.iter().filter_map(|tool| tool.function.as_ref());
    let shell = ShellTool::find(functions.map(|function| (function.name.as_str(), function.parameters.as_ref())));
    let last = view.messages.last().filter(|last| last.role.as_deref() == Some("tool"));
    AgentTurn::decide(shell, last.map(|last| content_text(&last.content)))
}

/// What identifies a tool-call answer.
pub(crate) struct ToolCallAnswer<'a> {
    pub number: u64,
    pub created: u64,
    pub model: &'a str,
    pub system_fingerprint: &'a str,
    pub tool: &'a ShellTool,
}

impl ToolCallAnswer<'_> {
    fn common(&self, object: &str) -> serde_json::Map<String, Value> {
        let common = json!({
            "id": format!("chatcmpl-mock-{}", self.number), "object": object, "created": self.created,
            "model": self.model, "system_fingerprint": self.system_fingerprint,
        });
        match common {
            Value::Object(fields) => fields,
            _ => serde_json::Map::new(),
        }
    }

    fn call_id(&self) -> String {
        format!("call_mock_{}", self.number)
    }

    /// The whole `chat.completion`: one `tool_calls` entry, `finish_reason` `tool_calls`.
    pub(crate) fn body(&self, usage: &Usage) -> Vec<u8> {
        let mut body = self.common("chat.completion");
        let call = json!({"id": self.call_id(), "type": "function",
            "function": {"name": self.tool.name, "arguments": self.tool.arguments(Surface::ChatCompletions)}});
        body.insert(
            "choices".into(),
            json!([{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [call], "refusal": null},
                "logprobs": null, "finish_reason": "tool_calls"}]),
        );
        body.insert("usage".into(), usage_json(usage));
        Value::Object(body).to_string().into_bytes()
    }

    /// The stream: the call's id and name with empty arguments, the arguments in `chunks`
    /// pieces, the `tool_calls` finish, the usage event when asked for, `[DONE]`.
    pub(crate) fn stream(
        &self,
        head: Vec<u8>,
        chunks: u32,
        chunk_delay: Duration,
        usage: Option<&Usage>,
        abort_after: Option<u32>,
        close: bool,
    ) -> ChunkedPlan {
        let mut plan = ChunkedPlan::new(head, chunk_delay, abort_after, close);
        let opening = json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": self.call_id(),
            "type": "function", "function": {"name": self.tool.name, "arguments": ""}}]});
        let arguments = self.tool.arguments(Surface::ChatCompletions);
        let mut first = self.chunk(opening, Value::Null);
        for index in 0..chunks {
            let piece = content_piece(&arguments, index, chunks);
            let delta =
                self.chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}), Value::Null);
            first.extend_from_slice(&delta);
            plan.frame(&std::mem::take(&mut first));
        }
        let mut closing = self.chunk(json!({}), Value::from("tool_calls"));
        if let Some(usage) = usage {
            let mut event = self.common("chat.completion.chunk");
            event.insert("choices".into(), json!([]));
            event.insert("usage".into(), usage_json(usage));
            closing.extend_from_slice(format!("data: {}\n\n", Value::Object(event)).as_bytes());
        }
        closing.extend_from_slice(DONE_EVENT);
        plan.close_with(&closing);
        plan
    }

    /// `data: {chat.completion.chunk}\n\n` with one choice.
    fn chunk(&self, delta: Value, finish_reason: Value) -> Vec<u8> {
        let mut event = self.common("chat.completion.chunk");
        event.insert(
            "choices".into(),
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]),
        );
        format!("data: {}\n\n", Value::Object(event)).into_bytes()
    }
}

fn usage_json(usage: &Usage) -> Value {
    json!({"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::chunked::dechunk;

    fn exec_tool() -> ShellTool {
        ShellTool::find([("exec_command", Some(&json!({"properties": {"cmd": {"type": "string"}}})))]).expect("tool")
    }

    #[test]
    fn the_shell_is_called_until_a_tool_message_comes_back() {
        let tools = json!([{"type": "function", "function": {"name": "exec_command", "parameters": {"properties": {"cmd": {"type": "string"}}}}}]);
        let ask = json!({"role": "user", "content": "run"});
        let body = json!({"model": "m", "tools": tools, "messages": [ask]}).to_string();
        assert_eq!(agent_turn(body.as_bytes()), AgentTurn::CallShell(exec_tool()));
        let result = json!({"role": "tool", "tool_call_id": "call_mock_1", "content": "POINTWORK-AGENT-42-chat\n"});
        let body = json!({"model": "m", "tools": tools, "messages": [ask, result]}).to_string();
        assert_eq!(agent_turn(body.as_bytes()), AgentTurn::Report("POINTWORK-AGENT-42-chat\n".into()));
        assert_eq!(agent_turn(br#"{"model":"m","messages":[{"role":"user","content":"title"}]}"#), AgentTurn::Plain);
    }

    #[test]
    fn tool_calls_whole_and_streamed() {
        let tool = exec_tool();
        let answer = ToolCallAnswer { number: 3, created: 1, model: "m", system_fingerprint: "mock-m1", tool: &tool };
        let body: Value = serde_json::from_slice(&answer.body(&Usage::new(40, 2))).expect("JSON");
        let call = &body["choices"][0]["message"]["tool_calls"][0];
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            (call["id"].as_str(), call["function"]["name"].as_str()),
            (Some("call_mock_3"), Some("exec_command"))
        );
        let arguments = tool.arguments(Surface::ChatCompletions);
        assert_eq!(call["function"]["arguments"], arguments.as_str());

        let plan = answer.stream(Vec::new(), 3, Duration::ZERO, Some(&Usage::new(40, 2)), None, false);
        assert_eq!(plan.frames.len(), 3);
        let mut data = plan.frames.concat();
        data.extend_from_slice(&plan.closing);
        let text = String::from_utf8(dechunk(&data)).expect("utf-8");
        let events: Vec<&str> = text.split_terminator("\n\n").map(|event| &event["data: ".len()..]).collect();
        assert_eq!(events.last(), Some(&"[DONE]"));
        let chunks: Vec<Value> =
            events[..events.len() - 1].iter().map(|e| serde_json::from_str(e).expect("JSON")).collect();
        let streamed: String = chunks
            .iter()
            .filter_map(|chunk| chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
            .collect();
        assert_eq!(streamed, arguments);
        assert_eq!(chunks[0]["choices"][0]["delta"]["tool_calls"][0]["id"], "call_mock_3");
        assert!(chunks.iter().any(|chunk| chunk["choices"][0]["finish_reason"] == "tool_calls"));
        assert_eq!(chunks.last().expect("usage")["usage"]["total_tokens"], 12);
    }
}
