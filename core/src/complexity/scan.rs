//! The byte-level work of the scan, done 64 bytes or 8 bytes at a time: finding the prompt's
//! words, hashing a word, and LiteLLM's multi-step patterns.
//!
//! A 64-byte block becomes a bitmask (one bit per byte, from a loop the compiler vectorises), so
//! the scan visits words and candidate bytes, never every byte.

/// A word byte: Python's `\w` for ASCII (letters, digits, `_`); every non-ASCII byte counts as
/// one (see the lexicon's deviations).
pub(super) fn is_word(b: u8) -> bool {
    ((b | 0x20).wrapping_sub(b'a') < 26) | (b.wrapping_sub(b'0') < 10) | (b == b'_') | (b >= 0x80)
}

/// Python's `\s`, ASCII part (the Unicode spaces beyond it are a documented deviation).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r' | 0x1C..=0x1F)
}

const BLOCK: usize = 64;
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x80 * ONES;

/// The high bit of each of eight bytes where the byte is `b`.
fn eq8(x: u64, b: u8) -> u64 {
    let diff = x ^ (u64::from(b) * ONES);
    !(((diff & !HIGH) + !HIGH) | diff) & HIGH
}

/// `text[base..base + 64]` in place, or copied into `tail` (zeros past the text's end) for the
/// last, short block.
fn block<'a>(text: &'a [u8], base: usize, tail: &'a mut [u8; BLOCK]) -> &'a [u8; BLOCK] {
    match text.get(base..base + BLOCK).and_then(|full| <&[u8; BLOCK]>::try_from(full).ok()) {
        Some(full) => full,
        None => {
            let rest = &text[base..];
            tail[..rest.len()].copy_from_slice(rest);
            tail
        }
    }
}

/// Gathers the high bit of each byte of eight little-endian `u64`s into one bit per byte.
fn gather(highs: [u64; 8]) -> u64 {
    let mut bits = 0u64;
    for (k, high) in highs.into_iter().enumerate() {
        // The eight high bits land in the top byte; no two partial products collide.
        bits |= ((high >> 7 & ONES).wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k);
    }
    bits
}

fn as_u64s(block: &[u8; BLOCK]) -> [u64; 8] {
    let mut words = [0u64; 8];
    for (word, eight) in words.iter_mut().zip(block.chunks_exact(8)) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(eight);
        *word = u64::from_le_bytes(bytes);
    }
    words
}

/// One bit per byte of `block` (bit `j` for byte `j`) where `test` holds (bytes past the text's
/// end are 0, which no caller's test accepts). The test runs on whole bytes, sixteen at a time
/// once vectorised.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn bits_of(block: &[u8; BLOCK], test: impl Fn(u8) -> bool) -> u64 {
    let mut flags = [0u8; BLOCK];
    for (flag, &b) in flags.iter_mut().zip(block) {
        *flag = u8::from(test(b)) << 7;
    }
    gather(as_u64s(&flags))
}

/// One bit per word byte of `block` ([`is_word`]; bit `j` for byte `j`), sixteen bytes per
/// compare with SSE2 (baseline on x86_64).
#[cfg(target_arch = "x86_64")]
fn word_bits(block: &[u8; BLOCK]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_add_epi8, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut bits = 0u64;
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86_64 target, so its intrinsics are available; the one
        // memory access, the unaligned 16-byte load, reads `chunk`, which is exactly 16 bytes of
        // `block` (`chunks_exact(16)` over 64 bytes), so it stays inside the slice.
        let word = unsafe {
            let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            // Shifted so each range starts at -128: a signed compare then tests it unsigned.
            let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let letter =
                _mm_cmplt_epi8(_mm_add_epi8(lower, _mm_set1_epi8((0x80 - b'a') as i8)), _mm_set1_epi8(-128 + 26));
            let digit = _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((0x80 - b'0') as i8)), _mm_set1_epi8(-128 + 10));
            let under = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            // The high bit of `v` itself marks the non-ASCII bytes, all word bytes here.
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), _mm_or_si128(under, v)))
        };
        bits |= u64::from(word as u16) << (16 * k);
    }
    bits
}

#[cfg(not(target_arch = "x86_64"))]
fn word_bits(block: &[u8; BLOCK]) -> u64 {
    bits_of(block, is_word)
}

/// The bits of `text[base..base + 64]` from `high8`, which sets the high bit of each of eight
/// bytes that passes.
fn block_bits8(text: &[u8], base: usize, tail: &mut [u8; BLOCK], high8: impl Fn(u64) -> u64) -> u64 {
    gather(as_u64s(block(text, base, tail)).map(high8))
}

/// How many bytes of `text` start a character (UTF-8), and how many are `?`: one pass, counted
/// in short runs so each counter fits a byte and the compiler keeps them in vector registers.
pub(super) fn count_chars_and_questions(text: &[u8]) -> (usize, usize) {
    let (mut chars, mut questions) = (0, 0);
    for run in text.chunks(240) {
        let (c, q) =
            run.iter().fold((0u8, 0u8), |(c, q), &b| (c + u8::from(b & 0xC0 != 0x80), q + u8::from(b == b'?')));
        chars += usize::from(c);
        questions += usize::from(q);
    }
    (chars, questions)
}

/// Calls `visit(start, end)` for each word of `text` (a maximal run of word bytes), in order,
/// until it returns `false`; the words are found 64 bytes at a time.
#[inline(always)]
pub(super) fn for_each_word(text: &[u8], mut visit: impl FnMut(usize, usize, u8) -> bool) {
    // Whether a word already visited ends in a later block, whose first `lasts` bit is its.
    let mut skip_last = false;
    // Bit 0: whether the previous block ended inside a word.
    let mut carry = 0u64;
    let mut tail = [0; BLOCK];
    let mut base = 0;
    while base < text.len() {
        let bytes = block(text, base, &mut tail);
        let words = word_bits(bytes);
        let next_is_word = text.get(base + BLOCK).is_some_and(|&b| is_word(b));
        let mut starts = words & !(words << 1 | carry);
        // Bit j: byte `base + j` is a word's last.
        let mut lasts = words & !(words >> 1 | u64::from(next_is_word) << 63);
        if skip_last && lasts != 0 {
            lasts &= lasts - 1;
            skip_last = false;
        }
        carry = words >> 63;
        while starts != 0 {
            let at = starts.trailing_zeros() as usize;
            let start = base + at;
            starts &= starts - 1;
            let end = if lasts != 0 {
                let end = base + lasts.trailing_zeros() as usize + 1;
                lasts &= lasts - 1;
                end
            } else {
                // The word runs into the next block (rare): find its end byte by byte.
                skip_last = true;
                let rest = &text[base + BLOCK..];
                base + BLOCK + rest.iter().position(|&b| !is_word(b)).unwrap_or(rest.len())
            };
            if !visit(start, end, bytes[at % BLOCK]) {
                return;
            }
        }
        base += BLOCK;
    }
}

/// Eight bytes of `text` from `at` (little-endian), zeros past its end.
#[inline]
pub(super) fn load8(text: &[u8], at: usize) -> u64 {
    let mut bytes = [0u8; 8];
    match text.get(at..at + 8) {
        Some(eight) => bytes.copy_from_slice(eight),
        None => {
            let rest = text.get(at..).unwrap_or(&[]);
            bytes[..rest.len()].copy_from_slice(rest);
        }
    }
    u64::from_le_bytes(bytes)
}

/// ASCII-lowercases eight bytes at once (bytes outside `A`..=`Z` are unchanged).
fn lower8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low7 = x & (0x7F * ONES);
    // The high bit of each byte: its low seven bits are at least `A`, then more than `Z`.
    let from_a = low7 + (0x80 - u64::from(b'A')) * ONES;
    let past_z = low7 + (0x7F - u64::from(b'Z')) * ONES;
    let upper = from_a & !past_z & !x & (0x80 * ONES);
    x | upper >> 2
}

/// A hash of `text[start..end]` (not empty) ASCII-lowercased: its first and last eight bytes and
/// its length, so a word costs two loads whatever its length.
#[inline]
pub(super) fn word_hash(text: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    let head = lower8(load8(text, start)) & u64::MAX >> (8 * (8 - len.min(8)));
    let tail = if len > 8 { lower8(load8(text, end - 8)) } else { 0 };
    // splitmix64's finaliser.
    let mut h = head ^ tail.rotate_left(29) ^ (len as u64).rotate_right(7);
    h = (h ^ h >> 30).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ h >> 27).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ h >> 31
}

fn starts_with_ci(text: &[u8], at: usize, word: &[u8]) -> bool {
    text.get(at..at + word.len()).is_some_and(|t| t.eq_ignore_ascii_case(word))
}

/// Whether any of LiteLLM's multi-step patterns occurs (case-insensitive): `first.*?then`,
/// `step\s*\d`, `\d+\.\s`, `[a-z]\)\s`. Each is tried only at its rarest byte: the `f` of
/// "first", the `p` of "step", the `.` and the `)`.
pub(super) fn has_multi_step(text: &[u8]) -> bool {
    // Any "first" before this has no "then" after it on its line.
    let mut no_then_until = 0;
    let mut tail = [0; BLOCK];
    let mut base = 0;
    while base < text.len() {
        let mut candidates = block_bits8(text, base, &mut tail, |x| {
            let folded = x | (0x20 * ONES);
            eq8(folded, b'f') | eq8(folded, b'p') | eq8(x, b'.') | eq8(x, b')')
        });
        while candidates != 0 {
            let i = base + candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let next_is_space = text.get(i + 1).is_some_and(|&n| is_space(n));
            let found = match text[i] | 0x20 {
                b'f' if i >= no_then_until && starts_with_ci(text, i, b"first") => {
                    // `.` stops at a line feed: look for "then" on the rest of this line only.
                    let rest = &text[i + 5..];
                    let line = &rest[..rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())];
                    no_then_until = i + 5 + line.len();
                    line.windows(4).any(|w| w.eq_ignore_ascii_case(b"then"))
                }
                b'p' if i >= 3 && text[i - 3..=i].eq_ignore_ascii_case(b"step") => {
                    text[i + 1..].iter().find(|&&c| !is_space(c)).is_some_and(u8::is_ascii_digit)
                }
                // `.` | 0x20 and `)` | 0x20 are themselves.
                b'.' => i > 0 && text[i - 1].is_ascii_digit() && next_is_space,
                b')' => i > 0 && text[i - 1].is_ascii_alphabetic() && next_is_space,
                _ => false,
            };
            if found {
                return true;
            }
        }
        base += BLOCK;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_word(text.as_bytes(), |s, e, first| {
            assert_eq!(first, text.as_bytes()[s]);
            out.push(&text[s..e]);
            true
        });
        out
    }

    #[test]
    fn words_across_blocks() {
        for len in [0, 1, 63, 64, 65, 127, 128, 200] {
            for word in [1, 5, 63, 64, 65, 130] {
                let text: String = (0..len)
                    .map(|i| if (i / word) % 2 == 0 { char::from(b'a' + (i % 26) as u8) } else { ' ' })
                    .collect();
                let naive: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
                assert_eq!(words(&text), naive, "{len} {word}");
            }
        }
        assert_eq!(words("a_b-c1 é,x"), ["a_b", "c1", "é", "x"]);
    }

    /// The words of `text` found byte by byte.
    fn naive_words(text: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = None;
        for i in 0..=text.len() {
            match (start, text.get(i).is_some_and(|&b| is_word(b))) {
                (None, true) => start = Some(i),
                (Some(s), false) => {
                    out.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn words_of_every_length_and_alignment() {
        // Word bytes of each kind, non-word bytes, and the bytes at the edges of each range.
        let alphabet = b"aZ09_ \t.,-'@[`{/:\x7f\x80\xff\x00";
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut buf = [0u8; 232];
        for len in 0..200 {
            for offset in 0..32 {
                for b in buf.iter_mut() {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    // Runs of word bytes as often as not, so words cross blocks.
                    *b = if seed >> 60 < 9 { b"xY_7\xc3"[(seed % 5) as usize] } else { alphabet[(seed % 21) as usize] };
                }
                let text = &buf[offset..offset + len];
                let mut found = Vec::new();
                for_each_word(text, |s, e, first| {
                    assert_eq!(first, text[s]);
                    found.push((s, e));
                    true
                });
                assert_eq!(found, naive_words(text), "{len} {offset} {text:?}");
            }
        }
    }

    #[test]
    fn word_bits_agree_with_is_word_for_every_byte() {
        for first in (0..=255u8).step_by(64) {
            let mut block = [0u8; BLOCK];
            for (j, b) in block.iter_mut().enumerate() {
                *b = first.wrapping_add(j as u8);
            }
            assert_eq!(word_bits(&block), bits_of(&block, is_word), "{first}");
        }
    }

    #[test]
    fn hashes_ignore_ascii_case_only() {
        let h = |t: &str| word_hash(t.as_bytes(), 0, t.len());
        let p = "xx Kubernetes-Deployment";
        assert_eq!(h("kubernetes"), word_hash(p.as_bytes(), 3, 13));
        assert_eq!(h("abcdefghijklmnopqrstuvwxyz_0123456789"), h("ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789"));
        assert_ne!(h("Ä"), h("ä"));
        assert_ne!(h("ab"), h("ab@"));
        for b in 0..=255u8 {
            assert_eq!(lower8(u64::from(b)), u64::from(b.to_ascii_lowercase()));
            let x = u64::from(b) << 16 | 0x41 << 8 | 0x20;
            let zeros = u64::from(b == 0) * (HIGH & !0xFF_FFFF);
            assert_eq!(eq8(x, b), zeros | 0x80 << 16 | u64::from(b == 0x41) << 15 | u64::from(b == 0x20) << 7, "{b}");
        }
    }
}
