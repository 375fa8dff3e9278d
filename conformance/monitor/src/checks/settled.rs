//! Settled calls stay settled (TOOL-010): nothing is reported about a call once it settled.

use chatwire_schema::requirements::Level;
use chatwire_schema::ReqId;

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::oracle::{referenced_call, settled_call};

const TOOL_010: ReqId = ReqId::new("TOOL-010");

/// Nothing is reported about a call once it settled.
pub static SETTLED_STAYS_SETTLED: CheckDef = CheckDef {
    id: "settled-calls-stay-settled",
    requirements: &[TOOL_010],
    summary: "no progress, output, completion or dismissal is sent for a tool call that has settled",
    level: Level::Must,
};

/// The settled-call check: judged against the state the connection holds before the frame.
#[derive(Debug, Default)]
pub(crate) struct Settled;

impl Check for Settled {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(call) = referenced_call(cx.frame) else { return };
        let state = cx.state();
        match settled_call(state, cx.frame) {
            Some(status) => out.fail(
                &SETTLED_STAYS_SETTLED,
                TOOL_010,
                format!("{} for tool call {call}, which had already settled as {status}", cx.frame.type_name()),
            ),
            None if state.is_some() => out.eval(&SETTLED_STAYS_SETTLED, TOOL_010),
            None => {}
        }
    }
}
