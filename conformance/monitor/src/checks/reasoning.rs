//! Reasoning (since 1.3, feature `reasoning`): nothing of it reaches a 1.3 connection where the
//! feature is not in force, neither a frame nor an item of a state (REASON-001). On a connection
//! that negotiated an older minor the frame and the item kind are undefined, which COMPAT-005
//! reports; this check judges the connections whose minor defines them.

use std::collections::HashSet;

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::REASONING_USAGE_SINCE;
use chatwire_schema::{DisplayItem, ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const REASON_001: ReqId = ReqId::new("REASON-001");
const REASON_002: ReqId = ReqId::new("REASON-002");

/// No reasoning frame or item where `reasoning` is not in force.
pub static REASONING_ONLY_IN_FORCE: CheckDef = CheckDef {
    id: "reasoning-only-in-force",
    requirements: &[REASON_001],
    summary: "no chat.reasoning_delta, chat.reasoning or reasoning item on a 1.3 connection where reasoning is not in force",
    level: Level::Must,
};

/// No reasoning delta where `assistant_stream` is not in force: the stream's end appends the whole
/// item there.
pub static REASONING_DELTAS_ONLY_STREAMED: CheckDef = CheckDef {
    id: "reasoning-deltas-only-where-streamed",
    requirements: &[REASON_002],
    summary: "no chat.reasoning_delta on a connection where assistant_stream is not in force; it gets each reasoning item whole",
    level: Level::Must,
};

/// The check's own state: the connections whose finding was reported already (once each).
#[derive(Debug, Default)]
pub(crate) struct Reasoning {
    reported: HashSet<u64>,
}

impl Check for Reasoning {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let defined = c.version.is_some_and(|v| v >= REASONING_USAGE_SINCE);
        if defined && c.has(&Capability::Reasoning) {
            streamed_only(cx, c.has(&Capability::AssistantStream), &mut self.reported, out);
            return;
        }
        if !defined {
            return;
        }
        let leaked = match cx.frame {
            ServerFrame::Reasoning(_) | ServerFrame::ReasoningDelta(_) => Some(format!(
                "{} arrived, but reasoning is not in force on this connection",
                cx.frame.type_name()
            )),
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_) => cx
                .state()
                .and_then(|s| s.items.iter().find(|i| matches!(i, DisplayItem::Reasoning(_))))
                .map(|item| format!("the state holds reasoning item {}, but reasoning is not in force", item.id())),
            _ => return,
        };
        match leaked {
            None => out.eval(&REASONING_ONLY_IN_FORCE, REASON_001),
            Some(message) if self.reported.insert(cx.conn) => out.fail(&REASONING_ONLY_IN_FORCE, REASON_001, message),
            Some(_) => {}
        }
    }
}

/// REASON-002 on a connection where `reasoning` is in force (`streams`: `assistant_stream` is too):
/// a delta only where streams are seen; a whole `chat.reasoning` where they are not is the rule kept.
fn streamed_only(cx: &ServerCx<'_>, streams: bool, reported: &mut HashSet<u64>, out: &mut Out) {
    match (cx.frame, streams) {
        (ServerFrame::ReasoningDelta(_), true) | (ServerFrame::Reasoning(_), false) => {
            out.eval(&REASONING_DELTAS_ONLY_STREAMED, REASON_002)
        }
        (ServerFrame::ReasoningDelta(_), false) if reported.insert(cx.conn) => out.fail(
            &REASONING_DELTAS_ONLY_STREAMED,
            REASON_002,
            "chat.reasoning_delta arrived, but assistant_stream is not in force on this connection",
        ),
        _ => {}
    }
}
