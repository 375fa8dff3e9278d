//! A `ui_state_snapshot`: after a welcome, the state the connection starts from; on a windowed
//! connection, a fresh window after a cut. Judged here as what the connection holds: a resume's
//! snapshot in place of an owed catch-up (`RESUME-017`), the window it must be (`WINDOW-*`), and
//! a resume's snapshot the monitor knows is not the session's state (`crate::diverge`).

use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
use chatwire_schema::{DisplayItem, ReqId, ToolCallStatus, UiState};

use super::conn::ConnModel;
use super::held::{known_at_welcome, Held};
use super::holding::{latest_state, took_state, TookState};
use super::session::SessionModel;
use super::shared::SharedState;
use super::{owed, window};
use crate::finding::Out;

/// The requirement [`resumed_snapshot`] marks a divergence under.
pub(crate) const RESUMED_APART: ReqId = ReqId::new("RESUME-008");

/// Takes the snapshot `s` on `c` (`track`: its session's model).
pub(crate) fn snapshot(
    c: &mut ConnModel,
    mut track: Option<&mut SessionModel>,
    s: &UiStateSnapshot,
    out: &mut Out,
) -> TookState {
    // A windowed resume may get a snapshot in place of a catch-up (WINDOW-012).
    if let (true, false, Some(window), Some(t)) =
        (c.awaiting_snapshot, c.window.windowed(), c.catch_up.as_ref(), track.as_deref())
    {
        let script = t.script.as_ref().map(|s| s.says.streams());
        owed::snapshot_answered(window, &t.kinds, &t.held, c.view().1, script, out);
    }
    // A snapshot after the first is a windowed connection's fresh window (WINDOW-006).
    let fresh = !c.awaiting_snapshot;
    c.shadow = None;
    let new_session = c.new_session;
    c.new_session = false;
    c.awaiting_snapshot = false;
    c.catch_up = None;
    c.batch = None;
    let view = c.view();
    // A resume's snapshot that is not the session's state the monitor knows (`diverge`).
    let mut apart_from = None;
    if let (Some(welcome_seq), false, Some(t)) =
        (c.resume_welcome_seq.take(), fresh || c.window.windowed(), track.as_deref())
    {
        let known = known_at_welcome(&t.held, &t.kinds, welcome_seq, view);
        out.apart = known.and_then(|k| resumed_snapshot(&k.state.to_state(), &s.state));
        apart_from = known.filter(|_| out.apart.is_some()).map(|k| k.state.clone());
    }
    if !c.window.windowed() {
        window::snapshot(&mut c.window, None, s, fresh, out);
        c.oracle.snapshot(&s.state);
        let took = took_state(c, track.as_deref_mut(), s.seq, Some(SharedState::from_state(&s.state)), true);
        if let (Some(state), Some(t)) = (apart_from, track) {
            t.held.correct(Held { seq: s.seq, state, view });
        }
        return took;
    }
    // The whole state it is a window of: after a cut the fold's; after a welcome the session's
    // latest as any connection here held it, brought up to date by the view.
    let before = s.window.as_ref().and_then(|w| w.before.as_ref());
    let full = match (fresh, new_session) {
        (true, _) => c.oracle.expected().cloned(),
        (false, true) => Some(UiState::default()),
        (false, false) => match track.as_deref().and_then(|t| latest_state(t, view)) {
            Some(latest) => window::splice(&latest, before, &s.state),
            None => window::splice(&UiState::default(), before, &s.state),
        },
    };
    window::snapshot(&mut c.window, full.as_ref(), s, fresh, out);
    match &full {
        Some(full) => c.oracle.snapshot(full),
        None => c.oracle.clear(),
    }
    took_state(c, track, s.seq, full.as_ref().map(SharedState::from_state), true)
}

/// The snapshot after a resumed welcome, `got`, where the monitor knows the session's state at
/// that welcome (`known`: nothing changed since a state a connection here held): RESUME-008 when
/// it leaves out a call that is `pending` there. No finding: the scenario's check of the resumed
/// state proves it; this only marks what follows as its consequence (the completion of the left-out
/// call, every patch the server builds on the state it holds). Other differences are left to the
/// checks that judge them as before: which requirement they break (a rewind or a settlement not
/// kept, RESUME-009, REWIND-004, RESUME-011) is not the snapshot's to tell.
pub(crate) fn resumed_snapshot(known: &UiState, got: &UiState) -> Option<ReqId> {
    let pending_left_out = known.items.iter().any(|i| {
        matches!(i, DisplayItem::ToolCall(c) if c.status == ToolCallStatus::Pending && got.tool_call(&c.id).is_none())
    });
    pending_left_out.then_some(RESUMED_APART)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(calls: &[(&str, &str)]) -> UiState {
        let items: Vec<serde_json::Value> = calls
            .iter()
            .map(|(id, status)| {
                serde_json::json!({"kind": "tool_call", "id": id, "invocation_id": "inv-1", "tool_name": "t",
                    "interaction_type": "ui_tool", "component_type": "C", "display": "inline", "awaiting_response": true,
                    "payload": {}, "status": status, "ts": "2026-01-15T10:00:00Z"})
            })
            .collect();
        serde_json::from_value(
            serde_json::json!({"items": items, "run": {"status": "awaiting_input", "invocation_id": "inv-1"}}),
        )
        .expect("a state")
    }

    #[test]
    fn a_resume_snapshot_that_leaves_out_a_pending_call_is_apart_under_resume_008() {
        let known = state(&[("tc-1", "completed"), ("tc-2", "pending")]);
        assert_eq!(resumed_snapshot(&known, &known), None);
        assert_eq!(resumed_snapshot(&known, &state(&[("tc-1", "completed")])), Some(ReqId::new("RESUME-008")));
        // A settled call changed, a run status: the checks of those judge them.
        assert_eq!(resumed_snapshot(&known, &state(&[("tc-1", "pending"), ("tc-2", "pending")])), None);
        let mut other = known.clone();
        other.run.status = chatwire_schema::RunStatus::Completed;
        assert_eq!(resumed_snapshot(&known, &other), None);
    }
}
