//! The state frames after a snapshot: a catch-up patch right after a resume welcome, a
//! `ui_state_patch` or a `ui_state_updated` after events. Each leaves the connection holding a
//! state, judged against the oracle's fold (the patch oracle, `STATE-004`) or, on a windowed
//! connection, against the fold's view (`WINDOW-*`).

use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::ui_state_updated::UiStateUpdated;
use chatwire_schema::ReqId;

use super::conn::ConnModel;
use super::held::{known_at_welcome, Held, SeqKinds};
use super::holding::{latest_state, took_state, TookState};
use super::oracle::STATE_MATCHES_REDUCER;
use super::session::SessionModel;
use super::shared::SharedState;
use super::{patch, window};
use crate::finding::Out;
use crate::normalize::Normalizer;

const STATE_004: ReqId = ReqId::new("STATE-004");

/// The patch right after a resume welcome (`c.awaiting_snapshot`): a catch-up from the state the
/// resume named, when the welcome answered one (`None`: a patch in place of a new session's
/// snapshot, which leaves the connection with no known state and is not recorded).
/// `held_elsewhere`: the catch-up's base as another connection holds it, where the session's
/// recent states no longer have it.
pub(crate) fn catch_up(
    c: &mut ConnModel,
    mut track: Option<&mut SessionModel>,
    p: &UiStatePatch,
    held_elsewhere: Option<&Held>,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> Option<TookState> {
    let Some(window) = c.catch_up.take() else {
        c.awaiting_snapshot = false;
        c.state_seen = true;
        c.state_seq = Some(p.seq);
        return None;
    };
    c.new_session = false;
    c.awaiting_snapshot = false;
    c.batch = None;
    let view = c.view();
    if c.window.windowed() {
        let base = track.as_deref().and_then(|t| t.held.at(window.last_seq, view)).or(held_elsewhere);
        let base = base.map(|h| h.state.to_state());
        // The whole state now, where a connection here saw it after the base.
        let latest = match track.as_deref() {
            Some(t) if t.state_seq.is_some_and(|seq| seq > window.last_seq) => latest_state(t, view),
            _ => None,
        };
        let before = c.resume_before.clone();
        window::catch_up(&mut c.window, base.as_ref(), before.as_ref(), latest.as_ref(), &p.patch, out);
        // Unseen changes: the base brought up to date by the view the catch-up gave.
        let full = latest.or_else(|| {
            let view = c.window.view.as_ref()?;
            window::splice(base.as_ref()?, c.window.cursor.as_ref(), view)
        });
        match &full {
            Some(full) => c.oracle.snapshot(full),
            None => c.oracle.clear(),
        }
        return Some(took_state(c, track, p.seq, full.as_ref().map(SharedState::from_state), true));
    }
    let (held, known, kinds) = match track.as_deref() {
        Some(t) => (
            t.held.at(window.last_seq, view).or(held_elsewhere),
            known_at_welcome(&t.held, &t.kinds, window.welcome_seq, view),
            Some(&t.kinds),
        ),
        None => (None, None, None),
    };
    let empty = SeqKinds::default();
    let state = patch::catch_up(p, &window, held, known, kinds.unwrap_or(&empty), redactor, out);
    if let Some(state) = &state {
        c.oracle.snapshot(&state.to_state());
    }
    Some(took_state(c, track.take(), p.seq, state, true))
}

/// A `ui_state_patch` after events.
pub(crate) fn patch(
    c: &mut ConnModel,
    track: Option<&mut SessionModel>,
    p: &UiStatePatch,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> TookState {
    if c.window.windowed() {
        c.foreign_unknown = false;
        let full = c.oracle.expected().cloned();
        window::patch(&mut c.window, full.as_ref(), &p.patch, out);
        return took_state(c, track, p.seq, full.as_ref().map(SharedState::from_state), false);
    }
    let adopt = std::mem::take(&mut c.foreign_unknown);
    let held = c.held.as_ref().filter(|h| Some(h.seq) == c.state_seq);
    // `None`: changed by frames no connection here received, taken as given.
    let since = (!adopt).then_some(&c.since_state);
    let state = patch::after_event(p, c.state_seq, held, since, &mut c.oracle, redactor, out);
    took_state(c, track, p.seq, state, false)
}

/// A `ui_state_updated`: the whole state, compared with the fold (`STATE-004`).
pub(crate) fn updated(
    c: &mut ConnModel,
    track: Option<&mut SessionModel>,
    u: &UiStateUpdated,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> TookState {
    if c.window.windowed() {
        c.foreign_unknown = false;
        let full = c.oracle.expected().cloned();
        window::updated(&mut c.window, full.as_ref(), &u.state, out);
        return took_state(c, track, u.seq, full.as_ref().map(SharedState::from_state), false);
    }
    if std::mem::take(&mut c.foreign_unknown) {
        // Changed by answers sent to another connection (ATTACH-004): taken as given; the
        // attached views' agreement judges it (ATTACH-007).
        c.oracle.snapshot(&u.state);
    } else {
        match c.oracle.received(&u.state, redactor) {
            Some(raw) => {
                out.raws.push(raw);
                if c.shadow.is_none() {
                    c.shadow = c.oracle.take_replaced();
                }
            }
            None if c.oracle.expected().is_some() => out.eval(&STATE_MATCHES_REDUCER, STATE_004),
            None => {}
        }
        // Apart until an update gives the fold the events sent lead to (`diverge`).
        if c.shadow.as_ref().is_some_and(|shadow| shadow == &u.state) {
            c.shadow = None;
        }
        out.apart = c.shadow.as_ref().map(|_| STATE_004);
    }
    took_state(c, track, u.seq, Some(SharedState::from_state(&u.state)), false)
}
