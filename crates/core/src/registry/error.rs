//! The provider registry's one error type.
//!
//! Owns: every diagnostic of the registry, the catalog, selection and the resume binding, as
//! a JSON path plus a fixed rule (PROFILE §3: "Diagnostics name the JSON path and the rule
//! broken, never a value").
//!
//! Must never: hold or print a value read from `auth.json` or the environment. Everything an
//! [`Error`] carries is built from static texts, indices and provider ids; ids are printed
//! only by selection errors, which run after the collision rule proved that no id contains
//! credential material. An unknown member is named by its position, not its name (a name
//! is input too).

use std::fmt;

use agentx_wire::json;

/// Where in `auth.json` a rule was broken: `providers[1].reasoning.default_effort`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum At {
    /// The document itself.
    Root,
    /// A member of the top-level object.
    Top(&'static str),
    /// `providers[i]`.
    Provider(usize),
    /// `providers[i].name`.
    Field(usize, &'static str),
    /// `providers[i].reasoning.name`.
    Reasoning(usize, &'static str),
    /// `providers[i].reasoning.efforts[j]`.
    Effort(usize, usize),
    /// `providers[i].pricing.name` (PROFILE §19).
    Pricing(usize, &'static str),
    /// `providers[i].pricing.<member>`: a member `pricing` does not define, named by its path
    /// (PROFILE §19) because [`MemberName`] admits only plain lowercase identifiers.
    PricingMember(usize, MemberName),
}

/// A member name short and plain enough to print in a path: 1 to 32 bytes of `[a-z0-9_]`,
/// starting with a letter. Anything else (a pasted key, an escape) is named by position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct MemberName {
    bytes: [u8; 32],
    len: u8,
}

impl MemberName {
    /// The name of raw member text (escapes as written), when it is plain enough.
    pub(crate) fn of(raw: &[u8]) -> Option<MemberName> {
        let plain = !raw.is_empty()
            && raw.len() <= 32
            && raw[0].is_ascii_lowercase()
            && raw
                .iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_');
        if !plain {
            return None;
        }
        let mut bytes = [0u8; 32];
        bytes[..raw.len()].copy_from_slice(raw);
        Some(MemberName {
            bytes,
            len: raw.len() as u8,
        })
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        // Only ASCII was admitted.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl fmt::Debug for MemberName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl At {
    /// The rendered path; `(top level)` for the document itself.
    pub fn render(&self) -> String {
        match *self {
            At::Root => "(top level)".to_string(),
            At::Top(name) => name.to_string(),
            At::Provider(i) => format!("providers[{i}]"),
            At::Field(i, name) => format!("providers[{i}].{name}"),
            At::Reasoning(i, name) => format!("providers[{i}].reasoning.{name}"),
            At::Effort(i, j) => format!("providers[{i}].reasoning.efforts[{j}]"),
            At::Pricing(i, name) => format!("providers[{i}].pricing.{name}"),
            At::PricingMember(i, name) => format!("providers[{i}].pricing.{}", name.as_str()),
        }
    }
}

/// The rule a registry broke. Each has a stable [`Rule::code`] and a fixed message.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Rule {
    /// The bytes are not one strict JSON document (PROFILE §2a; duplicates: WIRE-014).
    Json(json::Error),
    /// `auth.json` is larger than [`MAX_AUTH_JSON_LEN`](super::MAX_AUTH_JSON_LEN).
    FileTooLarge {
        /// The limit in bytes.
        max: usize,
    },
    /// A value of the wrong JSON type.
    WrongType {
        /// The JSON type the rule wants.
        expected: &'static str,
    },
    /// A required member is absent.
    Missing,
    /// A member the closed object does not define; `position` counts members from 1.
    UnknownMember {
        /// The member's position, from 1.
        position: usize,
    },
    /// `version` is not the integer 2 (`2.0` is not an integer, PROFILE §2a).
    Version,
    /// `providers` is empty.
    NoProviders,
    /// More providers than [`MAX_PROVIDERS`](super::MAX_PROVIDERS).
    TooManyProviders {
        /// The limit.
        max: usize,
    },
    /// `id` outside `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
    IdGrammar,
    /// `id` equal to the id of `providers[first]`.
    DuplicateId {
        /// The index of the provider with that id.
        first: usize,
    },
    /// An empty string where the rule wants a nonempty one.
    Empty,
    /// A string longer than `max` bytes.
    TooLong {
        /// The limit in bytes.
        max: usize,
    },
    /// A control character in a string printed on one text line.
    ControlCharacter,
    /// A second `default: true`; `providers[first]` is already the default.
    SecondDefault {
        /// The index of the default provider.
        first: usize,
    },
    /// `type` outside the closed set.
    UnknownType,
    /// More efforts than [`MAX_EFFORTS`](super::MAX_EFFORTS).
    TooManyEfforts {
        /// The limit.
        max: usize,
    },
    /// An effort equal to `efforts[first]`.
    DuplicateEffort {
        /// The index of the equal effort.
        first: usize,
    },
    /// `default_effort` not among `efforts`.
    DefaultEffortNotMember,
    /// `default_effort` given while `efforts` is absent or empty.
    DefaultEffortWithoutEfforts,
    /// `efforts` nonempty but no `default_effort`.
    DefaultEffortMissing,
    /// Both `api_key` and `api_key_env`.
    BothKeys,
    /// Neither `api_key` nor `api_key_env`.
    NoKey,
    /// `api_key_env` is not an environment-variable name.
    EnvName,
    /// The variable `api_key_env` names is unset or empty.
    EnvUnset,
    /// An `endpoint` / `base_url` with plain `http://` to a non-loopback host (PROFILE §14).
    PlainHttp,
    /// An integer outside `min..=max` (PROFILE §19 `context_window`).
    OutOfRange {
        /// The smallest value accepted.
        min: u64,
        /// The largest value accepted.
        max: u64,
    },
    /// A price that is negative or not finite (PROFILE §19).
    Price,
    /// `pricing` on a provider type that has no prices (PROFILE §19: `openai`, `azure_openai`).
    PricingNotForType,
    /// A member the closed object does not define, named by the path (PROFILE §19).
    NotAllowed,
}

impl Rule {
    /// A stable short code, for tests and tools.
    pub fn code(&self) -> &'static str {
        match self {
            Rule::Json(e) => e.kind().check_kind(),
            Rule::FileTooLarge { .. } => "file_too_large",
            Rule::WrongType { .. } => "wrong_type",
            Rule::Missing => "missing",
            Rule::UnknownMember { .. } => "unknown_member",
            Rule::Version => "version",
            Rule::NoProviders => "no_providers",
            Rule::TooManyProviders { .. } => "too_many_providers",
            Rule::IdGrammar => "id_grammar",
            Rule::DuplicateId { .. } => "duplicate_id",
            Rule::Empty => "empty",
            Rule::TooLong { .. } => "too_long",
            Rule::ControlCharacter => "control_character",
            Rule::SecondDefault { .. } => "second_default",
            Rule::UnknownType => "unknown_type",
            Rule::TooManyEfforts { .. } => "too_many_efforts",
            Rule::DuplicateEffort { .. } => "duplicate_effort",
            Rule::DefaultEffortNotMember => "default_effort_not_member",
            Rule::DefaultEffortWithoutEfforts => "default_effort_without_efforts",
            Rule::DefaultEffortMissing => "default_effort_missing",
            Rule::BothKeys => "both_keys",
            Rule::NoKey => "no_key",
            Rule::EnvName => "env_name",
            Rule::EnvUnset => "env_unset",
            Rule::PlainHttp => "plain_http",
            Rule::OutOfRange { .. } => "out_of_range",
            Rule::Price => "price",
            Rule::PricingNotForType => "pricing_not_for_type",
            Rule::NotAllowed => "unknown_member",
        }
    }

    fn describe(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The json layer's texts are fixed (PROFILE §5) and never echo input.
            Rule::Json(e) => write!(f, "{e} at byte {}", e.offset()),
            Rule::FileTooLarge { max } => write!(f, "larger than {max} bytes"),
            Rule::WrongType { expected } => write!(f, "must be {expected}"),
            Rule::Missing => f.write_str("required member is missing"),
            Rule::UnknownMember { position } => {
                write!(f, "member #{position} is not allowed here (closed object)")
            }
            Rule::Version => f.write_str("must be the integer 2"),
            Rule::NoProviders => f.write_str("must be a nonempty array"),
            Rule::TooManyProviders { max } => write!(f, "must hold at most {max} providers"),
            Rule::IdGrammar => f.write_str("must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}"),
            Rule::DuplicateId { first } => {
                write!(f, "must be unique (equals providers[{first}].id)")
            }
            Rule::Empty => f.write_str("must be nonempty"),
            Rule::TooLong { max } => write!(f, "must be at most {max} bytes"),
            Rule::ControlCharacter => {
                f.write_str("must not contain control characters or line separators")
            }
            Rule::SecondDefault { first } => write!(
                f,
                "at most one provider may be default: true (providers[{first}] already is)"
            ),
            Rule::UnknownType => f.write_str("must be one of azure_openai, openai, scripted"),
            Rule::TooManyEfforts { max } => write!(f, "must hold at most {max} efforts"),
            Rule::DuplicateEffort { first } => {
                write!(f, "must be unique (equals efforts[{first}])")
            }
            Rule::DefaultEffortNotMember => f.write_str("must be a member of efforts"),
            Rule::DefaultEffortWithoutEfforts => {
                f.write_str("must be absent when efforts is absent or empty")
            }
            Rule::DefaultEffortMissing => f.write_str("is required when efforts is nonempty"),
            Rule::BothKeys => {
                f.write_str("must have exactly one of api_key or api_key_env, not both")
            }
            Rule::NoKey => f.write_str("must have exactly one of api_key or api_key_env"),
            Rule::EnvName => {
                f.write_str("must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
            }
            Rule::EnvUnset => f.write_str("names an environment variable that is unset or empty"),
            Rule::PlainHttp => f.write_str(
                "must use https:// (plain http:// only to 127.0.0.1, localhost or [::1])",
            ),
            Rule::OutOfRange { min, max } => {
                write!(f, "must be an integer from {min} to {max}")
            }
            Rule::Price => f.write_str("must be a finite number >= 0"),
            Rule::PricingNotForType => {
                f.write_str("is declared only for openai and azure_openai providers")
            }
            Rule::NotAllowed => f.write_str("is not allowed here (closed object)"),
        }
    }

    fn reference(&self) -> &'static str {
        match self {
            Rule::Json(e) if e.is_duplicate_member() => "WIRE-014",
            Rule::Json(_) => "PROFILE §2a",
            Rule::PlainHttp => "PROFILE §14",
            Rule::OutOfRange { .. } | Rule::Price | Rule::PricingNotForType | Rule::NotAllowed => {
                "PROFILE §19"
            }
            _ => "PROFILE §3",
        }
    }
}

/// Which step failed, classifiable without formatting.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Neither `AGENTX_HOME` nor `HOME` names a home directory.
    Home,
    /// `auth.json` exists but could not be read (reported by the binary).
    Unreadable,
    /// `auth.json` broke a rule of PROFILE §3 ([`Error::rule`], [`Error::path`]).
    Registry,
    /// A public string contains credential material (PROFILE §3, WIRE-024).
    Collision,
    /// The credential union could not be built (too many or too long values).
    CredentialUnion,
    /// The final encoded bytes contain credential material across the framing (WIRE-026).
    Framing,
    /// `--provider` names no configured provider.
    UnknownProvider,
    /// No `--provider`, no declared default and more than one provider.
    NoSelection,
    /// A resumed session was recorded with another provider binding (WIRE-025).
    BindingMismatch,
    /// A recorded binding is not a well-formed binding record.
    BindingRecord,
}

/// The registry's error: a kind plus, depending on it, a path and a rule, the names of
/// two colliding fields, the available ids, or the differing binding component.
pub struct Error {
    repr: Box<Repr>,
}

enum Repr {
    Home,
    Unreadable { why: Option<String> },
    Registry { at: At, rule: Rule },
    Collision { public: String, private: String },
    CredentialUnion,
    Framing,
    UnknownProvider { available: Vec<String> },
    NoSelection { available: Vec<String> },
    BindingMismatch { component: &'static str },
    BindingRecord,
}

impl Error {
    #[cold]
    pub(crate) fn registry(at: At, rule: Rule) -> Error {
        Error::new(Repr::Registry { at, rule })
    }
    #[cold]
    pub(crate) fn collision(public: String, private: String) -> Error {
        Error::new(Repr::Collision { public, private })
    }
    #[cold]
    pub(crate) fn unknown_provider(available: Vec<String>) -> Error {
        Error::new(Repr::UnknownProvider { available })
    }
    #[cold]
    pub(crate) fn no_selection(available: Vec<String>) -> Error {
        Error::new(Repr::NoSelection { available })
    }
    #[cold]
    pub(crate) fn binding_mismatch(component: &'static str) -> Error {
        Error::new(Repr::BindingMismatch { component })
    }
    #[cold]
    pub(crate) fn simple(kind: ErrorKind) -> Error {
        Error::new(match kind {
            ErrorKind::Home => Repr::Home,
            ErrorKind::Unreadable => Repr::Unreadable { why: None },
            ErrorKind::CredentialUnion => Repr::CredentialUnion,
            ErrorKind::BindingRecord => Repr::BindingRecord,
            _ => Repr::Framing,
        })
    }

    /// `auth.json` exists but reading it failed (for the binary, which does the reading).
    #[cold]
    pub fn unreadable() -> Error {
        Error::new(Repr::Unreadable { why: None })
    }

    /// [`Error::unreadable`] with the reason (`Repr::Unreadable::why`), the errno text of the
    /// failed open or read
    /// (`Is a directory`, `Not a directory` when the home is a file, `Permission denied`):
    /// the caller passes text without a path (`store::errno_text`).
    #[cold]
    pub fn unreadable_because(why: String) -> Error {
        Error::new(Repr::Unreadable { why: Some(why) })
    }

    fn new(repr: Repr) -> Error {
        Error {
            repr: Box::new(repr),
        }
    }

    /// What failed.
    pub fn kind(&self) -> ErrorKind {
        match &*self.repr {
            Repr::Home => ErrorKind::Home,
            Repr::Unreadable { .. } => ErrorKind::Unreadable,
            Repr::Registry { .. } => ErrorKind::Registry,
            Repr::Collision { .. } => ErrorKind::Collision,
            Repr::CredentialUnion => ErrorKind::CredentialUnion,
            Repr::Framing => ErrorKind::Framing,
            Repr::UnknownProvider { .. } => ErrorKind::UnknownProvider,
            Repr::NoSelection { .. } => ErrorKind::NoSelection,
            Repr::BindingMismatch { .. } => ErrorKind::BindingMismatch,
            Repr::BindingRecord => ErrorKind::BindingRecord,
        }
    }

    /// The broken rule of a registry error.
    pub fn rule(&self) -> Option<Rule> {
        match &*self.repr {
            Repr::Registry { rule, .. } => Some(*rule),
            _ => None,
        }
    }

    /// The rendered JSON path of a registry error, or the public field of a collision.
    pub fn path(&self) -> Option<String> {
        match &*self.repr {
            Repr::Registry { at, .. } => Some(at.render()),
            Repr::Collision { public, .. } => Some(public.clone()),
            _ => None,
        }
    }

    /// The private field a public field collided with (names only).
    pub fn private_field(&self) -> Option<&str> {
        match &*self.repr {
            Repr::Collision { private, .. } => Some(private),
            _ => None,
        }
    }

    /// The binding component that differs: `id`, `type`, `model` or `route`.
    pub fn binding_component(&self) -> Option<&'static str> {
        match &*self.repr {
            Repr::BindingMismatch { component } => Some(component),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Home => f.write_str(
                "cannot resolve the AgentX home: neither AGENTX_HOME nor HOME is set (PROFILE §3)",
            ),
            Repr::Unreadable { why: None } => {
                f.write_str("invalid registry: auth.json could not be read")
            }
            Repr::Unreadable { why: Some(why) } => {
                write!(f, "invalid registry: auth.json could not be read: {why}")
            }
            Repr::Registry { at, rule } => {
                write!(f, "invalid registry: auth.json {}: ", at.render())?;
                rule.describe(f)?;
                write!(f, " ({})", rule.reference())
            }
            Repr::Collision { public, private } => write!(
                f,
                "invalid registry: public field {public} contains the value of private field \
                 {private}; rename one (PROFILE §3, WIRE-024)"
            ),
            Repr::CredentialUnion => f.write_str(
                "invalid registry: the credential union cannot be built (too many or too long \
                 private values) (WIRE-013)",
            ),
            Repr::Framing => f.write_str(
                "provider catalog refused: its encoded bytes would contain credential material \
                 (WIRE-013, WIRE-026)",
            ),
            Repr::UnknownProvider { available } => {
                write!(
                    f,
                    "unknown provider: --provider names no configured provider; available: {}",
                    available.join(", ")
                )
            }
            Repr::NoSelection { available } => write!(
                f,
                "no provider selected: no --provider, no default: true, and more than one \
                 provider; available: {}",
                available.join(", ")
            ),
            Repr::BindingMismatch { component } => write!(
                f,
                "resume refused: the session is bound to another provider (its {component} \
                 differs) (WIRE-025)"
            ),
            Repr::BindingRecord => {
                f.write_str("resume refused: the recorded provider binding is malformed (WIRE-025)")
            }
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Display holds only static texts, indices, field names and public ids.
        f.debug_struct("registry::Error")
            .field("kind", &self.kind())
            .field("message", &format_args!("{self}"))
            .finish()
    }
}

impl std::error::Error for Error {}
