//! Retry (since 1.1, `spec/retry.md`): how a server answers `chat.retry`, and what the retried run
//! may do.
//!
//! The answer is judged against the state the connection holds when it arrives: frames are in
//! order, so that is the state the server checked the request against. Which refusal is due comes
//! from `chatwire_schema::error_order` (one table for every implementation), the failing checks
//! from the state:
//! - RETRY-001: a retry no check refuses is answered `chat.retry_accepted` echoing it (its
//!   `after_item_id`, the latest turn's `invocation_id`), and the next event is the
//!   `chat.run_started` of that turn; it is never answered `chat.user_message_accepted`;
//! - RETRY-004: a refused retry gets the error the first failing check names, in order;
//! - RETRY-002: no frame of the retried run names a call the retry kept;
//! - RETRY-005: a response to a call a retry removed is answered `unknown_tool_call`;
//! - SUBAGENT-012 (since 1.3): no frame of the retried run starts or continues the sub-agent of a
//!   host the retry kept (its transcript stays as it was) or removed (it went with its host): no
//!   `chat.subagent_started` or `chat.subagent_complete` on it, no frame carrying it as
//!   `parent_call_id`;
//! - SCRIPT-020: the retried run plays a retry's steps only: its calls and messages are ones the
//!   script's `retries` make (judged where the session's script is known).

use std::collections::{HashMap, HashSet, VecDeque};

use chatwire_schema::chat::retry_accepted::RetryAccepted;
use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{error_order, ClientFrame, DisplayItem, ErrorCode, ReqId, ServerFrame, UiState};

use crate::check::{Check, ClientCx, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::script::RetrySteps;

const RETRY_001: ReqId = ReqId::new("RETRY-001");
const RETRY_002: ReqId = ReqId::new("RETRY-002");
const RETRY_004: ReqId = ReqId::new("RETRY-004");
const RETRY_005: ReqId = ReqId::new("RETRY-005");
const SCRIPT_020: ReqId = ReqId::new("SCRIPT-020");
const SUBAGENT_012: ReqId = ReqId::new("SUBAGENT-012");

/// A retry is accepted exactly when no check refuses it, and refused with the first failing check.
pub static RETRY_ANSWERED: CheckDef = CheckDef {
    id: "retry-answered-as-checked",
    requirements: &[RETRY_001, RETRY_004],
    summary: "a chat.retry no check refuses gets chat.retry_accepted echoing it, then the run_started of the latest turn; a refused one the error the first failing check names (capability, run, item, turn, open call)",
    level: Level::Must,
};

/// The retried run leaves the kept calls alone.
pub static RETRY_KEEPS_CALLS: CheckDef = CheckDef {
    id: "retry-keeps-kept-calls",
    requirements: &[RETRY_002],
    summary: "no frame after a chat.retry_accepted names a tool call the retry kept (it is not executed again)",
    level: Level::Must,
};

/// The retried run leaves the transcripts of the hosts its retry kept or removed alone.
pub static RETRY_KEEPS_TRANSCRIPTS: CheckDef = CheckDef {
    id: "retry-leaves-transcripts-alone",
    requirements: &[SUBAGENT_012],
    summary: "no frame after a chat.retry_accepted starts, continues or ends the sub-agent of a host the retry kept or removed (no chat.subagent_started or chat.subagent_complete on it, no parent_call_id naming it)",
    level: Level::Must,
};

/// A call a retry removed cannot be answered.
pub static RETRY_REMOVED_CALL_UNKNOWN: CheckDef = CheckDef {
    id: "retry-removed-call-unknown",
    requirements: &[RETRY_005],
    summary: "a chat.tool_call_response to a call a retry removed is answered unknown_tool_call",
    level: Level::Must,
};

/// The retried run plays the script's retry steps.
pub static RETRY_PLAYS_RETRY_STEPS: CheckDef = CheckDef {
    id: "retry-plays-retry-steps",
    requirements: &[SCRIPT_020],
    summary: "the run after a chat.retry_accepted makes only calls and messages of the script's retries",
    level: Level::Must,
};

/// Most client requests remembered until their answer.
const MAX_ASKS: usize = 1024;
/// Most removed or kept call ids remembered per session.
const MAX_CALLS: usize = 4096;

/// A client frame whose answer a check here judges.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ask {
    /// `chat.retry` after this item.
    Retry { after_item: String },
    /// `chat.tool_call_response` to a call a retry removed.
    ResponseToRemoved,
}

/// The requests awaiting their answer, by frame id (bounded: the oldest are forgotten).
#[derive(Clone, Debug, Default)]
struct Asks {
    by_id: HashMap<String, Ask>,
    order: VecDeque<String>,
}

impl Asks {
    fn insert(&mut self, id: String, ask: Ask) {
        if self.by_id.insert(id.clone(), ask).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > MAX_ASKS {
            if let Some(old) = self.order.pop_front() {
                self.by_id.remove(&old);
            }
        }
    }

    fn take(&mut self, id: &str) -> Option<Ask> {
        let ask = self.by_id.remove(id)?;
        self.order.retain(|i| i != id);
        Some(ask)
    }

    /// Notes a client frame: a retry, or a response to a call `removed` holds.
    fn client(&mut self, frame: &ClientFrame, removed: Option<&RetryTrack>) {
        match frame {
            ClientFrame::Retry(r) => {
                self.insert(r.id.to_string(), Ask::Retry { after_item: r.after_item_id.to_string() });
            }
            ClientFrame::ToolCallResponse(t)
                if removed.is_some_and(|r| r.removed.contains(t.tool_call_id.as_str())) =>
            {
                self.insert(t.id.to_string(), Ask::ResponseToRemoved);
            }
            _ => {}
        }
    }
}

/// What a session's retries left behind.
#[derive(Clone, Debug, Default)]
struct RetryTrack {
    /// Calls some retry removed (RETRY-005).
    removed: HashSet<String>,
    /// The latest retried turn, the calls its retry kept (RETRY-002) and the seq of its
    /// `chat.retry_accepted`, until the next turn: frames at or below that seq precede the retry
    /// (another attached connection read later sees them, `ATTACH-004`).
    retried: Option<(String, HashSet<String>, u64)>,
    /// The hosts of sub-agents the latest retry kept or removed (SUBAGENT-012), while `retried`.
    hosts: HashSet<String>,
}

/// The error codes of the checks a retry after `after_item` fails in `state`: the schema crate's
/// one definition (`RETRY-004`), which the reference backend uses too.
pub fn failing_checks(state: &UiState, after_item: &str, offers_retry: bool) -> Vec<ErrorCode> {
    chatwire_schema::reducer::retry_refusals(state, after_item, offers_retry)
}

/// The code a server must refuse a retry with, or `None` when it must accept it.
pub fn due_refusal(state: &UiState, after_item: &str, offers_retry: bool) -> Option<ErrorCode> {
    let failing = failing_checks(state, after_item, offers_retry);
    error_order::first_failing("chat.retry", &failing).or_else(|| failing.first().copied())
}

/// The retry checks' own state.
#[derive(Debug, Default)]
pub(crate) struct Retry {
    /// The client's retries and responses to removed calls, until their answer.
    asks: Asks,
    /// Per session: what its retries kept and removed.
    sessions: HashMap<String, RetryTrack>,
    /// Per connection: a retry was accepted, and the run_started of this turn is the next event
    /// due (RETRY-001).
    pending_run: HashMap<u64, Option<String>>,
}

impl Check for Retry {
    fn on_client(&mut self, cx: &ClientCx<'_>) {
        let Some(frame) = cx.frame else { return };
        let session = cx.conn().and_then(|c| c.session.as_ref());
        self.asks.client(frame, session.and_then(|s| self.sessions.get(s)));
    }

    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let (Some(c), Some(session)) = (cx.conn(), cx.session_id()) else { return };
        let pending_run = self.pending_run.entry(cx.conn).or_default();
        let script = cx.session().and_then(|t| t.script.as_deref()).map(|s| &s.retries);
        server_frame(
            cx.frame,
            c.state(),
            c.since_1_1(),
            c.capabilities.contains(&Capability::Retry),
            &mut self.asks,
            self.sessions.entry(session.to_owned()).or_default(),
            pending_run,
            script,
            out,
        );
        if matches!(cx.frame, ServerFrame::Welcome(_)) {
            *pending_run = None;
        }
    }
}

/// Checks one server frame of a session against the retries asked and accepted. `state`: the
/// connection's state before the frame; `v1_1`: the connection negotiated 1.1 or later (on 1.0
/// `chat.retry` is no client frame and gets `unknown_type`, ERROR-007's to judge); `pending_run`: the turn whose run_started is due next on
/// this connection; `streams`: the script's retry steps, when known.
#[allow(clippy::too_many_arguments)]
fn server_frame(
    frame: &ServerFrame,
    state: Option<&UiState>,
    v1_1: bool,
    offers_retry: bool,
    asks: &mut Asks,
    track: &mut RetryTrack,
    pending_run: &mut Option<String>,
    script: Option<&RetrySteps>,
    out: &mut Out,
) {
    if frame.ui_event().is_some() {
        if let Some(invocation) = pending_run.take() {
            match frame {
                ServerFrame::RunStarted(r) if r.invocation_id.as_str() == invocation => {
                    out.eval(&RETRY_ANSWERED, RETRY_001)
                }
                other => out.fail(
                    &RETRY_ANSWERED,
                    RETRY_001,
                    format!(
                        "chat.retry_accepted is followed by {}, not the chat.run_started of the retried turn",
                        other.type_name()
                    ),
                ),
            }
        }
    }
    match frame {
        ServerFrame::RetryAccepted(a) => accepted(a, state, offers_retry, asks, track, pending_run, out),
        ServerFrame::Error(e) => {
            let Some(reply) = e.in_reply_to.as_ref() else { return };
            match asks.take(reply.as_str()) {
                Some(Ask::Retry { after_item }) => {
                    let Some(state) = state.filter(|_| v1_1) else { return };
                    match due_refusal(state, &after_item, offers_retry) {
                        Some(due) if due == e.code => out.eval(&RETRY_ANSWERED, RETRY_004),
                        Some(due) => out.fail(
                            &RETRY_ANSWERED,
                            RETRY_004,
                            format!(
                                "the retry was refused with {}, but the first failing check in order gives {}",
                                e.code.as_str(),
                                due.as_str()
                            ),
                        ),
                        None => out.fail(
                            &RETRY_ANSWERED,
                            RETRY_001,
                            format!("a retry no check refuses was answered with the error {}", e.code.as_str()),
                        ),
                    }
                }
                Some(Ask::ResponseToRemoved) if e.code == ErrorCode::UnknownToolCall => {
                    out.eval(&RETRY_REMOVED_CALL_UNKNOWN, RETRY_005)
                }
                Some(Ask::ResponseToRemoved) => out.fail(
                    &RETRY_REMOVED_CALL_UNKNOWN,
                    RETRY_005,
                    format!(
                        "a response to a call the retry removed was answered {}, not unknown_tool_call",
                        e.code.as_str()
                    ),
                ),
                None => {}
            }
        }
        ServerFrame::UserMessageAccepted(u) => {
            if let Some(Ask::Retry { .. }) = asks.take(u.in_reply_to.as_str()) {
                out.fail(&RETRY_ANSWERED, RETRY_001, "a chat.retry was answered with chat.user_message_accepted");
            }
            track.retried = None;
        }
        ServerFrame::ToolCallComplete(f) => {
            if let Some(Ask::ResponseToRemoved) = f.in_reply_to.as_ref().and_then(|r| asks.take(r.as_str())) {
                out.fail(
                    &RETRY_REMOVED_CALL_UNKNOWN,
                    RETRY_005,
                    "a response to a call the retry removed settled it (chat.tool_call_complete)",
                );
            }
        }
        ServerFrame::RewindComplete(_) => track.retried = None,
        _ => {}
    }
    retried_run(frame, state, track, script, out);
}

/// The checks on a `chat.retry_accepted`; records what it kept and removed.
fn accepted(
    a: &RetryAccepted,
    state: Option<&UiState>,
    offers_retry: bool,
    asks: &mut Asks,
    track: &mut RetryTrack,
    pending_run: &mut Option<String>,
    out: &mut Out,
) {
    *pending_run = Some(a.invocation_id.to_string());
    // A connection whose view hides the item asked (reasoning not in force) gets the retry as
    // its view names it (`ConnView::frame_at`): the requester's connection judges the answer.
    let holds_asked = |state: &UiState| match asks.by_id.get(a.in_reply_to.as_str()) {
        Some(Ask::Retry { after_item }) => state.items.iter().any(|i| i.id().as_str() == after_item),
        _ => true,
    };
    let judged = state.filter(|s| holds_asked(s));
    if let (Some(Ask::Retry { after_item }), Some(state)) = (judged.and_then(|_| asks.take(a.in_reply_to.as_str())), judged) {
        match due_refusal(state, &after_item, offers_retry) {
            Some(due) => out.fail(
                &RETRY_ANSWERED,
                RETRY_004,
                format!("the retry was accepted, but it must be refused with {}", due.as_str()),
            ),
            None if a.after_item_id.as_str() != after_item => out.fail(
                &RETRY_ANSWERED,
                RETRY_001,
                format!(
                    "chat.retry_accepted cuts after item {}, not after the item asked, {after_item}",
                    a.after_item_id
                ),
            ),
            None => out.eval(&RETRY_ANSWERED, RETRY_001),
        }
    }
    let Some(state) = state else { return };
    let Some(at) = state.items.iter().position(|i| i.id() == &a.after_item_id) else { return };
    track.hosts = state.items[at + 1..]
        .iter()
        .chain(state.items[..=at].iter().filter(|i| i.invocation_id() == &a.invocation_id))
        .filter_map(|i| match i {
            DisplayItem::ToolCall(c) if c.subagent.is_some() => Some(c.id.to_string()),
            _ => None,
        })
        .collect();
    let calls = |items: &[DisplayItem]| -> HashSet<String> {
        items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::ToolCall(c) => Some(c.id.to_string()),
                _ => None,
            })
            .collect()
    };
    let kept: HashSet<String> = state.items[..=at]
        .iter()
        .filter(|i| i.invocation_id() == &a.invocation_id)
        .filter_map(|i| match i {
            DisplayItem::ToolCall(c) => Some(c.id.to_string()),
            _ => None,
        })
        .collect();
    if track.removed.len() < MAX_CALLS {
        track.removed.extend(calls(&state.items[at + 1..]));
    }
    track.retried = Some((a.invocation_id.to_string(), kept, a.seq));
}

/// RETRY-002 and SCRIPT-020 on a frame of the retried run (`state`: the connection's before it).
fn retried_run(
    frame: &ServerFrame,
    state: Option<&UiState>,
    track: &RetryTrack,
    script: Option<&RetrySteps>,
    out: &mut Out,
) {
    let Some((invocation, kept, accepted)) = &track.retried else { return };
    if frame.seq().is_some_and(|seq| seq <= *accepted) {
        return;
    }
    if !track.hosts.is_empty() {
        let host = match frame {
            ServerFrame::SubagentStarted(s) => Some(&s.tool_call_id),
            ServerFrame::SubagentComplete(s) => Some(&s.tool_call_id),
            other => other.facts().parent_call_id(),
        };
        match host.filter(|h| track.hosts.contains(h.as_str())) {
            Some(host) => {
                out.fail(
                    &RETRY_KEEPS_TRANSCRIPTS,
                    SUBAGENT_012,
                    format!(
                        "{} runs the sub-agent of {host}, a host the retry kept or removed with its transcript",
                        frame.type_name()
                    ),
                );
                return;
            }
            None if frame.ui_event().is_some() => out.eval(&RETRY_KEEPS_TRANSCRIPTS, SUBAGENT_012),
            None => {}
        }
    }
    if let Some(call) = frame.tool_call_id() {
        if kept.contains(call.as_str()) {
            out.fail(
                &RETRY_KEEPS_CALLS,
                RETRY_002,
                format!("{} names tool call {call}, which the retry kept: it must not run again", frame.type_name()),
            );
        } else if !kept.is_empty() {
            out.eval(&RETRY_KEEPS_CALLS, RETRY_002);
        }
    }
    let Some(script) = script.filter(|s| s.known) else { return };
    let (what, listed) = match frame {
        ServerFrame::ToolCall(f) if f.invocation_id.as_str() == invocation => {
            (format!("calls {}", f.tool_name), script.tools.contains(&f.tool_name))
        }
        ServerFrame::AssistantMessage(f) if f.invocation_id.as_str() == invocation => {
            ("says something".to_owned(), script.says.contains(&f.markdown) || ends_retry_say_early(f, state, script))
        }
        _ => return,
    };
    if listed {
        out.eval(&RETRY_PLAYS_RETRY_STEPS, SCRIPT_020);
    } else {
        out.fail(
            &RETRY_PLAYS_RETRY_STEPS,
            SCRIPT_020,
            format!("the retried run {what} that no retry of the script does ({})", frame.type_name()),
        );
    }
}

/// Whether `end` closes the open stream with the text streamed so far, which begins a say of the
/// script's retries: that say, ended early. Which say plays is SCRIPT-020's; whether it may end
/// there (a recovery's interrupted end, `stream::EarlyEnd`) is SCRIPT-019's, so one early end is
/// charged once, there.
fn ends_retry_say_early(
    end: &chatwire_schema::chat::assistant_message::AssistantMessage,
    state: Option<&UiState>,
    script: &RetrySteps,
) -> bool {
    let streamed = state.and_then(UiState::open_stream).filter(|o| o.id == end.item_id && o.markdown == end.markdown);
    streamed.is_some() && script.says.iter().any(|say| say.starts_with(end.markdown.as_str()))
}

#[cfg(test)]
mod tests {
    use chatwire_schema::RunStatus;
    use serde_json::json;

    use super::*;

    /// it-1 (turn 1), tc-1 (turn 1, `status`), it-2 (turn 2), am-2 (turn 2).
    fn state(call_status: &str, run: &str) -> UiState {
        serde_json::from_value(json!({
            "items": [
                {"kind": "user_message", "id": "it-1", "invocation_id": "inv-1", "text": "a", "client_message_id": "u1", "ts": "2026-01-15T10:00:00Z"},
                {"kind": "tool_call", "id": "tc-1", "invocation_id": "inv-2", "tool_name": "t", "interaction_type": "auto_tool",
                 "display": "inline", "awaiting_response": false, "payload": {}, "status": call_status, "ts": "2026-01-15T10:00:00Z"},
                {"kind": "user_message", "id": "it-2", "invocation_id": "inv-2", "text": "b", "client_message_id": "u2", "ts": "2026-01-15T10:00:00Z"},
                {"kind": "assistant_markdown", "id": "am-2", "invocation_id": "inv-2", "markdown": "x", "ts": "2026-01-15T10:00:00Z"}
            ],
            "run": {"status": run, "invocation_id": "inv-2"}
        }))
        .unwrap()
    }

    #[test]
    fn every_failing_check_is_found_and_the_first_in_order_is_due() {
        use ErrorCode::*;
        let ok = state("completed", "failed");
        assert_eq!(ok.run.status, RunStatus::Failed);
        assert_eq!(due_refusal(&ok, "am-2", true), None);
        assert_eq!(due_refusal(&ok, "nope", true), Some(UnknownItem));
        assert_eq!(due_refusal(&ok, "it-1", true), Some(ItemNotInLatestTurn));
        assert_eq!(due_refusal(&ok, "am-2", false), Some(CapabilityNotOffered));
        let open = state("running", "running");
        let mut failing = failing_checks(&open, "am-2", true);
        failing.sort_by_key(|c| c.as_str());
        assert_eq!(failing, vec![RetryKeepsOpenCall, RunInProgress]);
        assert_eq!(due_refusal(&open, "am-2", true), Some(RunInProgress));
        assert_eq!(due_refusal(&open, "nope", false), Some(CapabilityNotOffered));
    }

    /// The retried turn inv-2 streaming `text` (open when `open`), after its user message.
    fn streaming(text: &str, open: bool) -> UiState {
        serde_json::from_value(json!({
            "items": [
                {"kind": "user_message", "id": "it-2", "invocation_id": "inv-2", "text": "b", "client_message_id": "u2", "ts": "2026-01-15T10:00:00Z"},
                {"kind": "assistant_markdown", "id": "am-3", "invocation_id": "inv-2", "markdown": text, "streaming": open, "ts": "2026-01-15T10:00:00Z"}
            ],
            "run": {"status": "running", "invocation_id": "inv-2"}
        }))
        .unwrap()
    }

    /// SCRIPT-020's verdicts on the `chat.assistant_message` of the retried run carrying `markdown`,
    /// after `state`: (evaluated, failed).
    fn judge_end(state: &UiState, markdown: &str) -> (usize, usize) {
        let script = serde_json::from_value(json!({"turns": [{"steps": [{"op": "say", "markdown": "first"}],
            "retries": [{"steps": [{"op": "say", "markdown": "Again", "chunks": ["Ag", "ain"]}]}]}]}))
        .expect("a valid script");
        let script = RetrySteps::from_script(&script);
        let track = RetryTrack { retried: Some(("inv-2".into(), HashSet::new(), 5)), ..RetryTrack::default() };
        let end: ServerFrame = serde_json::from_value(json!({"type": "chat.assistant_message", "seq": 9,
            "invocation_id": "inv-2", "item_id": "am-3", "markdown": markdown, "ts": "2026-01-15T10:00:00Z"}))
        .unwrap();
        let mut out = Out::default();
        retried_run(&end, Some(state), &track, Some(&script), &mut out);
        let count = |list: Vec<ReqId>| list.into_iter().filter(|r| *r == SCRIPT_020).count();
        (
            count(out.evaluated.iter().map(|(_, r)| *r).collect()),
            count(out.raws.iter().map(|r| r.requirement).collect()),
        )
    }

    /// A recovery ends a retried run's stream early (`stream::EarlyEnd` judges whether it may): the
    /// message is still the retry's say, so SCRIPT-020 does not charge the early end again.
    #[test]
    fn a_retry_say_ended_early_is_still_the_retry_say() {
        assert_eq!(judge_end(&streaming("Ag", true), "Again"), (1, 0), "the whole say");
        assert_eq!(judge_end(&streaming("Ag", true), "Ag"), (1, 0), "the say ended after its first chunk");
        assert_eq!(judge_end(&streaming("Xy", true), "Xy"), (0, 1), "text no retry says");
        assert_eq!(judge_end(&streaming("Ag", false), "Ag"), (0, 1), "a whole message that is no say");
        assert_eq!(judge_end(&streaming("Ag", true), "Agx"), (0, 1), "an end that is not the streamed text");
    }

    /// SUBAGENT-012: after a retry that kept (or removed) the host `tc-1`, a frame of the retried
    /// run that starts its sub-agent or adds to its transcript is charged; another frame is kept.
    #[test]
    fn a_retried_run_that_runs_a_kept_hosts_sub_agent_breaks_subagent_012() {
        let track = RetryTrack {
            retried: Some(("inv-2".into(), HashSet::from(["tc-1".to_owned()]), 5)),
            hosts: HashSet::from(["tc-1".to_owned()]),
            ..RetryTrack::default()
        };
        let ts = "2026-01-15T10:00:00Z";
        let judge = |frame: serde_json::Value| {
            let frame: ServerFrame = serde_json::from_value(frame).expect("a server frame");
            let mut out = Out::default();
            retried_run(&frame, None, &track, None, &mut out);
            out.raws.iter().map(|r| r.requirement.to_string()).collect::<Vec<_>>()
        };
        let started = json!({"type": "chat.subagent_started", "seq": 6, "tool_call_id": "tc-1", "thread_id": "th-1",
            "input": "again", "ts": ts});
        assert_eq!(judge(started), ["SUBAGENT-012"]);
        let nested = json!({"type": "chat.assistant_message", "seq": 7, "invocation_id": "inv-2", "parent_call_id": "tc-1",
            "item_id": "am-9", "markdown": "again", "ts": ts});
        assert_eq!(judge(nested), ["SUBAGENT-012"]);
        let top = json!({"type": "chat.assistant_message", "seq": 8, "invocation_id": "inv-2", "item_id": "am-9",
            "markdown": "the summary", "ts": ts});
        assert!(judge(top).is_empty());
    }
}
