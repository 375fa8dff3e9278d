//! Batch order (MULTI-001): the calls of one batch are sent consecutively with `call_index`
//! 0, 1, 2… The model holds the batch in progress (the last event's call, if it was one).

use chatwire_schema::requirements::Level;
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};

const MULTI_001: ReqId = ReqId::new("MULTI-001");

/// The calls of a batch are sent consecutively with `call_index` 0..n-1.
pub static BATCH_ORDER: CheckDef = CheckDef {
    id: "batch-call-order",
    requirements: &[MULTI_001],
    summary: "tool calls of a batch are sent consecutively in call order with call_index 0..n-1",
    level: Level::Must,
};

/// The batch order check.
#[derive(Debug, Default)]
pub(crate) struct Batch;

impl Check for Batch {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let (Some(c), ServerFrame::ToolCall(tc)) = (cx.conn(), cx.frame) else { return };
        let expected = match &c.batch {
            Some((inv, idx)) if inv == tc.invocation_id.as_str() => idx + 1,
            _ => 0,
        };
        if tc.call_index == expected {
            out.eval(&BATCH_ORDER, MULTI_001);
        } else {
            out.fail(&BATCH_ORDER, MULTI_001, format!("tool call with call_index {} where {expected} was due", tc.call_index));
        }
    }
}
