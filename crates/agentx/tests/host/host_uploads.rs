//! Uploads from the host client through the real `agentx` binary, in both
//! flavours: two uploads committed (begin, chunks of the advertised size, commit) and one
//! user message referencing both (WIRE-017..020); the scripted model sees both attachments in
//! order (PROFILE §9) and the result carries the prompt UUID; a rejected upload reports its
//! reason code and the client goes on; no upload is attempted without `input_capabilities`.
//! Every transcript is also checked by `agentx-wire check --direction output`.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentx_core::fuzzing::attach::samples;
use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions, HostError, UploadSource,
    UploadStatus,
};
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage};
use agentx_wire::wire::{
    AttachmentRef, ImportStatus, OutputRecord, ReasonCode, ResultRecord, UserRecord,
};

const T: Duration = Duration::from_secs(60);
const PROMPT: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";

struct Home(PathBuf);

impl Home {
    fn new(tag: &str) -> Home {
        let dir = std::env::temp_dir().join(format!("agentx-hostup-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        Home(dir)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn command(home: &Path, extra: &[&str]) -> AgentCommand {
    let mut c = AgentCommand::stream_json(env!("CARGO_BIN_EXE_agentx"))
        .arg("--cwd")
        .arg(home.join("work"))
        .env("AGENTX_HOME", home);
    for a in extra {
        c = c.arg(a);
    }
    c
}

fn png_suite(name: &str) -> Option<Vec<u8>> {
    let dir = common::conformance_dir()?;
    Some(std::fs::read(dir.join("png/pngsuite").join(name)).unwrap())
}

/// A user record: `text`, then each manifest, under `prompt`.
fn message(text: &str, refs: &[&AttachmentRef], prompt: &str) -> UserRecord<'static> {
    let mut blocks = vec![ContentBlock::Text(text.to_owned().into())];
    blocks.extend(
        refs.iter()
            .map(|r| ContentBlock::AttachmentRef((*r).clone())),
    );
    let mut user = UserRecord::text(String::new());
    user.message = UserMessage::Object {
        versioned: true,
        content: UserContent::Blocks(blocks),
    };
    user.uuid = agentx_wire::wire::grammar::Uuid::new(prompt.to_owned());
    user
}

/// PROFILE §9: `echo: TEXT` and one `[attachment …]` line per attachment, in order.
fn echo_with(text: &str, refs: &[&AttachmentRef]) -> String {
    let mut s = format!("echo: {text}");
    for r in refs {
        s.push_str(&format!(
            "\n[attachment {} {} {} {}]",
            r.attachment_id, r.mime_type, r.size_bytes, r.sha256
        ));
    }
    s
}

fn result_of<'r>(records: &'r [OutputRecord<'static>]) -> &'r ResultRecord<'static> {
    records
        .iter()
        .find_map(|r| match r {
            OutputRecord::Result(r) => Some(r),
            _ => None,
        })
        .expect("a result")
}

fn is_idle(r: &OutputRecord<'_>) -> bool {
    let mut bytes = Vec::new();
    r.encode(&mut bytes);
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["type"] == "system" && v["subtype"] == "session_state_changed" && v["state"] == "idle"
}

/// Interop: every record the client decoded re-encodes to a line `agentx-wire check
/// --direction output` accepts.
fn check_output(records: &[OutputRecord<'static>]) {
    let mut bytes = Vec::new();
    for r in records {
        r.encode(&mut bytes);
        bytes.push(b'\n');
    }
    let mut child = std::process::Command::new(agentx_test_support::bin("agentx-wire"))
        .args(["check", "--direction", "output", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The upload acknowledgements stay in the record stream: accepted then committed per upload.
fn assert_acks(records: &[OutputRecord<'static>], uploads: &[&str]) {
    let acks: Vec<(String, &'static str)> = records
        .iter()
        .filter_map(|r| match r {
            OutputRecord::AttachmentImportResult(a) => {
                Some((a.upload_id.as_str().to_owned(), a.status.as_str()))
            }
            _ => None,
        })
        .collect();
    let expected: Vec<(String, &'static str)> = uploads
        .iter()
        .flat_map(|u| [(u.to_string(), "accepted"), (u.to_string(), "committed")])
        .collect();
    assert_eq!(acks, expected);
}

/// The blocking client: two PngSuite images uploaded, one message referencing both.
#[test]
fn two_uploads_and_one_message_referencing_both() {
    let (Some(a), Some(b)) = (png_suite("basn2c08.png"), png_suite("basn0g08.png")) else {
        return;
    };
    let h = Home::new("sync");
    let client = Client::spawn(&command(&h.0, &[]), ClientOptions::default()).unwrap();
    client.initialize(T).unwrap();
    let ra = client
        .upload(UploadSource::Bytes(&a), "a.png", "image/png", PROMPT, T)
        .unwrap();
    let rb = client
        .upload(UploadSource::Bytes(&b), "b.png", "image/png", PROMPT, T)
        .unwrap();
    assert_eq!((ra.kind.as_str(), rb.name.as_str()), ("image", "b.png"));
    client
        .send_user(message("compare", &[&ra, &rb], PROMPT))
        .unwrap();
    let mut records = Vec::new();
    loop {
        let r = client.recv_timeout(T).unwrap().expect("open").unwrap();
        let idle = is_idle(&r);
        records.push(r);
        if idle {
            break;
        }
    }
    assert_acks(&records, &["upl_h1", "upl_h2"]);
    let result = result_of(&records);
    assert_eq!(
        result.result.as_deref(),
        Some(echo_with("compare", &[&ra, &rb]).as_str())
    );
    assert_eq!(
        result.prompt_uuid.as_ref().map(|u| u.as_str()),
        Some(PROMPT)
    );
    check_output(&records);
    assert!(client.close(T).unwrap().success());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The async client: a PNG from a file and a JPEG from memory, one message referencing both;
/// then a rejected upload (a JPEG claimed as PNG) reports `failed` / `mime_mismatch` and the
/// session goes on.
#[test]
fn async_two_uploads_and_one_message_referencing_both() {
    let h = Home::new("async");
    let png_path = h.0.join("work/screen.png");
    std::fs::write(&png_path, samples::png_gradient(40, 20)).unwrap();
    let jpeg = samples::jpeg_gradient(24, 16, None);
    runtime().block_on(async {
        let client = AsyncClient::spawn(&command(&h.0, &[]), AsyncClientOptions::default())
            .await
            .unwrap();
        client.initialize(T).await.unwrap();
        let ra = client
            .upload(
                UploadSource::Path(&png_path),
                "screen.png",
                "image/png",
                PROMPT,
                T,
            )
            .await
            .unwrap();
        let rb = client
            .upload(
                UploadSource::Bytes(&jpeg),
                "photo.jpg",
                "image/jpeg",
                PROMPT,
                T,
            )
            .await
            .unwrap();
        assert_eq!(ra.mime_type, "image/png");
        assert_eq!(rb.mime_type, "image/jpeg");
        client
            .send_user(message("compare", &[&ra, &rb], PROMPT))
            .unwrap();
        let mut records = Vec::new();
        while let Some(r) = client.recv().await {
            let r = r.unwrap();
            let idle = is_idle(&r);
            records.push(r);
            if idle {
                break;
            }
        }
        assert_acks(&records, &["upl_h1", "upl_h2"]);
        let result = result_of(&records);
        assert_eq!(
            result.result.as_deref(),
            Some(echo_with("compare", &[&ra, &rb]).as_str())
        );
        assert_eq!(
            result.prompt_uuid.as_ref().map(|u| u.as_str()),
            Some(PROMPT)
        );

        let other = "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";
        let e = client
            .upload(UploadSource::Bytes(&jpeg), "x.png", "image/png", other, T)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, HostError::Upload { status, reason }
                if *status == UploadStatus::Ended(ImportStatus::Failed)
                    && *reason == Some(ReasonCode::MimeMismatch)),
            "{e:?}"
        );
        let rc = client
            .upload(UploadSource::Bytes(&jpeg), "x.jpg", "image/jpeg", other, T)
            .await
            .unwrap();
        assert_eq!(rc.attachment_id, "att_h4");
        let exit = client.close(T).await.unwrap();
        assert!(exit.success(), "{}", String::from_utf8_lossy(&exit.stderr));
        check_output(&records);
    });
}

/// Without advertised `input_capabilities` (before `initialize`, or with
/// `--no-attachments`) neither client attempts an upload.
#[test]
fn no_upload_without_input_capabilities() {
    let h = Home::new("nocap");
    let png = samples::png_gradient(4, 4);
    let client = Client::spawn(&command(&h.0, &[]), ClientOptions::default()).unwrap();
    let e = client
        .upload(UploadSource::Bytes(&png), "a.png", "image/png", PROMPT, T)
        .unwrap_err();
    assert!(matches!(e, HostError::AttachmentsUnavailable), "{e:?}");
    assert!(client.close(T).unwrap().success());

    let client = Client::spawn(
        &command(&h.0, &["--no-attachments"]),
        ClientOptions::default(),
    )
    .unwrap();
    assert!(client.initialize(T).unwrap().input_capabilities.is_none());
    let e = client
        .upload(UploadSource::Bytes(&png), "a.png", "image/png", PROMPT, T)
        .unwrap_err();
    assert!(matches!(e, HostError::AttachmentsUnavailable), "{e:?}");
    assert!(client.close(T).unwrap().success());

    runtime().block_on(async {
        let client = AsyncClient::spawn(
            &command(&h.0, &["--no-attachments"]),
            AsyncClientOptions::default(),
        )
        .await
        .unwrap();
        let e = client
            .upload(UploadSource::Bytes(&png), "a.png", "image/png", PROMPT, T)
            .await
            .unwrap_err();
        assert!(matches!(e, HostError::AttachmentsUnavailable), "{e:?}");
        assert!(client
            .initialize(T)
            .await
            .unwrap()
            .input_capabilities
            .is_none());
        let e = client
            .upload(UploadSource::Bytes(&png), "a.png", "image/png", PROMPT, T)
            .await
            .unwrap_err();
        assert!(matches!(e, HostError::AttachmentsUnavailable), "{e:?}");
        assert!(client.close(T).await.unwrap().success());
    });
}

/// `agentx`'s own `initialize` success payload (with `input_capabilities`), for a scripted
/// peer to answer with.
fn agentx_initialize_payload(home: &Path) -> serde_json::Value {
    use std::io::Write as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agentx"))
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .env("AGENTX_HOME", home)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            br#"{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}"#,
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    line["response"]["response"].clone()
}

/// An upload abandoned after `accepted` is aborted on the wire: when the wait for its
/// terminal acknowledgement times out, and when the async
/// upload's future is dropped. A scripted peer over in-memory pipes plays the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_upload_is_aborted_on_the_wire() {
    use serde_json::{json, Value};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let h = Home::new("abandon");
    let payload = agentx_initialize_payload(&h.0);
    assert!(payload["input_capabilities"].is_object());
    let (host_side, agent_side) = tokio::io::duplex(1 << 20);
    let (host_r, host_w) = tokio::io::split(host_side);
    let (agent_r, mut to_host) = tokio::io::split(agent_side);
    let mut from_host = BufReader::new(agent_r);
    let client = AsyncClient::attach(host_r, host_w, AsyncClientOptions::default());
    let mut line = String::new();
    let mut read = async || -> Value {
        line.clear();
        from_host.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap()
    };

    let init = client.initialize(T);
    let answer = async {
        let req = read().await;
        let resp = json!({"type":"control_response","response":{"subtype":"success",
            "request_id":req["request_id"],"response":payload}});
        to_host
            .write_all(format!("{resp}\n").as_bytes())
            .await
            .unwrap();
    };
    let (init, ()) = tokio::join!(init, answer);
    init.unwrap();

    let accept = |upload: &str| {
        format!(
            "{}\n",
            json!({"type":"attachment_import_result","version":1,"upload_id":upload,
                "attachment_id":upload.replace("upl_", "att_"),"status":"accepted",
                "terminal":false,"prompt_uuid":PROMPT})
        )
    };
    let png = samples::png_gradient(8, 8);
    // 1. Timed out waiting for the terminal acknowledgement (2 s: `accepted` must still
    //    arrive in time on a loaded machine).
    let up = client.upload(
        UploadSource::Bytes(&png),
        "a.png",
        "image/png",
        PROMPT,
        Duration::from_secs(2),
    );
    let peer = async {
        assert_eq!(read().await["operation"], "begin");
        to_host
            .write_all(accept("upl_h1").as_bytes())
            .await
            .unwrap();
        assert_eq!(read().await["operation"], "chunk");
        assert_eq!(read().await["operation"], "commit");
        tokio::time::timeout(T, read()).await.expect("an abort")
    };
    let (r, abort) = tokio::join!(up, peer);
    assert!(r.as_ref().is_err_and(HostError::is_timeout), "{r:?}");
    assert_eq!(
        abort,
        json!({"type":"attachment_import","version":1,"operation":"abort","upload_id":"upl_h1"})
    );

    // 2. The future dropped after `accepted`.
    {
        let up = client.upload(UploadSource::Bytes(&png), "b.png", "image/png", PROMPT, T);
        tokio::pin!(up);
        let peer = async {
            assert_eq!(read().await["operation"], "begin");
            to_host
                .write_all(accept("upl_h2").as_bytes())
                .await
                .unwrap();
            assert_eq!(read().await["operation"], "chunk");
            assert_eq!(read().await["operation"], "commit");
        };
        tokio::select! {
            _ = &mut up => panic!("no terminal acknowledgement was sent"),
            () = peer => {}
        }
    }
    assert_eq!(
        tokio::time::timeout(T, read()).await.expect("an abort"),
        json!({"type":"attachment_import","version":1,"operation":"abort","upload_id":"upl_h2"})
    );
}

/// The agent's end of a blocking client's pipes, scripted: `read` takes one host line.
struct SyncPeer {
    from_host: std::io::BufReader<std::io::PipeReader>,
    to_host: std::io::PipeWriter,
}

impl SyncPeer {
    fn read(&mut self) -> serde_json::Value {
        use std::io::BufRead as _;
        let mut line = String::new();
        self.from_host.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

/// A blocking client over OS pipes whose scripted agent, on a thread of its own, answers
/// `initialize` with agentx's own payload and accepts the upload `upl_h1`'s `begin`, then
/// runs `then`. The caller calls `initialize` and starts the upload.
fn accepting_sync_peer<T: Send + 'static>(
    tag: &str,
    then: impl FnOnce(&mut SyncPeer) -> T + Send + 'static,
) -> (Client, std::thread::JoinHandle<(T, SyncPeer)>, Home) {
    use serde_json::json;
    use std::io::Write as _;

    let h = Home::new(tag);
    let payload = agentx_initialize_payload(&h.0);
    let (host_r, to_host) = std::io::pipe().unwrap();
    let (agent_r, host_w) = std::io::pipe().unwrap();
    let client = Client::attach(host_r, host_w, ClientOptions::default());
    let peer = std::thread::spawn(move || {
        let mut p = SyncPeer {
            from_host: std::io::BufReader::new(agent_r),
            to_host,
        };
        let req = p.read();
        let resp = json!({"type":"control_response","response":{"subtype":"success",
            "request_id":req["request_id"],"response":payload}});
        writeln!(p.to_host, "{resp}").unwrap();
        assert_eq!(p.read()["operation"], "begin");
        let accepted = json!({"type":"attachment_import_result","version":1,
            "upload_id":"upl_h1","attachment_id":"att_h1","status":"accepted",
            "terminal":false,"prompt_uuid":PROMPT});
        writeln!(p.to_host, "{accepted}").unwrap();
        (then(&mut p), p)
    });
    (client, peer, h)
}

/// The blocking client's half of the rule above: a timed-out upload is aborted on the wire.
#[test]
fn a_timed_out_blocking_upload_is_aborted_on_the_wire() {
    use serde_json::json;

    let (client, peer, _home) = accepting_sync_peer("abandon-sync", |p| {
        assert_eq!(p.read()["operation"], "chunk");
        assert_eq!(p.read()["operation"], "commit");
        p.read()
    });
    client.initialize(T).unwrap();
    let png = samples::png_gradient(8, 8);
    let r = client.upload(
        UploadSource::Bytes(&png),
        "a.png",
        "image/png",
        PROMPT,
        Duration::from_secs(2),
    );
    assert!(r.as_ref().is_err_and(HostError::is_timeout), "{r:?}");
    // Without an abort the peer would read EOF here and fail, not wait.
    client.end_input();
    let (abort, p) = peer.join().unwrap();
    assert_eq!(
        abort,
        json!({"type":"attachment_import","version":1,"operation":"abort","upload_id":"upl_h1"})
    );
    drop(p);
    let _ = client.close(T);
}

/// A blocking upload whose agent stops reading its input mid-upload times out by its
/// `timeout` (the chunk's write is stuck; it blocked in it for ever) and is aborted on the
/// wire: once the agent reads again it finds the chunk that was being written, then the
/// abort, and nothing else.
#[test]
fn a_blocking_upload_times_out_when_the_agent_stops_reading_and_is_aborted_after_the_chunk() {
    let (resume_tx, resume) = std::sync::mpsc::channel::<()>();
    let (client, peer, _home) = accepting_sync_peer("deaf-sync", move |p| {
        // Stops reading until the upload returned.
        resume.recv().unwrap();
        let mut ops = Vec::new();
        loop {
            let op = p.read()["operation"].as_str().unwrap().to_owned();
            ops.push(op.clone());
            if op == "abort" {
                break ops;
            }
        }
    });
    client.initialize(T).unwrap();
    // Chunks of the advertised size, each far more than a pipe holds.
    let bytes = vec![7u8; 4 << 20];
    let r = client.upload(
        UploadSource::Bytes(&bytes),
        "blob.bin",
        "application/octet-stream",
        PROMPT,
        Duration::from_secs(2),
    );
    assert!(
        matches!(
            r,
            Err(HostError::Timeout {
                subtype: "attachment_import"
            })
        ),
        "{r:?}"
    );
    resume_tx.send(()).unwrap();
    let (ops, p) = peer.join().unwrap();
    assert_eq!(ops, ["chunk", "abort"]);
    drop(p);
    let _ = client.close(T);
}
