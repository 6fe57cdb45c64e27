//! The writer: escaping (U+2028/U+2029 always escaped, scenario 2), numbers, canonical
//! re-encoding, and the round trip.

use agentx_wire::json::{self, NonFinite};

fn s(v: &str) -> String {
    let mut out = Vec::new();
    json::write_str(&mut out, v);
    String::from_utf8(out).unwrap()
}

#[test]
fn strings_escape_exactly_what_they_must() {
    assert_eq!(s("plain"), r#""plain""#);
    assert_eq!(s("q\"b\\s/"), r#""q\"b\\s/""#);
    assert_eq!(s("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
    assert_eq!(s("\u{0}\u{1f}\u{7f}"), "\"\\u0000\\u001f\u{7f}\"");
    assert_eq!(s("a\u{2028}b\u{2029}c"), r#""a\u2028b\u2029c""#);
    assert_eq!(s("\u{2028}\u{2028}"), r#""\u2028\u2028""#);
    assert_eq!(s("é😀\u{2027}\u{202a}"), "\"é😀\u{2027}\u{202a}\"");
    // Every position around a separator and a quote, across SIMD block boundaries.
    for pad in 0..70 {
        let text = format!("{}\u{2028}\"{}", "x".repeat(pad), "y".repeat(pad));
        let out = s(&text);
        assert!(!out.contains('\u{2028}'));
        let doc = json::parse(out.as_bytes()).unwrap();
        assert_eq!(doc.root().as_str().unwrap().decode(), text);
    }
}

#[test]
fn numbers() {
    let mut out = Vec::new();
    json::write_u64(&mut out, u64::MAX);
    out.push(b' ');
    json::write_i64(&mut out, i64::MIN);
    out.push(b' ');
    json::write_f64(&mut out, 0.1).unwrap();
    out.push(b' ');
    json::write_f64(&mut out, 1e300).unwrap();
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        "18446744073709551615 -9223372036854775808 0.1 1e300"
    );
    assert_eq!(json::write_f64(&mut out, f64::NAN), Err(NonFinite));
    assert_eq!(json::write_f64(&mut out, f64::INFINITY), Err(NonFinite));
    assert_eq!(json::write_f64(&mut out, f64::NEG_INFINITY), Err(NonFinite));
}

#[test]
fn values_re_encode_canonically() {
    let input =
        " { \"a\\/b\" : [ 1.50 , -0, 1E+2, \"\\u00e9\\u2028\" ] , \"t\" : { } , \"n\":[ ] } ";
    let doc = json::parse(input.as_bytes()).unwrap();
    let mut out = Vec::new();
    json::write_value(&mut out, doc.root());
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"a/b":[1.50,-0,1E+2,"é\u2028"],"t":{},"n":[]}"#
    );
    let deep = format!("{}{}", "[{\"k\":".repeat(60), "}]".repeat(60));
    let deep = deep.replacen("}]", "0}]", 1);
    let doc = json::parse(deep.as_bytes()).unwrap();
    let mut out = Vec::new();
    json::write_value(&mut out, doc.root());
    assert_eq!(out, deep.as_bytes());
}

#[test]
fn round_trip_property_on_generated_documents() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let atoms = [
        "0",
        "-1.5e-3",
        "true",
        "null",
        "\"\\u2028\"",
        "\"é\"",
        "\"\\ud83d\\ude00\"",
        "\"a\\\"b\"",
    ];
    for _ in 0..2000 {
        let mut doc = String::new();
        let mut depth = 0;
        let mut need_value = true;
        let mut keys = 0;
        let mut stack = Vec::new();
        for _ in 0..(next() % 40) {
            if need_value {
                match next() % 4 {
                    0 if depth < 10 => {
                        doc.push('[');
                        stack.push(']');
                        depth += 1;
                        continue;
                    }
                    1 if depth < 10 => {
                        keys += 1;
                        doc.push_str(&format!("{{\"k{keys}\":"));
                        stack.push('}');
                        depth += 1;
                        continue;
                    }
                    _ => doc.push_str(atoms[(next() % atoms.len() as u64) as usize]),
                }
                need_value = false;
            } else if let Some(&close) = stack.last() {
                if next() % 2 == 0 {
                    doc.push(close);
                    stack.pop();
                    depth -= 1;
                } else if close == '}' {
                    keys += 1;
                    doc.push_str(&format!(",\"k{keys}\":"));
                    need_value = true;
                } else {
                    doc.push(',');
                    need_value = true;
                }
            }
        }
        if need_value {
            doc.push('1');
        }
        while let Some(c) = stack.pop() {
            doc.push(c);
        }
        agentx_wire::fuzzing::json::write_round_trip(doc.as_bytes());
        agentx_wire::fuzzing::json::decode(doc.as_bytes());
        assert!(json::parse(doc.as_bytes()).is_ok(), "{doc}");
    }
}
