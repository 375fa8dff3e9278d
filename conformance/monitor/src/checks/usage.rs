//! Usage (since 1.3, feature `usage`): no `usage` on a `chat.run_complete` and no `state.usage`
//! on a 1.3 connection where the feature is not in force (USAGE-004). On an older minor the member
//! is undefined, which COMPAT-005 reports.

use std::collections::HashSet;

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::REASONING_USAGE_SINCE;
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const USAGE_004: ReqId = ReqId::new("USAGE-004");

/// No usage where `usage` is not in force.
pub static USAGE_ONLY_IN_FORCE: CheckDef = CheckDef {
    id: "usage-only-in-force",
    requirements: &[USAGE_004],
    summary: "no usage on chat.run_complete and no state.usage on a 1.3 connection where usage is not in force",
    level: Level::Must,
};

/// The check's own state: the connections whose finding was reported already (once each).
#[derive(Debug, Default)]
pub(crate) struct Usage {
    reported: HashSet<u64>,
}

impl Check for Usage {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let judged = c.version.is_some_and(|v| v >= REASONING_USAGE_SINCE) && !c.has(&Capability::Usage);
        if !judged {
            return;
        }
        let leaked = match cx.frame {
            ServerFrame::RunComplete(end) => end.usage.is_some().then(|| {
                "chat.run_complete carries usage, but usage is not in force on this connection".to_owned()
            }),
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_) => {
                cx.state().and_then(|s| s.usage.as_ref()).map(|_| {
                    "the state holds usage, but usage is not in force on this connection".to_owned()
                })
            }
            _ => return,
        };
        match leaked {
            None => out.eval(&USAGE_ONLY_IN_FORCE, USAGE_004),
            Some(message) if self.reported.insert(cx.conn) => out.fail(&USAGE_ONLY_IN_FORCE, USAGE_004, message),
            Some(_) => {}
        }
    }
}
