//! Replays every seed in `corpus/attach_{png,jpeg,pdf,chunks}/` through the same entry points
//! the fuzz targets call, plus the in-code seed generator's output and the regression inputs
//! fuzzing found. `cargo test --test codec fuzz_seeds_attach::write_seeds -- --ignored`
//! rewrites the corpus from `agentx_wire::fuzzing::attach::samples::seeds()`.

use std::path::PathBuf;

use agentx_wire::fuzzing::attach::{self, samples};

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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
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
