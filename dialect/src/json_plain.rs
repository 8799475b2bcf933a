//! The plain runs of a JSON string — the bytes that need no escape and end no string — found a
//! 32-byte block at a time: what the facts scanner skips and what the JSON writer copies as is.

/// Whether a byte ends a string's plain run: a quote, a backslash, or a control character
/// (which JSON forbids unescaped).
pub fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

const BLOCK: usize = 32;

/// How many leading bytes of `bytes` are plain (no [`is_special`] byte), counted in whole
/// blocks, or exactly when a block holds a special byte: the caller finds the byte from there.
pub fn plain_blocks(bytes: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above), all `avx2::plain_blocks` requires.
        return unsafe { avx2::plain_blocks(bytes) };
    }
    plain_blocks_portable(bytes)
}

/// [`plain_blocks`] without AVX2 (SSE2, which every x86-64 has, or the target's vectors).
fn plain_blocks_portable(bytes: &[u8]) -> usize {
    let mut at = 0;
    while let Some(block) = bytes.get(at..at + BLOCK) {
        if has_special(block.try_into().expect("a block's length")) {
            break;
        }
        at += BLOCK;
    }
    at
}

/// Whether a block holds a byte that [`is_special`]: written as a flag per byte, then their
/// union, the form the compiler turns into vector compares (25 SSE2 instructions for 32 bytes;
/// a short-circuiting loop costs ten times that).
fn has_special(block: &[u8; BLOCK]) -> bool {
    let mut flags = [0u8; BLOCK];
    for (flag, &b) in flags.iter_mut().zip(block) {
        *flag = u8::from(b == b'"') | u8::from(b == b'\\') | u8::from(b < 0x20);
    }
    flags.iter().fold(0, |all, &flag| all | flag) != 0
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// [`super::plain_blocks`] with AVX2: a block costs a load, three compares, two ors and a
    /// mask (about 10 instructions for 32 bytes), and a hit gives the special byte's offset.
    #[target_feature(enable = "avx2")]
    pub fn plain_blocks(bytes: &[u8]) -> usize {
        let quote = _mm256_set1_epi8(b'"' as i8);
        let backslash = _mm256_set1_epi8(b'\\' as i8);
        let control_max = _mm256_set1_epi8(0x1f);
        let mut at = 0;
        while let Some(block) = bytes.get(at..at + super::BLOCK) {
            // SAFETY: `block` is 32 readable bytes, all an unaligned 256-bit load reads.
            let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
            // A byte is a control character when the unsigned max of it and 0x1f is 0x1f.
            let control = _mm256_cmpeq_epi8(_mm256_max_epu8(v, control_max), control_max);
            let special =
                _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)), control);
            let mask = _mm256_movemask_epi8(special) as u32;
            if mask != 0 {
                return at + mask.trailing_zeros() as usize;
            }
            at += super::BLOCK;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_block_scans_stop_at_the_block_of_the_first_special_byte() {
        let mut bytes = vec![b'a'; 200];
        let check = |bytes: &[u8]| {
            let first = bytes.iter().position(|&b| is_special(b)).unwrap_or(bytes.len());
            let whole = bytes.len() / BLOCK * BLOCK;
            let block_start = (first / BLOCK * BLOCK).min(whole);
            let portable = plain_blocks_portable(bytes);
            assert_eq!(portable, block_start, "{bytes:?}");
            let fast = plain_blocks(bytes);
            assert!(fast >= block_start && fast <= first.min(whole), "{fast} for {bytes:?}");
        };
        check(&bytes);
        for at in 0..bytes.len() {
            for special in [b'"', b'\\', 0x00, 0x1f, 0x0a] {
                bytes[at] = special;
                check(&bytes);
                check(&bytes[..at + 1]);
                bytes[at] = if at % 3 == 0 { 0x20 } else { 0xc3 };
            }
        }
    }
}
