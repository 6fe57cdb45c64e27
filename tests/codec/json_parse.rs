//! The strict parser: exact diagnostics with offsets, every limit at its edge, hostile inputs,
//! and the borrowed document API.

use agentx_wire::json::{self, ErrorKind, Kind, Limits, Malformed, Parser};

fn err(input: &[u8]) -> (ErrorKind, usize, String) {
    let e = json::parse(input).expect_err("expected a rejection");
    (e.kind(), e.offset(), e.to_string())
}

#[test]
fn diagnostics_table() {
    use Malformed::*;
    let cases: &[(&[u8], ErrorKind, usize, &str)] = &[
        (
            b"",
            ErrorKind::Malformed(EmptyInput),
            0,
            "malformed JSON: empty input",
        ),
        (
            b"  \t\r\n",
            ErrorKind::Malformed(EmptyInput),
            5,
            "malformed JSON: empty input",
        ),
        (
            b"{",
            ErrorKind::Malformed(UnexpectedEnd),
            1,
            "malformed JSON: unexpected end of input",
        ),
        (
            b"{\"a\":1,}",
            ErrorKind::Malformed(ExpectedMemberName),
            7,
            "malformed JSON: expected a member name",
        ),
        (
            b"[1,]",
            ErrorKind::Malformed(UnexpectedByte),
            3,
            "malformed JSON: unexpected character",
        ),
        (
            b"{\"a\" 1}",
            ErrorKind::Malformed(ExpectedColon),
            5,
            "malformed JSON: expected ':' after member name",
        ),
        (
            b"[1 2]",
            ErrorKind::Malformed(ExpectedCommaOrEnd),
            3,
            "malformed JSON: expected ',' or a closing bracket",
        ),
        (
            b"{} x",
            ErrorKind::Malformed(TrailingCharacters),
            3,
            "malformed JSON: trailing characters after the value",
        ),
        (
            b"\xEF\xBB\xBF{}",
            ErrorKind::Malformed(ByteOrderMark),
            0,
            "malformed JSON: byte order mark is not allowed",
        ),
        (
            b"\"a\tb\"",
            ErrorKind::Malformed(ControlCharacterInString),
            2,
            "malformed JSON: unescaped control character in string",
        ),
        (
            b"\"\\x\"",
            ErrorKind::Malformed(InvalidEscape),
            1,
            "malformed JSON: invalid escape sequence",
        ),
        (
            b"\"\\ud800\"",
            ErrorKind::Malformed(LoneSurrogate),
            1,
            "malformed JSON: lone surrogate in \\u escape",
        ),
        (
            b"\"\\udc00\"",
            ErrorKind::Malformed(LoneSurrogate),
            1,
            "malformed JSON: lone surrogate in \\u escape",
        ),
        (
            b"\"\\ud800\\u0041\"",
            ErrorKind::Malformed(LoneSurrogate),
            1,
            "malformed JSON: lone surrogate in \\u escape",
        ),
        (
            b"01",
            ErrorKind::Malformed(InvalidNumber),
            1,
            "malformed JSON: invalid number",
        ),
        (
            b"1.",
            ErrorKind::Malformed(UnexpectedEnd),
            2,
            "malformed JSON: unexpected end of input",
        ),
        (
            b"1.e5",
            ErrorKind::Malformed(InvalidNumber),
            2,
            "malformed JSON: invalid number",
        ),
        (
            b"-",
            ErrorKind::Malformed(UnexpectedEnd),
            1,
            "malformed JSON: unexpected end of input",
        ),
        (
            b"NaN",
            ErrorKind::Malformed(UnexpectedByte),
            0,
            "malformed JSON: unexpected character",
        ),
        (
            b"tru",
            ErrorKind::Malformed(UnexpectedEnd),
            0,
            "malformed JSON: unexpected end of input",
        ),
        (
            b"trux",
            ErrorKind::Malformed(InvalidLiteral),
            0,
            "malformed JSON: invalid literal",
        ),
        (
            b"[truex]",
            ErrorKind::Malformed(InvalidLiteral),
            1,
            "malformed JSON: invalid literal",
        ),
        (
            b"'a'",
            ErrorKind::Malformed(UnexpectedByte),
            0,
            "malformed JSON: unexpected character",
        ),
        (
            b"[1]//c",
            ErrorKind::Malformed(TrailingCharacters),
            3,
            "malformed JSON: trailing characters after the value",
        ),
        (
            b"[\xC0\x80]",
            ErrorKind::InvalidUtf8,
            1,
            "malformed JSON: invalid UTF-8",
        ),
        (
            b"\"\xED\xA0\x80\"",
            ErrorKind::InvalidUtf8,
            1,
            "malformed JSON: invalid UTF-8",
        ),
        (
            b"{\"a\":1,\"a\":2}",
            ErrorKind::DuplicateMember,
            7,
            "ambiguous JSON: duplicate member name",
        ),
        (
            b"{\"\\u00e9\":1,\"\xC3\xA9\":2}",
            ErrorKind::DuplicateMember,
            12,
            "ambiguous JSON: duplicate member name",
        ),
        (
            b"[\x0c]",
            ErrorKind::Malformed(UnexpectedByte),
            1,
            "malformed JSON: unexpected character",
        ),
    ];
    for &(input, kind, offset, text) in cases {
        let got = err(input);
        assert_eq!(
            got,
            (kind, offset, text.to_string()),
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
    assert_eq!(ErrorKind::InvalidUtf8.check_kind(), "invalid_utf8");
    assert_eq!(
        ErrorKind::Malformed(EmptyInput).check_kind(),
        "malformed_json"
    );
    assert_eq!(ErrorKind::DuplicateMember.check_kind(), "duplicate_member");
    assert_eq!(ErrorKind::TooDeep.check_kind(), "too_deep");
}

#[test]
fn escape_equivalent_names_collide_and_normalization_does_not() {
    assert!(json::parse(br#"{"\u00e9":1,"\u00E9":2}"#).is_err());
    assert!(json::parse(br#"{"a\/b":1,"a/b":2}"#).is_err());
    assert!(json::parse(r#"{"\ud83d\ude00":1,"😀":2}"#.as_bytes()).is_err());
    // PROFILE §2a: no Unicode normalization, case-sensitive.
    assert!(json::parse("{\"é\":1,\"e\u{301}\":2}".as_bytes()).is_ok());
    assert!(json::parse(br#"{"a":1,"A":2}"#).is_ok());
    // Same names in different objects are fine; duplicates at depth are not.
    assert!(json::parse(br#"{"a":{"a":1},"b":{"a":2}}"#).is_ok());
    assert!(json::parse(br#"[{"x":[{"k":1,"k":2}]}]"#)
        .unwrap_err()
        .is_duplicate_member());
}

#[test]
fn duplicates_in_large_objects_are_found_by_sorting() {
    for n in [16usize, 17, 1000] {
        let mut s = String::from("{");
        for k in 0..n {
            s.push_str(&format!("\"k{k}\":{k},"));
        }
        s.push_str("\"x\":0}");
        assert!(json::parse(s.as_bytes()).is_ok(), "{n} unique members");
        let dup = s.replacen("\"x\"", &format!("\"k{}\"", n / 2), 1);
        assert!(
            json::parse(dup.as_bytes())
                .unwrap_err()
                .is_duplicate_member(),
            "{n}"
        );
        let escaped = s.replacen("\"x\"", "\"\\u006b0\"", 1);
        assert!(
            json::parse(escaped.as_bytes())
                .unwrap_err()
                .is_duplicate_member(),
            "{n} escaped"
        );
    }
}

#[test]
fn a_million_members_parse_in_one_pass() {
    let n = 1_000_000;
    let mut s = String::with_capacity(n * 12);
    s.push('{');
    for k in 0..n {
        if k > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"{k:x}\":0"));
    }
    s.push('}');
    let doc = json::parse(s.as_bytes()).unwrap();
    assert_eq!(doc.root().as_object().unwrap().len(), n);
    let dup = format!("{},\"0\":1}}", &s[..s.len() - 1]);
    assert!(json::parse(dup.as_bytes())
        .unwrap_err()
        .is_duplicate_member());
}

#[test]
fn depth_limit_at_and_past_the_edge() {
    let nest = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
    assert!(json::parse(nest(128).as_bytes()).is_ok());
    let e = json::parse(nest(129).as_bytes()).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::TooDeep, 128));
    let objects = |d: usize| format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d));
    assert!(json::parse(objects(128).as_bytes()).is_ok());
    assert_eq!(
        json::parse(objects(129).as_bytes()).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    let mut p = Parser::with_limits(Limits { max_depth: 3 });
    assert!(p.parse(b"[[[1]]]").is_ok());
    assert_eq!(
        p.parse(b"[[[[1]]]]").unwrap_err().kind(),
        ErrorKind::TooDeep
    );
}

#[test]
fn hostile_inputs_fail_fast_without_panics() {
    // 8 MiB of '[' stops at the depth limit.
    let brackets = vec![b'['; 8 * 1024 * 1024];
    let e = json::parse(&brackets).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::TooDeep, 128));
    // An unterminated 8 MiB string.
    let mut s = vec![b'a'; 8 * 1024 * 1024];
    s[0] = b'"';
    assert_eq!(
        json::parse(&s).unwrap_err().kind(),
        ErrorKind::Malformed(Malformed::UnexpectedEnd)
    );
    // Invalid UTF-8 at every position of a valid document.
    let base = br#"{"type":"assistant","text":"h\u00e9llo","n":[1,2.5e3,true,null]}"#;
    for pos in 0..base.len() {
        for bad in [0x80u8, 0xC0, 0xFF] {
            let mut v = base.to_vec();
            v[pos] = bad;
            let e = json::parse(&v).unwrap_err();
            assert_eq!(
                (e.kind(), e.offset()),
                (ErrorKind::InvalidUtf8, pos),
                "pos {pos} byte {bad:#x}"
            );
        }
    }
    // Every truncation of a valid document is rejected, never accepted or panicking.
    for cut in 0..base.len() {
        let is_ok = json::parse(&base[..cut]).is_ok();
        assert!(!is_ok, "truncated at {cut} accepted");
    }
}

#[test]
fn borrowed_document_api() {
    let line = br#"{"type":"result","n":42,"neg":-7,"f":2.0,"e":1e2,"big":18446744073709551616,"s":"a\nb","o":{"k":[1,"x",null,false]},"t":true}"#;
    let mut parser = Parser::new();
    let root = parser.parse(line).unwrap();
    let o = root.as_object().unwrap();
    assert_eq!(o.len(), 9);
    assert!(o.get("type").unwrap().as_str().unwrap().eq_str("result"));
    assert_eq!(
        o.get("type").unwrap().as_str().unwrap().as_plain(),
        Some("result")
    );
    assert_eq!(o.get("n").unwrap().as_number().unwrap().as_u64(), Some(42));
    assert_eq!(o.get("neg").unwrap().as_number().unwrap().as_u64(), None);
    assert_eq!(
        o.get("neg").unwrap().as_number().unwrap().as_i64(),
        Some(-7)
    );
    // PROFILE §2a: 2.0 is not an integer; out of range is refused, never rounded.
    assert_eq!(o.get("f").unwrap().as_number().unwrap().as_u64(), None);
    assert_eq!(o.get("f").unwrap().as_number().unwrap().as_f64(), Some(2.0));
    assert_eq!(o.get("e").unwrap().as_number().unwrap().as_u64(), None);
    assert_eq!(o.get("big").unwrap().as_number().unwrap().as_u64(), None);
    let s = o.get("s").unwrap().as_str().unwrap();
    assert!(s.has_escapes());
    assert_eq!(s.decode(), "a\nb");
    assert_eq!(s.raw(), br"a\nb");
    let inner = o.get("o").unwrap();
    assert_eq!(inner.raw(), br#"{"k":[1,"x",null,false]}"#);
    let arr = inner
        .as_object()
        .unwrap()
        .get("k")
        .unwrap()
        .as_array()
        .unwrap();
    let kinds: Vec<Kind> = arr.iter().map(|v| v.kind()).collect();
    assert_eq!(kinds, [Kind::Number, Kind::String, Kind::Null, Kind::Bool]);
    assert_eq!(arr.get(1).unwrap().raw(), b"\"x\"");
    assert!(arr.get(4).is_none());
    assert_eq!(o.get("t").unwrap().as_bool(), Some(true));
    assert!(o.get("missing").is_none());
    let names: Vec<String> = o.iter().map(|(k, _)| k.decode().into_owned()).collect();
    assert_eq!(names, ["type", "n", "neg", "f", "e", "big", "s", "o", "t"]);
    // The parser is reusable, and whitespace around values is JSON whitespace only.
    let root = parser.parse(b" \r\n [ 1 , { \"a\" : 2 } ] \n").unwrap();
    assert_eq!(root.as_array().unwrap().len(), 2);
    // Debug never shows contents.
    let secret = parser.parse(br#""sk-live-secret""#).unwrap();
    assert!(!format!("{secret:?} {:?}", secret.as_str().unwrap()).contains("secret"));
}
