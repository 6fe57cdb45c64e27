//! Differential: our `Grep` (PROFILE §17) against the `rg` binary on one tree, where their
//! semantics coincide: the same ignore rules (a git repository's `.gitignore`, `.ignore`,
//! hidden files in, `.git` out), binary files skipped, each output mode, context, `-i`, `-o`,
//! `glob` and `type` filters, multiline. `files_with_matches` is compared as a set (ours is
//! newest first, rg's unordered); the other modes line by line against `rg --sort path`.
//! Without `rg` the test prints why and passes, unless `CI` is set (then it fails: `.ci/run`
//! installs ripgrep).

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::agentx_edit::{outcome, Coding};

fn rg_available() -> bool {
    match Command::new("rg").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "rg is not installed and CI is set: .ci/run installs ripgrep"
            );
            eprintln!("skipped: the rg binary is not installed (apt-get install ripgrep)");
            false
        }
    }
}

fn tree(root: &Path) {
    let put = |rel: &str, body: &[u8]| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    put(".git/HEAD", b"ref: refs/heads/main\nfn in_git() {}\n");
    put(".gitignore", b"target/\n*.log\n");
    put(".ignore", b"vendor/\n");
    put(
        "src/main.rs",
        b"use std::io;\n\nfn main() {\n    // TODO: parse\n    run();\n}\n\nfn run() {}\n",
    );
    put(
        "src/lib.rs",
        b"use crate::x;\npub fn lib_fn() {}\n// todo later\nfn helper() {\n    foo\n    bar\n}\n",
    );
    put("src/deep/mod.rs", b"fn deep() {}\nfn deeper() {}\n");
    put("docs/guide.md", b"# Guide\nfn in_markdown\nTODO: write\n");
    put("scripts/run.py", b"def main():\n    pass  # TODO\n");
    put(".hidden/conf.rs", b"fn hidden_fn() {}\n");
    put("target/out.rs", b"fn ignored_target() {}\n");
    put("vendor/v.rs", b"fn ignored_vendor() {}\n");
    put("app.log", b"fn ignored_log\n");
    put("blob.bin", b"\0\0fn in_binary() {}\n");
    put("crlf.txt", b"fn crlf() {}\r\nTODO\r\n");
}

/// rg's lines for `args` over `root`.
fn rg(root: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("rg")
        .args([
            "--hidden",
            "--glob",
            "!.git",
            "--no-messages",
            "--no-config",
        ])
        .args(args)
        .arg(root)
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .output()
        .expect("rg runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn ours(c: &mut Coding, input: Value) -> Vec<String> {
    let (text, is_error) = outcome(&c.call("Grep", &input));
    assert!(!is_error, "{text}");
    if text == "No files found" || text == "No matches found" {
        return Vec::new();
    }
    text.lines().map(str::to_owned).collect()
}

#[test]
fn grep_agrees_with_rg_on_one_tree() {
    if !rg_available() {
        return;
    }
    let mut c = Coding::new("grep-rg", &[]);
    tree(&c.cwd);
    let root = c.cwd.clone();
    let mut compared = 0;
    // files_with_matches: the same set.
    for (pattern, extra, rg_args) in [
        ("fn \\w+", json!({}), vec![]),
        ("todo", json!({"-i": true}), vec!["-i"]),
        ("fn", json!({"glob": "*.rs"}), vec!["--glob", "*.rs"]),
        ("fn", json!({"type": "rust"}), vec!["--type", "rust"]),
        ("fn", json!({"glob": "src/**"}), vec!["--glob", "src/**"]),
    ] {
        let mut input = json!({"pattern": pattern, "head_limit": 0});
        input
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let mut got = ours(&mut c, input);
        let mut args = vec!["--files-with-matches"];
        args.extend(rg_args.iter().copied());
        args.extend(["-e", pattern]);
        let mut want = rg(&root, &args);
        got.sort();
        want.sort();
        assert!(!want.is_empty(), "{pattern}");
        assert_eq!(got, want, "files_with_matches {pattern} {rg_args:?}");
        compared += 1;
    }
    // content and count: line by line, in path order.
    for (extra, rg_args) in [
        (
            json!({"pattern": "fn \\w+", "output_mode": "content"}),
            vec!["-n"],
        ),
        (
            json!({"pattern": "TODO", "output_mode": "content", "-C": 1}),
            vec!["-n", "-C", "1"],
        ),
        (
            json!({"pattern": "todo", "output_mode": "content", "-i": true, "-B": 2}),
            vec!["-n", "-i", "-B", "2"],
        ),
        (
            json!({"pattern": "fn [a-z_]+", "output_mode": "content", "-o": true}),
            vec!["-n", "-o"],
        ),
        (
            json!({"pattern": "def|TODO", "output_mode": "content", "-n": false, "type": "py"}),
            vec!["--type", "py"],
        ),
        (
            json!({"pattern": "foo.\\s*bar", "output_mode": "content", "multiline": true}),
            vec!["-n", "-U", "--multiline-dotall"],
        ),
        (json!({"pattern": "fn", "output_mode": "count"}), vec!["-c"]),
        (
            json!({"pattern": "TODO", "output_mode": "count", "glob": "*.{md,py}"}),
            vec!["-c", "--glob", "*.{md,py}"],
        ),
    ] {
        let mut input = extra.clone();
        input["head_limit"] = json!(0);
        let got = ours(&mut c, input);
        let mut args = vec!["--sort", "path", "--with-filename", "--no-heading"];
        args.extend(rg_args.iter().copied());
        args.extend(["-e", extra["pattern"].as_str().unwrap()]);
        let want = rg(&root, &args);
        assert!(!want.is_empty(), "{extra}");
        assert_eq!(got, want, "{extra} vs rg {rg_args:?}");
        compared += 1;
    }
    assert_eq!(compared, 13);
    c.finish();
}
