//! PDF validation against the lopdf, pdf-rs, pdf.js and ExifTool samples
//! (`../shared/conformance/pdf`), each with its expected verdict, plus the page limit at its
//! edge (PROFILE §6a).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use agentx_core::attach::limits::Limits;
use agentx_core::attach::{normalize, MediaType, ReasonCode};
use agentx_core::fuzzing::attach::samples;

fn pdf_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pdf") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

use ReasonCode::{PdfEncrypted as ENC, PdfInvalid as BAD};

/// Every sample and its verdict (`None` = admitted unchanged). Path relative to `pdf/`.
/// Well-formed = lopdf's strict load succeeds (damaged xref tables that a lenient reader
/// would rebuild are `pdf_invalid`); `%PDF-` must be at offset 0 (`offset.pdf` and
/// `infinite-loop-103.pdf` have bytes before it). Active content (`doc_actions`,
/// `js-authors`, `autoprint`) is no reason to reject. Every encrypted file is
/// `pdf_encrypted`, whether its user password is empty (`print_protection`,
/// `empty_protected`) or not.
const VERDICTS: &[(&str, Option<ReasonCode>)] = &[
    ("exiftool/PDF.pdf", None),
    ("exiftool/PDF2.pdf", None),
    ("lopdf/Incremental.pdf", None),
    ("lopdf/encrypted.pdf", Some(ENC)),
    ("lopdf/example.pdf", None),
    ("pdf-rs/283-rebuild-crash.pdf", Some(BAD)),
    ("pdf-rs/encrypted_aes_128.pdf", Some(ENC)),
    ("pdf-rs/encrypted_aes_256.pdf", Some(ENC)),
    ("pdf-rs/encrypted_aes_256_hardened.pdf", Some(ENC)),
    ("pdf-rs/encrypted_rc4_rev2.pdf", Some(ENC)),
    ("pdf-rs/encrypted_rc4_rev3.pdf", Some(ENC)),
    ("pdf-rs/ep.pdf", None),
    ("pdf-rs/ep2.pdf", None),
    ("pdf-rs/example.pdf", None),
    ("pdf-rs/example_annotation.pdf", None),
    ("pdf-rs/formxobject.pdf", None),
    ("pdf-rs/invalid/252-crash.pdf", Some(ENC)),
    ("pdf-rs/invalid/284-crash.pdf", Some(BAD)),
    ("pdf-rs/invalid/286-crash.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-121-1.pdf", None),
    ("pdf-rs/invalid/crash-121-2.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-121-3.pdf", None),
    ("pdf-rs/invalid/crash-121-4.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-122.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-123.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-124.pdf", Some(BAD)),
    ("pdf-rs/invalid/crash-assertion-failure.pdf", Some(BAD)),
    ("pdf-rs/invalid/infinite-loop-103.pdf", Some(BAD)),
    ("pdf-rs/jpeg.pdf", None),
    ("pdf-rs/libreoffice.pdf", None),
    ("pdf-rs/lossless.pdf", None),
    ("pdf-rs/offset.pdf", Some(BAD)),
    ("pdf-rs/password_protected/passwords_aes_128.pdf", Some(ENC)),
    ("pdf-rs/password_protected/passwords_aes_256.pdf", Some(ENC)),
    (
        "pdf-rs/password_protected/passwords_aes_256_hardened.pdf",
        Some(ENC),
    ),
    (
        "pdf-rs/password_protected/passwords_rc4_rev2.pdf",
        Some(ENC),
    ),
    (
        "pdf-rs/password_protected/passwords_rc4_rev3.pdf",
        Some(ENC),
    ),
    ("pdf-rs/pdf-sample.pdf", None),
    ("pdf-rs/xelatex-drawboard.pdf", None),
    ("pdf-rs/xelatex.pdf", None),
    ("pdfjs/Pages-tree-refs.pdf", None),
    ("pdfjs/REDHAT-1531897-0.pdf", Some(BAD)),
    ("pdfjs/autoprint.pdf", None),
    ("pdfjs/bug1020226.pdf", Some(BAD)),
    ("pdfjs/doc_actions.pdf", None),
    ("pdfjs/empty.pdf", None),
    ("pdfjs/empty_protected.pdf", Some(ENC)),
    ("pdfjs/encrypted-attachment.pdf", Some(ENC)),
    ("pdfjs/helloworld-bad.pdf", Some(BAD)),
    ("pdfjs/issue15590.pdf", Some(BAD)),
    ("pdfjs/issue17846.pdf", None),
    ("pdfjs/issue6106.pdf", None),
    ("pdfjs/js-authors.pdf", None),
    ("pdfjs/page_with_number.pdf", None),
    ("pdfjs/poppler-742-0-fuzzed.pdf", Some(BAD)),
    ("pdfjs/print_protection.pdf", Some(ENC)),
    ("pdfjs/xref_command_missing.pdf", Some(BAD)),
];

#[test]
fn conformance_samples() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let base = dir.join("pdf");
    let limits = Limits::default();
    let files = pdf_files(&base);
    let mut failures = Vec::new();
    let mut report = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&base)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(path).unwrap();
        let start = Instant::now();
        let got = normalize(MediaType::Pdf, &bytes, &limits);
        let took = start.elapsed();
        if let Ok(out) = &got {
            assert_eq!(out.bytes, bytes, "{rel}: stored unchanged");
        }
        let got = got.err();
        report.push(format!("    (\"{rel}\", {got:?}), // {took:?}"));
        match VERDICTS.iter().find(|(n, _)| *n == rel) {
            None => failures.push(format!("{rel}: not in the verdict table")),
            Some((_, want)) if *want != got => {
                failures.push(format!("{rel}: expected {want:?}, got {got:?}"))
            }
            _ => {}
        }
    }
    let admitted = report.iter().filter(|r| r.contains("None)")).count();
    eprintln!(
        "pdf conformance: {} files checked, {admitted} admitted\n{}",
        files.len(),
        report.join("\n")
    );
    assert_eq!(files.len(), VERDICTS.len(), "every sample has a verdict");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn page_limit_at_and_past_the_edge() {
    let l = Limits::default();
    for (pages, want) in [
        (1, Ok(())),
        (100, Ok(())),
        (101, Err(ReasonCode::PdfTooManyPages)),
    ] {
        let pdf = samples::pdf_with_pages(pages);
        assert_eq!(
            normalize(MediaType::Pdf, &pdf, &l).map(|_| ()),
            want,
            "{pages} pages"
        );
    }
    assert_eq!(
        normalize(MediaType::Pdf, &samples::pdf_with_pages(0), &l).map(|_| ()),
        Err(ReasonCode::PdfInvalid),
        "no page"
    );
}

#[test]
fn magic_and_truncation() {
    let l = Limits::default();
    let pdf = samples::pdf_with_pages(2);
    let mut junk = b"junk".to_vec();
    junk.extend_from_slice(&pdf);
    assert_eq!(
        normalize(MediaType::Pdf, &junk, &l).map(|_| ()),
        Err(ReasonCode::PdfInvalid)
    );
    assert_eq!(
        normalize(MediaType::Pdf, &samples::png_rgb(2, 2), &l).map(|_| ()),
        Err(ReasonCode::MimeMismatch)
    );
    for cut in [5, 20, pdf.len() / 2] {
        assert!(
            normalize(MediaType::Pdf, &pdf[..cut], &l).is_err(),
            "cut {cut}"
        );
    }
}
