//! The reconnect sweep (`run --sweep`): for a scenario, an uninterrupted run, then one variant per
//! server frame k of the main connection (k = 1..N, N capped), cut right after frame k, resumed at
//! once, and finished by replaying the client actions not yet sent.
//!
//! Each variant keeps every always-on check (schema, seq growing across the reconnect, the
//! differential oracle) and adds two: the final normalized UiState equals the uninterrupted run's,
//! and no tool call settles twice across the variant's connections.
//!
//! Which scenarios are sweepable (the rule lives here, [`not_sweepable_reason`]): the sweep replays
//! only client actions, so a scenario qualifies when the state it reaches depends on nothing but
//! those actions on one connection. Not sweepable, reported n/a with the reason:
//! - a `restart` (the variant would cut a connection to a dying backend);
//! - deliberate errors: `send`, `send_text`, `send_binary` (raw frames, usually invalid),
//!   `expect_error`, `expect_close`, or an `expect` of an `error` frame;
//! - more than one connection (a `conn` other than `main`) or more than one `connect`;
//! - version negotiation or a non-standard handshake (`connect` with `versions`, `hello: false`,
//!   `with_script: false` or `subprotocol: false`);
//! - a scenario outside conformance mode (it has no script to replay).
//!
//! A scenario that cancels a run (since 1.2) is cut only from its last `chat.cancel_accepted` on:
//! a cut before it delays the cancel to another point of the run, which legitimately ends it with
//! more text or steps, so there the final state has no single right value (`CANCEL-007`).

use crate::scenario::{ResumeCursor, Scenario, Step, DEFAULT_CONN};

/// Default cap on the variants of one scenario (`--sweep-max`).
pub const DEFAULT_SWEEP_MAX: u16 = 60;

/// Why the sweep does not apply to `scenario`, or `None` when it does.
pub fn not_sweepable_reason(scenario: &Scenario) -> Option<String> {
    if !scenario.conformance_mode {
        return Some("not sweepable: the scenario runs outside conformance mode".into());
    }
    let mut connects = 0;
    for (index, step) in scenario.steps.iter().enumerate() {
        let at = format!("step {} ({})", index + 1, step.kind());
        if step.conn().is_some_and(|c| c != DEFAULT_CONN) {
            return Some(format!("not sweepable: {at} uses a second connection; the sweep cuts only one"));
        }
        let reason = match step {
            Step::Restart { .. } => Some("restarts the backend"),
            Step::KillReplica { .. }
            | Step::StartReplica { .. }
            | Step::PauseReplica { .. }
            | Step::ContinueReplica { .. } => Some("kills, starts, pauses or continues a replica"),
            Step::Send { .. } | Step::SendText { .. } | Step::SendBinary { .. } => {
                Some("sends raw frames (deliberate errors are not replayable)")
            }
            Step::ExpectError { .. } | Step::ExpectClose { .. } => Some("expects a deliberate error or close"),
            Step::Expect { frame, .. } if frame.get("type").and_then(|t| t.as_str()) == Some("error") => {
                Some("expects a deliberate error")
            }
            Step::Connect { versions: Some(_), .. } => Some("negotiates versions"),
            // The edge is counted over every event since it, which a cut connection missed: its
            // resume would name another base, and the monitor holds no state that old to compare.
            Step::Resume { cursor: Some(ResumeCursor::Retention | ResumeCursor::PastRetention), .. } => {
                Some("resumes from the resume_retention edge, which needs every event since it on this connection")
            }
            Step::Connect { hello: false, .. }
            | Step::Connect { with_script: false, .. }
            | Step::Connect { subprotocol: false, .. } => Some("uses a non-standard handshake"),
            Step::Connect { .. } => {
                connects += 1;
                (connects > 1).then_some("opens more than one session")
            }
            _ => None,
        };
        if let Some(reason) = reason {
            return Some(format!("not sweepable: {at} {reason}"));
        }
    }
    if !matches!(scenario.steps.first(), Some(Step::Connect { .. })) {
        return Some("not sweepable: the scenario does not start with connect".into());
    }
    None
}

/// The report id of the variant of `scenario` cut after frame `k`.
pub fn variant_id(scenario: &str, k: usize) -> String {
    format!("{scenario}@cut-{k:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::embedded_scenarios;

    #[test]
    fn the_rule_admits_single_connection_action_scenarios_and_names_why_others_are_not() {
        let all = embedded_scenarios().unwrap();
        let by_id = |id: &str| all.iter().find(|s| s.id == id).unwrap();
        for id in ["hitl-submit", "resume-pending-then-answer", "multi-tool-mixed-hitl", "multi-tool-out-of-order"] {
            assert_eq!(not_sweepable_reason(by_id(id)), None, "{id}");
        }
        let restart = not_sweepable_reason(by_id("restart-resume")).unwrap();
        assert!(restart.contains("restarts the backend"), "{restart}");
        let takeover = not_sweepable_reason(by_id("session-takeover")).unwrap();
        assert!(takeover.contains("second connection") || takeover.contains("deliberate"), "{takeover}");
        let versions = not_sweepable_reason(by_id("version-newest-offered")).unwrap();
        assert!(versions.contains("non-standard handshake"), "{versions}");
        let errors = not_sweepable_reason(by_id("hitl-duplicate-response")).unwrap();
        assert!(errors.contains("deliberate error"), "{errors}");
        let edge = not_sweepable_reason(by_id("resume-retention-edge")).unwrap();
        assert!(edge.contains("resume_retention edge"), "{edge}");
    }

    #[test]
    fn variant_ids_sort_after_their_scenario_in_cut_order() {
        let mut ids = vec![variant_id("a", 10), variant_id("a", 2), "a".to_owned()];
        ids.sort();
        assert_eq!(ids, vec!["a", "a@cut-02", "a@cut-10"]);
    }
}
