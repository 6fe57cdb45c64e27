//! PROFILE §2b: a line the JSON layer rejected for a duplicate member is classified by its
//! top-level `type`, read from the rejected line itself.
//!
//! Owns [`classify_rejected_line`]: a tolerant, allocation-light walk of the top-level
//! object's members (strings skipped by their escapes, nested values skipped by depth) that
//! collects every top-level `type` string, names and values compared after unescaping. It
//! does not trust the duplicate: when `type` itself occurs more than once, any occurrence of
//! `"attachment_import"` makes the line an import (the fatal reading wins, WIRE-021).
//! Must never: panic or loop on any bytes, or accept the line: it only says how to report it.

use crate::json::escape;

/// How a line rejected for a duplicate member is reported (PROFILE §2b).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RejectedLineClass {
    /// `"type":"attachment_import"`: an import-schema error, fatal (WIRE-021).
    Import,
    /// `"type":"user"`: a record-level input error (an input-error result, PROFILE §8).
    User,
    /// Any other (or no readable) `type`: record-level.
    Other,
}

/// Classifies a line rejected for a duplicate member by its top-level `type` (PROFILE §2b).
pub fn classify_rejected_line(line: &[u8]) -> RejectedLineClass {
    let mut class = RejectedLineClass::Other;
    let mut walk = Walk { b: line, i: 0 };
    walk.ws();
    if !walk.eat(b'{') {
        return class;
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        walk.ws();
        let Some(raw_name) = walk.string() else {
            return class;
        };
        walk.ws();
        if !walk.eat(b':') {
            return class;
        }
        walk.ws();
        name.clear();
        let is_type = escape::decode_body(raw_name, &mut name) && name == b"type";
        if walk.peek() == Some(b'"') {
            let Some(raw_value) = walk.string() else {
                return class;
            };
            value.clear();
            if is_type && escape::decode_body(raw_value, &mut value) {
                match value.as_slice() {
                    b"attachment_import" => return RejectedLineClass::Import,
                    b"user" => class = RejectedLineClass::User,
                    _ => {}
                }
            }
        } else if !walk.skip_value() {
            return class;
        }
        walk.ws();
        if !walk.eat(b',') {
            return class;
        }
    }
}

struct Walk<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Walk<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// A string at the cursor: its raw body (escapes as written); `None` when there is no
    /// string here or it is unterminated.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.i;
        loop {
            match self.peek()? {
                b'"' => {
                    let body = self.b.get(start..self.i)?;
                    self.i += 1;
                    return Some(body);
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
    }

    /// Skips one non-string value (a scalar, or an array/object with everything inside it);
    /// false at the end of the input or on a stray closing bracket.
    fn skip_value(&mut self) -> bool {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return false,
                Some(b'"') => {
                    if self.string().is_none() {
                        return false;
                    }
                    if depth == 0 {
                        return true;
                    }
                }
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.i += 1;
                }
                Some(b'}' | b']') if depth == 0 => return true,
                Some(b'}' | b']') => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        return true;
                    }
                }
                Some(b',') if depth == 0 => return true,
                Some(_) => self.i += 1,
            }
        }
    }
}
