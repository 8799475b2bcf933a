//! Request facts: what the pick reads from a request body, extracted once without building a
//! tree of the body, plus where the `model` value sits so it can be spliced on forwarding.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use pointwork_core::{affinity_hash, Param, RequestFacts, RouteKind};
use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::facts_scan;

/// The facts and the byte range of the `model` value (quotes included) in the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    pub facts: RequestFacts,
    pub model_span: Range<usize>,
    /// The members that are the gateway's and never go upstream (a provider would refuse them
    /// as unknown parameters), each with one comma beside it, in body order: LiteLLM's
    /// top-level `tags`, the policy router's `llmeu` object and LiteLLM's `cache` controls.
    /// Empty (no allocation) for a body without them.
    pub cut_members: Vec<Range<usize>>,
    /// The `llmeu` object's value (request overrides for the policy router), read only when a
    /// policy applies.
    pub llmeu: Option<Range<usize>>,
    /// The Responses API's `previous_response_id` and `store` values, where a request names
    /// them (not null).
    pub previous_response_id: Option<Range<usize>>,
    pub store: Option<Range<usize>>,
}

/// Why a body cannot be routed; each becomes a 400 in the OpenAI error shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FactsError {
    /// The body is not UTF-8; the byte offset of the first invalid byte.
    NotUtf8(usize),
    InvalidJson(String),
    NotAnObject,
    MissingModel,
    ModelNotString,
    StreamNotBool,
}

impl fmt::Display for FactsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactsError::NotUtf8(at) => write!(f, "request body is not valid UTF-8 (at byte {at})"),
            FactsError::InvalidJson(why) => write!(f, "request body is not valid JSON: {why}"),
            FactsError::NotAnObject => f.write_str("request body must be a JSON object"),
            FactsError::MissingModel => f.write_str("missing required parameter: 'model'"),
            FactsError::ModelNotString => f.write_str("invalid type for 'model': expected a string"),
            FactsError::StreamNotBool => f.write_str("invalid type for 'stream': expected a boolean"),
        }
    }
}

impl FactsError {
    /// The request parameter the error is about, for the OpenAI error's `param`.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            FactsError::MissingModel | FactsError::ModelNotString => Some("model"),
            FactsError::StreamNotBool => Some("stream"),
            _ => None,
        }
    }
}

/// The top-level fields the pick reads; every other field is skipped (but still validated).
/// Only `model` and `stream` are strict: any other field of an unexpected type is read as
/// absent, so that a body LiteLLM forwards is not refused here.
#[derive(Deserialize, Default)]
struct TopLevel<'a, M> {
    #[serde(borrow)]
    model: Option<Raw<'a>>,
    #[serde(borrow)]
    stream: Option<Raw<'a>>,
    /// Walked in place, without a tree ([`MessagesScan`]), or only skipped ([`Skipped`]).
    #[serde(default)]
    messages: M,
    /// Embeddings.
    #[serde(borrow)]
    input: Option<Raw<'a>>,
    #[serde(borrow)]
    tools: Option<Raw<'a>>,
    #[serde(borrow)]
    functions: Option<Raw<'a>>,
    #[serde(borrow)]
    tool_choice: Option<Raw<'a>>,
    #[serde(borrow)]
    parallel_tool_calls: Option<Raw<'a>>,
    #[serde(borrow)]
    response_format: Option<Raw<'a>>,
    #[serde(borrow)]
    reasoning_effort: Option<Raw<'a>>,
    #[serde(borrow)]
    max_tokens: Option<Raw<'a>>,
    #[serde(borrow)]
    max_completion_tokens: Option<Raw<'a>>,
    #[serde(borrow)]
    metadata: Option<Raw<'a>>,
    /// Tags at the top level, where LiteLLM's tag-routing docs send them (beside `metadata.tags`).
    #[serde(borrow, default)]
    tags: Member<'a>,
    /// The policy router's request overrides.
    #[serde(borrow, default)]
    llmeu: Member<'a>,
    /// LiteLLM's per-request cache controls (`crate::cache`): never a provider's parameter.
    #[serde(borrow, default)]
    cache: Member<'a>,
    #[serde(borrow)]
    allowed_model_region: Option<Raw<'a>>,
    /// The Responses API's.
    #[serde(borrow)]
    previous_response_id: Option<Raw<'a>>,
    #[serde(borrow)]
    store: Option<Raw<'a>>,
}

/// A member's raw value, `null` included: an `Option<Raw>` reads `null` as absent, and a
/// member that is cut before forwarding must be found whatever its value.
#[derive(Clone, Copy, Default)]
struct Member<'a>(Option<Raw<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Member<'a>, D::Error> {
        Raw::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}

/// A value's JSON text as it stands in the body (validated, without surrounding whitespace).
#[derive(Clone, Copy, Debug)]
struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    fn get(self) -> &'a str {
        self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Raw<'a>, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Raw(raw.get()))
    }
}

/// The prompt estimate's constants (documented in `docs/routing.md`, "The prompt estimate").
pub mod estimate {
    /// Tokens each message costs beyond its text (role, separators; OpenAI counts 3–4).
    pub const PER_MESSAGE: u64 = 4;
    /// Tokens every chat prompt costs (the reply's priming).
    pub const PER_PROMPT: u64 = 3;
    /// Tokens an `image_url` part counts for: a high-detail 1024×1024 image (OpenAI: 765).
    pub const PER_IMAGE: u64 = 765;
    /// ASCII bytes per token (English prose and code average about 4 per token).
    pub const ASCII_BYTES_PER_TOKEN: u64 = 4;
    /// Other bytes per token: a CJK character (3 bytes) counts as one token, a Cyrillic or
    /// accented one (2 bytes) as 2/3 — both at or above what tokenizers give.
    pub const OTHER_BYTES_PER_TOKEN: u64 = 3;
}

/// What `messages` gives the facts: a walk, or nothing.
trait Messages: Default + Copy {
    fn scan(self) -> MessagesScan;
    /// Reads `messages` from its value's JSON (on the scanner's path).
    fn from_json(json: &[u8]) -> Result<Self, serde_json::Error>;
}

impl Messages for MessagesScan {
    fn scan(self) -> MessagesScan {
        self
    }
    fn from_json(json: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(json)
    }
}

/// `messages` skipped (still validated as JSON), as fast as an unknown field.
#[derive(Clone, Copy, Debug, Default)]
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Skipped, D::Error> {
        IgnoredAny::deserialize(deserializer).map(|_| Skipped)
    }
}

impl Messages for Skipped {
    fn scan(self) -> MessagesScan {
        MessagesScan::default()
    }
    fn from_json(_: &[u8]) -> Result<Self, serde_json::Error> {
        Ok(Skipped)
    }
}

/// What the walk over `messages` counts: text bytes (ASCII and other), messages, images.
#[derive(Clone, Copy, Debug, Default)]
struct MessagesScan {
    ascii: u64,
    other: u64,
    messages: u64,
    images: u64,
}

impl MessagesScan {
    /// A JSON string as written (quotes and escapes included: an over-count of a few bytes).
    fn text(&mut self, s: &str) {
        let other = non_ascii_bytes(s.as_bytes());
        self.other += other;
        self.ascii += s.len() as u64 - other;
    }

    /// Bytes of JSON counted as ASCII text (tool calls, names: over-counted by their syntax).
    fn raw(&mut self, json: &str) {
        self.ascii += json.len() as u64;
    }

    fn tokens(&self) -> u64 {
        use estimate::*;
        self.ascii.div_ceil(ASCII_BYTES_PER_TOKEN)
            + self.other.div_ceil(OTHER_BYTES_PER_TOKEN)
            + self.messages * PER_MESSAGE
            + self.images * PER_IMAGE
    }
}

/// The key of an image content part, searched for when the image flag is needed without the
/// walk over `messages` (the searcher is built once).
static IMAGE_KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"image_url\""));

/// Which facts the routes read, so that a request pays only for those: `model` and `stream`
/// always; the rest when a filter uses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// The prompt estimate: a walk over `messages` (the context-window check).
    pub prompt: bool,
    /// Whether an image is attached (a group mixes vision and text-only deployments).
    pub image: bool,
    /// The requested params (the unsupported-params check) and the region.
    pub params: bool,
    /// `metadata` and the top-level `tags`: the tags (tag filtering) and the session id
    /// (session affinity).
    pub metadata: bool,
}

impl Needs {
    pub const ALL: Needs = Needs { prompt: true, image: true, params: true, metadata: true };
    pub const NONE: Needs = Needs { prompt: false, image: false, params: false, metadata: false };
}

/// [`extract_to`] with every fact (the dry run, tests, benches).
pub fn extract(route: RouteKind, body: &[u8]) -> Result<Extracted, FactsError> {
    extract_to(route, body, Needs::ALL)
}

pub fn extract_to(route: RouteKind, body: &[u8], needs: Needs) -> Result<Extracted, FactsError> {
    if !needs.prompt {
        return extract_with::<Skipped>(route, body, needs);
    }
    match extract_with::<MessagesScan>(route, body, needs) {
        // The walk decodes what it reads (a number past f64, an unpaired surrogate escape in a
        // key or a part fails it) where skipping checks only the syntax: such a body is refused
        // only if skipping refuses it too, whatever the needs, and its estimate is then the
        // whole body's (an over-count).
        Err(FactsError::InvalidJson(_)) => {
            let mut extracted = extract_with::<Skipped>(route, body, Needs { prompt: false, image: true, ..needs })?;
            let other = non_ascii_bytes(body);
            let whole = MessagesScan { ascii: body.len() as u64 - other, other, ..MessagesScan::default() };
            extracted.facts.estimated_prompt_tokens = whole.tokens() + estimate::PER_PROMPT;
            Ok(extracted)
        }
        walked => walked,
    }
}

fn extract_with<'b, M: Messages + Deserialize<'b>>(
    route: RouteKind,
    body: &'b [u8],
    needs: Needs,
) -> Result<Extracted, FactsError> {
    // serde_json does not check the UTF-8 of the strings it skips: the whole body is checked
    // (SIMD, a few GB/s), so that no invalid text is forwarded to a provider.
    let Ok(text) = simdutf8::basic::from_utf8(body) else {
        let at = simdutf8::compat::from_utf8(body).err().map_or(0, |e| e.valid_up_to());
        return Err(FactsError::NotUtf8(at));
    };
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Err(e) => Err(FactsError::InvalidJson(e.to_string())),
            Ok(_) => Err(FactsError::NotAnObject),
        };
    }
    let invalid = |e: serde_json::Error| FactsError::InvalidJson(e.to_string());
    let top: TopLevel<'_, M> = match scanned(text) {
        Some(top) => top.map_err(invalid)?,
        None => serde_json::from_slice(body).map_err(invalid)?,
    };
    let raw_model = top.model.ok_or(FactsError::MissingModel)?;
    let model = json_string(raw_model).ok_or(FactsError::ModelNotString)?;
    let stream = match top.stream.map(Raw::get) {
        None | Some("null") | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(FactsError::StreamNotBool),
    };
    let model_span = value_span(body, raw_model);
    let llmeu = top.llmeu.0.filter(|raw| raw.get() != "null").map(|raw| value_span(body, raw));
    let mut cut_members: Vec<Range<usize>> = [top.tags.0, top.llmeu.0, top.cache.0]
        .into_iter()
        .flatten()
        .filter_map(|raw| member_span(body, value_span(body, raw)))
        .collect();
    join_adjacent_cuts(body, &mut cut_members);
    let mut facts = RequestFacts { stream, ..RequestFacts::new(route, model) };
    read_the_rest(&top, &mut facts, needs);
    if needs.image && !needs.prompt {
        // Without the walk: an `image_url` content part shows as its key (an escaped quote in
        // text cannot form `"image_url"`); a false positive only prefers vision deployments.
        facts.has_image = IMAGE_KEY.find(body).is_some();
    }
    let span = |raw: Option<Raw<'_>>| raw.map(|raw| value_span(body, raw));
    let (previous_response_id, store) = (span(top.previous_response_id), span(top.store));
    Ok(Extracted { facts, model_span, cut_members, llmeu, previous_response_id, store })
}

/// The top level as [`facts_scan`] finds it: what serde reads into [`TopLevel`], for the bodies
/// the scanner reads (`None` for the others, and for a known member given twice, which serde
/// refuses). A `null` reads as absent but for the members kept whatever their value.
fn scanned<'a, M: Messages>(text: &'a str) -> Option<Result<TopLevel<'a, M>, serde_json::Error>> {
    let mut top = TopLevel::<M>::default();
    let mut messages = None;
    let mut seen: u32 = 0;
    facts_scan::top_level_members(text.as_bytes(), |key, span| {
        let raw = Raw(&text[span]);
        let value = (raw.get() != "null").then_some(raw);
        let (bit, slot) = match key {
            b"model" => (0, &mut top.model),
            b"stream" => (1, &mut top.stream),
            b"input" => (2, &mut top.input),
            b"tools" => (3, &mut top.tools),
            b"functions" => (4, &mut top.functions),
            b"tool_choice" => (5, &mut top.tool_choice),
            b"parallel_tool_calls" => (6, &mut top.parallel_tool_calls),
            b"response_format" => (7, &mut top.response_format),
            b"reasoning_effort" => (8, &mut top.reasoning_effort),
            b"max_tokens" => (9, &mut top.max_tokens),
            b"max_completion_tokens" => (10, &mut top.max_completion_tokens),
            b"metadata" => (11, &mut top.metadata),
            b"allowed_model_region" => (12, &mut top.allowed_model_region),
            b"messages" => (13, &mut messages),
            b"tags" => (14, &mut top.tags.0),
            b"llmeu" => (15, &mut top.llmeu.0),
            b"previous_response_id" => (16, &mut top.previous_response_id),
            b"store" => (17, &mut top.store),
            b"cache" => (18, &mut top.cache.0),
            _ => return true,
        };
        // `messages`, `tags`, `llmeu` and `cache` are read whatever their value (serde's default,
        // Member).
        *slot = if matches!(bit, 13..=15 | 18) { Some(raw) } else { value };
        let first = seen & 1 << bit == 0;
        seen |= 1 << bit;
        first
    })?;
    let walked = messages.map_or(Ok(M::default()), |raw: Raw<'_>| M::from_json(raw.get().as_bytes()));
    Some(walked.map(|messages| TopLevel { messages, ..top }))
}

/// A JSON string value's text; one without escapes is its bytes between the quotes (the value is
/// valid JSON, so it holds no quote or control character), others are decoded.
fn json_string(raw: Raw<'_>) -> Option<String> {
    let json = raw.get();
    match json.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(text) if !text.contains('\\') => Some(text.to_owned()),
        _ => serde_json::from_str(json).ok(),
    }
}

/// Where a value borrowed from `body` sits in it.
fn value_span(body: &[u8], raw: Raw<'_>) -> Range<usize> {
    let start = raw.get().as_ptr() as usize - body.as_ptr() as usize;
    start..start + raw.get().len()
}

/// The member whose value is at `value` in an object of a valid JSON `body` — its key, the
/// colon, the value — with the comma that follows it (or, for the last member, the one before
/// it), so that cutting the range leaves a valid object. `None` for an only member.
pub(crate) fn member_span(body: &[u8], value: Range<usize>) -> Option<Range<usize>> {
    let skip_back = |mut at: usize| {
        while at > 0 && body[at - 1].is_ascii_whitespace() {
            at -= 1;
        }
        at
    };
    let colon = skip_back(value.start).checked_sub(1).filter(|&at| body[at] == b':')?;
    let key_end = skip_back(colon).checked_sub(1).filter(|&at| body[at] == b'"')?;
    // A key holds no unescaped quote, and an escaped one (`\"`) cannot spell `tags`.
    let key_start = memchr::memrchr(b'"', &body[..key_end])?;
    let mut after = value.end;
    while body.get(after).is_some_and(u8::is_ascii_whitespace) {
        after += 1;
    }
    if body.get(after) == Some(&b',') {
        return Some(key_start..after + 1);
    }
    let comma = skip_back(key_start).checked_sub(1).filter(|&at| body[at] == b',')?;
    Some(comma..value.end)
}

/// Each member's cut takes one comma: the one after it, or before it for the last member. Two
/// cut members side by side at the end of the object (`…,"tags":[],"llmeu":{}}`) would both
/// take the comma between them: such cuts become one, which then takes the comma before it
/// (when there is one) so the object stays valid.
fn join_adjacent_cuts(body: &[u8], cuts: &mut Vec<Range<usize>>) {
    if cuts.len() < 2 {
        return;
    }
    cuts.sort_by_key(|r| r.start);
    let mut joined: Vec<Range<usize>> = Vec::with_capacity(cuts.len());
    for cut in cuts.drain(..) {
        match joined.last_mut() {
            Some(last) if cut.start < last.end => {
                last.end = last.end.max(cut.end);
                let ends_with_comma = body[..last.end].iter().rev().find(|b| !b.is_ascii_whitespace()) == Some(&b',');
                let before = body[..last.start].iter().rposition(|b| !b.is_ascii_whitespace());
                if !ends_with_comma {
                    if let Some(comma) = before.filter(|&at| body[at] == b',') {
                        last.start = comma;
                    }
                }
            }
            _ => joined.push(cut),
        }
    }
    *cuts = joined;
}

impl Extracted {
    /// Appends `body` as it goes upstream: `model_json` (an encoded JSON string) in place of the
    /// `model` value, without the cut members.
    pub fn append_forwarded(&self, out: &mut Vec<u8>, body: &[u8], model_json: &[u8]) {
        let model = &self.model_span;
        let mut at = 0;
        let mut model_pending = true;
        for cut in &self.cut_members {
            if model_pending && cut.start >= model.end {
                out.extend_from_slice(&body[at..model.start]);
                out.extend_from_slice(model_json);
                at = model.end;
                model_pending = false;
            }
            out.extend_from_slice(&body[at..cut.start]);
            at = cut.end;
        }
        if model_pending {
            out.extend_from_slice(&body[at..model.start]);
            out.extend_from_slice(model_json);
            at = model.end;
        }
        out.extend_from_slice(&body[at..]);
    }

    /// The length of what [`Extracted::append_forwarded`] appends.
    pub fn forwarded_len(&self, body: &[u8], model_json: &[u8]) -> usize {
        let cut: usize = self.cut_members.iter().map(|c| c.len()).sum();
        body.len() - self.model_span.len() + model_json.len() - cut
    }
}

/// Everything but `model` and `stream`: the prompt estimate, `max_tokens`, the image flag, the
/// requested params, the tags and the region.
fn read_the_rest<M: Messages>(top: &TopLevel<'_, M>, facts: &mut RequestFacts, needs: Needs) {
    let count = |raw: Option<Raw<'_>>| raw.and_then(|r| r.get().parse::<u64>().ok());
    facts.max_tokens = count(top.max_tokens).or(count(top.max_completion_tokens));
    if needs.prompt {
        read_prompt(top, facts);
    }
    if needs.params {
        read_params(top, facts);
    }
    if needs.metadata {
        read_metadata(top, facts);
    }
}

/// The prompt estimate and the image flag, from the walk over `messages` (and tools, input).
fn read_prompt<M: Messages>(top: &TopLevel<'_, M>, facts: &mut RequestFacts) {
    let mut scan = top.messages.scan();
    let tools = [top.tools, top.functions].into_iter().flatten().filter(|r| !matches!(r.get(), "null" | "[]"));
    for raw in tools {
        scan.raw(raw.get());
    }
    if let Some(input) = top.input {
        scan.raw(input.get());
    }
    let mut tokens = scan.tokens();
    if scan.messages > 0 {
        tokens += estimate::PER_PROMPT;
    }
    facts.estimated_prompt_tokens = tokens;
    facts.has_image = scan.images > 0;
}

/// The params the unsupported-params check knows, and the region.
fn read_params<M: Messages>(top: &TopLevel<'_, M>, facts: &mut RequestFacts) {
    let present = |raw: Option<Raw<'_>>| raw.is_some_and(|r| r.get() != "null");
    if [top.tools, top.functions].into_iter().flatten().any(|r| !matches!(r.get(), "null" | "[]")) {
        facts.params.insert(Param::Tools);
    }
    if present(top.tool_choice) && top.tool_choice.map(Raw::get) != Some("\"none\"") {
        facts.params.insert(Param::ToolChoice);
    }
    if top.parallel_tool_calls.map(Raw::get) == Some("true") {
        facts.params.insert(Param::ParallelToolCalls);
    }
    if present(top.reasoning_effort) {
        facts.params.insert(Param::ReasoningEffort);
    }
    if let Some(raw) = top.response_format {
        #[derive(Deserialize)]
        struct Format<'a> {
            #[serde(borrow, rename = "type")]
            kind: Option<Cow<'a, str>>,
        }
        if serde_json::from_str::<Format<'_>>(raw.get()).is_ok_and(|f| f.kind.as_deref() == Some("json_schema")) {
            facts.params.insert(Param::ResponseSchema);
        }
    }
    if let Some(raw) = top.allowed_model_region {
        if let Ok(region) = serde_json::from_str::<Cow<'_, str>>(raw.get()) {
            facts.allowed_model_region = Some(region.trim().to_ascii_lowercase());
        }
    }
}

/// `metadata.tags`, the top-level `tags` and `metadata.session_id`. The request's tags are the
/// union of both lists (the tag filter reads them as a set, so a tag sent twice counts once).
fn read_metadata<M: Messages>(top: &TopLevel<'_, M>, facts: &mut RequestFacts) {
    if let Some(raw) = top.metadata {
        #[derive(Deserialize)]
        struct Metadata<'a> {
            #[serde(borrow)]
            tags: Option<Raw<'a>>,
            #[serde(borrow)]
            session_id: Option<Cow<'a, str>>,
        }
        let metadata = serde_json::from_str::<Metadata<'_>>(raw.get()).ok();
        let (tags, session) = metadata.map_or((None, None), |m| (m.tags, m.session_id));
        // Session affinity keys on a hash of the id; the id itself is not kept.
        facts.affinity.session = session.filter(|s| !s.is_empty()).map(|s| affinity_hash(s.as_bytes()));
        if let Some(tags) = tags {
            add_tags(tags, &mut facts.tags);
        }
    }
    if let Some(tags) = top.tags.0 {
        add_tags(tags, &mut facts.tags);
    }
}

/// The strings of a JSON list of tags. Other items, and a value that is not a list, are ignored
/// rather than refused, as for every field but `model` and `stream`.
fn add_tags(raw: Raw<'_>, tags: &mut Vec<String>) {
    if let Ok(items) = serde_json::from_str::<Vec<serde_json::Value>>(raw.get()) {
        tags.extend(items.into_iter().filter_map(|v| match v {
            serde_json::Value::String(s) => Some(s),
            _ => None,
        }));
    }
}

/// How many bytes have their high bit set, eight at a time.
fn non_ascii_bytes(bytes: &[u8]) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut n: u64 = 0;
    for c in &mut chunks {
        let word = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        n += u64::from((word & HIGH).count_ones());
    }
    n + chunks.remainder().iter().filter(|b| !b.is_ascii()).count() as u64
}

#[path = "facts_messages.rs"]
mod messages;

#[cfg(test)]
#[path = "facts_tests.rs"]
mod tests;
