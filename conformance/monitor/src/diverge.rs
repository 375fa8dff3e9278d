//! One fault, one charge: once a connection's state has left the oracle's fold, the checks that
//! judge frames against that fold would charge the same fault again on every later frame (a
//! correct stream end as `STATE-047`, a correct `run_complete` as `STATE-046`, the next chunk as
//! `SCRIPT-019`, the item's id as `ID-002`). So after a frame whose finding says the client's state
//! is no longer the server's, the findings of those checks are consequences, not new failures,
//! until the next state frame tells the client the server's state again (a welcome, a snapshot, an
//! update, a patch that gives the fold): the oracle takes that state over and judging resumes from
//! it. A patch that applies but gives another state than the fold does not: the client then holds
//! the patched state, which is not the server's, so what follows still depends on the divergence.
//! A golden snapshot taken while the connection is apart is charged under the requirement that
//! began the divergence (`Monitor::divergence`).
//!
//! Two ways apart that no later state frame ends by matching a fold built on it: an update that is
//! not the fold of the events sent (`STATE-004`) stays apart until an update equals the fold of
//! every event sent (a shadow of the fold kept since); and a resume's snapshot that leaves out a
//! call the monitor knows is pending (`RESUME-008`) stays apart until the next snapshot, since the
//! server builds every patch on the state it holds.

use chatwire_schema::{ReqId, ServerFrame};

use crate::checks::{ids, reopen, settled, stream};
use crate::finding::{CheckDef, Out, Raw};
use crate::model::{oracle, patch, RESUMED_APART};

/// The checks that judge a frame against the state the monitor folded: after a divergence their
/// findings follow from it. `None`: every requirement of the check. In the order a frame is
/// judged by them (the script against the state before it, the ids it introduces, the call it
/// settles, then its fold): when several find a fault on one frame, the first began it.
static STATE_DEPENDENT: &[(&CheckDef, Option<ReqId>)] = &[
    (&stream::SAY_CHUNKS_AS_SCRIPTED, None),
    (&stream::STREAM_CONTINUES_AFTER_RESUME, None),
    (&ids::IDS_CONSISTENT, Some(ReqId::new("ID-002"))),
    (&reopen::RUN_STARTED_BEFORE_SETTLEMENT, None),
    (&settled::SETTLED_STAYS_SETTLED, None),
    (&oracle::EVENTS_ACCEPTED, None),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-039"))),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-040"))),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-038"))),
    (&oracle::STATE_MATCHES_REDUCER, None),
];

/// Where `raw` stands in [`STATE_DEPENDENT`], when it follows from the state.
fn state_dependent(raw: &Raw) -> Option<usize> {
    STATE_DEPENDENT.iter().position(|(check, req)| check.id == raw.check.id && req.is_none_or(|r| r == raw.requirement))
}

/// A patch that did not apply, or applied and gave another state than the fold: the client holds
/// a state the server does not (every finding of the patch oracle under STATE-038 says one or the
/// other).
fn patch_apart(raw: &Raw) -> bool {
    raw.check.id == patch::PATCH_MATCHES_REDUCER.id && raw.requirement == ReqId::new("STATE-038")
}

/// After the monitor judged `frame` (its findings from `first` on in `out`): drops the findings
/// that follow from a divergence seen before it (`diverged`: the requirement of the finding that
/// began it), and returns the divergence the connection's state is still (or now) in, if any.
pub(crate) fn after_frame(diverged: Option<ReqId>, frame: &ServerFrame, out: &mut Out, first: usize) -> Option<ReqId> {
    let first = first.min(out.raws.len());
    let apart = out.raws[first..].iter().find(|r| patch_apart(r)).map(|r| r.requirement);
    let began = out.raws[first..]
        .iter()
        .filter_map(|r| state_dependent(r).map(|at| (at, r.requirement)))
        .min_by_key(|(at, _)| *at)
        .map(|(_, requirement)| requirement);
    if diverged.is_some() {
        let mut index = 0;
        out.raws.retain(|raw| {
            index += 1;
            index <= first || state_dependent(raw).is_none()
        });
    }
    match frame {
        // The server's state again: the oracle took it over.
        ServerFrame::Welcome(_) => None,
        // Unless the monitor knows it is not the session's (a resume's snapshot, `out.apart`).
        ServerFrame::UiStateSnapshot(_) => out.apart.map(|r| diverged.unwrap_or(r)),
        // An update that is not the fold of the events sent leaves the client with a state that
        // may not be the server's; it is apart until an update gives that fold (`out.apart`).
        ServerFrame::UiStateUpdated(_) => out.apart.map(|r| diverged.unwrap_or(r)),
        // A resume's snapshot the monitor knows is not the session's stays the base of every
        // patch after it, so no patch gives the server's state again; the next snapshot does.
        ServerFrame::UiStatePatch(_) => {
            apart.map(|r| diverged.unwrap_or(r)).or(diverged.filter(|r| *r == RESUMED_APART))
        }
        _ => diverged.or(began),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(v: serde_json::Value) -> ServerFrame {
        serde_json::from_value(v).expect("a frame")
    }

    fn delta() -> ServerFrame {
        frame(serde_json::json!({"type": "chat.assistant_message_delta", "seq": 5, "ts": "2026-01-01T00:00:00Z",
            "invocation_id": "inv-1", "item_id": "it-1", "delta": "x"}))
    }

    #[test]
    fn findings_after_a_divergence_are_consequences_until_the_next_state() {
        let mut out = Out::default();
        out.fail(&stream::STREAM_CONTINUES_AFTER_RESUME, ReqId::new("STREAM-003"), "a chunk was lost");
        assert_eq!(
            after_frame(None, &delta(), &mut out, 0),
            Some(ReqId::new("STREAM-003")),
            "the first finding diverges"
        );
        assert_eq!(out.raws.len(), 1, "and is charged");
        let mut out = Out::default();
        out.fail(&stream::SAY_CHUNKS_AS_SCRIPTED, ReqId::new("SCRIPT-019"), "ends early");
        out.fail(&crate::checks::seq::SEQ_INCREASING, ReqId::new("SEQ-001"), "seq went back");
        assert!(after_frame(Some(ReqId::new("STREAM-003")), &delta(), &mut out, 0).is_some());
        let kept: Vec<ReqId> = out.raws.iter().map(|r| r.requirement).collect();
        assert_eq!(kept, vec![ReqId::new("SEQ-001")], "only what does not follow from the state is charged");
    }

    fn patch() -> ServerFrame {
        frame(serde_json::json!({"type": "ui_state_patch", "seq": 6, "base_seq": 4, "v": "ui_state_v1", "patch": []}))
    }

    #[test]
    fn a_patch_that_gives_another_state_than_the_fold_keeps_the_connection_apart_until_one_gives_it() {
        let state_038 = ReqId::new("STATE-038");
        let mut out = Out::default();
        out.fail(&patch::PATCH_MATCHES_REDUCER, state_038, "the patched state differs from the reducer's fold");
        let apart = after_frame(None, &patch(), &mut out, 0);
        assert_eq!(apart, Some(state_038), "the client holds the patched state, not the server's");
        assert_eq!(out.raws.len(), 1, "the patch is charged");
        // The next event names a call only the server's state holds: a consequence.
        let mut out = Out::default();
        out.fail(&oracle::EVENTS_ACCEPTED, ReqId::new("STATE-025"), "unknown tool call");
        out.fail(&crate::checks::seq::SEQ_INCREASING, ReqId::new("SEQ-001"), "seq went back");
        assert_eq!(after_frame(apart, &delta(), &mut out, 0), apart);
        let kept: Vec<ReqId> = out.raws.iter().map(|r| r.requirement).collect();
        assert_eq!(kept, vec![ReqId::new("SEQ-001")], "a fresh, independent violation is still charged");
        // A patch that gives the fold again: judging resumes.
        let mut out = Out::default();
        assert_eq!(after_frame(apart, &patch(), &mut out, 0), None);
    }
}
