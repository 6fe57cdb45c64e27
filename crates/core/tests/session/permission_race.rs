//! The permission race on virtual time (WIRE-PERM-001..004, PERM-021, -022, -045, -049,
//! -053, WIRE-011; acceptance scenarios 5, 6, 7, 12 at the race level). Every test asserts
//! the exact records the emitter received (canonical JSON; a state change as `state:<s>`)
//! and the exact actions returned, in order.

use std::time::{Duration, Instant};

use agentx_core::session::permission::{
    Ask, AskError, Contenders, Decider, HookOutcome, PermissionRace, RaceAction, Routed,
    Settlement, Verdict, HOOK_FAILED, INVALID_DECISION, NO_PROMPT_AVAILABLE, PROMPT_INTERRUPTED,
};
use agentx_wire::control::{Broker, Dispatch, Emission, Refused};
use agentx_wire::json::Parser;
use agentx_wire::wire::{ControlResponse, InputRecord, RawJson, RawObject};

/// A scripted host and hook around one broker and race; time is virtual.
struct Sim {
    broker: Broker,
    race: PermissionRace,
    lines: Vec<String>,
    now: Instant,
}

fn line_of(e: &Emission<'_>) -> String {
    if let Emission::State(s) = e {
        return format!("state:{}", s.as_str());
    }
    let mut v = Vec::new();
    e.encode(&mut v);
    String::from_utf8(v).expect("UTF-8")
}

fn obj(s: &str) -> RawObject<'static> {
    RawObject(RawJson::parse_owned(s.as_bytes().to_vec()).expect("valid JSON"))
}

fn response(line: &str) -> ControlResponse<'static> {
    match InputRecord::decode_line(line.as_bytes(), &mut Parser::new()) {
        Ok(InputRecord::ControlResponse(r)) => r.into_owned(),
        other => panic!("not a control_response: {other:?}"),
    }
}

fn success(id: &str, decision: &str) -> ControlResponse<'static> {
    response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{decision}}}}}"#
    ))
}

fn write_ask(tool_use_id: &str) -> Ask {
    Ask::new(
        tool_use_id,
        "Write",
        obj(r#"{"file_path":"notes.txt","content":"hi"}"#),
    )
}

fn request_line(id: &str, tool_use_id: &str) -> String {
    format!(
        r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"can_use_tool","tool_name":"Write","input":{{"file_path":"notes.txt","content":"hi"}},"tool_use_id":"{tool_use_id}","description":"Write notes.txt"}}}}"#
    )
}

fn cancel_line(id: &str) -> String {
    format!(r#"{{"type":"control_cancel_request","request_id":"{id}"}}"#)
}

fn settled(tool_use_id: &str, verdict: Verdict, decider: Decider) -> RaceAction {
    RaceAction::Settled(Settlement {
        tool_use_id: tool_use_id.into(),
        verdict,
        decider,
    })
}

fn deny(message: &str) -> Verdict {
    Verdict::Deny {
        message: message.into(),
        interrupt: false,
    }
}

fn start_hook(tool_use_id: &str) -> RaceAction {
    RaceAction::StartHook {
        tool_use_id: tool_use_id.into(),
        tool_name: "Write".into(),
        input: obj(r#"{"file_path":"notes.txt","content":"hi"}"#),
    }
}

impl Sim {
    fn new(host: bool, hook: bool) -> Sim {
        Sim {
            broker: Broker::new(),
            race: PermissionRace::new(Contenders { host, hook }),
            lines: Vec::new(),
            now: Instant::now(),
        }
    }

    fn step(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
    }

    fn ask(&mut self, ask: Ask) -> Vec<RaceAction> {
        let lines = &mut self.lines;
        let mut emit = |_: &mut Broker, e: Emission<'_>| {
            lines.push(line_of(&e));
            Ok(())
        };
        self.race
            .ask(ask, &mut self.broker, &mut emit, self.now)
            .expect("ask accepted")
    }

    fn host(&mut self, r: &ControlResponse<'_>) -> Routed {
        let lines = &mut self.lines;
        let mut emit = |_: &mut Broker, e: Emission<'_>| {
            lines.push(line_of(&e));
            Ok(())
        };
        self.race
            .handle_response(r, &mut self.broker, &mut emit, self.now)
    }

    fn hook(&mut self, tool_use_id: &str, outcome: HookOutcome) -> Vec<RaceAction> {
        let lines = &mut self.lines;
        let mut emit = |_: &mut Broker, e: Emission<'_>| {
            lines.push(line_of(&e));
            Ok(())
        };
        self.race
            .handle_hook(tool_use_id, outcome, &mut self.broker, &mut emit, self.now)
    }

    fn take_lines(&mut self) -> Vec<String> {
        std::mem::take(&mut self.lines)
    }
}

fn race_actions(r: Routed) -> Vec<RaceAction> {
    match r {
        Routed::Race(a) => a,
        other => panic!("expected a race resolution, got {other:?}"),
    }
}

const ALLOW: &str = r#"{"behavior":"allow"}"#;
const DENY: &str = r#"{"behavior":"deny","message":"host says no"}"#;

#[test]
fn scenario_6_hook_allow_completes_first_host_deny_is_the_late_loser() {
    let mut sim = Sim::new(true, true);
    assert_eq!(sim.ask(write_ask("toolu_1")), [start_hook("toolu_1")]);
    assert_eq!(
        sim.take_lines(),
        [
            "state:requires_action".to_string(),
            request_line("req_1", "toolu_1")
        ]
    );
    sim.step(10);
    // WIRE-PERM-001: the hook completes first with a decisive allow; the host request is
    // cancelled (step 3).
    assert_eq!(
        sim.hook(
            "toolu_1",
            HookOutcome::Allow {
                updated_input: None
            }
        ),
        [settled(
            "toolu_1",
            Verdict::Allow {
                updated_input: None,
                updated_permissions: vec![]
            },
            Decider::Hook
        )]
    );
    assert_eq!(
        sim.take_lines(),
        [cancel_line("req_1"), "state:running".to_string()]
    );
    sim.step(10);
    // The host's deny arrives late: known-late, nothing changes (PERM-053).
    assert_eq!(
        sim.host(&success("req_1", DENY)),
        Routed::Other(Dispatch::KnownLate { id: "req_1".into() })
    );
    assert!(sim.take_lines().is_empty());
    assert_eq!(sim.race.open_prompts(), 0);
}

#[test]
fn scenario_6_host_deny_completes_first_hook_allow_is_the_late_loser() {
    let mut sim = Sim::new(true, true);
    assert_eq!(sim.ask(write_ask("toolu_1")), [start_hook("toolu_1")]);
    sim.take_lines();
    sim.step(10);
    // The host completes first: it wins, the hook is killed (step 5).
    assert_eq!(
        race_actions(sim.host(&success("req_1", DENY))),
        [
            RaceAction::KillHook {
                tool_use_id: "toolu_1".into()
            },
            settled("toolu_1", deny("host says no"), Decider::Host)
        ]
    );
    assert_eq!(sim.take_lines(), ["state:running"]);
    sim.step(10);
    // The late hook allow cannot replace the outcome.
    assert_eq!(
        sim.hook(
            "toolu_1",
            HookOutcome::Allow {
                updated_input: None
            }
        ),
        []
    );
    assert!(sim.take_lines().is_empty());
}

#[test]
fn pass_through_is_not_decisive_the_host_decides() {
    let mut sim = Sim::new(true, true);
    sim.ask(write_ask("toolu_1"));
    sim.take_lines();
    assert_eq!(sim.hook("toolu_1", HookOutcome::Pass), []);
    assert!(sim.take_lines().is_empty(), "no cancel after a pass");
    assert!(sim.race.is_open("toolu_1"));
    let allow = r#"{"behavior":"allow","updatedInput":{"file_path":"other.txt","content":"hi"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Write"}],"behavior":"allow","destination":"session"}]}"#;
    let actions = race_actions(sim.host(&success("req_1", allow)));
    // The hook already finished (pass): nothing to kill.
    let [RaceAction::Settled(s)] = &actions[..] else {
        panic!("{actions:?}")
    };
    assert_eq!(s.decider, Decider::Host);
    match &s.verdict {
        Verdict::Allow {
            updated_input: Some(i),
            updated_permissions,
        } => {
            assert_eq!(
                i.0.as_bytes(),
                br#"{"file_path":"other.txt","content":"hi"}"#
            );
            assert_eq!(updated_permissions.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(sim.take_lines(), ["state:running"]);
}

#[test]
fn errors_malformed_decisions_and_hook_failures_are_denials_never_allows() {
    // WIRE-PERM-002, PERM-049: each case must settle as a deny.
    type Act = Box<dyn Fn(&mut Sim) -> Vec<RaceAction>>;
    let cases: Vec<(&str, Act, &str)> = vec![
        (
            "host error response",
            Box::new(|s: &mut Sim| {
                race_actions(s.host(&response(
                    r#"{"type":"control_response","response":{"subtype":"error","request_id":"req_1","error":"host crashed"}}"#,
                )))
            }),
            "host crashed",
        ),
        (
            "malformed behavior (PERM-041)",
            Box::new(|s: &mut Sim| {
                race_actions(s.host(&success("req_1", r#"{"behavior":"maybe"}"#)))
            }),
            INVALID_DECISION,
        ),
        (
            "null decision (PERM-052)",
            Box::new(|s: &mut Sim| race_actions(s.host(&success("req_1", "null")))),
            INVALID_DECISION,
        ),
        (
            "allow with a foreign toolUseID (PERM-046)",
            Box::new(|s: &mut Sim| {
                race_actions(s.host(&success(
                    "req_1",
                    r#"{"behavior":"allow","toolUseID":"toolu_other"}"#,
                )))
            }),
            INVALID_DECISION,
        ),
        (
            "allow with an unknown member (PERM-048)",
            Box::new(|s: &mut Sim| {
                race_actions(s.host(&success("req_1", r#"{"behavior":"allow","x":true}"#)))
            }),
            INVALID_DECISION,
        ),
        (
            "hook failed (timeout, nonzero exit)",
            Box::new(|s: &mut Sim| s.hook("toolu_1", HookOutcome::Failed)),
            HOOK_FAILED,
        ),
        (
            "hook deny without a message (PERM-044 default)",
            Box::new(|s: &mut Sim| s.hook("toolu_1", HookOutcome::Deny { message: None })),
            "Permission denied",
        ),
    ];
    for (name, act, message) in cases {
        let mut sim = Sim::new(true, true);
        sim.ask(write_ask("toolu_1"));
        let actions = act(&mut sim);
        let settled: Vec<&Settlement> = actions
            .iter()
            .filter_map(|a| match a {
                RaceAction::Settled(s) => Some(s),
                _ => None,
            })
            .collect();
        assert_eq!(settled.len(), 1, "{name}: settles once");
        assert_eq!(settled[0].verdict, deny(message), "{name}");
        assert_eq!(sim.race.open_prompts(), 0, "{name}");
    }
}

#[test]
fn emission_failure_of_the_request_is_a_denial() {
    let mut sim = Sim::new(true, true);
    let mut refusing = |_: &mut Broker, e: Emission<'_>| match e {
        Emission::Request(_) => Err(Refused),
        _ => Ok(()),
    };
    let actions = sim
        .race
        .ask(
            write_ask("toolu_1"),
            &mut sim.broker,
            &mut refusing,
            sim.now,
        )
        .expect("ask");
    assert_eq!(
        actions,
        [settled(
            "toolu_1",
            deny("control emission failed"),
            Decider::Host
        )]
    );
    assert_eq!(sim.race.open_prompts(), 0);
    assert_eq!(sim.broker.pending_len(), 0);
}

#[test]
fn requires_action_returns_to_running_only_when_no_prompt_remains() {
    let mut sim = Sim::new(true, false);
    assert_eq!(sim.ask(write_ask("toolu_a")), []);
    assert_eq!(sim.ask(write_ask("toolu_b")), []);
    assert_eq!(
        sim.take_lines(),
        [
            "state:requires_action".to_string(),
            request_line("req_1", "toolu_a"),
            request_line("req_2", "toolu_b"),
        ]
    );
    race_actions(sim.host(&success("req_2", ALLOW)));
    assert!(sim.take_lines().is_empty(), "one prompt still open");
    race_actions(sim.host(&success("req_1", DENY)));
    assert_eq!(sim.take_lines(), ["state:running"]);
}

#[test]
fn scenario_12_interrupt_cancels_every_pending_prompt_before_the_acknowledgement() {
    let mut sim = Sim::new(true, true);
    sim.ask(write_ask("toolu_a"));
    sim.ask(write_ask("toolu_b"));
    sim.take_lines();
    let log = std::cell::RefCell::new(Vec::<String>::new());
    let mut emit = |_: &mut Broker, e: Emission<'_>| {
        log.borrow_mut().push(line_of(&e));
        Ok(())
    };
    let mut ack = |_: &mut Broker| {
        log.borrow_mut().push(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"int_1"}}"#
                .to_string(),
        );
        Ok(())
    };
    let (actions, failure) =
        sim.race
            .cancel_all(&mut sim.broker, &mut emit, sim.now, Some(&mut ack));
    assert_eq!(failure, None);
    // WIRE-011: both cancels precede the acknowledgement; no `running` in between.
    assert_eq!(
        log.into_inner(),
        [
            cancel_line("req_1"),
            cancel_line("req_2"),
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"int_1"}}"#
                .to_string(),
        ]
    );
    // Then the denials settle internally, every tool-use ID once.
    assert_eq!(
        actions,
        [
            RaceAction::KillHook {
                tool_use_id: "toolu_a".into()
            },
            settled("toolu_a", deny(PROMPT_INTERRUPTED), Decider::Interrupt),
            RaceAction::KillHook {
                tool_use_id: "toolu_b".into()
            },
            settled("toolu_b", deny(PROMPT_INTERRUPTED), Decider::Interrupt),
        ]
    );
    // The hosts' late answers are known-late.
    assert_eq!(
        sim.host(&success("req_2", ALLOW)),
        Routed::Other(Dispatch::KnownLate { id: "req_2".into() })
    );
    assert_eq!(
        sim.hook(
            "toolu_a",
            HookOutcome::Allow {
                updated_input: None
            }
        ),
        []
    );
}

#[test]
fn scenario_5_eof_with_two_pending_permissions_denies_both_and_leaves_requires_action() {
    let mut sim = Sim::new(true, false);
    sim.ask(write_ask("toolu_a"));
    sim.ask(write_ask("toolu_b"));
    sim.take_lines();
    let lines = &mut sim.lines;
    let mut emit = |_: &mut Broker, e: Emission<'_>| {
        lines.push(line_of(&e));
        Ok(())
    };
    let (actions, others) = sim.race.handle_eof(&mut sim.broker, &mut emit, sim.now);
    assert!(others.is_empty());
    assert_eq!(
        actions,
        [
            settled(
                "toolu_a",
                deny("control stream closed"),
                Decider::StreamClosed
            ),
            settled(
                "toolu_b",
                deny("control stream closed"),
                Decider::StreamClosed
            ),
        ]
    );
    assert_eq!(sim.take_lines(), ["state:running"]);
    // No new permission request starts after EOF.
    assert_eq!(
        sim.ask(write_ask("toolu_c")),
        [settled(
            "toolu_c",
            deny("control stream closed"),
            Decider::StreamClosed
        )]
    );
    assert!(sim.take_lines().is_empty());
}

#[test]
fn perm_045_deny_with_interrupt_reports_the_turn_interrupt() {
    let mut sim = Sim::new(true, false);
    sim.ask(write_ask("toolu_1"));
    let actions = race_actions(sim.host(&success(
        "req_1",
        r#"{"behavior":"deny","message":"stop","interrupt":true}"#,
    )));
    let [RaceAction::Settled(s)] = &actions[..] else {
        panic!("{actions:?}")
    };
    assert!(s.verdict.interrupts_turn());
    assert_eq!(
        s.verdict,
        Verdict::Deny {
            message: "stop".into(),
            interrupt: true
        }
    );
}

#[test]
fn wire_perm_004_sandbox_network_takes_the_same_path_and_denies_on_protocol_errors() {
    let mut sim = Sim::new(true, false);
    sim.ask(Ask::sandbox_network(
        "toolu_net",
        "api.example.com",
        Some(443),
    ));
    assert_eq!(
        sim.take_lines(),
        [
            "state:requires_action",
            r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"SandboxNetworkAccess","input":{"host":"api.example.com","port":443},"tool_use_id":"toolu_net","description":"SandboxNetworkAccess"}}"#,
        ]
    );
    let actions = race_actions(sim.host(&success(
        "req_1",
        r#"{"behavior":"allow","updatedInput":7}"#,
    )));
    assert_eq!(
        actions,
        [settled("toolu_net", deny(INVALID_DECISION), Decider::Host)]
    );
    // A valid allow is an allow.
    sim.ask(Ask::sandbox_network("toolu_net2", "h", None));
    let actions = race_actions(sim.host(&success("req_2", ALLOW)));
    assert!(matches!(&actions[..], [RaceAction::Settled(s)] if s.verdict.is_allow()));
}

#[test]
fn without_host_or_hook_ask_is_denied_at_once() {
    let mut sim = Sim::new(false, false);
    assert_eq!(
        sim.ask(write_ask("toolu_1")),
        [settled(
            "toolu_1",
            deny(NO_PROMPT_AVAILABLE),
            Decider::NoPrompt
        )]
    );
    assert!(sim.take_lines().is_empty());
    // Hook only: a pass leaves nobody to decide.
    let mut sim = Sim::new(false, true);
    assert_eq!(sim.ask(write_ask("toolu_1")), [start_hook("toolu_1")]);
    assert_eq!(sim.take_lines(), ["state:requires_action"]);
    assert_eq!(
        sim.hook("toolu_1", HookOutcome::Pass),
        [settled(
            "toolu_1",
            deny(NO_PROMPT_AVAILABLE),
            Decider::NoPrompt
        )]
    );
    assert_eq!(sim.take_lines(), ["state:running"]);
}

#[test]
fn scenario_7_the_same_late_host_response_twice_settles_the_tool_use_once() {
    let mut sim = Sim::new(true, false);
    sim.ask(write_ask("toolu_1"));
    let answer = success("req_1", r#"{"behavior":"allow","toolUseID":"toolu_1"}"#);
    let first = race_actions(sim.host(&answer));
    assert_eq!(first.len(), 1);
    for _ in 0..2 {
        assert_eq!(
            sim.host(&answer),
            Routed::Other(Dispatch::Duplicate {
                id: "req_1".into(),
                tool_use_id: "toolu_1".into()
            })
        );
    }
    // A second ask for an open or a settled tool-use ID is refused (PERM-053).
    sim.ask(write_ask("toolu_2"));
    let lines = &mut sim.lines;
    let mut emit = |_: &mut Broker, e: Emission<'_>| {
        lines.push(line_of(&e));
        Ok(())
    };
    assert_eq!(
        sim.race
            .ask(write_ask("toolu_2"), &mut sim.broker, &mut emit, sim.now),
        Err(AskError::AlreadyOpen)
    );
    assert_eq!(
        sim.race
            .ask(write_ask("toolu_1"), &mut sim.broker, &mut emit, sim.now),
        Err(AskError::AlreadySettled)
    );
}

#[test]
fn a_synchronous_host_wins_before_the_hook_starts() {
    let mut sim = Sim::new(true, true);
    let lines = &mut sim.lines;
    let mut loopback = |b: &mut Broker, e: Emission<'_>| -> Result<(), Refused> {
        lines.push(line_of(&e));
        if let Emission::Request(r) = e {
            let now = Instant::now();
            let answer = success(r.request_id.as_str(), DENY);
            b.handle_response(&answer, now, &mut |_: &mut Broker, _: Emission<'_>| Ok(()));
        }
        Ok(())
    };
    let actions = sim
        .race
        .ask(
            write_ask("toolu_1"),
            &mut sim.broker,
            &mut loopback,
            sim.now,
        )
        .expect("ask");
    assert_eq!(
        actions,
        [settled("toolu_1", deny("host says no"), Decider::Host)]
    );
    assert_eq!(
        sim.take_lines(),
        [
            "state:requires_action".to_string(),
            request_line("req_1", "toolu_1"),
            "state:running".to_string()
        ]
    );
}
