//! The flow of state frames (STATE-003, STATE-007, MULTI-002, STATE-036, STREAM-002): the frame
//! after every event (or batch of tool calls) is its state frame (a patch where `ui_state_patch`
//! is in force, else an update), no state frame comes without an event, none comes between the
//! calls of one batch, and a delta, its own state change, gets none. A catch-up patch (right after
//! a resume welcome) is no update.

use std::collections::HashMap;

use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ReqId, ServerFrame};

use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::ConnModel;

const STATE_003: ReqId = ReqId::new("STATE-003");
const STATE_007: ReqId = ReqId::new("STATE-007");
const MULTI_002: ReqId = ReqId::new("MULTI-002");
const STATE_036: ReqId = ReqId::new("STATE-036");
const STREAM_002: ReqId = ReqId::new("STREAM-002");

/// Every event is followed by its `ui_state_updated` (one per batch), and no update comes without one.
pub static UPDATE_AFTER_EVENT: CheckDef = CheckDef {
    id: "update-after-every-event",
    requirements: &[STATE_003, STATE_007, MULTI_002],
    summary: "the next frame after every event (or batch of tool calls) is its ui_state_updated, and no update comes without an event",
    level: Level::Must,
};

/// Where patches are in force, state changes come as patches, never as whole updates; a delta is
/// its own state change and gets none.
pub static PATCH_IN_PLACE_OF_UPDATE: CheckDef = CheckDef {
    id: "patch-in-place-of-update",
    requirements: &[STATE_036, STREAM_002],
    summary: "where ui_state_patch is in force, a ui_state_patch follows every event (batch) but a delta, no state frame follows a delta, and no ui_state_updated is sent",
    level: Level::Must,
};

/// The flow check's own state, per connection (whether a state frame is due is the model's).
#[derive(Debug, Default)]
pub(crate) struct Flow {
    conns: HashMap<u64, Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// A state frame already followed the current batch of tool calls (MULTI-002).
    batch_updated: bool,
    /// The last frame was a delta (STREAM-002: no state frame may follow it).
    after_delta: bool,
}

impl Check for Flow {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let seen = self.conns.entry(cx.conn).or_default();
        flow(c, seen, cx.frame, out);
        if matches!(cx.frame, ServerFrame::UiStateUpdated(_)) && c.has(&Capability::UiStatePatch) {
            out.fail(
                &PATCH_IN_PLACE_OF_UPDATE,
                STATE_036,
                "ui_state_updated on a connection where ui_state_patch is in force",
            );
        }
    }
}

/// STATE-003 / STATE-007 / MULTI-002: the frame after an event is its update; where patches are in
/// force, its patch (STATE-036). `c`: the connection before the frame.
fn flow(c: &ConnModel, seen: &mut Seen, frame: &ServerFrame, out: &mut Out) {
    let continues_batch = match (frame, &c.batch) {
        (ServerFrame::ToolCall(tc), Some((inv, idx))) => inv == tc.invocation_id.as_str() && tc.call_index == idx + 1,
        _ => false,
    };
    let patches = c.has(&Capability::UiStatePatch);
    let is_patch = matches!(frame, ServerFrame::UiStatePatch(_));
    let is_state = matches!(frame, ServerFrame::UiStateUpdated(_) | ServerFrame::UiStatePatch(_));
    let catch_up = is_patch && c.awaiting_snapshot;
    let (due, due_check, due_frame): (ReqId, &'static CheckDef, &str) = if patches {
        (STATE_036, &PATCH_IN_PLACE_OF_UPDATE, "ui_state_patch")
    } else {
        (STATE_003, &UPDATE_AFTER_EVENT, "ui_state_updated")
    };
    let after_delta = std::mem::replace(&mut seen.after_delta, frame.is_stream_delta());
    // A state frame after frames sent only to other attached connections (ATTACH-004) is due.
    let update_due = c.update_due || (c.foreign_unknown && is_state);
    match frame {
        _ if is_state && !catch_up && after_delta && !update_due => {
            out.fail(
                &PATCH_IN_PLACE_OF_UPDATE,
                STREAM_002,
                format!(
                    "{} right after a chat.assistant_message_delta: a delta is its own state change and gets no state frame",
                    frame.type_name()
                ),
            );
        }
        _ if is_state && !catch_up => {
            if update_due {
                if patches == is_patch {
                    out.eval(due_check, due);
                }
                out.eval(&UPDATE_AFTER_EVENT, STATE_007);
            } else if c.update_optional {
                // After an event the reducer refused (charged there): allowed, not required.
            } else {
                out.fail(
                    &UPDATE_AFTER_EVENT,
                    STATE_007,
                    format!("{} without an event since the last state", frame.type_name()),
                );
            }
            if c.batch.is_some() {
                seen.batch_updated = true;
            }
        }
        // A windowed connection's fresh window is the state frame of the cut (WINDOW-006).
        ServerFrame::UiStateSnapshot(_) if update_due && c.window.windowed() => out.eval(&UPDATE_AFTER_EVENT, STATE_007),
        _ if continues_batch && seen.batch_updated => {
            out.fail(&UPDATE_AFTER_EVENT, MULTI_002, format!("a {due_frame} came between the tool calls of one batch"))
        }
        _ if continues_batch => out.eval(&UPDATE_AFTER_EVENT, MULTI_002),
        _ if update_due => out.fail(
            due_check,
            due,
            format!("{} arrived before the {due_frame} of the previous event", frame.type_name()),
        ),
        _ => {}
    }
    if after_delta && !is_state {
        out.eval(&PATCH_IN_PLACE_OF_UPDATE, STREAM_002);
    }
    // A delta, or an event that starts no batch's next call, leaves no batch updated.
    if frame.ui_event().is_some() && !continues_batch {
        seen.batch_updated = false;
    }
}
