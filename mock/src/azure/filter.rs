//! Azure OpenAI's content filter: its results on answers and its 400 for a filtered prompt.

use serde_json::{json, Value};

const CONTENT_FILTERED: &str = "The response was filtered due to the prompt triggering Azure OpenAI's content \
                                management policy. Please modify your prompt and retry. To learn more about our \
                                content filtering policies please read our documentation: \
                                https://go.microsoft.com/fwlink/?linkid=2198766";

/// The content filter's 400 for a prompt (violence, medium).
pub(crate) fn content_filter_body() -> Vec<u8> {
    json!({"error": {
        "message": CONTENT_FILTERED,
        "type": null,
        "param": "prompt",
        "code": "content_filter",
        "status": 400,
        "innererror": {
            "code": "ResponsibleAIPolicyViolation",
            "content_filter_result": filter_results(Some("violence"), true),
        },
    }})
    .to_string()
    .into_bytes()
}

/// `prompt_filter_results` of an answer: the prompt passed every filter.
pub(crate) fn prompt_filter_results(filtered: Option<&str>) -> Value {
    json!([{"prompt_index": 0, "content_filter_results": filter_results(filtered, true)}])
}

/// Each category safe but `filtered` (at medium severity); a prompt's results have `jailbreak`,
/// a completion's the protected-material checks.
pub(crate) fn filter_results(filtered: Option<&str>, prompt: bool) -> Value {
    let category = |name: &str| {
        if filtered == Some(name) {
            json!({"filtered": true, "severity": "medium"})
        } else {
            json!({"filtered": false, "severity": "safe"})
        }
    };
    let clean = json!({"filtered": false, "detected": false});
    let mut results = json!({
        "hate": category("hate"),
        "self_harm": category("self_harm"),
        "sexual": category("sexual"),
        "violence": category("violence"),
    });
    if prompt {
        results["jailbreak"] = clean;
    } else {
        results["protected_material_code"] = clean.clone();
        results["protected_material_text"] = clean;
    }
    results
}
