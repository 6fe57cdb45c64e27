//! Fuzz entry points for attachment admission, and the tiny sample files (generated in code,
//! never copied from a corpus) that seed them, the tests and the benchmark.
//!
//! Properties asserted, beyond "no panic":
//! - `png`: an admitted PNG re-decodes to exactly the pixels of the input, and its output
//!   holds only IHDR/IDAT/IEND;
//! - `jpeg`: an admitted JPEG re-decodes, with the input's dimensions (swapped for EXIF
//!   orientations 5–8), and carries no APPn segment but APP0 JFIF and no COM;
//! - `pdf`: the contained validator answers one of the PDF verdicts and never another code,
//!   and an accepted PDF is stored unchanged;
//! - `chunks`: any bytes, base64-encoded and cut into chunks, reassemble to the same bytes and
//!   digest; a raw chunk is admitted iff it is the canonical encoding of what it decodes to.

use base64_simd::STANDARD;

use crate::attach::image::Orientation;
use crate::attach::limits::Limits;
use crate::attach::{jpeg, normalize, png, ChunkedPayload, MediaType, ReasonCode, Sha256Digest};

/// Source paths of the third-party codecs that admission runs under `catch_unwind` (the
/// registry's `crate-version/` directories).
const CONTAINED_CODECS: [&str; 6] = [
    "/zune-jpeg-",
    "/zune-png-",
    "/zune-core-",
    "/zune-inflate-",
    "/lopdf-",
    "/jpeg-encoder-",
];

/// Keeps a panic raised inside a third-party codec from ending the process, the first time an
/// image or PDF entry point runs. libFuzzer's panic hook aborts on every panic, even one that
/// admission contains and turns into `image_decode_failed` (zune-jpeg 0.5.15's IDCT panics on
/// inputs fuzzing finds within seconds: `tests/store/attach_jpeg.rs`), which ended every
/// `attach_jpeg` campaign at its first such input. The hook installed here stays silent for a
/// panic whose location is in one of [`CONTAINED_CODECS`] and hands every other panic to the
/// hook it replaced; a codec panic that escaped admission would still abort, through
/// libfuzzer-sys's `catch_unwind` around the target.
fn contain_codec_panics() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let outer = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_codec = info
                .location()
                .is_some_and(|at| CONTAINED_CODECS.iter().any(|c| at.file().contains(c)));
            if !in_codec {
                outer(info);
            }
        }));
    });
}

/// Limits for fuzzing: the profile's, with a smaller pixel budget so one input stays fast.
pub fn fuzz_limits() -> Limits {
    Limits {
        max_image_pixels: 1 << 20,
        ..Limits::default()
    }
}

/// PNG path: normalize, then check the round trip; then again with every chunk CRC
/// recomputed, so mutations reach past the CRC checks into the decoder.
pub fn png(data: &[u8]) {
    contain_codec_panics();
    png_round_trip(data);
    let fixed = fix_png_crcs(data);
    if fixed != data {
        png_round_trip(&fixed);
    }
}

/// `data` with the CRC of every complete chunk recomputed.
pub fn fix_png_crcs(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut pos = 8usize;
    while let Some(len) = out
        .get(pos..pos + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
    {
        let Some(end) = pos.checked_add(8).and_then(|p| p.checked_add(len)) else {
            break;
        };
        if end + 4 > out.len() {
            break;
        }
        let crc = samples::crc32(&out[pos + 4..end]);
        out[end..end + 4].copy_from_slice(&crc.to_be_bytes());
        pos = end + 4;
    }
    out
}

fn png_round_trip(data: &[u8]) {
    let limits = fuzz_limits();
    let Ok(out) = normalize(MediaType::Png, data, &limits) else {
        return;
    };
    let before = png::decode(data, &limits).expect("admitted input decodes");
    let after = png::decode(&out.bytes, &limits).expect("normalized PNG decodes");
    assert_eq!(before, after, "normalization changed pixels");
    assert_eq!(png_chunk_types(&out.bytes), Some(only_critical(&out.bytes)));
}

/// The chunk types of a PNG in order (None when the structure is broken).
pub fn png_chunk_types(bytes: &[u8]) -> Option<Vec<[u8; 4]>> {
    let mut pos = 8;
    let mut kinds = Vec::new();
    while pos < bytes.len() {
        let len = u32::from_be_bytes(bytes.get(pos..pos + 4)?.try_into().ok()?) as usize;
        kinds.push(bytes.get(pos + 4..pos + 8)?.try_into().ok()?);
        pos = pos.checked_add(12 + len)?;
    }
    Some(kinds)
}

fn only_critical(bytes: &[u8]) -> Vec<[u8; 4]> {
    let kinds = png_chunk_types(bytes).unwrap_or_default();
    let idat = kinds.iter().filter(|k| *k == b"IDAT").count();
    let mut want = vec![*b"IHDR"];
    want.extend(std::iter::repeat_n(*b"IDAT", idat));
    want.push(*b"IEND");
    want
}

/// The markers of a JPEG up to the first SOS (None when the structure is broken).
pub fn jpeg_markers(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut pos = 2;
    let mut markers = Vec::new();
    loop {
        if *bytes.get(pos)? != 0xFF {
            return None;
        }
        let m = *bytes.get(pos + 1)?;
        markers.push(m);
        if m == 0xDA {
            return Some(markers);
        }
        let len = usize::from(u16::from_be_bytes([
            *bytes.get(pos + 2)?,
            *bytes.get(pos + 3)?,
        ]));
        pos += 2 + len;
    }
}

/// JPEG path: normalize, then check the output is clean and has the right geometry.
pub fn jpeg(data: &[u8]) {
    contain_codec_panics();
    let limits = fuzz_limits();
    let Ok(out) = normalize(MediaType::Jpeg, data, &limits) else {
        return;
    };
    let head_in = jpeg::read_header(data, &limits).expect("admitted input has a header");
    let head_out = jpeg::read_header(&out.bytes, &limits).expect("normalized JPEG has a header");
    let (w, h) = if head_in.orientation.swaps_axes() {
        (head_in.height, head_in.width)
    } else {
        (head_in.width, head_in.height)
    };
    assert_eq!((head_out.width, head_out.height), (w, h));
    assert_eq!(head_out.orientation, Orientation::UPRIGHT);
    let markers = jpeg_markers(&out.bytes).expect("normalized JPEG is well-formed");
    assert!(
        markers
            .iter()
            .all(|&m| m == 0xE0 || !(0xE1..=0xEF).contains(&m) && m != 0xFE),
        "metadata segment survived: {markers:x?}"
    );
    jpeg::decode(&out.bytes, &head_out, &limits).expect("normalized JPEG decodes");
}

/// PDF path: the contained validator.
pub fn pdf(data: &[u8]) {
    contain_codec_panics();
    let limits = fuzz_limits();
    match normalize(MediaType::Pdf, data, &limits) {
        Ok(out) => assert_eq!(out.bytes, data, "a PDF is stored unchanged"),
        Err(code) => assert!(
            matches!(
                code,
                ReasonCode::MimeMismatch
                    | ReasonCode::PdfInvalid
                    | ReasonCode::PdfEncrypted
                    | ReasonCode::PdfTooManyPages
                    | ReasonCode::ProcessFailure
            ),
            "unexpected {code}"
        ),
    }
}

/// Chunk admission: round trip through chunks, and canonicality of a raw chunk.
pub fn chunks(data: &[u8]) {
    let limits = Limits::default();
    // A raw chunk is accepted iff it is canonical.
    if !data.is_empty() && data.len() <= limits.max_chunk_encoded_bytes {
        let decoded = STANDARD.decode_to_vec(data);
        let mut p = ChunkedPayload::new(limits.max_item_bytes, Sha256Digest([0; 32]), &limits)
            .expect("valid declaration");
        let admitted = p.admit_chunk(0, data);
        match decoded {
            Ok(bytes) => {
                assert_eq!(admitted, Ok(()));
                assert_eq!(STANDARD.encode_to_string(&bytes).as_bytes(), data);
            }
            Err(_) => assert_eq!(admitted, Err(ReasonCode::NoncanonicalBase64)),
        }
    }
    // Round trip: the first byte picks the chunk size (a multiple of 3 decoded bytes).
    let Some((&sel, payload)) = data.split_first() else {
        return;
    };
    if payload.is_empty() {
        return;
    }
    let per_chunk = 3 * (usize::from(sel) + 1);
    let digest = Sha256Digest::of(payload);
    let mut p = ChunkedPayload::new(payload.len() as u64, digest, &limits).expect("declaration");
    for (i, piece) in payload.chunks(per_chunk).enumerate() {
        let text = STANDARD.encode_to_string(piece);
        p.admit_chunk(i as u64, text.as_bytes())
            .expect("canonical chunk");
    }
    assert_eq!(p.finish().expect("matches declaration"), payload);
}

/// Sample files generated in code.
pub mod samples {
    use jpeg_encoder::{ColorType, Encoder};
    use zune_core::bit_depth::BitDepth;
    use zune_core::colorspace::ColorSpace;
    use zune_core::options::EncoderOptions;
    use zune_png::PngEncoder;

    /// A deterministic pattern of `w × h` pixels with `channels` bytes each.
    pub fn pattern(w: usize, h: usize, channels: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(w * h * channels);
        for y in 0..h {
            for x in 0..w {
                for c in 0..channels {
                    v.push(((x * 7 + y * 13 + c * 61) ^ (x * y)) as u8);
                }
            }
        }
        v
    }

    /// A smooth RGB image with a little texture (compresses like a screenshot or photo,
    /// not like noise): for the benchmark's 20-megapixel inputs.
    pub fn gradient(w: usize, h: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            for x in 0..w {
                let t = (x ^ y) & 7;
                v.push((x * 255 / w.max(1) + t) as u8);
                v.push((y * 255 / h.max(1) + t) as u8);
                v.push(((x + y) * 127 / (w + h).max(1) + t) as u8);
            }
        }
        v
    }

    /// A `w × h` RGB PNG of `gradient`, deflated (like a real screenshot file).
    pub fn png_gradient(w: usize, h: usize) -> Vec<u8> {
        let image = crate::attach::image::DecodedImage {
            width: w as u32,
            height: h as u32,
            colorspace: ColorSpace::RGB,
            depth: crate::attach::image::SampleDepth::Eight,
            pixels: gradient(w, h),
        };
        crate::attach::png::encode(&image).expect("sample encodes")
    }

    /// A `w × h` RGB JPEG of `gradient`, optionally with an EXIF orientation tag.
    pub fn jpeg_gradient(w: u16, h: u16, orientation: Option<u16>) -> Vec<u8> {
        let pixels = gradient(usize::from(w), usize::from(h));
        let mut out = Vec::new();
        let mut enc = Encoder::new(&mut out, 90);
        if let Some(o) = orientation {
            enc.add_exif_metadata(&exif_orientation(o))
                .expect("exif fits");
        }
        enc.encode(&pixels, w, h, ColorType::Rgb)
            .expect("sample encodes");
        out
    }

    /// An RGB PNG of `w × h`.
    pub fn png_rgb(w: usize, h: usize) -> Vec<u8> {
        let pixels = pattern(w, h, 3);
        let options = EncoderOptions::new(w, h, ColorSpace::RGB, BitDepth::Eight);
        let mut out = Vec::new();
        PngEncoder::new(&pixels, options)
            .encode(&mut out)
            .expect("sample encodes");
        out
    }

    /// A 16-bit grey+alpha PNG of `w × h` (big-endian samples).
    pub fn png_gray_alpha16(w: usize, h: usize) -> Vec<u8> {
        let pixels = pattern(w, h, 4);
        let options = EncoderOptions::new(w, h, ColorSpace::LumaA, BitDepth::Sixteen);
        let mut out = Vec::new();
        PngEncoder::new(&pixels, options)
            .encode(&mut out)
            .expect("sample encodes");
        out
    }

    /// A greyscale JPEG of `w × h`.
    pub fn jpeg_gray(w: u16, h: u16) -> Vec<u8> {
        let pixels = pattern(usize::from(w), usize::from(h), 1);
        let mut out = Vec::new();
        Encoder::new(&mut out, 80)
            .encode(&pixels, w, h, ColorType::Luma)
            .expect("sample encodes");
        out
    }

    /// Inserts an ancillary chunk (with a correct CRC) right after IHDR.
    pub fn png_with_chunk(png: &[u8], kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut out = png[..33].to_vec();
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
        out.extend_from_slice(&png[33..]);
        out
    }

    /// A PNG signature and IHDR only (valid CRC) claiming `w × h`, 8-bit RGB.
    pub fn png_header_only(w: u32, h: u32) -> Vec<u8> {
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut body = b"IHDR".to_vec();
        body.extend_from_slice(&w.to_be_bytes());
        body.extend_from_slice(&h.to_be_bytes());
        body.extend_from_slice(&[8, 2, 0, 0, 0]);
        out.extend_from_slice(&13u32.to_be_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
        out
    }

    /// CRC-32 as PNG uses it (bitwise; samples only).
    pub fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    0xEDB8_8320 ^ (crc >> 1)
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    /// An RGB JPEG of `w × h`, optionally with an EXIF orientation tag.
    pub fn jpeg_rgb(w: u16, h: u16, orientation: Option<u16>) -> Vec<u8> {
        let pixels = pattern(usize::from(w), usize::from(h), 3);
        let mut out = Vec::new();
        let mut enc = Encoder::new(&mut out, 90);
        if let Some(o) = orientation {
            enc.add_exif_metadata(&exif_orientation(o))
                .expect("exif fits");
        }
        enc.encode(&pixels, w, h, ColorType::Rgb)
            .expect("sample encodes");
        out
    }

    /// A little-endian TIFF block with IFD0 holding only the orientation tag.
    pub fn exif_orientation(o: u16) -> Vec<u8> {
        let mut t = b"II*\0".to_vec();
        t.extend_from_slice(&8u32.to_le_bytes());
        t.extend_from_slice(&1u16.to_le_bytes());
        t.extend_from_slice(&0x0112u16.to_le_bytes());
        t.extend_from_slice(&3u16.to_le_bytes());
        t.extend_from_slice(&1u32.to_le_bytes());
        t.extend_from_slice(&o.to_le_bytes());
        t.extend_from_slice(&[0, 0]);
        t.extend_from_slice(&0u32.to_le_bytes());
        t
    }

    /// A JPEG SOI plus a baseline frame header claiming `w × h` (no scan).
    pub fn jpeg_header_only(w: u16, h: u16) -> Vec<u8> {
        let mut out = vec![0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x0B, 8];
        out.extend_from_slice(&h.to_be_bytes());
        out.extend_from_slice(&w.to_be_bytes());
        out.extend_from_slice(&[1, 1, 0x11, 0]);
        out
    }

    /// A well-formed PDF with `pages` empty pages and a correct cross-reference table.
    pub fn pdf_with_pages(pages: usize) -> Vec<u8> {
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        let n_objects = 2 + pages;
        offsets.push(out.len());
        out.extend_from_slice(b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n");
        offsets.push(out.len());
        let kids: Vec<String> = (0..pages).map(|i| format!("{} 0 R", i + 3)).collect();
        out.extend_from_slice(
            format!(
                "2 0 obj\n<< /Type /Pages /Kids [{}] /Count {} >>\nendobj\n",
                kids.join(" "),
                pages
            )
            .as_bytes(),
        );
        for i in 0..pages {
            offsets.push(out.len());
            out.extend_from_slice(
                format!(
                    "{} 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>\nendobj\n",
                    i + 3
                )
                .as_bytes(),
            );
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", n_objects + 1).as_bytes(),
        );
        for off in offsets {
            out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{}\n%%EOF\n",
                n_objects + 1,
                xref
            )
            .as_bytes(),
        );
        out
    }

    /// Every fuzz seed: (target, file name, bytes). Small by construction.
    pub fn seeds() -> Vec<(&'static str, &'static str, Vec<u8>)> {
        let png_small = png_rgb(4, 3);
        vec![
            ("attach_png", "rgb_4x3.png", png_small.clone()),
            (
                "attach_png",
                "rgb_with_text.png",
                png_with_chunk(&png_small, b"tEXt", b"Comment\0hello"),
            ),
            ("attach_png", "header_only.png", png_header_only(2, 2)),
            ("attach_png", "gray_alpha16_3x2.png", png_gray_alpha16(3, 2)),
            ("attach_jpeg", "rgb_8x8.jpg", jpeg_rgb(8, 8, None)),
            (
                "attach_jpeg",
                "rgb_9x5_orient6.jpg",
                jpeg_rgb(9, 5, Some(6)),
            ),
            ("attach_jpeg", "header_only.jpg", jpeg_header_only(3, 3)),
            ("attach_jpeg", "gray_17x9.jpg", jpeg_gray(17, 9)),
            ("attach_pdf", "one_page.pdf", pdf_with_pages(1)),
            ("attach_pdf", "three_pages.pdf", pdf_with_pages(3)),
            ("attach_chunks", "text", b"\x02hello, attachment".to_vec()),
            ("attach_chunks", "canonical", b"Zm9vYmE=".to_vec()),
            ("attach_chunks", "noncanonical", b"Zm9vYmF=".to_vec()),
        ]
    }
}
