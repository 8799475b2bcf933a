//! Keyword matching in one pass over the prompt's bytes, the way LiteLLM's `_keyword_matches`
//! decides a match: the prompt lowercased; a keyword with a space or a CJK character matches as a
//! substring, any other keyword between regex word boundaries (`\b`).
//!
//! Deviations, for speed and no allocation: case folding is ASCII only (LiteLLM lowercases the
//! whole prompt with Unicode rules), and every non-ASCII byte counts as a word character (Python's
//! `\w` is Unicode-aware, so a non-ASCII punctuation mark such as `—` is a boundary there and not
//! here). Both only matter for non-ASCII text around a keyword.

/// One keyword, lowercased (ASCII), with what it belongs to.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub bytes: Box<[u8]>,
    /// Which list: a [`Category`] index, or `RULE` for a keyword rule.
    pub list: u8,
    /// Its position in that list (the keyword rules' index into `keyword_tier_rules`).
    pub index: u16,
    /// Matched between word boundaries (`false`: as a substring).
    pub bounded: bool,
}

pub(super) const RULE: u8 = 4;

/// The keywords of the four scored lists and the keyword rules, indexed by (lowercased) first
/// byte so the scan tries at each position only the keywords that can start there.
#[derive(Clone, Debug, Default)]
pub(super) struct Lexicon {
    entries: Vec<Entry>,
    /// `ids[starts[b]..starts[b + 1]]`: the entries whose first byte is `b`.
    starts: Vec<u32>,
    ids: Vec<u16>,
}

pub(super) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// LiteLLM's `_CJK_CHARACTER`: kana, CJK unified ideographs, compatibility ideographs,
/// half-width katakana and the supplementary ideographic planes.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{FF66}'..='\u{FF9D}'
        | '\u{20000}'..='\u{3FFFF}')
}

impl Lexicon {
    /// Builds the index over `lists` (each a list id and its keywords). Empty keywords (after
    /// trimming) are dropped: LiteLLM rejects them in rules, and one would match everything.
    pub fn new<'a>(lists: impl IntoIterator<Item = (u8, &'a [String])>) -> Lexicon {
        let mut entries = Vec::new();
        for (list, words) in lists {
            for (index, word) in words.iter().enumerate() {
                let lower = word.trim().to_lowercase();
                if lower.is_empty() {
                    continue;
                }
                let bounded = !lower.contains(' ') && !lower.chars().any(is_cjk);
                let index = u16::try_from(index).unwrap_or(u16::MAX);
                entries.push(Entry { bytes: lower.into_bytes().into_boxed_slice(), list, index, bounded });
            }
        }
        let mut starts = vec![0u32; 257];
        for e in &entries {
            starts[usize::from(e.bytes[0]) + 1] += 1;
        }
        for b in 0..256 {
            starts[b + 1] += starts[b];
        }
        let mut fill = starts.clone();
        let mut ids = vec![0u16; entries.len()];
        for (id, e) in entries.iter().enumerate() {
            let slot = &mut fill[usize::from(e.bytes[0])];
            ids[*slot as usize] = u16::try_from(id).unwrap_or(u16::MAX);
            *slot += 1;
        }
        Lexicon { entries, starts, ids }
    }

    pub fn entry(&self, id: u16) -> &Entry {
        &self.entries[usize::from(id)]
    }

    /// The entries that may start with byte `b` (any case).
    pub fn candidates(&self, b: u8) -> &[u16] {
        let b = usize::from(b.to_ascii_lowercase());
        &self.ids[self.starts[b] as usize..self.starts[b + 1] as usize]
    }
}

/// Whether `e` occurs in `text` at `at`, with its word boundaries when it has them.
pub(super) fn matches_at(e: &Entry, text: &[u8], at: usize) -> bool {
    let end = at + e.bytes.len();
    if end > text.len() || !text[at..end].eq_ignore_ascii_case(&e.bytes) {
        return false;
    }
    if !e.bounded {
        return true;
    }
    // `\b` holds where the word-ness of the two sides differs; outside the text is not a word.
    let before = at > 0 && is_word(text[at - 1]);
    let after = end < text.len() && is_word(text[end]);
    before != is_word(e.bytes[0]) && after != is_word(e.bytes[e.bytes.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(keyword: &str, text: &str) -> bool {
        let words = [keyword.to_owned()];
        let lex = Lexicon::new([(0, &words[..])]);
        (0..text.len())
            .any(|i| lex.candidates(text.as_bytes()[i]).iter().any(|&id| matches_at(lex.entry(id), text.as_bytes(), i)))
    }

    #[test]
    fn single_words_need_boundaries_phrases_do_not() {
        assert!(found("api", "Call the API."));
        assert!(!found("api", "the capital"));
        assert!(!found("error", "terrorism"));
        assert!(found("what is", "somewhat is"));
        assert!(found("what's", "What's up"));
        assert!(found("发票", "我需要开发票"));
        assert!(!found("  ", "anything"));
    }
}
