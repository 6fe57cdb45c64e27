//! `Line`: one complete, non-blank record line handed out by the reader.
//!
//! Owns the borrowed view of a line and its conversion to an owned `Bytes`. Must never
//! interpret the bytes (no JSON, no UTF-8 check): that is the `json` layer's job.

use bytes::Bytes;

/// One complete, non-blank line: its bytes without the LF (a CR before the LF is kept; it is
/// JSON whitespace, PROFILE §2a) and its physical 1-based line number.
///
/// Borrowed from the [`Reader`](super::Reader) until the next call on it. A line that lay in
/// one chunk borrows that chunk, so [`Line::to_bytes`] is a zero-copy `Bytes::slice`; a line
/// that spanned chunks borrows the reader's assembly buffer.
///
/// `Debug` shows the number and length only: a line is untrusted input and may carry
/// credentials, so its bytes never reach diagnostics through this type.
#[derive(Clone, Copy)]
pub struct Line<'a> {
    number: u64,
    bytes: &'a [u8],
    chunk: Option<&'a Bytes>,
}

impl std::fmt::Debug for Line<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Line")
            .field("number", &self.number)
            .field("len", &self.bytes.len())
            .field("zero_copy", &self.chunk.is_some())
            .finish()
    }
}

impl<'a> Line<'a> {
    #[inline]
    pub(super) fn in_chunk(number: u64, bytes: &'a [u8], chunk: &'a Bytes) -> Line<'a> {
        Line {
            number,
            bytes,
            chunk: Some(chunk),
        }
    }

    #[inline]
    pub(super) fn assembled(number: u64, bytes: &'a [u8]) -> Line<'a> {
        Line {
            number,
            bytes,
            chunk: None,
        }
    }

    /// The physical, 1-based line number (blank and too-long lines count).
    #[inline]
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The line's bytes, LF excluded.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// An owned copy that outlives the reader: a zero-copy slice of the chunk when the line
    /// lay inside one chunk, a copy when it was assembled across chunks.
    pub fn to_bytes(&self) -> Bytes {
        match self.chunk {
            Some(chunk) => chunk.slice_ref(self.bytes),
            None => Bytes::copy_from_slice(self.bytes),
        }
    }

    /// Whether the bytes are borrowed from the pushed chunk (not copied). For tests.
    #[doc(hidden)]
    pub fn is_zero_copy(&self) -> bool {
        self.chunk.is_some()
    }
}
