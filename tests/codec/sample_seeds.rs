//! The `json_decode` seed corpus states its own verdicts: `y_*` seeds are accepted by the strict
//! parser and `n_*` seeds rejected with the `check` kind of PROFILE §2 the name implies
//! (duplicates WIRE-014, depth 128 PROFILE §2a, UTF-8 PROFILE §2a). The fuzz replay test
//! (`tests/codec/fuzz_seeds_json.rs`) runs the same files through the fuzz entry points; this one pins
//! the expected outcome of each.

use agentx_wire::json::Parser;

/// The kinds a rejected seed may report, from its name.
fn expected_kinds(name: &str) -> &'static [&'static str] {
    if name.starts_with("n_dup_") {
        &["duplicate_member"]
    } else if name.starts_with("n_depth_") || name.starts_with("n_unclosed_deep") {
        &["too_deep"]
    } else if name.starts_with("n_utf8_") {
        &["invalid_utf8"]
    } else if name.starts_with("n_bom") {
        // PROFILE §2a rejects a leading BOM; either classification is a rejection.
        &["invalid_utf8", "malformed_json"]
    } else {
        &["malformed_json"]
    }
}

#[test]
fn json_decode_seeds_have_their_named_verdicts() {
    let dir = agentx_test_support::workspace_root().join("corpus/json_decode");
    let mut parser = Parser::new();
    let (mut accepted, mut rejected) = (0, 0);
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let result = parser.parse(&bytes).map(|v| v.kind());
        if name.starts_with("y_") {
            if let Err(e) = result {
                panic!(
                    "{name}: rejected ({} at {}): {e}",
                    e.kind().check_kind(),
                    e.offset()
                );
            }
            accepted += 1;
        } else if name.starts_with("n_") {
            match result {
                Ok(_) => panic!("{name}: accepted"),
                Err(e) => {
                    let kind = e.kind().check_kind();
                    assert!(
                        expected_kinds(&name).contains(&kind),
                        "{name}: reported {kind}"
                    );
                    assert!(e.offset() <= bytes.len(), "{name}: offset past the input");
                }
            }
            rejected += 1;
        } else {
            panic!("{name}: seed names start with y_ or n_");
        }
    }
    eprintln!("json_decode seeds: {accepted} accepted, {rejected} rejected as named");
    assert!(accepted >= 20 && rejected >= 40);
}

#[test]
fn realistic_records_decode_to_objects_with_a_type() {
    // The benchmark input must be accepted as-is by the parser it measures.
    let stream = agentx_wire::sample::realistic_stream(11, 2 << 20);
    let mut parser = Parser::new();
    let mut records = 0;
    for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let value = parser
            .parse(line)
            .unwrap_or_else(|e| panic!("record {}: {e}", records + 1));
        let object = value.as_object().expect("a record is an object");
        assert!(object.get("type").and_then(|t| t.as_str()).is_some());
        records += 1;
    }
    eprintln!("{records} generated records accepted");
    assert!(records > 1000);
}
