//! Output records (agent → host): `assistant`, `stream_event`, `result` (WIRE-012),
//! `system/init` (WIRE-023, `input_capabilities`), every `system/*` subtype and lifecycle
//! event, `attachment_import_result`/`_rejected` (WIRE-019), and the `initialize` response
//! with its provider catalog (WIRE-024) and the discovery document (WIRE-026).

use agentx_wire::json::{self, Parser};
use agentx_wire::wire::initialize::{InitializeResponse, ProviderDiscovery};
use agentx_wire::wire::system_init::{InputCapabilities, ReasoningCapabilities};
use agentx_wire::wire::{
    Error, ErrorKind, ImportStatus, OutputRecord, ResultSubtype, SystemEvent, SystemSubtype,
    WireValue,
};

const U1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const U2: &str = "d2de22da-533a-4f64-b24b-0d87e1e527f4";
const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn output(line: &str) -> Result<OutputRecord<'_>, Error> {
    OutputRecord::decode_line(line.as_bytes(), &mut Parser::new())
}

fn canon(line: &str) -> String {
    let r = output(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let mut once = Vec::new();
    r.encode(&mut once);
    let once = String::from_utf8(once).unwrap();
    let again = output(&once).unwrap_or_else(|e| panic!("{once}: {e}"));
    assert_eq!(again, r, "{line}");
    let mut twice = Vec::new();
    again.encode(&mut twice);
    assert_eq!(String::from_utf8(twice).unwrap(), once);
    assert_eq!(r.clone().into_owned(), r);
    once
}

#[track_caller]
fn reject(line: &str, kind: ErrorKind, path: &str) {
    let e = output(line)
        .err()
        .unwrap_or_else(|| panic!("accepted {line}"));
    assert_eq!((e.kind(), e.path()), (kind, path), "{line}: {e}");
}

fn ids() -> String {
    format!(r#""uuid":"{U1}","session_id":"{U2}""#)
}

// ---------------------------------------------------------------- assistant, stream_event

#[test]
fn assistant_record() {
    let line = format!(
        r#"{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"a\u2028b"}}]}},"parent_tool_use_id":null,{}}}"#,
        ids()
    );
    let c = canon(&line);
    // U+2028 stays escaped in the canonical form (one physical line).
    assert!(c.contains(r"a\u2028b"), "{c}");
    let with_error = line.replacen(
        r#""parent_tool_use_id":null"#,
        r#""parent_tool_use_id":"toolu_1","error":"rate_limit""#,
        1,
    );
    assert!(canon(&with_error).ends_with(r#""error":"rate_limit"}"#));
    for cat in [
        "authentication_failed",
        "billing_error",
        "rate_limit",
        "invalid_request",
        "server_error",
        "unknown",
        "max_output_tokens",
    ] {
        canon(&line.replacen(
            r#""parent_tool_use_id":null"#,
            &format!(r#""parent_tool_use_id":null,"error":"{cat}""#),
            1,
        ));
    }
    reject(
        &line.replacen(
            r#""parent_tool_use_id":null"#,
            r#""parent_tool_use_id":null,"error":"overloaded""#,
            1,
        ),
        ErrorKind::Invalid,
        "error",
    );
    reject(
        &line.replacen(&format!(r#","uuid":"{U1}""#), "", 1),
        ErrorKind::Missing,
        "uuid",
    );
    reject(
        &format!(r#"{{"type":"assistant","message":"hi",{}}}"#, ids()),
        ErrorKind::WrongType,
        "message",
    );
    reject(
        &format!(r#"{{"type":"assistant",{}}}"#, ids()),
        ErrorKind::Missing,
        "message",
    );
    // Open record: members other CLIs add are ignored and not written back.
    let extra = line.replacen(
        r#""parent_tool_use_id":null"#,
        r#""parent_tool_use_id":null,"timestamp":"t","request_id":"r""#,
        1,
    );
    assert!(!canon(&extra).contains("timestamp"));
    // Duplicates inside the model payload still reject the record (WIRE-014).
    let dup = format!(
        r#"{{"type":"assistant","message":{{"id":"a","id":"b"}},{}}}"#,
        ids()
    );
    assert_eq!(
        output(&dup).unwrap_err().kind(),
        ErrorKind::Json(json::ErrorKind::DuplicateMember)
    );
}

#[test]
fn stream_event_record() {
    let line = format!(
        r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"Hi"}}}},"parent_tool_use_id":null,{}}}"#,
        ids()
    );
    assert_eq!(canon(&line), line);
    reject(
        &format!(r#"{{"type":"stream_event",{}}}"#, ids()),
        ErrorKind::Missing,
        "event",
    );
    reject(
        &format!(r#"{{"type":"stream_event","event":{{}},"uuid":"x","session_id":"{U2}"}}"#),
        ErrorKind::Invalid,
        "uuid",
    );
}

// ---------------------------------------------------------------- result

fn result(subtype: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"result","subtype":"{subtype}","is_error":false,"duration_ms":10,"duration_api_ms":9,"num_turns":1,"stop_reason":null,"total_cost_usd":null,"usage":{{"input_tokens":1}},"permission_denials":[]{extra},{}}}"#,
        ids()
    )
}

#[test]
fn result_success_and_error_subtypes() {
    // PROFILE §8: a success result carries `modelUsage` (and `permission_denials`).
    let ok = result("success", r#","result":"done","modelUsage":{}"#);
    let OutputRecord::Result(r) = output(&ok).unwrap() else {
        panic!()
    };
    assert_eq!(r.subtype, ResultSubtype::Success);
    canon(&ok);
    for sub in [
        "error_during_execution",
        "error_max_turns",
        "error_max_budget_usd",
        "error_max_structured_output_retries",
    ] {
        canon(&result(sub, r#","errors":["e1"]"#));
        // An error result carries `errors`; no success text is required.
        reject(&result(sub, ""), ErrorKind::Missing, "errors");
    }
    reject(&result("success", ""), ErrorKind::Missing, "result");
    // There is no cancelled subtype.
    reject(
        &result("cancelled", r#","errors":[]"#),
        ErrorKind::Invalid,
        "subtype",
    );
    // A cancelled stop reason is an ordinary string.
    canon(
        &result("error_during_execution", r#","errors":[]"#)
            .replace(r#""stop_reason":null"#, r#""stop_reason":"cancelled""#),
    );
    // Exact integers.
    reject(
        &ok.replace(r#""num_turns":1"#, r#""num_turns":1.0"#),
        ErrorKind::WrongType,
        "num_turns",
    );
    reject(
        &ok.replace(r#""duration_ms":10"#, r#""duration_ms":-1"#),
        ErrorKind::Invalid,
        "duration_ms",
    );
    reject(
        &ok.replace(r#""usage":{"input_tokens":1}"#, r#""usage":[]"#),
        ErrorKind::WrongType,
        "usage",
    );
    reject(
        &ok.replace(r#""total_cost_usd":null,"#, ""),
        ErrorKind::Missing,
        "total_cost_usd",
    );
    // Structured output, fast mode, the WIRE-022 prompt UUID and denials.
    let full = result(
        "success",
        &format!(
            r#","result":"x","structured_output":{{"a":[1]}},"fast_mode_state":"off","prompt_uuid":"{U1}","modelUsage":{{"m":{{"inputTokens":1,"outputTokens":2,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":null,"contextWindow":200000,"maxOutputTokens":64000}}}}"#
        ),
    )
    .replace(r#""permission_denials":[]"#, r#""permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"rm -rf /"}}]"#);
    canon(&full);
}

#[test]
fn result_cost_fidelity_wire_012() {
    // Unavailable pricing: null stays null, total and per model.
    let unknown = result(
        "success",
        r#","result":"x","modelUsage":{"m":{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":null}}"#,
    );
    let c = canon(&unknown);
    assert!(
        c.contains(r#""total_cost_usd":null"#) && c.contains(r#""costUSD":null"#),
        "{c}"
    );
    // A known zero stays numeric 0 (also when written 0.0), total and per model.
    let zero = unknown
        .replace(r#""total_cost_usd":null"#, r#""total_cost_usd":0.0"#)
        .replace(r#""costUSD":null"#, r#""costUSD":0"#);
    let c = canon(&zero);
    assert!(
        c.contains(r#""total_cost_usd":0,"#) && c.contains(r#""costUSD":0}"#),
        "{c}"
    );
    let OutputRecord::Result(r) = output(&zero).unwrap() else {
        panic!()
    };
    assert_eq!(r.total_cost_usd, Some(0.0));
    // A real price round-trips exactly.
    let priced = unknown.replace(
        r#""total_cost_usd":null"#,
        r#""total_cost_usd":0.00010960000000000001"#,
    );
    let OutputRecord::Result(r) = output(&priced).unwrap() else {
        panic!()
    };
    assert_eq!(r.total_cost_usd, Some(0.00010960000000000001));
    canon(&priced);
    reject(
        &unknown.replace(r#""costUSD":null"#, r#""costUSD":"0""#),
        ErrorKind::WrongType,
        "modelUsage.*.costUSD",
    );
    reject(
        &unknown.replace(r#","costUSD":null"#, ""),
        ErrorKind::Missing,
        "modelUsage.*.costUSD",
    );
}

// ---------------------------------------------------------------- system/init

fn init(extra: &str) -> String {
    format!(
        r#"{{"type":"system","subtype":"init","apiKeySource":"user","claude_code_version":"0.1.0","cwd":"/w","tools":["Bash"],"mcp_servers":[{{"name":"s","status":"connected"}}],"model":"gpt-5.6-sol","provider":"sol-east","provider_type":"azure_openai","reasoning_capabilities":{{"supported":true,"efforts":["low","medium","high"],"defaultEffort":"high"}},"permissionMode":"default","slash_commands":["compact"],"output_style":"default","skills":[],"plugins":[{{"name":"p","path":"/p"}}]{extra},{}}}"#,
        ids()
    )
}

#[test]
fn system_init_with_wire_023_fields_and_input_capabilities() {
    let line = init("");
    assert_eq!(canon(&line), line, "declared order is the canonical order");
    let OutputRecord::System(SystemEvent::Init(i)) = output(&line).unwrap() else {
        panic!()
    };
    assert_eq!(i.provider.as_deref(), Some("sol-east"));
    assert_eq!(
        i.reasoning_capabilities.as_ref().unwrap().efforts,
        ["low", "medium", "high"]
    );
    // The native capability, exactly as WIRE-023 shows it, round-trips.
    let mut caps = Vec::new();
    InputCapabilities::native().encode(&mut caps);
    let caps = String::from_utf8(caps).unwrap();
    assert!(caps.starts_with(r#"{"attachments":{"protocol_version":1,"sources":[{"source":"file_path","scope":"initial_cli"},{"source":"stream_json_v1","scope":"per_turn"}],"media_types":[{"kind":"image","mime_type":"image/png","max_bytes":20971520,"max_dimension":8192,"max_pixels":20000000,"transform_policy":"decode_reencode_strip_metadata_reject_oversize_no_resize"}"#), "{caps}");
    assert!(caps.contains(r#""provider_limits":{"max_request_items":100,"max_encoded_media_bytes":55927120,"max_request_bytes":67108864,"max_ndjson_record_bytes":8388608}"#));
    let with_caps = init(&format!(
        r#","agents":["a"],"betas":["b"],"fast_mode_state":"off","input_capabilities":{caps}"#
    ));
    canon(&with_caps);
    let OutputRecord::System(SystemEvent::Init(i)) = output(&with_caps).unwrap() else {
        panic!()
    };
    assert_eq!(i.input_capabilities, Some(InputCapabilities::native()));
    // input_capabilities is closed at every level and every limit is required.
    let extra = caps.replacen(
        r#""protocol_version":1"#,
        r#""protocol_version":1,"x":1"#,
        1,
    );
    reject(
        &init(&format!(r#","input_capabilities":{extra}"#)),
        ErrorKind::UnknownMember,
        "input_capabilities.attachments",
    );
    let missing = caps.replacen(r#""max_pdf_pages":100,"#, "", 1);
    reject(
        &init(&format!(r#","input_capabilities":{missing}"#)),
        ErrorKind::Missing,
        "input_capabilities.attachments.limits.max_pdf_pages",
    );
    let source = caps.replacen(
        r#""scope":"initial_cli""#,
        r#""scope":"initial_cli","path":"/x""#,
        1,
    );
    reject(
        &init(&format!(r#","input_capabilities":{source}"#)),
        ErrorKind::UnknownMember,
        "input_capabilities.attachments.sources[0]",
    );
    reject(
        &init(r#","input_capabilities":{}"#),
        ErrorKind::Missing,
        "input_capabilities.attachments",
    );
    // Required members.
    reject(
        &init("").replace(r#""cwd":"/w","#, ""),
        ErrorKind::Missing,
        "cwd",
    );
    reject(
        &init("").replace(r#""tools":["Bash"]"#, r#""tools":"Bash""#),
        ErrorKind::WrongType,
        "tools",
    );
    reject(
        &init("").replace(r#"{"name":"s","status":"connected"}"#, r#"{"name":"s"}"#),
        ErrorKind::Missing,
        "mcp_servers[0].status",
    );
}

#[test]
fn reasoning_capabilities_invariants() {
    let rc = |json: &str| {
        init("").replace(
            r#"{"supported":true,"efforts":["low","medium","high"],"defaultEffort":"high"}"#,
            json,
        )
    };
    canon(&rc(
        r#"{"supported":false,"efforts":[],"defaultEffort":null}"#,
    ));
    canon(&rc(
        r#"{"supported":true,"efforts":["high"],"defaultEffort":"high"}"#,
    ));
    reject(
        &rc(r#"{"supported":true,"efforts":[],"defaultEffort":null}"#),
        ErrorKind::Invalid,
        "reasoning_capabilities.supported",
    );
    reject(
        &rc(r#"{"supported":false,"efforts":["low"],"defaultEffort":"low"}"#),
        ErrorKind::Invalid,
        "reasoning_capabilities.supported",
    );
    reject(
        &rc(r#"{"supported":true,"efforts":["low"],"defaultEffort":"high"}"#),
        ErrorKind::Invalid,
        "reasoning_capabilities.defaultEffort",
    );
    reject(
        &rc(r#"{"supported":true,"efforts":["low"],"defaultEffort":null}"#),
        ErrorKind::Invalid,
        "reasoning_capabilities.defaultEffort",
    );
    reject(
        &rc(r#"{"supported":false,"efforts":[],"defaultEffort":"x"}"#),
        ErrorKind::Invalid,
        "reasoning_capabilities.defaultEffort",
    );
    reject(
        &rc(r#"{"supported":true,"efforts":["low"],"defaultEffort":"low","x":1}"#),
        ErrorKind::UnknownMember,
        "reasoning_capabilities",
    );
    let built = ReasoningCapabilities::new(vec!["low".into()], Some("low".into()));
    assert!(built.supported);
}

// ---------------------------------------------------------------- system/*, lifecycle

#[test]
fn every_system_subtype_and_unknown_subtypes() {
    let ids = ids();
    let cases: &[(SystemSubtype, String)] = &[
        (SystemSubtype::Init, init("")),
        (
            SystemSubtype::CompactBoundary,
            format!(
                r#"{{"type":"system","subtype":"compact_boundary","compact_metadata":{{"trigger":"auto","pre_tokens":1234,"preserved_segment":{{"head_uuid":"h","anchor_uuid":"a","tail_uuid":"t"}}}},{ids}}}"#
            ),
        ),
        (
            SystemSubtype::Status,
            format!(
                r#"{{"type":"system","subtype":"status","status":"compacting","permissionMode":"plan",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::PostTurnSummary,
            format!(
                r#"{{"type":"system","subtype":"post_turn_summary","summarizes_uuid":"{U1}","status_category":"done","title":"t","status_detail":"d","description":"x","recent_action":"r","needed_action":"n","is_noteworthy":true,"artifact_urls":["https://a"],{ids}}}"#
            ),
        ),
        (
            SystemSubtype::LocalCommandOutput,
            format!(
                r#"{{"type":"system","subtype":"local_command_output","content":"out",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::HookStarted,
            format!(
                r#"{{"type":"system","subtype":"hook_started","hook_id":"h","hook_name":"n","hook_event":"PreToolUse",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::HookProgress,
            format!(
                r#"{{"type":"system","subtype":"hook_progress","hook_id":"h","hook_name":"n","hook_event":"e","stdout":"o","stderr":"","output":"o",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::HookResponse,
            format!(
                r#"{{"type":"system","subtype":"hook_response","hook_id":"h","hook_name":"n","hook_event":"e","output":"o","stdout":"o","stderr":"","exit_code":0,"outcome":"success",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::FilesPersisted,
            format!(
                r#"{{"type":"system","subtype":"files_persisted","files":[{{"filename":"a","file_id":"f1"}}],"failed":[{{"filename":"b","error":"e"}}],"processed_at":"2026-01-01T00:00:00Z",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::TaskStarted,
            format!(
                r#"{{"type":"system","subtype":"task_started","task_id":"t","description":"d","tool_use_id":"tu","task_type":"local_bash","workflow_name":"w","prompt":"p",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::TaskProgress,
            format!(
                r#"{{"type":"system","subtype":"task_progress","task_id":"t","description":"d","usage":{{"total_tokens":1}},"tool_use_id":"tu","last_tool_name":"Bash","summary":"s",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::TaskNotification,
            format!(
                r#"{{"type":"system","subtype":"task_notification","task_id":"t","status":"stopped","output_file":"/o","summary":"s","tool_use_id":"tu","usage":{{}},{ids}}}"#
            ),
        ),
        (
            SystemSubtype::SessionStateChanged,
            format!(
                r#"{{"type":"system","subtype":"session_state_changed","state":"requires_action",{ids}}}"#
            ),
        ),
        (
            SystemSubtype::ElicitationComplete,
            format!(
                r#"{{"type":"system","subtype":"elicitation_complete","mcp_server_name":"s","elicitation_id":"e",{ids}}}"#
            ),
        ),
    ];
    assert_eq!(
        cases.len(),
        SystemSubtype::ALL.len(),
        "every subtype of the table is tested"
    );
    for (subtype, line) in cases {
        let r = output(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let OutputRecord::System(e) = &r else {
            panic!()
        };
        assert_eq!(e.subtype(), Some(*subtype));
        assert_eq!(r.warning(), None);
        assert_eq!(canon(line), *line, "declared order is canonical");
        // WIRE-014: duplicates reject the record.
        let dup = line.replacen(
            &format!(r#""uuid":"{U1}","#),
            &format!(r#""uuid":"{U1}","uu\u0069d":"{U1}","#),
            1,
        );
        assert_eq!(
            output(&dup).unwrap_err().kind(),
            ErrorKind::Json(json::ErrorKind::DuplicateMember),
            "{dup}"
        );
        // uuid is required on every system event.
        reject(
            &line.replacen(&format!(r#""uuid":"{U1}","#), "", 1),
            ErrorKind::Missing,
            "uuid",
        );
    }
    for (line, kind, path) in [
        (
            format!(
                r#"{{"type":"system","subtype":"compact_boundary","compact_metadata":{{"trigger":"sometimes","pre_tokens":1}},{ids}}}"#
            ),
            ErrorKind::Invalid,
            "compact_metadata.trigger",
        ),
        (
            format!(
                r#"{{"type":"system","subtype":"hook_response","hook_id":"h","hook_name":"n","hook_event":"e","output":"o","stdout":"o","stderr":"","outcome":"timeout",{ids}}}"#
            ),
            ErrorKind::Invalid,
            "outcome",
        ),
        (
            format!(
                r#"{{"type":"system","subtype":"task_notification","task_id":"t","status":"running","output_file":"/o","summary":"s",{ids}}}"#
            ),
            ErrorKind::Invalid,
            "status",
        ),
        (
            format!(
                r#"{{"type":"system","subtype":"session_state_changed","state":"busy",{ids}}}"#
            ),
            ErrorKind::Invalid,
            "state",
        ),
        (
            format!(r#"{{"type":"system","subtype":"status",{ids}}}"#),
            ErrorKind::Missing,
            "status",
        ),
        (
            format!(r#"{{"type":"system",{ids}}}"#),
            ErrorKind::Missing,
            "subtype",
        ),
    ] {
        reject(&line, kind, path);
    }
    // `status: null` is the non-compacting state.
    canon(&format!(
        r#"{{"type":"system","subtype":"status","status":null,{ids}}}"#
    ));
    // An unknown subtype is preserved with a warning (WIRE-002 for system).
    let unknown = format!(r#"{{"type":"system","subtype":"api_retry","attempt":1,{ids}}}"#);
    let r = output(&unknown).unwrap();
    assert_eq!(r.warning(), Some("unknown_type"));
    assert_eq!(canon(&unknown), unknown);
}

#[test]
fn every_lifecycle_event() {
    let ids = ids();
    for line in [
        format!(
            r#"{{"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","parent_tool_use_id":null,"elapsed_time_seconds":1.5,"task_id":"k",{ids}}}"#
        ),
        format!(
            r#"{{"type":"auth_status","isAuthenticating":true,"output":["line"],"error":"e",{ids}}}"#
        ),
        format!(
            r#"{{"type":"rate_limit_event","rate_limit_info":{{"status":"allowed_warning","resetsAt":1790678400,"rateLimitType":"five_hour","utilization":0.9,"overageStatus":"rejected","overageResetsAt":1,"overageDisabledReason":"org_level_disabled","isUsingOverage":false}},{ids}}}"#
        ),
        format!(
            r#"{{"type":"tool_use_summary","summary":"s","preceding_tool_use_ids":["a","b"],{ids}}}"#
        ),
        format!(r#"{{"type":"prompt_suggestion","suggestion":"next?",{ids}}}"#),
        format!(r#"{{"type":"streamlined_text","text":"t",{ids}}}"#),
        format!(r#"{{"type":"streamlined_tool_use_summary","tool_summary":"s",{ids}}}"#),
    ] {
        let r = output(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(r.warning(), None, "{line}");
        assert_eq!(canon(&line), line, "declared order is canonical");
        reject(
            &line.replacen(&format!(r#""session_id":"{U2}""#), r#""session_id":1"#, 1),
            ErrorKind::WrongType,
            "session_id",
        );
        let dup = line.replacen(
            &format!(r#""session_id":"{U2}""#),
            &format!(r#""session_id":"{U2}","session_id":"{U2}""#),
            1,
        );
        assert_eq!(
            output(&dup).unwrap_err().kind(),
            ErrorKind::Json(json::ErrorKind::DuplicateMember),
            "{dup}"
        );
    }
    reject(
        &format!(
            r#"{{"type":"tool_progress","tool_use_id":"t","tool_name":"B","parent_tool_use_id":null,{ids}}}"#
        ),
        ErrorKind::Missing,
        "elapsed_time_seconds",
    );
    reject(
        &format!(r#"{{"type":"rate_limit_event","rate_limit_info":{{}},{ids}}}"#),
        ErrorKind::Missing,
        "rate_limit_info.status",
    );
    reject(
        &format!(r#"{{"type":"auth_status","isAuthenticating":"no","output":[],{ids}}}"#),
        ErrorKind::WrongType,
        "isAuthenticating",
    );
}

// ---------------------------------------------------------------- attachment results

fn manifest() -> String {
    format!(
        r#"{{"type":"attachment_ref","attachment_id":"att_image1","kind":"image","name":"screen.png","mime_type":"image/png","size_bytes":9876,"sha256":"{SHA}","storage_id":"blob_sha256_{SHA}"}}"#
    )
}

#[test]
fn attachment_import_result_wire_019() {
    let accepted = format!(
        r#"{{"type":"attachment_import_result","version":1,"upload_id":"upl_image1","attachment_id":"att_image1","status":"accepted","terminal":false,"prompt_uuid":"{U1}"}}"#
    );
    assert_eq!(
        canon(&accepted),
        accepted,
        "the WIRE-019 example is canonical"
    );
    let committed = accepted
        .replace(
            r#""status":"accepted","terminal":false"#,
            r#""status":"committed","terminal":true"#,
        )
        .replace('}', "")
        + &format!(r#","attachment":{}}}"#, manifest());
    canon(&committed);
    let OutputRecord::AttachmentImportResult(r) = output(&committed).unwrap() else {
        panic!()
    };
    assert_eq!(r.status, ImportStatus::Committed);
    assert_eq!(r.attachment.as_ref().unwrap().size_bytes, 9876);
    for status in ["aborted", "expired", "failed"] {
        let line = accepted
            .replace(
                r#""status":"accepted","terminal":false"#,
                &format!(r#""status":"{status}","terminal":true"#),
            )
            .replace(
                &format!(r#""{U1}"}}"#),
                &format!(r#""{U1}","reason":"client_abort"}}"#),
            );
        canon(&line);
    }
    for (line, kind, path) in [
        (
            accepted.replace(r#""terminal":false"#, r#""terminal":true"#),
            ErrorKind::Invalid,
            "terminal",
        ),
        (
            committed.replace(r#","attachment":"#, r#","x":"#),
            ErrorKind::UnknownMember,
            "",
        ),
        (
            committed.replace(&format!(r#","attachment":{}"#, manifest()), ""),
            ErrorKind::Invalid,
            "attachment",
        ),
        (
            accepted.replace(
                r#""status":"accepted","terminal":false"#,
                r#""status":"failed","terminal":true"#,
            ),
            ErrorKind::Invalid,
            "reason",
        ),
        (
            accepted.replace(
                &format!(r#""{U1}"}}"#),
                &format!(r#""{U1}","reason":"timeout"}}"#),
            ),
            ErrorKind::Invalid,
            "reason",
        ),
        (
            accepted
                .replace(
                    r#""status":"accepted","terminal":false"#,
                    r#""status":"failed","terminal":true"#,
                )
                .replace(
                    &format!(r#""{U1}"}}"#),
                    &format!(r#""{U1}","reason":"bad_luck"}}"#),
                ),
            ErrorKind::Invalid,
            "reason",
        ),
        (
            accepted.replace(r#""accepted""#, r#""rejected""#),
            ErrorKind::Invalid,
            "status",
        ),
        (
            accepted.replace(r#""version":1"#, r#""version":2"#),
            ErrorKind::Invalid,
            "version",
        ),
        (
            accepted.replace("upl_image1", "upl_"),
            ErrorKind::Invalid,
            "upload_id",
        ),
        (
            committed.replace(r#""size_bytes":9876"#, r#""size_bytes":0"#),
            ErrorKind::Invalid,
            "attachment.size_bytes",
        ),
        (
            committed.replace(r#""storage_id""#, r#""path":"/tmp/x","storage_id""#),
            ErrorKind::UnknownMember,
            "attachment",
        ),
    ] {
        reject(&line, kind, path);
    }
}

#[test]
fn attachment_import_rejected_wire_019() {
    let line = r#"{"type":"attachment_import_rejected","version":1,"upload_id":"upl_x","status":"rejected","terminal":false,"reason":"unknown_upload"}"#;
    assert_eq!(canon(line), line);
    reject(
        &line.replace(r#""terminal":false"#, r#""terminal":true"#),
        ErrorKind::Invalid,
        "terminal",
    );
    reject(
        &line.replace(r#""status":"rejected""#, r#""status":"failed""#),
        ErrorKind::Invalid,
        "status",
    );
    reject(
        &line.replace(r#","reason":"unknown_upload""#, ""),
        ErrorKind::Missing,
        "reason",
    );
    reject(
        &line.replace("unknown_upload", "nope"),
        ErrorKind::Invalid,
        "reason",
    );
    reject(
        &line.replace('}', r#","x":1}"#),
        ErrorKind::UnknownMember,
        "",
    );
    // Every PROFILE §6 reason code is accepted.
    for code in agentx_wire::wire::ReasonCode::ALL {
        canon(&line.replace("unknown_upload", code.as_str()));
    }
    assert_eq!(agentx_wire::wire::ReasonCode::ALL.len(), 28);
}

// ---------------------------------------------------------------- initialize, discovery

fn descriptor(id: &str, selected: bool) -> String {
    format!(
        r#"{{"value":"{id}","id":"{id}","providerType":"azure_openai","model":"gpt-5.6-sol","displayName":"{id} (gpt-5.6-sol)","description":"Deployment-backed model endpoint configured by AgentX-home auth.json","default":{selected},"selected":{selected},"supportsEffort":true,"supportedReasoningEfforts":["low","medium","high"],"defaultReasoningEffort":"high","reasoning":{{"supported":true,"efforts":["low","medium","high"],"defaultEffort":"high"}}}}"#
    )
}

fn initialize(providers: &str) -> String {
    format!(
        r#"{{"commands":[{{"name":"compact","description":"c","argumentHint":""}}],"agents":[],"output_style":"default","available_output_styles":["default"],"models":[{{"value":"gpt-5.6-sol","displayName":"gpt-5.6-sol","description":"d","provider":"sol-east","providerType":"azure_openai"}}],"providers":[{providers}],"account":{{"apiKeySource":"user"}},"pid":42}}"#
    )
}

fn decode_initialize(json: &str) -> Result<InitializeResponse<'_>, Error> {
    let doc = json::parse(json.as_bytes()).unwrap();
    InitializeResponse::decode_checked(doc.root(), &agentx_wire::wire::Path::ROOT)
        .map(InitializeResponse::into_owned)
}

#[test]
fn initialize_response_and_provider_catalog_wire_024() {
    let ok = initialize(&format!(
        "{},{}",
        descriptor("sol-east", true),
        descriptor("sol-west", false)
    ));
    let r = decode_initialize(&ok).unwrap();
    assert_eq!(r.providers.len(), 2);
    assert_eq!(r.pid, Some(42));
    let mut out = Vec::new();
    r.encode(&mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        ok,
        "declared order is canonical"
    );
    for (providers, path) in [
        (
            format!("{},{}", descriptor("a", true), descriptor("b", true)),
            "providers",
        ),
        (descriptor("a", false), "providers"),
        (
            descriptor("a", true).replacen(r#""value":"a""#, r#""value":"b""#, 1),
            "providers[0].value",
        ),
        (
            descriptor("a", true).replace(r#""supportsEffort":true"#, r#""supportsEffort":false"#),
            "providers[0].supportsEffort",
        ),
        (
            descriptor("a", true).replace(
                r#""supportedReasoningEfforts":["low","medium","high"]"#,
                r#""supportedReasoningEfforts":["high","medium","low"]"#,
            ),
            "providers[0].supportedReasoningEfforts",
        ),
        (
            descriptor("a", true).replace(
                r#""defaultReasoningEffort":"high""#,
                r#""defaultReasoningEffort":"low""#,
            ),
            "providers[0].defaultReasoningEffort",
        ),
        (
            descriptor("a", true).replace(
                r#""default":true"#,
                r#""default":true,"endpoint":"https://x""#,
            ),
            "providers[0]",
        ),
    ] {
        let e = decode_initialize(&initialize(&providers))
            .err()
            .unwrap_or_else(|| panic!("accepted {providers}"));
        assert_eq!(e.path(), path, "{e}");
    }
}

#[test]
fn provider_discovery_document_wire_026() {
    let doc = format!(
        r#"{{"version":1,"providers":[{}]}}"#,
        descriptor("sol-east", false)
    );
    let parsed = json::parse(doc.as_bytes()).unwrap();
    let root = parsed.root().as_object().unwrap();
    let d = ProviderDiscovery::decode_checked(root, &agentx_wire::wire::Path::ROOT).unwrap();
    assert_eq!(d.providers[0].id, "sol-east");
    for bad in [
        doc.replace(r#""version":1"#, r#""version":2"#),
        doc.replace(r#""version":1"#, r#""version":1.0"#),
        doc.replace(r#""selected":false"#, r#""selected":true"#),
        doc.replace(r#""version":1,"#, r#""version":1,"x":1,"#),
    ] {
        let parsed = json::parse(bad.as_bytes()).unwrap();
        let root = parsed.root().as_object().unwrap();
        assert!(
            ProviderDiscovery::decode_checked(root, &agentx_wire::wire::Path::ROOT).is_err(),
            "{bad}"
        );
    }
}
