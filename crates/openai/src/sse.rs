//! An incremental server-sent-events parser (the WHATWG `text/event-stream` grammar, the part
//! Chat Completions uses). Pure: bytes in, complete events out, in any split.
//!
//! Owns: line splitting on LF, CR or CRLF (a CR at the end of one read and the LF at the start
//! of the next are one terminator), the optional leading byte-order mark, comments (`:`),
//! `data` lines joined with LF, `event` names, dispatch on a blank line, and a size limit on
//! one event.
//!
//! Why not `frame`: our frame layer splits on LF only (the wire's rule) while SSE also ends
//! lines at a lone CR, and it has no event/blank-line grammar. Why not a crate
//! (eventsource-stream): it adds futures and nom to the build for the few dozen lines here,
//! and we still need our own limit and `[DONE]` handling.
//!
//! Must never: buffer without bound, or lose bytes across a read boundary.

use memchr::memchr2;

/// The largest event (all its `data` lines) accepted: 16 MiB.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The `event` field; empty for the default `message` type.
    pub name: String,
    /// The `data` lines joined with LF.
    pub data: Vec<u8>,
}

/// An event grew past [`MAX_EVENT_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge;

/// The parser's state between reads.
#[derive(Debug)]
pub struct Parser {
    line: Vec<u8>,
    data: Vec<u8>,
    name: String,
    has_data: bool,
    /// The last read ended with CR: a leading LF of the next read belongs to it.
    after_cr: bool,
    /// No byte seen yet (a UTF-8 byte-order mark may come first).
    at_start: bool,
    limit: usize,
}

impl Default for Parser {
    fn default() -> Parser {
        Parser::new()
    }
}

impl Parser {
    /// A parser with the default event limit (`MAX_EVENT_BYTES`).
    pub fn new() -> Parser {
        Parser::with_limit(MAX_EVENT_BYTES)
    }

    /// A parser whose events (and lines) may hold at most `limit` bytes.
    pub fn with_limit(limit: usize) -> Parser {
        Parser {
            line: Vec::new(),
            data: Vec::new(),
            name: String::new(),
            has_data: false,
            after_cr: false,
            at_start: true,
            limit,
        }
    }

    /// Feeds the next bytes of the stream; complete events are pushed to `out` in order.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Event>) -> Result<(), TooLarge> {
        if self.at_start && !bytes.is_empty() {
            // The BOM may itself be split across reads: hold partial prefixes in `line`.
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let held = self.line.len();
            let take = (BOM.len() - held).min(bytes.len());
            if BOM[held..held + take] == bytes[..take] {
                if held + take < BOM.len() {
                    self.line.extend_from_slice(&bytes[..take]);
                    return Ok(());
                }
                self.line.clear();
                bytes = &bytes[take..];
            } else {
                // Not a BOM after all: what was held is ordinary line content.
            }
            self.at_start = false;
        }
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(end) = memchr2(b'\n', b'\r', bytes) {
            if self.line.len() + end > self.limit {
                return Err(TooLarge);
            }
            if self.line.is_empty() {
                self.process_line(&bytes[..end], out)?;
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                self.process_line(&line, out)?;
                self.line = line;
                self.line.clear();
            }
            let cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if cr {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        if self.line.len() + bytes.len() > self.limit {
            return Err(TooLarge);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// True when bytes of an unfinished line or event are held (the stream ended mid-event).
    pub fn is_mid_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<Event>) -> Result<(), TooLarge> {
        if line.is_empty() {
            if self.has_data {
                out.push(Event {
                    name: std::mem::take(&mut self.name),
                    data: std::mem::take(&mut self.data),
                });
                self.has_data = false;
            } else {
                self.name.clear();
            }
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &line[line.len()..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                if self.data.len() + value.len() > self.limit {
                    return Err(TooLarge);
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.name = String::from_utf8_lossy(value).into_owned(),
            // `id` and `retry` steer reconnection, which a model stream never does.
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(parts: &[&[u8]]) -> Vec<Event> {
        let mut p = Parser::new();
        let mut out = Vec::new();
        for part in parts {
            p.feed(part, &mut out).unwrap();
        }
        out
    }

    fn data(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| String::from_utf8(e.data.clone()).unwrap())
            .collect()
    }

    #[test]
    fn events_end_at_blank_lines_in_any_split_and_any_line_ending() {
        let stream: &[u8] =
            b"\xEF\xBB\xBF: keep-alive\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\n\ndata: x\rdata: y\r\rdata: [DONE]\n\n";
        let want = vec!["{\"a\":1}", "{\"b\":2}", "x\ny", "[DONE]"];
        assert_eq!(data(&all(&[stream])), want);
        // Every split point, including inside the BOM and between CR and LF.
        for cut in 0..=stream.len() {
            assert_eq!(
                data(&all(&[&stream[..cut], &stream[cut..]])),
                want,
                "cut {cut}"
            );
        }
        // Byte by byte.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(data(&all(&bytes)), want);
    }

    #[test]
    fn event_names_comments_and_fields_without_colon() {
        let events = all(&[b"event: error\ndata: {}\n\n: c\ndata\n\nid: 4\nretry: 5\n\n"]);
        assert_eq!(
            events,
            vec![
                Event {
                    name: "error".into(),
                    data: b"{}".to_vec()
                },
                Event {
                    name: String::new(),
                    data: Vec::new()
                }
            ]
        );
    }

    #[test]
    fn unfinished_event_is_reported_mid_event() {
        let mut p = Parser::new();
        let mut out = Vec::new();
        p.feed(b"data: {\"a\"", &mut out).unwrap();
        assert!(out.is_empty() && p.is_mid_event());
        p.feed(b":1}\n", &mut out).unwrap();
        assert!(out.is_empty() && p.is_mid_event());
        p.feed(b"\n", &mut out).unwrap();
        assert_eq!(data(&out), vec!["{\"a\":1}"]);
        assert!(!p.is_mid_event());
    }

    #[test]
    fn limit_at_the_edge_accepted_one_past_refused() {
        let mut p = Parser::with_limit(8);
        let mut out = Vec::new();
        p.feed(b"data: 12345678\n\n", &mut out).unwrap_err();
        let mut p = Parser::with_limit(14);
        p.feed(b"data: 12345678\n\n", &mut out).unwrap();
        assert_eq!(data(&out), vec!["12345678"]);
        // A line that never ends is refused once it passes the limit, across reads.
        let mut p = Parser::with_limit(14);
        p.feed(b"data: 1234567", &mut out).unwrap();
        p.feed(b"8", &mut out).unwrap();
        assert_eq!(p.feed(b"9", &mut out), Err(TooLarge));
        // Joined data lines count toward the event's limit.
        let mut p = Parser::with_limit(12);
        assert_eq!(
            p.feed(b"data: 123456\ndata: 123456\n", &mut out),
            Err(TooLarge)
        );
    }
}
