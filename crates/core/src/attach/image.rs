//! What PNG and JPEG normalization share: the dimension/pixel limits checked from a header
//! before any pixel is decoded (PROFILE §6a), a decoded image value, and EXIF orientation
//! applied to pixels.
//!
//! Owns pixel geometry only; never decodes or encodes a file format.

use zune_core::colorspace::ColorSpace;

use super::limits::Limits;
use super::reason::ReasonCode;

/// Bytes per sample of decoded pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleDepth {
    /// One byte per sample.
    Eight,
    /// Big-endian 16-bit samples (PNG order).
    Sixteen,
}

/// Decoded pixels, row-major, interleaved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The channels per pixel.
    pub colorspace: ColorSpace,
    /// Bytes per sample.
    pub depth: SampleDepth,
    /// The samples, row-major, interleaved.
    pub pixels: Vec<u8>,
}

impl DecodedImage {
    /// Bytes per pixel.
    pub fn pixel_bytes(&self) -> usize {
        let sample = match self.depth {
            SampleDepth::Eight => 1,
            SampleDepth::Sixteen => 2,
        };
        self.colorspace.num_components() * sample
    }

    /// `image_decode_failed` unless the buffer holds exactly width × height pixels.
    pub fn check_len(&self) -> Result<(), ReasonCode> {
        let want = (self.width as usize)
            .checked_mul(self.height as usize)
            .and_then(|n| n.checked_mul(self.pixel_bytes()));
        if want == Some(self.pixels.len()) {
            Ok(())
        } else {
            Err(ReasonCode::ImageDecodeFailed)
        }
    }
}

/// PROFILE §6a: `max_dimension` for each side and `max_pixels` for the product, from the
/// header alone; oversize is `image_too_large` (never resized).
pub fn check_dimensions(width: u32, height: u32, limits: &Limits) -> Result<(), ReasonCode> {
    let max = limits.max_image_dimension;
    if width > max || height > max || u64::from(width) * u64::from(height) > limits.max_image_pixels
    {
        return Err(ReasonCode::ImageTooLarge);
    }
    Ok(())
}

/// The EXIF orientation tag (1–8; anything else is treated as 1, "as stored").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Orientation(u8);

impl Orientation {
    /// Tag value 1: as stored.
    pub const UPRIGHT: Orientation = Orientation(1);

    /// Orientation from the tag value; out-of-range values mean upright.
    pub fn from_tag(value: u16) -> Orientation {
        match value {
            1..=8 => Orientation(value as u8),
            _ => Orientation::UPRIGHT,
        }
    }

    /// The tag value, 1–8.
    pub fn value(self) -> u8 {
        self.0
    }

    /// True for 5–8, which exchange width and height.
    pub fn swaps_axes(self) -> bool {
        self.0 >= 5
    }

    /// Applies the orientation to the pixels so the image looks as a viewer honouring the
    /// tag would show it; the result is upright (orientation 1).
    pub fn apply(self, image: DecodedImage) -> DecodedImage {
        if self.0 == 1 {
            return image;
        }
        let (w, h) = (image.width as usize, image.height as usize);
        let px = image.pixel_bytes();
        let (ow, oh) = if self.swaps_axes() { (h, w) } else { (w, h) };
        let mut out = vec![0u8; image.pixels.len()];
        for (oy, row) in out.chunks_exact_mut(ow * px).enumerate() {
            for (ox, dst) in row.chunks_exact_mut(px).enumerate() {
                // Source coordinates of output pixel (ox, oy).
                let (sx, sy) = match self.0 {
                    2 => (w - 1 - ox, oy),
                    3 => (w - 1 - ox, h - 1 - oy),
                    4 => (ox, h - 1 - oy),
                    5 => (oy, ox),
                    6 => (oy, h - 1 - ox),
                    7 => (w - 1 - oy, h - 1 - ox),
                    _ => (w - 1 - oy, ox), // 8
                };
                let at = (sy * w + sx) * px;
                if let Some(src) = image.pixels.get(at..at + px) {
                    dst.copy_from_slice(src);
                }
            }
        }
        DecodedImage {
            width: ow as u32,
            height: oh as u32,
            pixels: out,
            ..image
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> DecodedImage {
        // 3 wide, 2 high, one byte per pixel:
        // a b c
        // d e f
        DecodedImage {
            width: 3,
            height: 2,
            colorspace: ColorSpace::Luma,
            depth: SampleDepth::Eight,
            pixels: b"abcdef".to_vec(),
        }
    }

    #[test]
    fn every_orientation_maps_corners() {
        let cases: [(u16, u32, &[u8]); 8] = [
            (1, 3, b"abcdef"),
            (2, 3, b"cbafed"),
            (3, 3, b"fedcba"),
            (4, 3, b"defabc"),
            (5, 2, b"adbecf"),
            (6, 2, b"daebfc"), // rotate 90° clockwise
            (7, 2, b"fcebda"),
            (8, 2, b"cfbead"), // rotate 90° counter-clockwise
        ];
        for (tag, width, want) in cases {
            let out = Orientation::from_tag(tag).apply(grid());
            assert_eq!(out.width, width, "orientation {tag}");
            assert_eq!(out.pixels, want, "orientation {tag}");
        }
    }

    #[test]
    fn dimension_limits_at_and_past_the_edge() {
        let l = Limits::default();
        assert_eq!(check_dimensions(8192, 2441, &l), Ok(())); // 19,996,672 px
        assert_eq!(
            check_dimensions(8193, 1, &l),
            Err(ReasonCode::ImageTooLarge)
        );
        assert_eq!(
            check_dimensions(1, 8193, &l),
            Err(ReasonCode::ImageTooLarge)
        );
        assert_eq!(check_dimensions(5000, 4000, &l), Ok(())); // exactly 20,000,000
        assert_eq!(
            check_dimensions(5000, 4001, &l),
            Err(ReasonCode::ImageTooLarge)
        );
    }
}
