//! Control envelopes and every control subtype (Control operations), the PERM-020..053
//! permission catalog (PROFILE §4) with aliases and precedence, `control_response` with
//! `pending_permission_requests` (PERM-051), and `control_cancel_request`.

use agentx_wire::json::{self, Parser};
use agentx_wire::wire::permission::{DEFAULT_DENY_MESSAGE, SANDBOX_NETWORK_ACCESS};
use agentx_wire::wire::subtypes::SetMaxThinkingTokens;
use agentx_wire::wire::{
    CanUseTool, ControlOutcome, ControlRequestBody, ControlResponse, ControlSubtype, Error,
    ErrorKind, InputRecord, OutputRecord, PermissionDecision, PermissionUpdate,
};

fn input(line: &str) -> Result<InputRecord<'_>, Error> {
    InputRecord::decode_line(line.as_bytes(), &mut Parser::new())
}

fn output(line: &str) -> Result<OutputRecord<'_>, Error> {
    OutputRecord::decode_line(line.as_bytes(), &mut Parser::new())
}

fn canon_in(line: &str) -> String {
    let r = input(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let mut once = Vec::new();
    r.encode(&mut once);
    let once = String::from_utf8(once).unwrap();
    let again = input(&once).unwrap_or_else(|e| panic!("{once}: {e}"));
    assert_eq!(again, r);
    let mut twice = Vec::new();
    again.encode(&mut twice);
    assert_eq!(String::from_utf8(twice).unwrap(), once);
    once
}

fn request(body: &str) -> String {
    format!(r#"{{"type":"control_request","request_id":"req_1","request":{body}}}"#)
}

#[track_caller]
fn reject_request(body: &str, kind: ErrorKind, path: &str) -> Error {
    reject_line(&request(body), kind, path)
}

#[track_caller]
fn reject_line(line: &str, kind: ErrorKind, path: &str) -> Error {
    let e = input(line)
        .err()
        .unwrap_or_else(|| panic!("accepted {line}"));
    assert_eq!((e.kind(), e.path()), (kind, path), "{line}: {e}");
    assert!(!e.is_fatal(), "control errors are record-level: {e}");
    // The request identity was recoverable, so the dispatcher can answer (Failure behavior).
    assert_eq!(e.correlation(), Some("req_1"), "{e}");
    e
}

fn body_of(line: &str) -> ControlRequestBody<'_> {
    match input(line).unwrap_or_else(|e| panic!("{line}: {e}")) {
        InputRecord::ControlRequest(c) => c.request,
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------- envelopes

#[test]
fn control_request_envelope() {
    assert_eq!(
        canon_in(&request(r#"{"subtype":"interrupt"}"#)),
        r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"interrupt"}}"#
    );
    // A missing request ID cannot be correlated.
    let e = input(r#"{"type":"control_request","request":{"subtype":"interrupt"}}"#).unwrap_err();
    assert_eq!(
        (e.kind(), e.path(), e.correlation()),
        (ErrorKind::Missing, "request_id", None)
    );
    let e =
        input(r#"{"type":"control_request","request_id":"","request":{"subtype":"interrupt"}}"#)
            .unwrap_err();
    assert_eq!((e.kind(), e.path()), (ErrorKind::Invalid, "request_id"));
    let e = input(r#"{"type":"control_request","request_id":7,"request":{"subtype":"interrupt"}}"#)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WrongType);
    // Everything after the ID is correlated.
    let e = input(r#"{"type":"control_request","request_id":"req_1"}"#).unwrap_err();
    assert_eq!(
        (e.kind(), e.path(), e.correlation()),
        (ErrorKind::Missing, "request", Some("req_1"))
    );
    let e =
        input(r#"{"type":"control_request","request_id":"req_1","request":[],"x":1}"#).unwrap_err();
    assert_eq!(
        (e.kind(), e.correlation()),
        (ErrorKind::UnknownMember, Some("req_1"))
    );
    reject_request("[]", ErrorKind::WrongType, "request");
    reject_request("{}", ErrorKind::Missing, "request.subtype");
    reject_request(r#"{"subtype":1}"#, ErrorKind::WrongType, "request.subtype");
}

#[test]
fn unknown_control_subtype_decodes_for_the_generic_error() {
    // WIRE-025: set_provider is an unknown subtype, answered `unsupported control request`.
    let line = request(r#"{"subtype":"set_provider","provider":"sol-east"}"#);
    match body_of(&line) {
        ControlRequestBody::Unknown(u) => assert_eq!(u.subtype, "set_provider"),
        other => panic!("{other:?}"),
    }
    assert_eq!(body_of(&line).subtype(), None);
    assert_eq!(body_of(&line).subtype_name(), "set_provider");
    assert_eq!(canon_in(&line), line);
}

#[test]
fn control_cancel_request() {
    let line = r#"{"type":"control_cancel_request","request_id":"req_1"}"#;
    assert_eq!(canon_in(line), line);
    assert!(matches!(
        output(line).unwrap(),
        OutputRecord::ControlCancelRequest(_)
    ));
    let e = input(r#"{"type":"control_cancel_request"}"#).unwrap_err();
    assert_eq!((e.kind(), e.path()), (ErrorKind::Missing, "request_id"));
    let e = input(r#"{"type":"control_cancel_request","request_id":"r","x":1}"#).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownMember);
}

#[test]
fn control_response_success_error_and_pending_requests() {
    let ok = r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"a":1}}}"#;
    assert_eq!(canon_in(ok), ok);
    // WIRE-010: a payload-less acknowledgement; `null` reads as absent.
    let ack =
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#;
    assert_eq!(canon_in(ack), ack);
    let null = r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":null}}"#;
    assert_eq!(canon_in(null), ack);
    let pending = format!(
        r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"req_1","error":"boom","pending_permission_requests":[{}]}}}}"#,
        request(
            r#"{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}"#
        )
    );
    assert_eq!(canon_in(&pending), pending);
    let InputRecord::ControlResponse(r) = input(&pending).unwrap() else {
        panic!()
    };
    match &r.outcome {
        ControlOutcome::Error {
            error,
            pending_permission_requests: Some(p),
        } => {
            assert_eq!(error, "boom");
            assert_eq!(p[0].request.subtype(), Some(ControlSubtype::CanUseTool));
        }
        other => panic!("{other:?}"),
    }
    // PERM-051: pending elements are complete, validated control_request records.
    for (elem, kind, path) in [
        (
            r#"{"request_id":"p","request":{"subtype":"interrupt"}}"#,
            ErrorKind::Missing,
            "response.pending_permission_requests[0].type",
        ),
        (
            r#"{"type":"user","request_id":"p","request":{"subtype":"interrupt"}}"#,
            ErrorKind::Invalid,
            "response.pending_permission_requests[0].type",
        ),
        (
            r#"{"type":"control_request","request":{"subtype":"interrupt"}}"#,
            ErrorKind::Missing,
            "response.pending_permission_requests[0].request_id",
        ),
        (
            r#"{"type":"control_request","request_id":"p","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{}}}"#,
            ErrorKind::Missing,
            "response.pending_permission_requests[0].request.tool_use_id",
        ),
        (
            "5",
            ErrorKind::WrongType,
            "response.pending_permission_requests[0]",
        ),
    ] {
        let line = format!(
            r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"req_1","error":"e","pending_permission_requests":[{elem}]}}}}"#
        );
        let e = input(&line).unwrap_err();
        assert_eq!((e.kind(), e.path()), (kind, path), "{line}: {e}");
        assert_eq!(e.correlation(), Some("req_1"));
    }
    // Duplicates inside a pending element reject the record (WIRE-014).
    let dup = r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"e","pending_permission_requests":[{"type":"control_request","request_id":"p","request_id":"q","request":{"subtype":"interrupt"}}]}}"#;
    assert_eq!(
        input(dup).unwrap_err().kind(),
        ErrorKind::Json(json::ErrorKind::DuplicateMember)
    );
    // The outer success | error union is closed (WIRE-009).
    for (line, kind, path) in [
        (
            r#"{"type":"control_response"}"#,
            ErrorKind::Missing,
            "response",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"success"}}"#,
            ErrorKind::Missing,
            "response.request_id",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"maybe","request_id":"r"}}"#,
            ErrorKind::Invalid,
            "response.subtype",
        ),
        (
            r#"{"type":"control_response","response":{"request_id":"r"}}"#,
            ErrorKind::Missing,
            "response.subtype",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r"}}"#,
            ErrorKind::Missing,
            "response.error",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":5}}"#,
            ErrorKind::WrongType,
            "response.error",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","error":"x"}}"#,
            ErrorKind::UnknownMember,
            "response",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"x","response":{}}}"#,
            ErrorKind::UnknownMember,
            "response",
        ),
        (
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r"},"x":1}"#,
            ErrorKind::UnknownMember,
            "",
        ),
    ] {
        let e = input(line).unwrap_err();
        assert_eq!((e.kind(), e.path()), (kind, path), "{line}: {e}");
    }
}

// ---------------------------------------------------------------- each subtype

#[test]
fn every_control_subtype_decodes_round_trips_and_rejects_unknown_members() {
    let valid: &[(ControlSubtype, &str)] = &[
        (ControlSubtype::Initialize, r#"{"subtype":"initialize"}"#),
        (ControlSubtype::Interrupt, r#"{"subtype":"interrupt"}"#),
        (
            ControlSubtype::CanUseTool,
            r#"{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}"#,
        ),
        (
            ControlSubtype::SetPermissionMode,
            r#"{"subtype":"set_permission_mode","mode":"plan"}"#,
        ),
        (
            ControlSubtype::SetModel,
            r#"{"subtype":"set_model","model":"gpt-5.6-sol"}"#,
        ),
        (
            ControlSubtype::SetMaxThinkingTokens,
            r#"{"subtype":"set_max_thinking_tokens","max_thinking_tokens":1024}"#,
        ),
        (ControlSubtype::McpStatus, r#"{"subtype":"mcp_status"}"#),
        (
            ControlSubtype::GetContextUsage,
            r#"{"subtype":"get_context_usage"}"#,
        ),
        (
            ControlSubtype::RewindFiles,
            r#"{"subtype":"rewind_files","user_message_id":"m1","dry_run":true}"#,
        ),
        (
            ControlSubtype::CancelAsyncMessage,
            r#"{"subtype":"cancel_async_message","message_uuid":"u1"}"#,
        ),
        (
            ControlSubtype::SeedReadState,
            r#"{"subtype":"seed_read_state","path":"/a/b","mtime":1790663494452}"#,
        ),
        (
            ControlSubtype::HookCallback,
            r#"{"subtype":"hook_callback","callback_id":"cb1","input":{"hook_event_name":"PreToolUse"},"tool_use_id":"t1"}"#,
        ),
        (
            ControlSubtype::McpMessage,
            r#"{"subtype":"mcp_message","server_name":"s","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        ),
        (
            ControlSubtype::McpSetServers,
            r#"{"subtype":"mcp_set_servers","servers":{"s":{"type":"stdio","command":"x"}}}"#,
        ),
        (
            ControlSubtype::ReloadPlugins,
            r#"{"subtype":"reload_plugins"}"#,
        ),
        (
            ControlSubtype::McpReconnect,
            r#"{"subtype":"mcp_reconnect","serverName":"s"}"#,
        ),
        (
            ControlSubtype::McpToggle,
            r#"{"subtype":"mcp_toggle","serverName":"s","enabled":false}"#,
        ),
        (
            ControlSubtype::StopTask,
            r#"{"subtype":"stop_task","task_id":"t"}"#,
        ),
        (
            ControlSubtype::ApplyFlagSettings,
            r#"{"subtype":"apply_flag_settings","settings":{"model":"m"}}"#,
        ),
        (ControlSubtype::GetSettings, r#"{"subtype":"get_settings"}"#),
        (
            ControlSubtype::Elicitation,
            r#"{"subtype":"elicitation","mcp_server_name":"s","message":"m","mode":"form","requested_schema":{"type":"object"}}"#,
        ),
    ];
    assert_eq!(
        valid.len(),
        ControlSubtype::ALL.len(),
        "every subtype of the table is tested"
    );
    for (subtype, body) in valid {
        let line = request(body);
        assert_eq!(body_of(&line).subtype(), Some(*subtype), "{line}");
        assert_eq!(subtype.as_str(), body_of(&line).subtype_name());
        assert_eq!(ControlSubtype::from_name(subtype.as_str()), Some(*subtype));
        assert_eq!(canon_in(&line), line, "canonical order as declared");
        // Same record in the output direction (the agent's can_use_tool; a host's view).
        assert!(matches!(
            output(&line).unwrap(),
            OutputRecord::ControlRequest(_)
        ));
        // Closed payloads: one unknown member is a correlated error. set_permission_mode
        // takes "any payload".
        // WIRE-014: a duplicate member in the nested payload rejects the record, including
        // an escape-equivalent spelling.
        for dup in [
            "{\"subtype\":\"x\",\"subtype\"",
            "{\"sub\\u0074ype\":\"x\",\"subtype\"",
        ] {
            let line = request(&body.replacen("{\"subtype\"", dup, 1));
            let e = input(&line).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::Json(json::ErrorKind::DuplicateMember),
                "{line}"
            );
        }
        let extra = body.replacen("{\"subtype\"", "{\"hooks\":{},\"subtype\"", 1);
        if *subtype == ControlSubtype::SetPermissionMode {
            assert!(input(&request(&extra)).is_ok());
        } else {
            reject_request(&extra, ErrorKind::UnknownMember, "request");
        }
    }
}

#[test]
fn subtype_required_members_and_types() {
    for (body, kind, path) in [
        (
            r#"{"subtype":"set_model","model":5}"#,
            ErrorKind::WrongType,
            "request.model",
        ),
        (
            r#"{"subtype":"set_max_thinking_tokens"}"#,
            ErrorKind::Missing,
            "request.max_thinking_tokens",
        ),
        (
            r#"{"subtype":"set_max_thinking_tokens","max_thinking_tokens":-1}"#,
            ErrorKind::Invalid,
            "request.max_thinking_tokens",
        ),
        (
            r#"{"subtype":"set_max_thinking_tokens","max_thinking_tokens":1.5}"#,
            ErrorKind::WrongType,
            "request.max_thinking_tokens",
        ),
        (
            r#"{"subtype":"rewind_files"}"#,
            ErrorKind::Missing,
            "request.user_message_id",
        ),
        (
            r#"{"subtype":"rewind_files","user_message_id":"m","dry_run":"no"}"#,
            ErrorKind::WrongType,
            "request.dry_run",
        ),
        (
            r#"{"subtype":"cancel_async_message"}"#,
            ErrorKind::Missing,
            "request.message_uuid",
        ),
        (
            r#"{"subtype":"seed_read_state","path":"/a"}"#,
            ErrorKind::Missing,
            "request.mtime",
        ),
        (
            r#"{"subtype":"hook_callback","input":{}}"#,
            ErrorKind::Missing,
            "request.callback_id",
        ),
        (
            r#"{"subtype":"mcp_message","server_name":"s"}"#,
            ErrorKind::Missing,
            "request.message",
        ),
        (
            r#"{"subtype":"mcp_set_servers","servers":[]}"#,
            ErrorKind::WrongType,
            "request.servers",
        ),
        (
            r#"{"subtype":"mcp_toggle","serverName":"s"}"#,
            ErrorKind::Missing,
            "request.enabled",
        ),
        (
            r#"{"subtype":"stop_task","task_id":1}"#,
            ErrorKind::WrongType,
            "request.task_id",
        ),
        (
            r#"{"subtype":"apply_flag_settings"}"#,
            ErrorKind::Missing,
            "request.settings",
        ),
        (
            r#"{"subtype":"elicitation","message":"m"}"#,
            ErrorKind::Missing,
            "request.mcp_server_name",
        ),
        (
            r#"{"subtype":"initialize","hooks":{}}"#,
            ErrorKind::UnknownMember,
            "request",
        ),
        (
            r#"{"subtype":"initialize","systemPrompt":"x"}"#,
            ErrorKind::UnknownMember,
            "request",
        ),
        (
            r#"{"subtype":"interrupt","reason":"x"}"#,
            ErrorKind::UnknownMember,
            "request",
        ),
    ] {
        reject_request(body, kind, path);
    }
    // set_max_thinking_tokens: nullable maximum.
    match body_of(&request(
        r#"{"subtype":"set_max_thinking_tokens","max_thinking_tokens":null}"#,
    )) {
        ControlRequestBody::SetMaxThinkingTokens(SetMaxThinkingTokens {
            max_thinking_tokens: None,
        }) => {}
        other => panic!("{other:?}"),
    }
    // set_model's model is optional; set_permission_mode keeps any payload.
    canon_in(&request(r#"{"subtype":"set_model"}"#));
    canon_in(&request(r#"{"subtype":"set_permission_mode"}"#));
}

// ---------------------------------------------------------------- PERM-020..023

fn can_use_tool(extra: &str) -> String {
    request(&format!(
        r#"{{"subtype":"can_use_tool","tool_name":"Bash","input":{{"command":"ls"}},"tool_use_id":"toolu_1"{extra}}}"#
    ))
}

#[test]
fn can_use_tool_request_perm_020_to_023() {
    let full = can_use_tool(
        r#","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls:*"}],"behavior":"allow","destination":"session"},{"type":"replaceRules","rules":[{"toolName":"Read"}],"behavior":"ask","destination":"projectSettings"},{"type":"removeRules","rules":[],"behavior":"deny","destination":"userSettings"},{"type":"setMode","mode":"acceptEdits","destination":"localSettings"},{"type":"addDirectories","directories":["/a"],"destination":"cliArg"},{"type":"removeDirectories","directories":[],"destination":"session"}],"blocked_path":"/etc/passwd","decision_reason":null,"title":"Run ls","display_name":"Bash","description":"ls","agent_id":"agent_1""#,
    );
    assert_eq!(canon_in(&full), full);
    let ControlRequestBody::CanUseTool(c) = body_of(&full) else {
        panic!()
    };
    assert_eq!(c.permission_suggestions.as_ref().map(Vec::len), Some(6));
    assert_eq!(c.blocked_path, Some(Some("/etc/passwd".into())));
    assert_eq!(c.decision_reason, Some(None));
    assert!(matches!(
        c.permission_suggestions.as_ref().unwrap()[3],
        PermissionUpdate::SetMode { .. }
    ));
    for (extra, from, to, kind, path) in [
        (
            "",
            r#""tool_name":"Bash","#,
            "",
            ErrorKind::Missing,
            "request.tool_name",
        ),
        (
            "",
            r#""input":{"command":"ls"},"#,
            "",
            ErrorKind::Missing,
            "request.input",
        ),
        (
            "",
            r#","tool_use_id":"toolu_1""#,
            "",
            ErrorKind::Missing,
            "request.tool_use_id",
        ),
        (
            "",
            r#""tool_name":"Bash""#,
            r#""tool_name":"""#,
            ErrorKind::Invalid,
            "request.tool_name",
        ),
        (
            "",
            r#""tool_use_id":"toolu_1""#,
            r#""tool_use_id":"""#,
            ErrorKind::Invalid,
            "request.tool_use_id",
        ),
        (
            "",
            r#""input":{"command":"ls"}"#,
            r#""input":"ls""#,
            ErrorKind::WrongType,
            "request.input",
        ),
        (
            r#","blocked_path":5"#,
            "",
            "",
            ErrorKind::WrongType,
            "request.blocked_path",
        ),
        (
            r#","title":null"#,
            "",
            "",
            ErrorKind::WrongType,
            "request.title",
        ),
        (r#","extra":1"#, "", "", ErrorKind::UnknownMember, "request"),
        (
            r#","permission_suggestions":{}"#,
            "",
            "",
            ErrorKind::WrongType,
            "request.permission_suggestions",
        ),
        (
            r#","permission_suggestions":[{"type":"grant","destination":"session"}]"#,
            "",
            "",
            ErrorKind::Invalid,
            "request.permission_suggestions[0].type",
        ),
        (
            r#","permission_suggestions":[{"type":"setMode","mode":"yolo","destination":"session"}]"#,
            "",
            "",
            ErrorKind::Invalid,
            "request.permission_suggestions[0].mode",
        ),
        (
            r#","permission_suggestions":[{"type":"setMode","mode":"plan","destination":"global"}]"#,
            "",
            "",
            ErrorKind::Invalid,
            "request.permission_suggestions[0].destination",
        ),
        (
            r#","permission_suggestions":[{"type":"setMode","mode":"plan"}]"#,
            "",
            "",
            ErrorKind::Missing,
            "request.permission_suggestions[0].destination",
        ),
        (
            r#","permission_suggestions":[{"type":"setMode","mode":"plan","destination":"session","rules":[]}]"#,
            "",
            "",
            ErrorKind::UnknownMember,
            "request.permission_suggestions[0]",
        ),
        (
            r#","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"B","x":1}],"behavior":"allow","destination":"session"}]"#,
            "",
            "",
            ErrorKind::UnknownMember,
            "request.permission_suggestions[0].rules[0]",
        ),
        (
            r#","permission_suggestions":[{"type":"addRules","rules":[],"behavior":"maybe","destination":"session"}]"#,
            "",
            "",
            ErrorKind::Invalid,
            "request.permission_suggestions[0].behavior",
        ),
        (
            r#","permission_suggestions":[{"type":"addDirectories","directories":[1],"destination":"session"}]"#,
            "",
            "",
            ErrorKind::WrongType,
            "request.permission_suggestions[0].directories[0]",
        ),
    ] {
        let mut line = can_use_tool(extra);
        if !from.is_empty() {
            line = line.replacen(from, to, 1);
        }
        reject_line(&line, kind, path);
    }
}

#[test]
fn sandbox_network_request_perm_022() {
    let line = |input: &str| {
        request(&format!(
            r#"{{"subtype":"can_use_tool","tool_name":"{SANDBOX_NETWORK_ACCESS}","input":{input},"tool_use_id":"t"}}"#
        ))
    };
    canon_in(&line(r#"{"host":"example.com","port":443}"#));
    canon_in(&line(r#"{"host":"example.com","port":null}"#));
    canon_in(&line(r#"{"host":"example.com","port":65535}"#));
    for (input_obj, kind, path) in [
        (
            r#"{"host":"example.com","port":65536}"#,
            ErrorKind::Invalid,
            "request.input.port",
        ),
        (
            r#"{"host":"example.com"}"#,
            ErrorKind::Missing,
            "request.input.port",
        ),
        (r#"{"port":80}"#, ErrorKind::Missing, "request.input.host"),
        (
            r#"{"host":"h","port":"80"}"#,
            ErrorKind::WrongType,
            "request.input.port",
        ),
        (
            r#"{"host":"h","port":80,"path":"/"}"#,
            ErrorKind::UnknownMember,
            "request.input",
        ),
    ] {
        let l = line(input_obj);
        let e = input(&l).unwrap_err();
        assert_eq!((e.kind(), e.path()), (kind, path), "{l}: {e}");
    }
}

// ---------------------------------------------------------------- PERM-040..053

fn decision(payload: &str) -> Result<PermissionDecision<'static>, Error> {
    let resp = if payload == "<absent>" {
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#
            .to_owned()
    } else {
        format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"req_1","response":{payload}}}}}"#
        )
    };
    let req_line = can_use_tool("");
    let ControlRequestBody::CanUseTool(req) = body_of(&req_line) else {
        panic!()
    };
    let InputRecord::ControlResponse(r) = input(&resp).unwrap_or_else(|e| panic!("{resp}: {e}"))
    else {
        panic!()
    };
    PermissionDecision::from_outcome(&r.outcome, &req).map(PermissionDecision::into_owned)
}

fn encode_decision(d: &PermissionDecision<'_>) -> String {
    let mut out = Vec::new();
    d.encode(&mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn permission_decision_allow_and_deny() {
    let d = decision(r#"{"behavior":"allow"}"#).unwrap();
    assert_eq!(
        d,
        PermissionDecision::Allow {
            updated_input: None,
            updated_permissions: None,
            tool_use_id: None
        }
    );
    // PERM-042/043: null is absent.
    let d =
        decision(r#"{"behavior":"allow","updatedInput":null,"updatedPermissions":null}"#).unwrap();
    assert_eq!(encode_decision(&d), r#"{"behavior":"allow"}"#);
    let d = decision(r#"{"behavior":"allow","updatedInput":{"command":"ls -la"},"updatedPermissions":[{"type":"setMode","mode":"plan","destination":"session"}],"toolUseID":"toolu_1"}"#).unwrap();
    assert_eq!(
        encode_decision(&d),
        r#"{"behavior":"allow","updatedInput":{"command":"ls -la"},"updatedPermissions":[{"type":"setMode","mode":"plan","destination":"session"}],"toolUseID":"toolu_1"}"#
    );
    // PERM-044: deny without message uses the runtime default.
    let d = decision(r#"{"behavior":"deny"}"#).unwrap();
    assert_eq!(
        d,
        PermissionDecision::Deny {
            message: DEFAULT_DENY_MESSAGE.into(),
            interrupt: None,
            tool_use_id: None
        }
    );
    // PERM-045.
    let d = decision(r#"{"behavior":"deny","message":"no","interrupt":true}"#).unwrap();
    assert_eq!(
        encode_decision(&d),
        r#"{"behavior":"deny","message":"no","interrupt":true}"#
    );
    assert!(!d.is_allow());
}

#[test]
fn permission_decision_aliases_and_canonical_precedence_perm_047() {
    // Aliases normalize to canonical names.
    let d = decision(r#"{"behavior":"allow","updated_input":{"a":1},"updated_permissions":[],"tool_use_id":"toolu_1"}"#).unwrap();
    assert_eq!(
        encode_decision(&d),
        r#"{"behavior":"allow","updatedInput":{"a":1},"updatedPermissions":[],"toolUseID":"toolu_1"}"#
    );
    // Canonical and alias are distinct members (no duplicate error); the canonical wins,
    // in either order.
    for payload in [
        r#"{"behavior":"allow","updatedInput":{"canonical":1},"updated_input":{"alias":1}}"#,
        r#"{"behavior":"allow","updated_input":{"alias":1},"updatedInput":{"canonical":1}}"#,
    ] {
        let d = decision(payload).unwrap();
        assert_eq!(
            encode_decision(&d),
            r#"{"behavior":"allow","updatedInput":{"canonical":1}}"#
        );
    }
    // A canonical null also wins (keeps the original input).
    let d = decision(r#"{"behavior":"allow","updatedInput":null,"updated_input":{"alias":1}}"#)
        .unwrap();
    assert_eq!(encode_decision(&d), r#"{"behavior":"allow"}"#);
    let d = decision(r#"{"behavior":"deny","toolUseID":"toolu_1","tool_use_id":"other"}"#).unwrap();
    assert!(
        matches!(d, PermissionDecision::Deny { tool_use_id: Some(ref t), .. } if t == "toolu_1")
    );
}

#[test]
fn permission_decision_rejections() {
    for (payload, kind, path, rule) in [
        ("<absent>", ErrorKind::Missing, "response", "PERM-052"),
        ("null", ErrorKind::Missing, "response", "PERM-052"),
        ("[]", ErrorKind::WrongType, "response", "PERM-040"),
        (r#""allow""#, ErrorKind::WrongType, "response", "PERM-040"),
        ("{}", ErrorKind::Missing, "response.behavior", "PERM-041"),
        (
            r#"{"behavior":"ask"}"#,
            ErrorKind::Invalid,
            "response.behavior",
            "PERM-041",
        ),
        (
            r#"{"behavior":"Allow"}"#,
            ErrorKind::Invalid,
            "response.behavior",
            "PERM-041",
        ),
        (
            r#"{"behavior":true}"#,
            ErrorKind::WrongType,
            "response.behavior",
            "PERM-041",
        ),
        (
            r#"{"behavior":"allow","updatedInput":"x"}"#,
            ErrorKind::WrongType,
            "response.updatedInput",
            "PERM-042",
        ),
        (
            r#"{"behavior":"allow","updatedPermissions":{}}"#,
            ErrorKind::WrongType,
            "response.updatedPermissions",
            "PROFILE §2a",
        ),
        (
            r#"{"behavior":"deny","message":5}"#,
            ErrorKind::WrongType,
            "response.message",
            "PROFILE §2a",
        ),
        (
            r#"{"behavior":"deny","interrupt":"yes"}"#,
            ErrorKind::WrongType,
            "response.interrupt",
            "PROFILE §2a",
        ),
        (
            r#"{"behavior":"allow","message":"m"}"#,
            ErrorKind::UnknownMember,
            "response",
            "PERM-048",
        ),
        (
            r#"{"behavior":"deny","updatedInput":{}}"#,
            ErrorKind::UnknownMember,
            "response",
            "PERM-048",
        ),
        (
            r#"{"behavior":"allow","extra":1}"#,
            ErrorKind::UnknownMember,
            "response",
            "PERM-048",
        ),
        (
            r#"{"behavior":"allow","toolUseID":"other"}"#,
            ErrorKind::Invalid,
            "response.toolUseID",
            "PERM-046",
        ),
        (
            r#"{"behavior":"deny","tool_use_id":"other"}"#,
            ErrorKind::Invalid,
            "response.toolUseID",
            "PERM-046",
        ),
    ] {
        let e = decision(payload)
            .err()
            .unwrap_or_else(|| panic!("accepted {payload}"));
        assert_eq!(
            (e.kind(), e.path(), e.rule()),
            (kind, path, rule),
            "{payload}: {e}"
        );
    }
    // PERM-049: an error response never becomes an allow.
    let req_line = can_use_tool("");
    let ControlRequestBody::CanUseTool(req) = body_of(&req_line) else {
        panic!()
    };
    let err = ControlOutcome::Error {
        error: "host failed".into(),
        pending_permission_requests: None,
    };
    assert_eq!(
        PermissionDecision::from_outcome(&err, &req)
            .unwrap_err()
            .rule(),
        "PERM-049"
    );
}

#[test]
fn success_with_builds_a_decodable_response() {
    let d = PermissionDecision::Deny {
        message: "no".into(),
        interrupt: Some(false),
        tool_use_id: None,
    };
    let req_id = agentx_wire::wire::grammar::NonEmpty::new("req_9").unwrap();
    let r = ControlResponse::success_with(req_id, &d);
    let mut out = Vec::new();
    r.encode(&mut out);
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_9","response":{"behavior":"deny","message":"no","interrupt":false}}}"#
    );
    let InputRecord::ControlResponse(back) =
        InputRecord::decode_line(&out, &mut Parser::new()).unwrap()
    else {
        panic!()
    };
    assert_eq!(back, r);
    let req_line = can_use_tool("");
    let req: CanUseTool<'_> = match body_of(&req_line) {
        ControlRequestBody::CanUseTool(c) => c,
        _ => unreachable!(),
    };
    assert_eq!(
        PermissionDecision::from_outcome(&back.outcome, &req).unwrap(),
        d
    );
}
