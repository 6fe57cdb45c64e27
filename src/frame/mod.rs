//! `frame`: bytes → lines. The first layer of the codec.
//!
//! Owns splitting a byte stream into NDJSON record lines (sdk-wire-protocol "Framing and
//! envelopes", WIRE-EOF-001, PROFILE §2a): arbitrary chunk boundaries, the partial trailing
//! record, the final unterminated record at EOF, blank and whitespace-only lines, physical
//! line numbers, the line-length limit (8,388,608 bytes by default), and our own SIMD newline
//! finder ([`split`]). It must never know JSON (the `json` layer parses a [`Line`]'s bytes),
//! never do I/O, and never hold more than the limit of any one line.
//!
//! # Streaming a file in constant memory
//! ```
//! use agentx_wire::frame::Reader;
//! use bytes::BytesMut;
//! use std::io::Read;
//!
//! fn check(mut input: impl Read) -> std::io::Result<(u64, u64)> {
//!     let (mut good, mut bad) = (0u64, 0u64);
//!     let mut reader = Reader::new(); // limit 8,388,608 bytes; `Reader::with_max_line(n)`
//!     let mut buf = BytesMut::new();
//!     loop {
//!         // Reserve reclaims the old allocation once the reader dropped its last chunk.
//!         buf.reserve(1 << 20);
//!         buf.resize(1 << 20, 0);
//!         let n = input.read(&mut buf)?;
//!         if n == 0 {
//!             break;
//!         }
//!         buf.truncate(n);
//!         reader.push(buf.split().freeze()); // zero-copy
//!         while let Some(item) = reader.next_line() {
//!             match item {
//!                 Ok(line) => {
//!                     // line.number(): physical 1-based line number
//!                     // line.as_bytes(): the record without its LF (a trailing CR is kept)
//!                     let _ = line.as_bytes();
//!                     good += 1;
//!                 }
//!                 // e.kind().as_str() == "line_too_long", e.line(), e.to_string()
//!                 Err(_e) => bad += 1,
//!             }
//!         }
//!     }
//!     reader.finish(); // WIRE-EOF-001: the unterminated tail is parsed like any line
//!     while let Some(item) = reader.next_line() {
//!         match item {
//!             Ok(_line) => good += 1,
//!             Err(_e) => bad += 1,
//!         }
//!     }
//!     Ok((good, bad))
//! }
//!
//! let stream = b"{\"type\":\"a\"}\n\n  \r\n{\"type\":\"b\"}\r\n{\"type\":\"c\"}";
//! assert_eq!(check(&stream[..]).unwrap(), (3, 0));
//! ```
//!
//! A [`Line`] borrows the reader until the next call. A line that lay inside one pushed
//! chunk borrows that chunk (no copy; [`Line::to_bytes`] is a `Bytes::slice`); a line that
//! spanned chunks is assembled once in a reused buffer. Blank lines (empty, or only space,
//! tab, CR) are skipped but counted in line numbers. A line longer than the limit yields one
//! [`FrameError`] and is skipped to its LF without being stored; the next line parses normally.

mod error;
mod line;
mod reader;
pub mod split;

pub use error::{FrameError, FrameErrorKind};
pub use line::Line;
pub use reader::{Reader, DEFAULT_MAX_LINE};
pub use split::{backend_name, count_newlines, find_newline, newlines, Backend, Splitter};
