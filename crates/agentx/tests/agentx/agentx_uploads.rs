//! Black-box: attachment uploads through the real `agentx` binary in stream-json mode
//! (WIRE-017..022, PROFILE §6, §6a, §12; scenarios 22–24): two correlated uploads
//! and one prompt referencing both, every chunk and commit failure ending its upload once,
//! reservations and temporary files settled (checked on disk, against the 512 MiB bound
//! counted from the home's files), a failing `priority: "now"` record that does not interrupt
//! the active turn, the 9th concurrent upload, EOF during an upload, `--no-attachments`, and
//! two processes sharing one AgentX home. Images are generated in the test (small PNG/JPEG
//! gradients); every captured stdout is checked by `agentx-wire check --direction output`.

use crate::harness;

use std::path::Path;

use agentx_core::attach::admit;
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{BlobStore, MediaType, Sha256Digest};
use agentx_core::fuzzing::attach::samples;
use agentx_home::FsBackend;
use harness::*;
use serde_json::{json, Value};

const P1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const P2: &str = "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";
const MAX_STORAGE: u64 = 536_870_912;

fn b64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

fn sha(bytes: &[u8]) -> String {
    Sha256Digest::of(bytes).to_hex()
}

#[allow(clippy::too_many_arguments)]
fn begin_decl(
    upload: &str,
    att: &str,
    prompt: &str,
    name: &str,
    size: u64,
    mime: &str,
    sha256: &str,
) -> Value {
    json!({"type":"attachment_import","version":1,"operation":"begin","prompt_uuid":prompt,
        "upload_id":upload,"attachment_id":att,"name":name,"size_bytes":size,
        "mime_type":mime,"sha256":sha256})
}

fn begin(upload: &str, att: &str, prompt: &str, mime: &str, raw: &[u8]) -> Value {
    begin_decl(
        upload,
        att,
        prompt,
        &format!("{att}.bin"),
        raw.len() as u64,
        mime,
        &sha(raw),
    )
}

fn chunk(upload: &str, sequence: i64, data: &str) -> Value {
    json!({"type":"attachment_import","version":1,"operation":"chunk","upload_id":upload,
        "sequence":sequence,"data":data})
}

fn commit(upload: &str) -> Value {
    json!({"type":"attachment_import","version":1,"operation":"commit","upload_id":upload})
}

fn abort(upload: &str) -> Value {
    json!({"type":"attachment_import","version":1,"operation":"abort","upload_id":upload})
}

fn accepted(upload: &str, att: &str, prompt: &str) -> Value {
    json!({"type":"attachment_import_result","version":1,"upload_id":upload,
        "attachment_id":att,"status":"accepted","terminal":false,"prompt_uuid":prompt})
}

fn ended(upload: &str, att: &str, prompt: &str, status: &str, reason: &str) -> Value {
    json!({"type":"attachment_import_result","version":1,"upload_id":upload,
        "attachment_id":att,"status":status,"terminal":true,"prompt_uuid":prompt,
        "reason":reason})
}

fn rejected(upload: &str, reason: &str) -> Value {
    json!({"type":"attachment_import_rejected","version":1,"upload_id":upload,
        "status":"rejected","terminal":false,"reason":reason})
}

fn committed(upload: &str, att: &str, prompt: &str, manifest: &Value) -> Value {
    json!({"type":"attachment_import_result","version":1,"upload_id":upload,
        "attachment_id":att,"status":"committed","terminal":true,"prompt_uuid":prompt,
        "attachment":manifest})
}

/// The manifest WIRE-017 requires for `raw` after normalization (PROFILE §6a), computed with
/// the library's own pipeline: the binary must commit exactly this.
fn expected_manifest(att: &str, name: &str, media: MediaType, raw: &[u8]) -> Value {
    let n = admit::normalize(media, raw, &Limits::default()).expect("sample normalizes");
    let m = admit::manifest(&n, att, name).unwrap();
    json!({"type":"attachment_ref","attachment_id":m.attachment_id,"kind":m.kind,"name":m.name,
        "mime_type":m.mime_type,"size_bytes":m.size_bytes,"sha256":m.sha256,
        "storage_id":m.storage_id})
}

fn media_of(mime: &str) -> MediaType {
    MediaType::from_mime(mime).unwrap()
}

/// Uploads `raw` in chunks of `chunk_size` bytes and checks the exact acknowledgements:
/// accepted, nothing per valid chunk, one committed result with the expected manifest.
fn upload(
    a: &mut Agentx,
    upload_id: &str,
    att: &str,
    prompt: &str,
    mime: &str,
    raw: &[u8],
    chunk_size: usize,
) -> Value {
    a.send(&begin(upload_id, att, prompt, mime, raw));
    assert_eq!(a.next().unwrap(), accepted(upload_id, att, prompt));
    for (i, piece) in raw.chunks(chunk_size).enumerate() {
        a.send(&chunk(upload_id, i as i64, &b64(piece)));
    }
    a.send(&commit(upload_id));
    let manifest = expected_manifest(att, &format!("{att}.bin"), media_of(mime), raw);
    assert_eq!(
        a.next().unwrap(),
        committed(upload_id, att, prompt, &manifest),
        "stderr: {}",
        a.stderr_text()
    );
    manifest
}

fn prompt(uuid: &str, blocks: Vec<Value>, priority: Option<&str>) -> Value {
    let mut v = json!({"type":"user","uuid":uuid,"parent_tool_use_id":null,
        "message":{"role":"user","content_version":1,"content":blocks}});
    if let Some(p) = priority {
        v["priority"] = json!(p);
    }
    v
}

fn text(t: &str) -> Value {
    json!({"type":"text","text":t})
}

/// The scripted model's reply to text plus attachments (PROFILE §9).
fn echo_with(text: &str, manifests: &[&Value]) -> String {
    let mut s = format!("echo: {text}");
    for m in manifests {
        s.push_str(&format!(
            "\n[attachment {} {} {} {}]",
            m["attachment_id"].as_str().unwrap(),
            m["mime_type"].as_str().unwrap(),
            m["size_bytes"],
            m["sha256"].as_str().unwrap()
        ));
    }
    s
}

/// The capability of WIRE-023's native qualified attachment profile, exactly.
fn advertised_capabilities() -> Value {
    json!({"attachments":{"protocol_version":1,
        "sources":[{"source":"file_path","scope":"initial_cli"},{"source":"stream_json_v1","scope":"per_turn"}],
        "media_types":[
            {"kind":"image","mime_type":"image/png","max_bytes":20971520,"max_dimension":8192,"max_pixels":20000000,"transform_policy":"decode_reencode_strip_metadata_reject_oversize_no_resize"},
            {"kind":"image","mime_type":"image/jpeg","max_bytes":20971520,"max_dimension":8192,"max_pixels":20000000,"transform_policy":"decode_reencode_strip_metadata_reject_oversize_no_resize"},
            {"kind":"document","mime_type":"application/pdf","max_bytes":20971520,"max_pages":100,"transform_policy":"validate_structure_no_execute_no_ocr_no_conversion"}],
        "limits":{"max_attachments_per_message":8,"max_concurrent_uploads":8,"max_uploads_per_session":100000,
            "max_item_bytes":20971520,"max_aggregate_bytes":41943040,"max_storage_bytes":536870912,
            "max_model_request_media_bytes":41943040,"max_chunk_decoded_bytes":262144,
            "max_chunk_encoded_bytes":349528,"max_display_name_bytes":255,"max_mime_type_bytes":64,
            "max_image_dimension":8192,"max_image_pixels":20000000,"max_pdf_pages":100,
            "upload_timeout_ms":120000},
        "provider_limits":{"max_request_items":100,"max_encoded_media_bytes":55927120,
            "max_request_bytes":67108864,"max_ndjson_record_bytes":8388608}}})
}

// ---- what is on disk under `<home>/blobs` ----

fn blob_files(home: &Path) -> Vec<(String, u64)> {
    let Ok(dir) = std::fs::read_dir(home.join("blobs")) else {
        return Vec::new();
    };
    let mut v: Vec<(String, u64)> = dir
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("blob_sha256_"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

fn temporaries(home: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(home.join("blobs")) else {
        return Vec::new();
    };
    dir.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp-"))
        .collect()
}

/// The manifest ledger's lines, parsed (a torn last line fails the test).
fn ledger(home: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(home.join("blobs/manifests.ndjson")) else {
        return Vec::new();
    };
    assert!(text.is_empty() || text.ends_with('\n'), "torn ledger line");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A sparse blob file that makes the home's stored bytes `MAX_STORAGE - room`: the store
/// counts blob files by their length when it opens, so the 512 MiB bound is reachable
/// without writing 512 MiB.
fn fill_storage_leaving(home: &Path, room: u64) -> String {
    std::fs::create_dir_all(home.join("blobs")).unwrap();
    let name = format!("blob_sha256_{}", sha(b"filler"));
    let f = std::fs::File::create(home.join("blobs").join(&name)).unwrap();
    f.set_len(MAX_STORAGE - room).unwrap();
    name
}

/// Nothing in `stdout` carries upload bytes, their base64, a blob path or a data URL
/// (WIRE-022).
fn assert_no_bytes(stdout: &[u8], home: &Path, payloads: &[&[u8]]) {
    let s = String::from_utf8_lossy(stdout);
    for p in payloads {
        for window in [&p[..p.len().min(48)], &p[p.len().saturating_sub(48)..]] {
            let enc = b64(window);
            assert!(!s.contains(&enc[..40]), "base64 of an upload was written");
        }
    }
    // system/init's `cwd` is the home here (the harness's `--cwd`); no blob path may appear.
    let blobs = home.join("blobs");
    assert!(
        !s.contains(&*blobs.to_string_lossy()),
        "a blob path was written"
    );
    assert!(!s.contains("data:"), "a data URL was written");
}

/// Scenario 22 (WIRE-017..020, WIRE-022): `initialize` advertises the exact capability; two
/// uploads (PNG, JPEG with an EXIF orientation) each get one accepted and one committed
/// acknowledgement with the normalized manifest and nothing per chunk; a text-plus-two-
/// attachments prompt (`input_text` spelling) is replayed with `content_version` 1, canonical
/// `text`, block order and both complete manifests; the model sees both attachments in
/// order; the result carries the prompt UUID; the transcript on disk and stdout hold no bytes,
/// base64 or paths; the blob store holds exactly the two normalized blobs.
#[test]
fn scenario_22_two_uploads_one_prompt_replay_and_result() {
    let home = TempDir::new("up22");
    let mut a = Agentx::session(home.path(), &["--replay-user-messages"]);
    a.send(&control("init-1", "initialize"));
    let init = a.next().unwrap();
    assert_eq!(label(&init), "control_response:success");
    assert_eq!(
        init["response"]["response"]["input_capabilities"],
        advertised_capabilities()
    );

    let png = samples::png_gradient(64, 48);
    let jpeg = samples::jpeg_gradient(40, 30, Some(6));
    let m1 = upload(
        &mut a,
        "upl_image1",
        "att_image1",
        P1,
        "image/png",
        &png,
        700,
    );
    let m2 = upload(
        &mut a,
        "upl_image2",
        "att_image2",
        P1,
        "image/jpeg",
        &jpeg,
        500,
    );
    // The EXIF-rotated JPEG was re-encoded: the manifest is not the raw declaration.
    assert_ne!(m2["sha256"], sha(&jpeg));

    let sent = prompt(
        P1,
        vec![
            json!({"type":"input_text","text":"Compare these in order."}),
            m1.clone(),
            m2.clone(),
        ],
        None,
    );
    a.send(&sent);
    let turn = a.turn();
    let reply = echo_with("Compare these in order.", &[&m1, &m2]);
    assert_eq!(
        labels(&turn),
        [
            "user".to_owned(),
            "system/init".into(),
            "system/session_state_changed:running".into(),
            format!("assistant:text:{reply}"),
            "result:success".into(),
            "system/session_state_changed:idle".into(),
        ]
    );
    let replay = &turn[0];
    assert_eq!(replay["uuid"], P1);
    assert_eq!(replay["isReplay"], true);
    assert_eq!(
        replay["message"],
        json!({"role":"user","content_version":1,
            "content":[text("Compare these in order."), m1.clone(), m2.clone()]})
    );
    assert_eq!(turn[1]["input_capabilities"], advertised_capabilities());
    let result = &turn[4];
    assert_eq!(result["prompt_uuid"], P1);
    assert_ne!(result["uuid"], P1, "the result's own uuid is its event ID");
    assert_eq!(result["result"], reply.as_str());
    let sid = turn[1]["session_id"].as_str().unwrap().to_owned();

    // Blob store: exactly the two normalized blobs, one ledger line per manifest.
    let mut expected_blobs = vec![
        (
            m1["storage_id"].as_str().unwrap().to_owned(),
            m1["size_bytes"].as_u64().unwrap(),
        ),
        (
            m2["storage_id"].as_str().unwrap().to_owned(),
            m2["size_bytes"].as_u64().unwrap(),
        ),
    ];
    expected_blobs.sort();
    assert_eq!(blob_files(home.path()), expected_blobs);
    assert!(temporaries(home.path()).is_empty());
    assert_eq!(ledger(home.path()).len(), 2);

    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert!(done.rest.is_empty());
    done.assert_valid_output();
    assert_no_bytes(&done.stdout, home.path(), &[&png, &jpeg]);
    // The durable transcript keeps the replay form with both complete manifests (PROFILE §11)
    // and no bytes either.
    let transcript = std::fs::read(
        home.path()
            .join("sessions")
            .join(&sid)
            .join("transcript.ndjson"),
    )
    .unwrap();
    let first: Value = serde_json::from_slice(transcript.split(|b| *b == b'\n').next().unwrap())
        .expect("a transcript line");
    assert_eq!(first["message"], replay["message"]);
    assert_no_bytes(&transcript, home.path(), &[&png, &jpeg]);
}

/// Scenario 23, chunk rules (WIRE-018, PROFILE §2b): repeated, reordered, missing,
/// oversized (262,145 decoded bytes), noncanonical (unpadded, whitespace, nonzero padding
/// bits) and more-than-declared chunks each end their upload with one terminal `failed`
/// result; every later chunk, commit or abort of that upload is `after_terminal`, never a
/// second terminal. The home is filled to leave exactly one item's room under 512 MiB, so
/// each next `begin` of that size is accepted only if the last claim was released; a stale
/// temporary is swept at startup and no blob, temporary or ledger line is left behind.
#[test]
fn scenario_23_chunk_failures_end_once_and_settle_on_disk() {
    let home = TempDir::new("up23c");
    let doc = samples::pdf_with_pages(1);
    let room = doc.len() as u64;
    let filler = fill_storage_leaving(home.path(), room);
    std::fs::write(home.path().join("blobs/.tmp-stale-1-0"), b"left by a crash").unwrap();
    let mut a = Agentx::session(home.path(), &[]);
    let half = doc.len() / 2;
    let oversized = vec![b'%'; 262_145];
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "repeated",
            vec![
                chunk("upl_rep", 0, &b64(&doc[..half])),
                chunk("upl_rep", 0, &b64(&doc[..half])),
            ],
            "sequence_gap",
        ),
        (
            "reordered",
            vec![chunk("upl_ord", 1, &b64(&doc[half..]))],
            "sequence_gap",
        ),
        (
            "missing",
            vec![
                chunk("upl_mis", 0, &b64(&doc[..half])),
                chunk("upl_mis", 2, &b64(&doc[half..])),
            ],
            "sequence_gap",
        ),
        (
            "oversized",
            vec![chunk("upl_big", 0, &b64(&oversized))],
            "chunk_too_large",
        ),
        (
            "unpadded",
            vec![chunk("upl_unp", 0, "QQ")],
            "noncanonical_base64",
        ),
        (
            "whitespace",
            vec![chunk("upl_wsp", 0, "QUFB QUFB")],
            "noncanonical_base64",
        ),
        (
            "padding bits",
            vec![chunk("upl_pad", 0, "QR==")],
            "noncanonical_base64",
        ),
        (
            "more than declared",
            vec![chunk("upl_mor", 0, &b64(&[doc.as_slice(), b"x"].concat()))],
            "size_mismatch",
        ),
    ];
    for (i, (name, chunks, reason)) in cases.iter().enumerate() {
        let upload_id = chunks[0]["upload_id"].as_str().unwrap();
        let att = format!("att_c{i}");
        a.send(&begin(upload_id, &att, P1, "application/pdf", &doc));
        assert_eq!(
            a.next().unwrap(),
            accepted(upload_id, &att, P1),
            "{name}: the claim of the last case was released"
        );
        for c in chunks {
            a.send(c);
        }
        assert_eq!(
            a.next().unwrap(),
            ended(upload_id, &att, P1, "failed", reason),
            "{name}"
        );
        // Post-terminal operations: rejected, never a second terminal.
        a.send(&chunk(upload_id, 7, "QUFB"));
        a.send(&commit(upload_id));
        a.send(&abort(upload_id));
        for _ in 0..3 {
            assert_eq!(
                a.next().unwrap(),
                rejected(upload_id, "after_terminal"),
                "{name}"
            );
        }
        assert!(temporaries(home.path()).is_empty(), "{name}");
    }
    // The bound at its edge: one byte more than the room is refused; exactly the room is
    // accepted and commits, which fills the store to 512 MiB.
    a.send(&begin_decl(
        "upl_over",
        "att_over",
        P1,
        "over.pdf",
        room + 1,
        "application/pdf",
        &sha(&doc),
    ));
    assert_eq!(a.next().unwrap(), rejected("upl_over", "storage_full"));
    let m = upload(
        &mut a,
        "upl_fit",
        "att_fit",
        P1,
        "application/pdf",
        &doc,
        64,
    );
    a.send(&begin("upl_full", "att_full", P1, "application/pdf", &doc));
    assert_eq!(a.next().unwrap(), rejected("upl_full", "storage_full"));
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert!(done.rest.is_empty(), "{:?}", done.rest);
    done.assert_valid_output();
    let mut expected = vec![
        (filler, MAX_STORAGE - room),
        (m["storage_id"].as_str().unwrap().to_owned(), room),
    ];
    expected.sort();
    assert_eq!(blob_files(home.path()), expected);
    assert!(temporaries(home.path()).is_empty(), "the stale one swept");
    assert_eq!(ledger(home.path()), [m]);
}

/// Scenario 23, commit-time validation (PROFILE §6a): digest, size, MIME-claim and magic
/// mismatches and an undecodable image each end the upload `failed` once at commit, with
/// nothing stored; an unsupported MIME is refused at `begin`. A prompt referencing a failed
/// upload is not admitted (an input-error result, no turn), and the attachment ID is free
/// again for a good upload afterwards.
#[test]
fn scenario_23_commit_failures_store_nothing_and_the_prompt_is_not_admitted() {
    let home = TempDir::new("up23m");
    let mut a = Agentx::session(home.path(), &[]);
    let png = samples::png_gradient(32, 16);
    let jpeg = samples::jpeg_gradient(16, 16, None);
    let pdf = samples::pdf_with_pages(1);
    let mut flipped = png.clone();
    flipped[0x30] ^= 1;
    let mut corrupt = png.clone();
    let n = corrupt.len();
    corrupt[n - 20] ^= 0xff;
    // (case, declared size, declared digest, MIME claim, bytes sent, reason)
    type Case<'a> = (&'a str, u64, String, &'a str, Vec<u8>, &'a str);
    let cases: Vec<Case> = vec![
        (
            "digest",
            png.len() as u64,
            sha(&png),
            "image/png",
            flipped,
            "digest_mismatch",
        ),
        (
            "size",
            png.len() as u64,
            sha(&png),
            "image/png",
            png[..png.len() - 1].to_vec(),
            "size_mismatch",
        ),
        (
            "mime",
            jpeg.len() as u64,
            sha(&jpeg),
            "image/png",
            jpeg.clone(),
            "mime_mismatch",
        ),
        (
            "magic",
            pdf.len() as u64,
            sha(&pdf),
            "image/jpeg",
            pdf.clone(),
            "mime_mismatch",
        ),
        (
            "decode",
            corrupt.len() as u64,
            sha(&corrupt),
            "image/png",
            corrupt.clone(),
            "image_decode_failed",
        ),
    ];
    for (i, (name, size, digest, mime, bytes, reason)) in cases.iter().enumerate() {
        let u = format!("upl_m{i}");
        a.send(&begin_decl(&u, "att_m", P1, "m.img", *size, mime, digest));
        assert_eq!(a.next().unwrap(), accepted(&u, "att_m", P1), "{name}");
        a.send(&chunk(&u, 0, &b64(bytes)));
        a.send(&commit(&u));
        assert_eq!(
            a.next().unwrap(),
            ended(&u, "att_m", P1, "failed", reason),
            "{name}"
        );
        // One terminal only: a second commit is `after_terminal`, and the spent upload ID
        // (kept in the ledger) cannot begin again.
        a.send(&commit(&u));
        assert_eq!(a.next().unwrap(), rejected(&u, "after_terminal"), "{name}");
        a.send(&begin_decl(&u, "att_m", P1, "m.img", *size, mime, digest));
        assert_eq!(
            a.next().unwrap(),
            rejected(&u, "duplicate_upload"),
            "{name}"
        );
        assert!(blob_files(home.path()).is_empty(), "{name}");
        assert!(temporaries(home.path()).is_empty(), "{name}");
    }
    a.send(&begin("upl_gif", "att_gif", P1, "image/gif", b"GIF89a"));
    assert_eq!(a.next().unwrap(), rejected("upl_gif", "mime_unsupported"));

    // The prompt is not admitted: a reference to the upload that failed (as the manifest it
    // would have had) is an input error, and no turn starts.
    let would_be = expected_manifest("att_m", "m.img", MediaType::Png, &png);
    a.send(&prompt(P1, vec![text("look"), would_be.clone()], None));
    let r = a.next().unwrap();
    assert_eq!(label(&r), "result:error_during_execution");
    assert_eq!(r["num_turns"], 0);
    assert_eq!(r["prompt_uuid"], P1);
    assert_eq!(
        r["errors"],
        json!(["input error: message.content[1] is not a committed attachment (WIRE-020)"])
    );

    // The attachment ID is free again: a good upload under it commits and the prompt runs.
    let m = upload(&mut a, "upl_ok", "att_m", P1, "image/png", &png, 256);
    a.send(&prompt(P1, vec![text("look"), m.clone()], None));
    let turn = a.turn();
    assert_eq!(
        labels(&turn),
        [
            "system/init".to_owned(),
            "system/session_state_changed:running".into(),
            format!("assistant:text:{}", echo_with("look", &[&m])),
            "result:success".into(),
            "system/session_state_changed:idle".into(),
        ]
    );
    assert_eq!(blob_files(home.path()).len(), 1);
    assert_eq!(ledger(home.path()), [m]);
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
}

/// Scenario 23 / WIRE-020: a `priority: "now"` record mixing another prompt's attachment is
/// validated before it could interrupt: one input-error result, and the active turn goes on
/// (it is still there for the valid `now` record that follows, which interrupts it and runs).
#[test]
fn scenario_23_failing_priority_now_does_not_interrupt_the_active_turn() {
    let home = TempDir::new("up23n");
    let mut a = Agentx::session(home.path(), &[]);
    let m1 = upload(
        &mut a,
        "upl_1",
        "att_1",
        P1,
        "image/png",
        &samples::png_gradient(16, 8),
        1000,
    );
    let m2 = upload(
        &mut a,
        "upl_2",
        "att_2",
        P2,
        "image/png",
        &samples::png_gradient(8, 8),
        1000,
    );
    a.say("!say started\n!sleep 600000\n!say never");
    let upto = a.until(|v| label(v) == "assistant:text:started");
    assert_eq!(
        labels(&upto),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:text:started"
        ]
    );
    a.send(&prompt(
        P1,
        vec![text("now!"), m1.clone(), m2.clone()],
        Some("now"),
    ));
    let r = a.next().unwrap();
    assert_eq!(label(&r), "result:error_during_execution");
    assert_eq!(
        r["errors"],
        json!(["input error: message.content[2] was committed for another prompt_uuid (WIRE-020)"])
    );
    assert_eq!(r["prompt_uuid"], P1);
    assert_eq!(r["num_turns"], 0);
    // The sleeping turn is still active: the valid `now` record interrupts it now, and only
    // now does its error result appear, followed by the new turn.
    a.send(&prompt(P1, vec![text("now!"), m1.clone()], Some("now")));
    let rest = a.until(|v| is_result(v) && v["prompt_uuid"] == P1);
    assert_eq!(
        labels(&rest),
        [
            "result:error_during_execution".to_owned(),
            "system/session_state_changed:idle".into(),
            "system/session_state_changed:running".into(),
            format!("assistant:text:{}", echo_with("now!", &[&m1])),
            "result:success".into(),
        ]
    );
    assert!(
        rest[0].get("prompt_uuid").is_none(),
        "the sleeping turn's result"
    );
    assert_eq!(
        labels(&a.turn()),
        ["system/session_state_changed:idle"],
        "one idle at the end"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
}

/// WIRE-018: at most 8 lifecycles are active; the 9th `begin` is rejected
/// `too_many_active_uploads` and changes nothing; an abort frees a slot; EOF then ends all 8
/// with one `aborted` / `input_eof` each, and nothing reaches the disk.
#[test]
fn ninth_concurrent_upload_is_rejected() {
    let home = TempDir::new("up9");
    let mut a = Agentx::session(home.path(), &[]);
    let png = samples::png_gradient(8, 8);
    for i in 0..8 {
        let (u, att) = (format!("upl_{i}"), format!("att_{i}"));
        a.send(&begin(&u, &att, P1, "image/png", &png));
        assert_eq!(a.next().unwrap(), accepted(&u, &att, P1));
        a.send(&chunk(&u, 0, &b64(&png[..10])));
    }
    a.send(&begin("upl_8", "att_8", P1, "image/png", &png));
    assert_eq!(
        a.next().unwrap(),
        rejected("upl_8", "too_many_active_uploads")
    );
    a.send(&abort("upl_3"));
    assert_eq!(
        a.next().unwrap(),
        ended("upl_3", "att_3", P1, "aborted", "client_abort")
    );
    a.send(&begin("upl_8", "att_8", P1, "image/png", &png));
    assert_eq!(a.next().unwrap(), accepted("upl_8", "att_8", P1));
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let mut ids: Vec<&str> = done
        .rest
        .iter()
        .map(|r| r["upload_id"].as_str().unwrap())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        ["upl_0", "upl_1", "upl_2", "upl_4", "upl_5", "upl_6", "upl_7", "upl_8"]
    );
    for r in &done.rest {
        let u = r["upload_id"].as_str().unwrap();
        let att = u.replace("upl_", "att_");
        assert_eq!(r, &ended(u, &att, P1, "aborted", "input_eof"));
    }
    done.assert_valid_output();
    assert!(blob_files(home.path()).is_empty());
    assert!(temporaries(home.path()).is_empty());
    assert!(ledger(home.path()).is_empty());
}

/// EOF during an upload (PROFILE §8, WIRE-EOF-001): the final unterminated `commit` line of
/// one upload is dispatched first and commits; the other upload, still receiving, ends once
/// `aborted` / `input_eof`; the process exits 0 with only the committed blob on disk.
#[test]
fn eof_during_an_upload() {
    let home = TempDir::new("upeof");
    let mut a = Agentx::session(home.path(), &[]);
    let png = samples::png_gradient(24, 24);
    let jpeg = samples::jpeg_gradient(24, 24, None);
    a.send(&begin("upl_done", "att_done", P1, "image/png", &png));
    assert_eq!(a.next().unwrap(), accepted("upl_done", "att_done", P1));
    a.send(&chunk("upl_done", 0, &b64(&png)));
    a.send(&begin("upl_open", "att_open", P1, "image/jpeg", &jpeg));
    assert_eq!(a.next().unwrap(), accepted("upl_open", "att_open", P1));
    a.send(&chunk("upl_open", 0, &b64(&jpeg[..100])));
    a.send_raw(
        serde_json::to_string(&commit("upl_done"))
            .unwrap()
            .as_bytes(),
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let m = expected_manifest("att_done", "att_done.bin", MediaType::Png, &png);
    assert_eq!(
        done.rest,
        [
            committed("upl_done", "att_done", P1, &m),
            ended("upl_open", "att_open", P1, "aborted", "input_eof"),
        ]
    );
    done.assert_valid_output();
    assert_eq!(
        blob_files(home.path()),
        [(
            m["storage_id"].as_str().unwrap().to_owned(),
            m["size_bytes"].as_u64().unwrap()
        )]
    );
    assert!(temporaries(home.path()).is_empty());
    assert_eq!(ledger(home.path()), [m]);
}

/// Scenario 24 / PROFILE §12: with `--no-attachments` neither `initialize` nor system/init
/// carries `input_capabilities`; every import operation is rejected `capability_absent`; a
/// prompt with an `attachment_ref` is an input-error result before any model work (no init,
/// no running); legacy string and text-block prompts run unchanged. Nothing is stored.
#[test]
fn scenario_24_no_attachments() {
    let home = TempDir::new("up24");
    let mut a = Agentx::session(home.path(), &["--no-attachments"]);
    a.send(&control("init-1", "initialize"));
    let init = a.next().unwrap();
    assert_eq!(label(&init), "control_response:success");
    assert!(init["response"]["response"]
        .get("input_capabilities")
        .is_none());
    let png = samples::png_gradient(4, 4);
    a.send(&begin("upl_1", "att_1", P1, "image/png", &png));
    a.send(&chunk("upl_1", 0, &b64(&png)));
    a.send(&commit("upl_1"));
    a.send(&abort("upl_1"));
    for _ in 0..4 {
        assert_eq!(a.next().unwrap(), rejected("upl_1", "capability_absent"));
    }
    let manifest = expected_manifest("att_1", "a.png", MediaType::Png, &png);
    a.send(&prompt(P1, vec![text("see"), manifest], None));
    let r = a.next().unwrap();
    assert_eq!(label(&r), "result:error_during_execution");
    assert_eq!(r["num_turns"], 0);
    assert_eq!(r["prompt_uuid"], P1);
    assert_eq!(r["is_error"], true);
    assert_eq!(
        r["errors"],
        json!(["input error: attachments are not available in this session"])
    );
    // Text compatibility: a string, an object with string content, a text-block array.
    a.send(&json!({"type":"user","message":"plain","parent_tool_use_id":null}));
    let turn = a.turn();
    assert_eq!(
        labels(&turn),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:text:echo: plain",
            "result:success",
            "system/session_state_changed:idle"
        ]
    );
    assert!(turn[0].get("input_capabilities").is_none());
    a.say("object form");
    assert_eq!(labels(&a.turn())[1], "assistant:text:echo: object form");
    a.send(
        &json!({"type":"user","parent_tool_use_id":null,"message":{"role":"user",
        "content":[{"type":"text","text":"block"},{"type":"input_text","text":"two"}]}}),
    );
    assert_eq!(labels(&a.turn())[1], "assistant:text:echo: block\ntwo");
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
    assert!(blob_files(home.path()).is_empty());
    assert!(ledger(home.path()).is_empty());
}

/// Through the binary: two `agentx` processes on one AgentX home upload
/// interleaved (the same PNG in both, plus one distinct file each); the shared blob store
/// keeps one blob per unique normalized payload, one whole ledger line per manifest, no
/// temporaries, and a store opened afterwards counts every blob once.
#[test]
fn two_agentx_processes_share_one_home() {
    let home = TempDir::new("up2p");
    let mut a = Agentx::session(home.path(), &[]);
    let mut b = Agentx::session(home.path(), &[]);
    let png = samples::png_gradient(48, 32);
    let jpeg = samples::jpeg_gradient(32, 32, None);
    let pdf = samples::pdf_with_pages(2);
    a.send(&begin("upl_a", "att_a", P1, "image/png", &png));
    b.send(&begin("upl_b", "att_b", P2, "image/png", &png));
    assert_eq!(a.next().unwrap(), accepted("upl_a", "att_a", P1));
    assert_eq!(b.next().unwrap(), accepted("upl_b", "att_b", P2));
    for (i, piece) in png.chunks(300).enumerate() {
        a.send(&chunk("upl_a", i as i64, &b64(piece)));
        b.send(&chunk("upl_b", i as i64, &b64(piece)));
    }
    a.send(&commit("upl_a"));
    b.send(&commit("upl_b"));
    let ma = expected_manifest("att_a", "att_a.bin", MediaType::Png, &png);
    let mb = expected_manifest("att_b", "att_b.bin", MediaType::Png, &png);
    assert_eq!(a.next().unwrap(), committed("upl_a", "att_a", P1, &ma));
    assert_eq!(b.next().unwrap(), committed("upl_b", "att_b", P2, &mb));
    assert_eq!(ma["storage_id"], mb["storage_id"]);
    let mj = upload(&mut a, "upl_j", "att_j", P1, "image/jpeg", &jpeg, 400);
    let mp = upload(&mut b, "upl_p", "att_p", P2, "application/pdf", &pdf, 400);
    // Each process still runs its own prompt with its own attachments.
    b.send(&prompt(
        P2,
        vec![text("both"), mb.clone(), mp.clone()],
        None,
    ));
    assert_eq!(
        labels(&b.turn())[2],
        format!("assistant:text:{}", echo_with("both", &[&mb, &mp]))
    );
    for p in [a, b] {
        let done = p.finish();
        assert_eq!(done.status, Some(0), "{}", done.stderr);
        done.assert_valid_output();
    }
    let mut expected = vec![
        (
            ma["storage_id"].as_str().unwrap().to_owned(),
            ma["size_bytes"].as_u64().unwrap(),
        ),
        (
            mj["storage_id"].as_str().unwrap().to_owned(),
            mj["size_bytes"].as_u64().unwrap(),
        ),
        (
            mp["storage_id"].as_str().unwrap().to_owned(),
            mp["size_bytes"].as_u64().unwrap(),
        ),
    ];
    expected.sort();
    assert_eq!(blob_files(home.path()), expected);
    assert!(temporaries(home.path()).is_empty());
    let mut lines = ledger(home.path());
    lines.sort_by_key(|v| v["attachment_id"].as_str().unwrap().to_owned());
    assert_eq!(lines, [ma, mb, mj, mp]);
    let store = BlobStore::open(FsBackend::open(home.path()).unwrap(), &Limits::default()).unwrap();
    assert_eq!(
        store.used_bytes(),
        expected.iter().map(|(_, n)| n).sum::<u64>()
    );
    assert_eq!(store.manifest_count(), 4);
}

/// The manifest a `file_path` source gets (PROFILE §2, §13): the derived stable attachment
/// ID, the file name as its name.
fn file_manifest(name: &str, media: MediaType, raw: &[u8]) -> Value {
    let n = admit::normalize(media, raw, &Limits::default()).unwrap();
    let id = admit::derive_attachment_id(&n.sha256, name);
    expected_manifest(&id, name, media, raw)
}

/// PROFILE §13: `-p --attach PATH…` admits each file as a `file_path`
/// source through the same pipeline and blob store, and the prompt carries the manifests
/// after its text: the model sees them in order; `agentx-wire attach` on another home
/// commits the same manifest for the same file.
#[test]
fn one_shot_attach_png_and_pdf() {
    let home = TempDir::new("up-p");
    let png = samples::png_gradient(30, 20);
    let pdf = samples::pdf_with_pages(3);
    let (fa, fb) = (home.path().join("screen.png"), home.path().join("spec.pdf"));
    std::fs::write(&fa, &png).unwrap();
    std::fs::write(&fb, &pdf).unwrap();
    let (fa, fb) = (fa.to_str().unwrap(), fb.to_str().unwrap());
    let (status, out, err) = run_in_home(
        home.path(),
        &[
            "-p",
            "what is this",
            "--attach",
            fa,
            "--attach",
            fb,
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(status, Some(0), "{err}");
    check_output(&out);
    let recs: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let ma = file_manifest("screen.png", MediaType::Png, &png);
    let mb = file_manifest("spec.pdf", MediaType::Pdf, &pdf);
    let reply = echo_with("what is this", &[&ma, &mb]);
    assert_eq!(
        labels(&recs),
        [
            "system/init".to_owned(),
            "system/session_state_changed:running".into(),
            format!("assistant:text:{reply}"),
            "result:success".into(),
            "system/session_state_changed:idle".into(),
        ]
    );
    assert_eq!(recs[0]["input_capabilities"], advertised_capabilities());
    assert_no_bytes(&out, home.path(), &[&png, &pdf]);
    assert!(!String::from_utf8_lossy(&out).contains(fa), "no file path");
    let mut blobs = vec![
        (
            ma["storage_id"].as_str().unwrap().to_owned(),
            ma["size_bytes"].as_u64().unwrap(),
        ),
        (
            mb["storage_id"].as_str().unwrap().to_owned(),
            mb["size_bytes"].as_u64().unwrap(),
        ),
    ];
    blobs.sort();
    assert_eq!(blob_files(home.path()), blobs);
    assert_eq!(ledger(home.path()), [ma.clone(), mb]);

    // The same file through `agentx-wire attach` on another home: the same manifest.
    let other = TempDir::new("up-p-attach");
    let out = std::process::Command::new(agentx_test_support::bin("agentx-wire"))
        .args(["attach", "--home", other.path().to_str().unwrap(), fa])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(serde_json::from_slice::<Value>(&out.stdout).unwrap(), ma);
}

/// WIRE-022: the result of an attachment-bearing `-p` turn carries the stable `prompt_uuid`,
/// a UUID distinct from the result's own `uuid`, in both formats that write a result; a
/// turn without attachments carries none.
#[test]
fn one_shot_attach_result_carries_the_prompt_uuid() {
    let home = TempDir::new("up-p-uuid");
    let f = home.path().join("dot.png");
    std::fs::write(&f, samples::png_gradient(4, 4)).unwrap();
    let f = f.to_str().unwrap();
    for format in ["json", "stream-json"] {
        let (status, out, err) = run_in_home(
            home.path(),
            &["-p", "look", "--attach", f, "--output-format", format],
        );
        assert_eq!(status, Some(0), "{err}");
        let result: Value = out
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice::<Value>(l).unwrap())
            .find(|r| r["type"] == "result")
            .expect("a result");
        let prompt_uuid = result["prompt_uuid"].as_str().expect("prompt_uuid");
        assert!(uuid::Uuid::parse_str(prompt_uuid).is_ok(), "{prompt_uuid}");
        assert_ne!(result["uuid"].as_str(), Some(prompt_uuid));
    }
    let (status, out, _) = run_in_home(home.path(), &["-p", "look", "--output-format", "json"]);
    assert_eq!(status, Some(0));
    let result: Value = serde_json::from_slice(out.trim_ascii_end()).unwrap();
    assert!(result.get("prompt_uuid").is_none(), "{result}");
}

/// `max_attachments_per_message` (8) at its edge for `--attach`: 8 files run, a 9th is
/// rejected before any output; `--no-attachments` refuses `--attach` (`capability_absent`);
/// an unreadable path is a rejection too. A rejection writes nothing on stdout, exits 1.
#[test]
fn one_shot_attach_limits_and_refusals() {
    let home = TempDir::new("up-p8");
    let mut args: Vec<String> = vec!["-p".into(), "eight".into()];
    let mut manifests = Vec::new();
    for i in 0..9 {
        let png = samples::png_gradient(4 + i, 4);
        let name = format!("p{i}.png");
        let f = home.path().join(&name);
        std::fs::write(&f, &png).unwrap();
        args.push("--attach".into());
        args.push(f.to_string_lossy().into_owned());
        manifests.push(file_manifest(&name, MediaType::Png, &png));
    }
    let eight: Vec<&str> = args[..2 + 16].iter().map(String::as_str).collect();
    let (status, out, err) = run_in_home(home.path(), &eight);
    assert_eq!(status, Some(0), "{err}");
    let refs: Vec<&Value> = manifests[..8].iter().collect();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        echo_with("eight", &refs) + "\n"
    );

    let nine: Vec<&str> = args.iter().map(String::as_str).collect();
    let (status, out, err) = run_in_home(home.path(), &nine);
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.lines().last().unwrap(),
        "agentx: attachment rejected: aggregate_too_large"
    );

    let mut refused = eight.clone();
    refused.push("--no-attachments");
    let (status, out, err) = run_in_home(home.path(), &refused);
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.lines().last().unwrap(),
        "agentx: attachment rejected: capability_absent"
    );

    let missing = home.path().join("missing.png");
    let (status, out, err) = run_in_home(
        home.path(),
        &["-p", "x", "--attach", missing.to_str().unwrap()],
    );
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.lines().last().unwrap(),
        "agentx: attachment rejected: process_failure"
    );
    assert!(
        !err.contains("missing.png"),
        "no path in the diagnostic: {err}"
    );
}

/// WIRE-020's queue reservation is checked before a `priority: "now"` record interrupts:
/// with 128 records queued behind an active turn, a valid `now` prompt with a committed
/// attachment is an input-error result (`the user-record queue is full`), the active turn is
/// not interrupted, and the committed attachment is not consumed: once the queue drained,
/// the same prompt is admitted and runs.
#[test]
fn a_full_queue_refuses_a_priority_now_prompt_without_interrupting() {
    let home = TempDir::new("up-q");
    let mut a = Agentx::session(home.path(), &[]);
    let m1 = upload(
        &mut a,
        "upl_q",
        "att_q",
        P1,
        "image/png",
        &samples::png_gradient(8, 8),
        64,
    );
    a.say("!say started\n!sleep 600000\n!say never");
    a.until(|v| label(v) == "assistant:text:started");
    for i in 0..128 {
        a.say(&format!("q{i}"));
    }
    let now = prompt(P1, vec![text("now!"), m1.clone()], Some("now"));
    a.send(&now);
    let r = a.next().unwrap();
    assert_eq!(label(&r), "result:error_during_execution");
    assert_eq!(
        r["errors"],
        json!(["input error: the user-record queue is full (WIRE-020)"])
    );
    assert_eq!(r["prompt_uuid"], P1);
    // Still the sleeping turn: the interrupt acknowledges it and its result follows.
    a.send(&control("int-1", "interrupt"));
    let rest = a.until(is_result);
    assert_eq!(
        labels(&rest),
        ["control_response:success", "result:error_during_execution"]
    );
    // The 128 queued records run in order; then the refused prompt is admitted as it was.
    let drained = a.until(|v| label(v) == "assistant:text:echo: q127");
    let echoes: Vec<String> = labels(&drained)
        .into_iter()
        .filter(|l| l.starts_with("assistant:"))
        .collect();
    let expected: Vec<String> = (0..128)
        .map(|i| format!("assistant:text:echo: q{i}"))
        .collect();
    assert_eq!(echoes, expected);
    a.turn();
    a.send(&now);
    let turn = a.turn();
    assert_eq!(
        labels(&turn)[1..],
        [
            format!("assistant:text:{}", echo_with("now!", &[&m1])),
            "result:success".into(),
            "system/session_state_changed:idle".into(),
        ]
    );
    assert_eq!(turn[2]["prompt_uuid"], P1);
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
}
