//! Whatever the text, loading returns a config or errors; it never panics.

mod common;

use common::{fixture, load};

#[test]
fn every_prefix_of_a_realistic_config_loads_or_errors() {
    let text = std::fs::read_to_string(fixture("litellm_realistic.yaml")).unwrap();
    for (cut, _) in text.char_indices() {
        if let Err(errors) = load(&text[..cut]) {
            assert!(!errors.0.is_empty(), "an Err without errors at byte {cut}");
        }
    }
}

#[test]
fn odd_values_in_every_position_are_errors_not_panics() {
    let odd = ["~", "[]", "{}", "-1", "1.5e300", "''", "'os.environ/'", "[1, {a: b}]", "18446744073709551616"];
    let template = "model_list:\n  - model_name: X\n    litellm_params: {model: X, api_base: X, weight: X, tags: X, timeout: X}\n    model_info: X\nrouter_settings: {num_retries: X, routing_strategy: X}\npointwork: {listen: X, timeouts: X, limits: {max_headers: X}}\ninclude: X\n";
    for value in odd {
        let _ = load(&template.replace('X', value));
    }
}
