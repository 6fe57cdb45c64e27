//! JPEG normalization (PROFILE §6a): SOF dimensions checked before any pixel is decoded,
//! decode with zune-jpeg, EXIF orientation applied to the pixels, re-encode with jpeg-encoder
//! (which writes APP0 JFIF only: EXIF, XMP, ICC, comments are gone).
//!
//! Owns the JPEG marker walk and the tiny EXIF reader for the orientation tag. Never resizes;
//! never panics on input (the codecs run under `catch_unwind`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use jpeg_encoder::{ColorType, Encoder};
use zune_core::bytestream::ZCursor;
use zune_core::colorspace::ColorSpace;
use zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

use super::image::{check_dimensions, DecodedImage, Orientation, SampleDepth};
use super::limits::Limits;
use super::reason::ReasonCode;

/// Re-encoding quality. At 90 and above jpeg-encoder keeps full-resolution chroma (4:4:4).
pub const QUALITY: u8 = 92;

/// What the marker walk learns before the first scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JpegHeader {
    /// Width in pixels (from SOF).
    pub width: u32,
    /// Height in pixels (from SOF).
    pub height: u32,
    /// The EXIF orientation (upright when absent).
    pub orientation: Orientation,
}

/// Walks markers from SOI up to the first SOS. The frame header (SOFn) is checked against the
/// dimension limits the moment it is read (`image_too_large`, before any scan is touched);
/// a zero dimension (DNL), a second frame header, a scan before any frame header, EOI
/// before a scan or a truncated segment is `image_decode_failed`. The first EXIF APP1
/// segment's orientation is kept.
pub fn read_header(bytes: &[u8], limits: &Limits) -> Result<JpegHeader, ReasonCode> {
    let fail = ReasonCode::ImageDecodeFailed;
    if bytes.get(..3) != Some(&[0xFF, 0xD8, 0xFF][..]) {
        return Err(fail);
    }
    let mut pos = 2usize;
    let mut frame: Option<(u32, u32)> = None;
    let mut orientation: Option<Orientation> = None;
    loop {
        // Tolerate stray bytes between segments, then any run of 0xFF fill bytes.
        while *bytes.get(pos).ok_or(fail)? != 0xFF {
            pos += 1;
        }
        while *bytes.get(pos).ok_or(fail)? == 0xFF {
            pos += 1;
        }
        let marker = *bytes.get(pos).ok_or(fail)?;
        pos += 1;
        match marker {
            0x01 | 0xD0..=0xD7 => continue,
            0xD8 | 0xD9 => return Err(fail),
            0xDA => {
                let (width, height) = frame.ok_or(fail)?;
                return Ok(JpegHeader {
                    width,
                    height,
                    orientation: orientation.unwrap_or(Orientation::UPRIGHT),
                });
            }
            _ => {}
        }
        let len = usize::from(u16::from_be_bytes([
            *bytes.get(pos).ok_or(fail)?,
            *bytes.get(pos + 1).ok_or(fail)?,
        ]));
        if len < 2 {
            return Err(fail);
        }
        let segment = bytes.get(pos + 2..pos + len).ok_or(fail)?;
        match marker {
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                if frame.is_some() || segment.len() < 6 {
                    return Err(fail);
                }
                let height = u32::from(u16::from_be_bytes([segment[1], segment[2]]));
                let width = u32::from(u16::from_be_bytes([segment[3], segment[4]]));
                if width == 0 || height == 0 {
                    return Err(fail);
                }
                check_dimensions(width, height, limits)?;
                frame = Some((width, height));
            }
            0xE1 if orientation.is_none() => {
                if let Some(tiff) = segment.strip_prefix(b"Exif\0\0") {
                    orientation = Some(exif_orientation(tiff));
                }
            }
            _ => {}
        }
        pos += len;
    }
}

/// The orientation tag (0x0112) of IFD0 in a TIFF-structured EXIF block; upright when absent
/// or unreadable. Every read is bounds-checked.
pub fn exif_orientation(tiff: &[u8]) -> Orientation {
    read_orientation(tiff).unwrap_or(Orientation::UPRIGHT)
}

fn read_orientation(tiff: &[u8]) -> Option<Orientation> {
    let big = match tiff.get(..4)? {
        b"MM\0*" => true,
        b"II*\0" => false,
        _ => return None,
    };
    let u16_at = |at: usize| -> Option<u16> {
        let b: [u8; 2] = tiff.get(at..at.checked_add(2)?)?.try_into().ok()?;
        Some(if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        })
    };
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = tiff.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let ifd = usize::try_from(u32_at(4)?).ok()?;
    let count = usize::from(u16_at(ifd)?);
    for i in 0..count {
        let entry = ifd.checked_add(2)?.checked_add(i.checked_mul(12)?)?;
        if u16_at(entry)? == 0x0112 {
            // SHORT (type 3), count 1: the value sits in the first two bytes of the field.
            if u16_at(entry + 2)? != 3 {
                return None;
            }
            return Some(Orientation::from_tag(u16_at(entry + 8)?));
        }
    }
    None
}

/// Decodes `bytes` (SOI and a marker first, else `image_decode_failed`), applies the EXIF
/// orientation and re-encodes with no metadata segment.
pub fn normalize(bytes: &[u8], limits: &Limits) -> Result<Vec<u8>, ReasonCode> {
    let header = read_header(bytes, limits)?;
    let image = decode(bytes, &header, limits)?;
    let image = header.orientation.apply(image);
    encode(&image)
}

/// Decodes the pixels as stored (no orientation applied): greyscale stays one component,
/// everything else becomes RGB.
pub fn decode(
    bytes: &[u8],
    header: &JpegHeader,
    limits: &Limits,
) -> Result<DecodedImage, ReasonCode> {
    let max = limits.max_image_dimension as usize;
    let options = DecoderOptions::default()
        .set_max_width(max)
        .set_max_height(max)
        .set_strict_mode(true);
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut decoder = JpegDecoder::new_with_options(ZCursor::new(bytes), options);
        decoder.decode_headers().ok()?;
        let out = match decoder.input_colorspace()? {
            ColorSpace::Luma => ColorSpace::Luma,
            _ => ColorSpace::RGB,
        };
        decoder.set_options(options.jpeg_set_out_colorspace(out));
        let dims = decoder.dimensions()?;
        let pixels = decoder.decode().ok()?;
        Some((out, dims, pixels))
    }));
    let (colorspace, (w, h), pixels) = match result {
        Ok(Some(decoded)) => decoded,
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    if (w, h) != (header.width as usize, header.height as usize) {
        return Err(ReasonCode::ImageDecodeFailed);
    }
    let image = DecodedImage {
        width: header.width,
        height: header.height,
        colorspace,
        depth: SampleDepth::Eight,
        pixels,
    };
    image.check_len()?;
    Ok(image)
}

fn encode(image: &DecodedImage) -> Result<Vec<u8>, ReasonCode> {
    let color = match image.colorspace {
        ColorSpace::Luma => ColorType::Luma,
        ColorSpace::RGB => ColorType::Rgb,
        _ => return Err(ReasonCode::ImageDecodeFailed),
    };
    let (w, h) = (
        u16::try_from(image.width).map_err(|_| ReasonCode::ImageTooLarge)?,
        u16::try_from(image.height).map_err(|_| ReasonCode::ImageTooLarge)?,
    );
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut out = Vec::new();
        Encoder::new(&mut out, QUALITY)
            .encode(&image.pixels, w, h, color)
            .ok()?;
        Some(out)
    }));
    match result {
        Ok(Some(out)) => Ok(out),
        _ => Err(ReasonCode::ImageDecodeFailed),
    }
}
