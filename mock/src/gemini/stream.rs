//! streamGenerateContent's answer. With `?alt=sse`: server-sent events, `data: {GenerateContentResponse}`
//! each ending in CRLF CRLF, no `[DONE]` (the stream just ends). Without it: what Google sends
//! then, one JSON array streamed element by element (`[{…}`, `\n,\r\n{…}`, …, `\n]`). The text
//! comes in `chunks` pieces, a function call whole in its own element; the last element carries
//! `finishReason` and the whole `usageMetadata`. A blocked prompt is one element with
//! `promptFeedback`. Cut short (`abort-after:K`), the stream stops without its last chunk.

use serde_json::{json, Value};

use crate::conn::chunked::ChunkedPlan;
use crate::dispatch::call::Call;
use crate::gemini::content::GeminiAnswer;
use crate::openai::body::content_piece;
use crate::wire::response::{Head, EVENT_STREAM, JSON};

/// Plans the stream of `answer` for `call`.
pub(crate) fn plan_stream(answer: &GeminiAnswer, call: &Call<'_>, sse: bool, abort_after: Option<u32>) -> ChunkedPlan {
    let mut head = Vec::new();
    let content_type = if sse { EVENT_STREAM } else { JSON };
    Head { content_type, ..Head::json(200, &call.shared.name, call.close) }.write_chunked(&mut head);
    let mut plan = ChunkedPlan::new(head, call.chunk_delay, abort_after, call.close);
    for (index, element) in elements(answer, call.chunks).iter().enumerate() {
        let data = match (sse, index) {
            (true, _) => format!("data: {element}\r\n\r\n"),
            (false, 0) => format!("[{element}"),
            (false, _) => format!("\n,\r\n{element}"),
        };
        plan.frame(data.as_bytes());
    }
    if !sse {
        plan.close_with(b"\n]");
    }
    plan
}

/// The stream's response objects in order.
pub(crate) fn elements(answer: &GeminiAnswer, chunks: u32) -> Vec<Value> {
    if answer.blocked {
        return vec![answer.response(Vec::new(), true)];
    }
    let mut parts: Vec<Value> = if answer.text.is_empty() && answer.function.is_some() {
        Vec::new()
    } else {
        (0..chunks).map(|at| json!({"text": content_piece(&answer.text, at, chunks)})).collect()
    };
    parts.extend(answer.function_part());
    let count = parts.len();
    parts.into_iter().enumerate().map(|(index, part)| answer.response(vec![part], index + 1 == count)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages::ToolCall;

    fn answer(function: Option<ToolCall>, blocked: bool) -> GeminiAnswer {
        GeminiAnswer {
            number: 7,
            model: "gemini-2.5-flash".into(),
            text: if blocked { String::new() } else { "Hello from mock g".into() },
            function,
            blocked,
            prompt_tokens: 10,
            candidates_tokens: 5,
        }
    }

    #[test]
    fn text_pieces_then_the_function_call_and_the_finish_on_the_last() {
        let tool = ToolCall { name: "f".into(), input: "{}".into() };
        let elements = elements(&answer(Some(tool), false), 3);
        assert_eq!(elements.len(), 4);
        let text: String =
            elements.iter().filter_map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str()).collect();
        assert_eq!(text, "Hello from mock g");
        assert!(elements[..3].iter().all(|e| e["candidates"][0].get("finishReason").is_none()));
        assert_eq!(elements[3]["candidates"][0]["content"]["parts"][0]["functionCall"]["name"], "f");
        assert_eq!(elements[3]["candidates"][0]["finishReason"], "STOP");
        assert_eq!(elements[3]["usageMetadata"]["candidatesTokenCount"], 5);
        assert!(elements[0]["usageMetadata"].get("candidatesTokenCount").is_none());
        let blocked = super::elements(&answer(None, true), 3);
        assert_eq!(blocked.len(), 1);
        assert_eq!(blocked[0]["promptFeedback"]["blockReason"], "SAFETY");
    }
}
