//! The workspace is the layer table (ARCHITECTURE.md): the codec (`agentx-wire`) depends on
//! none of the agent, media, HTTP or async crates, and every member crate depends only on the
//! crates below it. The compiler already refuses an import of a crate that is not a dependency;
//! these tests keep the dependency lists themselves from creeping upward.
//!
//! Both read `cargo tree` / `cargo metadata` `--offline` (the test build fetched every crate):
//! no build, no lock on the test build's target directory.

use std::process::Command;

/// Crates the codec must never pull in.
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
    "jsonschema",
];

/// Each workspace crate with the workspace crates it may depend on (normal dependencies).
const LAYERS: &[(&str, &[&str])] = &[
    ("agentx-wire", &[]),
    ("agentx-io", &["agentx-wire"]),
    ("agentx-core", &["agentx-wire"]),
    ("agentx-openai", &["agentx-wire", "agentx-core"]),
    ("agentx-home", &["agentx-wire", "agentx-core"]),
    (
        "agentx-wire-cli",
        &["agentx-wire", "agentx-io", "agentx-core", "agentx-home"],
    ),
    (
        "agentx",
        &[
            "agentx-wire",
            "agentx-io",
            "agentx-core",
            "agentx-openai",
            "agentx-home",
            "agentx-wire-cli",
        ],
    ),
    ("agentx-test-support", &[]),
];

fn cargo() -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn stdout_of(c: &mut Command) -> String {
    let out = c.output().expect("run cargo");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn the_codec_alone_depends_on_no_agent_media_http_or_async_crate() {
    let tree = stdout_of(
        cargo()
            .args(["tree", "--offline", "-p", "agentx-wire", "-e", "normal"])
            .args(["--prefix", "none", "--format", "{p}"]),
    );
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"memchr"), "{names:?}");
    for banned in NOT_IN_THE_CODEC {
        assert!(
            !names.contains(banned),
            "the codec pulls in {banned}: {names:?}"
        );
    }
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let text = stdout_of(cargo().args([
        "metadata",
        "--offline",
        "--no-deps",
        "--format-version",
        "1",
    ]));
    let meta: serde_json::Value = serde_json::from_str(&text).expect("cargo metadata JSON");
    let members: Vec<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let packages = meta["packages"].as_array().expect("packages");
    let mut seen = Vec::new();
    for package in packages {
        let name = package["name"].as_str().expect("name");
        seen.push(name);
        let allowed = LAYERS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} is not in the layer table of this test"))
            .1;
        for dep in package["dependencies"].as_array().expect("dependencies") {
            let dep_name = dep["name"].as_str().expect("dependency name");
            let normal = dep["kind"].is_null();
            if normal && members.contains(&dep_name) {
                assert!(
                    allowed.contains(&dep_name),
                    "{name} depends on {dep_name}, which is not below it"
                );
            }
        }
    }
    seen.sort_unstable();
    let mut expected = members.clone();
    expected.sort_unstable();
    assert_eq!(seen, expected, "the workspace's crates");
}

/// The source folders of the workspace's crates: `src/` and every `crates/*/src/`.
fn crate_sources() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("src")];
    let mut members: Vec<_> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    members.sort();
    dirs.extend(members);
    dirs
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut report = Vec::new();
    let mut files = 0;
    for src in crate_sources() {
        let graph = imports::graph(&src);
        files += graph.len();
        for cycle in imports::cycles(&graph) {
            report.push(format!("{}: {}", src.display(), cycle.join(" ↔ ")));
        }
    }
    assert!(
        files > 200,
        "the crates' sources were found ({files} files)"
    );
    assert!(
        report.is_empty(),
        "files that import each other (move what they share to a leaf module):\n{}",
        report.join("\n")
    );
}

/// The scan itself can fail: two files that name each other form a cycle, a parent that
/// declares its child does not.
#[test]
fn the_import_scan_sees_a_cycle() {
    let mut graph = imports::Graph::new();
    let files: &[(&[&str], &str)] = &[
        (&[], "mod a;\nmod b;\n"),
        (
            &["a"],
            "use super::b::B;\n// use crate::c; in a comment is no import\n",
        ),
        (&["b"], "use crate::{a::A, c};\n"),
        (
            &["c"],
            "pub struct C;\n#[cfg(test)]\nmod tests { use crate::a; }\n",
        ),
    ];
    for (module, _) in files {
        graph.insert(
            module.iter().map(|s| s.to_string()).collect(),
            Default::default(),
        );
    }
    for (module, text) in files {
        let module: Vec<String> = module.iter().map(|s| s.to_string()).collect();
        let edges = imports::edges(&module, text, &graph);
        graph.insert(module, edges);
    }
    assert_eq!(
        imports::cycles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

/// A file-level import graph read from `crate::`, `super::` and `self::` paths (grouped
/// `use` lists included), the way the compiler resolves them to files: a path names the
/// deepest module file it reaches. Unit tests (`#[cfg(test)] mod tests`) and comments are
/// not read; a module using its own descendants (declaring them) is not an edge.
mod imports {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    pub type Module = Vec<String>;
    pub type Graph = BTreeMap<Module, BTreeSet<Module>>;

    fn module_of(src: &Path, file: &Path) -> Module {
        let rel = file.strip_prefix(src).expect("under src");
        let mut parts: Module = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        parts
    }

    pub fn graph(src: &Path) -> Graph {
        let mut files = Vec::new();
        agentx_test_support::rust_files(src, &mut files);
        let mut graph: Graph = files
            .iter()
            .map(|f| (module_of(src, f), BTreeSet::new()))
            .collect();
        for file in &files {
            let module = module_of(src, file);
            let text = std::fs::read_to_string(file).expect("read");
            let edges = edges(&module, &text, &graph);
            graph.insert(module, edges);
        }
        graph
    }

    /// The code of `text`: up to its unit tests, without `//` comments.
    fn code(text: &str) -> String {
        let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
        text[..end]
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn ident_at(s: &[u8], mut i: usize) -> (String, usize) {
        let start = i;
        while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
            i += 1;
        }
        (String::from_utf8_lossy(&s[start..i]).into_owned(), i)
    }

    /// Every path after `crate`, `super` or `self` in `code`, as its leading segments (a group
    /// `{a::X, b}` gives one path per member).
    fn paths(code: &str) -> Vec<(String, Vec<String>)> {
        let s = code.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < s.len() {
            let boundary = i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_');
            let head = ["crate::", "super::", "self::"]
                .into_iter()
                .find(|h| boundary && s[i..].starts_with(h.as_bytes()));
            let Some(head) = head else {
                i += 1;
                continue;
            };
            let mut parts = Vec::new();
            let mut j = i + head.len();
            loop {
                if s.get(j) == Some(&b'{') {
                    let mut depth = 0;
                    let mut item_start = j + 1;
                    let mut k = j;
                    while k < s.len() {
                        match s[k] {
                            b'{' => depth += 1,
                            b'}' | b',' if depth == 1 => {
                                let item = code[item_start..k].trim_start();
                                let (first, _) = ident_at(item.as_bytes(), 0);
                                if !first.is_empty() && first != "self" {
                                    let mut p = parts.clone();
                                    p.push(first);
                                    out.push((head[..head.len() - 2].to_string(), p));
                                }
                                item_start = k + 1;
                                if s[k] == b'}' {
                                    break;
                                }
                            }
                            b'}' => depth -= 1,
                            _ => {}
                        }
                        k += 1;
                    }
                    parts.clear();
                    j = k;
                    break;
                }
                let (segment, next) = ident_at(s, j);
                if segment.is_empty() {
                    break;
                }
                parts.push(segment);
                j = next;
                if s[j..].starts_with(b"::") {
                    j += 2;
                } else {
                    break;
                }
            }
            if !parts.is_empty() {
                out.push((head[..head.len() - 2].to_string(), parts));
            }
            i = j.max(i + 1);
        }
        out
    }

    pub fn edges(module: &Module, text: &str, graph: &Graph) -> BTreeSet<Module> {
        let mut edges = BTreeSet::new();
        for (head, parts) in paths(&code(text)) {
            let mut at: Module = match head.as_str() {
                "crate" => Vec::new(),
                "self" => module.clone(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = parts.as_slice();
            while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
                at.pop();
                rest = tail;
            }
            for segment in rest {
                let mut deeper = at.clone();
                deeper.push(segment.clone());
                if graph.contains_key(&deeper) {
                    at = deeper;
                } else {
                    break;
                }
            }
            let descendant = at.len() >= module.len() && at[..module.len()] == module[..];
            if graph.contains_key(&at) && !descendant {
                edges.insert(at);
            }
        }
        edges
    }

    /// Each set of two or more modules that reach each other, as sorted `a::b` names.
    pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
        let reach = |from: &Module| -> BTreeSet<Module> {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(m) = stack.pop() {
                for next in graph.get(&m).into_iter().flatten() {
                    if seen.insert(next.clone()) {
                        stack.push(next.clone());
                    }
                }
            }
            seen
        };
        let reached: BTreeMap<&Module, BTreeSet<Module>> =
            graph.keys().map(|m| (m, reach(m))).collect();
        let mut out: Vec<Vec<String>> = Vec::new();
        for (m, from_m) in &reached {
            if !from_m.contains(*m) {
                continue;
            }
            let mut component: Vec<String> = from_m
                .iter()
                .filter(|n| reached[n].contains(*m))
                .map(|n| n.join("::"))
                .collect();
            component.sort();
            if component.len() > 1 && !out.contains(&component) {
                out.push(component);
            }
        }
        out
    }
}
