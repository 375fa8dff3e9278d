//! Which requirements a scenario step proves: what its check names in a report, and what a
//! failure of it is charged to.
//!
//! A step names its requirements explicitly with `"requirements": [...]` in the scenario file.
//! Otherwise they are derived, in this order:
//! 1. **Mentioned**: the scenario's own requirement ids whose spec statement mentions what the step
//!    deals with (its *keys*): for `expect` and `expect_unordered` the expected frame `type`s and
//!    the quoted values of their `status`, `code`, `reason`, `initiated_by` and `action`; for
//!    `expect_error` the error code; for `expect_close` the close code; for `connect` the hello,
//!    welcome and snapshot frames (and `Sec-WebSocket-Protocol` without a subprotocol); for `resume`
//!    `resume`; for `wait_idle` `chat.run_complete`. A key matches as a whole word of the statement.
//! 2. **By kind**, when none is mentioned: the requirement that mandates the step's frame in a
//!    scripted turn (see `frame_default`: `chat.user_message_accepted` TURN-001,
//!    `chat.run_started` TURN-005 after a user message and RUN-007 in a slice a response or an
//!    expiry reopened, `chat.assistant_message` SCRIPT-006, `chat.tool_call` SCRIPT-008,
//!    `chat.tool_call_complete` SCRIPT-010, SCRIPT-012 after a response, TOOL-018 when expired,
//!    `chat.run_complete` SCRIPT-007, `ui_state_snapshot`
//!    STATE-002, `session.welcome` SESSION-005, `chat.rewind_complete` REWIND-003); `ping`
//!    TRANSPORT-010, `connect` STATE-002, `resume` RESUME-001, `expect_close` TRANSPORT-008,
//!    `wait_idle` RUN-001; `expect_silence` right after an `expect_error` ERROR-001 (the refused
//!    frame caused no event) and right after a `resume` RESUME-003 (nothing is replayed); an
//!    orderly `restart` TRANSPORT-009 (it checks that every open connection closes with 1001).
//! 3. **The scenario's**, when neither applies: the scenario's ids as a whole. Only 1 and 2 count
//!    as asserting an id (see [`asserted`]), and a test refuses a bundled scenario with such a
//!    step: a `snapshot`, or an `expect_silence` elsewhere, names its requirements itself. The
//!    fallback remains for scenarios a team writes, whose failures it charges to the scenario.
//!
//! Actions (`user_message`, `respond`, `rewind`, `send*`, `disconnect`, `restart`, `sleep`) prove
//! nothing themselves: a failure to carry one out is the connection's or the harness's.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use chatwire_schema::ReqId;
use serde_json::Value;

use crate::scenario::{Scenario, Step};

/// How a step's requirements were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Named in the scenario file.
    Declared,
    /// Scenario ids whose statement mentions the step's keys.
    Mentioned,
    /// The step kind's own.
    Kind,
    /// The scenario's ids as a whole.
    Scenario,
    /// An action: none.
    Action,
}

/// The requirements `step` of `scenario` proves, and how they were found.
pub fn step_requirements(scenario: &Scenario, step: &Step) -> (Vec<ReqId>, Source) {
    if !step.declared_requirements().is_empty() {
        return (step.declared_requirements().to_vec(), Source::Declared);
    }
    // An orderly restart is an action that also asserts: every open connection closes with 1001.
    if let Step::Restart { graceful: true, .. } = step {
        return (ReqId::parse("TRANSPORT-009").into_iter().collect(), Source::Kind);
    }
    let Some(keys) = keys(step) else { return (Vec::new(), Source::Action) };
    let texts = statements();
    let mentioned: Vec<ReqId> = scenario
        .requirements
        .iter()
        .copied()
        .filter(|id| texts.get(id).is_some_and(|text| keys.iter().any(|k| mentions(text, k))))
        .collect();
    if !mentioned.is_empty() {
        return (mentioned, Source::Mentioned);
    }
    let by_kind = kind_default(scenario, step);
    if !by_kind.is_empty() {
        return (by_kind, Source::Kind);
    }
    (scenario.requirements.clone(), Source::Scenario)
}

/// The ids a scenario's steps assert (declared, mentioned or by kind; not the scenario fallback).
pub fn asserted(scenario: &Scenario) -> BTreeSet<ReqId> {
    let mut out = BTreeSet::new();
    for step in &scenario.steps {
        let (ids, source) = step_requirements(scenario, step);
        if matches!(source, Source::Declared | Source::Mentioned | Source::Kind) {
            out.extend(ids);
        }
    }
    out
}

/// The statement text of every requirement of the embedded spec.
fn statements() -> &'static HashMap<ReqId, String> {
    static TEXTS: OnceLock<HashMap<ReqId, String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        chatwire_schema::requirements::all()
            .map(|all| all.into_iter().filter_map(|r| Some((ReqId::parse(&r.id).ok()?, r.text))).collect())
            .unwrap_or_default()
    })
}

/// What a step deals with, as words its requirements' statements would mention; `None` for actions.
fn keys(step: &Step) -> Option<Vec<String>> {
    let quoted = |v: &str| format!("\"{v}\"");
    Some(match step {
        Step::Connect { subprotocol, .. } => {
            let mut k = vec!["session.hello".to_owned(), "session.welcome".into(), "ui_state_snapshot".into()];
            if !subprotocol {
                k.push("Sec-WebSocket-Protocol".into());
            }
            k
        }
        Step::Resume { .. } | Step::AttachToBound { .. } => vec!["resume".to_owned()],
        Step::Ping { .. } => vec!["ping".to_owned()],
        Step::Expect { frame, .. } => frame_keys(frame),
        Step::ExpectUnordered { frames, .. } => frames.iter().flat_map(frame_keys).collect(),
        Step::ExpectError { code, .. } => vec![code.as_str().to_owned(), quoted(code.as_str())],
        Step::ExpectClose { code, .. } => code.map(|c| vec![c.to_string()]).unwrap_or_default(),
        Step::WaitIdle { .. } => vec!["chat.run_complete".to_owned()],
        Step::PageThrough { .. } => vec!["chat.history_request".to_owned(), "chat.history_page".into()],
        Step::ExpectSilence { .. } | Step::Snapshot { .. } | Step::ExpectState { .. } => Vec::new(),
        Step::Disconnect { .. }
        | Step::Restart { .. }
        | Step::KillReplica { .. }
        | Step::StartReplica { .. }
        | Step::PauseReplica { .. }
        | Step::ContinueReplica { .. }
        | Step::UserMessage { .. }
        | Step::Respond { .. }
        | Step::Rewind { .. }
        | Step::Retry { .. }
        | Step::Cancel { .. }
        | Step::Send { .. }
        | Step::SendText { .. }
        | Step::SendBinary { .. }
        | Step::SendViolation { .. }
        | Step::PauseReading { .. }
        | Step::Drain { .. }
        | Step::Sleep { .. } => return None,
    })
}

/// The keys of one expected frame pattern.
fn frame_keys(frame: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = frame.get("type").and_then(Value::as_str) {
        out.push(t.to_owned());
    }
    for field in ["status", "code", "reason", "initiated_by", "action", "error"] {
        if let Some(v) = frame.get(field).and_then(Value::as_str).filter(|v| !v.starts_with("{{")) {
            out.push(format!("\"{v}\""));
            if field == "code" {
                out.push(v.to_owned());
            }
        }
    }
    out
}

/// The step kind's own requirements, used when the scenario's statements mention none of its keys.
fn kind_default(scenario: &Scenario, step: &Step) -> Vec<ReqId> {
    let ids: Vec<&str> = match step {
        Step::Ping { .. } => vec!["TRANSPORT-010"],
        Step::Connect { .. } => vec!["STATE-002"],
        Step::Resume { .. } => vec!["RESUME-001"],
        Step::ExpectClose { .. } => vec!["TRANSPORT-008"],
        Step::WaitIdle { .. } => vec!["RUN-001"],
        Step::Expect { frame, .. } => frame_default(frame, last_action(scenario, step)).into_iter().collect(),
        Step::ExpectUnordered { frames, .. } => {
            let after = last_action(scenario, step);
            let mut ids: Vec<&str> = frames.iter().filter_map(|f| frame_default(f, after)).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        }
        Step::ExpectSilence { .. } => match previous_step(scenario, step) {
            Some(Step::ExpectError { .. }) => vec!["ERROR-001"],
            Some(Step::Resume { .. }) => vec!["RESUME-003"],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    ids.into_iter().filter_map(|id| ReqId::parse(id).ok()).collect()
}

/// The requirement that makes a server send a frame of this type in a scripted turn. A slice that
/// a response or an expiry reopens (`after_response`: the last action before the step was not a
/// user message) starts under RUN-007, not TURN-005, and a call a response settles is settled under
/// SCRIPT-012, not by the script's settle sequence (SCRIPT-010); an expiry settles under TOOL-018.
fn frame_default(frame: &Value, after: SliceStart) -> Option<&'static str> {
    let status = frame.get("status").and_then(Value::as_str);
    let after_response = after == SliceStart::Response;
    Some(match frame.get("type").and_then(Value::as_str)? {
        "chat.user_message_accepted" => "TURN-001",
        "chat.run_started" if after == SliceStart::Retry => "RETRY-001",
        "chat.retry_accepted" => "RETRY-001",
        "chat.assistant_message_delta" => "SCRIPT-019",
        "chat.run_started" if after_response => "RUN-007",
        "chat.run_started" => "TURN-005",
        "chat.assistant_message" => "SCRIPT-006",
        "chat.tool_call" => "SCRIPT-008",
        "chat.tool_call_complete" if status == Some("expired") => "TOOL-018",
        "chat.tool_call_complete" if after_response => "SCRIPT-012",
        "chat.tool_call_complete" => "SCRIPT-010",
        "chat.run_complete" => "SCRIPT-007",
        "ui_state_snapshot" => "STATE-002",
        "session.welcome" => "SESSION-005",
        "chat.rewind_complete" => "REWIND-003",
        _ => return None,
    })
}

/// What started the slice the frames of an expectation belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SliceStart {
    /// A user message (or nothing yet).
    UserMessage,
    /// Something other than a user message or a retry (a response, a wait for an expiry, a
    /// restart): a reopened slice.
    Response,
    /// A retry (RETRY-001).
    Retry,
}

/// What the last action before `step` was: the frames that follow belong to its slice.
fn last_action(scenario: &Scenario, step: &Step) -> SliceStart {
    let Some(at) = scenario.steps.iter().position(|s| std::ptr::eq(s, step)) else {
        return SliceStart::UserMessage;
    };
    let last = scenario.steps[..at].iter().rev().find(|s| {
        matches!(
            s,
            Step::UserMessage { .. }
                | Step::Respond { .. }
                | Step::WaitIdle { .. }
                | Step::Restart { .. }
                | Step::KillReplica { .. }
                | Step::Retry { .. }
        )
    });
    match last {
        None | Some(Step::UserMessage { .. }) => SliceStart::UserMessage,
        Some(Step::Retry { .. }) => SliceStart::Retry,
        Some(_) => SliceStart::Response,
    }
}

/// The step right before `step` in `scenario`, found by identity.
fn previous_step<'a>(scenario: &'a Scenario, step: &Step) -> Option<&'a Step> {
    let at = scenario.steps.iter().position(|s| std::ptr::eq(s, step))?;
    at.checked_sub(1).map(|i| &scenario.steps[i])
}

/// Whether `text` mentions `key` as a whole word (not inside a longer name such as
/// `chat.tool_call_complete` for `chat.tool_call`).
fn mentions(text: &str, key: &str) -> bool {
    if key.is_empty() {
        return false;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let mut from = 0;
    while let Some(at) = text[from..].find(key) {
        let start = from + at;
        let end = start + key.len();
        let before_ok = !text[..start].chars().next_back().is_some_and(word);
        let after = &text[end..];
        // A full stop that ends the sentence is not part of the word.
        let after_ok = match after.chars().next() {
            Some('.') => after[1..].chars().next().is_none_or(|c| !word(c)),
            Some(c) => !word(c),
            None => true,
        };
        if before_ok && after_ok {
            return true;
        }
        from = start + key.len().max(1);
    }
    false
}

/// Scenario-level ids that no step of the scenario asserts and no always-on check names: claims
/// without a check, by scenario.
pub fn unasserted_claims(scenarios: &[Scenario]) -> std::collections::BTreeMap<String, Vec<ReqId>> {
    let always: BTreeSet<ReqId> =
        crate::monitor::ALWAYS_ON.iter().flat_map(|c| c.requirements.iter().copied()).collect();
    let mut out = std::collections::BTreeMap::new();
    for s in scenarios {
        let asserted = asserted(s);
        let mut missing: Vec<ReqId> =
            s.requirements.iter().copied().filter(|r| !asserted.contains(r) && !always.contains(r)).collect();
        missing.sort();
        if !missing.is_empty() {
            out.insert(s.id.clone(), missing);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::embedded_scenarios;

    #[test]
    fn mentions_match_whole_names_only() {
        assert!(mentions("send a `chat.tool_call` now", "chat.tool_call"));
        assert!(!mentions("send a `chat.tool_call_complete` now", "chat.tool_call"));
        assert!(mentions("ends with chat.run_complete.", "chat.run_complete"));
        assert!(mentions("status: \"awaiting_input\" only", "\"awaiting_input\""));
        assert!(!mentions("invalid_frames", "invalid_frame"));
    }

    #[test]
    fn every_declared_step_and_scenario_id_is_defined_by_the_spec() {
        for s in embedded_scenarios().expect("embedded scenarios parse") {
            for id in &s.requirements {
                assert!(id.is_defined(), "scenario {} names {id}, which the spec does not define", s.id);
            }
            for (i, step) in s.steps.iter().enumerate() {
                for id in step.declared_requirements() {
                    assert!(id.is_defined(), "{} step {} names {id}, which the spec does not define", s.id, i + 1);
                }
                for id in kind_default(&s, step) {
                    assert!(
                        id.is_defined(),
                        "the default of {} names {id}, which the spec does not define",
                        step.kind()
                    );
                }
            }
        }
    }

    /// The scenario fallback is for scenarios a team writes: a bundled step that asserts something
    /// names what it asserts, so its failure is charged to that and nothing else.
    #[test]
    fn no_bundled_step_falls_back_to_its_scenario_ids() {
        let mut vague = Vec::new();
        for s in embedded_scenarios().expect("embedded scenarios parse") {
            for (i, step) in s.steps.iter().enumerate() {
                if step_requirements(&s, step).1 == Source::Scenario {
                    vague.push(format!("{} step {} ({})", s.id, i + 1, step.kind()));
                }
            }
        }
        assert!(vague.is_empty(), "add \"requirements\" to these steps: {vague:#?}");
    }

    #[test]
    fn a_slice_a_response_reopens_is_charged_to_run_007_not_turn_005() {
        let text = r#"{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],
            "steps":[{"do":"connect"},{"do":"user_message","text":"go"},
            {"do":"expect","frame":{"type":"chat.run_started"}},
            {"do":"respond","tool_call":"t","outcome":{"action":"submit","value":1}},
            {"do":"expect","frame":{"type":"chat.run_started"}},
            {"do":"expect","frame":{"type":"chat.tool_call_complete","status":"completed"}},
            {"do":"wait_idle"},
            {"do":"expect","frame":{"type":"chat.tool_call_complete","status":"expired"}}]}"#;
        let s = crate::scenario::ScenarioLoader::new().parse("x.json", text).expect("well formed");
        let ids = |i: usize| step_requirements(&s, &s.steps[i]).0;
        assert_eq!(ids(2), [ReqId::new("TURN-005")]);
        assert_eq!(ids(4), [ReqId::new("RUN-007")]);
        assert_eq!(ids(5), [ReqId::new("SCRIPT-012")]);
        assert_eq!(ids(7), [ReqId::new("TOOL-018")]);
    }

    #[test]
    fn a_silence_after_an_error_asserts_error_001_and_after_a_resume_resume_003() {
        let text = r#"{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],
            "steps":[{"do":"connect"},{"do":"send_text","text":"{"},{"do":"expect_error","code":"malformed_frame"},
            {"do":"expect_silence","ms":10},{"do":"disconnect"},{"do":"resume"},{"do":"expect_silence","ms":10},
            {"do":"snapshot","name":"n"}]}"#;
        let s = crate::scenario::ScenarioLoader::new().parse("x.json", text).expect("well formed");
        let ids = |i: usize| step_requirements(&s, &s.steps[i]);
        assert_eq!(ids(3), (vec![ReqId::new("ERROR-001")], Source::Kind));
        assert_eq!(ids(6), (vec![ReqId::new("RESUME-003")], Source::Kind));
        assert_eq!(ids(7), (vec![ReqId::new("SEQ-001")], Source::Scenario), "an undeclared snapshot falls back");
    }

    #[test]
    fn an_unknown_step_id_is_refused_by_the_registry_check() {
        let text = r#"{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],
            "steps":[{"do":"connect"},{"do":"expect","frame":{"type":"error"},"requirements":["SEQ-999"]}]}"#;
        let s = crate::scenario::ScenarioLoader::new().parse("x.json", text).expect("well formed");
        let (ids, source) = step_requirements(&s, &s.steps[1]);
        assert_eq!(source, Source::Declared);
        assert!(!ids[0].is_defined(), "SEQ-999 is not in the spec");
    }

    /// A scenario-level id that none of the scenario's steps asserts and no always-on check names
    /// is a claim without a check: name it on the step that proves it, or drop it.
    #[test]
    fn scenario_claims_are_asserted_by_one_of_their_checks() {
        let claims = unasserted_claims(&embedded_scenarios().expect("embedded scenarios parse"));
        let lines: Vec<String> =
            claims.iter().flat_map(|(s, ids)| ids.iter().map(move |id| format!("{s}: {id}"))).collect();
        assert!(lines.is_empty(), "scenario-level ids no check of the scenario asserts:\n{}", lines.join("\n"));
    }

    #[test]
    fn steps_are_charged_to_what_they_check_not_to_the_whole_scenario() {
        let text = r#"{"id":"x","title":"t","level":"must","requirements":["RUN-003","TOOL-016","SEQ-001"],
            "steps":[{"do":"connect"},
                     {"do":"expect","frame":{"type":"chat.run_complete","status":"awaiting_input"}},
                     {"do":"expect","frame":{"type":"chat.tool_call_complete","status":"completed"}},
                     {"do":"expect_silence","ms":10},
                     {"do":"user_message","text":"hi"}]}"#;
        let s = crate::scenario::ScenarioLoader::new().parse("x.json", text).expect("well formed");
        let at = |i: usize| step_requirements(&s, &s.steps[i]);
        assert_eq!(at(1), (vec![ReqId::new("RUN-003")], Source::Mentioned));
        assert_eq!(at(2).0, vec![ReqId::new("TOOL-016")]);
        assert_eq!(at(0), (vec![ReqId::new("STATE-002")], Source::Kind));
        assert_eq!(at(3).1, Source::Scenario);
        assert_eq!(at(4), (vec![], Source::Action));
    }
}
