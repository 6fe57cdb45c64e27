//! [`Outbox`]: the session's one ordered queue of validated frames (WIRE-003).
//!
//! Owns: the order of everything the agent writes (SDK events, outbound control requests,
//! cancellations, keepalives): frames leave in exactly the order they were pushed, proven by
//! a queue and by `&mut self`, not by locks; and the capacity that makes backpressure
//! explicit ([`Full`]).
//! Must never: lock, write, encode, validate or reorder. A frame enters as the exact bytes
//! `encode::FrameEncoder` returned and leaves unchanged.
//!
//! The frames share one buffer: a push copies the frame in, a pop hands it out as
//! [`Bytes`] without copying; in steady state neither allocates.
//!
//! ```
//! use agentx_wire::control::{Full, Outbox};
//! use agentx_wire::encode::FrameEncoder;
//! use agentx_wire::wire::OutputRecord;
//!
//! let mut encoder = FrameEncoder::new();
//! let mut outbox = Outbox::with_capacity(2, 1 << 20);
//! outbox.push(encoder.encode(&OutputRecord::KeepAlive).unwrap()).unwrap();
//! outbox.push(encoder.encode(&br#"{"type":"system","subtype":"x"}"#[..]).unwrap()).unwrap();
//! // Two frames is the capacity: the third is refused, nothing is dropped.
//! let third = encoder.encode(&OutputRecord::KeepAlive).unwrap();
//! assert_eq!(outbox.push(third), Err(Full));
//! assert_eq!(outbox.len(), 2);
//! // Push order is output order.
//! assert_eq!(&outbox.pop().unwrap()[..], b"{\"type\":\"keep_alive\"}\n");
//! assert_eq!(&outbox.pop().unwrap()[..], b"{\"type\":\"system\",\"subtype\":\"x\"}\n");
//! assert!(outbox.pop().is_none());
//! ```

use std::collections::VecDeque;
use std::fmt;

use bytes::{Bytes, BytesMut};

/// Default capacity in frames.
pub const DEFAULT_CAPACITY: usize = 4096;
/// Default capacity in bytes: 64 MiB (eight maximal 8 MiB records).
pub const DEFAULT_CAPACITY_BYTES: usize = 64 << 20;

/// The outbox is at capacity: the frame was not queued (the caller keeps it and waits for
/// the writer to drain, or fails the producer; nothing is dropped silently).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Full;

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("output queue full")
    }
}

impl std::error::Error for Full {}

/// The one ordered queue of validated frames. See the module docs.
pub struct Outbox {
    /// Queued frames, back to back.
    bytes: BytesMut,
    /// Length of each queued frame, oldest first.
    lens: VecDeque<usize>,
    max_frames: usize,
    max_bytes: usize,
}

impl Default for Outbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Outbox {
    /// An outbox holding at most [`DEFAULT_CAPACITY`] frames and [`DEFAULT_CAPACITY_BYTES`].
    pub fn new() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY, DEFAULT_CAPACITY_BYTES)
    }

    /// An outbox holding at most `max_frames` frames (at least 1) and `max_bytes` bytes. A
    /// single frame longer than `max_bytes` is still accepted into an empty outbox, so that
    /// a record within the line limit can always make progress.
    pub fn with_capacity(max_frames: usize, max_bytes: usize) -> Self {
        Outbox {
            bytes: BytesMut::new(),
            lens: VecDeque::new(),
            max_frames: max_frames.max(1),
            max_bytes,
        }
    }

    /// Appends one frame behind every frame pushed before it, or [`Full`] at capacity.
    pub fn push(&mut self, frame: &[u8]) -> Result<(), Full> {
        if !self.has_room_for(frame.len()) {
            return Err(Full);
        }
        self.bytes.extend_from_slice(frame);
        self.lens.push_back(frame.len());
        Ok(())
    }

    /// True when a frame of `len` bytes would be accepted now.
    pub fn has_room_for(&self, len: usize) -> bool {
        if self.lens.is_empty() {
            return true;
        }
        self.lens.len() < self.max_frames && self.bytes.len().saturating_add(len) <= self.max_bytes
    }

    /// Removes and returns the oldest frame.
    pub fn pop(&mut self) -> Option<Bytes> {
        let len = self.lens.pop_front()?;
        let frame = self.bytes.split_to(len).freeze();
        if self.lens.is_empty() {
            // Let the next push reclaim the whole buffer once the popped frames are dropped.
            self.bytes.clear();
        }
        Some(frame)
    }

    /// The oldest frame, without removing it.
    pub fn front(&self) -> Option<&[u8]> {
        self.lens.front().map(|&len| &self.bytes[..len])
    }

    /// Frames queued.
    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// True when no frame is queued.
    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// Bytes queued, terminators included.
    pub fn queued_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The capacity in frames.
    pub fn max_frames(&self) -> usize {
        self.max_frames
    }

    /// The capacity in bytes.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Drops every queued frame unwritten (after a latched failure: WIRE-015 says nothing
    /// follows it); returns how many were dropped.
    pub fn clear(&mut self) -> usize {
        let n = self.lens.len();
        self.lens.clear();
        self.bytes.clear();
        n
    }

    /// Removes and yields every queued frame, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = Bytes> + '_ {
        std::iter::from_fn(move || self.pop())
    }
}

impl fmt::Debug for Outbox {
    /// Counts only: frames may carry user content.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbox")
            .field("frames", &self.lens.len())
            .field("bytes", &self.bytes.len())
            .field("max_frames", &self.max_frames)
            .field("max_bytes", &self.max_bytes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_003_push_order_is_pop_order() {
        let mut o = Outbox::new();
        let frames: Vec<Vec<u8>> = (0..100)
            .map(|i| format!("{{\"i\":{i}}}\n").into_bytes())
            .collect();
        for (i, f) in frames.iter().enumerate() {
            o.push(f).unwrap();
            if i % 3 == 2 {
                // Interleaved pops keep the order too.
                let popped = o.pop().unwrap();
                assert_eq!(&popped[..], &frames[i / 3][..]);
            }
        }
        let rest: Vec<Bytes> = o.drain().collect();
        let popped = 100 / 3;
        assert_eq!(rest.len(), 100 - popped);
        for (f, expected) in rest.iter().zip(&frames[popped..]) {
            assert_eq!(&f[..], &expected[..]);
        }
        assert!(o.is_empty());
        assert_eq!(o.queued_bytes(), 0);
    }

    #[test]
    fn frame_capacity_at_its_edge() {
        let mut o = Outbox::with_capacity(3, usize::MAX);
        for _ in 0..3 {
            o.push(b"{}\n").unwrap(); // up to 3: accepted
        }
        assert_eq!(o.push(b"{}\n"), Err(Full)); // one past: refused
        assert_eq!(o.len(), 3);
        o.pop().unwrap();
        o.push(b"{}\n").unwrap();
    }

    #[test]
    fn byte_capacity_at_its_edge() {
        let mut o = Outbox::with_capacity(100, 10);
        o.push(b"1234\n").unwrap();
        o.push(b"678\n").unwrap(); // 9 bytes
        o.push(b"\n").unwrap(); // 10: at the limit
        assert_eq!(o.push(b"\n"), Err(Full)); // 11: one past
        assert_eq!(o.queued_bytes(), 10);
        assert_eq!(o.clear(), 3);
        // A single frame larger than the byte capacity still goes into an empty outbox.
        o.push(&[b'x'; 20]).unwrap();
        assert_eq!(o.push(b"\n"), Err(Full));
    }

    #[test]
    fn popped_frames_outlive_later_pushes() {
        let mut o = Outbox::new();
        o.push(b"a\n").unwrap();
        let a = o.pop().unwrap();
        o.push(b"b\n").unwrap();
        o.push(b"c\n").unwrap();
        assert_eq!(o.front(), Some(&b"b\n"[..]));
        assert_eq!(&a[..], b"a\n");
        assert_eq!(&o.pop().unwrap()[..], b"b\n");
        assert_eq!(
            format!("{o:?}"),
            "Outbox { frames: 1, bytes: 2, max_frames: 4096, max_bytes: 67108864 }"
        );
    }
}
