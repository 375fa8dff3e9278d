//! A `session.welcome` binds the connection to its session: what it negotiated, the window and
//! catch-up its hello asked for, and a fresh start for the state it holds (a snapshot or a
//! catch-up follows).

use std::collections::HashMap;

use chatwire_schema::session::welcome::{features_in_force, Capability, SessionWelcome};

use super::conn::ConnModel;
use super::held::CatchUpWindow;
use super::session::SessionModel;
use super::window::WindowTrack;

/// Takes the welcome `w` on `c`; returns the session it binds the connection to.
pub(crate) fn welcome(c: &mut ConnModel, sessions: &mut HashMap<String, SessionModel>, w: &SessionWelcome) -> String {
    let hello = c.hello.take();
    c.version = Some(w.version);
    c.capabilities = w.capabilities.clone();
    let requested = hello.as_ref().and_then(|h| h.features.as_deref());
    c.features = features_in_force(w.version, requested, &w.capabilities).unwrap_or_default();
    c.window = WindowTrack::default();
    c.resume_before = None;
    if c.has(&Capability::StateWindow) {
        let holds = hello.as_ref().and_then(|h| h.before.clone());
        let asked = hello.as_ref().and_then(|h| h.window);
        // WINDOW-012: a resume that holds a window but names no size keeps the largest.
        c.window.size = asked.or(holds.as_ref().map(|_| chatwire_schema::window::MAX_WINDOW_ITEMS));
        c.resume_before = holds;
    }
    c.resume_welcome_seq = w.resumed.then_some(w.seq);
    let in_force = c.has(&Capability::ResumeCatchUp);
    c.catch_up = hello.as_ref().and_then(|h| h.resume_last_seq).filter(|_| w.resumed).map(|last_seq| CatchUpWindow {
        last_seq,
        in_force,
        retention: w.resume_retention,
        welcome_seq: w.seq,
    });
    let session = w.session_id.to_string();
    let track = sessions.entry(session.clone()).or_default();
    if !w.resumed {
        track.script = hello.and_then(|h| h.script);
    }
    track.resume_token = Some(w.resume_token.to_string());
    c.session = Some(session.clone());
    c.awaiting_snapshot = true;
    c.new_session = !w.resumed;
    c.oracle.clear();
    c.shadow = None;
    c.batch = None;
    c.state_seq = None;
    c.state_seen = false;
    c.since_state.clear();
    c.held = None;
    c.foreign_unknown = false;
    session
}
