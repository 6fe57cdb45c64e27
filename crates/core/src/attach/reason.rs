//! The closed vocabulary of attachment failures (PROFILE §6).
//!
//! Owns `ReasonCode`, the one error type of the `attach` layer: every failure of chunk
//! admission, type admission, normalization, PDF validation and the blob store is one of these
//! codes, classifiable without formatting. It must never carry input bytes, paths or any other
//! payload (WIRE-022): a reason is a bounded, fixed string.

/// One vocabulary for the protocol and the media pipeline: the `wire` layer's closed
/// `attachment_import_*` reason enum is the type every `attach` failure returns.
pub use agentx_wire::wire::import::ReasonCode;

#[cfg(test)]
mod tests {
    use super::ReasonCode;

    #[test]
    fn profile_section_6_strings_round_trip() {
        // PROFILE §6 lists exactly 28 codes.
        assert_eq!(ReasonCode::ALL.len(), 28);
        for &code in ReasonCode::ALL {
            assert_eq!(ReasonCode::from_name(code.as_str()), Some(code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert_eq!(ReasonCode::from_name("Storage_full"), None);
    }
}
