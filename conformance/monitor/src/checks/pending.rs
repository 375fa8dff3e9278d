//! Pending calls wait for the client across a disconnect (RESUME-008). A call `pending` in a run
//! `awaiting_input` waits for the client: nothing but the client's own requests or its deadline
//! settles it (a turn awaiting input is not in progress, so not even a restart's recovery does,
//! `spec/resume.md`). So when the session's last connection ends while the client has no request
//! the server has not answered, every such call is, in the state the next resume gives, still
//! `pending` or `expired`; settled otherwise (dismissed because "nobody is there"), the client
//! that comes back finds it closed.
//!
//! Judged only where the monitor saw the whole story: the session's last connection ended (no
//! other one could have answered the call), every request of the session was answered, and the
//! resume's state frame shows the call (a window may not). Even then an answered request may have
//! effects the closed connection never read (a `chat.cancel`'s dismissals follow its answer, a
//! response's settlement may not have reached it), so only a settlement no client request makes
//! is charged: a dismissal the server initiated. A call the resume shows completed, failed,
//! running or dismissed by the client is neither charged nor counted.

use std::collections::{HashMap, HashSet};

use chatwire_schema::chat::tool_call_dismiss::Initiator;
use chatwire_schema::requirements::Level;
use chatwire_schema::{ClientFrame, DisplayItem, Id, ReqId, RunStatus, ServerFrame, ToolCallStatus};

use crate::check::{Check, ClientCx, CloseCx, ServerCx};
use crate::finding::{CheckDef, Out};

const RESUME_008: ReqId = ReqId::new("RESUME-008");

/// A call left pending for the client is still pending (or expired) when the client comes back.
pub static PENDING_SURVIVES_DISCONNECT: CheckDef = CheckDef {
    id: "pending-calls-survive-disconnect",
    requirements: &[RESUME_008],
    summary: "a call pending, its run awaiting input, when the session's last connection ended with every request answered is pending or expired in the state the next resume gives",
    level: Level::Must,
};

/// The check's own state, per session and connection.
#[derive(Debug, Default)]
pub(crate) struct PendingWatch {
    /// Per session: the ids of requests sent and not answered yet.
    outstanding: HashMap<String, HashSet<String>>,
    /// Per session: the calls left pending for the client when its last connection ended.
    left: HashMap<String, Vec<Id>>,
    /// Connections whose resumed welcome's state frame has not come yet: their session.
    resuming: HashMap<u64, String>,
}

impl Check for PendingWatch {
    fn on_client(&mut self, cx: &ClientCx<'_>) {
        if matches!(cx.frame, Some(ClientFrame::Hello(_) | ClientFrame::HistoryRequest(_))) {
            return;
        }
        let (Some(session), Some(id)) = (cx.conn().and_then(|c| c.session.clone()), cx.id) else { return };
        self.outstanding.entry(session).or_default().insert(id.to_owned());
    }

    fn on_server(&mut self, cx: &mut ServerCx<'_>, _out: &mut Out) {
        if let ServerFrame::Welcome(w) = cx.frame {
            if w.resumed {
                self.resuming.insert(cx.conn, w.session_id.to_string());
            }
            return;
        }
        if let (Some(reply), Some(session)) = (cx.frame.in_reply_to(), cx.session_id()) {
            if let Some(open) = self.outstanding.get_mut(session) {
                open.remove(reply.as_str());
            }
        }
    }

    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if !matches!(
            cx.frame,
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStatePatch(_) | ServerFrame::UiStateUpdated(_)
        ) {
            return;
        }
        let Some(session) = self.resuming.remove(&cx.conn) else { return };
        let Some(calls) = self.left.remove(&session) else { return };
        let Some(state) = cx.state() else { return };
        for call in calls {
            let Some((status, by_server)) = state.items.iter().find_map(|item| match item {
                DisplayItem::ToolCall(t) if t.id == call => {
                    Some((t.status, t.dismissal.as_ref().is_some_and(|d| d.initiated_by == Initiator::Server)))
                }
                _ => None,
            }) else {
                continue;
            };
            if matches!(status, ToolCallStatus::Pending | ToolCallStatus::Expired) {
                out.eval(&PENDING_SURVIVES_DISCONNECT, RESUME_008);
            } else if status == ToolCallStatus::Dismissed && by_server {
                out.fail(
                    &PENDING_SURVIVES_DISCONNECT,
                    RESUME_008,
                    format!(
                        "tool call {call} was pending for the client (its run awaiting input, every request answered) when the session's last connection ended; the resumed state shows it dismissed by the server: it must stay answerable until its deadline"
                    ),
                );
            }
        }
    }

    fn on_close(&mut self, cx: &CloseCx<'_>, _out: &mut Out) {
        self.resuming.remove(&cx.conn);
        let Some(c) = cx.model.conn(cx.conn) else { return };
        let Some(session) = c.session.clone() else { return };
        let others = cx.model.conns().any(|(n, o)| *n != cx.conn && !o.ended && o.session.as_ref() == Some(&session));
        let asked = self.outstanding.get(&session).is_some_and(|open| !open.is_empty());
        let waiting = c.state().filter(|s| s.run.status == RunStatus::AwaitingInput);
        match waiting {
            Some(state) if !others && !asked => {
                let calls: Vec<Id> = state
                    .items
                    .iter()
                    .filter_map(|item| match item {
                        DisplayItem::ToolCall(t) if t.status == ToolCallStatus::Pending => Some(t.id.clone()),
                        _ => None,
                    })
                    .collect();
                self.left.insert(session, calls);
            }
            _ => {
                self.left.remove(&session);
            }
        }
    }
}
