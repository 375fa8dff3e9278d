//! The always-on checks: applied to every frame of every scenario, each with the requirement ids it
//! verifies. Scenario steps and snapshots add their own checks (see `driver`).

use std::collections::{HashMap, HashSet};

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::ReduceError;
use chatwire_schema::{ServerFrame, UiEvent, DEFAULT_MAX_FRAME_BYTES};

use crate::scenario::Level;

/// A check that runs on every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckDef {
    /// Stable id, used in reports and baselines.
    pub id: &'static str,
    /// Requirement ids it verifies.
    pub requirements: &'static [&'static str],
    /// What it verifies, one line.
    pub summary: &'static str,
    /// How binding: a failed `must` check fails the scenario whatever its level, a failed `should`
    /// check is a warning.
    pub level: Level,
}

impl CheckDef {
    /// The requirement ids as owned strings.
    pub fn requirement_list(&self) -> Vec<String> {
        self.requirements.iter().map(|r| (*r).to_owned()).collect()
    }
}

/// Every server frame is one JSON object that validates against the schema of its `type`
/// (blame: the implementation).
pub const WIRE_SCHEMA_VALID: CheckDef = CheckDef {
    id: "wire-schema-valid",
    requirements: &["FRAME-001", "FRAME-002", "FRAME-003", "ID-001"],
    summary: "every server frame is a JSON object valid against the schema of its type",
    level: Level::Must,
};

/// Servers send text frames only.
pub const TEXT_FRAMES_ONLY: CheckDef = CheckDef {
    id: "text-frames-only",
    requirements: &["TRANSPORT-001"],
    summary: "the server sends text frames only",
    level: Level::Must,
};

/// Every `ts` is RFC 3339 with an offset.
pub const TS_FORMAT: CheckDef = CheckDef {
    id: "ts-rfc3339",
    requirements: &["FRAME-004"],
    summary: "every ts is an RFC 3339 date-time with a time zone offset",
    level: Level::Must,
};

/// `seq` grows strictly per session, across reconnects and restarts.
pub const SEQ_INCREASING: CheckDef = CheckDef {
    id: "seq-increasing",
    requirements: &["SEQ-001", "SEQ-002"],
    summary: "seq is present on every session frame and grows strictly per session, across reconnects",
    level: Level::Must,
};

/// The welcome answers the hello with a version the client offered; a snapshot follows.
pub const WELCOME_THEN_SNAPSHOT: CheckDef = CheckDef {
    id: "welcome-then-snapshot",
    requirements: &["SESSION-003", "SESSION-006", "STATE-002", "STATE-005", "TRANSPORT-005"],
    summary: "a welcome answers the hello with an offered version and is followed by ui_state_snapshot (empty for a new session)", level: Level::Must
};

/// Every event is followed by its `ui_state_updated` (one per batch), and no update comes without one.
pub const UPDATE_AFTER_EVENT: CheckDef = CheckDef {
    id: "update-after-every-event",
    requirements: &["STATE-003", "STATE-007", "MULTI-002"],
    summary: "the next frame after every event (or batch of tool calls) is its ui_state_updated, and no update comes without an event", level: Level::Must
};

/// Every UiState the server sends equals the runner's reduction (the differential oracle).
pub const STATE_MATCHES_REDUCER: CheckDef = CheckDef {
    id: "state-matches-reducer",
    requirements: &["STATE-004"],
    summary: "every ui_state_updated equals the last snapshot folded with the events received since",
    level: Level::Must,
};

/// Every event is one the reducer accepts in the current state.
pub const EVENTS_ACCEPTED: CheckDef = CheckDef {
    id: "events-follow-reducer-rules",
    requirements: &["STATE-006"],
    summary: "every event is applicable to the state the client holds (the reducer refuses none)",
    level: Level::Must,
};

/// Ids are never reused, and replies name frames the runner sent.
pub const IDS_CONSISTENT: CheckDef = CheckDef {
    id: "ids-consistent",
    requirements: &["ID-002", "ERROR-004"],
    summary:
        "no tool_call_id, invocation_id or item id is reused in a session; in_reply_to names a frame the client sent",
    level: Level::Must,
};

/// The calls of a batch are sent consecutively with `call_index` 0..n-1.
pub const BATCH_ORDER: CheckDef = CheckDef {
    id: "batch-call-order",
    requirements: &["MULTI-001"],
    summary: "tool calls of a batch are sent consecutively in call order with call_index 0..n-1",
    level: Level::Must,
};

/// `fatal` matches the error code; nothing follows a fatal error.
pub const ERRORS_WELL_FORMED: CheckDef = CheckDef {
    id: "fatal-errors-close",
    requirements: &["ERROR-002", "TRANSPORT-008"],
    summary: "an error's fatal flag matches its code and no frame follows a fatal error",
    level: Level::Must,
};

/// The welcome announces the default frame limit (a warning otherwise).
pub const FRAME_LIMIT_DEFAULT: CheckDef = CheckDef {
    id: "frame-limit-default",
    requirements: &["TRANSPORT-013"],
    summary: "the welcome announces limits.max_frame_bytes 1048576, the default",
    level: Level::Should,
};

/// A run that stops says why (a warning otherwise).
pub const RUN_COMPLETE_EXPLAINED: CheckDef = CheckDef {
    id: "run-complete-explained",
    requirements: &["RUN-005", "RUN-008"],
    summary: "run_complete awaiting_input carries reason awaiting_user_input; run_complete failed carries an error",
    level: Level::Should,
};

/// Error messages read as one lowercase sentence (a warning otherwise).
pub const ERROR_MESSAGE_STYLE: CheckDef = CheckDef {
    id: "error-message-style",
    requirements: &["ERROR-005"],
    summary: "an error's message is one sentence starting with a lowercase letter",
    level: Level::Should,
};

/// A tool call's reports stay coherent (a warning otherwise).
pub const TOOL_REPORTS_COHERENT: CheckDef = CheckDef {
    id: "tool-reports-coherent",
    requirements: &["TOOL-009", "TOOL-011"],
    summary: "a call's progress fractions never decrease and no stdout or stderr follows its exit_code",
    level: Level::Should,
};

/// The should-level checks over a scenario's frames: `(check, message, requirement)` per finding.
/// Each concerns what the server does itself, not a field the conformance script dictates. Tool
/// call ids are unique in a session (ID-002), so one advisor serves every connection.
#[derive(Debug, Default)]
pub struct Advisor {
    /// The last fraction reported per tool call.
    fractions: HashMap<String, f64>,
    /// Tool calls whose output reported an exit code.
    exited: HashSet<String>,
}

impl Advisor {
    /// The findings on `frame`, given the frames observed before it.
    pub fn observe(&mut self, frame: &ServerFrame) -> Vec<(CheckDef, String, &'static str)> {
        let mut out = advisories(frame);
        match frame {
            ServerFrame::ToolProgress(p) => {
                if let Some(fraction) = p.fraction.map(|f| f.get()) {
                    let call = p.tool_call_id.to_string();
                    if let Some(&before) = self.fractions.get(&call) {
                        if fraction < before {
                            out.push((
                                TOOL_REPORTS_COHERENT,
                                format!("progress of {call} went back from {before} to {fraction}"),
                                "TOOL-009",
                            ));
                        }
                    }
                    self.fractions.insert(call, fraction);
                }
            }
            ServerFrame::ToolOutput(o) => {
                let call = o.tool_call_id.to_string();
                if self.exited.contains(&call) && (o.stdout.is_some() || o.stderr.is_some()) {
                    out.push((
                        TOOL_REPORTS_COHERENT,
                        format!("{call} sent more stdout or stderr after its exit_code"),
                        "TOOL-011",
                    ));
                }
                if o.exit_code.is_some() {
                    self.exited.insert(call);
                }
            }
            _ => {}
        }
        out
    }
}

/// The should-level findings a single frame shows on its own.
fn advisories(frame: &ServerFrame) -> Vec<(CheckDef, String, &'static str)> {
    let mut out = Vec::new();
    match frame {
        ServerFrame::Welcome(w) if w.limits.max_frame_bytes != DEFAULT_MAX_FRAME_BYTES => out.push((
            FRAME_LIMIT_DEFAULT,
            format!(
                "limits.max_frame_bytes is {}, not the default {DEFAULT_MAX_FRAME_BYTES}",
                w.limits.max_frame_bytes
            ),
            "TRANSPORT-013",
        )),
        ServerFrame::RunComplete(rc) => match rc.status {
            RunCompleteStatus::AwaitingInput if rc.reason.as_deref() != Some("awaiting_user_input") => out.push((
                RUN_COMPLETE_EXPLAINED,
                format!(
                    "run_complete awaiting_input carries reason {}, not \"awaiting_user_input\"",
                    rc.reason.as_deref().map_or("(none)".to_owned(), |r| format!("{r:?}"))
                ),
                "RUN-005",
            )),
            RunCompleteStatus::Failed if rc.error.as_deref().is_none_or(|e| e.trim().is_empty()) => out.push((
                RUN_COMPLETE_EXPLAINED,
                "run_complete failed carries no error saying what went wrong".to_owned(),
                "RUN-008",
            )),
            _ => {}
        },
        ServerFrame::Error(e) => {
            if let Some(why) = message_style_problem(&e.message) {
                out.push((ERROR_MESSAGE_STYLE, format!("error message {:?} {why}", e.message), "ERROR-005"));
            }
        }
        _ => {}
    }
    out
}

/// Why `message` is not one sentence starting with a lowercase letter, if it is not.
fn message_style_problem(message: &str) -> Option<&'static str> {
    let first = message.chars().next()?;
    if first.is_alphabetic() && !first.is_lowercase() {
        return Some("starts with an uppercase letter");
    }
    // A sentence break: a full stop, question or exclamation mark, a space, then a capital.
    let chars: Vec<char> = message.chars().collect();
    let breaks = chars.windows(3).any(|w| matches!(w[0], '.' | '!' | '?') && w[1] == ' ' && w[2].is_uppercase());
    breaks.then_some("holds more than one sentence")
}

/// Every always-on check, in report order.
pub const ALWAYS_ON: &[CheckDef] = &[
    WIRE_SCHEMA_VALID,
    TEXT_FRAMES_ONLY,
    TS_FORMAT,
    SEQ_INCREASING,
    WELCOME_THEN_SNAPSHOT,
    UPDATE_AFTER_EVENT,
    STATE_MATCHES_REDUCER,
    EVENTS_ACCEPTED,
    IDS_CONSISTENT,
    BATCH_ORDER,
    ERRORS_WELL_FORMED,
    FRAME_LIMIT_DEFAULT,
    RUN_COMPLETE_EXPLAINED,
    ERROR_MESSAGE_STYLE,
    TOOL_REPORTS_COHERENT,
];

/// Requirement ids that findings name besides their check's own (kept here so a test can verify
/// that the spec defines each of them).
pub const FINDING_REQUIREMENTS: &[&str] = &[
    "FRAME-001",
    "FRAME-002",
    "SEQ-001",
    "SEQ-002",
    "SESSION-003",
    "SESSION-006",
    "STATE-002",
    "STATE-003",
    "STATE-004",
    "STATE-005",
    "STATE-007",
    "STATE-015",
    "STATE-020",
    "STATE-021",
    "STATE-022",
    "STATE-023",
    "STATE-024",
    "STATE-025",
    "STATE-026",
    "STATE-027",
    "STATE-028",
    "STATE-029",
    "STATE-030",
    "STATE-031",
    "STATE-032",
    "STATE-033",
    "STATE-034",
    "STATE-035",
    "STATE-006",
    "STATE-010",
    "STATE-011",
    "STATE-012",
    "STATE-013",
    "STATE-014",
    "STATE-016",
    "STATE-017",
    "STATE-018",
    "STATE-019",
    "MULTI-001",
    "MULTI-002",
    "ID-002",
    "ERROR-002",
    "TRANSPORT-001",
    "TRANSPORT-003",
    "TRANSPORT-005",
    "TRANSPORT-008",
];

/// The reducer rule an event falls under (`STATE-010`..`STATE-019`).
pub fn rule_of_event(event: &UiEvent<'_>) -> &'static str {
    match event {
        UiEvent::UserMessageAccepted(_) => "STATE-010",
        UiEvent::RunStarted(_) => "STATE-011",
        UiEvent::AssistantMessage(_) => "STATE-012",
        UiEvent::ToolCall(_) => "STATE-013",
        UiEvent::ToolProgress(_) => "STATE-014",
        UiEvent::ToolOutput(_) => "STATE-015",
        UiEvent::ToolCallComplete(_) => "STATE-016",
        UiEvent::ToolCallDismiss(_) => "STATE-017",
        UiEvent::RunComplete(_) => "STATE-018",
        UiEvent::RewindComplete(_) => "STATE-019",
    }
}

/// The refusal rule a reducer error names (`STATE-015`, `STATE-020`..`STATE-035`, see `ReduceError`).
pub fn rule_of_refusal(error: &ReduceError) -> &'static str {
    error.requirement()
}

/// Whether `ts` is an RFC 3339 date-time with a time zone offset (`2026-01-15T10:00:00Z`,
/// `2026-01-15T10:00:00.123+02:00`).
pub fn is_rfc3339(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| b.get(range).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let num = |range: std::ops::Range<usize>| -> u32 {
        b.get(range).map_or(99, |s| s.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
    };
    if b.len() < 20 || !digits(0..4) || b[4] != b'-' || !digits(5..7) || b[7] != b'-' || !digits(8..10) {
        return false;
    }
    if !matches!(b[10], b'T' | b't') || !digits(11..13) || b[13] != b':' || !digits(14..16) || b[16] != b':' {
        return false;
    }
    if !digits(17..19) {
        return false;
    }
    let (month, day, hour, minute, second) = (num(5..7), num(8..10), num(11..13), num(14..16), num(17..19));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && digits(i + 1..i + 3)
                && b[i + 3] == b':'
                && digits(i + 4..i + 6)
                && num(i + 1..i + 3) < 24
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_accepts_offsets_and_fractions() {
        for ok in ["2026-01-15T10:00:00Z", "2026-01-15T10:00:00.123456+02:00", "2026-12-31t23:59:60z"] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-01-15T10:00:00",
            "2026-01-15 10:00:00Z",
            "2026-13-15T10:00:00Z",
            "2026-01-15T10:00:00.Z",
            "2026-01-15T10:00:00+0200",
            "1700000000",
            "",
            "2026-01-15T10:00:00Zjunk",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    fn frame(v: serde_json::Value) -> ServerFrame {
        serde_json::from_value(v).expect("a valid server frame")
    }

    fn advised(v: serde_json::Value) -> Vec<(&'static str, &'static str)> {
        Advisor::default().observe(&frame(v)).into_iter().map(|(def, _, req)| (def.id, req)).collect()
    }

    #[test]
    fn should_level_advisories_flag_only_what_the_server_chooses() {
        let ts = "2026-01-15T10:00:00Z";
        let welcome = |bytes: u64| {
            serde_json::json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h", "version": "1.0",
                "session_id": "s-1", "resume_token": "t-1", "resumed": false, "capabilities": [],
                "limits": {"max_frame_bytes": bytes}})
        };
        assert!(advised(welcome(DEFAULT_MAX_FRAME_BYTES)).is_empty());
        assert_eq!(advised(welcome(65_536)), vec![("frame-limit-default", "TRANSPORT-013")]);

        let rc = |status: &str, extra: serde_json::Value| {
            let mut v = serde_json::json!({"type": "chat.run_complete", "seq": 5, "invocation_id": "inv-1",
                "status": status, "ts": ts});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        assert!(advised(rc("awaiting_input", serde_json::json!({"reason": "awaiting_user_input"}))).is_empty());
        assert_eq!(advised(rc("awaiting_input", serde_json::json!({}))), vec![("run-complete-explained", "RUN-005")]);
        assert!(advised(rc("failed", serde_json::json!({"error": "the tool crashed"}))).is_empty());
        assert_eq!(advised(rc("failed", serde_json::json!({}))), vec![("run-complete-explained", "RUN-008")]);
        assert_eq!(
            advised(rc("failed", serde_json::json!({"error": "  "}))),
            vec![("run-complete-explained", "RUN-008")]
        );
        assert!(advised(rc("completed", serde_json::json!({}))).is_empty());

        let error = |message: &str| serde_json::json!({"type": "error", "code": "invalid_frame", "message": message, "fatal": false});
        for fine in ["send session.hello first", "frame of 9 bytes is over the limit of 8 bytes", "", "42 is odd"] {
            assert!(advised(error(fine)).is_empty(), "{fine:?}");
        }
        for (bad, why) in [("Send a hello first", "uppercase"), ("bad frame. Try again", "more than one sentence")] {
            let found = Advisor::default().observe(&frame(error(bad)));
            assert_eq!(found.len(), 1, "{bad:?}");
            assert_eq!(found[0].2, "ERROR-005");
            assert!(found[0].1.contains(why), "{}", found[0].1);
        }
    }

    #[test]
    fn the_advisor_follows_each_calls_progress_and_output() {
        let ts = "2026-01-15T10:00:00Z";
        let progress = |call: &str, fraction: f64| {
            frame(serde_json::json!({"type": "chat.tool_progress", "seq": 1, "tool_call_id": call,
                "fraction": fraction, "ts": ts}))
        };
        let output = |call: &str, part: serde_json::Value| {
            let mut v = serde_json::json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": call, "ts": ts});
            v.as_object_mut().unwrap().extend(part.as_object().unwrap().clone());
            frame(v)
        };
        let mut a = Advisor::default();
        assert!(a.observe(&progress("tc-1", 0.2)).is_empty());
        assert!(a.observe(&progress("tc-2", 0.1)).is_empty(), "another call has its own progress");
        assert!(a.observe(&progress("tc-1", 0.2)).is_empty(), "equal is not a decrease");
        let back = a.observe(&progress("tc-1", 0.1));
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].2, "TOOL-009");
        assert!(back[0].1.contains("0.2") && back[0].1.contains("0.1"), "{}", back[0].1);

        assert!(a.observe(&output("tc-1", serde_json::json!({"stdout": "a"}))).is_empty());
        assert!(a.observe(&output("tc-1", serde_json::json!({"exit_code": 0}))).is_empty());
        assert!(a.observe(&output("tc-2", serde_json::json!({"stderr": "b"}))).is_empty());
        let late = a.observe(&output("tc-1", serde_json::json!({"stderr": "late"})));
        assert_eq!(late.len(), 1);
        assert_eq!(late[0].2, "TOOL-011");
    }

    #[test]
    fn every_requirement_id_named_by_checks_and_scenarios_is_in_the_spec() {
        let registry = chatwire_schema::requirements::all().expect("the spec registry parses");
        let known = |id: &str| registry.iter().any(|r| r.id == id);
        for def in ALWAYS_ON {
            for id in def.requirements {
                assert!(known(id), "check {} names {id}, which the spec does not define", def.id);
            }
        }
        for id in FINDING_REQUIREMENTS {
            assert!(known(id), "a finding names {id}, which the spec does not define");
        }
        for s in crate::catalog::embedded_scenarios().expect("embedded scenarios parse") {
            for id in &s.requirements {
                assert!(known(&id.0), "scenario {} names {id}, which the spec does not define", s.id);
            }
        }
    }

    #[test]
    fn check_ids_are_unique_and_name_requirements() {
        let mut ids: Vec<&str> = ALWAYS_ON.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), ALWAYS_ON.len());
        assert!(ALWAYS_ON.iter().all(|c| !c.requirements.is_empty()));
    }
}
