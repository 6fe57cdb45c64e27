//! The table macros of STYLE #4: one declaration per record or enumeration generates its
//! struct or enum, its decoder, its encoder (member order = declaration order, the documented
//! canonical order) and its owned form. The machinery they expand to (member walk, member
//! modes, object writer) is in `decode.rs`. Never does I/O.

/// `IntoOwned` for types that borrow nothing.
macro_rules! owned_as_is {
    ($($t:ty),*) => {$(
        impl $crate::wire::decode::IntoOwned for $t {
            type Owned = $t;
            #[inline]
            fn into_owned(self) -> $t { self }
        }
    )*};
}
pub(crate) use owned_as_is;

owned_as_is!(bool, u64, i64, f64);

/// Declares a record or payload object once and generates its struct, its member decoder
/// (`decode_members`, over an already-typed object), its member encoder (`encode_members`,
/// in declaration order, which is the documented canonical order), a [`WireValue`] impl
/// and `into_owned`.
///
/// Member modes: `req` required; `opt` optional (omitted when `None`); `nul` nullable and
/// tolerated when absent (always written, `null` for `None`); `dflt` defaulted when absent
/// (always written). `skip` names members the caller consumed (`type`, `subtype`).
macro_rules! wire_struct {
    (
        $(#[$m:meta])*
        pub struct $name:ident<$lt:lifetime> {
            closed: $closed:expr,
            rule: $rule:literal,
            skip: [$($skip:literal),*],
            $( $(#[$fm:meta])* $field:ident : $ty:ty = $key:literal => $mode:ident ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name<$lt> {
            $( $(#[$fm])* #[doc = concat!("\n\nOn the wire: `", $key, "` (", $crate::wire::table::wire_struct!(@mode $mode), ").")] pub $field: $ty, )*
        }

        impl<$lt> $name<$lt> {
            /// Decodes the members of an object already known to be this record.
            #[allow(unused_variables, unused_mut, clippy::redundant_closure_call)]
            pub(crate) fn decode_members(
                obj: $crate::json::Object<'_, $lt>,
                at: &$crate::wire::decode::Path<'_>,
            ) -> Result<Self, $crate::wire::Error> {
                const NAMES: &[&str] = &[$($skip,)* $($key,)*];
                const N: usize = [$($skip,)* $($key,)*].len();
                const SKIP: usize = <[&str]>::len(&[$($skip,)*]);
                let mut slots: [Option<$crate::json::Value<'_, $lt>>; N] = [None; N];
                $crate::wire::decode::take(obj, NAMES, &mut slots, $closed, at)?;
                let mut it = slots.into_iter().skip(SKIP);
                Ok($name {
                    $( $field: {
                        let s = it.next().flatten();
                        $crate::wire::table::wire_struct!(@decode $mode, s, &at.key($key), $rule)?
                    }, )*
                })
            }

            /// Encodes the members in declaration order.
            #[allow(unused_variables)]
            pub(crate) fn encode_members(&self, w: &mut $crate::wire::decode::Obj<'_>) {
                $( $crate::wire::table::wire_struct!(@encode $mode, w, self.$field, concat!("\"", $key, "\":")); )*
            }

            /// The owned form, for a record that must outlive its line.
            pub fn into_owned(self) -> $name<'static> {
                $name { $( $field: $crate::wire::decode::IntoOwned::into_owned(self.$field), )* }
            }
        }

        impl<$lt> $crate::wire::decode::IntoOwned for $name<$lt> {
            type Owned = $name<'static>;
            fn into_owned(self) -> $name<'static> {
                $name::into_owned(self)
            }
        }

        impl<$lt> $crate::wire::decode::WireValue<$lt> for $name<$lt> {
            fn decode(
                v: $crate::json::Value<'_, $lt>,
                at: &$crate::wire::decode::Path<'_>,
            ) -> Result<Self, $crate::wire::Error> {
                let obj = $crate::wire::decode::object(v, at, $rule)?;
                Self::decode_members(obj, at)
            }
            fn encode(&self, out: &mut Vec<u8>) {
                let mut w = $crate::wire::decode::Obj::begin(out);
                self.encode_members(&mut w);
                w.end();
            }
        }
    };
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            closed: $closed:expr,
            rule: $rule:literal,
            skip: [$($skip:literal),*],
            $( $(#[$fm:meta])* $field:ident : $ty:ty = $key:literal => $mode:ident ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $( $(#[$fm])* #[doc = concat!("\n\nOn the wire: `", $key, "` (", $crate::wire::table::wire_struct!(@mode $mode), ").")] pub $field: $ty, )*
        }

        impl $name {
            /// Decodes the members of an object already known to be this record.
            #[allow(unused_variables, unused_mut)]
            pub(crate) fn decode_members<'a>(
                obj: $crate::json::Object<'_, 'a>,
                at: &$crate::wire::decode::Path<'_>,
            ) -> Result<Self, $crate::wire::Error> {
                const NAMES: &[&str] = &[$($skip,)* $($key,)*];
                const N: usize = [$($skip,)* $($key,)*].len();
                const SKIP: usize = <[&str]>::len(&[$($skip,)*]);
                let mut slots: [Option<$crate::json::Value<'_, 'a>>; N] = [None; N];
                $crate::wire::decode::take(obj, NAMES, &mut slots, $closed, at)?;
                let mut it = slots.into_iter().skip(SKIP);
                Ok($name {
                    $( $field: {
                        let s = it.next().flatten();
                        $crate::wire::table::wire_struct!(@decode $mode, s, &at.key($key), $rule)?
                    }, )*
                })
            }

            /// Encodes the members in declaration order.
            #[allow(unused_variables)]
            pub(crate) fn encode_members(&self, w: &mut $crate::wire::decode::Obj<'_>) {
                $( $crate::wire::table::wire_struct!(@encode $mode, w, self.$field, concat!("\"", $key, "\":")); )*
            }
        }

        $crate::wire::table::owned_as_is!($name);

        impl<'a> $crate::wire::decode::WireValue<'a> for $name {
            fn decode(
                v: $crate::json::Value<'_, 'a>,
                at: &$crate::wire::decode::Path<'_>,
            ) -> Result<Self, $crate::wire::Error> {
                let obj = $crate::wire::decode::object(v, at, $rule)?;
                Self::decode_members(obj, at)
            }
            fn encode(&self, out: &mut Vec<u8>) {
                let mut w = $crate::wire::decode::Obj::begin(out);
                self.encode_members(&mut w);
                w.end();
            }
        }
    };
    (@mode req) => { "required" };
    (@mode opt) => { "optional, omitted when `None`" };
    (@mode nul) => { "nullable, `null` when absent" };
    (@mode dflt) => { "defaulted when absent" };
    (@decode req, $s:expr, $at:expr, $rule:literal) => { $crate::wire::decode::req($s, $at, $rule) };
    (@decode opt, $s:expr, $at:expr, $rule:literal) => { $crate::wire::decode::opt($s, $at) };
    (@decode nul, $s:expr, $at:expr, $rule:literal) => { $crate::wire::decode::nul($s, $at) };
    (@decode dflt, $s:expr, $at:expr, $rule:literal) => { $crate::wire::decode::dflt($s, $at) };
    (@encode req, $w:ident, $v:expr, $k:expr) => {
        $crate::wire::decode::WireValue::encode(&$v, $w.key($k))
    };
    (@encode nul, $w:ident, $v:expr, $k:expr) => {
        $crate::wire::decode::WireValue::encode(&$v, $w.key($k))
    };
    (@encode dflt, $w:ident, $v:expr, $k:expr) => {
        $crate::wire::decode::WireValue::encode(&$v, $w.key($k))
    };
    (@encode opt, $w:ident, $v:expr, $k:expr) => {
        if let Some(v) = &$v {
            $crate::wire::decode::WireValue::encode(v, $w.key($k))
        }
    };
}
pub(crate) use wire_struct;

/// Declares a closed string enumeration once: the enum, `as_str`, `from_name` and its
/// [`WireValue`] impl (an unknown spelling is [`ErrorKind::Invalid`](super::ErrorKind)).
macro_rules! wire_enum {
    (
        $(#[$m:meta])*
        pub enum $name:ident : $expected:literal, $rule:literal {
            $( $(#[$vm:meta])* $variant:ident = $text:literal ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $( $(#[$vm])* #[doc = concat!("\n\nOn the wire: `\"", $text, "\"`.")] $variant, )* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $( $name::$variant => $text, )* }
            }

            /// The value with this exact wire spelling, if any (no escape decoding).
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $( $text => Some($name::$variant), )* _ => None }
            }
        }

        impl<'a> $crate::wire::decode::WireValue<'a> for $name {
            fn decode(
                v: $crate::json::Value<'_, 'a>,
                at: &$crate::wire::decode::Path<'_>,
            ) -> Result<Self, $crate::wire::Error> {
                let s = v.as_str().ok_or_else(|| $crate::wire::Error::wrong_type(at, "a string", $rule))?;
                $( if $crate::wire::decode::name_is(&s, $text) { return Ok($name::$variant); } )*
                Err($crate::wire::Error::invalid(at, $expected, $rule))
            }
            fn encode(&self, out: &mut Vec<u8>) {
                $crate::json::write_str(out, self.as_str());
            }
        }

        $crate::wire::table::owned_as_is!($name);
    };
}
pub(crate) use wire_enum;
