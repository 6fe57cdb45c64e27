//! The SIMD newline finder: every backend this CPU supports against the scalar twin and
//! against `memchr`, on random, adversarial and page-boundary inputs.

use agentx_wire::frame::split::{self, Backend, Splitter};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Checks every operation of every available backend on `hay`; returns the number of checks.
fn check_all(hay: &[u8]) -> usize {
    let want_find = memchr::memchr(b'\n', hay);
    let want_pos: Vec<usize> = memchr::memchr_iter(b'\n', hay).collect();
    let scalar = Splitter::for_backend(Backend::Scalar).expect("scalar always available");
    let mut checks = 0;
    for s in Splitter::available() {
        let name = s.backend().name();
        assert_eq!(s.find(hay), want_find, "{name} find, len {}", hay.len());
        assert_eq!(s.find(hay), scalar.find(hay), "{name} vs scalar find");
        assert_eq!(
            s.count(hay),
            want_pos.len(),
            "{name} count, len {}",
            hay.len()
        );
        let got: Vec<usize> = s.newlines(hay).collect();
        assert_eq!(got, want_pos, "{name} positions, len {}", hay.len());
        let mut bulk = vec![usize::MAX];
        s.newline_positions(hay, &mut bulk);
        assert_eq!(bulk[1..], want_pos[..], "{name} bulk positions");
        checks += 5;
    }
    checks
}

#[test]
fn every_backend_this_cpu_has_is_tested() {
    let names: Vec<&str> = Splitter::available()
        .iter()
        .map(|s| s.backend().name())
        .collect();
    eprintln!(
        "backends available: {names:?}; detected: {}",
        split::backend_name()
    );
    assert!(names.contains(&"scalar"));
    #[cfg(target_arch = "x86_64")]
    {
        assert!(names.contains(&"sse2"));
        if std::is_x86_feature_detected!("avx2") {
            assert!(names.contains(&"avx2"));
        }
        if std::is_x86_feature_detected!("avx512bw") {
            assert!(names.contains(&"avx512bw"));
            assert_eq!(split::backend_name(), "avx512bw");
        }
    }
    for b in Backend::ALL {
        let got = split::find_newline_with(b, b"ab\ncd");
        assert!(got.is_none() || got == Some(Some(2)), "{b:?}");
    }
}

#[test]
fn newline_at_every_offset() {
    let mut checks = 0;
    for len in 0..=200 {
        for at in 0..len {
            let mut hay = vec![b'x'; len];
            hay[at] = b'\n';
            checks += check_all(&hay);
            // Two newlines: the second up to 70 bytes after the first (same or next block).
            for second in (at + 1..len.min(at + 71)).step_by(11) {
                let mut two = hay.clone();
                two[second] = b'\n';
                checks += check_all(&two);
            }
        }
    }
    eprintln!("newline_at_every_offset: {checks} checks");
}

#[test]
fn none_and_all_newlines() {
    let mut checks = 0;
    for len in 0..=300 {
        checks += check_all(&vec![b'a'; len]);
        checks += check_all(&vec![b'\n'; len]);
        // Bytes one bit away from LF, and bytes with the high bit set.
        checks += check_all(&vec![0x0b; len]);
        checks += check_all(&vec![0x8a; len]);
        checks += check_all(&vec![0x00; len]);
        checks += check_all(&vec![0xff; len]);
    }
    eprintln!("none_and_all_newlines: {checks} checks");
}

#[test]
fn every_start_offset_of_a_slice() {
    // Misaligned starts and ends: sub-slices of one buffer at every offset pair near the edges.
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let buf: Vec<u8> = (0..512)
        .map(|_| if rng.below(9) == 0 { b'\n' } else { b'q' })
        .collect();
    let mut checks = 0;
    for start in 0..70 {
        for end in (buf.len() - 70..=buf.len()).step_by(3) {
            checks += check_all(&buf[start..end]);
        }
    }
    eprintln!("every_start_offset_of_a_slice: {checks} checks");
}

#[test]
fn page_boundaries() {
    // Slices ending exactly at, just before and just after 4 KiB boundaries, with newlines
    // as the last byte, the first byte of the next page, and nowhere.
    let page = 4096;
    let mut checks = 0;
    for nl_at in [
        None,
        Some(page - 1),
        Some(page),
        Some(2 * page - 1),
        Some(0),
    ] {
        let mut buf = vec![b'z'; 3 * page];
        if let Some(i) = nl_at {
            buf[i] = b'\n';
        }
        for end in [
            page - 1,
            page,
            page + 1,
            2 * page - 1,
            2 * page,
            2 * page + 1,
            3 * page,
        ] {
            for start in [0, 1, 63, 64, 65, page - 64, page - 1] {
                if start <= end {
                    checks += check_all(&buf[start..end]);
                }
            }
        }
    }
    eprintln!("page_boundaries: {checks} checks");
}

#[test]
fn random_inputs_at_many_densities() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut checks = 0;
    for round in 0..3000 {
        let len = match round % 4 {
            0 => rng.below(64),
            1 => rng.below(300),
            2 => rng.below(5000),
            _ => 60_000 + rng.below(10_000),
        };
        let density = [2, 5, 40, 300, 5000, usize::MAX][rng.below(6)];
        let hay: Vec<u8> = (0..len)
            .map(|_| {
                if density != usize::MAX && rng.below(density) == 0 {
                    b'\n'
                } else {
                    // Any byte, LF included (1 in 256).
                    rng.next() as u8
                }
            })
            .collect();
        checks += check_all(&hay);
    }
    eprintln!("random_inputs_at_many_densities: {checks} checks");
}

#[test]
fn free_functions_use_the_detected_backend() {
    let hay = b"one\ntwo\n\nthree";
    assert_eq!(split::find_newline(hay), Some(3));
    assert_eq!(split::count_newlines(hay), 3);
    assert_eq!(split::newlines(hay).collect::<Vec<_>>(), vec![3, 7, 8]);
    let mut out = Vec::new();
    split::newline_positions(hay, &mut out);
    assert_eq!(out, vec![3, 7, 8]);
}
