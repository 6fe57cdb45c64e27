//! A stored session transcript read back: the lines a resumed session may use (torn and cut
//! tails removed, PROFILE §11) and the prior context its model sees ([`context`]).
//!
//! Pure: works on bytes already read; the files themselves are `agentx-home`'s.

pub mod context;

/// The complete lines of a stored transcript, in order, without their LF.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The complete lines, in order, without their LF.
    pub lines: Vec<Vec<u8>>,
    /// Bytes of a torn last line that were ignored and cut off.
    pub torn_bytes: usize,
}

/// The first bytes of every `result` line this store writes (the session's encoder writes
/// `type` first).
const RESULT_PREFIX: &[u8] = b"{\"type\":\"result\",";

/// Splits stored bytes into complete lines. A last line without its LF is torn and ignored;
/// so are the complete lines after the last `result` line (PROFILE §11: every stored turn ends
/// with its result, so they are a turn a crash cut in the middle of its append, which must be
/// absent or whole). A line holding a NUL byte, which no record this store writes can hold
/// (JSON escapes every control byte), is the remnant of a failed append that the file system
/// zero-filled and could not cut off (btrfs over its quota: `ftruncate` fails with `EDQUOT`
/// after zeroing the rest of the page): it and everything after it are ignored like a torn
/// tail, so the session resumes at its last whole turn before it. `torn_bytes` counts
/// everything ignored.
pub fn split_transcript(bytes: &[u8]) -> Transcript {
    let mut lines = Vec::new();
    // The end (after its LF) of the last `result` line, and the number of lines up to it.
    let (mut whole_end, mut whole_lines) = (0, 0);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        let line = &bytes[start..nl];
        if memchr::memchr(0, line).is_some() {
            break;
        }
        if !line.is_empty() {
            lines.push(line.to_vec());
            if line.starts_with(RESULT_PREFIX) {
                whole_end = nl + 1;
                whole_lines = lines.len();
            }
        }
        start = nl + 1;
    }
    lines.truncate(whole_lines);
    Transcript {
        lines,
        torn_bytes: bytes.len() - whole_end,
    }
}
