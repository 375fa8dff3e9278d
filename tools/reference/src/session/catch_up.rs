//! Catch-up resume (`RESUME-017`..`RESUME-019`): the patch from the state a resuming client holds
//! to the session's state, put together from the recent patches (`recent.rs`) or rebuilt from
//! the log.

use std::sync::Arc;

use chatwire_schema::state_patch::{catch_up as catch_up_patch, PatchOp};
use chatwire_schema::view::ConnView;
use chatwire_schema::window::WindowView;
use chatwire_schema::{Id, ServerFrame, UiState, PROTOCOL_VERSION};

use super::fold::fold_log;
use super::state::{Inner, Session};
use super::view::usage_seen;
use crate::protocol::EmitError;
use crate::store::CatchUpLog;

/// A catch-up patch and the seq of the state it applies to.
pub(super) struct CatchUp {
    pub base_seq: u64,
    pub patch: Vec<PatchOp>,
    /// On a windowed connection, its window after the patch (`WINDOW-012`).
    pub window: Option<WindowView>,
}

/// The view a resuming client says it holds (`WINDOW-012`): the window size it asked for and the
/// cursor of the view it holds (`None`: the whole state).
pub(super) struct HeldWindow<'a> {
    pub size: u32,
    pub cursor: Option<&'a Id>,
}

/// The catch-up patch for a resume from `last_seq`, or `None` when the resume gets a snapshot:
/// `last_seq` carried no state, or more than `RESUME_RETENTION` events came after it
/// (`RESUME-018`). The state of `last_seq` is rebuilt from the log (the events committed up to
/// it: a delta's seq names the state right after that delta, `STREAM-002`), and the patch is
/// `chatwire_schema::state_patch::catch_up` over the events after it.
///
/// `streams`: whether the resuming connection sees open streams (`assistant_stream` in force).
/// One that does not gets the catch-up of its view: the deltas left out of both the base and the
/// events, so the end of a stream appends the whole item (`STATE-012`, `STREAM-005`). A `last_seq`
/// sent while a stream was open is a base only for a connection that sees streams, and only when
/// it is a delta's (`STREAM-006`): any other frame of that time may have gone to a connection that
/// did not see the stream, so the state its client holds is not known; such a resume gets the
/// snapshot.
///
/// `view`: what else the connection sees (`REASON-001`, `USAGE-004`): its catch-up is that of its
/// view, the events it never receives left out and `usage` taken off `chat.run_complete`.
pub(super) async fn catch_up(
    session: &Arc<Session>,
    g: &Inner,
    last_seq: u64,
    streams: bool,
    view: ConnView,
    held: Option<HeldWindow<'_>>,
) -> Result<Option<CatchUp>, EmitError> {
    let faults = &session.shared.faults;
    // The features only: the minor's shapes are the patch frame's (`view.rs`).
    let view = ConnView { version: PROTOCOL_VERSION, ..view };
    // The events committed in this process, put together: no fold of the log (issue #22). A
    // windowed client's view is placed by positions in the base, which only the fold gives; one
    // that does not see reasoning counts its items without them, which only the fold knows.
    // The patches kept there are those of a connection that sees transcripts and streams: one
    // without `subagents` gets a host's texts as its output, one without streams no open nested
    // stream (SUBAGENT-001, SUBAGENT-002), which only the fold gives.
    let from_memory = held.is_none()
        && (view.reasoning || !g.recent.reasoning_seen)
        && ((view.subagents && streams) || !g.recent.subagents_seen);
    if from_memory && faults.resume.catch_up_from_memory() {
        if let Some(recent) = g.recent.since(last_seq, streams) {
            let Some(streamed) = session.shared.store.state_frame(session.id.as_str(), last_seq).await? else {
                return Ok(None);
            };
            // STREAM-006, as below.
            if recent.stream_open_at_base && !(streams && streamed) {
                return Ok(None);
            }
            let patch = usage_seen(&recent.patch, view).into_owned();
            return Ok(Some(CatchUp { base_seq: last_seq, patch: faults.resume.catch_up_patch(patch), window: None }));
        }
    }
    let retention = u64::from(super::recent::RESUME_RETENTION);
    let log = session.shared.store.catch_up_log(session.id.as_str(), last_seq, retention).await?;
    let CatchUpLog::Events { before, after, streamed } = log else { return Ok(None) };
    let split = faults.resume.catch_up_split(before.len()).min(before.len());
    let (base, _) = fold_log(&session.id, &before[..split], None);
    // STREAM-006: a frame sent while a stream was open is a base only where both its connection
    // and the resumed one see streams. The store says so of every state frame: a delta's seq, and
    // the snapshot or catch-up a streaming connection got when it resumed mid-stream, which a
    // second resume from it is owed a catch-up for (RESUME-017).
    if base.state().has_open_stream_anywhere() && !(streams && streamed) {
        return Ok(None);
    }
    let mut frames = Vec::with_capacity(before.len() - split + after.len());
    // Where `subagents` or `reasoning` is not in force, a frame is seen as the state before it
    // says (a host's text becomes its output, SUBAGENT-002; a retry names only the items the view
    // holds): the whole state is folded along.
    let mut whole = (!view.subagents || !view.reasoning).then(|| base.state().clone());
    for text in before[split..].iter().chain(&after) {
        let frame = serde_json::from_str::<ServerFrame>(text)?;
        let seen = match whole.as_mut() {
            Some(whole) => {
                let seen = view.frame_at(&frame, whole).map(|f| f.into_owned());
                if let Some(event) = frame.ui_event() {
                    if whole.apply(event).is_err() {
                        return Ok(None);
                    }
                }
                seen
            }
            None => view.frame(&frame).map(|f| f.into_owned()),
        };
        frames.extend(seen);
    }
    let events = frames.iter().filter_map(ServerFrame::ui_event).filter(|e| streams || !e.is_stream_delta());
    let base = match streams {
        true => base.into_state(),
        false => base.without_open_stream(),
    };
    // Borrowed where the view hides nothing: no copy of the base then.
    let base = match view.is_whole() {
        true => base,
        false => view.state(&base).into_owned(),
    };
    // WINDOW-012: the view the client holds at last_seq; a cursor a cut removed gets a snapshot.
    let mut window = match &held {
        Some(HeldWindow { size, cursor }) => match WindowView::at_cursor(&base, *size, *cursor) {
            Some(window) => Some(window),
            None => return Ok(None),
        },
        None => None,
    };
    match catch_up_patch(&base, events) {
        // The log and the session agree (they always do but in a faulty build): the patch is good.
        Ok((state, patch)) if reached(&state, g, streams, view) => {
            let patch = match window.as_mut() {
                Some(window) if faults.window.projects_patches() => match window.project(&patch) {
                    Ok(projected) => projected,
                    Err(_) => return Ok(None),
                },
                _ => patch,
            };
            Ok(Some(CatchUp { base_seq: last_seq, patch: faults.resume.catch_up_patch(patch), window }))
        }
        Ok(_) => {
            eprintln!("chatwire-reference: session {}: the log does not fold to the state; snapshot", session.id);
            Ok(None)
        }
        Err((index, e)) => {
            eprintln!("chatwire-reference: session {}: catch-up event {index} refused ({e}); snapshot", session.id);
            Ok(None)
        }
    }
}

/// Whether `state` is the session's state as the resuming connection sees it.
fn reached(state: &UiState, g: &Inner, streams: bool, view: ConnView) -> bool {
    match (streams, view.is_whole()) {
        (true, true) => state == g.state.state(),
        (false, true) => state.run == g.state.run && state.items == g.state.items_without_open_stream(),
        (true, false) => *state == *view.state(g.state.state()),
        (false, false) => *state == *view.state(&g.state.without_open_stream()),
    }
}
