//! Server-sent events, as an MCP server streams them: each event's name and its `data:` lines
//! joined, cut from the bytes as they arrive.

/// One event.
#[derive(Debug, PartialEq)]
pub struct Event {
    /// `event:`, `message` when absent.
    pub name: String,
    pub data: String,
}

/// Cuts events from a byte stream.
#[derive(Default)]
pub struct Events {
    line: Vec<u8>,
    name: String,
    data: Vec<String>,
}

impl Events {
    /// Feeds bytes; returns the events they completed. Lines end in `\n`, `\r\n` or `\r`.
    pub fn feed(&mut self, bytes: &[u8], limit: usize) -> Result<Vec<Event>, String> {
        let mut out = Vec::new();
        for &b in bytes {
            if b != b'\n' && b != b'\r' {
                self.line.push(b);
                if self.line.len() > limit {
                    return Err(format!("an event line longer than {limit} bytes"));
                }
                continue;
            }
            // `\r\n`: the `\n` after a `\r` ends no second line (a `\r` left a marker).
            if b == b'\n' && self.line == b"\r" {
                self.line.clear();
                continue;
            }
            let line = String::from_utf8_lossy(&self.line).into_owned();
            self.line.clear();
            if b == b'\r' {
                self.line.push(b'\r');
            }
            self.line_done(&line, &mut out);
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<Event>) {
        let line = line.strip_prefix('\r').unwrap_or(line);
        if line.is_empty() {
            if !self.data.is_empty() {
                let name = std::mem::take(&mut self.name);
                let name = if name.is_empty() { "message".to_string() } else { name };
                out.push(Event { name, data: std::mem::take(&mut self.data).join("\n") });
            }
            self.name.clear();
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = value.to_string(),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_across_pieces_and_line_ends() {
        let mut events = Events::default();
        let mut all = events.feed(b"event: endpoint\r\ndata: /messages/?s=1\r\n\r\n: comment\n\nda", 100).unwrap();
        all.extend(events.feed(b"ta: {\"a\":\ndata: 1}\n\n", 100).unwrap());
        assert_eq!(
            all,
            vec![
                Event { name: "endpoint".into(), data: "/messages/?s=1".into() },
                Event { name: "message".into(), data: "{\"a\":\n1}".into() },
            ]
        );
        assert!(Events::default().feed(&[b'x'; 20], 10).is_err());
    }
}
