//! A catch-up owed (RESUME-017): where `resume_catch_up` is in force and the resume's `last_seq`
//! names a state frame the monitor saw, with too few frames after it for `resume_retention` to be
//! passed, a snapshot in place of the catch-up patch is a finding. The patch oracle judges the
//! patches that do come (`super::patch::catch_up`); this judges the one that did not.
//!
//! Judged only where the monitor can tell: the frame of `last_seq` was received here, the frames
//! between it and the welcome are at most the retention (each seq is at most one event), and no
//! stream can have been open when it was sent unless it and the resumed connection both stream
//! (`STREAM-006`: a streaming state shows the open stream; a view without streams cannot, so it is
//! judged only where the script streams nothing).

use chatwire_schema::ReqId;

use super::held::{CatchUpWindow, HeldStates, SeqKinds};
use super::patch::CATCH_UP_RESUME;
use crate::finding::Out;

const RESUME_017: ReqId = ReqId::new("RESUME-017");

/// A `ui_state_snapshot` answered the resume of `window`; `streams`: whether the resumed connection
/// sees streams, `script_streams`: whether the session's script may open a stream (`None`: no script).
pub(crate) fn snapshot_answered(
    window: &CatchUpWindow,
    kinds: &SeqKinds,
    held: &HeldStates,
    streams: bool,
    script_streams: Option<bool>,
    out: &mut Out,
) {
    let last = window.last_seq;
    let Some(retention) = window.retention else { return };
    if !window.in_force || last == 0 || !kinds.is_known_state(last) || window.welcome_seq <= last {
        return;
    }
    // Every seq between the base and the welcome is at most one event committed after the base.
    if window.welcome_seq - last - 1 > u64::from(retention) {
        return;
    }
    let views = held.views(last);
    if views.is_empty() {
        return;
    }
    let stream_open = views.iter().any(|h| h.state.has_open_stream());
    let all_stream = views.iter().all(|h| h.view.1);
    let owed = match (stream_open, all_stream) {
        // A stream was open: a base only where both connections stream (STREAM-006).
        (true, _) => all_stream && streams,
        // Every view shows streams and none is open: no stream was open.
        (false, true) => true,
        // A view without streams cannot show one open: only a script without streams tells.
        (false, false) => script_streams == Some(false),
    };
    if owed {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_017,
            format!(
                "a ui_state_snapshot answers a resume from last_seq {last}, a state frame with at most {} events after it (resume_retention {retention}){}: a catch-up patch is owed",
                window.welcome_seq - last - 1,
                if stream_open { ", sent mid-stream to a connection that streams as this one does" } else { "" }
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use chatwire_schema::{ProtocolVersion, UiState};

    use super::*;
    use crate::model::held::Held;

    fn held(seq: u64, streams: bool) -> HeldStates {
        let mut h = HeldStates::default();
        let view = (chatwire_schema::view::ConnView::new(ProtocolVersion { major: 1, minor: 1 }, None), streams);
        h.record(Held { seq, state: crate::model::shared::SharedState::from_state(&UiState::default()), view });
        h
    }

    fn kinds(seq: u64) -> SeqKinds {
        let mut k = SeqKinds::default();
        let state = serde_json::to_value(UiState::default()).expect("a state serializes");
        let frame: chatwire_schema::ServerFrame = serde_json::from_value(
            serde_json::json!({"type": "ui_state_snapshot", "seq": seq, "v": "ui_state_v1", "state": state}),
        )
        .expect("a snapshot");
        k.note(seq, &frame);
        k
    }

    fn window(last_seq: u64, welcome_seq: u64) -> CatchUpWindow {
        CatchUpWindow { last_seq, in_force: true, retention: Some(2), welcome_seq }
    }

    fn judged(w: &CatchUpWindow, streams_held: bool, script: Option<bool>) -> Vec<ReqId> {
        let mut out = Out::default();
        snapshot_answered(w, &kinds(2), &held(2, streams_held), true, script, &mut out);
        out.raws.iter().map(|r| r.requirement).collect()
    }

    #[test]
    fn a_snapshot_where_a_catch_up_is_owed_is_a_finding() {
        assert_eq!(judged(&window(2, 5), true, None), vec![RESUME_017]);
        assert_eq!(judged(&window(2, 5), false, Some(false)), vec![RESUME_017]);
    }

    #[test]
    fn nothing_is_judged_where_the_monitor_cannot_tell() {
        // Past the retention, by seqs: a snapshot may be owed.
        assert!(judged(&window(2, 6), true, None).is_empty());
        // A base the monitor never saw, or a view that cannot show an open stream.
        assert!(judged(&window(3, 5), true, None).is_empty());
        assert!(judged(&window(2, 5), false, None).is_empty());
        assert!(judged(&window(2, 5), false, Some(true)).is_empty());
        assert!(judged(&CatchUpWindow { in_force: false, ..window(2, 5) }, true, None).is_empty());
    }
}
