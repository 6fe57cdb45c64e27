//! JPEG normalization against the jpeg-decoder reftest/crashtest/ICC images and the EXIF
//! orientation samples (`../shared/conformance/jpeg`), plus header limits at their edges.

use crate::common;

use std::path::{Path, PathBuf};

use agentx_core::attach::image::{DecodedImage, Orientation};
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{jpeg, normalize, MediaType, ReasonCode};
use agentx_core::fuzzing::attach::{jpeg_markers, samples};

fn jpeg_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jpg" || x == "jpeg") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Expected verdict per file (path relative to `jpeg/`): `None` = admitted.
/// Crash files must never panic; the decodable ones are admitted: `multiple-0xff-before-eoi`
/// uses legal fill bytes and `dc-predictor-overflow` is a complete scan whose DC values wrap
/// (a panic in an old decoder, not a malformed stream). Lossless JPEG (SOF3) is not supported
/// by the decoder and so is not admitted.
const VERDICTS: &[(&str, Option<ReasonCode>)] = &[
    ("exif-orientation-examples/Landscape_1.jpg", None),
    ("exif-orientation-examples/Landscape_6.jpg", None),
    ("exif-orientation-examples/Portrait_8.jpg", None),
    (
        "jpeg-decoder/crashtest/images/dc-predictor-overflow.jpg",
        None,
    ),
    (
        "jpeg-decoder/crashtest/images/derive-huffman-codes-overflow.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/empty.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/invalid-dimensions.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/invalid-prediction-shift.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/max_size.jpg",
        Some(ReasonCode::ImageTooLarge),
    ),
    (
        "jpeg-decoder/crashtest/images/missing-frame-image-1410.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/missing-sof.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/missing-sos.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/multiple-0xff-before-eoi.jpg",
        None,
    ),
    (
        "jpeg-decoder/crashtest/images/null_height.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    (
        "jpeg-decoder/crashtest/images/subtract-with-overflow.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    ("jpeg-decoder/icc/icc_chunk_count_mismatch.jpeg", None),
    ("jpeg-decoder/icc/icc_chunk_double_seq_no.jpeg", None),
    ("jpeg-decoder/icc/icc_chunk_order.jpeg", None),
    ("jpeg-decoder/icc/icc_chunk_seq_no_0.jpeg", None),
    ("jpeg-decoder/icc/icc_missing_chunk.jpeg", None),
    ("jpeg-decoder/reftest/images/16bit-qtables.jpg", None),
    ("jpeg-decoder/reftest/images/blank_800x280.jpg", None),
    ("jpeg-decoder/reftest/images/extraneous-data.jpg", None),
    (
        "jpeg-decoder/reftest/images/grayscale_16x24_sampling2x2.jpg",
        None,
    ),
    (
        "jpeg-decoder/reftest/images/grayscale_24x16_sampling2x2.jpg",
        None,
    ),
    ("jpeg-decoder/reftest/images/grayscale_large.jpg", None),
    ("jpeg-decoder/reftest/images/grayscale_long.jpg", None),
    ("jpeg-decoder/reftest/images/grayscale_square.jpg", None),
    (
        "jpeg-decoder/reftest/images/lossless/1/jpeg_lossless_sel1.jpg",
        Some(ReasonCode::ImageDecodeFailed),
    ),
    ("jpeg-decoder/reftest/images/mjpeg.jpg", None),
    ("jpeg-decoder/reftest/images/non-interleaved-mcu.jpg", None),
    ("jpeg-decoder/reftest/images/partial_progressive.jpg", None),
    (
        "jpeg-decoder/reftest/images/progressive-missing-ac.jpg",
        None,
    ),
    (
        "jpeg-decoder/reftest/images/progressive-missing-dc.jpg",
        None,
    ),
    ("jpeg-decoder/reftest/images/progressive3.jpg", None),
    ("jpeg-decoder/reftest/images/restarts.jpg", None),
    ("jpeg-decoder/reftest/images/rgb.jpg", None),
];

fn no_metadata(bytes: &[u8]) -> bool {
    let markers = jpeg_markers(bytes).expect("well-formed output");
    markers
        .iter()
        .all(|&m| m == 0xE0 || (!(0xE1..=0xEF).contains(&m) && m != 0xFE))
}

#[test]
fn conformance_images() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let base = dir.join("jpeg");
    let limits = Limits::default();
    let files = jpeg_files(&base);
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(&base)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(path).unwrap();
        let got = normalize(MediaType::Jpeg, &bytes, &limits);
        report.push(format!("{rel}: {:?}", got.as_ref().map(|n| n.size_bytes())));
        if let Ok(out) = &got {
            if !no_metadata(&out.bytes) {
                failures.push(format!("{rel}: metadata left"));
            }
        }
        let want = VERDICTS.iter().find(|(n, _)| *n == rel).map(|(_, v)| *v);
        match want {
            None => failures.push(format!("{rel}: not in the verdict table")),
            Some(w) if w != got.as_ref().err().copied() => {
                failures.push(format!("{rel}: expected {w:?}, got {:?}", got.err()))
            }
            _ => {}
        }
    }
    assert_eq!(files.len(), VERDICTS.len(), "every sample has a verdict");
    eprintln!(
        "jpeg conformance: {} files checked\n{}",
        files.len(),
        report.join("\n")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rotates/flips decoded pixels by the EXIF orientation, written independently of the
/// library (by where each *source* pixel lands).
fn rotate_reference(img: &DecodedImage, orientation: u8) -> (u32, u32, Vec<u8>) {
    let (w, h) = (img.width as usize, img.height as usize);
    let px = img.pixel_bytes();
    let (ow, oh) = if orientation >= 5 { (h, w) } else { (w, h) };
    let mut out = vec![0u8; ow * oh * px];
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = match orientation {
                1 => (x, y),
                2 => (w - 1 - x, y),
                3 => (w - 1 - x, h - 1 - y),
                4 => (x, h - 1 - y),
                5 => (y, x),
                6 => (h - 1 - y, x),
                7 => (h - 1 - y, w - 1 - x),
                8 => (y, w - 1 - x),
                _ => unreachable!(),
            };
            let s = (y * w + x) * px;
            let d = (dy * ow + dx) * px;
            out[d..d + px].copy_from_slice(&img.pixels[s..s + px]);
        }
    }
    (ow as u32, oh as u32, out)
}

fn mean_abs_diff(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let sum: u64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    sum as f64 / a.len() as f64
}

fn decode_all(bytes: &[u8]) -> (jpeg::JpegHeader, DecodedImage) {
    let l = Limits::default();
    let h = jpeg::read_header(bytes, &l).unwrap();
    let img = jpeg::decode(bytes, &h, &l).unwrap();
    (h, img)
}

#[test]
fn exif_samples_lose_metadata_and_gain_orientation() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let base = dir.join("jpeg/exif-orientation-examples");
    let limits = Limits::default();
    let upright = {
        let bytes = std::fs::read(base.join("Landscape_1.jpg")).unwrap();
        decode_all(&bytes).1
    };
    let mut checked = 0;
    for (file, tag) in [
        ("Landscape_1.jpg", 1u8),
        ("Landscape_6.jpg", 6),
        ("Portrait_8.jpg", 8),
    ] {
        let bytes = std::fs::read(base.join(file)).unwrap();
        let (head, stored) = decode_all(&bytes);
        assert_eq!(head.orientation.value(), tag, "{file}: orientation read");
        // The samples carry EXIF (APP1); the output carries no APPn but APP0 and no COM.
        assert!(
            jpeg_markers(&bytes).unwrap().contains(&0xE1),
            "{file} has EXIF"
        );
        let out = normalize(MediaType::Jpeg, &bytes, &limits).unwrap();
        assert!(no_metadata(&out.bytes), "{file}: metadata left");
        for needle in [&b"Exif\0\0"[..], b"http://ns.adobe.com/xap", b"ICC_PROFILE"] {
            assert!(
                !out.bytes.windows(needle.len()).any(|w| w == needle),
                "{file}: {needle:?} left"
            );
        }
        let (out_head, normalized) = decode_all(&out.bytes);
        assert_eq!(out_head.orientation, Orientation::UPRIGHT);
        let (rw, rh, reference) = rotate_reference(&stored, tag);
        assert_eq!(
            (normalized.width, normalized.height),
            (rw, rh),
            "{file}: dimensions"
        );
        let diff = mean_abs_diff(&normalized.pixels, &reference);
        eprintln!("{file}: orientation {tag}, {rw}x{rh}, mean |diff| vs rotated decode {diff:.2}");
        assert!(
            diff < 2.5,
            "{file}: pixels differ from the rotated decode ({diff:.2})"
        );
        // Landscape_* show the same picture: once upright they match each other roughly.
        if file.starts_with("Landscape") {
            let d = mean_abs_diff(&normalized.pixels, &upright.pixels);
            eprintln!("{file}: mean |diff| vs upright Landscape_1 {d:.2}");
            assert!(
                d < 8.0,
                "{file}: does not look like the upright sample ({d:.2})"
            );
        }
        checked += 1;
    }
    eprintln!("exif samples: {checked} checked");
}

#[test]
fn generated_orientations_all_apply() {
    let l = Limits::default();
    for tag in 1..=8u16 {
        let src = samples::jpeg_rgb(24, 16, Some(tag));
        let (head, stored) = decode_all(&src);
        assert_eq!(head.orientation.value() as u16, tag);
        let out = normalize(MediaType::Jpeg, &src, &l).unwrap();
        let (_, normalized) = decode_all(&out.bytes);
        let (rw, rh, reference) = rotate_reference(&stored, tag as u8);
        assert_eq!((normalized.width, normalized.height), (rw, rh), "tag {tag}");
        let diff = mean_abs_diff(&normalized.pixels, &reference);
        assert!(diff < 4.0, "tag {tag}: {diff:.2}");
    }
}

#[test]
fn dimension_limits_from_the_frame_header() {
    let l = Limits::default();
    // At the limit: the header is accepted.
    for (w, h) in [(8192u16, 2441u16), (2441, 8192), (5000, 4000)] {
        let hdr = samples::jpeg_header_only(w, h);
        let mut with_sos = hdr.clone();
        with_sos.extend_from_slice(&[0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0]);
        assert!(jpeg::read_header(&with_sos, &l).is_ok(), "{w}x{h}");
    }
    // One past: rejected from the header alone (no scan, no tables follow).
    for (w, h) in [(8193u16, 1u16), (1, 8193), (5000, 4001), (65535, 65535)] {
        assert_eq!(
            normalize(MediaType::Jpeg, &samples::jpeg_header_only(w, h), &l).map(|_| ()),
            Err(ReasonCode::ImageTooLarge),
            "{w}x{h}"
        );
    }
    // Full normalization at the dimension edge (few pixels).
    for (w, h) in [(8192u16, 8u16), (8, 8192)] {
        let out = normalize(MediaType::Jpeg, &samples::jpeg_rgb(w, h, None), &l).unwrap();
        let hdr = jpeg::read_header(&out.bytes, &l).unwrap();
        assert_eq!((hdr.width, hdr.height), (u32::from(w), u32::from(h)));
    }
}

#[test]
fn truncations_never_panic() {
    let l = Limits::default();
    let img = samples::jpeg_rgb(16, 16, Some(6));
    let mut admitted = 0;
    for cut in 0..img.len() {
        if normalize(MediaType::Jpeg, &img[..cut], &l).is_ok() {
            admitted += 1;
        }
    }
    eprintln!(
        "jpeg truncations: {} checked, {admitted} still decodable",
        img.len()
    );
}

/// Fuzzing found (attach_jpeg, 2026-11-30): zune-jpeg 0.5.15 panics in its IDCT on these
/// inputs (`idct_avx2_4x4` / `idct_avx2` `Option::unwrap` on `None`, scalar `idct4x4` slice
/// index out of range). The panics stay inside `catch_unwind`: each file is rejected as
/// `image_decode_failed` and nothing escapes.
#[test]
fn regression_zune_idct_panics_are_contained() {
    let dir = agentx_test_support::workspace_root().join("corpus/attach_jpeg");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("regress-zune-idct") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            normalize(MediaType::Jpeg, &bytes, &Limits::default()).map(|_| ()),
            Err(ReasonCode::ImageDecodeFailed),
            "{name}"
        );
        checked += 1;
    }
    eprintln!("zune-jpeg IDCT panic regressions: {checked} checked");
    assert_eq!(checked, 4);
}
