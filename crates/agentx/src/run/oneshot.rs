//! One-shot mode (PROFILE §13): `agentx -p PROMPT [--attach PATH]… [--output-format …]` runs
//! one turn through the same session loop, with the prompt as the only input record and no
//! host to ask (ask = deny `no permission prompt available` unless a hook is configured).
//!
//! Each `--attach` is admitted before anything else as a `file_path` source (`initial_cli`)
//! through the attach pipeline and becomes an `attachment_ref` block after the text; a
//! rejection prints `agentx: attachment rejected: <code>` and exits 1 with stdout empty.
//! `text` prints the result text and `\n`, `json` the result record as one document,
//! `stream-json` every record. Exit 0 on a success result, 1 otherwise.

use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Instant;

use crate::args::agentx_args::{OneShotArgs, OneShotFormat};
use agentx_core::attach::limits::MAX_DISPLAY_NAME_BYTES;
use agentx_core::attach::{admit_file, Limits, ReasonCode};
use agentx_core::session::Attachments;
use agentx_io::RecordWriter;
use agentx_wire::encode::VALIDATION_FAILURE_TEXT;
use agentx_wire::json;
use agentx_wire::wire::{AttachmentRef, ImportOperation, OutputRecord};

use super::driver_loop::run_loop;
use super::identity::random_uuid;
use super::inbox::Inbox;
use super::startup::start;

/// Runs `-p`; returns the exit status.
pub fn run_one_shot(args: &OneShotArgs) -> i32 {
    let mut startup = match start(&args.common, false, false, None, &[]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let mut refs = Vec::new();
    if !args.attach.is_empty() {
        if args.common.no_attachments {
            eprintln!("agentx: attachment rejected: capability_absent");
            return 1;
        }
        match admit_all(&startup.home, &args.attach) {
            Ok(r) => refs = r,
            Err(code) => {
                eprintln!("agentx: attachment rejected: {}", code.as_str());
                return 1;
            }
        }
    }
    // PROFILE §13: a rejected attachment is its one stderr line; the notices come with a
    // run that starts.
    startup.say_notices();
    let line = user_line(&args.prompt, &refs);
    let attachments: Option<Box<dyn Attachments>> = if refs.is_empty() {
        None
    } else {
        Some(Box::new(CliAttachments { refs }))
    };
    // WIRE-013 for the text path too (PROFILE §13): its exact bytes, the result text and the
    // `\n`, pass the credential check before the one write. The result record passed it as
    // a frame, but the text's own line ending can complete a credential the frame did not hold.
    let credentials = startup.selection.credentials().clone();
    let mut sink = OneShotSink {
        format: args.output_format,
        out: io::stdout(),
        result: None,
    };
    let code = run_loop(
        startup,
        Inbox::threaded(Box::new(io::Cursor::new(line))),
        &mut sink,
        attachments,
        true,
    );
    let Some(result) = sink.result.take() else {
        return 1;
    };
    let success = result_is_success(&result);
    let printed = match args.output_format {
        OneShotFormat::StreamJson => Ok(()),
        OneShotFormat::Json => write_out(&result),
        OneShotFormat::Text => {
            let mut text = result_text(&result).into_bytes();
            text.push(b'\n');
            if credentials.matches(&text, &mut Vec::new()) {
                eprintln!("{VALIDATION_FAILURE_TEXT}");
                return 1;
            }
            write_out(&text)
        }
    };
    match printed {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 1,
        Err(_) => {
            eprintln!("agentx: output failed: the record writer failed");
            1
        }
        Ok(()) if code == 0 && success => 0,
        Ok(()) => 1,
    }
}

fn write_out(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()
}

/// Admits every `--attach` file in order (`file_path` source, `initial_cli` scope).
fn admit_all(home: &Path, paths: &[std::path::PathBuf]) -> Result<Vec<AttachmentRef>, ReasonCode> {
    let limits = Limits::default();
    let mut store = super::blobs::open_and_reclaim(home, &limits)?;
    let mut refs = Vec::with_capacity(paths.len());
    if paths.len() > limits.max_attachments_per_message {
        return Err(ReasonCode::AggregateTooLarge);
    }
    let mut total = 0u64;
    for path in paths {
        let mut raw = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(limits.max_item_bytes + 1).read_to_end(&mut raw))
            .map_err(|_| ReasonCode::ProcessFailure)?;
        if raw.len() as u64 > limits.max_item_bytes {
            return Err(ReasonCode::ItemTooLarge);
        }
        let name = display_name(path);
        let manifest = admit_file(&mut store, &raw, None, &name, None, &limits)?;
        total += manifest.size_bytes;
        if total > limits.max_aggregate_bytes {
            return Err(ReasonCode::AggregateTooLarge);
        }
        refs.push(manifest);
    }
    Ok(refs)
}

/// The last path component (never the path, WIRE-022), at most 255 bytes.
fn display_name(path: &Path) -> String {
    let base: String = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let mut end = base.len().min(MAX_DISPLAY_NAME_BYTES);
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    if end == 0 {
        "attachment".into()
    } else {
        base[..end].to_owned()
    }
}

/// The prompt as one `user` input line (WIRE-017 form with `content_version: 1` when there
/// are attachments).
fn user_line(prompt: &str, refs: &[AttachmentRef]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prompt.len() + 256);
    out.extend_from_slice(b"{\"type\":\"user\",\"uuid\":");
    json::write_str(&mut out, &random_uuid());
    out.extend_from_slice(b",\"message\":{\"role\":\"user\",");
    if !refs.is_empty() {
        out.extend_from_slice(b"\"content_version\":1,");
    }
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
    json::write_str(&mut out, prompt);
    out.push(b'}');
    for r in refs {
        out.push(b',');
        r.encode(&mut out);
    }
    out.extend_from_slice(b"]},\"parent_tool_use_id\":null}\n");
    out
}

/// The attachments committed from the command line: the prompt must carry exactly these.
struct CliAttachments {
    refs: Vec<AttachmentRef>,
}

impl Attachments for CliAttachments {
    fn import(&mut self, _op: &ImportOperation<'_>, _now: Instant) -> Vec<OutputRecord<'static>> {
        Vec::new()
    }

    fn admit_prompt(&mut self, user: &agentx_wire::wire::UserRecord<'_>) -> Result<(), String> {
        let refs: Vec<&AttachmentRef> = user.attachments().collect();
        if refs.len() == self.refs.len() && refs.iter().zip(&self.refs).all(|(a, b)| *a == b) {
            Ok(())
        } else {
            Err("attachments differ from the committed --attach files".into())
        }
    }

    fn reject_operation(
        &mut self,
        _upload_id: &str,
        _reason: &'static str,
        _now: Instant,
    ) -> Vec<OutputRecord<'static>> {
        Vec::new()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) -> Vec<OutputRecord<'static>> {
        Vec::new()
    }

    fn handle_eof(&mut self, _now: Instant) -> Vec<OutputRecord<'static>> {
        Vec::new()
    }
}

/// Keeps the result frame; in `stream-json` writes every frame.
struct OneShotSink {
    format: OneShotFormat,
    out: io::Stdout,
    result: Option<Vec<u8>>,
}

impl RecordWriter for OneShotSink {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        if self.format == OneShotFormat::StreamJson {
            self.out.lock().write_all(frame)?;
        }
        if is_result(frame) {
            self.result = Some(frame.to_vec());
        }
        Ok(frame.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.lock().flush()
    }
}

fn is_result(frame: &[u8]) -> bool {
    // Frames are validated records: the type is a plain string member.
    json::parse(frame.strip_suffix(b"\n").unwrap_or(frame))
        .ok()
        .and_then(|d| {
            let root = d.root();
            let obj = root.as_object()?;
            let t = obj.get("type")?.as_str()?;
            Some(t.eq_str("result"))
        })
        .unwrap_or(false)
}

fn result_is_success(frame: &[u8]) -> bool {
    json::parse(frame.strip_suffix(b"\n").unwrap_or(frame))
        .ok()
        .and_then(|d| {
            let root = d.root();
            let obj = root.as_object()?;
            Some(obj.get("is_error")?.as_bool() == Some(false))
        })
        .unwrap_or(false)
}

fn result_text(frame: &[u8]) -> String {
    json::parse(frame.strip_suffix(b"\n").unwrap_or(frame))
        .ok()
        .and_then(|d| {
            let root = d.root();
            let obj = root.as_object()?;
            Some(obj.get("result")?.as_str()?.decode().into_owned())
        })
        .unwrap_or_default()
}
