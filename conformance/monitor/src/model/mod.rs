//! The shared session model: per connection and per session, what the frames read so far leave
//! each client holding, indexed so that a frame costs what it changes. Every check reads it; only
//! the model changes it, frame by frame ([`Model::take`]).
//!
//! The model is the differential oracle: the state each connection holds is the reducer's fold of
//! its snapshot and the events since, and every state frame is judged against that fold as it is
//! taken (`STATE-004`, the patch oracle, the catch-up, a windowed connection's view). Those
//! judgments are the model's own, since the state they decide is the one every check reads next.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chatwire_schema::{ClientFrame, ServerFrame};

use crate::finding::Out;
use crate::normalize::Normalizer;
use crate::script::SessionScript;

mod conn;
mod event;
pub(crate) mod held;
mod holding;
pub(crate) mod oracle;
pub(crate) mod owed;
pub(crate) mod patch;
mod pieces;
mod session;
pub(crate) mod shared;
mod snapshot;
mod update;
pub(crate) mod welcome;
pub(crate) mod window;

pub(crate) use conn::{ConnModel, PendingHello};
pub(crate) use holding::{Took, TookState};
pub(crate) use session::SessionModel;
pub(crate) use snapshot::RESUMED_APART;

/// What the monitor knows of every connection and session of one run.
#[derive(Debug, Default)]
pub(crate) struct Model {
    conns: BTreeMap<u64, ConnModel>,
    sessions: HashMap<String, SessionModel>,
    /// The session of the latest welcome.
    current_session: Option<String>,
}

impl Model {
    /// The connection `conn`, once opened or heard from.
    pub fn conn(&self, conn: u64) -> Option<&ConnModel> {
        self.conns.get(&conn)
    }

    /// Every connection, by number.
    pub fn conns(&self) -> impl Iterator<Item = (&u64, &ConnModel)> {
        self.conns.iter()
    }

    /// The session `session`.
    pub fn session(&self, session: &str) -> Option<&SessionModel> {
        self.sessions.get(session)
    }

    /// The session `conn` is bound to.
    pub fn session_of(&self, conn: u64) -> Option<&SessionModel> {
        self.conns.get(&conn)?.session.as_deref().and_then(|s| self.sessions.get(s))
    }

    /// The session of the latest welcome.
    pub fn current_session(&self) -> Option<&str> {
        self.current_session.as_deref()
    }

    /// The connection `conn` was opened.
    pub fn open(&mut self, conn: u64) {
        self.conns.insert(conn, ConnModel::default());
    }

    /// The connection `conn` is known from here on (a frame on a connection never opened).
    pub fn touch(&mut self, conn: u64) {
        self.conns.entry(conn).or_default();
    }

    /// The connection `conn` ended; `false` when it had ended already.
    pub fn end(&mut self, conn: u64) -> bool {
        let c = self.conns.entry(conn).or_default();
        !std::mem::replace(&mut c.ended, true)
    }

    /// The client sent `frame` on `conn`: what a hello asks of its welcome, a windowed
    /// connection's page requests.
    pub fn client(&mut self, conn: u64, frame: &ClientFrame) {
        match frame {
            ClientFrame::HistoryRequest(h) => {
                let c = self.conns.entry(conn).or_default();
                c.window.asked(h.id.to_string(), h.before.to_string(), h.limit);
            }
            ClientFrame::Hello(h) => {
                let resume = h.resume.as_ref();
                let hello = PendingHello {
                    id: h.id.to_string(),
                    versions: h.versions.iter().map(ToString::to_string).collect(),
                    resume_floor: resume.and_then(|r| self.sessions.get(r.session_id.as_str())).map(|t| t.max_seq),
                    resume_last_seq: resume.map(|r| r.last_seq),
                    features: h.features.clone(),
                    script: h.script.as_ref().map(|s| Arc::new(SessionScript::from_script(s))),
                    window: h.window,
                    before: resume.and_then(|r| r.before.clone()),
                };
                self.conns.entry(conn).or_default().hello = Some(hello);
            }
            _ => {}
        }
    }

    /// Before the checks see `frame` on `conn`: what other connections of its session tell of it.
    /// `collides`: its seq named another frame of the session before (`CLUSTER-002`); `others`:
    /// another connection of the session was attached before it (its seq gap may be frames sent
    /// only to that one, folded in here).
    pub fn prelude(&mut self, conn: u64, frame: &ServerFrame, collides: bool, others: bool) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
        let Some(track) = track else { return };
        if collides {
            track.seqs_void = true;
        }
        if others && !matches!(frame, ServerFrame::Welcome(_)) {
            if let (Some(seq), Some(last)) = (frame.seq(), c.last_seq) {
                holding::fold_foreign(c, track, last + 1..seq);
            }
        }
    }

    /// Takes `frame` on `conn`: what it leaves the connection and its session holding, judged as
    /// it is taken. `keep_events`: another connection of the session is attached, so its events
    /// are kept for that one's seq gaps.
    pub fn take(
        &mut self,
        conn: u64,
        frame: &ServerFrame,
        keep_events: bool,
        redactor: &mut Normalizer,
        out: &mut Out,
    ) -> Took {
        // A catch-up's base as the connection that held it last holds it, where the session's
        // recent states no longer have it (attached tabs read later push older seqs out).
        let held_elsewhere = match frame {
            ServerFrame::UiStatePatch(_) => {
                let last = self.conns.get(&conn).and_then(|c| c.catch_up.as_ref()).map(|w| w.last_seq);
                last.and_then(|seq| self.conns.values().filter_map(|o| o.held.clone()).find(|h| h.seq == seq))
            }
            _ => None,
        };
        let c = self.conns.entry(conn).or_default();
        let mut recorded = true;
        let state = if let ServerFrame::Welcome(w) = frame {
            self.current_session = Some(welcome::welcome(c, &mut self.sessions, w));
            None
        } else {
            let track = c.session.as_ref().and_then(|s| self.sessions.get_mut(s));
            match frame {
                ServerFrame::UiStateSnapshot(s) => Some(snapshot::snapshot(c, track, s, out)),
                ServerFrame::UiStatePatch(p) if c.awaiting_snapshot => {
                    let took = update::catch_up(c, track, p, held_elsewhere.as_ref(), redactor, out);
                    recorded = took.is_some();
                    took
                }
                ServerFrame::UiStatePatch(p) => Some(update::patch(c, track, p, redactor, out)),
                ServerFrame::UiStateUpdated(u) => Some(update::updated(c, track, u, redactor, out)),
                ServerFrame::Error(e) => {
                    window::error(&mut c.window, e.in_reply_to.as_ref(), e.code, out);
                    None
                }
                other => event::event(c, track, other, out),
            }
        };
        let refused = std::mem::take(&mut c.event_refused);
        (c.update_due, c.update_optional) = match frame {
            ServerFrame::Welcome(_)
            | ServerFrame::UiStateSnapshot(_)
            | ServerFrame::UiStatePatch(_)
            | ServerFrame::UiStateUpdated(_) => (false, false),
            delta if delta.is_stream_delta() => (false, false),
            other if other.ui_event().is_some() => (!refused, refused),
            _ => (c.update_due, c.update_optional),
        };
        if let Some(seq) = frame.seq() {
            c.last_seq = Some(seq);
        }
        if recorded {
            self.record(conn, frame, keep_events);
        }
        Took { state, recorded }
    }

    /// The session's record of a frame: its highest seq, the kinds of its frames, its events.
    fn record(&mut self, conn: u64, frame: &ServerFrame, keep_events: bool) {
        let (Some(seq), Some(session)) = (frame.seq(), self.conns.get(&conn).and_then(|c| c.session.clone())) else {
            return;
        };
        let track = self.sessions.entry(session).or_default();
        track.max_seq = track.max_seq.max(seq);
        track.kinds.note(seq, frame);
        if frame.ui_event().is_some() && keep_events {
            track.events.insert(seq, frame.clone());
            if track.events.len() > session::EVENTS_KEPT {
                track.events.pop_first();
            }
        }
    }

    /// The connection's state now differs from the oracle's fold at a finding under this
    /// requirement, or no longer (`crate::diverge`).
    pub fn set_diverged(&mut self, conn: u64, diverged: Option<chatwire_schema::ReqId>) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.diverged = diverged;
        }
    }
}
