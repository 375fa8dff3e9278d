//! Sub-agents (since 1.3, feature `subagents`): nothing of a sub-agent's transcript reaches a 1.3
//! connection where the feature is not in force, neither a frame (`chat.subagent_started`,
//! `chat.subagent_complete`, a frame carrying `parent_call_id`) nor a `subagent` member of a state
//! (SUBAGENT-001). On a connection that negotiated an older minor they are undefined, which
//! COMPAT-005 reports; this check judges the connections whose minor defines them.

use std::collections::HashSet;

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::REASONING_USAGE_SINCE;
use chatwire_schema::{DisplayItem, ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const SUBAGENT_001: ReqId = ReqId::new("SUBAGENT-001");

/// No sub-agent frame or transcript where `subagents` is not in force.
pub static SUBAGENTS_ONLY_IN_FORCE: CheckDef = CheckDef {
    id: "subagents-only-in-force",
    requirements: &[SUBAGENT_001],
    summary: "no chat.subagent_started, chat.subagent_complete, nested frame or subagent member on a 1.3 connection where subagents is not in force",
    level: Level::Must,
};

/// The check's own state: the connections whose finding was reported already (once each).
#[derive(Debug, Default)]
pub(crate) struct Subagents {
    reported: HashSet<u64>,
}

impl Check for Subagents {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let judged = c.version.is_some_and(|v| v >= REASONING_USAGE_SINCE) && !c.has(&Capability::Subagents);
        if !judged {
            return;
        }
        let leaked = match cx.frame {
            ServerFrame::SubagentStarted(_) | ServerFrame::SubagentComplete(_) => Some(format!(
                "{} arrived, but subagents is not in force on this connection",
                cx.frame.type_name()
            )),
            frame if frame.facts().parent_call_id().is_some() => Some(format!(
                "{} carries parent_call_id, but subagents is not in force on this connection",
                frame.type_name()
            )),
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_) => cx
                .state()
                .and_then(|s| s.items.iter().find(|i| matches!(i, DisplayItem::ToolCall(c) if c.subagent.is_some())))
                .map(|item| format!("tool call {} holds a sub-agent, but subagents is not in force", item.id())),
            _ => return,
        };
        match leaked {
            None => out.eval(&SUBAGENTS_ONLY_IN_FORCE, SUBAGENT_001),
            Some(message) if self.reported.insert(cx.conn) => out.fail(&SUBAGENTS_ONLY_IN_FORCE, SUBAGENT_001, message),
            Some(_) => {}
        }
    }
}
