//! PNG normalization against PngSuite and the image-png regression images
//! (`../shared/conformance/png`), plus the header limits at their edges (PROFILE §6a).

use crate::common;

use std::path::{Path, PathBuf};

use agentx_core::attach::limits::Limits;
use agentx_core::attach::{normalize, png, MediaType, ReasonCode};
use agentx_core::fuzzing::attach::{png_chunk_types, samples};

fn png_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "png") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Files that are not named `x*` but are still rejected, and why (checked by this table so a
/// change in behaviour is seen).
const EXPECTED_REJECTS: &[(&str, ReasonCode)] = &[];

#[test]
fn conformance_images_normalize_or_reject_as_expected() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let limits = Limits::default();
    let files = png_files(&dir.join("png"));
    assert!(
        files.len() >= 180,
        "PngSuite missing? {} files",
        files.len()
    );
    let (mut valid, mut corrupt) = (0, 0);
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let got = normalize(MediaType::Png, &bytes, &limits);
        let expect_reject = if name.starts_with('x') {
            Some(ReasonCode::ImageDecodeFailed)
        } else {
            EXPECTED_REJECTS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| *c)
        };
        match (expect_reject, got) {
            (Some(want), Err(code)) if code == want => corrupt += 1,
            (None, Ok(out)) => {
                let before = png::decode(&bytes, &limits).unwrap();
                let after = png::decode(&out.bytes, &limits).unwrap();
                if before != after {
                    failures.push(format!("{name}: pixels differ"));
                }
                let kinds = png_chunk_types(&out.bytes).unwrap();
                if kinds
                    .iter()
                    .any(|k| !matches!(k, b"IHDR" | b"IDAT" | b"IEND"))
                {
                    failures.push(format!("{name}: ancillary chunk left"));
                }
                valid += 1;
            }
            (want, got) => failures.push(format!(
                "{name}: expected {:?}, got {:?}",
                want,
                got.map(|n| n.size_bytes())
            )),
        }
    }
    eprintln!(
        "png conformance: {} files, {valid} normalized with identical pixels, {corrupt} rejected",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ancillary_chunks_are_dropped_and_pixels_kept() {
    let limits = Limits::default();
    let base = samples::png_rgb(5, 4);
    let mut with = base.clone();
    for (kind, data) in [
        (b"tEXt", &b"Author\0someone"[..]),
        (b"eXIf", &b"MM\0*\0\0\0\x08\0\0"[..]),
        (b"iCCP", &b"icc\0\0\x78\x9c\x03\0\0\0\0\x01"[..]),
        (b"zTXt", &b"k\0\0\x78\x9c\x03\0\0\0\0\x01"[..]),
    ] {
        with = samples::png_with_chunk(&with, kind, data);
    }
    assert!(png_chunk_types(&with).unwrap().len() > 4);
    let out = normalize(MediaType::Png, &with, &limits).unwrap();
    let plain = normalize(MediaType::Png, &base, &limits).unwrap();
    assert_eq!(out.bytes, plain.bytes, "metadata must not influence output");
    assert_eq!(
        png_chunk_types(&out.bytes).unwrap(),
        vec![*b"IHDR", *b"IDAT", *b"IEND"]
    );
}

#[test]
fn dimension_and_pixel_limits_from_the_header() {
    // PROFILE §6a: checked from IHDR before any pixel is decoded. At the limit the header is
    // accepted; one past it the whole file is rejected (the file has no IDAT at all, so a
    // decode would have failed differently).
    let l = Limits::default();
    for (w, h) in [(8192, 2441), (2441, 8192), (5000, 4000), (4000, 5000)] {
        let hdr = samples::png_header_only(w, h);
        assert!(png::read_header(&hdr, &l).is_ok(), "{w}x{h}");
    }
    for (w, h) in [(8193, 1), (1, 8193), (5000, 4001), (8192, 8192)] {
        let hdr = samples::png_header_only(w, h);
        assert_eq!(
            normalize(MediaType::Png, &hdr, &l).map(|_| ()),
            Err(ReasonCode::ImageTooLarge),
            "{w}x{h}"
        );
    }
    // Full normalization at the dimension edge (cheap: few pixels).
    for (w, h) in [(8192, 1), (1, 8192)] {
        let img = samples::png_rgb(w, h);
        let out = normalize(MediaType::Png, &img, &l).unwrap();
        let hdr = png::read_header(&out.bytes, &l).unwrap();
        assert_eq!((hdr.width, hdr.height), (w as u32, h as u32));
    }
    // Pixel edge with a small configured budget: at 64 pixels accepted, 65 rejected.
    let small = Limits {
        max_image_pixels: 64,
        ..l
    };
    assert!(normalize(MediaType::Png, &samples::png_rgb(8, 8), &small).is_ok());
    assert_eq!(
        normalize(MediaType::Png, &samples::png_rgb(13, 5), &small).map(|_| ()),
        Err(ReasonCode::ImageTooLarge)
    );
}

#[test]
fn truncations_of_a_valid_png_never_pass() {
    let l = Limits::default();
    let img = samples::png_rgb(6, 6);
    let mut checked = 0;
    for cut in 8..img.len() {
        let got = normalize(MediaType::Png, &img[..cut], &l);
        assert_eq!(
            got.map(|_| ()),
            Err(ReasonCode::ImageDecodeFailed),
            "cut {cut}"
        );
        checked += 1;
    }
    eprintln!("png truncations: {checked} checked");
}
