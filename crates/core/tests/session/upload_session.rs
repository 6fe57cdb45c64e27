//! Uploads through the session core on a virtual clock (`attach::Uploads` installed behind
//! `session::Attachments`): scenario 22 (two uploads, a text-plus-two-attachments prompt, its
//! replay and result), scenario 23's priority-`now` failure that must not interrupt the active
//! turn, scenario 24 (no capability), the upload timeout and EOF during an upload.

use crate::session_sim;

use agentx_core::attach::limits::Limits;
use agentx_core::attach::{BlobStore, MemoryBackend, Sha256Digest, Uploads};
use agentx_core::fuzzing::attach::samples;
use agentx_core::model::{Message, ModelEvent};
use serde_json::{json, Value};
use session_sim::*;

const P1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const P2: &str = "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";

fn with_uploads(mut config: agentx_core::session::SessionConfig) -> Sim {
    config.replay_user_messages = true;
    let limits = Limits::default();
    let store = BlobStore::open(MemoryBackend::default(), &limits).unwrap();
    let mut sim = Sim::new(config);
    sim.s.set_attachments(Box::new(Uploads::new(store, limits)));
    sim
}

fn begin(upload: &str, att: &str, prompt: &str, mime: &str, bytes: &[u8]) -> String {
    json!({"type":"attachment_import","version":1,"operation":"begin","prompt_uuid":prompt,
        "upload_id":upload,"attachment_id":att,"name":format!("{att}.img"),
        "size_bytes":bytes.len(),"mime_type":mime,"sha256":Sha256Digest::of(bytes).to_hex()})
    .to_string()
}

fn chunk(upload: &str, seq: u64, bytes: &[u8]) -> String {
    json!({"type":"attachment_import","version":1,"operation":"chunk","upload_id":upload,
        "sequence":seq,"data":base64_simd::STANDARD.encode_to_string(bytes)})
    .to_string()
}

fn commit(upload: &str) -> String {
    json!({"type":"attachment_import","version":1,"operation":"commit","upload_id":upload})
        .to_string()
}

/// Uploads `bytes` in 100-byte chunks and returns the committed manifest.
fn upload(
    sim: &mut Sim,
    upload_id: &str,
    att: &str,
    prompt: &str,
    mime: &str,
    bytes: &[u8],
) -> Value {
    let start = sim.out.len();
    sim.send(&begin(upload_id, att, prompt, mime, bytes));
    for (i, piece) in bytes.chunks(100).enumerate() {
        sim.send(&chunk(upload_id, i as u64, piece));
    }
    sim.send(&commit(upload_id));
    let acks = &sim.out[start..];
    assert_eq!(
        acks.len(),
        2,
        "accepted, nothing per chunk, one terminal: {acks:?}"
    );
    assert_eq!(
        acks[0],
        json!({"type":"attachment_import_result","version":1,"upload_id":upload_id,
            "attachment_id":att,"status":"accepted","terminal":false,"prompt_uuid":prompt})
    );
    assert_eq!(acks[1]["status"], "committed");
    assert_eq!(acks[1]["terminal"], true);
    assert_eq!(acks[1]["prompt_uuid"], prompt);
    acks[1]["attachment"].clone()
}

fn prompt_record(uuid: &str, blocks: Vec<Value>, priority: Option<&str>) -> String {
    let mut v = json!({"type":"user","uuid":uuid,"parent_tool_use_id":null,
        "message":{"role":"user","content_version":1,"content":blocks}});
    if let Some(p) = priority {
        v["priority"] = json!(p);
    }
    v.to_string()
}

/// Scenario 22 through the session: ordered typed content to the model, one terminal
/// acknowledgement per upload, the stable prompt UUID on the result, a replay with
/// content_version 1, block order and complete manifests, and no bytes anywhere.
#[test]
fn scenario_22_through_the_session() {
    let mut sim = with_uploads(config());
    let png = samples::png_gradient(16, 8);
    let jpeg = samples::jpeg_gradient(16, 8, None);
    let m1 = upload(&mut sim, "upl_image1", "att_image1", P1, "image/png", &png);
    let m2 = upload(
        &mut sim,
        "upl_image2",
        "att_image2",
        P1,
        "image/jpeg",
        &jpeg,
    );
    assert_eq!(m1["mime_type"], "image/png");
    assert_eq!(m2["kind"], "image");
    let start = sim.out.len();
    let blocks = vec![
        json!({"type":"text","text":"Compare these in order."}),
        m1.clone(),
        m2.clone(),
    ];
    sim.send(&prompt_record(P1, blocks.clone(), None));
    assert_eq!(
        sim.labels_from(start),
        [
            "user:replay",
            "init",
            "state:running",
            "assistant:text:echo: Compare these in order.",
            "result:success",
            "state:idle"
        ]
    );
    let replay = &sim.out[start];
    assert_eq!(replay["uuid"], P1);
    assert_eq!(replay["message"]["content_version"], 1);
    assert_eq!(replay["message"]["content"], json!(blocks));
    assert!(sim.out[start + 1]["input_capabilities"]["attachments"].is_object());
    let result = &sim.out[start + 4];
    assert_eq!(result["prompt_uuid"], P1);
    assert_ne!(
        result["uuid"], P1,
        "the result's own uuid is a distinct event ID"
    );
    let Some(Message::User {
        text, attachments, ..
    }) = sim.requests[0].messages.last()
    else {
        panic!("a user message")
    };
    assert_eq!(text, "Compare these in order.");
    let ids: Vec<&str> = attachments
        .iter()
        .map(|a| a.attachment_id.as_str())
        .collect();
    assert_eq!(ids, ["att_image1", "att_image2"]);
    assert_eq!(attachments[0].sha256, m1["sha256"].as_str().unwrap());
    // WIRE-022: no record carries the bytes' base64.
    let b64 = base64_simd::STANDARD.encode_to_string(&png[..60]);
    for v in &sim.out {
        assert!(!v.to_string().contains(&b64[..40]));
    }
    // The same prompt again: already submitted, an input error; nothing else changes.
    let before = sim.out.len();
    sim.send(&prompt_record(P1, blocks, None));
    assert_eq!(sim.labels_from(before), ["result:error_during_execution"]);
    assert_eq!(
        sim.last()["errors"],
        json!(["input error: message.content[1] was already submitted (WIRE-020)"])
    );
    assert_eq!(sim.last()["prompt_uuid"], P1);
    assert_eq!(sim.last()["num_turns"], 0);
}

/// Scenario 23: a priority-`now` record whose attachments fail WIRE-020 is an input-error
/// result and does not interrupt the active turn; the committed set stays usable.
#[test]
fn failing_priority_now_does_not_interrupt() {
    let mut sim = with_uploads(config());
    let png = samples::png_gradient(16, 8);
    let m1 = upload(&mut sim, "upl_1", "att_1", P1, "image/png", &png);
    let m2 = upload(
        &mut sim,
        "upl_2",
        "att_2",
        P2,
        "image/png",
        &samples::png_gradient(8, 8),
    );
    // A turn that stays open.
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_a".into(),
        }),
        Step::Pause,
    ]);
    sim.send(&user("long work"));
    assert!(sim.s.turn_active());
    let before = sim.out.len();
    let actions = sim.actions.len();
    // Mixes P2's attachment into P1's prompt.
    sim.send(&prompt_record(
        P1,
        vec![json!({"type":"text","text":"now!"}), m1.clone(), m2.clone()],
        Some("now"),
    ));
    assert_eq!(sim.labels_from(before), ["result:error_during_execution"]);
    assert_eq!(
        sim.last()["errors"],
        json!(["input error: message.content[2] was committed for another prompt_uuid (WIRE-020)"])
    );
    assert!(sim.s.turn_active(), "not interrupted");
    assert!(
        !sim.actions[actions..]
            .iter()
            .any(|a| matches!(a, agentx_core::session::Action::CancelModel { .. })),
        "no model cancellation"
    );
    assert_eq!(sim.s.queued_user_records(), 0);
    // The corrected prompt still goes in (and, being `now`, interrupts).
    sim.send(&prompt_record(
        P1,
        vec![json!({"type":"text","text":"now!"}), m1],
        Some("now"),
    ));
    assert!(sim
        .out
        .iter()
        .any(|v| v["type"] == "result" && v["prompt_uuid"] == P1 && v["subtype"] == "success"));
}

/// WIRE-020: a text-only prompt that omits its committed attachments is rejected whole.
#[test]
fn text_only_record_omitting_committed_attachments() {
    let mut sim = with_uploads(config());
    upload(
        &mut sim,
        "upl_1",
        "att_1",
        P1,
        "image/png",
        &samples::png_gradient(4, 4),
    );
    let before = sim.out.len();
    sim.send(&user_with("just text", json!({"uuid": P1})));
    assert_eq!(sim.labels_from(before), ["result:error_during_execution"]);
    assert_eq!(
        sim.last()["errors"],
        json!([
            "input error: 1 committed attachment(s) of this prompt_uuid not referenced (WIRE-020)"
        ])
    );
    // Another prompt UUID is unaffected.
    sim.send(&user_with("other", json!({"uuid": P2})));
    assert_eq!(sim.last()["state"], "idle");
    assert!(sim.requests.len() == 1);
}

/// Scenario 24 / PROFILE §12: no `input_capabilities`, imports rejected `capability_absent`,
/// an attachment reference is an input error before any model work; text is unchanged.
#[test]
fn scenario_24_no_attachments() {
    let mut config = config();
    config.attachments_enabled = false;
    let mut sim = Sim::new(config);
    let png = samples::png_gradient(4, 4);
    sim.send(&begin("upl_1", "att_1", P1, "image/png", &png));
    sim.send(&chunk("upl_1", 0, &png));
    sim.send(&commit("upl_1"));
    let rejected = json!({"type":"attachment_import_rejected","version":1,"upload_id":"upl_1",
        "status":"rejected","terminal":false,"reason":"capability_absent"});
    assert_eq!(sim.out, [rejected.clone(), rejected.clone(), rejected]);
    let sha = Sha256Digest::of(&png).to_hex();
    let manifest = json!({"type":"attachment_ref","attachment_id":"att_1","kind":"image",
        "name":"a.png","mime_type":"image/png","size_bytes":png.len(),"sha256":sha,
        "storage_id":format!("blob_sha256_{sha}")});
    sim.send(&prompt_record(P1, vec![manifest], None));
    assert_eq!(sim.labels_from(3), ["result:error_during_execution"]);
    assert!(sim.requests.is_empty(), "no model work");
    sim.send(&user("plain text"));
    sim.send(
        &json!({"type":"user","parent_tool_use_id":null,
        "message":{"role":"user","content":[{"type":"text","text":"block"}]}})
        .to_string(),
    );
    assert_eq!(sim.requests.len(), 2);
    let init = sim
        .of("system")
        .into_iter()
        .find(|v| v["subtype"] == "init")
        .unwrap();
    assert!(init.get("input_capabilities").is_none());
}

/// PROFILE §12: the timeout runs from `begin` on the session's clock.
#[test]
fn upload_timeout_through_the_session() {
    let mut sim = with_uploads(config());
    let png = samples::png_gradient(4, 4);
    let t0 = sim.now;
    sim.send(&begin("upl_t", "att_t", P1, "image/png", &png));
    assert_eq!(
        sim.s.poll_timeout(),
        Some(t0 + std::time::Duration::from_secs(120))
    );
    sim.advance(119_999);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(sim.out.len(), 1);
    sim.advance(1);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(
        sim.last(),
        &json!({"type":"attachment_import_result","version":1,"upload_id":"upl_t",
            "attachment_id":"att_t","status":"expired","terminal":true,"prompt_uuid":P1,
            "reason":"timeout"})
    );
    assert_eq!(sim.s.poll_timeout(), None);
    sim.send(&commit("upl_t"));
    assert_eq!(sim.last()["reason"], "after_terminal");
}

/// EOF during an upload: one `aborted` / `input_eof` result, then a clean exit.
#[test]
fn eof_during_an_upload() {
    let mut sim = with_uploads(config());
    let png = samples::png_gradient(4, 4);
    sim.send(&begin("upl_e", "att_e", P1, "image/png", &png));
    sim.send(&chunk("upl_e", 0, &png[..10]));
    sim.eof();
    assert_eq!(
        sim.last(),
        &json!({"type":"attachment_import_result","version":1,"upload_id":"upl_e",
            "attachment_id":"att_e","status":"aborted","terminal":true,"prompt_uuid":P1,
            "reason":"input_eof"})
    );
    assert_eq!(sim.out.len(), 2);
    assert!(sim.s.is_done().is_some());
}

/// PROFILE §2b: semantic import errors the decoder finds end or reject the upload; the
/// stream goes on.
#[test]
fn semantic_import_errors() {
    let mut sim = with_uploads(config());
    let png = samples::png_gradient(4, 4);
    sim.send(&begin("upl_a", "att_a", P1, "image/png", &png));
    // A zero size for a live ID: a duplicate begin, the live upload untouched.
    let mut zero: Value =
        serde_json::from_str(&begin("upl_a", "att_z", P1, "image/png", &png)).unwrap();
    zero["size_bytes"] = json!(0);
    sim.send(&zero.to_string());
    assert_eq!(sim.last()["reason"], "duplicate_upload");
    // A negative sequence ends the live upload.
    sim.send(
        &json!({"type":"attachment_import","version":1,"operation":"chunk",
        "upload_id":"upl_a","sequence":-1,"data":"QUFB"})
        .to_string(),
    );
    assert_eq!(sim.last()["status"], "failed");
    assert_eq!(sim.last()["reason"], "sequence_gap");
    // A full-length (67-byte) upload ID correlates exactly.
    let long = format!("upl_{}", "x".repeat(63));
    let mut bad: Value =
        serde_json::from_str(&begin(&long, "att_l", P1, "image/png", &png)).unwrap();
    bad["size_bytes"] = json!(0);
    sim.send(&bad.to_string());
    assert_eq!(sim.last()["upload_id"], long.as_str());
    assert_eq!(sim.last()["reason"], "schema_invalid");
    assert!(sim.s.is_done().is_none());
}
