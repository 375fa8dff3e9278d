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

/// No reasoning frame or item where `reasoning` is not in force.
pub static REASONING_ONLY_IN_FORCE: CheckDef = CheckDef {
    id: "reasoning-only-in-force",
    requirements: &[REASON_001],
    summary: "no chat.reasoning_delta, chat.reasoning or reasoning item on a 1.3 connection where reasoning is not in force",
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
        let judged = c.version.is_some_and(|v| v >= REASONING_USAGE_SINCE) && !c.has(&Capability::Reasoning);
        if !judged {
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
