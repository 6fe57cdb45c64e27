//! JSONTestSuite, the duplicate-name table and the transform cases, read from the shared
//! conformance corpus (never copied into the repository).

use crate::common;

use agentx_wire::json::{self, ErrorKind};
use std::fs;

/// Our verdict for every implementation-defined `i_` file, by PROFILE §2a: numbers are kept as
/// lexemes (accepted whatever their magnitude); invalid UTF-8, encoded or lone surrogates, a
/// byte-order mark, and nesting beyond 128 are rejected.
const I_VERDICTS: &[(&str, bool)] = &[
    ("i_number_double_huge_neg_exp.json", true),
    ("i_number_huge_exp.json", true),
    ("i_number_neg_int_huge_exp.json", true),
    ("i_number_pos_double_huge_exp.json", true),
    ("i_number_real_neg_overflow.json", true),
    ("i_number_real_pos_overflow.json", true),
    ("i_number_real_underflow.json", true),
    ("i_number_too_big_neg_int.json", true),
    ("i_number_too_big_pos_int.json", true),
    ("i_number_very_big_negative_int.json", true),
    ("i_object_key_lone_2nd_surrogate.json", false),
    ("i_string_1st_surrogate_but_2nd_missing.json", false),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", false),
    ("i_string_UTF-16LE_with_BOM.json", false),
    ("i_string_UTF-8_invalid_sequence.json", false),
    ("i_string_UTF8_surrogate_U+D800.json", false),
    ("i_string_incomplete_surrogate_and_escape_valid.json", false),
    ("i_string_incomplete_surrogate_pair.json", false),
    ("i_string_incomplete_surrogates_escape_valid.json", false),
    ("i_string_invalid_lonely_surrogate.json", false),
    ("i_string_invalid_surrogate.json", false),
    ("i_string_invalid_utf-8.json", false),
    ("i_string_inverted_surrogates_U+1D11E.json", false),
    ("i_string_iso_latin_1.json", false),
    ("i_string_lone_second_surrogate.json", false),
    ("i_string_lone_utf8_continuation_byte.json", false),
    ("i_string_not_in_unicode_range.json", false),
    ("i_string_overlong_sequence_2_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes.json", false),
    ("i_string_overlong_sequence_6_bytes_null.json", false),
    ("i_string_truncated-utf-8.json", false),
    ("i_string_utf16BE_no_BOM.json", false),
    ("i_string_utf16LE_no_BOM.json", false),
    ("i_structure_500_nested_arrays.json", false),
    ("i_structure_UTF-8_BOM_empty_object.json", false),
];

#[test]
fn json_test_suite_parsing() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let dir = dir.join("json/JSONTestSuite/test_parsing");
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .expect("test_parsing")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let (mut y, mut n, mut i) = (0, 0, 0);
    let mut failures = Vec::new();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = fs::read(&path).unwrap();
        let result = json::parse(&bytes);
        let expected = if name.starts_with("y_") {
            y += 1;
            // Duplicate members are fatal on this wire (WIRE-014), RFC 8259 notwithstanding.
            !name.starts_with("y_object_duplicated_key")
        } else if name.starts_with("n_") {
            n += 1;
            false
        } else if name.starts_with("i_") {
            i += 1;
            match I_VERDICTS.iter().find(|(f, _)| *f == name) {
                Some(&(_, v)) => v,
                None => {
                    failures.push(format!("{name}: no verdict in I_VERDICTS"));
                    continue;
                }
            }
        } else {
            continue;
        };
        if result.is_ok() != expected {
            failures.push(format!(
                "{name}: expected {}, got {:?}",
                if expected { "accept" } else { "reject" },
                result.as_ref().err()
            ));
        }
        if name.starts_with("y_object_duplicated_key") {
            assert_eq!(
                result.unwrap_err().kind(),
                ErrorKind::DuplicateMember,
                "{name}"
            );
        }
    }
    eprintln!("JSONTestSuite test_parsing: {y} y_, {n} n_, {i} i_ files checked");
    assert!(
        y >= 95 && n >= 188 && i >= 35,
        "suite incomplete: {y} {n} {i}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|k| u8::from_str_radix(&s[2 * k..2 * k + 2], 16).unwrap())
        .collect()
}

#[test]
fn duplicate_names_table() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let table = fs::read_to_string(dir.join("json/dupkeys/duplicate_names.tsv")).unwrap();
    let mut header = None;
    let mut checked = 0;
    for line in table.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let Some(h) = &header else {
            header = Some(cols.iter().map(|c| c.to_string()).collect::<Vec<_>>());
            continue;
        };
        let col = |name: &str| cols[h.iter().position(|c| c == name).unwrap()];
        let bytes = unhex(col("input_hex"));
        let expected_accept = match col("ijson_expected") {
            "accept" => true,
            "reject" => false,
            other => panic!("unknown verdict {other}"),
        };
        let result = json::parse(&bytes);
        assert_eq!(
            result.is_ok(),
            expected_accept,
            "{}: {:?}",
            col("id"),
            result.err()
        );
        if let Err(e) = result {
            assert_eq!(e.kind(), ErrorKind::DuplicateMember, "{}", col("id"));
            assert_eq!(e.to_string(), "ambiguous JSON: duplicate member name");
        }
        checked += 1;
    }
    eprintln!("duplicate_names.tsv: {checked} rows checked");
    assert!(checked >= 24);
}

/// Transform cases: rejected ones are stated; accepted ones round-trip through the writer.
#[test]
fn json_test_suite_transform() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let dir = dir.join("json/JSONTestSuite/test_transform");
    let rejected: &[&str] = &[
        "object_same_key_different_values.json",
        "object_same_key_same_value.json",
        "object_same_key_unclear_values.json",
        // Raw invalid UTF-8 in the string body.
        "string_1_invalid_codepoint.json",
        "string_2_invalid_codepoints.json",
        "string_3_invalid_codepoints.json",
        // Lone surrogates in \u escapes.
        "string_1_escaped_invalid_codepoint.json",
        "string_2_escaped_invalid_codepoints.json",
        "string_3_escaped_invalid_codepoints.json",
    ];
    let mut checked = 0;
    let mut entries: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = fs::read(&path).unwrap();
        let result = json::parse(&bytes);
        if rejected.contains(&name.as_str()) {
            assert!(result.is_err(), "{name} should be rejected");
        } else {
            let doc = result.unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut out = Vec::new();
            json::write_value(&mut out, doc.root());
            let again = json::parse(&out).unwrap();
            assert!(
                agentx_wire::fuzzing::json::same(doc.root(), again.root()),
                "{name}"
            );
            agentx_wire::fuzzing::json::write_round_trip(&bytes);
        }
        checked += 1;
    }
    eprintln!("JSONTestSuite test_transform: {checked} files checked");
    assert!(checked >= 20);
}
