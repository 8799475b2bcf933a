//! Counting server-sent events in a response body as it arrives, in pieces of any size.
//!
//! An event ends at a blank line (`\n`, `\r\n` or `\r` line endings); only the first bytes of an
//! event's first line are kept, enough to recognise a stream's last event: OpenAI chat's
//! `data: [DONE]`, Anthropic's `event: message_stop`, the Responses API's
//! `event: response.completed` (or `response.incomplete`).

/// The first bytes of an event kept to recognise the last.
const PREFIX: usize = 32;

/// The first lines of the events that end a stream.
const LAST_EVENTS: [&[u8]; 5] = [
    b"data: [DONE]",
    b"data:[DONE]",
    b"event: message_stop",
    b"event: response.completed",
    b"event: response.incomplete",
];

#[derive(Debug, Default, Clone)]
pub struct SseScanner {
    /// Bytes of the current line so far.
    line_len: usize,
    /// The last byte was a `\r` (a `\n` right after it belongs to the same line ending).
    after_cr: bool,
    /// The current event has at least one non-blank line.
    in_event: bool,
    /// The current line is the event's first.
    first_line: bool,
    prefix: [u8; PREFIX],
    prefix_len: usize,
    /// Events dispatched, the last (`[DONE]`, …) not included.
    pub events: u64,
    /// The stream's last event was seen whole.
    pub done: bool,
}

impl SseScanner {
    /// Scans `data`; returns how many events (besides `[DONE]`) it completed.
    pub fn feed(&mut self, mut data: &[u8]) -> u64 {
        let before = self.events;
        while !data.is_empty() {
            if self.after_cr && data[0] == b'\n' {
                self.after_cr = false;
                data = &data[1..];
                continue;
            }
            self.after_cr = false;
            match memchr::memchr2(b'\r', b'\n', data) {
                None => {
                    self.line_bytes(data);
                    break;
                }
                Some(at) => {
                    self.line_bytes(&data[..at]);
                    self.after_cr = data[at] == b'\r';
                    self.end_line();
                    data = &data[at + 1..];
                }
            }
        }
        self.events - before
    }

    fn line_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.line_len == 0 && !self.in_event {
            self.first_line = true;
            self.prefix_len = 0;
        }
        if self.first_line {
            let take = bytes.len().min(PREFIX - self.prefix_len);
            self.prefix[self.prefix_len..self.prefix_len + take].copy_from_slice(&bytes[..take]);
            self.prefix_len += take;
        }
        self.line_len += bytes.len();
    }

    fn end_line(&mut self) {
        if self.line_len > 0 {
            self.in_event = true;
            self.first_line = false;
            self.line_len = 0;
            return;
        }
        if !self.in_event {
            return;
        }
        self.in_event = false;
        let first = &self.prefix[..self.prefix_len];
        if LAST_EVENTS.contains(&first) {
            self.done = true;
        } else {
            self.events += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_and_responses_streams_end_at_their_last_event() {
        for stream in [
            &b"event: message_start\ndata: {}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"[..],
            b"event: response.created\ndata: {}\n\nevent: response.completed\ndata: {}\n\n",
        ] {
            let mut scanner = SseScanner::default();
            assert_eq!(scanner.feed(stream), 1);
            assert!(scanner.done);
        }
        let mut cut = SseScanner::default();
        cut.feed(b"event: response.created\ndata: {}\n\nevent: response.output_text.delta\ndata: {}\n\n");
        assert!(!cut.done);
    }

    const STREAM: &[u8] = b"data: {\"a\":1}\n\ndata: {\"b\":2}\r\n\r\n: comment\n\ndata: [DONE]\n\n";

    #[test]
    fn counts_events_and_done() {
        let mut scanner = SseScanner::default();
        assert_eq!(scanner.feed(STREAM), 3, "the comment-only event counts as an event");
        assert!(scanner.done);
    }

    #[test]
    fn any_split_gives_the_same_count() {
        for split in 0..=STREAM.len() {
            let mut scanner = SseScanner::default();
            let first = scanner.feed(&STREAM[..split]);
            let second = scanner.feed(&STREAM[split..]);
            assert_eq!(first + second, 3, "split at {split}");
            assert!(scanner.done, "split at {split}");
        }
        let mut scanner = SseScanner::default();
        let total: u64 = STREAM.iter().map(|byte| scanner.feed(std::slice::from_ref(byte))).sum();
        assert_eq!((total, scanner.done), (3, true));
    }

    #[test]
    fn done_must_be_a_whole_event() {
        let mut scanner = SseScanner::default();
        scanner.feed(b"data: {}\n\ndata: [DONE]\n");
        assert!(!scanner.done, "no blank line yet");
        scanner.feed(b"\n");
        assert!(scanner.done);
        let mut scanner = SseScanner::default();
        scanner.feed(b"data: [DONE] and more\n\n");
        assert!(!scanner.done);
        assert_eq!(scanner.events, 1);
    }

    #[test]
    fn a_second_line_does_not_touch_the_prefix() {
        let mut scanner = SseScanner::default();
        scanner.feed(b"event: x\ndata: [DONE]\n\n\r\r");
        assert!(!scanner.done);
        assert_eq!(scanner.events, 1);
    }
}
