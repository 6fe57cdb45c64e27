//! The host client in the lenient peer profile (`PeerProfile::Lenient`) against the
//! real `claude` CLI of the TypeScript SDK, and against a transcript captured from it.
//!
//! - `replays_the_captured_claude_transcript`: `tests/fixtures/claude-cli-2.1.333.ndjson`
//!   (output of `claude` 2.1.333 from `@anthropic-ai/claude-agent-sdk-linux-x64@0.3.333`, no
//!   account; how it was captured and what was scrubbed: `tests/fixtures/README.md`) played
//!   back by a scripted peer over OS pipes, one input record at a time as the binary answered
//!   them. Runs everywhere (CI included).
//! - `drives_the_real_claude_binary`: `$AGENTX_CLAUDE_BIN`, else the binary of that npm package
//!   installed under `target/claude-cli` or `node_modules`; skips with a printed reason when
//!   there is none (also in CI: the package is ~400 MB).
//!
//! Both: `initialize` (typed, open vocabularies as strings), one turn that ends with an error
//! result (no account), every record decoded and none an error item, `interrupt`, close.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use agentx_io::host::{AgentCommand, Client, ClientOptions, PeerProfile};
use agentx_wire::json::Parser;
use agentx_wire::wire::{OutputRecord, PeerInit};
use serde_json::Value;

const T: Duration = Duration::from_secs(60);
const FIXTURE: &str = "tests/fixtures/claude-cli-2.1.333.ndjson";

fn fixture() -> Vec<String> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// What every session below checks, against a peer speaking as `claude` does.
fn session(client: &Client) {
    let init = client
        .initialize_peer(T)
        .expect("initialize (lenient view)");
    let f = &init.fields;
    assert!(!f.models.is_empty(), "models");
    assert!(f.models.iter().all(|m| !m.value.is_empty()));
    let account = f.account.as_ref().expect("account");
    // Open vocabularies come through as the strings the peer wrote.
    assert_eq!(account.token_source.as_deref(), Some("none"));
    assert!(f.claude_code_version.is_some());
    assert!(init.raw.is_object());

    client.send_text("hello").unwrap();
    let mut init_seen = None;
    let mut types = Vec::new();
    let result = loop {
        let record = client
            .recv_timeout(T)
            .expect("a record in time")
            .expect("the output went on")
            .unwrap_or_else(|e| panic!("an error item after {types:?}: {e}"));
        types.push(record.record_type().to_owned());
        if let Some(i) = PeerInit::from_record(&record) {
            init_seen = Some(i);
        }
        if let OutputRecord::Result(r) = record {
            break r;
        }
    };
    // No account: the turn ends with an error result.
    assert!(result.is_error, "{types:?}");
    let init = init_seen.expect("a system/init before the result");
    assert_eq!(init.api_key_source.as_deref(), Some("none"));
    assert!(!init.model.is_empty() && !init.tools.is_empty());
    assert!(types.iter().any(|t| t == "assistant"), "{types:?}");
    // `interrupt`: acknowledged (the peer's acknowledgement carries a payload of its own).
    client.interrupt(T).expect("interrupt");
}

/// The agent's end of the pipes: reads one host record, writes what `claude` wrote after it.
fn scripted_peer(
    from_host: std::io::PipeReader,
    mut to_host: std::io::PipeWriter,
    output: Vec<String>,
) {
    let mut from_host = BufReader::new(from_host);
    let mut output = output.into_iter();
    let mut line = String::new();
    loop {
        line.clear();
        if from_host.read_line(&mut line).unwrap_or(0) == 0 {
            return; // the host ended its input: the peer's output ends too
        }
        let sent: Value = serde_json::from_str(&line).expect("the host wrote JSON");
        if sent["type"] == "user" {
            // `claude` refuses the legacy string form: "Expected message role 'user'".
            assert_eq!(sent["message"]["role"], "user", "{line}");
        }
        let ends = |o: &str| -> bool {
            let v: Value = serde_json::from_str(o).unwrap();
            match sent["type"].as_str() {
                Some("control_request") => {
                    v["type"] == "control_response"
                        && v["response"]["request_id"] == sent["request_id"]
                }
                Some("user") => v["type"] == "result",
                _ => true,
            }
        };
        for o in output.by_ref() {
            let last = ends(&o);
            to_host.write_all(o.as_bytes()).unwrap();
            to_host.write_all(b"\n").unwrap();
            to_host.flush().unwrap();
            if last {
                break;
            }
        }
    }
}

#[test]
fn replays_the_captured_claude_transcript() {
    let output = fixture();
    assert!(output.len() >= 5);
    let (host_in_r, host_in_w) = std::io::pipe().unwrap();
    let (agent_out_r, agent_out_w) = std::io::pipe().unwrap();
    let peer = std::thread::spawn(move || scripted_peer(host_in_r, agent_out_w, output));
    let options = ClientOptions::default().peer_profile(PeerProfile::Lenient);
    let client = Client::attach(agent_out_r, host_in_w, options);
    session(&client);
    client.end_input();
    assert!(
        client.recv_timeout(T).unwrap().is_none(),
        "nothing after the end"
    );
    client.close(T).unwrap();
    peer.join().unwrap();
}

#[test]
fn the_strict_profile_still_rejects_what_the_lenient_one_reads() {
    // The default profile does not change: the initialize response (members beside the
    // outcome, WIRE-009) and system/init (`apiKeySource: "none"`, WIRE-016) are refused; the
    // lenient one reads every line, typed where our tables allow.
    let mut p = Parser::new();
    let output = fixture();
    let mut strict_rejected = Vec::new();
    for (i, line) in output.iter().enumerate() {
        let lenient = OutputRecord::decode_line_as(line.as_bytes(), &mut p, PeerProfile::Lenient)
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        if OutputRecord::decode_line_as(line.as_bytes(), &mut p, PeerProfile::Strict).is_err() {
            strict_rejected.push(lenient.record_type().to_owned());
        }
    }
    assert!(
        strict_rejected.contains(&"control_response".to_owned()),
        "{strict_rejected:?}"
    );
    assert!(
        strict_rejected.contains(&"system".to_owned()),
        "{strict_rejected:?}"
    );
    // A duplicate member stays an error in the lenient profile (WIRE-014).
    let dup = output[3].replacen("{\"", "{\"type\":\"result\",\"", 1);
    assert!(OutputRecord::decode_line_as(dup.as_bytes(), &mut p, PeerProfile::Lenient).is_err());
    // So does a line that is not UTF-8.
    let mut bad = output[2].clone().into_bytes();
    let at = bad.iter().position(|&b| b == b'N').unwrap();
    bad[at] = 0xff;
    assert!(OutputRecord::decode_line_as(&bad, &mut p, PeerProfile::Lenient).is_err());
}

/// `$AGENTX_CLAUDE_BIN`, or the SDK's linux-x64 binary installed by npm.
fn claude_binary() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("AGENTX_CLAUDE_BIN") {
        return Ok(PathBuf::from(p));
    }
    let root = agentx_test_support::workspace_root();
    let package = "node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude";
    for base in [root.join("target/claude-cli"), root.clone()] {
        let p = base.join(package);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(format!(
        "no claude binary: set AGENTX_CLAUDE_BIN, or `npm install --prefix {}/target/claude-cli \
         @anthropic-ai/claude-agent-sdk-linux-x64@0.3.333` (~400 MB, so CI skips it too)",
        root.display()
    ))
}

#[test]
fn drives_the_real_claude_binary() {
    let bin = match claude_binary() {
        Ok(b) => b,
        Err(reason) => {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
    let home = std::env::temp_dir().join(format!("agentx-claude-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(home.join("project")).unwrap();
    // No account and no network beyond loopback: a fresh HOME, no keys from our environment.
    let command = AgentCommand::stream_json(&bin)
        .arg("--verbose")
        .current_dir(home.join("project"))
        .env("HOME", &home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN");
    let options = ClientOptions::default().peer_profile(PeerProfile::Lenient);
    let client = Client::spawn(&command, options).expect("spawn claude");
    session(&client);
    client.end_input();
    while let Some(item) = client.recv_timeout(T).expect("the output ends") {
        item.expect("no error item after the turn");
    }
    let exit = client.close(T).expect("claude exits after EOF");
    eprintln!("claude exited with {:?}", exit.status);
    let _ = std::fs::remove_dir_all(&home);
}
