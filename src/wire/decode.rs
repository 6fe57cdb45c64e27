//! The decoding and encoding machinery every record shares.
//!
//! Owns: the one-pass member walk that matches an object's members against a record's declared
//! names and rejects unknown ones where the record is closed ([`take`], WIRE-021), the
//! [`WireValue`] trait (decode one member value exactly, encode it canonically), the object
//! writer that fixes member order ([`Obj`]) and the owned-form conversion ([`IntoOwned`]); the
//! table macros built on them are in `table.rs`. Numbers convert exactly (`2.0` is not an
//! integer, PROFILE §2a). Never does I/O.

use std::borrow::Cow;

use crate::json::{self, Object, Str, Value};

use super::error::Error;
pub use super::path::Path;

/// Decoded text: borrowed from the line unless escapes forced a copy.
pub type Text<'a> = Cow<'a, str>;

/// Decoded-name equality without allocating; the common unescaped case is an inlined byte
/// compare (member names are short: a `memcmp` call costs more than the loop).
#[inline]
pub(crate) fn name_is(name: &Str<'_>, s: &str) -> bool {
    match name.as_plain() {
        Some(p) => {
            let (a, b) = (p.as_bytes(), s.as_bytes());
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
        }
        None => name.eq_str(s),
    }
}

/// The decoded text, borrowed when the string has no escapes.
#[inline]
pub(crate) fn text<'a>(s: Str<'a>) -> Text<'a> {
    match s.as_plain() {
        Some(p) => Cow::Borrowed(p),
        None => s.decode(),
    }
}

/// The member named `name`, compared with [`name_is`].
#[inline]
pub(crate) fn member<'d, 'a>(obj: Object<'d, 'a>, name: &str) -> Option<Value<'d, 'a>> {
    obj.iter().find(|(n, _)| name_is(n, name)).map(|(_, v)| v)
}

/// Whether an object is closed (unknown members rejected, naming the rule) or open.
#[derive(Clone, Copy)]
pub(crate) enum Closed {
    Yes(&'static str),
    No,
}

/// Walks `obj` once, putting the value of each member named in `names` into the slot of the
/// same index. An unknown member is an error when the object is closed (WIRE-021); duplicates
/// never reach here (json::parse rejected them, WIRE-014).
#[inline]
pub(crate) fn take<'d, 'a>(
    obj: Object<'d, 'a>,
    names: &[&'static str],
    slots: &mut [Option<Value<'d, 'a>>],
    closed: Closed,
    at: &Path<'_>,
) -> Result<(), Error> {
    // Members usually arrive in declaration order (the canonical order), so the search
    // starts after the previous match: one comparison per member in the common case.
    let n = names.len();
    let mut hint = 0;
    for (name, value) in obj.iter() {
        let mut found = None;
        let mut i = hint;
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            if names.get(i).is_some_and(|want| name_is(&name, want)) {
                found = Some(i);
                break;
            }
            i += 1;
        }
        match found {
            Some(i) => {
                if let Some(slot) = slots.get_mut(i) {
                    *slot = Some(value);
                }
                hint = i + 1;
            }
            None => {
                if let Closed::Yes(rule) = closed {
                    return Err(Error::unknown_member(at, name, rule));
                }
            }
        }
    }
    Ok(())
}

/// The value as an object, or a type error at `at`.
#[inline]
pub(crate) fn object<'d, 'a>(
    v: Value<'d, 'a>,
    at: &Path<'_>,
    rule: &'static str,
) -> Result<Object<'d, 'a>, Error> {
    v.as_object()
        .ok_or_else(|| Error::wrong_type(at, "an object", rule))
}

/// A member value the protocol defines: decoded exactly, encoded canonically.
pub trait WireValue<'a>: Sized {
    /// Decodes a value exactly as the protocol defines it; `at` names it in errors.
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error>;
    /// Appends the canonical JSON spelling to `out`.
    fn encode(&self, out: &mut Vec<u8>);
}

impl<'a> WireValue<'a> for Text<'a> {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        match v.as_str() {
            Some(s) => Ok(text(s)),
            None => Err(Error::wrong_type(at, "a string", "PROFILE §2a")),
        }
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        json::write_str(out, self);
    }
}

impl<'a> WireValue<'a> for bool {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        v.as_bool()
            .ok_or_else(|| Error::wrong_type(at, "a boolean", "PROFILE §2a"))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

/// An exact non-negative integer (PROFILE §2a: `2.0` is not an integer; out of range is an error).
#[inline]
pub(crate) fn number_u64(v: Value<'_, '_>, at: &Path<'_>) -> Result<u64, Error> {
    let n = v
        .as_number()
        .ok_or_else(|| Error::wrong_type(at, "an integer", "PROFILE §2a"))?;
    if !n.is_integer() {
        return Err(Error::wrong_type(at, "an integer", "PROFILE §2a"));
    }
    n.as_u64()
        .ok_or_else(|| Error::invalid(at, "a non-negative integer within range", "PROFILE §2a"))
}

impl<'a> WireValue<'a> for u64 {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        number_u64(v, at)
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        json::write_u64(out, *self);
    }
}

impl<'a> WireValue<'a> for i64 {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let n = v
            .as_number()
            .ok_or_else(|| Error::wrong_type(at, "an integer", "PROFILE §2a"))?;
        if !n.is_integer() {
            return Err(Error::wrong_type(at, "an integer", "PROFILE §2a"));
        }
        n.as_i64()
            .ok_or_else(|| Error::invalid(at, "an integer within range", "PROFILE §2a"))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        json::write_i64(out, *self);
    }
}

impl<'a> WireValue<'a> for f64 {
    /// Any finite JSON number (costs, utilizations). Integral values encode as integers, so a
    /// known zero cost stays `0` (WIRE-012).
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let n = v
            .as_number()
            .ok_or_else(|| Error::wrong_type(at, "a number", "PROFILE §2a"))?;
        n.as_f64()
            .ok_or_else(|| Error::invalid(at, "a finite number", "PROFILE §2a"))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        write_number(out, *self);
    }
}

/// Writes a finite float; integral values within ±2^53 as integers (`0`, not `0.0`).
/// A non-finite value (only constructible by a caller, never decoded) is written as `null`.
pub(crate) fn write_number(out: &mut Vec<u8>, v: f64) {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if v.fract() == 0.0 && v.abs() <= EXACT {
        if v == 0.0 {
            out.push(b'0');
        } else {
            json::write_i64(out, v as i64);
        }
        return;
    }
    if json::write_f64(out, v).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// `null` decodes as `None`; anything else as the inner value.
impl<'a, T: WireValue<'a>> WireValue<'a> for Option<T> {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        if v.is_null() {
            Ok(None)
        } else {
            T::decode(v, at).map(Some)
        }
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Some(v) => v.encode(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

impl<'a, T: WireValue<'a>> WireValue<'a> for Vec<T> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let arr = v
            .as_array()
            .ok_or_else(|| Error::wrong_type(at, "an array", "PROFILE §2a"))?;
        let mut items = Vec::with_capacity(arr.len());
        for (i, item) in arr.iter().enumerate() {
            items.push(T::decode(item, &at.index(i))?);
        }
        Ok(items)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.encode(out);
        }
        out.push(b']');
    }
}

/// Member decoding modes used by `wire_struct!`.
#[inline]
pub(crate) fn req<'a, T: WireValue<'a>>(
    s: Option<Value<'_, 'a>>,
    at: &Path<'_>,
    rule: &'static str,
) -> Result<T, Error> {
    match s {
        Some(v) => T::decode(v, at),
        None => Err(Error::missing(at, rule)),
    }
}

/// Optional member: absent is `None`; present decodes the inner type (so `null` is a type
/// error unless the inner type is itself nullable).
#[inline]
pub(crate) fn opt<'a, T: WireValue<'a>>(
    s: Option<Value<'_, 'a>>,
    at: &Path<'_>,
) -> Result<Option<T>, Error> {
    match s {
        Some(v) => T::decode(v, at).map(Some),
        None => Ok(None),
    }
}

/// Nullable member that may also be absent; both read as `None` and encode as `null`.
#[inline]
pub(crate) fn nul<'a, T: WireValue<'a>>(
    s: Option<Value<'_, 'a>>,
    at: &Path<'_>,
) -> Result<Option<T>, Error> {
    match s {
        Some(v) => Option::<T>::decode(v, at),
        None => Ok(None),
    }
}

/// Member with a default when absent; always encoded.
#[inline]
pub(crate) fn dflt<'a, T: WireValue<'a> + Default>(
    s: Option<Value<'_, 'a>>,
    at: &Path<'_>,
) -> Result<T, Error> {
    match s {
        Some(v) => T::decode(v, at),
        None => Ok(T::default()),
    }
}

/// Writes one object with members in a fixed order, commas placed for the caller.
pub struct Obj<'o> {
    out: &'o mut Vec<u8>,
    first: bool,
}

impl<'o> Obj<'o> {
    #[inline]
    pub fn begin(out: &'o mut Vec<u8>) -> Obj<'o> {
        out.push(b'{');
        Obj { out, first: true }
    }

    /// Writes the separator and `"name":`; `quoted` is the name with quotes and colon.
    #[inline]
    pub fn key(&mut self, quoted: &'static str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.extend_from_slice(quoted.as_bytes());
        self.out
    }

    /// Writes `"name":"value"` for a constant string value (type and subtype discriminators).
    #[inline]
    pub fn constant(&mut self, quoted_member: &'static str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.extend_from_slice(quoted_member.as_bytes());
    }

    #[inline]
    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// The owned form of a borrowed record, for records that outlive their line.
pub trait IntoOwned {
    /// The same value borrowing nothing.
    type Owned: 'static;
    /// Copies every borrowed string.
    fn into_owned(self) -> Self::Owned;
}

impl IntoOwned for Text<'_> {
    type Owned = Text<'static>;
    #[inline]
    fn into_owned(self) -> Text<'static> {
        Cow::Owned(Cow::into_owned(self))
    }
}

impl<T: IntoOwned> IntoOwned for Option<T> {
    type Owned = Option<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.map(IntoOwned::into_owned)
    }
}

impl<T: IntoOwned> IntoOwned for Vec<T> {
    type Owned = Vec<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        self.into_iter().map(IntoOwned::into_owned).collect()
    }
}

impl<T: IntoOwned> IntoOwned for Box<T> {
    type Owned = Box<T::Owned>;
    fn into_owned(self) -> Self::Owned {
        Box::new((*self).into_owned())
    }
}
