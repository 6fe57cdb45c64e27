//! Replays every seed in `corpus/attach_{png,jpeg,pdf,chunks}/` through the same entry points
//! the fuzz targets call, plus the in-code seed generator's output and the regression inputs
//! fuzzing found. `cargo test --test codec fuzz_seeds_attach::write_seeds -- --ignored`
//! rewrites the corpus from `agentx_core::fuzzing::attach::samples::seeds()`.

use std::path::PathBuf;

use agentx_core::fuzzing::attach::{self, samples};

fn run(target: &str, data: &[u8]) {
    match target {
        "attach_png" => attach::png(data),
        "attach_jpeg" => attach::jpeg(data),
        "attach_pdf" => attach::pdf(data),
        "attach_chunks" => attach::chunks(data),
        other => panic!("unknown target {other}"),
    }
}

fn corpus() -> PathBuf {
    agentx_test_support::workspace_root().join("corpus")
}

const TARGETS: [&str; 4] = ["attach_png", "attach_jpeg", "attach_pdf", "attach_chunks"];

#[test]
fn replay_corpus_seeds() {
    let mut count = 0;
    for target in TARGETS {
        let dir = corpus().join(target);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        assert!(!entries.is_empty(), "{target} has seeds");
        for path in entries {
            let data = std::fs::read(&path).unwrap();
            assert!(data.len() <= 8192, "{} is small", path.display());
            run(target, &data);
            count += 1;
        }
    }
    eprintln!("attach fuzz seeds replayed: {count}");
}

#[test]
fn replay_generated_seeds() {
    let seeds = samples::seeds();
    for (target, _, data) in &seeds {
        run(target, data);
    }
    eprintln!("generated attach seeds replayed: {}", seeds.len());
}

#[test]
#[ignore = "rewrites corpus/attach_*"]
fn write_seeds() {
    for (target, name, data) in samples::seeds() {
        let dir = corpus().join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    }
}

/// The image entry points' panic hook (`fuzzing::attach`'s `contain_codec_panics`) is silent
/// for a panic inside a codec, which admission contains, and hands every other panic to the
/// hook it replaced, so a campaign goes on past the zune-jpeg IDCT panics and still stops at
/// ours. In a child process: a panic hook is global to its process. (On a CPU without AVX2
/// zune-jpeg takes its scalar IDCT, this input may not panic, and only the second half of the
/// property is checked.)
#[test]
fn codec_panics_are_silent_and_other_panics_reach_the_hook() {
    const CHILD: &str = "AGENTX_TEST_PANIC_HOOK_CHILD";
    const NAME: &str = "fuzz_seeds_attach::codec_panics_are_silent_and_other_panics_reach_the_hook";
    if std::env::var_os(CHILD).is_some() {
        std::panic::set_hook(Box::new(|info| eprintln!("OUTER HOOK: {info}")));
        let input = corpus().join("attach_jpeg/regress-zune-idct-avx2-line246-panic.jpg");
        attach::jpeg(&std::fs::read(input).unwrap());
        let caught = std::panic::catch_unwind(|| panic!("a panic outside the codecs"));
        assert!(caught.is_err());
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("OUTER HOOK").count(), 1, "{err}");
    assert!(err.contains("a panic outside the codecs"), "{err}");
    assert!(!err.contains("zune"), "{err}");
}
