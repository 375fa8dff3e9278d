//! One fault, one charge: once a connection's state has left the oracle's fold, the checks that
//! judge frames against that fold would charge the same fault again on every later frame (a
//! correct stream end as `STATE-047`, a correct `run_complete` as `STATE-046`, the next chunk as
//! `SCRIPT-019`, the item's id as `ID-002`). So after a frame whose finding says the client's state
//! is no longer the server's, the findings of those checks are consequences, not new failures,
//! until the next state frame tells the client the server's state again (a welcome, a snapshot, an
//! update, a patch that applies): the oracle takes that state over and judging resumes from it.

use chatwire_schema::{ReqId, ServerFrame};

use super::check::{CheckDef, Raw};
use super::{oracle, patch, session, stream, Out};

/// The checks that judge a frame against the state the monitor folded: after a divergence their
/// findings follow from it. `None`: every requirement of the check.
static STATE_DEPENDENT: &[(&CheckDef, Option<ReqId>)] = &[
    (&oracle::STATE_MATCHES_REDUCER, None),
    (&oracle::EVENTS_ACCEPTED, None),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-038"))),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-039"))),
    (&patch::PATCH_MATCHES_REDUCER, Some(ReqId::new("STATE-040"))),
    (&stream::SAY_CHUNKS_AS_SCRIPTED, None),
    (&stream::STREAM_CONTINUES_AFTER_RESUME, None),
    (&session::IDS_CONSISTENT, Some(ReqId::new("ID-002"))),
    (&session::SETTLED_STAYS_SETTLED, None),
];

fn state_dependent(raw: &Raw) -> bool {
    STATE_DEPENDENT.iter().any(|(check, req)| check.id == raw.check.id && req.is_none_or(|r| r == raw.requirement))
}

/// A patch that did not apply leaves the state the client holds unknown (every other finding
/// of the patch oracle says the patched state differs, and the oracle takes it over).
fn patch_not_applied(raw: &Raw) -> bool {
    raw.check.id == patch::PATCH_MATCHES_REDUCER.id
        && raw.requirement == ReqId::new("STATE-038")
        && !raw.message.starts_with("the patched state differs")
}

/// After the monitor judged `frame` (its findings from `first` on in `out`): drops the findings
/// that follow from a divergence seen before it (`diverged`), and returns whether the connection's
/// state is still (or now) apart from the oracle's fold.
pub(super) fn after_frame(diverged: bool, frame: &ServerFrame, out: &mut Out, first: usize) -> bool {
    let first = first.min(out.raws.len());
    let not_applied = out.raws[first..].iter().any(patch_not_applied);
    if diverged {
        let mut index = 0;
        out.raws.retain(|raw| {
            index += 1;
            index <= first || !state_dependent(raw)
        });
    }
    match frame {
        // The server's state again: the oracle took it over.
        ServerFrame::Welcome(_) | ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStateUpdated(_) => false,
        ServerFrame::UiStatePatch(_) => not_applied,
        _ => diverged || out.raws[first..].iter().any(state_dependent),
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
        assert!(after_frame(false, &delta(), &mut out, 0), "the first finding diverges");
        assert_eq!(out.raws.len(), 1, "and is charged");
        let mut out = Out::default();
        out.fail(&stream::SAY_CHUNKS_AS_SCRIPTED, ReqId::new("SCRIPT-019"), "ends early");
        out.fail(&session::SEQ_INCREASING, ReqId::new("SEQ-001"), "seq went back");
        assert!(after_frame(true, &delta(), &mut out, 0));
        let kept: Vec<ReqId> = out.raws.iter().map(|r| r.requirement).collect();
        assert_eq!(kept, vec![ReqId::new("SEQ-001")], "only what does not follow from the state is charged");
    }
}
