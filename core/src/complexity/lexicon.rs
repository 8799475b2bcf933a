//! Keyword matching the way LiteLLM's `_keyword_matches` decides a match: the prompt lowercased;
//! a keyword with a space or a CJK character matches as a substring, any other keyword between
//! regex word boundaries (`\b`).
//!
//! Deviations, for speed and no allocation: case folding is ASCII only (LiteLLM lowercases the
//! whole prompt with Unicode rules), and every non-ASCII byte counts as a word character (Python's
//! `\w` is Unicode-aware, so a non-ASCII punctuation mark such as `—` is a boundary there and not
//! here). Both only matter for non-ASCII text around a keyword.
//!
//! The index lets the scan look each keyword up only where it can occur, from the prompt's words:
//! - a bounded keyword starting with a word character starts a word, and its first run of word
//!   characters is that whole word: one hash probe per word finds it ([`Lexicon::at_word`]);
//! - a phrase whose first space follows a word character has that space right after a word:
//!   it is tried where a word is followed by a space, keyed by the word's last two bytes
//!   ([`Lexicon::before_space`]);
//! - anything else (CJK without a space, punctuation first, one byte before the first space, …)
//!   is "rare": tried at every byte, behind a byte-pair filter ([`Lexicon::rare`]; none by
//!   default).

use super::scan::{is_word, load8, word_hash};

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

/// Entry ids grouped by a one-byte key: `ids[starts[k]..starts[k + 1]]`.
#[derive(Clone, Debug, Default)]
struct Grouped {
    starts: Vec<u32>,
    ids: Vec<u16>,
}

impl Grouped {
    /// Groups the entries `key` gives a key below `keys` for, by that key.
    fn new(entries: &[Entry], keys: usize, key: impl Fn(&Entry) -> Option<usize>) -> Grouped {
        let mut starts = vec![0u32; keys + 1];
        for k in entries.iter().filter_map(&key) {
            starts[k + 1] += 1;
        }
        for k in 0..keys {
            starts[k + 1] += starts[k];
        }
        let mut fill = starts.clone();
        let mut ids = vec![0u16; starts[keys] as usize];
        for (id, k) in entries.iter().enumerate().filter_map(|(id, e)| Some((id, key(e)?))) {
            let slot = &mut fill[k];
            ids[*slot as usize] = u16::try_from(id).unwrap_or(u16::MAX);
            *slot += 1;
        }
        Grouped { starts, ids }
    }

    fn get(&self, k: usize) -> &[u16] {
        &self.ids[self.starts[k] as usize..self.starts[k + 1] as usize]
    }
}

/// An open-addressing table from a word (lowercased) to the entries it can start.
#[derive(Clone, Debug, Default)]
struct WordTable {
    /// A fingerprint of the word's hash (never 0) and its group; fingerprint 0 is an empty slot.
    slots: Vec<(u32, u32)>,
    /// Per group: the word and the range of its entry ids in `ids`.
    groups: Vec<(Box<[u8]>, u32, u32)>,
    /// Per group: whether finding its word once settles it (see [`Lexicon::at_word`]).
    settles: Vec<bool>,
    ids: Vec<u16>,
}

fn fingerprint(h: u64) -> u32 {
    (h >> 32) as u32 | 1
}

impl WordTable {
    fn new(entries: &[Entry], key: impl Fn(&Entry) -> Option<&[u8]>) -> WordTable {
        let mut groups: Vec<(Box<[u8]>, Vec<u16>)> = Vec::new();
        for (id, e) in entries.iter().enumerate() {
            let Some(word) = key(e) else { continue };
            let id = u16::try_from(id).unwrap_or(u16::MAX);
            match groups.iter_mut().find(|(w, _)| **w == *word) {
                Some((_, ids)) => ids.push(id),
                None => groups.push((word.into(), vec![id])),
            }
        }
        // At most a quarter full: most probes for a prompt's words end at an empty slot.
        let size = (groups.len() * 4).next_power_of_two().max(16);
        let mut table =
            WordTable { slots: vec![(0, 0); size], groups: Vec::new(), settles: Vec::new(), ids: Vec::new() };
        for (g, (word, ids)) in groups.into_iter().enumerate() {
            let h = word_hash(&word, 0, word.len());
            let mut at = h as usize & (size - 1);
            while table.slots[at].0 != 0 {
                at = (at + 1) & (size - 1);
            }
            table.slots[at] = (fingerprint(h), u32::try_from(g).unwrap_or(u32::MAX));
            let start = u32::try_from(table.ids.len()).unwrap_or(u32::MAX);
            table.ids.extend(ids);
            let end = u32::try_from(table.ids.len()).unwrap_or(u32::MAX);
            table.groups.push((word, start, end));
        }
        table
    }

    /// The entries keyed by the word `text[start..end]`, and the index of their group.
    #[inline]
    fn get(&self, text: &[u8], start: usize, end: usize) -> (&[u16], usize) {
        let h = word_hash(text, start, end);
        let mask = self.slots.len() - 1;
        let fp = fingerprint(h);
        let mut at = h as usize & mask;
        loop {
            let (slot_fp, g) = self.slots[at];
            if slot_fp == 0 {
                return (&[], usize::MAX);
            }
            if slot_fp == fp {
                let (word, from, to) = &self.groups[g as usize];
                if word.len() == end - start && text[start..end].eq_ignore_ascii_case(word) {
                    return (&self.ids[*from as usize..*to as usize], g as usize);
                }
            }
            at = (at + 1) & mask;
        }
    }
}

/// The keywords of the four scored lists and the keyword rules, indexed for the scan.
#[derive(Clone, Debug)]
pub(super) struct Lexicon {
    entries: Vec<Entry>,
    words: WordTable,
    /// Per [`word_class`], a bit per list (`1 << list`) with a whole word of `words` in that
    /// class, or [`NOT_SPACE`]: most of a prompt's words are passed over after one test, without
    /// hashing them, and so are the words of lists that can no longer change the outcome.
    word_lists: Box<WordLists>,
    before_space: Grouped,
    /// A bit per [`space_key`] of a phrase's first space.
    phrase_filter: Box<[u64; (1 << 15) / 64]>,
    rare: Grouped,
    /// A bit per (lowercased) byte pair that starts a rare keyword (a one-byte keyword sets its
    /// byte's whole row), so most positions are passed over after one test.
    rare_pairs: Vec<u64>,
}

/// A coarse, cheap class of a word: its first and last bytes (their low five bits, so case does
/// not matter) and its length modulo 8; 13 bits.
/// Per [`word_class`], a bit per list with a whole-word keyword of that class, and [`NOT_SPACE`]
/// if a keyword of another shape starts with a word of that class.
pub(super) type WordLists = [u8; 1 << 13];

/// The [`WordLists`] bit of the bounded keywords with more than their first word (`what's`,
/// `node.js`): the byte after that word is a non-word byte other than a space, so a word followed
/// by a space (most words) passes over them, whatever their list.
const NOT_SPACE: u8 = 0x80;

fn word_class(first: u8, last: u8, len: usize) -> usize {
    usize::from(first & 31) | usize::from(last & 31) << 5 | (len & 7) << 10
}

/// A hash (15 bits) of five bytes around a phrase's first space, the low five of `x`'s eight
/// (little-endian): the two bytes before it, the space, and the two after it, ASCII letters in
/// either case alike.
fn space_key(x: u64) -> usize {
    let five = (x | 0x20_2020_2020) & 0xFF_FFFF_FFFF;
    (five.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 49) as usize
}

fn set_bit(bits: &mut [u64], bit: usize) {
    bits[bit / 64] |= 1 << (bit % 64);
}

/// What [`Lexicon::may_match`] found possible about a word.
#[derive(Clone, Copy)]
pub(super) struct Maybe(u8);

impl Maybe {
    pub fn any(self) -> bool {
        self.0 != 0
    }

    /// A keyword may start at the word.
    pub fn keyword(self) -> bool {
        self.0 & 1 != 0
    }

    /// A phrase's first space may follow the word.
    pub fn phrase(self) -> bool {
        self.0 & 2 != 0
    }
}

/// Eight bytes of `text` from `end - 2` (little-endian), zeros outside it; `end` is at least 1.
fn load8_before(text: &[u8], end: usize) -> u64 {
    match end.checked_sub(2) {
        Some(at) => load8(text, at),
        None => load8(text, 0) << 8,
    }
}

/// The buckets of [`Lexicon::before_space`]'s byte pairs.
const PAIR_BUCKETS: usize = 1024;

fn pair_bucket(a: u8, b: u8) -> usize {
    let pair = u32::from(a.to_ascii_lowercase()) << 8 | u32::from(b.to_ascii_lowercase());
    (pair.wrapping_mul(0x9E37_79B1) >> 22) as usize
}

fn pair_bit(a: u8, b: u8) -> usize {
    usize::from(a.to_ascii_lowercase()) << 8 | usize::from(b.to_ascii_lowercase())
}

/// LiteLLM's `_CJK_CHARACTER`: kana, CJK unified ideographs, compatibility ideographs,
/// half-width katakana and the supplementary ideographic planes.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{31F0}'..='\u{31FF}' | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{FF66}'..='\u{FF9D}'
        | '\u{20000}'..='\u{3FFFF}')
}

/// The word a bounded keyword starting with a word character starts with (its first run of word
/// characters): the whole word of the text it can start.
fn first_word(e: &Entry) -> Option<&[u8]> {
    let run = e.bytes.iter().position(|&b| !is_word(b)).unwrap_or(e.bytes.len());
    (e.bounded && run > 0).then(|| &e.bytes[..run])
}

/// A phrase whose first space follows a word character and at least one more byte.
fn space_after_word(e: &Entry) -> Option<usize> {
    e.space_at.filter(|&k| k >= 2 && is_word(e.bytes[k - 1]))
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
        let mut words = WordTable::new(&entries, first_word);
        let mut word_lists: Box<WordLists> = Box::new([0u8; 1 << 13]);
        let mut groups_in_class = vec![0u8; 1 << 13];
        for (word, from, to) in &words.groups {
            let class = word_class(word[0], word[word.len() - 1], word.len());
            groups_in_class[class] = groups_in_class[class].saturating_add(1);
            for &id in &words.ids[*from as usize..*to as usize] {
                let e = &entries[usize::from(id)];
                word_lists[class] |= if e.whole_word { 1 << e.list } else { NOT_SPACE };
            }
        }
        // A group of whole words alone in its class is settled once its word is found: every
        // entry has matched, and offering it again changes nothing.
        words.settles = (words.groups.iter())
            .map(|(word, from, to)| {
                let alone = groups_in_class[word_class(word[0], word[word.len() - 1], word.len())] == 1;
                alone && words.ids[*from as usize..*to as usize].iter().all(|&id| entries[usize::from(id)].whole_word)
            })
            .collect();
        let mut phrase_filter = Box::new([0u64; (1 << 15) / 64]);
        for e in &entries {
            if let Some(k) = space_after_word(e) {
                // A phrase may end one byte past its first space: then any byte may follow.
                let seconds = match e.bytes.get(k + 2) {
                    Some(&b) => b..=b,
                    None => 0..=255,
                };
                for second in seconds {
                    let five = [e.bytes[k - 2], e.bytes[k - 1], b' ', e.bytes[k + 1], second, 0, 0, 0];
                    set_bit(&mut phrase_filter[..], space_key(u64::from_le_bytes(five)));
                }
            }
        }
        let before_space = Grouped::new(&entries, PAIR_BUCKETS, |e| {
            space_after_word(e).map(|k| pair_bucket(e.bytes[k - 2], e.bytes[k - 1]))
        });
        let is_rare = |e: &Entry| first_word(e).is_none() && space_after_word(e).is_none();
        let rare = Grouped::new(&entries, 256, |e| is_rare(e).then_some(usize::from(e.bytes[0])));
        let mut rare_pairs = vec![0u64; 1024];
        for e in entries.iter().filter(|e| is_rare(e)) {
            let seconds = match e.bytes.get(1) {
                Some(&b) => b..=b,
                None => 0..=255,
            };
            for second in seconds {
                let bit = pair_bit(e.bytes[0], second);
                rare_pairs[bit / 64] |= 1 << (bit % 64);
            }
        }
        Lexicon { entries, words, word_lists, before_space, phrase_filter, rare, rare_pairs }
    }

    #[cfg(test)]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn entry(&self, id: u16) -> &Entry {
        &self.entries[usize::from(id)]
    }

    /// Whether the word `text[start..end]` (whose first byte is `first`) may start a keyword of
    /// the lists in `lists` (a bit per list) under `word_lists`, or be followed by a phrase's
    /// first space: a few table tests and one branch, so a prompt's other words cost little.
    #[inline]
    pub fn may_match(
        &self,
        word_lists: &WordLists,
        text: &[u8],
        first: u8,
        start: usize,
        end: usize,
        lists: u8,
    ) -> Maybe {
        // The word's last two bytes, the byte after it and the two after that.
        let around = load8_before(text, end);
        let [_, last, next, ..] = around.to_le_bytes();
        let lists = lists | (u8::from(next != b' ') * NOT_SPACE);
        let word = word_lists[word_class(first, last, end - start) & ((1 << 13) - 1)] & lists != 0;
        let space = space_key(around) & ((1 << 15) - 1);
        let phrase = self.phrase_filter[space / 64] >> (space % 64) & 1 != 0;
        Maybe(u8::from(word) | u8::from(phrase) << 1)
    }

    /// The table [`Lexicon::may_match`] reads, for a scan to copy and clear as words settle.
    pub fn word_lists(&self) -> &WordLists {
        &self.word_lists
    }

    /// The bounded keywords that may start at the word `text[start..end]`, and the class to
    /// clear in the scan's [`WordLists`] if this word is settled once found.
    pub fn at_word(&self, text: &[u8], start: usize, end: usize) -> (&[u16], Option<usize>) {
        let (ids, group) = self.words.get(text, start, end);
        let settles = self.words.settles.get(group).copied().unwrap_or(false);
        (ids, settles.then(|| word_class(text[start], text[end - 1], end - start)))
    }

    /// The phrases whose first space may be at `text[end]`, right after the word ending there.
    pub fn before_space(&self, text: &[u8], end: usize) -> &[u16] {
        if end < 2 || text.get(end) != Some(&b' ') {
            return &[];
        }
        self.before_space.get(pair_bucket(text[end - 2], text[end - 1]))
    }

    /// Whether any keyword needs [`Lexicon::rare`] (none by default).
    pub fn has_rare(&self) -> bool {
        !self.rare.ids.is_empty()
    }

    /// The rare keywords that may start at `text[at]`.
    pub fn rare(&self, text: &[u8], at: usize) -> &[u16] {
        let second = text.get(at + 1).copied().unwrap_or(0);
        let bit = pair_bit(text[at], second);
        if self.rare_pairs[bit / 64] & (1 << (bit % 64)) == 0 {
            return &[];
        }
        self.rare.get(usize::from(text[at].to_ascii_lowercase()))
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
