//! An incremental server-sent-events splitter: bytes in, split anywhere, events out.
//!
//! Follows the WHATWG event-stream rules the translators need: lines end in `\n`, `\r\n` or `\r`
//! (also when a `\r\n` is split between two pieces), `:` starts a comment, one space after the
//! field's colon is dropped, several `data:` lines join with `\n`, a blank line dispatches, `id:`
//! and `retry:` are ignored. An event with no `data:` line is not dispatched. [`SseSplitter::finish`]
//! also dispatches a last event whose blank line never came. An event (or a line) longer than
//! [`MAX_EVENT_BYTES`] stops the splitter: a stream that never ends a line must not grow a buffer
//! without bound.

/// The largest event the splitter holds; far beyond any real chunk (OpenAI's and Anthropic's are
/// a few hundred bytes to a few KB).
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// One dispatched event, borrowed from the splitter until the callback returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` name, empty when the event had none.
    pub event: &'a [u8],
    /// The `data:` lines joined with `\n`.
    pub data: &'a [u8],
}

/// The stream held an event longer than [`MAX_EVENT_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseOverflow;

/// The splitter's state between pieces.
#[derive(Debug, Default)]
pub struct SseSplitter {
    /// The current line, when it started in an earlier piece.
    line: Vec<u8>,
    event: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// The previous piece ended with `\r`: a leading `\n` belongs to that line end.
    skip_lf: bool,
    overflow: bool,
}

impl SseSplitter {
    pub fn new() -> SseSplitter {
        SseSplitter::default()
    }

    /// Splits the next piece, calling `on_event` for each event it completes.
    pub fn feed(&mut self, mut input: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) -> Result<(), SseOverflow> {
        if self.overflow {
            return Err(SseOverflow);
        }
        if self.skip_lf && !input.is_empty() {
            self.skip_lf = false;
            if let [b'\n', rest @ ..] = input {
                input = rest;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', input) {
            let line_end = input[end];
            if self.line.is_empty() {
                self.process_line(&input[..end], &mut on_event)?;
            } else {
                self.line.extend_from_slice(&input[..end]);
                let line = std::mem::take(&mut self.line);
                let result = self.process_line(&line, &mut on_event);
                self.line = line;
                self.line.clear();
                result?;
            }
            input = &input[end + 1..];
            if line_end == b'\r' {
                match input {
                    [b'\n', rest @ ..] => input = rest,
                    [] => self.skip_lf = true,
                    _ => {}
                }
            }
        }
        if self.line.len() + input.len() + self.data.len() > MAX_EVENT_BYTES {
            return self.overflowed();
        }
        self.line.extend_from_slice(input);
        Ok(())
    }

    /// Ends the stream: a last line without its line end, and a last event without its blank
    /// line, are dispatched.
    pub fn finish(&mut self, mut on_event: impl FnMut(SseEvent<'_>)) -> Result<(), SseOverflow> {
        if self.overflow {
            return Err(SseOverflow);
        }
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.process_line(&line, &mut on_event)?;
        }
        self.dispatch(&mut on_event);
        Ok(())
    }

    fn overflowed(&mut self) -> Result<(), SseOverflow> {
        self.overflow = true;
        self.line = Vec::new();
        self.data = Vec::new();
        Err(SseOverflow)
    }

    fn process_line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) -> Result<(), SseOverflow> {
        if line.is_empty() {
            self.dispatch(on_event);
            return Ok(());
        }
        if line.first() == Some(&b':') {
            return Ok(());
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return self.overflowed();
                }
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data {
            on_event(SseEvent { event: &self.event, data: &self.data });
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(pieces: &[&[u8]]) -> Vec<(String, String)> {
        let mut splitter = SseSplitter::new();
        let mut events = Vec::new();
        let mut push = |e: SseEvent<'_>| {
            events.push((String::from_utf8_lossy(e.event).into_owned(), String::from_utf8_lossy(e.data).into_owned()))
        };
        for piece in pieces {
            splitter.feed(piece, &mut push).unwrap();
        }
        splitter.finish(&mut push).unwrap();
        events
    }

    fn pair(event: &str, data: &str) -> (String, String) {
        (event.to_string(), data.to_string())
    }

    #[test]
    fn named_and_unnamed_events() {
        let events = split_all(&[b"event: ping\ndata: {}\n\ndata: one\n\n: comment\n\ndata:two\n\n"]);
        assert_eq!(events, [pair("ping", "{}"), pair("", "one"), pair("", "two")]);
    }

    #[test]
    fn every_line_ending_and_every_split_point() {
        let text: &[u8] =
            b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\ndata: 4\n\nid: 7\nretry: 1\ndata\n\n";
        let want = [pair("a", "1"), pair("b", "2"), pair("", "3\n4"), pair("", "")];
        assert_eq!(split_all(&[text]), want);
        for cut in 0..text.len() {
            assert_eq!(split_all(&[&text[..cut], &text[cut..]]), want, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(split_all(&bytes), want);
        assert_eq!(split_all(&[b"data: 1\r", b"", b"\n", b"", b"\ndata: 2\n\n"]), [pair("", "1"), pair("", "2")]);
    }

    #[test]
    fn a_last_event_without_its_blank_line_is_dispatched_at_finish() {
        assert_eq!(split_all(&[b"data: [DONE]"]), [pair("", "[DONE]")]);
        assert_eq!(split_all(&[b"data: [DONE]\n"]), [pair("", "[DONE]")]);
        assert_eq!(split_all(&[b"event: x\n\n", b"\n"]), []);
    }

    #[test]
    fn an_endless_line_overflows_instead_of_growing() {
        let mut splitter = SseSplitter::new();
        let chunk = vec![b'x'; 1 << 20];
        let mut result = Ok(());
        for _ in 0..(MAX_EVENT_BYTES >> 20) + 1 {
            result = splitter.feed(&chunk, |_| {});
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SseOverflow));
        assert_eq!(splitter.feed(b"\n\n", |_| panic!("no event after an overflow")), Err(SseOverflow));
        assert_eq!(splitter.finish(|_| {}), Err(SseOverflow));
    }
}
