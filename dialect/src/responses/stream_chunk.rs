//! The parts of a chat `chat.completion.chunk` the Responses stream reads, borrowed from the
//! event's bytes where they hold no escapes.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
pub(super) struct Chunk<'a> {
    #[serde(borrow, default)]
    pub(super) choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    pub(super) usage: Option<Value>,
    #[serde(default)]
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct Choice<'a> {
    #[serde(default)]
    pub(super) index: u64,
    #[serde(borrow, default)]
    pub(super) delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    pub(super) finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct Delta<'a> {
    #[serde(borrow, default)]
    pub(super) content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) refusal: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct ToolCallDelta<'a> {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(borrow, default)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
pub(super) struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    pub(super) name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) arguments: Option<Cow<'a, str>>,
}
