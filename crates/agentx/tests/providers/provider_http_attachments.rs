//! PROFILE §14 "Attachments reach the model", through the real `agentx` binary and a real
//! HTTP/1.1 + SSE server on 127.0.0.1 that records every request (tests/provider_http_support):
//! images and PDFs uploaded over stdin (`attachment_import`, WIRE-018..020) and referenced are
//! sent as `image_url` / `file` parts in block order, their decoded bytes hash to the committed
//! manifests, no base64 reaches stdout, stderr or the store (WIRE-022), a resumed session sends
//! the earlier image again, a conversation over 40 MiB of media keeps the newest within the
//! request limits, a blob deleted after its upload ends the turn with `attachment <id> is
//! unavailable` and the session goes on, and `-p --attach` works the same way.

use crate::harness;
use crate::provider_http_support;

use std::path::Path;

use agentx_core::attach::admit;
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{MediaType, Sha256Digest};
use agentx_core::fuzzing::attach::samples;
use harness::*;
use provider_http_support::*;
use serde_json::{json, Value};

const KEY: &str = "sk-agentx-attach-9a8b7c6d";
const P1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const P2: &str = "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";
const P3: &str = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";

fn b64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

fn sha(bytes: &[u8]) -> String {
    Sha256Digest::of(bytes).to_hex()
}

fn home_with_openai(server: &Server) -> TempDir {
    let home = TempDir::new("attach-http");
    std::fs::write(
        home.path().join("auth.json"),
        format!(
            r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-4o","api_key":"{KEY}","base_url":"{}"}}]}}"#,
            server.base_url()
        ),
    )
    .unwrap();
    home
}

/// Uploads `raw` for `prompt` in 256 KiB chunks; returns the committed manifest.
fn upload(a: &mut Agentx, n: usize, att: &str, prompt: &str, mime: &str, raw: &[u8]) -> Value {
    let upload_id = format!("upl_{n}");
    a.send(
        &json!({"type":"attachment_import","version":1,"operation":"begin",
        "prompt_uuid":prompt,"upload_id":upload_id,"attachment_id":att,
        "name":format!("{att}.bin"),"size_bytes":raw.len(),"mime_type":mime,"sha256":sha(raw)}),
    );
    assert_eq!(
        a.next().unwrap()["status"],
        "accepted",
        "{}",
        a.stderr_text()
    );
    for (i, piece) in raw.chunks(262_144).enumerate() {
        a.send(
            &json!({"type":"attachment_import","version":1,"operation":"chunk",
            "upload_id":upload_id,"sequence":i,"data":b64(piece)}),
        );
    }
    a.send(
        &json!({"type":"attachment_import","version":1,"operation":"commit",
        "upload_id":upload_id}),
    );
    let done = a.next().unwrap();
    assert_eq!(done["status"], "committed", "{done}; {}", a.stderr_text());
    done["attachment"].clone()
}

fn prompt(uuid: &str, blocks: Vec<Value>) -> Value {
    json!({"type":"user","uuid":uuid,"parent_tool_use_id":null,
        "message":{"role":"user","content_version":1,"content":blocks}})
}

fn text(t: &str) -> Value {
    json!({"type":"text","text":t})
}

fn result_of(records: &[Value]) -> &Value {
    records.iter().find(|r| is_result(r)).expect("a result")
}

/// The recorded request bodies, parsed.
fn bodies(server: &Server) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|r| crate::conversation(&r.body))
        .collect()
}

/// The bytes of a `data:<mime>;base64,` URL, checked for its MIME type.
fn data_url_bytes(url: &str, mime: &str) -> Vec<u8> {
    let prefix = format!("data:{mime};base64,");
    let b = url
        .strip_prefix(&prefix)
        .expect("a data URL of the MIME type");
    base64_simd::STANDARD
        .decode_to_vec(b)
        .expect("strict base64")
}

/// The bytes a media part carries, with its kind (`image_url` or `file`).
fn part_bytes(part: &Value, manifest: &Value) -> Vec<u8> {
    let mime = manifest["mime_type"].as_str().unwrap();
    match part["type"].as_str().unwrap() {
        "image_url" => data_url_bytes(part["image_url"]["url"].as_str().unwrap(), mime),
        "file" => {
            assert_eq!(part["file"]["filename"], manifest["name"]);
            data_url_bytes(part["file"]["file_data"].as_str().unwrap(), mime)
        }
        other => panic!("not a media part: {other}"),
    }
}

/// The part is the attachment's bytes: size and SHA-256 of the committed manifest.
fn assert_part_is(part: &Value, manifest: &Value) {
    let bytes = part_bytes(part, manifest);
    assert_eq!(bytes.len() as u64, manifest["size_bytes"].as_u64().unwrap());
    assert_eq!(sha(&bytes), manifest["sha256"].as_str().unwrap());
}

fn metadata_part(m: &Value) -> Value {
    json!({"type":"text","text":format!("[attachment {} {} {} {}]",
        m["attachment_id"].as_str().unwrap(), m["mime_type"].as_str().unwrap(),
        m["size_bytes"], m["sha256"].as_str().unwrap())})
}

/// Every byte under the home except the blobs themselves and auth.json: sessions, manifests.
fn store_text(home: &Path) -> String {
    fn walk(p: &Path, out: &mut Vec<u8>) {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, out);
            } else if name != "auth.json" && !name.starts_with("blob_sha256_") {
                out.extend(std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = Vec::new();
    walk(home, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// WIRE-022: no piece of any sent base64 (a 64-character window from its middle), no
/// `;base64,` and no data URL on stdout, stderr or in the store.
fn assert_no_base64(sent: &[Vec<u8>], outputs: &[(&str, &str)]) {
    for (what, text) in outputs {
        assert!(!text.contains(";base64,"), "{what} holds a data URL");
        for bytes in sent {
            let enc = b64(bytes);
            let mid = enc.len() / 2 / 4 * 4;
            let window = &enc[mid..(mid + 64).min(enc.len())];
            assert!(!text.contains(window), "{what} holds base64 of a blob");
        }
    }
}

#[test]
fn profile_14_png_and_pdf_reach_the_model_as_parts_in_block_order() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let home = home_with_openai(&server);
    let png = samples::png_gradient(64, 48);
    let pdf = samples::pdf_with_pages(2);
    let mut a = Agentx::session(home.path(), &[]);
    let m_png = upload(&mut a, 1, "att_png", P1, "image/png", &png);
    let m_pdf = upload(&mut a, 2, "att_pdf", P1, "application/pdf", &pdf);
    a.send(&prompt(
        P1,
        vec![
            text("Compare the screenshot"),
            m_png.clone(),
            text("with the report."),
            m_pdf.clone(),
        ],
    ));
    let turn = a.turn();
    assert_eq!(result_of(&turn)["subtype"], "success", "{turn:#?}");
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 1);
    let content = &bodies[0]["messages"][0]["content"];
    let parts = content.as_array().expect("a content array");
    assert_eq!(parts.len(), 4, "{content}");
    assert_eq!(parts[0], text("Compare the screenshot"));
    assert_eq!(parts[1]["type"], "image_url");
    assert_part_is(&parts[1], &m_png);
    assert_eq!(parts[2], text("with the report."));
    assert_eq!(parts[3]["type"], "file");
    assert_part_is(&parts[3], &m_pdf);
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);
    let sent = [part_bytes(&parts[1], &m_png), part_bytes(&parts[3], &m_pdf)];
    let stdout = String::from_utf8_lossy(&f.stdout).into_owned();
    assert!(
        stdout.contains("\"storage_id\""),
        "the manifests are replayed"
    );
    assert_no_base64(
        &sent,
        &[
            ("stdout", &stdout),
            ("stderr", &f.stderr),
            ("store", &store_text(home.path())),
        ],
    );
    check_output(&f.stdout);
}

#[test]
fn profile_14_a_resumed_session_sends_the_earlier_image_again() {
    let server =
        Server::start_in_thread(vec![Reply::Sse(text_stream()), Reply::Sse(text_stream())]);
    let home = home_with_openai(&server);
    let png = samples::png_gradient(40, 30);
    let mut a = Agentx::session(home.path(), &[]);
    let m = upload(&mut a, 1, "att_shot", P1, "image/png", &png);
    a.send(&prompt(P1, vec![text("What is this?"), m.clone()]));
    let turn = a.turn();
    let sid = result_of(&turn)["session_id"].as_str().unwrap().to_string();
    let first = a.finish();
    assert_eq!(first.status, Some(0), "{}", first.stderr);

    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("And now?");
    let turn = b.turn();
    assert_eq!(result_of(&turn)["subtype"], "success");
    let second = b.finish();
    assert_eq!(second.status, Some(0), "{}", second.stderr);
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 2);
    // The same parts again: the history's user message is identical in both requests.
    assert_eq!(bodies[1]["messages"][0], bodies[0]["messages"][0]);
    let parts = bodies[1]["messages"][0]["content"].as_array().unwrap();
    assert_eq!(parts[0], text("What is this?"));
    assert_part_is(&parts[1], &m);
    let last = bodies[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"], "And now?");
    assert_no_base64(
        &[part_bytes(&parts[1], &m)],
        &[
            ("stdout", &String::from_utf8_lossy(&second.stdout)),
            ("stderr", &second.stderr),
            ("store", &store_text(home.path())),
        ],
    );
}

/// A one-page PDF of exactly `size` bytes (its content stream padded with comment lines).
fn pdf_of_size(size: usize, tag: u8) -> Vec<u8> {
    fn build(stream_len: usize, tag: u8) -> Vec<u8> {
        let mut pdf = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        let objects: [&[u8]; 3] = [
            b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n",
            b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n",
            b"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n",
        ];
        for o in objects {
            offsets.push(pdf.len());
            pdf.extend_from_slice(o);
        }
        let mut content = Vec::with_capacity(stream_len);
        while content.len() + 100 <= stream_len {
            content.push(b'%');
            content.extend(std::iter::repeat_n(b'a' + tag, 98));
            content.push(b'\n');
        }
        content.resize(stream_len, b'\n');
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("4 0 obj\n<< /Length {stream_len} >>\nstream\n").as_bytes());
        pdf.extend_from_slice(&content);
        pdf.extend_from_slice(b"\nendstream\nendobj\n");
        let xref = pdf.len();
        pdf.extend_from_slice(b"xref\n0 5\n0000000000 65535 f \n");
        for o in &offsets {
            pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
        );
        pdf
    }
    let mut n = size - build(0, tag).len();
    loop {
        let pdf = build(n, tag);
        if pdf.len() == size {
            return pdf;
        }
        n = (n as isize + size as isize - pdf.len() as isize) as usize;
    }
}

#[test]
fn profile_14_over_40_mib_of_media_the_newest_are_sent_within_the_request_limits() {
    const MIB: usize = 1 << 20;
    let server =
        Server::start_in_thread(vec![Reply::Sse(text_stream()), Reply::Sse(text_stream())]);
    let home = home_with_openai(&server);
    let a1 = pdf_of_size(14 * MIB, 0);
    let a2 = pdf_of_size(14 * MIB, 1);
    let a3 = pdf_of_size(14 * MIB, 2);
    let png = samples::png_gradient(32, 16);
    let mut a = Agentx::session(home.path(), &[]);
    let m1 = upload(&mut a, 1, "att_one", P1, "application/pdf", &a1);
    let m2 = upload(&mut a, 2, "att_two", P1, "application/pdf", &a2);
    a.send(&prompt(
        P1,
        vec![text("Read both."), m1.clone(), m2.clone()],
    ));
    assert_eq!(result_of(&a.turn())["subtype"], "success");
    let m3 = upload(&mut a, 3, "att_three", P2, "application/pdf", &a3);
    let m4 = upload(&mut a, 4, "att_four", P2, "image/png", &png);
    a.send(&prompt(P2, vec![m3.clone(), text("and this"), m4.clone()]));
    assert_eq!(result_of(&a.turn())["subtype"], "success");
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The first request: 28 MiB, both sent.
    let first: Value = crate::conversation(&requests[0].body);
    let parts = first["messages"][0]["content"].as_array().unwrap();
    assert_part_is(&parts[1], &m1);
    assert_part_is(&parts[2], &m2);
    // The second: 42 MiB + a PNG in the conversation; the oldest PDF falls back to its line.
    let body = &requests[1].body;
    let second: Value = crate::conversation(body);
    let history = second["messages"][0]["content"].as_array().unwrap();
    assert_eq!(history[0], text("Read both."));
    assert_eq!(history[1], metadata_part(&m1));
    assert_part_is(&history[2], &m2);
    let current = second["messages"][2]["content"].as_array().unwrap();
    assert_part_is(&current[0], &m3);
    assert_eq!(current[1], text("and this"));
    assert_part_is(&current[2], &m4);
    // The limits, measured on the recorded body.
    let mut items = 0u64;
    let mut raw = 0u64;
    let mut encoded = 0u64;
    for m in second["messages"].as_array().unwrap() {
        for p in m["content"].as_array().into_iter().flatten() {
            let url = match p["type"].as_str().unwrap() {
                "image_url" => p["image_url"]["url"].as_str().unwrap(),
                "file" => p["file"]["file_data"].as_str().unwrap(),
                _ => continue,
            };
            let b = url.split_once(";base64,").unwrap().1;
            items += 1;
            encoded += b.len() as u64;
            raw += base64_simd::STANDARD.decode_to_vec(b).unwrap().len() as u64;
        }
    }
    assert_eq!(items, 3);
    assert_eq!(raw, (28 * MIB + png_size(&m4)) as u64);
    assert!(raw <= 41_943_040, "raw media {raw}");
    assert!(encoded <= 55_927_120, "encoded media {encoded}");
    assert!(items <= 100);
    assert!(body.len() <= 67_108_864, "body {}", body.len());
    assert_eq!(
        requests[1].header("content-length"),
        Some(body.len().to_string().as_str())
    );
}

fn png_size(m: &Value) -> usize {
    m["size_bytes"].as_u64().unwrap() as usize
}

#[test]
fn profile_14_a_blob_deleted_after_upload_ends_the_turn_and_the_session_goes_on() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let home = home_with_openai(&server);
    let png = samples::png_gradient(24, 24);
    let mut a = Agentx::session(home.path(), &[]);
    let m = upload(&mut a, 1, "att_gone", P1, "image/png", &png);
    let blob = home
        .path()
        .join("blobs")
        .join(m["storage_id"].as_str().unwrap());
    std::fs::remove_file(&blob).unwrap();
    a.send(&prompt(P1, vec![text("Look."), m.clone()]));
    let turn = a.turn();
    let assistant = turn
        .iter()
        .find(|r| is_type(r, "assistant"))
        .expect("an assistant record");
    assert_eq!(assistant["error"], "invalid_request");
    assert_eq!(
        assistant["message"]["content"][0]["text"],
        "attachment att_gone is unavailable"
    );
    let r = result_of(&turn);
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
    assert!(server.requests().is_empty(), "nothing was sent");
    // The session goes on: the next prompt is answered, the gone image as its metadata line.
    a.say("Still there?");
    let turn = a.turn();
    assert_eq!(result_of(&turn)["subtype"], "success", "{turn:#?}");
    let bodies = bodies(&server);
    assert_eq!(bodies.len(), 1);
    let history = bodies[0]["messages"][0]["content"].as_array().unwrap();
    assert_eq!(history[0], text("Look."));
    assert_eq!(history[1], metadata_part(&m));
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);
    check_output(&f.stdout);
}

#[test]
fn profile_14_one_shot_attach_through_azure_openai() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let home = TempDir::new("attach-http-p");
    std::fs::write(
        home.path().join("auth.json"),
        format!(
            r#"{{"version":2,"providers":[{{"id":"az","type":"azure_openai","model":"gpt-4o","endpoint":"http://127.0.0.1:{}/","deployment":"vision-prod","api_version":"2024-10-21","api_key":"{KEY}"}}]}}"#,
            server.port
        ),
    )
    .unwrap();
    let png = samples::png_gradient(48, 32);
    let pdf = samples::pdf_with_pages(1);
    let png_path = home.path().join("shot.png");
    let pdf_path = home.path().join("report.pdf");
    std::fs::write(&png_path, &png).unwrap();
    std::fs::write(&pdf_path, &pdf).unwrap();
    let (status, stdout, stderr) = run_in_home(
        home.path(),
        &[
            "-p",
            "Describe both.",
            "--attach",
            png_path.to_str().unwrap(),
            "--attach",
            pdf_path.to_str().unwrap(),
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(status, Some(0), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0]
        .target
        .starts_with("/openai/deployments/vision-prod/chat/completions"));
    let body: Value = crate::conversation(&requests[0].body);
    let parts = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[0], text("Describe both."));
    // The manifests the binary commits for these files (PROFILE §6a), by the library's pipeline.
    let manifest = |media, raw: &[u8], name: &str| {
        let n = admit::normalize(media, raw, &Limits::default()).unwrap();
        let m = admit::manifest(&n, "att_x", name).unwrap();
        json!({"mime_type":m.mime_type,"size_bytes":m.size_bytes,"sha256":m.sha256,"name":m.name})
    };
    assert_eq!(parts[1]["type"], "image_url");
    assert_part_is(&parts[1], &manifest(MediaType::Png, &png, "shot.png"));
    assert_eq!(parts[2]["type"], "file");
    assert_part_is(&parts[2], &manifest(MediaType::Pdf, &pdf, "report.pdf"));
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    assert_no_base64(
        &[part_bytes(
            &parts[1],
            &manifest(MediaType::Png, &png, "shot.png"),
        )],
        &[
            ("stdout", &stdout),
            ("stderr", &stderr),
            ("store", &store_text(home.path())),
        ],
    );
}

#[test]
fn profile_14_three_prompts_keep_their_own_parts() {
    // Each message keeps its own attachments in its own place (P1, P2, P3), oldest first.
    let server = Server::start_in_thread(vec![
        Reply::Sse(text_stream()),
        Reply::Sse(text_stream()),
        Reply::Sse(text_stream()),
    ]);
    let home = home_with_openai(&server);
    let mut a = Agentx::session(home.path(), &[]);
    let mut manifests = Vec::new();
    for (i, p) in [P1, P2, P3].into_iter().enumerate() {
        let png = samples::png_gradient(8 + i, 8);
        let m = upload(&mut a, i, &format!("att_{i}"), p, "image/png", &png);
        a.send(&prompt(p, vec![m.clone()]));
        assert_eq!(result_of(&a.turn())["subtype"], "success");
        manifests.push(m);
    }
    a.finish();
    let bodies = bodies(&server);
    let msgs = bodies[2]["messages"].as_array().unwrap();
    let users: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 3);
    for (u, m) in users.iter().zip(&manifests) {
        let parts = u["content"].as_array().unwrap();
        assert_eq!(parts.len(), 1, "an attachment-only message is one part");
        assert_part_is(&parts[0], m);
    }
}
