//! [`LineCodec`]: the protocol's framing as a `tokio_util::codec` decoder and encoder, so a
//! host can use `FramedRead` / `FramedWrite` over a child's pipes (feature `tokio`).
//!
//! Owns: adapting the crate's one read side, [`Deframer`] (the framer: lines, the line limit,
//! blank lines, the unterminated tail at EOF: WIRE-EOF-001; `FramedRead` keeps the read buffer
//! and each read's bytes are pushed without a copy), and [`FrameEncoder`] (one validated frame
//! per record: WIRE-013) to the codec traits.
//! Must never: hold protocol rules of its own, parse JSON, or append bytes of a refused record.
//!
//! Decoding yields one item per line: `Ok(`[`RecordLine`]`)`, or `Err(`[`FrameError`]`)` for a
//! line that is not a frame (e.g. longer than the limit); the stream goes on after such an
//! item, as the reader does. An I/O error ends it.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use agentx_io::LineCodec;
//! use agentx_wire::wire::{InputRecord, OutputRecord};
//! use futures_util::{SinkExt, StreamExt};
//! use tokio_util::codec::{FramedRead, FramedWrite};
//!
//! // Writing: records in, validated frames out.
//! let mut sink = FramedWrite::new(Vec::new(), LineCodec::new());
//! sink.send(&InputRecord::KeepAlive).await.unwrap();
//! assert_eq!(sink.get_ref(), b"{\"type\":\"keep_alive\"}\n");
//!
//! // Reading: lines out, the unterminated tail included (WIRE-EOF-001).
//! let input = &b"{\"type\":\"keep_alive\"}\n\n{\"type\":\"keep_alive\"}"[..];
//! let mut lines = FramedRead::new(input, LineCodec::new());
//! let mut parser = agentx_wire::json::Parser::new();
//! let mut n = 0;
//! while let Some(line) = lines.next().await {
//!     let line = line.unwrap().unwrap();
//!     let record = OutputRecord::decode_line(&line.bytes, &mut parser).unwrap();
//!     assert_eq!(record, OutputRecord::KeepAlive);
//!     n += 1;
//! }
//! assert_eq!(n, 2);
//! # });
//! ```

use std::fmt;
use std::io;

use bytes::BytesMut;
use tokio_util::codec::{Decoder, Encoder};

use agentx_wire::encode::{EncoderFailure, FrameEncoder};
use agentx_wire::frame::{FrameError, Reader};
use agentx_wire::wire::Encode;

use super::deframer::{Deframer, DEFAULT_CHUNK};
use super::pump::RecordLine;

/// The line codec. See the module docs.
#[derive(Debug, Default)]
pub struct LineCodec {
    deframer: Deframer,
    encoder: FrameEncoder,
}

impl LineCodec {
    /// A codec with the default line limit (8,388,608 bytes) and an encoder with no
    /// credentials.
    pub fn new() -> Self {
        Self::default()
    }

    /// A codec over a configured reader (its line limit) and encoder (credentials, validator).
    pub fn with_parts(reader: Reader, encoder: FrameEncoder) -> Self {
        LineCodec {
            deframer: Deframer::new(reader, DEFAULT_CHUNK),
            encoder,
        }
    }

    /// The encoder (to read its latched failure).
    pub fn encoder(&self) -> &FrameEncoder {
        &self.encoder
    }

    fn next_item(&mut self) -> Option<Result<RecordLine, FrameError>> {
        self.deframer
            .next_line()
            .map(|item| item.map(RecordLine::from))
    }
}

impl Decoder for LineCodec {
    type Item = Result<RecordLine, FrameError>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        if !src.is_empty() {
            // Zero-copy hand-over: lines inside this chunk share its allocation.
            self.deframer.push(src.split().freeze());
        }
        Ok(self.next_item())
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> io::Result<Option<Self::Item>> {
        if let Some(item) = self.decode(src)? {
            return Ok(Some(item));
        }
        // WIRE-EOF-001: the unterminated tail is a line like any other.
        self.deframer.finish();
        Ok(self.next_item())
    }
}

/// Why the codec could not encode a record.
#[derive(Debug)]
pub enum CodecError {
    /// The encoder refused the record (or an earlier one): nothing was appended; the same
    /// failure every time (WIRE-013, WIRE-015).
    Refused(EncoderFailure),
    /// Writing failed.
    Io(io::Error),
}

impl From<io::Error> for CodecError {
    fn from(e: io::Error) -> Self {
        CodecError::Io(e)
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecError::Refused(failure) => fmt::Display::fmt(failure, f),
            CodecError::Io(e) => write!(f, "output failed: {}", e.kind()),
        }
    }
}

impl std::error::Error for CodecError {}

impl<R: Encode + ?Sized> Encoder<&R> for LineCodec {
    type Error = CodecError;

    fn encode(&mut self, record: &R, dst: &mut BytesMut) -> Result<(), CodecError> {
        let frame = self.encoder.encode(record).map_err(CodecError::Refused)?;
        dst.extend_from_slice(frame);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_wire::encode::CredentialSet;

    #[test]
    fn decode_across_chunks_limit_and_eof_tail() {
        let mut codec = LineCodec::with_parts(Reader::with_max_line(8), FrameEncoder::new());
        let mut src = BytesMut::from(&b"{\"a\":1}\n{\"a\""[..]);
        let first = codec.decode(&mut src).unwrap().unwrap().unwrap();
        assert_eq!((first.number, &first.bytes[..]), (1, &b"{\"a\":1}"[..]));
        assert!(codec.decode(&mut src).unwrap().is_none());
        // 9 bytes: one past the limit of 8.
        src.extend_from_slice(b":123}\n  \n12345678");
        let e = codec.decode(&mut src).unwrap().unwrap().unwrap_err();
        assert_eq!((e.kind().as_str(), e.line()), ("line_too_long", 2));
        assert!(codec.decode(&mut src).unwrap().is_none());
        // The tail, exactly at the limit, only comes out at EOF.
        let tail = codec.decode_eof(&mut src).unwrap().unwrap().unwrap();
        assert_eq!((tail.number, &tail.bytes[..]), (4, &b"12345678"[..]));
        assert!(codec.decode_eof(&mut src).unwrap().is_none());
    }

    #[test]
    fn encode_appends_exact_frames_and_refuses_credentials() {
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(CredentialSet::new(["sk-secret"]).unwrap())
            .unwrap();
        let mut codec = LineCodec::with_parts(Reader::new(), encoder);
        let mut dst = BytesMut::new();
        codec.encode(&b"{\"a\":1}"[..], &mut dst).unwrap();
        assert_eq!(&dst[..], b"{\"a\":1}\n");
        let e = codec.encode(&br#"{"k":"sk-secret"}"#[..], &mut dst);
        assert!(matches!(e, Err(CodecError::Refused(f)) if f.is_validation()));
        // Nothing appended, and the failure latched.
        assert_eq!(&dst[..], b"{\"a\":1}\n");
        assert!(codec.encode(&b"{}"[..], &mut dst).is_err());
        assert!(codec.encoder().failure().is_some());
    }
}
