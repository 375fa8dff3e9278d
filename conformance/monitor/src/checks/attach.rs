//! Several connections on one session (since 1.2, `spec/attach.md`): every attached connection
//! gets every event (`ATTACH-004`) under one seq (`ATTACH-006`), answers reach only their
//! requester (`ATTACH-005`), and after each change every connection's state equals the others'
//! as far as its view shows it (`ATTACH-007`). The watch owns its state; the monitor feeds it each
//! connection's frames and the state each connection holds after a state frame.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::ConnView;
use chatwire_schema::{ReqId, ServerFrame, UiState, MIN_ATTACHED_CONNECTIONS};

use chatwire_schema::requirements::Level;

use crate::check::{Check, ClientCx, CloseCx, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::shared::SharedState;
use crate::normalize::Normalizer;
use crate::redact::divergence;

const ATTACH_003: ReqId = ReqId::new("ATTACH-003");
const ATTACH_004: ReqId = ReqId::new("ATTACH-004");
const ATTACH_005: ReqId = ReqId::new("ATTACH-005");
const ATTACH_006: ReqId = ReqId::new("ATTACH-006");
const ATTACH_007: ReqId = ReqId::new("ATTACH-007");

/// Every event of the session reaches every attached connection, under one seq.
pub static EVENTS_REACH_EVERY_TAB: CheckDef = CheckDef {
    id: "events-reach-every-attached-connection",
    requirements: &[ATTACH_004, ATTACH_006],
    summary: "every frame without in_reply_to reaches every connection attached to the session (in its view), with the same seq on each",
    level: Level::Must,
};

/// Answers go only to the connection whose request they answer.
pub static ANSWERS_TO_REQUESTER: CheckDef = CheckDef {
    id: "answers-to-the-requester-only",
    requirements: &[ATTACH_005],
    summary: "a frame with in_reply_to arrives only on the connection that sent the request, while it is open",
    level: Level::Must,
};

/// After each change the attached connections hold one state.
pub static ATTACHED_VIEWS_AGREE: CheckDef = CheckDef {
    id: "attached-views-agree",
    requirements: &[ATTACH_007],
    summary: "the states of the connections attached to one session are equal at every seq, as far as each one's version and features show them",
    level: Level::Must,
};

/// The welcome states the bound on attached connections.
pub static ATTACH_LIMIT_ANNOUNCED: CheckDef = CheckDef {
    id: "attach-limit-announced",
    requirements: &[ATTACH_003],
    summary: "a welcome with multi_attach in force carries limits.max_attached_connections of at least 8",
    level: Level::Must,
};

/// How much each connection remembers (seqs received, states held).
const SEQ_MEMORY: usize = 4096;
const STATE_MEMORY: usize = 64;
/// Broadcast frames a session remembers by seq.
const LEDGER_MEMORY: usize = 4096;

/// How a connection sees the session: its minor with the 1.3 features in force on it
/// (`REASON-001`, `USAGE-004`), and whether it sees open streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct View {
    conn: ConnView,
    streams: bool,
}

impl View {
    /// What two views both show.
    fn meet(self, other: View) -> View {
        let conn = ConnView {
            version: self.conn.version.min(other.conn.version),
            reasoning: self.conn.reasoning && other.conn.reasoning,
            usage: self.conn.usage && other.conn.usage,
            subagents: self.conn.subagents && other.conn.subagents,
        };
        View { conn, streams: self.streams && other.streams }
    }

    /// `state` as this view shows it.
    fn show(self, state: &UiState) -> UiState {
        let state = if self.streams { state.clone() } else { state.without_open_stream() };
        self.conn.state(&state).into_owned()
    }

    /// Whether a connection with this view is sent `frame` at all.
    fn gets(self, frame: &ServerFrame) -> bool {
        let delta = frame.is_stream_delta();
        (!delta || self.streams) && self.conn.frame(frame).is_some()
    }
}

/// One connection of a session, as the watch follows it.
#[derive(Debug)]
struct Tab {
    view: View,
    /// The seq of its welcome: it is attached from here on.
    since: u64,
    /// The highest seq it received.
    max_seen: u64,
    received: BTreeSet<u64>,
    /// The states it held, by the seq of the state frame that gave them.
    states: BTreeMap<u64, SharedState>,
    /// The ids of the requests it sent.
    sent: BTreeSet<String>,
    ended: bool,
    /// Its welcome's `limits.max_attached_connections`.
    limit: Option<u32>,
}

#[derive(Debug, Default)]
struct SessionTabs {
    tabs: BTreeMap<u64, Tab>,
    /// The frames sent to every attached connection, by the seq that names them (`ATTACH-006`).
    ledger: BTreeMap<u64, ServerFrame>,
}

impl SessionTabs {
    /// A welcome of seq `seq` joins the session. A seq at or below one its connections already
    /// received names a second frame under a used seq: `SEQ-001`, charged at that welcome (a
    /// restart that lost the counter, say). Comparing frames and states by seq with what came
    /// before would charge that one fault again on every later frame (`ATTACH-006`, `ATTACH-007`),
    /// so the session's seq history starts afresh: the connections that have ended and the
    /// ledger are forgotten. Live connections stay compared: a tab still attached that is sent
    /// other frames under the same seqs is a divergence of its own.
    ///
    /// Only a seq some frame here already carried counts: with several instances, connections are
    /// read in any order, and one may have received a higher seq (the error that ended a tab taken
    /// over, committed after the welcome that took it over) without the welcome's seq being used.
    fn seq_reused(&mut self, seq: u64) {
        let used = self.ledger.contains_key(&seq)
            || self.tabs.values().any(|t| {
                t.since == seq
                    || t.received.contains(&seq)
                    // Below what a long-lived tab still remembers: taken as used.
                    || (t.received.len() >= SEQ_MEMORY && t.received.first().is_some_and(|first| seq < *first))
            });
        if !used {
            return;
        }
        self.tabs.retain(|_, t| !t.ended);
        self.ledger.clear();
    }
}

/// The multi-connection checks' own state.
#[derive(Debug, Default)]
pub(crate) struct AttachWatch {
    sessions: HashMap<String, SessionTabs>,
    /// Connection → its session, once welcomed.
    session_of: HashMap<u64, String>,
    /// Request ids a connection sent before (or without) a welcome.
    sent_before: HashMap<u64, BTreeSet<String>>,
}

impl Check for AttachWatch {
    fn on_client(&mut self, cx: &ClientCx<'_>) {
        if let Some(id) = cx.id {
            self.client_id(cx.conn, id);
        }
    }

    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if let ServerFrame::Welcome(w) = cx.frame {
            self.welcome(cx.conn, w.session_id.as_str(), w, out);
        }
    }

    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(took) = cx.took else { return };
        if let Some(state) = took.state.as_ref().and_then(|t| t.state.as_ref().map(|s| (t.seq, s))) {
            self.state(cx.conn, state.0, state.1, cx.redactor, out);
        }
        if took.recorded {
            self.frame(cx.conn, cx.frame, out);
        }
    }

    fn on_close(&mut self, cx: &CloseCx<'_>, _out: &mut Out) {
        self.ended(cx.conn);
    }
}

impl AttachWatch {
    /// The client sent a frame with `id` on `conn`.
    fn client_id(&mut self, conn: u64, id: &str) {
        match self.session_of.get(&conn).and_then(|s| self.sessions.get_mut(s)).and_then(|t| t.tabs.get_mut(&conn)) {
            Some(tab) => {
                tab.sent.insert(id.to_owned());
            }
            None => {
                self.sent_before.entry(conn).or_default().insert(id.to_owned());
            }
        }
    }

    /// `conn` was welcomed into `session` at `seq`, with `in_force` features.
    fn welcome(
        &mut self,
        conn: u64,
        session: &str,
        w: &chatwire_schema::session::welcome::SessionWelcome,
        out: &mut Out,
    ) {
        let in_force = w.features.as_deref().unwrap_or(&[]);
        if in_force.contains(&Capability::MultiAttach) {
            match w.limits.max_attached_connections {
                Some(n) if n >= MIN_ATTACHED_CONNECTIONS => out.eval(&ATTACH_LIMIT_ANNOUNCED, ATTACH_003),
                Some(n) => out.fail(
                    &ATTACH_LIMIT_ANNOUNCED,
                    ATTACH_003,
                    format!("limits.max_attached_connections is {n}, below {MIN_ATTACHED_CONNECTIONS}"),
                ),
                None => out.fail(
                    &ATTACH_LIMIT_ANNOUNCED,
                    ATTACH_003,
                    "multi_attach is in force but the welcome has no limits.max_attached_connections",
                ),
            }
        }
        let view = View {
            conn: ConnView::new(w.version, Some(in_force)),
            streams: in_force.contains(&Capability::AssistantStream),
        };
        if let Some(tabs) = self.sessions.get_mut(session) {
            tabs.seq_reused(w.seq);
        }
        let sent = self.sent_before.remove(&conn).unwrap_or_default();
        let tab = Tab {
            view,
            since: w.seq,
            max_seen: w.seq,
            received: BTreeSet::new(),
            states: BTreeMap::new(),
            sent,
            ended: false,
            limit: w.limits.max_attached_connections,
        };
        self.session_of.insert(conn, session.to_owned());
        self.sessions.entry(session.to_owned()).or_default().tabs.insert(conn, tab);
    }

    /// `conn` ended (either side).
    fn ended(&mut self, conn: u64) {
        if let Some(tab) = self.tab_mut(conn) {
            tab.ended = true;
        }
    }

    /// Whether another connection of `conn`'s session was welcomed before seq `seq`: a seq gap on
    /// `conn` below it may then be frames sent only to that one (`ATTACH-005`). Connections are
    /// read in any order, so one that has ended since counts as well.
    pub(crate) fn others_before(&self, conn: u64, seq: u64) -> bool {
        let Some(tabs) = self.session_of.get(&conn).and_then(|s| self.sessions.get(s)) else { return false };
        tabs.tabs.iter().any(|(id, t)| *id != conn && t.since < seq)
    }

    /// Whether `conn` has yet to receive an event another connection of its session already got
    /// (one it is owed, `ATTACH-004`): it is not idle yet, however quiet it has been. With several
    /// instances a tab on another instance gets the events later (`CLUSTER-006`), so its silence
    /// alone says nothing.
    pub(crate) fn behind(&self, conn: u64) -> bool {
        let Some(tabs) = self.session_of.get(&conn).and_then(|s| self.sessions.get(s)) else { return false };
        let Some(tab) = tabs.tabs.get(&conn) else { return false };
        if tab.ended {
            return false;
        }
        tabs.ledger.range(tab.max_seen.max(tab.since).saturating_add(1)..).any(|(_, f)| tab.view.gets(f))
    }

    /// The bound on attached connections `conn`'s welcome announced.
    pub(crate) fn limit(&self, conn: u64) -> Option<u32> {
        let session = self.session_of.get(&conn)?;
        self.sessions.get(session)?.tabs.get(&conn)?.limit
    }

    fn tab_mut(&mut self, conn: u64) -> Option<&mut Tab> {
        let session = self.session_of.get(&conn)?;
        self.sessions.get_mut(session)?.tabs.get_mut(&conn)
    }

    /// A frame of seq `seq` arrived on `conn` (after its welcome).
    fn frame(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        let Some(seq) = frame.seq() else { return };
        let Some(session) = self.session_of.get(&conn).cloned() else { return };
        let Some(tabs) = self.sessions.get_mut(&session) else { return };
        if let Some(reply) = frame.in_reply_to() {
            answer_check(tabs, conn, reply.as_str(), frame, out);
        }
        let Some(tab) = tabs.tabs.get_mut(&conn) else { return };
        let previous = tab.max_seen;
        tab.max_seen = tab.max_seen.max(seq);
        tab.received.insert(seq);
        if tab.received.len() > SEQ_MEMORY {
            tab.received.pop_first();
        }
        let view = tab.view;
        let since = tab.since;
        // Broadcast frames this connection skipped (ATTACH-004).
        // (A seq that does not grow is SEQ-001's to report; `range` needs start <= end.)
        let gap = previous.saturating_add(1)..seq.max(previous.saturating_add(1));
        let missed: Vec<(u64, &'static str)> = tabs
            .ledger
            .range(gap)
            .filter(|(s, f)| **s > since && view.gets(f))
            .map(|(s, f)| (*s, f.type_name()))
            .collect();
        for (s, wire) in missed {
            out.fail(
                &EVENTS_REACH_EVERY_TAB,
                ATTACH_004,
                format!("this connection never got the {wire} of seq {s} that another attached connection got"),
            );
        }
        // The ledger holds events sent to every connection: no answer, no state frame, no error.
        if frame.is_answer() || frame.ui_event().is_none() {
            return;
        }
        match tabs.ledger.get(&seq) {
            Some(b) => {
                if same_frame(b, frame) {
                    out.eval(&EVENTS_REACH_EVERY_TAB, ATTACH_006);
                } else {
                    out.fail(
                        &EVENTS_REACH_EVERY_TAB,
                        ATTACH_006,
                        format!(
                            "seq {seq} is a {} here and a {} on another connection of the session",
                            frame.type_name(),
                            b.type_name()
                        ),
                    );
                }
            }
            None => {
                // First seen here: every other attached connection that passed it must have it.
                for (id, other) in &tabs.tabs {
                    if *id == conn || other.since >= seq || other.max_seen <= seq || !other.view.gets(frame) {
                        continue;
                    }
                    if other.received.contains(&seq) {
                        continue;
                    }
                    out.fail(
                        &EVENTS_REACH_EVERY_TAB,
                        ATTACH_004,
                        format!(
                            "the {} of seq {seq} did not reach connection {id}, attached to the same session",
                            frame.type_name()
                        ),
                    );
                }
                if tabs.tabs.len() > 1 {
                    out.eval(&EVENTS_REACH_EVERY_TAB, ATTACH_004);
                }
                tabs.ledger.insert(seq, frame.clone());
                if tabs.ledger.len() > LEDGER_MEMORY {
                    tabs.ledger.pop_first();
                }
            }
        }
    }

    /// `conn` holds `state` after its state frame of seq `seq`: compared with every other attached
    /// connection's state as of that seq (`ATTACH-007`).
    fn state(&mut self, conn: u64, seq: u64, state: &SharedState, redactor: &mut Normalizer, out: &mut Out) {
        let Some(tabs) = self.session_of.get(&conn).and_then(|s| self.sessions.get_mut(s)) else { return };
        let Some(tab) = tabs.tabs.get_mut(&conn) else { return };
        tab.states.insert(seq, state.clone());
        if tab.states.len() > STATE_MEMORY {
            tab.states.pop_first();
        }
        let view = tab.view;
        // Whole states only where another tab has one to compare with.
        let mut whole: Option<UiState> = None;
        for (id, other) in &tabs.tabs {
            if *id == conn || other.since >= seq || other.max_seen < seq {
                continue;
            }
            let Some((_, theirs)) = other.states.range(..=seq).next_back() else { continue };
            let meet = view.meet(other.view);
            let state = whole.get_or_insert_with(|| state.to_state());
            let (mine, theirs) = (meet.show(state), meet.show(&theirs.to_state()));
            match divergence(&theirs, &mine, redactor) {
                None => out.eval(&ATTACHED_VIEWS_AGREE, ATTACH_007),
                Some(diff) => out.fail(
                    &ATTACHED_VIEWS_AGREE,
                    ATTACH_007,
                    format!("at seq {seq} this connection's state differs from connection {id}'s (expected = the other's):\n{diff}"),
                ),
            }
        }
    }
}

/// ATTACH-005: an answer arrives on the connection that sent its request, unless that one has
/// ended (then the spec allows it to go to the connections attached then).
fn answer_check(tabs: &SessionTabs, conn: u64, reply: &str, frame: &ServerFrame, out: &mut Out) {
    if matches!(frame, ServerFrame::Welcome(_)) {
        return;
    }
    let mine = tabs.tabs.get(&conn).is_some_and(|t| t.sent.contains(reply));
    if mine {
        if tabs.tabs.len() > 1 {
            out.eval(&ANSWERS_TO_REQUESTER, ATTACH_005);
        }
        return;
    }
    let asker = tabs.tabs.iter().find(|(id, t)| **id != conn && t.sent.contains(reply));
    if let Some((id, asker)) = asker {
        if !asker.ended {
            out.fail(
                &ANSWERS_TO_REQUESTER,
                ATTACH_005,
                format!(
                    "{} answers {reply}, which connection {id} sent and which is still attached",
                    frame.type_name()
                ),
            );
        }
    }
}

/// Whether two connections' frames of one seq are the same frame, as far as both show it.
fn same_frame(a: &ServerFrame, b: &ServerFrame) -> bool {
    let same =
        a.type_name() == b.type_name() && a.invocation_id() == b.invocation_id() && a.tool_call_id() == b.tool_call_id();
    same || as_host_output(a, b) || as_host_output(b, a)
}

/// Whether `output` is `text` as a connection without `subagents` gets it: a text of a sub-agent's
/// transcript reaches it as its host's `chat.tool_output` under the same seq (`SUBAGENT-002`).
pub(crate) fn as_host_output(text: &ServerFrame, output: &ServerFrame) -> bool {
    matches!((text, output), (ServerFrame::AssistantMessage(m), ServerFrame::ToolOutput(o))
        if m.parent_call_id.as_ref() == Some(&o.tool_call_id))
}
