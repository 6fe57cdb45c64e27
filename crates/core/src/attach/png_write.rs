//! The PNG writer used for normalized output: IHDR, one compressed IDAT stream (split into
//! 1 MiB chunks), IEND, and nothing else (PROFILE §6a).
//!
//! zune-png's encoder writes its zlib stream with stored (uncompressed) blocks only, so a
//! normalized PNG would be as large as its raw pixels and a 7-megapixel RGB screenshot would
//! pass the 20 MiB item limit after normalization. This writer filters each row (the
//! minimum-sum-of-absolute-differences heuristic over the five PNG filters) and deflates
//! with miniz_oxide. Owns encoding only; never reads input.

use super::image::{DecodedImage, SampleDepth};
use super::reason::ReasonCode;
use zune_core::colorspace::ColorSpace;

const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";
const IDAT_CHUNK: usize = 1 << 20;
/// miniz_oxide level: 6 is zlib's default trade-off.
const LEVEL: u8 = 6;

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[n] = c;
        n += 1;
    }
    table
};

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for part in parts {
        for &b in *part {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
        }
    }
    !c
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(&[kind, data]).to_be_bytes());
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// Appends `row` filtered with `filter` (0–4) against `prev` (all zero for the first row).
fn filter_row(filter: u8, row: &[u8], prev: &[u8], bpp: usize, out: &mut Vec<u8>) {
    out.push(filter);
    for i in 0..row.len() {
        let a = if i >= bpp { row[i - bpp] } else { 0 };
        let b = prev[i];
        let c = if i >= bpp { prev[i - bpp] } else { 0 };
        let predicted = match filter {
            0 => 0,
            1 => a,
            2 => b,
            3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
            _ => paeth(a, b, c),
        };
        out.push(row[i].wrapping_sub(predicted));
    }
}

fn cost(filtered: &[u8]) -> u64 {
    filtered[1..]
        .iter()
        .map(|&v| u64::from((v as i8).unsigned_abs()))
        .sum()
}

/// Encodes decoded pixels (8-bit, or 16-bit big-endian) as a minimal PNG.
pub fn encode(image: &DecodedImage) -> Result<Vec<u8>, ReasonCode> {
    let color_type = match image.colorspace {
        ColorSpace::Luma => 0u8,
        ColorSpace::RGB => 2,
        ColorSpace::LumaA => 4,
        ColorSpace::RGBA => 6,
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    let depth = match image.depth {
        SampleDepth::Eight => 8u8,
        SampleDepth::Sixteen => 16,
    };
    image.check_len()?;
    let bpp = image.pixel_bytes();
    let stride = image.width as usize * bpp;
    let height = image.height as usize;
    if stride == 0 || height == 0 {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    let mut filtered = Vec::with_capacity((stride + 1) * height);
    let zero = vec![0u8; stride];
    let mut trial = Vec::with_capacity(stride + 1);
    let mut best = Vec::with_capacity(stride + 1);
    for y in 0..height {
        let row = &image.pixels[y * stride..(y + 1) * stride];
        let prev = if y == 0 {
            &zero[..]
        } else {
            &image.pixels[(y - 1) * stride..y * stride]
        };
        let mut best_cost = u64::MAX;
        for f in 0..5u8 {
            trial.clear();
            filter_row(f, row, prev, bpp, &mut trial);
            let c = cost(&trial);
            if c < best_cost {
                best_cost = c;
                std::mem::swap(&mut best, &mut trial);
            }
        }
        filtered.extend_from_slice(&best);
    }
    let compressed = miniz_oxide::deflate::compress_to_vec_zlib(&filtered, LEVEL);
    drop(filtered);
    let mut out = Vec::with_capacity(compressed.len() + 64);
    out.extend_from_slice(SIGNATURE);
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&image.width.to_be_bytes());
    ihdr[4..8].copy_from_slice(&image.height.to_be_bytes());
    ihdr[8] = depth;
    ihdr[9] = color_type;
    chunk(&mut out, b"IHDR", &ihdr);
    for part in compressed.chunks(IDAT_CHUNK) {
        chunk(&mut out, b"IDAT", part);
    }
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_matches_the_png_reference_value() {
        // CRC of the IEND chunk type is the well-known AE 42 60 82.
        assert_eq!(crc32(&[b"IEND"]), 0xAE42_6082);
    }
}
