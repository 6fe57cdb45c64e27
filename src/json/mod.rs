//! Strict JSON over borrowed bytes: the one-pass parser, the borrowed document it builds, and
//! the writer.
//!
//! Owns RFC 8259 as tightened by PROFILE §2a: UTF-8 only (no byte-order mark), no extensions,
//! escapes validated and lone surrogates rejected, numbers kept as their lexeme, depth limited
//! (128 by default), and duplicate or escape-equivalent member names rejected at every depth in
//! the same pass (WIRE-014, WIRE-021). Strings are slices of the input until a caller asks for
//! the decoded value. This module knows nothing of records, lines or I/O, and never echoes
//! input bytes in an error.
//!
//! ```
//! use agentx_wire::json::{self, Parser};
//!
//! let mut parser = Parser::new(); // reuse it: its tape is kept between lines
//! let v = parser.parse(br#"{"type":"user","text":"caf\u00e9","n":1.50}"#).unwrap();
//! let text = v.as_object().and_then(|o| o.get("text")).and_then(|t| t.as_str()).unwrap();
//! assert_eq!(text.decode(), "café"); // borrowed until an escape forces a copy
//! // Canonical re-encoding: escapes normalized, number lexemes kept.
//! let mut out = Vec::new();
//! json::write_value(&mut out, v);
//! assert_eq!(out, "{\"type\":\"user\",\"text\":\"café\",\"n\":1.50}".as_bytes());
//! // Strict: duplicate members (even escape-equivalent ones) are errors (WIRE-014).
//! assert!(json::parse(br#"{"a":1,"\u0061":2}"#).unwrap_err().is_duplicate_member());
//! ```

mod canonical;
mod error;
pub(crate) mod escape;
mod members;
mod parse;
mod scan;
mod tape;
mod unescape;
mod write;

pub use canonical::copy_canonical;
pub use error::{Error, ErrorKind, Malformed};
pub use parse::{parse, Limits, Parser, DEFAULT_MAX_DEPTH};
pub use scan::Backend as ScanBackend;
pub use tape::{Array, Document, Elements, Kind, Members, Number, Object, Str, Value};
pub use write::{
    write_f64, write_i64, write_str, write_str_bytes, write_u64, write_value,
    write_value_from_tape, NonFinite,
};

/// The scan backends this CPU can run, fastest first (for differential tests and benches).
pub use scan::available as scan_backends;
#[doc(hidden)]
pub use scan::{find_special_with, simple_escapes_with, string_masks_with};
