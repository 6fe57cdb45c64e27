//! Attachment admission costs: chunk admission throughput and the normalization
//! time of 20-megapixel images.
//!
//! - `attach_chunks` (`Throughput::Bytes` = decoded payload bytes, 16 MiB cut into
//!   262,144-byte chunks of 349,528 base64 characters): `admit` is
//!   `ChunkedPayload::admit_chunk` for every chunk plus `finish` (strict decode + running
//!   SHA-256 + buffering + digest check); the peers on the same chunks are `base64_only`
//!   (base64-simd strict decode into a reused buffer) and `sha256_only` (the digest of the
//!   already-decoded bytes), to show what each part costs.
//! - `attach_normalize` (`Throughput::Bytes` = decoded RGB pixel bytes): `png_20mp` and
//!   `jpeg_20mp` run `attach::normalize` on a 5000 × 4000 RGB gradient generated here (header
//!   check, decode, re-encode, digest). 10 flat samples each.
//!
//! Run: `cargo bench --bench attach` (about a minute and a half).

use std::hint::black_box;
use std::time::Duration;

use agentx_core::attach::limits::Limits;
use agentx_core::attach::{normalize, ChunkedPayload, MediaType, Sha256Digest};
use agentx_core::fuzzing::attach::samples;
use base64_simd::{Out, STANDARD};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

const PAYLOAD: usize = 16 << 20;
const CHUNK: usize = 262_144;

fn chunk_admission(c: &mut Criterion) {
    let payload = samples::pattern(PAYLOAD / 3, 1, 3);
    let digest = Sha256Digest::of(&payload);
    let chunks: Vec<String> = payload
        .chunks(CHUNK)
        .map(|p| STANDARD.encode_to_string(p))
        .collect();
    let limits = Limits::default();
    let mut g = c.benchmark_group("attach_chunks");
    g.throughput(Throughput::Bytes(payload.len() as u64));
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(3));
    g.bench_function("admit", |b| {
        b.iter(|| {
            let mut p = ChunkedPayload::new(payload.len() as u64, digest, &limits).unwrap();
            for (i, text) in chunks.iter().enumerate() {
                p.admit_chunk(i as u64, black_box(text.as_bytes())).unwrap();
            }
            black_box(p.finish().unwrap().len())
        })
    });
    let mut scratch = vec![0u8; CHUNK];
    g.bench_function("base64_only", |b| {
        b.iter(|| {
            let mut n = 0;
            for text in &chunks {
                n += STANDARD
                    .decode(black_box(text.as_bytes()), Out::from_slice(&mut scratch))
                    .unwrap()
                    .len();
            }
            black_box(n)
        })
    });
    g.bench_function("sha256_only", |b| {
        b.iter(|| black_box(Sha256Digest::of(black_box(&payload))))
    });
    g.finish();
}

fn normalization(c: &mut Criterion) {
    let (w, h) = (5000usize, 4000usize);
    let limits = Limits::default();
    let mut g = c.benchmark_group("attach_normalize");
    g.throughput(Throughput::Bytes((w * h * 3) as u64));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(100));
    g.measurement_time(Duration::from_secs(5));
    let png = samples::png_gradient(w, h);
    eprintln!("png_20mp input: {} bytes", png.len());
    g.bench_function("png_20mp", |b| {
        b.iter(|| black_box(normalize(MediaType::Png, black_box(&png), &limits).unwrap()))
    });
    drop(png);
    let jpeg = samples::jpeg_gradient(w as u16, h as u16, Some(6));
    eprintln!("jpeg_20mp input: {} bytes (EXIF orientation 6)", jpeg.len());
    g.bench_function("jpeg_20mp", |b| {
        b.iter(|| black_box(normalize(MediaType::Jpeg, black_box(&jpeg), &limits).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, chunk_admission, normalization);
criterion_main!(benches);
