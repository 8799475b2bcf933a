//! TEMPORARY STUB (replaced by the real translators on merge).
#![allow(unused)]
use crate::{StreamTranslator, Untranslatable};
use serde_json::Value;

pub struct ChatFromResponses {
    pub body: Vec<u8>,
    pub dropped: Vec<String>,
    pub input_items: Vec<Value>,
}
pub fn responses_request_to_chat(
    body: &[u8],
    upstream_model: &str,
    history: &[Value],
) -> Result<ChatFromResponses, Untranslatable> {
    unimplemented!()
}
#[derive(Clone)]
pub struct ResponseEcho {
    id: String,
}
impl ResponseEcho {
    pub fn new(request_body: &[u8], id: &str, created_at: u64, model: &str) -> ResponseEcho {
        ResponseEcho { id: id.into() }
    }
    pub fn id(&self) -> &str {
        &self.id
    }
}
pub fn chat_response_to_responses(chat_body: &[u8], echo: &ResponseEcho) -> Result<(Vec<u8>, Value), String> {
    unimplemented!()
}
pub struct ChatToResponsesStream;
impl ChatToResponsesStream {
    pub fn new(echo: ResponseEcho) -> ChatToResponsesStream {
        ChatToResponsesStream
    }
    pub fn completed(&self) -> Option<&Value> {
        None
    }
}
impl StreamTranslator for ChatToResponsesStream {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {}
    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {}
    fn usage(&self) -> Option<(u64, u64)> {
        None
    }
}
pub fn responses_stream_error(status: u16, message: &str) -> Vec<u8> {
    Vec::new()
}
