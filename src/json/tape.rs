//! The parsed document: a flat tape of nodes over the borrowed input, and the borrowed views
//! (`Value`, `Object`, `Array`, `Str`, `Number`) that read it.
//!
//! Owns the node layout and navigation. Strings and numbers are never copied here: a `Str` is
//! a slice of the input between the quotes, decoded only when asked ([`Str::decode`]); escapes
//! were validated by the parser, so decoding cannot fail. This module never parses.

use std::borrow::Cow;

use super::unescape;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Tag {
    Null,
    False,
    True,
    Number,
    String,
    Array,
    Object,
}

/// One tape entry. Offsets index the input; `next` is the tape index after a container's
/// last descendant, so a whole subtree is skipped in O(1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) tag: Tag,
    /// String: has escapes. Number: is an integer lexeme (no fraction, no exponent).
    pub(crate) flag: bool,
    /// String: first byte after the opening quote; others: first byte of the value.
    pub(crate) start: u32,
    /// String: the closing quote; others: one past the last byte.
    pub(crate) end: u32,
    /// Containers: number of elements or members.
    pub(crate) count: u32,
    /// Containers: tape index after the subtree.
    pub(crate) next: u32,
}

impl Node {
    #[inline]
    pub(crate) fn scalar(tag: Tag, flag: bool, start: usize, end: usize) -> Node {
        Node {
            tag,
            flag,
            start: start as u32,
            end: end as u32,
            count: 0,
            next: 0,
        }
    }
}

/// The JSON kinds a [`Value`] can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A parsed document that owns its tape (see [`super::parse`]). [`super::Parser`] lends its
/// reused tape instead.
pub struct Document<'a> {
    pub(crate) input: &'a str,
    pub(crate) tape: Vec<Node>,
}

impl<'a> Document<'a> {
    /// The document's top-level value.
    pub fn root(&self) -> Value<'_, 'a> {
        Value {
            tape: &self.tape,
            input: self.input,
            idx: 0,
        }
    }
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("nodes", &self.tape.len())
            .finish_non_exhaustive()
    }
}

/// A borrowed view of one JSON value. `'d` borrows the tape, `'a` the input bytes.
#[derive(Clone, Copy)]
pub struct Value<'d, 'a> {
    pub(crate) tape: &'d [Node],
    pub(crate) input: &'a str,
    pub(crate) idx: usize,
}

impl std::fmt::Debug for Value<'_, '_> {
    /// Shows the kind only: values may hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Value")
            .field("kind", &self.kind())
            .finish_non_exhaustive()
    }
}

impl<'d, 'a> Value<'d, 'a> {
    #[inline]
    fn node(&self) -> Node {
        // The tape is built by the parser with in-bounds indices; an out-of-range index can
        // only come from a bug, and then reads as null rather than panicking.
        self.tape
            .get(self.idx)
            .copied()
            .unwrap_or(Node::scalar(Tag::Null, false, 0, 0))
    }

    #[inline]
    fn slice(&self, start: u32, end: u32) -> &'a str {
        self.input.get(start as usize..end as usize).unwrap_or("")
    }

    /// The value's JSON kind.
    pub fn kind(&self) -> Kind {
        match self.node().tag {
            Tag::Null => Kind::Null,
            Tag::False | Tag::True => Kind::Bool,
            Tag::Number => Kind::Number,
            Tag::String => Kind::String,
            Tag::Array => Kind::Array,
            Tag::Object => Kind::Object,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        self.node().tag == Tag::Null
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.node().tag {
            Tag::True => Some(true),
            Tag::False => Some(false),
            _ => None,
        }
    }

    /// The string, if this is one (still escaped: see [`Str::decode`]).
    #[inline]
    pub fn as_str(&self) -> Option<Str<'a>> {
        let n = self.node();
        (n.tag == Tag::String).then(|| Str {
            raw: self.slice(n.start, n.end),
            escaped: n.flag,
        })
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<Number<'a>> {
        let n = self.node();
        (n.tag == Tag::Number).then(|| Number {
            lexeme: self.slice(n.start, n.end),
            integer: n.flag,
        })
    }

    /// The object, if this is one.
    #[inline]
    pub fn as_object(&self) -> Option<Object<'d, 'a>> {
        let n = self.node();
        (n.tag == Tag::Object).then_some(Object {
            value: *self,
            len: n.count as usize,
        })
    }

    /// The array, if this is one.
    #[inline]
    pub fn as_array(&self) -> Option<Array<'d, 'a>> {
        let n = self.node();
        (n.tag == Tag::Array).then_some(Array {
            value: *self,
            len: n.count as usize,
        })
    }

    /// The exact input bytes of this value, quotes and brackets included.
    pub fn raw(&self) -> &'a [u8] {
        let n = self.node();
        match n.tag {
            Tag::String => self.slice(n.start.saturating_sub(1), n.end + 1).as_bytes(),
            _ => self.slice(n.start, n.end).as_bytes(),
        }
    }

    /// Tape index of the value after this one (skipping the whole subtree).
    #[inline]
    fn after(&self) -> usize {
        let n = self.node();
        match n.tag {
            Tag::Array | Tag::Object => n.next as usize,
            _ => self.idx + 1,
        }
    }

    #[inline]
    fn at(&self, idx: usize) -> Value<'d, 'a> {
        Value {
            tape: self.tape,
            input: self.input,
            idx,
        }
    }
}

/// A borrowed JSON object: members in document order, names unique (the parser rejected
/// duplicates).
#[derive(Clone, Copy, Debug)]
pub struct Object<'d, 'a> {
    value: Value<'d, 'a>,
    len: usize,
}

impl<'d, 'a> Object<'d, 'a> {
    /// The number of members.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The members in document order.
    pub fn iter(&self) -> Members<'d, 'a> {
        Members {
            next: self.value.at(self.value.idx + 1),
            left: self.len,
        }
    }

    /// The member whose decoded name is `name`.
    pub fn get(&self, name: &str) -> Option<Value<'d, 'a>> {
        self.iter().find(|(k, _)| k.eq_str(name)).map(|(_, v)| v)
    }

    /// The position of the first member whose decoded name is none of `allowed`, or `None`
    /// when every member is allowed: the one check of a closed object (PROFILE §3), which
    /// each caller turns into its own diagnostic.
    pub fn unknown_member(&self, allowed: &[&str]) -> Option<usize> {
        self.iter()
            .position(|(k, _)| !allowed.iter().any(|a| k.eq_str(a)))
    }

    /// This object as a [`Value`].
    pub fn as_value(&self) -> Value<'d, 'a> {
        self.value
    }
}

/// Iterator over an object's `(name, value)` pairs.
pub struct Members<'d, 'a> {
    next: Value<'d, 'a>,
    left: usize,
}

impl<'d, 'a> Iterator for Members<'d, 'a> {
    type Item = (Str<'a>, Value<'d, 'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = self.next.as_str()?;
        let value = self.next.at(self.next.idx + 1);
        self.next = value.at(value.after());
        Some((key, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A borrowed JSON array.
#[derive(Clone, Copy, Debug)]
pub struct Array<'d, 'a> {
    value: Value<'d, 'a>,
    len: usize,
}

impl<'d, 'a> Array<'d, 'a> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements in order.
    pub fn iter(&self) -> Elements<'d, 'a> {
        Elements {
            next: self.value.at(self.value.idx + 1),
            left: self.len,
        }
    }

    /// The element at `i`, if any.
    pub fn get(&self, i: usize) -> Option<Value<'d, 'a>> {
        self.iter().nth(i)
    }

    /// The array as a value.
    pub fn as_value(&self) -> Value<'d, 'a> {
        self.value
    }
}

/// Iterator over an array's elements.
pub struct Elements<'d, 'a> {
    next: Value<'d, 'a>,
    left: usize,
}

impl<'d, 'a> Iterator for Elements<'d, 'a> {
    type Item = Value<'d, 'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let v = self.next;
        self.next = v.at(v.after());
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// A JSON string as written in the input (between the quotes), with validated escapes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Str<'a> {
    raw: &'a str,
    escaped: bool,
}

impl std::fmt::Debug for Str<'_> {
    /// Shows the length only: strings may be credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Str")
            .field("raw_len", &self.raw.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Str<'a> {
    /// The bytes between the quotes, escapes as written.
    pub fn raw(&self) -> &'a [u8] {
        self.raw.as_bytes()
    }

    /// The raw text when it has no escapes (then it *is* the decoded value).
    pub fn as_plain(&self) -> Option<&'a str> {
        (!self.escaped).then_some(self.raw)
    }

    /// Whether the raw text contains a backslash escape.
    pub fn has_escapes(&self) -> bool {
        self.escaped
    }

    /// The decoded value: borrowed from the input when there are no escapes.
    pub fn decode(&self) -> Cow<'a, str> {
        if !self.escaped {
            return Cow::Borrowed(self.raw);
        }
        let mut s = String::with_capacity(self.raw.len());
        unescape::decode_into_string(self.raw, &mut s);
        Cow::Owned(s)
    }

    /// Appends the decoded UTF-8 bytes to `out`.
    pub fn decode_into(&self, out: &mut Vec<u8>) {
        if self.escaped {
            unescape::decode_into(self.raw.as_bytes(), out);
        } else {
            out.extend_from_slice(self.raw.as_bytes());
        }
    }

    /// Decoded equality with `s`, without allocating.
    #[inline]
    pub fn eq_str(&self, s: &str) -> bool {
        if self.escaped {
            unescape::decoded_eq(self.raw.as_bytes(), s.as_bytes())
        } else {
            self.raw == s
        }
    }
}

/// A JSON number, kept as its validated lexeme; conversions are exact or refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Number<'a> {
    lexeme: &'a str,
    integer: bool,
}

impl<'a> Number<'a> {
    /// The number exactly as written.
    pub fn lexeme(&self) -> &'a str {
        self.lexeme
    }

    /// No fraction and no exponent (`2.0` and `2e0` are not integers: PROFILE §2a).
    pub fn is_integer(&self) -> bool {
        self.integer
    }

    /// The value as `u64`, if it is an integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        if !self.integer {
            return None;
        }
        self.lexeme.parse().ok()
    }

    /// The value as `i64`, if it is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        if !self.integer {
            return None;
        }
        self.lexeme.parse().ok()
    }

    /// The nearest `f64`, refused when it overflows to infinity.
    pub fn as_f64(&self) -> Option<f64> {
        self.lexeme.parse::<f64>().ok().filter(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unknown_member_is_the_first_name_outside_the_allowed_set() {
        let doc = crate::json::parse(br#"{"a":1,"\u0062":2,"c":3}"#).expect("valid");
        let obj = doc.root().as_object().expect("object");
        assert_eq!(obj.unknown_member(&["a", "b", "c"]), None);
        // Names compare decoded: "\u0062" is "b".
        assert_eq!(obj.unknown_member(&["a", "b"]), Some(2));
        assert_eq!(obj.unknown_member(&["c"]), Some(0));
        assert_eq!(obj.unknown_member(&[]), Some(0));
        let empty = crate::json::parse(b"{}").expect("valid");
        let empty = empty.root().as_object().expect("object");
        assert_eq!(empty.unknown_member(&[]), None);
    }
}
