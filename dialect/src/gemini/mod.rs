//! Google's Gemini `generateContent` dialect (the Gemini API, `gemini/…` deployments, and Vertex
//! AI's Gemini models, which take the same bodies): chat-completions requests translated to it,
//! its answers, streams and embeddings back to OpenAI's shapes.
//!
//! Pure functions and state machines over bytes, like the rest of [`super`]. The model and
//! streaming are the URL's: `POST …/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` for a stream (without `alt=sse` Google streams one JSON
//! array, which [`GeminiToChatStream`] does not read); embeddings are
//! `POST …/models/{model}:batchEmbedContents` on the Gemini API (Vertex embeds through `:predict`,
//! another body, not covered here).
//!
//! # The API
//!
//! - [`chat_request_to_gemini`]`(body)` → a `GenerateContentRequest` body, or
//!   [`Untranslatable`](super::Untranslatable) naming the field (the caller answers 400).
//! - [`gemini_response_to_chat`]`(body, model)` / [`gemini_response_to_chat_at`]`(…, created)` →
//!   a `chat.completion`; `Err` says why the 2xx body cannot be read (answer 502).
//! - [`GeminiToChatStream::new`]`(model, include_usage)` / [`GeminiToChatStream::with_created`],
//!   a [`StreamTranslator`](super::StreamTranslator) from the SSE body to `chat.completion.chunk` events.
//! - [`embeddings_request_to_gemini`]`(body, model)` and [`gemini_embeddings_to_openai`]`(body,
//!   model)`.
//! - Errors need nothing of their own: [`super::error_to_openai`] reads Google's
//!   `{"error":{"code","message","status"}}`, message kept, and knows Gemini's "input token count
//!   … exceeds the maximum number of tokens allowed" as `context_length_exceeded`.
//!
//! # Requests
//!
//! - `system` / `developer` messages → `systemInstruction.parts` (text), in order, wherever they
//!   stand. User turns → `user` contents, assistant turns → `model` contents; consecutive
//!   messages of one role are merged into one content and consecutive `tool` messages make one
//!   `user` content of `functionResponse` parts (LiteLLM's grouping). Empty texts are left out
//!   (Gemini refuses them), and so is a message left with no parts.
//! - Text parts → `text`. `image_url`: a `data:` URI → `inlineData{mimeType,data}`; an
//!   http(s) or `gs://` URL whose extension names a type Gemini reads (jpg/jpeg, png, webp,
//!   heic, heif, gif, pdf, mp4, mov, mpeg/mpg, mp3, wav, ogg, txt: LiteLLM's table) →
//!   `fileData{mimeType,fileUri}`; a Gemini Files API URI → `fileData{fileUri}`. `input_audio` →
//!   `inlineData` `audio/<format>`; a `file` with a `data:` `file_data` → `inlineData`.
//! - Assistant `tool_calls` → `functionCall{name,args}` parts (arguments parsed). A tool call id
//!   of the form `<id>__thought__<signature>` (what the answers below write, LiteLLM's
//!   convention) gives the part its `thoughtSignature`, which Gemini 3 requires on replayed
//!   calls. No `id` is sent on functionCall/functionResponse parts (models before Gemini 3 refuse
//!   it; Gemini pairs calls and responses by order and name).
//! - `tool` messages → `functionResponse{name,response}`, the name that of the earlier tool call
//!   with that id; text that is a JSON object is the response itself, other text is wrapped as
//!   `{"content": text}` (LiteLLM's wrapping; an object holding `$ref` is wrapped too, since
//!   Gemini reads `{"$ref": …}` as a pointer to a part).
//! - `generationConfig`: temperature, top_p → topP, max_completion_tokens (else max_tokens) →
//!   maxOutputTokens, stop (string or list) → stopSequences, n ≠ 1 → candidateCount, seed,
//!   non-zero presence_penalty / frequency_penalty, `logprobs: true` → responseLogprobs with
//!   top_logprobs → logprobs, response_format json_object → responseMimeType
//!   `application/json`, json_schema → the same plus `responseJsonSchema` (standard JSON Schema,
//!   no conversion to Google's OpenAPI subset), reasoning_effort → `thinkingConfig`
//!   (thinkingBudget by LiteLLM's Gemini 2.5 table: none 0, minimal 512 (the smallest every 2.5
//!   model accepts), low 1024, medium 2048, high 4096, xhigh 8192; `includeThoughts: true`
//!   unless none; Gemini 3 takes a budget too).
//! - `tools` (functions) → one `tools[{functionDeclarations:[{name,description,
//!   parametersJsonSchema}]}]`; `tool_choice` auto/none/required/a function →
//!   `toolConfig.functionCallingConfig` mode AUTO/NONE/ANY, a function as ANY with
//!   `allowedFunctionNames: [name]`. A tool_choice with no tools is dropped when auto or none.
//!
//! # What is refused
//!
//! Any field not listed here, and: `logit_bias` (non-empty), `audio`, `modalities` other than
//! `["text"]`, `service_tier` other than auto/default, `store: true`, `prediction`,
//! `web_search_options`, `verbosity`, legacy `functions` / `function_call` and the `function`
//! role, `top_logprobs` without `logprobs: true`, `reasoning_effort` that is not one of the
//! efforts above, `response_format` types other than text/json_object/json_schema and unknown
//! json_schema keys, non-function tools and unknown function keys, a tool_choice of another shape
//! (`allowed_tools`) or naming a function not among the tools, `name` on a message, a non-null
//! `refusal` / `audio` on an assistant message, content parts other than those above (and
//! non-text parts in system, assistant and tool messages), a `file` given by `file_id` or not as
//! a `data:` URI, a linked image whose extension tells no MIME type (send it as a `data:` URI:
//! the gateway fetches nothing), tool call arguments that are not a JSON object, a tool message
//! whose `tool_call_id` no earlier assistant tool call has, and a conversation with no user or
//! assistant content (Gemini needs `contents`). Embeddings: token-array inputs, an empty input,
//! `encoding_format` other than float, any field but input/model/dimensions/user.
//!
//! Accepted and not carried, so that it is not silent: `model`, `stream`, `stream_options` (the
//! URL's business; the stream translator is told `include_usage`), `user`, `safety_identifier`,
//! `metadata`, `prompt_cache_key` (Gemini caches implicitly), `store: false`,
//! `parallel_tool_calls` (Gemini has no switch), `strict` on functions and json_schema (Gemini
//! has no strict switch), zero penalties, `n: 1`, an image's `detail`, a file's `filename`,
//! `reasoning_content` on assistant history (Gemini carries its reasoning in signatures).
//!
//! # Answers and streams
//!
//! - `id` = `responseId` (else `chatcmpl-<unique>`); `model` = what the client asked for; each
//!   candidate → a choice (`index` kept): text parts joined → `content`, `thought: true` parts →
//!   `reasoning_content`, functionCall parts → `tool_calls` with ids `call_<responseId>_<n>`
//!   (unique in the response and across responses; `__thought__<signature>` appended when
//!   signed) and arguments as a JSON string; `logprobsResult` → `logprobs.content`. Other parts
//!   (inline data, code execution) and signatures on text parts are not carried.
//! - finishReason: STOP → stop (tool_calls when the choice called functions), MAX_TOKENS →
//!   length, SAFETY / RECITATION / BLOCKLIST / PROHIBITED_CONTENT / SPII / IMAGE_SAFETY /
//!   IMAGE_PROHIBITED_CONTENT / IMAGE_RECITATION → content_filter, anything else
//!   (MALFORMED_FUNCTION_CALL, OTHER, LANGUAGE, …) → stop. A filtered or calling choice without
//!   text has `content: null`, another empty one `""`.
//! - A blocked prompt (`promptFeedback.blockReason`, no candidates) → one choice, content null,
//!   finish_reason content_filter (what OpenAI does when its filter stops a prompt's answer).
//! - usage: prompt_tokens = promptTokenCount + toolUsePromptTokenCount, completion_tokens =
//!   candidatesTokenCount + thoughtsTokenCount (unless candidatesTokenCount already holds them,
//!   as some Vertex versions count: LiteLLM's test), total = their sum,
//!   `prompt_tokens_details.cached_tokens` = cachedContentTokenCount,
//!   `completion_tokens_details.reasoning_tokens` = thoughtsTokenCount.
//! - Streams: see [`GeminiToChatStream`].

mod embeddings;
mod mapping;
mod messages;
mod request;
mod response;
mod stream;

#[cfg(test)]
mod error_tests;

pub use embeddings::{embeddings_request_to_gemini, gemini_embeddings_to_openai, gemini_embeddings_to_openai_with};
pub use request::chat_request_to_gemini;
pub use response::{gemini_response_to_chat, gemini_response_to_chat_at};
pub use stream::GeminiToChatStream;
