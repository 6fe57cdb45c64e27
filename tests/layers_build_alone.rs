//! The layers are something the compiler checks (issue 22; ARCHITECTURE.md "Layers the compiler
//! checks"): every layer feature of Cargo.toml builds alone, with no warning, so an import of a
//! layer above it (or a helper only a higher layer uses) fails here; and the codec alone
//! (`--no-default-features`) depends on none of the agent, media, HTTP or async crates.
//!
//! The builds are `cargo check --lib` into their own target directory (`target/layers`), so they
//! never wait on the test build's lock; `--offline`, because the main build fetched every crate.

use std::path::PathBuf;
use std::process::Command;

/// Each set builds on its own. Together they cover every layer feature: the codec (empty), the
/// blocking driver, the host (with and without tokio), the model, attachments, the provider
/// registry, the agent, and the HTTP providers.
const LAYERS: &[&str] = &[
    "",
    "driver",
    "host",
    "model",
    "attach",
    "provider",
    "agent",
    "host,tokio",
    "openai",
];

/// Crates the codec alone must never pull in.
const NOT_IN_THE_CODEC: &[&str] = &[
    "tokio",
    "tokio-util",
    "reqwest",
    "rustls",
    "zune-core",
    "zune-png",
    "zune-jpeg",
    "lopdf",
    "jpeg-encoder",
    "miniz_oxide",
    "signal-hook",
    "rustix",
    "serde_json",
    // PROFILE §16 structured output's validator (feature `agent`).
    "jsonschema",
];

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn target_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is <target>/tmp: the layer builds sit beside it.
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map(|t| t.join("layers"))
        .expect("target dir")
}

#[test]
fn every_layer_builds_alone_without_warnings() {
    for features in LAYERS {
        let out = cargo()
            .args(["check", "--lib", "--offline", "--no-default-features"])
            .args(["--features", features])
            .arg("--target-dir")
            .arg(target_dir())
            .output()
            .expect("run cargo check");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "layer [{features}] does not build alone:\n{stderr}"
        );
        assert!(
            !stderr.contains("generated") && !stderr.contains("warning: unused"),
            "layer [{features}] builds with warnings (code only a higher layer uses?):\n{stderr}"
        );
    }
}

#[test]
fn the_codec_alone_depends_on_no_agent_media_http_or_async_crate() {
    let out = cargo()
        .args(["tree", "--offline", "-e", "normal", "--no-default-features"])
        .args(["--prefix", "none", "--format", "{p}"])
        .output()
        .expect("run cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"memchr"), "{names:?}");
    for banned in NOT_IN_THE_CODEC {
        assert!(
            !names.contains(banned),
            "the codec-only build pulls in {banned}: {names:?}"
        );
    }
}
