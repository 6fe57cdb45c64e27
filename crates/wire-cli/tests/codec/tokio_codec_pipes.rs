//! `driver::LineCodec` (feature `tokio`) over a real child process's pipes: typed records go
//! out through `FramedWrite` (each one a validated frame, WIRE-013) into `agentx-wire canon`,
//! and its canonical re-encoding comes back through `FramedRead` as lines, the unterminated
//! tail at EOF included (WIRE-EOF-001). The child's output must equal our frames byte for byte,
//! because both are the canonical encoding (PROFILE §2).

use std::process::Stdio;
use std::time::Duration;

use agentx_io::{CodecError, LineCodec};
use agentx_wire::encode::{CredentialSet, FrameEncoder};
use agentx_wire::frame::Reader;
use agentx_wire::json::Parser;
use agentx_wire::wire::OutputRecord;
use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::codec::{FramedRead, FramedWrite};

const TAIL: &[u8] = br#"{"type":"keep_alive"}"#;

async fn round_trip() {
    let stream = agentx_wire::sample::realistic_stream(5, 256 << 10);
    let mut parser = Parser::new();
    let records: Vec<OutputRecord<'static>> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            OutputRecord::decode_line(l, &mut parser)
                .expect("sample record")
                .into_owned()
        })
        .collect();
    // What we expect back: our own frames, then the tail with its terminator.
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let mut reference = FrameEncoder::new();
    for r in &records {
        let frame = reference.encode(r).expect("frame");
        expected.push(frame[..frame.len() - 1].to_vec());
    }
    expected.push(TAIL.to_vec());

    let mut child = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .args(["canon", "--direction", "output"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn agentx-wire canon");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");

    let writer = tokio::spawn(async move {
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(CredentialSet::new(["sk-never-in-the-sample-0123"]).unwrap())
            .unwrap();
        let mut sink = FramedWrite::new(stdin, LineCodec::with_parts(Reader::new(), encoder));
        for r in &records {
            sink.feed(r).await.expect("write record");
        }
        SinkExt::<&OutputRecord<'static>>::flush(&mut sink)
            .await
            .expect("flush");
        // An unterminated last record, then EOF: canon must still process it.
        let mut stdin = sink.into_inner();
        stdin.write_all(TAIL).await.expect("tail");
        stdin.shutdown().await.expect("close stdin");
        records.len()
    });

    let mut lines = FramedRead::new(stdout, LineCodec::new());
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut numbers = Vec::new();
    while let Some(item) = lines.next().await {
        let line = item.expect("read").expect("a frame, not a framing error");
        numbers.push(line.number);
        got.push(line.bytes.to_vec());
    }
    let sent = writer.await.expect("writer task");
    let status = child.wait().await.expect("child exit");
    assert!(status.success(), "canon failed: {status}");
    assert_eq!(sent + 1, got.len());
    assert_eq!(numbers, (1..=got.len() as u64).collect::<Vec<_>>());
    assert_eq!(got, expected);
}

#[test]
fn typed_records_round_trip_through_a_child_process() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), round_trip())
            .await
            .expect("round trip within 60 s");
    });
}

#[test]
fn a_record_carrying_a_credential_is_refused_before_the_pipe() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn cat");
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(CredentialSet::new(["sk-secret"]).unwrap())
            .unwrap();
        let mut sink = FramedWrite::new(
            child.stdin.take().unwrap(),
            LineCodec::with_parts(Reader::new(), encoder),
        );
        sink.send(&OutputRecord::KeepAlive).await.unwrap();
        let refused = sink
            .send(&br#"{"type":"result","result":"sk-secret"}"#[..])
            .await;
        assert!(matches!(refused, Err(CodecError::Refused(f)) if f.is_validation()));
        // The failure latched: a safe record is refused too (WIRE-015).
        assert!(sink.send(&OutputRecord::KeepAlive).await.is_err());
        sink.into_inner().shutdown().await.unwrap();
        let mut lines = FramedRead::new(child.stdout.take().unwrap(), LineCodec::new());
        let mut got = Vec::new();
        while let Some(item) = lines.next().await {
            got.push(item.unwrap().unwrap().bytes.to_vec());
        }
        assert_eq!(got, [br#"{"type":"keep_alive"}"#.to_vec()]);
        assert!(child.wait().await.unwrap().success());
    });
}
