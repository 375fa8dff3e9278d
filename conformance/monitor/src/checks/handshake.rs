//! The handshake (SESSION-003, SESSION-006, STATE-002, STATE-005, TRANSPORT-005): a welcome answers
//! the hello with a version it offered and a usable frame limit, and the state frame that follows
//! it comes before anything else: a snapshot (empty for a new session), or after a resume a
//! catch-up where one is due.

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::SessionWelcome;
use chatwire_schema::transport::MIN_MAX_FRAME_BYTES;
use chatwire_schema::{ReqId, ServerFrame, UiState};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::ConnModel;

const SESSION_003: ReqId = ReqId::new("SESSION-003");
const SESSION_006: ReqId = ReqId::new("SESSION-006");
const STATE_002: ReqId = ReqId::new("STATE-002");
const STATE_005: ReqId = ReqId::new("STATE-005");
const TRANSPORT_005: ReqId = ReqId::new("TRANSPORT-005");

/// The welcome answers the hello with a version the client offered; a snapshot follows.
pub static WELCOME_THEN_SNAPSHOT: CheckDef = CheckDef {
    id: "welcome-then-snapshot",
    requirements: &[SESSION_003, SESSION_006, STATE_002, STATE_005, TRANSPORT_005],
    summary: "a welcome answers the hello with an offered version and is followed by ui_state_snapshot (empty for a new session)",
    level: Level::Must,
};

/// The handshake check: the model holds the pending hello and whether a state frame is awaited.
#[derive(Debug, Default)]
pub(crate) struct Handshake;

impl Check for Handshake {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        match cx.frame {
            ServerFrame::Welcome(w) => welcome(c, w, out),
            ServerFrame::UiStateSnapshot(s) if c.awaiting_snapshot => {
                if c.new_session {
                    if s.state == UiState::default() {
                        out.eval(&WELCOME_THEN_SNAPSHOT, STATE_005);
                    } else {
                        out.fail(
                            &WELCOME_THEN_SNAPSHOT,
                            STATE_005,
                            "the snapshot after the welcome of a new session is not empty and idle",
                        );
                    }
                }
                out.eval(&WELCOME_THEN_SNAPSHOT, STATE_002);
            }
            ServerFrame::UiStatePatch(_) if c.awaiting_snapshot => match c.catch_up {
                // After the welcome of a new session (or one answering no resume) only a snapshot.
                None => out.fail(&WELCOME_THEN_SNAPSHOT, STATE_002, "ui_state_patch in place of the ui_state_snapshot"),
                Some(_) => out.eval(&WELCOME_THEN_SNAPSHOT, STATE_002),
            },
            ServerFrame::UiStateUpdated(_) if c.awaiting_snapshot => {
                out.fail(&WELCOME_THEN_SNAPSHOT, STATE_002, "ui_state_updated before the ui_state_snapshot")
            }
            ServerFrame::UiStateSnapshot(_)
            | ServerFrame::UiStatePatch(_)
            | ServerFrame::UiStateUpdated(_)
            | ServerFrame::Error(_) => {}
            other if c.awaiting_snapshot || (c.state().is_none() && !c.state_seen) => out.fail(
                &WELCOME_THEN_SNAPSHOT,
                STATE_002,
                format!("{} before the ui_state_snapshot", other.type_name()),
            ),
            _ => {}
        }
    }
}

/// The welcome against the hello it answers, and its frame limit.
fn welcome(c: &ConnModel, w: &SessionWelcome, out: &mut Out) {
    match &c.hello {
        Some(h) => {
            if w.in_reply_to.as_str() == h.id {
                out.eval(&WELCOME_THEN_SNAPSHOT, SESSION_006);
            } else {
                out.fail(
                    &WELCOME_THEN_SNAPSHOT,
                    SESSION_006,
                    format!("welcome in_reply_to {} is not the hello id {}", w.in_reply_to, h.id),
                );
            }
            if h.versions.contains(&w.version.to_string()) {
                out.eval(&WELCOME_THEN_SNAPSHOT, SESSION_003);
            } else {
                out.fail(
                    &WELCOME_THEN_SNAPSHOT,
                    SESSION_003,
                    format!("welcome version {} was not offered ({})", w.version, h.versions.join(", ")),
                );
            }
        }
        None => out.fail(&WELCOME_THEN_SNAPSHOT, SESSION_006, "a welcome that answers no hello"),
    }
    if w.limits.max_frame_bytes < MIN_MAX_FRAME_BYTES {
        out.fail(
            &WELCOME_THEN_SNAPSHOT,
            TRANSPORT_005,
            format!("limits.max_frame_bytes {} is below {MIN_MAX_FRAME_BYTES}", w.limits.max_frame_bytes),
        );
    } else {
        out.eval(&WELCOME_THEN_SNAPSHOT, TRANSPORT_005);
    }
}
