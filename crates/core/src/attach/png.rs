//! PNG normalization (PROFILE §6a): header limits before any pixel, decode with zune-png,
//! re-encode IHDR/IDAT/IEND only (`png_write`).
//!
//! Owns the PNG chunk walk and the zune-png calls. Ancillary chunks (text, EXIF, ICC, APNG
//! frames, everything lowercase) are dropped *before* the decoder sees the file: zune-png would
//! otherwise inflate `zTXt`/`iCCP` with a 1 GiB limit, a decompression bomb that the pixel
//! limits do not bound. The IDAT stream itself is inflated with a limit derived from IHDR.
//! Never resizes; never panics on input (the decoder runs under `catch_unwind`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use zune_core::bit_depth::BitDepth;
use zune_core::bytestream::ZCursor;
use zune_core::options::DecoderOptions;
use zune_png::PngDecoder;

use super::image::{check_dimensions, DecodedImage, SampleDepth};
use super::limits::Limits;
use super::png_write;
use super::reason::ReasonCode;

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// IHDR fields, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PngHeader {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bits per sample (1, 2, 4, 8 or 16).
    pub bit_depth: u8,
    /// PNG color type (0, 2, 3, 4 or 6).
    pub color_type: u8,
}

/// Reads the signature and IHDR only, and checks the dimension limits (`image_too_large`)
/// before anything else about the file is looked at.
pub fn read_header(bytes: &[u8], limits: &Limits) -> Result<PngHeader, ReasonCode> {
    if bytes.get(..8) != Some(&SIGNATURE[..]) {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    let len = be32(bytes, 8)?;
    if len != 13 || bytes.get(12..16) != Some(&b"IHDR"[..]) {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    let width = be32(bytes, 16)?;
    let height = be32(bytes, 20)?;
    if width == 0 || height == 0 || width > 0x7FFF_FFFF || height > 0x7FFF_FFFF {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    check_dimensions(width, height, limits)?;
    let field = |i: usize| bytes.get(i).copied().ok_or(ReasonCode::ImageDecodeFailed);
    let bit_depth = field(24)?;
    let color_type = field(25)?;
    let allowed: &[u8] = match color_type {
        0 => &[1, 2, 4, 8, 16],
        3 => &[1, 2, 4, 8],
        2 | 4 | 6 => &[8, 16],
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    if !allowed.contains(&bit_depth) || field(26)? != 0 || field(27)? != 0 || field(28)? > 1 {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    Ok(PngHeader {
        width,
        height,
        bit_depth,
        color_type,
    })
}

fn be32(bytes: &[u8], at: usize) -> Result<u32, ReasonCode> {
    bytes
        .get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_be_bytes)
        .ok_or(ReasonCode::ImageDecodeFailed)
}

/// Walks every chunk and returns a PNG made of the critical chunks plus `tRNS` (which carries
/// pixel values, not metadata), in their order. Structure errors are `image_decode_failed`:
/// a truncated chunk, a non-letter chunk type, an unknown critical chunk, IDAT chunks that are
/// not consecutive, a missing IDAT, PLTE or IEND, PLTE after IDAT or in a greyscale image.
/// CRCs of kept chunks are verified by the decoder; dropped chunks are not read.
pub fn strip_ancillary(bytes: &[u8], header: &PngHeader) -> Result<Vec<u8>, ReasonCode> {
    let fail = ReasonCode::ImageDecodeFailed;
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(SIGNATURE);
    let mut pos = 8usize;
    let mut seen_plte = false;
    let mut idat_state = 0u8; // 0 none yet, 1 inside the run, 2 run ended
    let mut first = true;
    loop {
        let len = be32(bytes, pos)? as usize;
        if len > 0x7FFF_FFFF {
            return Err(fail);
        }
        let kind: [u8; 4] = bytes
            .get(pos + 4..pos + 8)
            .and_then(|b| b.try_into().ok())
            .ok_or(fail)?;
        let end = pos
            .checked_add(12)
            .and_then(|p| p.checked_add(len))
            .ok_or(fail)?;
        let whole = bytes.get(pos..end).ok_or(fail)?;
        if !kind.iter().all(u8::is_ascii_alphabetic) {
            return Err(fail);
        }
        if first != (&kind == b"IHDR") {
            return Err(fail);
        }
        first = false;
        if idat_state == 1 && &kind != b"IDAT" {
            idat_state = 2;
        }
        let keep = match &kind {
            b"IHDR" => true,
            b"PLTE" => {
                if seen_plte || idat_state != 0 || header.color_type == 0 || header.color_type == 4
                {
                    return Err(fail);
                }
                seen_plte = true;
                true
            }
            b"IDAT" => {
                if idat_state == 2 || (header.color_type == 3 && !seen_plte) {
                    return Err(fail);
                }
                idat_state = 1;
                true
            }
            b"IEND" => {
                if idat_state == 0 {
                    return Err(fail);
                }
                out.extend_from_slice(whole);
                return Ok(out);
            }
            b"tRNS" => idat_state == 0,
            _ if kind[0].is_ascii_uppercase() => return Err(fail),
            _ => false,
        };
        if keep {
            out.extend_from_slice(whole);
        }
        pos = end;
    }
}

/// Decodes `bytes` (the exact signature first, else `image_decode_failed`) and re-encodes its
/// pixels with no ancillary chunk.
pub fn normalize(bytes: &[u8], limits: &Limits) -> Result<Vec<u8>, ReasonCode> {
    let image = decode(bytes, limits)?;
    encode(&image)
}

/// [`normalize`] of bytes the caller gives up: they are freed once their ancillary chunks
/// are stripped, and the stripped copy once the pixels are decoded, so at most one encoded
/// copy is alive beside the pixels.
pub fn normalize_owned(bytes: Vec<u8>, limits: &Limits) -> Result<Vec<u8>, ReasonCode> {
    let header = read_header(&bytes, limits)?;
    let stripped = strip_ancillary(&bytes, &header)?;
    drop(bytes);
    let image = decode_stripped(stripped, &header, limits)?;
    encode(&image)
}

/// Header check, chunk strip and full decode: the pixels exactly as zune-png yields them
/// (palette expanded, `tRNS` as alpha, 16-bit samples big-endian).
pub fn decode(bytes: &[u8], limits: &Limits) -> Result<DecodedImage, ReasonCode> {
    let header = read_header(bytes, limits)?;
    let stripped = strip_ancillary(bytes, &header)?;
    decode_stripped(stripped, &header, limits)
}

/// The full decode of a stripped file (dropped as soon as its pixels exist).
fn decode_stripped(
    stripped: Vec<u8>,
    header: &PngHeader,
    limits: &Limits,
) -> Result<DecodedImage, ReasonCode> {
    let max = limits.max_image_dimension as usize;
    let options = DecoderOptions::default()
        .set_max_width(max)
        .set_max_height(max)
        .png_set_confirm_crc(true)
        .inflate_set_confirm_adler(true)
        .png_set_decode_animated(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut decoder = PngDecoder::new_with_options(ZCursor::new(&stripped[..]), options);
        decoder.decode_headers().ok()?;
        let colorspace = decoder.colorspace()?;
        let depth = decoder.depth()?;
        let pixels = decoder.decode_raw().ok()?;
        Some((colorspace, depth, pixels))
    }));
    drop(stripped);
    let (colorspace, depth, pixels) = match result {
        Ok(Some(decoded)) => decoded,
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    let depth = match depth {
        BitDepth::Eight => SampleDepth::Eight,
        BitDepth::Sixteen => SampleDepth::Sixteen,
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    let image = DecodedImage {
        width: header.width,
        height: header.height,
        colorspace,
        depth,
        pixels,
    };
    image.check_len()?;
    Ok(image)
}

/// Encodes decoded pixels (8-bit, or 16-bit big-endian) as a minimal deflated PNG:
/// IHDR, IDAT, IEND.
pub fn encode(image: &DecodedImage) -> Result<Vec<u8>, ReasonCode> {
    png_write::encode(image)
}
