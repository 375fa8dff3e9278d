//! A cancel inside sub-agents (since 1.3, `spec/subagents.md`), judged by the cancel check
//! (`cancel.rs`), which owns the state: what an accepted cancel closes before the top level, and
//! which frames after it belong to the cancelled run's sub-agents.
//!
//! - SUBAGENT-010: after `chat.cancel_accepted`, before the top level's closing events, every
//!   running transcript of the run closes, the deepest first and at one depth in display order:
//!   its open stream ends with the text streamed so far, its open calls are dismissed by the
//!   client (`cancelled`), then `chat.subagent_complete` `cancelled`
//!   (`UiState::open_transcripts`, the reference's own order);
//! - SUBAGENT-011: after the cancel no frame of those sub-agents follows: no nested item or delta
//!   (a frame carrying `parent_call_id`), no progress, output or settlement of a nested call the
//!   cancel dismissed, no `chat.subagent_started` or `chat.subagent_complete`.

use std::collections::VecDeque;

use chatwire_schema::chat::subagent_complete::SubagentEnd;
use chatwire_schema::chat::tool_call_dismiss::Initiator;
use chatwire_schema::requirements::Level;
use chatwire_schema::{Id, ReqId, ServerFrame, UiState};

use crate::finding::{CheckDef, Out};

pub(crate) const SUBAGENT_010: ReqId = ReqId::new("SUBAGENT-010");
pub(crate) const SUBAGENT_011: ReqId = ReqId::new("SUBAGENT-011");

/// A cancel closes the run's running transcripts first, the deepest first.
pub static CANCEL_CLOSES_SUBAGENTS_FIRST: CheckDef = CheckDef {
    id: "cancel-closes-subagents-first",
    requirements: &[SUBAGENT_010],
    summary: "after chat.cancel_accepted, before the top level closes: each running transcript of the run, the deepest first, ends its open stream with the text streamed so far, has its open calls dismissed cancelled by the client, then completes cancelled",
    level: Level::Must,
};

/// Nothing of a cancelled run's sub-agents follows the cancel.
pub static CANCELLED_SUBAGENTS_STAY_CLOSED: CheckDef = CheckDef {
    id: "cancelled-subagents-stay-closed",
    requirements: &[SUBAGENT_011],
    summary: "no nested item, delta, progress, output or settlement and no chat.subagent_started or chat.subagent_complete of a cancelled run's sub-agents follows its cancel",
    level: Level::Must,
};

/// One closing event of a transcript that an accepted cancel owes, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NestedClose {
    /// The transcript's open stream ends with exactly `text`.
    StreamEnd { item: Id, text: String },
    /// The transcript's open call is dismissed by the client, `cancelled`.
    Dismiss { call: Id },
    /// The transcript's run completes `cancelled`.
    Complete { host: Id },
}

/// What a cancel of `invocation` closes inside sub-agents, in the order it must close it.
pub(crate) fn nested_closing(state: &UiState, invocation: &Id) -> VecDeque<NestedClose> {
    let mut due = VecDeque::new();
    for open in state.open_transcripts(invocation) {
        if let Some((item, text, _)) = open.stream {
            due.push_back(NestedClose::StreamEnd { item, text });
        }
        due.extend(open.open_calls.into_iter().map(|(call, _)| NestedClose::Dismiss { call }));
        due.push_back(NestedClose::Complete { host: open.host });
    }
    due
}

/// Whether `id` is an item of a transcript (not of the top level) in `state`.
pub(crate) fn is_nested(state: &UiState, id: &Id) -> bool {
    state.item_path(id).is_some_and(|path| path.len() > 1)
}

/// Judges `frame`, the next event after an accepted cancel, against the closing event `due`:
/// `true` when it is that event (found kept or broken under SUBAGENT-010), `false` when it is
/// another frame (charged here; the closing sequence is over).
pub(crate) fn judge(due: &NestedClose, frame: &ServerFrame, out: &mut Out) -> bool {
    let fail = |out: &mut Out, message: String| out.fail(&CANCEL_CLOSES_SUBAGENTS_FIRST, SUBAGENT_010, message);
    match (due, frame) {
        (NestedClose::StreamEnd { item, text }, ServerFrame::AssistantMessage(m)) if &m.item_id == item => {
            stream_text(text, &m.markdown, out);
            true
        }
        (NestedClose::StreamEnd { item, text }, ServerFrame::Reasoning(r)) if &r.item_id == item => {
            stream_text(text, &r.text, out);
            true
        }
        (NestedClose::Dismiss { call }, ServerFrame::ToolCallDismiss(d)) if &d.tool_call_id == call => {
            match d.initiated_by == Initiator::Client && d.reason.as_deref() == Some("cancelled") {
                true => out.eval(&CANCEL_CLOSES_SUBAGENTS_FIRST, SUBAGENT_010),
                false => fail(
                    out,
                    format!("the cancelled sub-agent's call {call} is dismissed without initiated_by client and reason cancelled"),
                ),
            }
            true
        }
        (NestedClose::Complete { host }, ServerFrame::SubagentComplete(c)) if &c.tool_call_id == host => {
            match c.status == SubagentEnd::Cancelled {
                true => out.eval(&CANCEL_CLOSES_SUBAGENTS_FIRST, SUBAGENT_010),
                false => {
                    fail(out, format!("the sub-agent of {host} completes {:?}, not cancelled", c.status).to_lowercase())
                }
            }
            true
        }
        (due, other) => {
            let expected = match due {
                NestedClose::StreamEnd { item, .. } => format!("the end of the sub-agent's open stream {item}"),
                NestedClose::Dismiss { call } => {
                    format!("the client dismissal (cancelled) of the sub-agent's call {call}")
                }
                NestedClose::Complete { host } => format!("chat.subagent_complete cancelled of {host}"),
            };
            fail(out, format!("{} arrived after chat.cancel_accepted where {expected} was due", other.type_name()));
            false
        }
    }
}

/// The end of a cancelled nested stream carries exactly the text streamed so far.
fn stream_text(streamed: &str, ended: &str, out: &mut Out) {
    match ended == streamed {
        true => out.eval(&CANCEL_CLOSES_SUBAGENTS_FIRST, SUBAGENT_010),
        false => out.fail(
            &CANCEL_CLOSES_SUBAGENTS_FIRST,
            SUBAGENT_010,
            format!(
                "the cancelled sub-agent's stream ends with {} characters, not the {} streamed so far",
                ended.chars().count(),
                streamed.chars().count()
            ),
        ),
    }
}

/// Whether `frame` is an event of a sub-agent: a nested item or delta, a sub-agent's start or
/// end, or a frame naming a call `was_nested` knows as a transcript's.
pub(crate) fn of_subagent(frame: &ServerFrame, was_nested: impl Fn(&Id) -> bool) -> bool {
    matches!(frame, ServerFrame::SubagentStarted(_) | ServerFrame::SubagentComplete(_))
        || frame.facts().parent_call_id().is_some()
        || frame.tool_call_id().is_some_and(was_nested)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn frame(v: serde_json::Value) -> ServerFrame {
        serde_json::from_value(v).expect("a server frame")
    }

    fn id(s: &str) -> Id {
        Id::parse(s).expect("an id")
    }

    const TS: &str = "2026-01-15T10:00:00Z";

    #[test]
    fn a_nested_stream_end_with_less_than_was_streamed_breaks_subagent_010() {
        let due = NestedClose::StreamEnd { item: id("m-2"), text: "One two ".into() };
        let end = |text: &str| {
            frame(json!({"type": "chat.assistant_message", "seq": 9, "invocation_id": "inv-1", "item_id": "m-2",
                "parent_call_id": "tc-1", "markdown": text, "ts": TS}))
        };
        let mut out = Out::default();
        assert!(judge(&due, &end("One two "), &mut out));
        assert!(out.raws.is_empty());
        assert!(judge(&due, &end("One "), &mut out));
        assert_eq!(out.raws.iter().map(|r| r.requirement.to_string()).collect::<Vec<_>>(), ["SUBAGENT-010"]);
    }

    #[test]
    fn the_host_dismissed_before_its_transcript_completes_breaks_subagent_010() {
        let due = NestedClose::Complete { host: id("tc-1") };
        let dismiss = frame(json!({"type": "chat.tool_call_dismiss", "seq": 9, "tool_call_id": "tc-1",
            "initiated_by": "client", "reason": "cancelled", "ts": TS}));
        let mut out = Out::default();
        assert!(!judge(&due, &dismiss, &mut out));
        assert_eq!(out.raws.iter().map(|r| r.requirement.to_string()).collect::<Vec<_>>(), ["SUBAGENT-010"]);
        let complete = frame(json!({"type": "chat.subagent_complete", "seq": 9, "tool_call_id": "tc-1",
            "status": "failed", "returned": false, "ts": TS}));
        let mut out = Out::default();
        assert!(judge(&due, &complete, &mut out));
        assert_eq!(out.raws.len(), 1, "a sub-agent a cancel closes completes cancelled");
    }

    #[test]
    fn a_nested_delta_or_a_dismissed_nested_call_is_a_subagent_frame() {
        let delta = frame(json!({"type": "chat.assistant_message_delta", "seq": 9, "invocation_id": "inv-1",
            "item_id": "m-2", "parent_call_id": "tc-1", "delta": "three ", "ts": TS}));
        assert!(of_subagent(&delta, |_| false));
        let settled = frame(json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": "tc-2",
            "status": "completed", "ts": TS}));
        assert!(of_subagent(&settled, |c| c.as_str() == "tc-2"));
        assert!(!of_subagent(&settled, |_| false), "a top-level call's settlement is CANCEL-005's");
    }
}
