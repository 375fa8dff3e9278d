//! Consistent ids (ID-002, ID-003, ERROR-004, TOOL-004): no tool call, invocation or item id is
//! used twice in a session, a tool call's id leaves room for its output item's, every
//! `in_reply_to` names a frame the client sent, and `corr` equals `tool_call_id`.

use std::collections::{HashMap, HashSet};

use chatwire_schema::requirements::Level;
use chatwire_schema::subagent::transcript_of;
use chatwire_schema::{DisplayItem, ReqId, ServerFrame};

use crate::check::{Check, ClientCx, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::{ConnModel, TookState};

const ID_002: ReqId = ReqId::new("ID-002");
const ID_003: ReqId = ReqId::new("ID-003");
const ERROR_004: ReqId = ReqId::new("ERROR-004");
const TOOL_004: ReqId = ReqId::new("TOOL-004");

/// Most streams remembered open per session.
const MAX_OPEN_STREAMS: usize = 64;

/// Ids are never reused, replies name frames the client sent, `corr` equals `tool_call_id`.
pub static IDS_CONSISTENT: CheckDef = CheckDef {
    id: "ids-consistent",
    requirements: &[ID_002, ID_003, ERROR_004, TOOL_004],
    summary: "no tool_call_id, invocation_id or item id is reused in a session; a tool_call_id leaves room for its output item's id; in_reply_to names a frame the client sent; corr equals tool_call_id",
    level: Level::Must,
};

/// Where an id of a session was seen first (ID-002): several attached connections see the same
/// frame, and a state may show an id before the frame that introduced it is read elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IdSeen {
    /// Introduced by the event of this seq.
    Introduced(u64),
    /// Shown by the state frame of this seq.
    Shown(u64),
}

/// The ids check's own state.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    /// The ids of every frame the client sent (ERROR-004: in_reply_to names one of them).
    sent: HashSet<String>,
    /// Per session: every tool_call_id, invocation_id and item id seen, and where (ID-002).
    seen: HashMap<String, HashMap<String, IdSeen>>,
    /// Per session: the items opened by a delta whose end no connection has seen yet.
    open_streams: HashMap<String, HashSet<String>>,
}

impl Check for Ids {
    fn on_client(&mut self, cx: &ClientCx<'_>) {
        if let Some(id) = cx.id {
            self.sent.insert(id.to_owned());
        }
    }

    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if let ServerFrame::ToolCall(tc) = cx.frame {
            tool_call(tc, out);
        }
        let (Some(c), Some(session)) = (cx.conn(), cx.session_id()) else { return };
        if matches!(
            cx.frame,
            ServerFrame::Welcome(_)
                | ServerFrame::UiStateSnapshot(_)
                | ServerFrame::UiStatePatch(_)
                | ServerFrame::UiStateUpdated(_)
                | ServerFrame::Error(_)
        ) || super::features::stray_delta(cx.frame, c)
        {
            return;
        }
        self.introduced(session, c, cx.frame, out);
    }

    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(took) = cx.took else { return };
        if let (Some(state), Some(session)) = (&took.state, cx.session_id()) {
            self.shown(session, state);
        }
        let Some(reply) = cx.frame.in_reply_to().filter(|_| took.recorded) else { return };
        if self.sent.contains(reply.as_str()) {
            out.eval(&IDS_CONSISTENT, ERROR_004);
        } else {
            out.fail(&IDS_CONSISTENT, ERROR_004, format!("in_reply_to {reply} names no frame the client sent"));
        }
    }
}

impl Ids {
    /// ID-002 on an event of `session` received on `c` (the connection before the event).
    fn introduced(&mut self, session: &str, c: &ConnModel, frame: &ServerFrame, out: &mut Out) {
        let open_streams = self.open_streams.entry(session.to_owned()).or_default();
        // A stream's end reaches a connection without assistant_stream as a whole message
        // (STREAM-005): its item was introduced by the stream's first delta. It is kept until the
        // bound: the end reaches each attached connection in turn.
        let ended_stream = match frame {
            ServerFrame::AssistantMessage(m) => open_streams.contains(m.item_id.as_str()),
            ServerFrame::Reasoning(r) => open_streams.contains(r.item_id.as_str()),
            _ => false,
        };
        let seen = self.seen.entry(session.to_owned()).or_default();
        let seq = frame.seq().unwrap_or(0);
        for new_id in introduced_ids(frame, c) {
            if frame.is_stream_delta() && open_streams.len() < MAX_OPEN_STREAMS {
                open_streams.insert(new_id.clone());
            }
            if ended_stream {
                continue;
            }
            // The same frame seen on another attached connection, or a state shown there after it,
            // is no second use.
            let fresh = match seen.get(&new_id) {
                None => true,
                Some(IdSeen::Introduced(at)) => *at == seq,
                Some(IdSeen::Shown(at)) => *at > seq,
            };
            if fresh {
                seen.entry(new_id).or_insert(IdSeen::Introduced(seq));
                out.eval(&IDS_CONSISTENT, ID_002);
            } else {
                out.fail(&IDS_CONSISTENT, ID_002, format!("id {new_id} is used a second time in the session"));
            }
        }
    }

    /// A snapshot or catch-up showed `state` whole: every id it holds is used (ID-002).
    fn shown(&mut self, session: &str, took: &TookState) {
        let Some(state) = took.state.as_ref().filter(|_| took.whole) else { return };
        let seen = self.seen.entry(session.to_owned()).or_default();
        for item in state.iter() {
            shown_item(item, took.seq, seen);
        }
    }
}

/// An item a state showed, with the items of the transcript it hosts (since 1.3), at every depth.
fn shown_item(item: &DisplayItem, seq: u64, seen: &mut HashMap<String, IdSeen>) {
    for id in [item.id().to_string(), item.invocation_id().to_string()] {
        seen.entry(id).or_insert(IdSeen::Shown(seq));
    }
    if let DisplayItem::ToolCall(call) = item {
        for nested in transcript_of(call).unwrap_or_default() {
            shown_item(nested, seq, seen);
        }
    }
}

/// ID-003 and TOOL-004 on a tool call.
fn tool_call(tc: &chatwire_schema::chat::tool_call::ToolCall, out: &mut Out) {
    // The output item's id is the call id with a suffix; the schema crate says whether that
    // still is an id.
    match chatwire_schema::reducer::output_item_id(&tc.tool_call_id) {
        Ok(_) => out.eval(&IDS_CONSISTENT, ID_003),
        Err(_) => out.fail(
            &IDS_CONSISTENT,
            ID_003,
            format!(
                "chat.tool_call's tool_call_id is {} characters long: its output item's id would be too long",
                tc.tool_call_id.as_str().len()
            ),
        ),
    }
    match tc.corr.as_ref() {
        Some(corr) if corr != &tc.tool_call_id => out.fail(
            &IDS_CONSISTENT,
            TOOL_004,
            format!("chat.tool_call carries corr {corr}, which differs from its tool_call_id {}", tc.tool_call_id),
        ),
        Some(_) => out.eval(&IDS_CONSISTENT, TOOL_004),
        None => {}
    }
}

/// Ids a frame introduces into the session (each must be new: ID-002): the schema's frame facts
/// (`chatwire_schema::frame_ids`), judged on the state of `c` before the frame, in every
/// transcript (a sub-agent's stream is introduced by its first delta as the top level's is).
fn introduced_ids(frame: &ServerFrame, c: &ConnModel) -> Vec<String> {
    let before = c.oracle.indexed();
    frame.introduced_ids().iter().filter(|i| i.is_new(before)).map(|i| i.id.to_string()).collect()
}
