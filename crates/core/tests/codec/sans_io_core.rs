//! The core never reads a clock, sleeps, spawns, locks or does I/O (the brief;
//! ARCHITECTURE's crate table): time comes in as a `now` argument and every
//! effect goes out as an action for a driver. This test reads the core's sources and fails on
//! any call that would break that, so a regression is caught where it is written, not when a
//! virtual-clock test turns flaky. The core is the codec (`src/`) and `agentx-core`
//! (`crates/core/src/`); the other crates are drivers and are not scanned.

/// The core: each crate's source folder with its modules (ARCHITECTURE.md).
const CORE: &[(&str, &[&str])] = &[
    ("src", &["frame", "json", "wire", "encode", "control"]),
    (
        "crates/core/src",
        &[
            "session",
            "model",
            "attach",
            "registry",
            "tools",
            "transcript",
        ],
    ),
];

/// Files of the core allowed an effect, each with the reason it is contained there.
const CONTAINED: &[(&str, &str)] = &[
    // lopdf containment: a validation thread with a wall-clock budget (PROFILE §6 pdf limits).
    ("attach/pdf_contain.rs", "thread + clock"),
];

/// Spellings of an effect. Matched on code, not comments.
const EFFECTS: &[&str] = &[
    "Instant::now",
    "SystemTime",
    "thread::spawn",
    "thread::Builder",
    "thread::sleep",
    "std::fs",
    "File::open",
    "File::create",
    "std::net",
    "std::process",
    "Command::new",
    "Mutex",
    "RwLock",
    "Condvar",
    "stdin()",
    "stdout()",
    "stderr()",
    "env::var",
    "tokio::",
];

/// The code lines of a file before its `#[cfg(test)]` module, without comments.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
}

#[test]
fn the_core_has_no_clock_thread_lock_or_io() {
    let mut found = Vec::new();
    let mut scanned = 0;
    for (root, modules) in CORE {
        let src = agentx_test_support::workspace_root().join(root);
        for module in modules.iter() {
            let mut files = Vec::new();
            agentx_test_support::rust_files(&src.join(module), &mut files);
            for file in files {
                let rel = file
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let name = file.file_name().unwrap().to_string_lossy();
                if name == "tests.rs" || name.ends_with("_tests.rs") || rel.contains("/tests/") {
                    continue; // unit tests may use a real clock to build `now` values
                }
                let allowed = CONTAINED.iter().any(|(f, _)| *f == rel);
                let text = std::fs::read_to_string(&file).unwrap();
                scanned += 1;
                for (n, line) in code_lines(&text) {
                    for effect in EFFECTS {
                        if line.contains(effect) && !allowed {
                            found.push(format!("{root}/{rel}:{n}: {effect}: {}", line.trim()));
                        }
                    }
                }
            }
        }
    }
    assert!(
        scanned > 100,
        "the core's sources were found ({scanned} files)"
    );
    assert!(
        found.is_empty(),
        "effects in the core:\n{}",
        found.join("\n")
    );
}

/// The scan itself can fail: a core file with an effect is reported.
#[test]
fn the_scan_sees_an_effect_in_code_but_not_in_comments() {
    let text = "fn f() {\n    // Instant::now() in a comment is fine\n    let t = Instant::now();\n}\n#[cfg(test)]\nmod tests { fn g() { std::thread::sleep(d); } }\n";
    let hits: Vec<usize> = code_lines(text)
        .filter(|(_, l)| EFFECTS.iter().any(|e| l.contains(e)))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(hits, [3]);
}
