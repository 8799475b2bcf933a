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
    /// Which list: a scored list's index, or `RULE` for a keyword rule.
    pub list: u8,
    /// Its position in that list (the keyword rules' index into `keyword_tier_rules`).
    pub index: u16,
    /// Matched between word boundaries (`false`: as a substring).
    pub bounded: bool,
    /// Bounded and made of word characters only: it matches exactly a whole word of the text.
    pub whole_word: bool,
    /// Where its first space is (a phrase), if it has one past its first byte.
    pub space_at: Option<usize>,
}

pub(super) const RULE: u8 = 4;

/// Entry ids grouped by (lowercased) first byte: `ids[starts[b]..starts[b + 1]]`.
#[derive(Clone, Debug, Default)]
struct ByFirstByte {
    starts: Vec<u32>,
    ids: Vec<u16>,
}

impl ByFirstByte {
    fn new(entries: &[Entry], keep: impl Fn(&Entry) -> bool) -> ByFirstByte {
        ByFirstByte::new_keyed(entries, |e| keep(e).then_some(e.bytes[0]))
    }

    /// Groups the entries `key` gives a byte for, by that byte.
    fn new_keyed(entries: &[Entry], key: impl Fn(&Entry) -> Option<u8>) -> ByFirstByte {
        let mut starts = vec![0u32; 257];
        for k in entries.iter().filter_map(&key) {
            starts[usize::from(k) + 1] += 1;
        }
        for b in 0..256 {
            starts[b + 1] += starts[b];
        }
        let mut fill = starts.clone();
        let mut ids = vec![0u16; starts[256] as usize];
        for (id, k) in entries.iter().enumerate().filter_map(|(id, e)| Some((id, key(e)?))) {
            let slot = &mut fill[usize::from(k)];
            ids[*slot as usize] = u16::try_from(id).unwrap_or(u16::MAX);
            *slot += 1;
        }
        ByFirstByte { starts, ids }
    }

    fn get(&self, b: u8) -> &[u16] {
        self.get_exact(b.to_ascii_lowercase())
    }

    fn get_exact(&self, key: u8) -> &[u16] {
        let k = usize::from(key);
        &self.ids[self.starts[k] as usize..self.starts[k + 1] as usize]
    }
}

/// The keywords of the four scored lists and the keyword rules, indexed so the scan tries at
/// each position only the keywords that can start there: a bounded keyword starting with a word
/// character can only start a word, so it is tried at word starts only; the rest (phrases, CJK,
/// keywords starting with punctuation) at every byte.
#[derive(Clone, Debug, Default)]
pub(super) struct Lexicon {
    entries: Vec<Entry>,
    whole_words: ByFirstByte,
    at_word_start: ByFirstByte,
    at_space: ByFirstByte,
    anywhere: ByFirstByte,
    anywhere_is_empty: bool,
    /// A bit per (lowercased) byte pair that starts an `anywhere` keyword (a one-byte keyword
    /// sets its byte's whole row), so most positions are passed over after one test.
    anywhere_pairs: Vec<u64>,
}

fn pair_bit(a: u8, b: u8) -> usize {
    usize::from(a.to_ascii_lowercase()) << 8 | usize::from(b.to_ascii_lowercase())
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

fn starts_words(e: &Entry) -> bool {
    e.bounded && is_word(e.bytes[0]) && !e.whole_word
}

/// A word's hash over its lowercased bytes, fed one byte at a time during the scan.
pub(super) fn hash_step(h: u32, b: u8) -> u32 {
    (h.rotate_left(5) ^ u32::from(b.to_ascii_lowercase())).wrapping_mul(0x9E37_79B9)
}

/// The bucket of a word's hash.
pub(super) fn bucket(h: u32) -> u8 {
    (h >> 24) as u8
}

impl Lexicon {
    /// Builds the indexes over `lists` (each a list id and its keywords). Empty keywords (after
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
                let whole_word = bounded && lower.bytes().all(is_word);
                let space_at = lower.bytes().position(|b| b == b' ').filter(|&k| k > 0);
                let index = u16::try_from(index).unwrap_or(u16::MAX);
                entries.push(Entry {
                    bytes: lower.into_bytes().into_boxed_slice(),
                    list,
                    index,
                    bounded,
                    whole_word,
                    space_at,
                });
            }
        }
        // A whole-word keyword matches a whole word exactly, so one hash probe per word finds it.
        let whole_words = ByFirstByte::new_keyed(&entries, |e| {
            e.whole_word.then(|| bucket(e.bytes.iter().fold(0, |h, &b| hash_step(h, b))))
        });
        let at_word_start = ByFirstByte::new(&entries, starts_words);
        // A phrase is tried where its first space falls, keyed by the byte before that space:
        // spaces are rarer than letters, and the pair narrows the candidates to one or two.
        let at_space = ByFirstByte::new_keyed(&entries, |e| e.space_at.map(|k| e.bytes[k - 1]));
        let elsewhere = |e: &Entry| !starts_words(e) && !e.whole_word && e.space_at.is_none();
        let anywhere = ByFirstByte::new(&entries, elsewhere);
        let mut anywhere_pairs = vec![0u64; 1024];
        for e in entries.iter().filter(|e| elsewhere(e)) {
            let seconds = match e.bytes.get(1) {
                Some(&b) => b..=b,
                None => 0..=255,
            };
            for second in seconds {
                let bit = pair_bit(e.bytes[0], second);
                anywhere_pairs[bit / 64] |= 1 << (bit % 64);
                let upper = pair_bit(e.bytes[0], second.to_ascii_uppercase());
                anywhere_pairs[upper / 64] |= 1 << (upper % 64);
            }
        }
        let anywhere_is_empty = anywhere.ids.is_empty();
        Lexicon { entries, whole_words, at_word_start, at_space, anywhere, anywhere_pairs, anywhere_is_empty }
    }

    pub fn entry(&self, id: u16) -> &Entry {
        &self.entries[usize::from(id)]
    }

    /// The whole-word keywords whose hash falls in the bucket of word hash `h`.
    pub fn whole_words(&self, h: u32) -> &[u16] {
        self.whole_words.get_exact(bucket(h))
    }

    /// Whether a keyword can start inside a word or at punctuation (none by default).
    pub fn has_anywhere(&self) -> bool {
        !self.anywhere_is_empty
    }

    /// The other bounded keywords that may start the word starting with byte `b`.
    pub fn at_word_start(&self, b: u8) -> &[u16] {
        self.at_word_start.get(b)
    }

    /// The phrases whose first space may be the space at `text[at]` (after its first byte).
    pub fn at_space(&self, text: &[u8], at: usize) -> &[u16] {
        if at == 0 {
            return &[];
        }
        self.at_space.get(text[at - 1])
    }

    /// The other keywords that may start at `text[at]`.
    pub fn anywhere(&self, text: &[u8], at: usize) -> &[u16] {
        if self.anywhere_is_empty {
            return &[];
        }
        let second = text.get(at + 1).copied().unwrap_or(0);
        let bit = pair_bit(text[at], second);
        if self.anywhere_pairs[bit / 64] & (1 << (bit % 64)) == 0 {
            return &[];
        }
        self.anywhere.get(text[at])
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
        let t = text.as_bytes();
        (0..t.len()).any(|i| {
            let word_start = is_word(t[i]) && (i == 0 || !is_word(t[i - 1]));
            let len = t[i..].iter().position(|&c| !is_word(c)).unwrap_or(t.len() - i);
            let h = t[i..i + len].iter().fold(0, |h, &b| hash_step(h, b));
            let whole = |&id: &u16| matches_at(lex.entry(id), t, i);
            if word_start && lex.whole_words(h).iter().any(whole) {
                return true;
            }
            let ids = if word_start { lex.at_word_start(t[i]) } else { &[] };
            let phrase = |&id: &u16| {
                let e = lex.entry(id);
                e.space_at.is_some_and(|k| t[i] == b' ' && i >= k && matches_at(e, t, i - k))
            };
            ids.iter().chain(lex.anywhere(t, i)).any(|&id| matches_at(lex.entry(id), t, i))
                || lex.at_space(t, i).iter().any(phrase)
        })
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
