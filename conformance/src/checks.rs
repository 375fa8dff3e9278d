//! The always-on checks: applied to every frame of every scenario, each with the requirement ids it
//! verifies. Scenario steps and snapshots add their own checks (see `driver`).

use chatwire_schema::ReduceError;
use chatwire_schema::UiEvent;

/// A check that runs on every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckDef {
    /// Stable id, used in reports and baselines.
    pub id: &'static str,
    /// Requirement ids it verifies.
    pub requirements: &'static [&'static str],
    /// What it verifies, one line.
    pub summary: &'static str,
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
};

/// Servers send text frames only.
pub const TEXT_FRAMES_ONLY: CheckDef =
    CheckDef { id: "text-frames-only", requirements: &["TRANSPORT-001"], summary: "the server sends text frames only" };

/// Every `ts` is RFC 3339 with an offset.
pub const TS_FORMAT: CheckDef = CheckDef {
    id: "ts-rfc3339",
    requirements: &["FRAME-004"],
    summary: "every ts is an RFC 3339 date-time with a time zone offset",
};

/// `seq` grows strictly per session, across reconnects and restarts.
pub const SEQ_INCREASING: CheckDef = CheckDef {
    id: "seq-increasing",
    requirements: &["SEQ-001", "SEQ-002"],
    summary: "seq is present on every session frame and grows strictly per session, across reconnects",
};

/// The welcome answers the hello with a version the client offered; a snapshot follows.
pub const WELCOME_THEN_SNAPSHOT: CheckDef = CheckDef {
    id: "welcome-then-snapshot",
    requirements: &["SESSION-003", "SESSION-006", "STATE-002", "STATE-005", "TRANSPORT-005"],
    summary: "a welcome answers the hello with an offered version and is followed by ui_state_snapshot (empty for a new session)",
};

/// Every event is followed by its `ui_state_updated` (one per batch), and no update comes without one.
pub const UPDATE_AFTER_EVENT: CheckDef = CheckDef {
    id: "update-after-every-event",
    requirements: &["STATE-003", "STATE-007", "MULTI-002"],
    summary: "the next frame after every event (or batch of tool calls) is its ui_state_updated, and no update comes without an event",
};

/// Every UiState the server sends equals the runner's reduction (the differential oracle).
pub const STATE_MATCHES_REDUCER: CheckDef = CheckDef {
    id: "state-matches-reducer",
    requirements: &["STATE-004"],
    summary: "every ui_state_updated equals the last snapshot folded with the events received since",
};

/// Every event is one the reducer accepts in the current state.
pub const EVENTS_ACCEPTED: CheckDef = CheckDef {
    id: "events-follow-reducer-rules",
    requirements: &["STATE-006"],
    summary: "every event is applicable to the state the client holds (the reducer refuses none)",
};

/// Ids are never reused, and replies name frames the runner sent.
pub const IDS_CONSISTENT: CheckDef = CheckDef {
    id: "ids-consistent",
    requirements: &["ID-002", "ERROR-004"],
    summary:
        "no tool_call_id, invocation_id or item id is reused in a session; in_reply_to names a frame the client sent",
};

/// The calls of a batch are sent consecutively with `call_index` 0..n-1.
pub const BATCH_ORDER: CheckDef = CheckDef {
    id: "batch-call-order",
    requirements: &["MULTI-001"],
    summary: "tool calls of a batch are sent consecutively in call order with call_index 0..n-1",
};

/// `fatal` matches the error code; nothing follows a fatal error.
pub const ERRORS_WELL_FORMED: CheckDef = CheckDef {
    id: "fatal-errors-close",
    requirements: &["ERROR-002", "TRANSPORT-008"],
    summary: "an error's fatal flag matches its code and no frame follows a fatal error",
};

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

/// The refusal rule a reducer error names (`STATE-020`..`STATE-033`, see `ReduceError`).
pub fn rule_of_refusal(error: &ReduceError) -> &'static str {
    match error {
        ReduceError::DuplicateItemId(_) => "STATE-020",
        ReduceError::InvocationReused(_) => "STATE-021",
        ReduceError::NotInRun(_) => "STATE-022",
        ReduceError::RunInProgress(_) => "STATE-023",
        ReduceError::UnknownInvocation(_) => "STATE-024",
        ReduceError::UnknownToolCall(_) => "STATE-025",
        ReduceError::AlreadySettled { .. } => "STATE-026",
        ReduceError::NotRunning(_) => "STATE-027",
        ReduceError::NotAwaiting(_) => "STATE-028",
        ReduceError::CorrMismatch { .. } => "STATE-029",
        ReduceError::NothingAwaited(_) => "STATE-030",
        ReduceError::OpenToolCalls { .. } => "STATE-031",
        ReduceError::OpenToolCallsAtNewTurn(_) => "STATE-032",
        ReduceError::RewindMismatch { .. } => "STATE-033",
        ReduceError::OutputIdTooLong(_) => "STATE-015",
        ReduceError::StaleInvocation(_) => "STATE-034",
        ReduceError::MissingComponentType(_) => "STATE-035",
        // ReduceError is non_exhaustive: a refusal added later is still a refused event.
        _ => "STATE-006",
    }
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
