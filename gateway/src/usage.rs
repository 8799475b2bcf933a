//! The token usage a response reports, read from the last bytes of its body without parsing
//! the body: OpenAI puts `"usage":{…}` at the end of a completion, and in the last event of a
//! stream asked for `stream_options.include_usage`. The relay keeps the body's tail as it passes.

use memchr::memmem;

/// Token counts of one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// How much of the body's end is kept: a usage object with its details fits well within it.
const TAIL: usize = 2048;

/// What is read of an answer as it is relayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reading {
    /// Nothing: no one reads the usage.
    #[default]
    Nothing,
    /// The token usage (spend, budgets, usage-based routing).
    Usage,
    /// The usage, the answer's model and finish reasons (an exporter is on).
    Answer,
    /// All of that and the whole body (exported content).
    AnswerWithBody,
}

impl Reading {
    /// What an attempt reads: the usage when someone counts it (`usage`), the answer when an
    /// exporter is on (`export`: with the body when content is exported).
    pub fn of(usage: bool, export: Option<bool>) -> Reading {
        match (export, usage) {
            (Some(true), _) => Reading::AnswerWithBody,
            (Some(false), _) => Reading::Answer,
            (None, true) => Reading::Usage,
            (None, false) => Reading::Nothing,
        }
    }

    pub fn usage(self) -> bool {
        self != Reading::Nothing
    }
}

/// What an exporter learns of an answer besides its usage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AnswerFacts {
    /// The `model` the answer names.
    pub model: Option<String>,
    /// Its finish (stop) reasons, in order, without repeats.
    pub finish_reasons: Vec<String>,
    /// The whole body, when content is exported (`None` when it was larger than the limit).
    pub body: Option<Vec<u8>>,
}

/// What an exporter keeps of an answer besides its tail.
#[derive(Default)]
struct Kept {
    /// The whole body, when content is exported; `None` once it outgrew [`MAX_WHOLE`].
    whole: Option<Vec<u8>>,
}

/// The largest body kept whole for an exporter.
const MAX_WHOLE: usize = 1 << 20;

impl Kept {
    fn keep(&mut self, bytes: &[u8]) {
        if let Some(whole) = &mut self.whole {
            if whole.len() + bytes.len() <= MAX_WHOLE {
                whole.extend_from_slice(bytes);
            } else {
                self.whole = None;
            }
        }
    }
}

/// The last bytes of a body, fed as it is relayed — or nothing, when no one reads the usage
/// (only usage-based routing does), so that a request does not pay for it.
#[derive(Default)]
pub struct UsageTail {
    on: bool,
    /// What an exporter keeps, when one reads the answer's facts (boxed: most requests have
    /// none, and the relay moves this struct).
    export: Option<Box<Kept>>,
    tail: Vec<u8>,
    /// The body's first [`HEAD`] bytes: an Anthropic stream's `message_start` reports its
    /// `input_tokens` there (its last event, `message_delta`, may carry only `output_tokens`).
    head: Vec<u8>,
}

/// How much of a body's beginning is searched for an Anthropic stream's `input_tokens`.
const HEAD: usize = 4096;

impl UsageTail {
    pub fn new(reading: Reading) -> UsageTail {
        let export = (reading >= Reading::Answer)
            .then(|| Box::new(Kept { whole: (reading == Reading::AnswerWithBody).then(Vec::new) }));
        UsageTail { on: reading.usage(), export, ..UsageTail::default() }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if !self.on {
            return;
        }
        if let Some(kept) = &mut self.export {
            kept.keep(bytes);
        }
        if self.head.len() < HEAD {
            self.head.extend_from_slice(&bytes[..bytes.len().min(HEAD - self.head.len())]);
        }
        if bytes.len() >= TAIL {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - TAIL..]);
            return;
        }
        self.tail.extend_from_slice(bytes);
        // Trim in batches, so that many small pushes move the bytes rarely.
        if self.tail.len() > 2 * TAIL {
            self.tail.drain(..self.tail.len() - TAIL);
        }
    }

    /// The usage in the last `"usage"` object of the tail, if it names any token count.
    pub fn usage(&self) -> Option<Usage> {
        let at = USAGE.rfind(&self.tail)?;
        let rest = skip_space(&self.tail[at + USAGE.needle().len()..]).strip_prefix(b":")?;
        // `"usage": null` in a stream's non-final events.
        let object = skip_space(rest).strip_prefix(b"{")?;
        let counts = Counts::read(object);
        let prompt = counts.prompt.or_else(|| self.stream_input_tokens());
        if prompt.is_none() && counts.completion.is_none() && counts.total.is_none() {
            return None;
        }
        let (prompt, completion) = (prompt.unwrap_or(0), counts.completion.unwrap_or(0));
        Some(Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: counts.total.unwrap_or(prompt.saturating_add(completion)),
        })
    }
}

/// A chat stream asked for its usage on the client's behalf (`stream_options.include_usage`
/// added by the gateway) loses the event that carries it — `choices: []` and a `usage` object —
/// on its way to the client, who did not ask for it; every other event passes as it came. The
/// usage was read from the upstream's bytes before the cut.
#[derive(Default)]
pub struct UsageEventCut {
    /// The stream's bytes since the last complete event (an event split between reads).
    held: Vec<u8>,
}

impl UsageEventCut {
    /// Replaces `bytes` with the complete events among `held` + `bytes`, the usage-only one cut;
    /// the rest of an event waits for the next read (or [`UsageEventCut::finish`]).
    pub fn cut(&mut self, bytes: &mut Vec<u8>) {
        self.held.extend_from_slice(bytes);
        bytes.clear();
        let mut at = 0;
        while let Some(end) = memmem::find(&self.held[at..], b"\n\n") {
            let event = &self.held[at..at + end + 2];
            if !is_usage_only(event) {
                bytes.extend_from_slice(event);
            }
            at += end + 2;
        }
        self.held.drain(..at);
    }

    /// What the stream ended with that no blank line closed.
    pub fn finish(&mut self, bytes: &mut Vec<u8>) {
        bytes.append(&mut self.held);
    }
}

/// Whether an SSE event is a chat stream's usage-only chunk.
fn is_usage_only(event: &[u8]) -> bool {
    let data = event.strip_prefix(b"data:").map(skip_space).unwrap_or_default();
    data.starts_with(b"{")
        && (memmem::find(data, b"\"choices\":[]").is_some() || memmem::find(data, b"\"choices\": []").is_some())
        && memmem::find(data, b"\"usage\"").is_some()
}

static USAGE: std::sync::LazyLock<memmem::FinderRev<'static>> =
    std::sync::LazyLock::new(|| memmem::FinderRev::new(b"\"usage\""));

/// The token counts a usage object names at its top level (OpenAI's or Anthropic's names),
/// read in one pass; nested objects (`prompt_tokens_details`) are skipped.
#[derive(Default)]
struct Counts {
    prompt: Option<u64>,
    completion: Option<u64>,
    total: Option<u64>,
}

impl Counts {
    /// `object`: the bytes after the object's `{`.
    fn read(object: &[u8]) -> Counts {
        let mut counts = Counts::default();
        let (mut i, mut depth) = (0, 1);
        while i < object.len() {
            match object[i] {
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 1 => break,
                b'}' | b']' => depth -= 1,
                b'"' => {
                    let Some(len) = object[i + 1..].iter().position(|&c| c == b'"') else { break };
                    let name = &object[i + 1..i + 1 + len];
                    i += len + 2;
                    if depth == 1 {
                        let value = skip_space(&object[i..]).strip_prefix(b":").map(skip_space);
                        if let Some(n) = value.and_then(leading_number) {
                            counts.set(name, n);
                        }
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        counts
    }

    fn set(&mut self, name: &[u8], n: u64) {
        let slot = match name {
            b"prompt_tokens" | b"input_tokens" => &mut self.prompt,
            b"completion_tokens" | b"output_tokens" => &mut self.completion,
            b"total_tokens" => &mut self.total,
            _ => return,
        };
        // The first of OpenAI's and Anthropic's names wins, as it always has.
        slot.get_or_insert(n);
    }
}

fn leading_number(b: &[u8]) -> Option<u64> {
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&b[..digits]).ok()?.parse().ok()
}

impl UsageTail {
    /// The answer's model and finish reasons (and its body, when kept), when an exporter reads
    /// them.
    #[inline(always)]
    pub fn answer(&mut self) -> Option<Box<AnswerFacts>> {
        match self.export.take() {
            None => None,
            Some(kept) => self.answer_facts(kept),
        }
    }

    /// Off the common path: only exporters read the facts.
    /// (The box is handed on whole: opening it here would put its move on the common path.)
    #[cold]
    #[inline(never)]
    #[allow(clippy::boxed_local)]
    fn answer_facts(&self, kept: Box<Kept>) -> Option<Box<AnswerFacts>> {
        let model = MODEL.find(&self.head).and_then(|at| string_value(&self.head[at + MODEL.needle().len()..]));
        let mut finish_reasons: Vec<String> = Vec::new();
        for key in FINISH_REASONS.iter() {
            for found in key.find_iter(&self.tail) {
                let Some(reason) = string_value(&self.tail[found + key.needle().len()..]) else { continue };
                if !finish_reasons.iter().any(|r| r == reason) {
                    finish_reasons.push(reason.to_string());
                }
            }
        }
        Some(Box::new(AnswerFacts { model: model.map(str::to_string), finish_reasons, body: kept.whole }))
    }

    /// An Anthropic stream's `input_tokens`, from its `message_start` event.
    fn stream_input_tokens(&self) -> Option<u64> {
        let at = memmem::find(&self.head, b"\"message_start\"")?;
        number_after(&self.head[at..], b"\"input_tokens\"")
    }
}

fn skip_space(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// Where an answer names its model, and its finish reasons (OpenAI's, Anthropic's, Gemini's).
static MODEL: std::sync::LazyLock<memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memmem::Finder::new(b"\"model\""));
static FINISH_REASONS: std::sync::LazyLock<[memmem::Finder<'static>; 3]> = std::sync::LazyLock::new(|| {
    [
        memmem::Finder::new(b"\"finish_reason\""),
        memmem::Finder::new(b"\"stop_reason\""),
        memmem::Finder::new(b"\"finishReason\""),
    ]
});

/// The string after a key: `rest` starts after the key's closing quote, with the colon to come
/// (no escapes: model names and finish reasons have none); `None` when the value is not a
/// string (`null`).
fn string_value(rest: &[u8]) -> Option<&str> {
    let rest = skip_space(rest).strip_prefix(b":")?;
    let rest = skip_space(rest).strip_prefix(b"\"")?;
    let end = rest.iter().position(|&c| c == b'"' || c == b'\\')?;
    std::str::from_utf8(&rest[..end]).ok().filter(|s| !s.is_empty())
}

/// The integer after `"key"` and a colon, within `hay`.
fn number_after(hay: &[u8], key: &[u8]) -> Option<u64> {
    let at = memmem::find(hay, key)?;
    let rest = skip_space(&hay[at + key.len()..]).strip_prefix(b":")?;
    let rest = skip_space(rest);
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_of(parts: &[&[u8]]) -> Option<Usage> {
        let mut t = UsageTail::new(Reading::Usage);
        for p in parts {
            t.push(p);
        }
        t.usage()
    }

    #[test]
    fn the_usage_only_event_is_cut_and_the_rest_passes_as_it_came() {
        let events = [
            &b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n"[..],
            b": keep-alive\n\n",
            b"data: {\"id\":\"x\",\"choices\": [],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\n\n",
            b"data: [DONE]\n\n",
        ];
        let whole = events.concat();
        // Split anywhere: the same events come out.
        for split in [1, 7, 40, 90, whole.len() - 3] {
            let mut cut = UsageEventCut::default();
            let (mut first, mut second) = (whole[..split].to_vec(), whole[split..].to_vec());
            cut.cut(&mut first);
            cut.cut(&mut second);
            let mut rest = Vec::new();
            cut.finish(&mut rest);
            assert_eq!([first, second, rest].concat(), [events[0], events[1], events[3]].concat(), "{split}");
        }
    }

    #[test]
    fn an_off_tail_keeps_nothing() {
        let mut t = UsageTail::new(Reading::Nothing);
        t.push(br#"{"usage":{"prompt_tokens":1,"completion_tokens":2}}"#);
        assert_eq!(t.usage(), None);
    }

    #[test]
    fn completion_usage_with_details() {
        let body = br#"{"id":"x","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"system_fingerprint":null}"#;
        assert_eq!(usage_of(&[body]), Some(Usage { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 }));
    }

    #[test]
    fn the_last_stream_event_counts_and_null_usage_is_none() {
        let a = b"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n";
        assert_eq!(usage_of(&[a]), None);
        let b = b"data: {\"choices\":[],\"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 7, \"total_tokens\": 12}}\n\ndata: [DONE]\n\n";
        assert_eq!(usage_of(&[a, b]), Some(Usage { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }));
    }

    #[test]
    fn a_long_body_keeps_only_its_tail() {
        let filler = vec![b'x'; 10_000];
        let end = br#","usage":{"input_tokens":3,"output_tokens":4}}"#;
        assert_eq!(
            usage_of(&[&filler, &filler[..100], end]),
            Some(Usage { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 })
        );
        assert_eq!(usage_of(&[&filler]), None);
    }

    #[test]
    fn an_anthropic_streams_input_tokens_come_from_its_message_start() {
        let stream = fixture("anthropic_messages_stream.sse");
        let pieces: Vec<&[u8]> = stream.chunks(61).collect();
        let usage = usage_of(&pieces).expect("usage");
        assert!(usage.prompt_tokens > 0 && usage.completion_tokens > 0, "{usage:?}");
        assert_eq!(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn real_openai_and_openrouter_bodies() {
        let expected = Some(Usage { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
        assert_eq!(usage_of(&[&fixture("openai_chat_response.json")]), expected);
        // A stream fed in small pieces, as the relay sees it.
        let stream = fixture("openai_chat_stream.sse");
        let pieces: Vec<&[u8]> = stream.chunks(97).collect();
        assert_eq!(usage_of(&pieces), expected);
        let openrouter = fixture("openrouter_chat_stream.sse");
        assert_eq!(usage_of(&[&openrouter]), Some(Usage { prompt_tokens: 14, completion_tokens: 8, total_tokens: 22 }));
    }
}
