//! Usage (since 1.3, feature `usage`): no `usage` on a `chat.run_complete` and no `state.usage`
//! on a 1.3 connection where the feature is not in force (USAGE-004). On an older minor the member
//! is undefined, which COMPAT-005 reports.

use std::collections::{HashMap, HashSet};

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::REASONING_USAGE_SINCE;
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const USAGE_002: ReqId = ReqId::new("USAGE-002");
const USAGE_004: ReqId = ReqId::new("USAGE-004");

/// No usage where `usage` is not in force.
pub static USAGE_ONLY_IN_FORCE: CheckDef = CheckDef {
    id: "usage-only-in-force",
    requirements: &[USAGE_004],
    summary: "no usage on chat.run_complete and no state.usage on a 1.3 connection where usage is not in force",
    level: Level::Must,
};

/// One currency per session.
pub static ONE_CURRENCY: CheckDef = CheckDef {
    id: "usage-one-currency",
    requirements: &[USAGE_002],
    summary: "every cost of a session's chat.run_complete frames names the same currency",
    level: Level::Must,
};

/// Most sessions whose currency is remembered.
const MAX_SESSIONS: usize = 4096;

/// The check's own state: the connections whose finding was reported already (once each), and
/// each session's currency, named by its first cost.
#[derive(Debug, Default)]
pub(crate) struct Usage {
    reported: HashSet<u64>,
    currencies: HashMap<String, String>,
}

impl Check for Usage {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if let (ServerFrame::RunComplete(end), Some(session)) = (cx.frame, cx.session_id()) {
            if let Some(cost) = end.usage.as_ref().and_then(|u| u.cost.as_ref()) {
                self.currency(session, &cost.currency, out);
            }
        }
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

impl Usage {
    /// USAGE-002: a cost in `currency` on `session`.
    fn currency(&mut self, session: &str, currency: &str, out: &mut Out) {
        match self.currencies.get(session) {
            Some(first) if first != currency => out.fail(
                &ONE_CURRENCY,
                USAGE_002,
                format!("a cost in {currency} in a session whose costs are in {first}"),
            ),
            Some(_) => out.eval(&ONE_CURRENCY, USAGE_002),
            None if self.currencies.len() < MAX_SESSIONS => {
                self.currencies.insert(session.to_owned(), currency.to_owned());
                out.eval(&ONE_CURRENCY, USAGE_002);
            }
            None => {}
        }
    }
}
