//! The stream's output items: opening, extending and closing reasoning, message and tool-call
//! items, each with the events the Responses API brackets it with.

use serde_json::{json, Value};

use super::super::events::PartIndex;
use super::super::output_items::{
    call_item, call_prefix, custom_input, message_item, reasoning_item, refusal_part, summary_part, text_part,
    MESSAGE_PREFIX, REASONING_PREFIX,
};
use super::super::tools::CallKind;
use super::stream_chunk::ToolCallDelta;
use super::StreamState;

/// The reasoning or message item being written.
#[derive(Debug)]
pub(super) struct OpenText {
    is_message: bool,
    output_index: usize,
    item_id: String,
    /// A message's finished content parts.
    parts: Vec<Value>,
    /// The part being written: whether it is a refusal, and its text so far.
    part: Option<(bool, String)>,
}

/// A tool call not yet closed; it starts (gets its output index) once its name is known.
#[derive(Debug)]
pub(super) struct OpenCall {
    chat_index: u64,
    started: Option<(usize, CallKind, String)>,
    call_id: Option<String>,
    name: String,
    arguments: String,
}

impl StreamState {
    pub(super) fn reasoning_delta(&mut self, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        if self.text.as_ref().is_none_or(|open| open.is_message) {
            self.close_text(out);
            let (output_index, item_id) = self.new_item(REASONING_PREFIX);
            let item = json!({"type": "reasoning", "id": item_id, "summary": []});
            self.events.push(out, "response.output_item.added", &json!({"output_index": output_index, "item": item}));
            let fields =
                json!({"item_id": item_id, "output_index": output_index, "summary_index": 0, "part": summary_part("")});
            self.events.push(out, "response.reasoning_summary_part.added", &fields);
            self.text = Some(OpenText {
                is_message: false,
                output_index,
                item_id,
                parts: Vec::new(),
                part: Some((false, String::new())),
            });
        }
        let Some(open) = self.text.as_mut() else { return };
        let kind = "response.reasoning_summary_text.delta";
        self.events.push_delta(out, kind, &open.item_id, open.output_index, PartIndex::Summary(0), text);
        if let Some((_, summary)) = open.part.as_mut() {
            summary.push_str(text);
        }
    }

    /// Message text (`refusal` false) or a refusal, each run of one kind a content part.
    pub(super) fn message_delta(&mut self, refusal: bool, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        if !self.text.as_ref().is_some_and(|open| open.is_message) {
            self.close_text(out);
            let (output_index, item_id) = self.new_item(MESSAGE_PREFIX);
            let item = message_item(&item_id, "in_progress", Vec::new());
            self.events.push(out, "response.output_item.added", &json!({"output_index": output_index, "item": item}));
            self.text = Some(OpenText { is_message: true, output_index, item_id, parts: Vec::new(), part: None });
        }
        let Some(open) = self.text.as_mut() else { return };
        if open.part.as_ref().is_some_and(|(is_refusal, _)| *is_refusal != refusal) {
            close_part(&mut self.events, open, out);
        }
        if open.part.is_none() {
            let part = if refusal { refusal_part("") } else { text_part("") };
            let fields = json!({"item_id": open.item_id, "output_index": open.output_index,
                "content_index": open.parts.len(), "part": part});
            self.events.push(out, "response.content_part.added", &fields);
            open.part = Some((refusal, String::new()));
        }
        let kind = if refusal { "response.refusal.delta" } else { "response.output_text.delta" };
        let index = PartIndex::Content(open.parts.len());
        self.events.push_delta(out, kind, &open.item_id, open.output_index, index, text);
        if let Some((_, written)) = open.part.as_mut() {
            written.push_str(text);
        }
    }

    /// Closes the reasoning or message item, if one is open.
    pub(super) fn close_text(&mut self, out: &mut Vec<u8>) {
        let Some(mut open) = self.text.take() else { return };
        let item = if open.is_message {
            close_part(&mut self.events, &mut open, out);
            let incomplete = matches!(self.finish_reason.as_deref(), Some("length" | "content_filter"));
            message_item(&open.item_id, if incomplete { "incomplete" } else { "completed" }, open.parts)
        } else {
            let text = open.part.map(|(_, text)| text).unwrap_or_default();
            let (item_id, output_index) = (&open.item_id, open.output_index);
            let fields = json!({"item_id": item_id, "output_index": output_index, "summary_index": 0, "text": text});
            self.events.push(out, "response.reasoning_summary_text.done", &fields);
            let fields = json!({"item_id": item_id, "output_index": output_index, "summary_index": 0, "part": summary_part(&text)});
            self.events.push(out, "response.reasoning_summary_part.done", &fields);
            reasoning_item(item_id, &text)
        };
        self.item_done(open.output_index, item, out);
    }

    /// One tool call fragment: a new chat index opens a call, arguments extend it.
    pub(super) fn call_delta(&mut self, position: usize, delta: &ToolCallDelta<'_>, out: &mut Vec<u8>) {
        let chat_index = match (delta.index, &delta.id) {
            (Some(index), _) => index,
            (None, Some(_)) => self.calls.len() as u64,
            (None, None) => self.calls.last().map_or(position as u64, |call| call.chat_index),
        };
        let at = match self.calls.iter().position(|call| call.chat_index == chat_index) {
            Some(at) => at,
            None => {
                let call = OpenCall {
                    chat_index,
                    started: None,
                    call_id: None,
                    name: String::new(),
                    arguments: String::new(),
                };
                self.calls.push(call);
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        if let Some(id) = delta.id.as_deref().filter(|id| !id.is_empty()) {
            call.call_id.get_or_insert_with(|| id.to_string());
        }
        let function = delta.function.as_ref();
        if let Some(name) = function.and_then(|f| f.name.as_deref()).filter(|_| call.started.is_none()) {
            call.name.push_str(name);
        }
        let arguments = function.and_then(|f| f.arguments.as_deref()).unwrap_or("");
        call.arguments.push_str(arguments);
        match &call.started {
            Some((output_index, CallKind::Function, item_id)) if !arguments.is_empty() => {
                let kind = "response.function_call_arguments.delta";
                self.events.push_delta(out, kind, item_id, *output_index, PartIndex::None, arguments);
            }
            Some(_) => {}
            None if !call.name.is_empty() => self.start_call(at, out),
            None => {}
        }
    }

    /// Gives the call at `at` its output index and announces it (buffered arguments too).
    fn start_call(&mut self, at: usize, out: &mut Vec<u8>) {
        self.close_text(out);
        let kind = self.echo.tool_kinds.kind_of(&self.calls[at].name);
        let (output_index, item_id) = self.new_item(call_prefix(kind));
        let call_id = self.calls[at].call_id.get_or_insert_with(|| self.echo.call_id(output_index)).clone();
        let call = &mut self.calls[at];
        let item = match kind {
            CallKind::Function => json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": call.name,
                "arguments": "", "status": "in_progress"}),
            CallKind::Custom => {
                json!({"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": call.name, "input": ""})
            }
            CallKind::LocalShell => json!({"type": "local_shell_call", "id": item_id, "call_id": call_id,
                "action": {"type": "exec", "command": [], "env": {}}, "status": "in_progress"}),
        };
        self.events.push(out, "response.output_item.added", &json!({"output_index": output_index, "item": item}));
        if kind == CallKind::Function && !call.arguments.is_empty() {
            let kind = "response.function_call_arguments.delta";
            self.events.push_delta(out, kind, &item_id, output_index, PartIndex::None, &call.arguments);
        }
        call.started = Some((output_index, kind, item_id));
    }

    /// Closes a tool call: its arguments (or a custom call's whole input) and the item.
    pub(super) fn close_call(&mut self, mut call: OpenCall, out: &mut Vec<u8>) {
        if call.started.is_none() {
            self.calls.push(call);
            let at = self.calls.len() - 1;
            self.start_call(at, out);
            let Some(started) = self.calls.pop() else { return };
            call = started;
        }
        let Some((output_index, kind, item_id)) = call.started.take() else { return };
        let call_id = call.call_id.unwrap_or_default();
        match kind {
            CallKind::Function => {
                let fields = json!({"item_id": item_id, "output_index": output_index, "name": call.name, "arguments": call.arguments});
                self.events.push(out, "response.function_call_arguments.done", &fields);
            }
            CallKind::Custom => {
                let input = custom_input(&call.arguments);
                if !input.is_empty() {
                    let kind = "response.custom_tool_call_input.delta";
                    self.events.push_delta(out, kind, &item_id, output_index, PartIndex::None, &input);
                }
                let fields = json!({"item_id": item_id, "output_index": output_index, "input": input});
                self.events.push(out, "response.custom_tool_call_input.done", &fields);
            }
            CallKind::LocalShell => {}
        }
        let item = call_item(&self.echo, output_index, &call_id, &call.name, &call.arguments);
        self.item_done(output_index, item, out);
    }

    /// A new output slot: its index and its item id.
    fn new_item(&mut self, prefix: &str) -> (usize, String) {
        let output_index = self.output.len();
        self.output.push(None);
        (output_index, self.echo.item_id(prefix, output_index))
    }

    fn item_done(&mut self, output_index: usize, item: Value, out: &mut Vec<u8>) {
        self.events.push(out, "response.output_item.done", &json!({"output_index": output_index, "item": item}));
        self.output[output_index] = Some(item);
    }
}

/// Ends a message's current content part: `output_text.done` / `refusal.done`, then
/// `content_part.done`.
fn close_part(events: &mut super::EventWriter, open: &mut OpenText, out: &mut Vec<u8>) {
    let Some((refusal, text)) = open.part.take() else { return };
    let (item_id, output_index, content_index) = (&open.item_id, open.output_index, open.parts.len());
    let part = if refusal {
        let fields =
            json!({"item_id": item_id, "output_index": output_index, "content_index": content_index, "refusal": text});
        events.push(out, "response.refusal.done", &fields);
        refusal_part(&text)
    } else {
        let fields = json!({"item_id": item_id, "output_index": output_index, "content_index": content_index,
            "text": text, "logprobs": []});
        events.push(out, "response.output_text.done", &fields);
        text_part(&text)
    };
    let fields =
        json!({"item_id": item_id, "output_index": output_index, "content_index": content_index, "part": part});
    events.push(out, "response.content_part.done", &fields);
    open.parts.push(part);
}
