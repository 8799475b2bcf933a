//! Secrets (api keys, the master key) are never printed whole: not in the summary, not in errors.

/// Shows at most the last 4 characters of a secret: `sk-abcdefgh1234` → `…1234`. A secret shorter
/// than 8 characters shows nothing of itself (its last 4 would be half of it).
pub fn redact(secret: &str) -> String {
    const SHOWN: usize = 4;
    const MIN_LEN_TO_SHOW: usize = 8;
    let count = secret.chars().count();
    if count < MIN_LEN_TO_SHOW {
        return "…".to_string();
    }
    let tail: String = secret.chars().skip(count - SHOWN).collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_last_four_characters() {
        assert_eq!(redact("sk-proj-abcdefgh1234"), "…1234");
        assert_eq!(redact("sk-1234"), "…");
        assert_eq!(redact(""), "…");
        assert_eq!(redact("ключ-ключ-ёжик"), "…ёжик");
    }
}
