//! The request body's top-level members, found by a validating JSON scanner that skips strings
//! 32 bytes at a time: the fast way to the facts for the bodies clients send.
//!
//! It accepts a strict subset of what serde_json accepts and gives up (`None`) on anything else —
//! invalid JSON, a key with an escape, nesting deeper than [`MAX_DEPTH`] — so that serde_json,
//! on the slow path, decides such a body and words its error. A differential test holds the two
//! to the same verdicts (`facts_scan_tests.rs`).

use std::ops::Range;

use crate::dialect::json_plain::{is_special, plain_blocks};

/// Containers nested deeper than this are left to serde_json (whose limit is 128).
pub const MAX_DEPTH: u32 = 64;

/// Calls `member` with each top-level member's key (as written, without its quotes) and the span
/// of its value in `body`, in order; `member` returning `false` stops the scan. `None` when the
/// body is not an object of valid JSON this scanner reads, or when `member` stopped it.
pub fn top_level_members(body: &[u8], mut member: impl FnMut(&[u8], Range<usize>) -> bool) -> Option<()> {
    let mut at = skip_ws(body, 0);
    if body.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(body, at + 1);
    if body.get(at) == Some(&b'}') {
        return end_of_body(body, at + 1);
    }
    loop {
        let (key, after_key) = plain_key(body, at)?;
        at = skip_ws(body, after_key);
        if body.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_ws(body, at + 1);
        let end = skip_value(body, start)?;
        if !member(&body[key], start..end) {
            return None;
        }
        at = skip_ws(body, end);
        match body.get(at) {
            Some(b',') => at = skip_ws(body, at + 1),
            Some(b'}') => return end_of_body(body, at + 1),
            _ => return None,
        }
    }
}

/// Only whitespace may follow the object.
fn end_of_body(body: &[u8], at: usize) -> Option<()> {
    (skip_ws(body, at) == body.len()).then_some(())
}

/// A key at `at` (its opening quote) without escapes: the range of its text and where it ends.
fn plain_key(body: &[u8], at: usize) -> Option<(Range<usize>, usize)> {
    if body.get(at) != Some(&b'"') {
        return None;
    }
    let end = skip_string(body, at + 1)?;
    let key = at + 1..end - 1;
    if body[key.clone()].contains(&b'\\') {
        return None;
    }
    Some((key, end))
}

fn skip_ws(body: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = body.get(at) {
        at += 1;
    }
    at
}

/// Skips one value starting at `at`; returns where it ends. Containers are walked without
/// recursion: a bit per open container says whether it is an object.
fn skip_value(body: &[u8], mut at: usize) -> Option<usize> {
    let mut objects: u64 = 0;
    let mut depth: u32 = 0;
    loop {
        // A value is expected at `at`.
        match *body.get(at)? {
            b'"' => at = skip_string(body, at + 1)?,
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                at = skip_ws(body, at + 1);
                if body.get(at) == Some(&close) {
                    at += 1;
                } else {
                    if depth == MAX_DEPTH {
                        return None;
                    }
                    objects = objects << 1 | u64::from(open == b'{');
                    depth += 1;
                    if open == b'{' {
                        at = object_key(body, at)?;
                    }
                    continue;
                }
            }
            b't' => at = literal(body, at, b"true")?,
            b'f' => at = literal(body, at, b"false")?,
            b'n' => at = literal(body, at, b"null")?,
            b'-' | b'0'..=b'9' => at = skip_number(body, at)?,
            _ => return None,
        }
        // A value ended: close what it ends, or move to the next value.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = skip_ws(body, at);
            let in_object = objects & 1 == 1;
            match *body.get(at)? {
                b',' => {
                    at = skip_ws(body, at + 1);
                    if in_object {
                        at = object_key(body, at)?;
                    }
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            objects >>= 1;
            depth -= 1;
            at += 1;
        }
    }
}

/// A key (escapes allowed: nested keys are only skipped) and its colon; returns where its value
/// starts.
fn object_key(body: &[u8], at: usize) -> Option<usize> {
    if body.get(at) != Some(&b'"') {
        return None;
    }
    let at = skip_ws(body, skip_string(body, at + 1)?);
    (body.get(at) == Some(&b':')).then(|| skip_ws(body, at + 1))
}

fn literal(body: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    body[at..].starts_with(word).then_some(at + word.len())
}

/// A number's grammar (RFC 8259 §6): `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?
fn skip_number(body: &[u8], mut at: usize) -> Option<usize> {
    let digits = |from: usize| from + body[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    if body.get(at) == Some(&b'-') {
        at += 1;
    }
    match body.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits(at),
        _ => return None,
    }
    if body.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if let Some(b'e' | b'E') = body.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = body.get(at) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

/// Skips a string's rest from `at` (just past its opening quote); returns where it ends (past
/// its closing quote). Plain runs are skipped a 32-byte block at a time ([`plain_blocks`]).
fn skip_string(body: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at += plain_blocks(&body[at..]);
        at += body[at..].iter().position(|&b| is_special(b))?;
        match body[at] {
            b'"' => return Some(at + 1),
            b'\\' => at = skip_escape(body, at + 1)?,
            _ => return None,
        }
    }
}

/// An escape's rest from `at` (just past its backslash): one of `"\/bfnrt`, or `u` and four hex
/// digits (any code unit: serde_json checks surrogates only where it decodes).
fn skip_escape(body: &[u8], at: usize) -> Option<usize> {
    match body.get(at)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 1),
        b'u' => body.get(at + 1..at + 5)?.iter().all(u8::is_ascii_hexdigit).then_some(at + 5),
        _ => None,
    }
}

#[cfg(test)]
#[path = "facts_scan_tests.rs"]
mod tests;
