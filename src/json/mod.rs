//! Strict JSON over borrowed bytes: the one-pass parser, the borrowed document it builds, and
//! the writer.
//!
//! Owns RFC 8259 as tightened by PROFILE §2a: UTF-8 only (no byte-order mark), no extensions,
//! escapes validated and lone surrogates rejected, numbers kept as their lexeme, depth limited
//! (128 by default), and duplicate or escape-equivalent member names rejected at every depth in
//! the same pass (WIRE-014, WIRE-021). Strings are slices of the input until a caller asks for
//! the decoded value. This module knows nothing of records, lines or I/O, and never echoes
//! input bytes in an error.

mod canonical;
mod error;
mod members;
mod parse;
mod scan;
mod string;
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
pub use scan::{find_special_with, string_masks_with};
