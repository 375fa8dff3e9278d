//! Cancel and typed answers (since 1.2, `spec/cancel.md`, `spec/tool-calls.md#response_schema`):
//! how a server answers `chat.cancel`, what a cancel closes, and whether responses are checked
//! against their call's `response_schema`. The check owns its state: per connection what its
//! welcome offered and what an accepted cancel must close next, per run the client's requests
//! awaiting an answer, and the schemas and cancelled runs seen.
//!
//! Answers are judged against the state the connection holds when they arrive: frames are in
//! order, so that is the state the server checked the request against (`CANCEL-007`).
//! - CANCEL-001/002/006: a cancel no check refuses (`chatwire_schema::reducer::cancel_refusals`,
//!   the reference's own rule) is answered `chat.cancel_accepted` naming the invocation asked; a
//!   refused one gets the first failing check's code, in `error_order`;
//! - CANCEL-009: on a connection that negotiated 1.0 or 1.1 `chat.cancel` is no client frame: it
//!   is answered `unknown_type` and never carried out (`CANCEL-006` does not bind that connection);
//! - CANCEL-003/004: after `chat.cancel_accepted` come exactly the closing events, in order: the
//!   open stream's end with the text streamed so far, a client dismissal `cancelled` of every open
//!   call of the turn, `chat.run_complete` `cancelled`;
//! - CANCEL-005: no event of a cancelled run follows (until a retry reopens its turn);
//! - TOOL-022/023/024/025: a `response_schema` only on an awaited call; a submitted value that breaks
//!   it is refused (`response_invalid` on 1.2, `invalid_frame` before) naming the first failing pointer,
//!   and one that fits it is not refused for it.

use std::collections::{HashMap, HashSet, VecDeque};

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::chat::tool_call_dismiss::Initiator;
use chatwire_schema::older_minor::RESPONSE_SCHEMA_SINCE;
use chatwire_schema::reducer::{cancel_refusals, CancelScope};
use chatwire_schema::response_schema::ResponseSchema;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::chat::tool_call_response::ResponseOutcome;
use chatwire_schema::requirements::Level;
use chatwire_schema::{error_order, ClientFrame, ErrorCode, Id, ProtocolVersion, ReqId, ServerFrame, UiState};
use serde_json::Value;

use super::cancel_nested::{self, NestedClose, CANCELLED_SUBAGENTS_STAY_CLOSED, SUBAGENT_011};
use crate::check::{Check, ClientCx, ServerCx};
use crate::finding::{CheckDef, Out};

const CANCEL_001: ReqId = ReqId::new("CANCEL-001");
const CANCEL_002: ReqId = ReqId::new("CANCEL-002");
const CANCEL_003: ReqId = ReqId::new("CANCEL-003");
const CANCEL_004: ReqId = ReqId::new("CANCEL-004");
const CANCEL_005: ReqId = ReqId::new("CANCEL-005");
const CANCEL_006: ReqId = ReqId::new("CANCEL-006");
const CANCEL_009: ReqId = ReqId::new("CANCEL-009");
const TOOL_022: ReqId = ReqId::new("TOOL-022");
const TOOL_023: ReqId = ReqId::new("TOOL-023");
const TOOL_024: ReqId = ReqId::new("TOOL-024");
const TOOL_025: ReqId = ReqId::new("TOOL-025");

/// A cancel is accepted exactly when no check refuses it, for the invocation it names.
pub static CANCEL_ANSWERED: CheckDef = CheckDef {
    id: "cancel-answered-as-checked",
    requirements: &[CANCEL_001, CANCEL_002, CANCEL_006, CANCEL_009],
    summary: "a chat.cancel no check refuses gets chat.cancel_accepted naming the invocation it asked for; a refused one the error the first failing check names (capability, invocation, run); on a 1.0 or 1.1 connection unknown_type",
    level: Level::Must,
};

/// An accepted cancel closes the run with exactly the closing events.
pub static CANCEL_CLOSES_RUN: CheckDef = CheckDef {
    id: "cancel-closes-run",
    requirements: &[CANCEL_003, CANCEL_004],
    summary: "after chat.cancel_accepted: the open stream ends with the text streamed so far, every open call of the turn is dismissed cancelled by the client, then run_complete cancelled",
    level: Level::Must,
};

/// Nothing of a cancelled run follows its cancel.
pub static CANCELLED_RUN_STAYS_CLOSED: CheckDef = CheckDef {
    id: "cancelled-run-stays-closed",
    requirements: &[CANCEL_005],
    summary: "no event of a cancelled run (a delta, step, progress, output or settlement of its calls) follows its run_complete cancelled",
    level: Level::Must,
};

/// Responses are checked against their call's schema.
pub static RESPONSE_SCHEMA_ENFORCED: CheckDef = CheckDef {
    id: "response-schema-enforced",
    requirements: &[TOOL_022, TOOL_023, TOOL_024, TOOL_025],
    summary: "response_schema only on awaited calls; a submitted value that breaks it is refused naming the failing pointer (response_invalid on 1.2, invalid_frame before), one that fits it is not refused for it",
    level: Level::Must,
};

/// Most requests remembered until their answer, and most calls and runs remembered per run.
const MAX_REMEMBERED: usize = 1024;

/// A client request whose answer this check judges.
#[derive(Clone, Debug)]
enum Ask {
    Cancel { invocation: String },
    Submit { call: String, value: Value },
}

/// What an accepted cancel still has to close on one connection, in order.
#[derive(Clone, Debug)]
struct Closing {
    invocation: Id,
    reopens: bool,
    /// What the run's running transcripts owe first (since 1.3, `SUBAGENT-010`).
    nested: VecDeque<NestedClose>,
    stream: Option<(Id, String)>,
    /// The top level's open calls (a transcript's are in `nested`).
    calls: VecDeque<Id>,
}

impl Closing {
    /// What an accepted cancel of `invocation` owes, read from the state before it.
    fn of(state: &UiState, invocation: &Id) -> Closing {
        let scope = CancelScope::of(state, invocation);
        Closing {
            invocation: invocation.clone(),
            reopens: scope.reopens,
            nested: cancel_nested::nested_closing(state, invocation),
            stream: scope.stream,
            calls: scope.open_calls.into_iter().filter(|c| !cancel_nested::is_nested(state, c)).collect(),
        }
    }

    /// The streams the cancel ends: the top level's and the transcripts'.
    fn streams(&self) -> impl Iterator<Item = &Id> {
        let nested = self.nested.iter().filter_map(|due| match due {
            NestedClose::StreamEnd { item, .. } => Some(item),
            _ => None,
        });
        self.stream.iter().map(|(item, _)| item).chain(nested)
    }
}

/// A bounded set: the oldest entries are forgotten first.
#[derive(Clone, Debug, Default)]
struct Recent {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl Recent {
    fn insert(&mut self, value: String) {
        if self.set.insert(value.clone()) {
            self.order.push_back(value);
        }
        while self.order.len() > MAX_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
    }
}

impl Check for CancelWatch {
    fn on_client(&mut self, cx: &ClientCx<'_>) {
        if let Some(frame) = cx.frame {
            self.client(cx.conn, frame);
        }
    }

    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        self.server(cx.conn, cx.frame, cx.state(), out);
    }
}

/// The state of the cancel and response-schema checks.
#[derive(Clone, Debug, Default)]
pub(crate) struct CancelWatch {
    asks: HashMap<String, Ask>,
    ask_order: VecDeque<String>,
    /// Per connection: the negotiated version and whether its welcome listed `cancel`.
    welcomes: HashMap<u64, (ProtocolVersion, bool)>,
    closing: HashMap<u64, Closing>,
    schemas: HashMap<String, ResponseSchema>,
    /// Cancelled runs and the calls their cancel dismissed, with the seq that closed them: an
    /// attached connection sees the same closing frames later, under the same seqs.
    cancelled_runs: Recent,
    dismissed_calls: Recent,
    closed_at: HashMap<String, u64>,
    /// The streams an accepted cancel ends, from the moment it is accepted: another connection
    /// (or this one after a cut) may see the end without the closing sequence.
    cancelled_streams: Recent,
    /// Per connection: the stream the latest accepted cancel ended (its text is CANCEL-004's to
    /// judge, not the script's: a cancelled say stops where it was).
    ended_streams: HashMap<u64, Id>,
    /// The invocations a client asked to cancel, with the connection that asked. Only that
    /// connection gets the answer (`ATTACH-005`); another tab of the session sees the run end
    /// through its events alone, and frames of several connections are read in any order, so
    /// it may see the end before the monitor reads the requester's `chat.cancel_accepted`.
    cancels_asked: HashMap<String, u64>,
    /// The submitted responses refused for their value (`response_invalid`, or `invalid_frame`
    /// before 1.2): nothing may answer them but that error (TOOL-023, TOOL-025).
    refused_values: Recent,
    /// The connection that sent the latest `chat.retry`, until a run it reopens starts: another
    /// tab sees a retried cancelled run start again without the `chat.retry_accepted`.
    retry_asked_on: Option<u64>,
    /// The nested calls and the hosts whose transcripts a cancel closed (`SUBAGENT-011`).
    nested_closed: Recent,
}

impl CancelWatch {
    fn ask(&mut self, id: String, ask: Ask) {
        if self.asks.insert(id.clone(), ask).is_none() {
            self.ask_order.push_back(id);
        }
        while self.ask_order.len() > MAX_REMEMBERED {
            if let Some(old) = self.ask_order.pop_front() {
                self.asks.remove(&old);
            }
        }
    }

    fn take(&mut self, id: &Id) -> Option<Ask> {
        self.asks.remove(id.as_str())
    }

    /// Whether the stream `item` of `invocation` was ended by an accepted cancel (on `conn`, or on
    /// another connection attached to the session, whose end `conn` sees too: `ATTACH-004`), or,
    /// on a connection that did not ask, by a cancel another connection asked for: that tab gets
    /// no answer, and the requester's connection judges the end (`CANCEL-004`).
    pub(crate) fn ended_by_cancel(&self, conn: u64, item: &Id, invocation: &Id) -> bool {
        self.ended_streams.get(&conn) == Some(item)
            || self.ended_streams.values().any(|i| i == item)
            || self.cancelled_streams.set.contains(item.as_str())
            || self.cancels_asked.get(invocation.as_str()).is_some_and(|asker| *asker != conn)
    }

    /// Notes a frame the client sent on `conn`: a cancel, a retry, or a submitted response.
    fn client(&mut self, conn: u64, frame: &ClientFrame) {
        match frame {
            ClientFrame::Cancel(c) => {
                let invocation = c.invocation_id.to_string();
                if self.cancels_asked.len() >= MAX_REMEMBERED {
                    self.cancels_asked.clear();
                }
                self.cancels_asked.insert(invocation.clone(), conn);
                self.ask(c.id.to_string(), Ask::Cancel { invocation });
            }
            ClientFrame::Retry(_) => self.retry_asked_on = Some(conn),
            ClientFrame::ToolCallResponse(r) => {
                if let ResponseOutcome::Submit { value, .. } = &r.outcome {
                    self.ask(r.id.to_string(), Ask::Submit { call: r.tool_call_id.to_string(), value: value.clone() });
                }
            }
            _ => {}
        }
    }

    /// Checks one typed server frame of connection `conn`; `state`: the connection's state before it.
    fn server(&mut self, conn: u64, frame: &ServerFrame, state: Option<&UiState>, out: &mut Out) {
        if let ServerFrame::Welcome(w) = frame {
            self.welcomes.insert(conn, (w.version, w.capabilities.contains(&Capability::Cancel)));
            self.closing.remove(&conn);
        }
        let negotiated = self.welcomes.get(&conn).copied();
        let (version, offers) = negotiated.unwrap_or((ProtocolVersion { major: 1, minor: 0 }, false));
        // A version before 1.2 was negotiated: chat.cancel is no client frame there (CANCEL-009).
        // Before any welcome no version is (SESSION-018 answers hello_required).
        let older = negotiated.is_some_and(|(v, _)| v < Capability::Cancel.since());
        // The run's end is checked as a closing event first, then the runs it ended are watched.
        self.after_cancel(conn, frame, out);
        self.closing_event(conn, frame, out);
        match frame {
            ServerFrame::ToolCall(call) => {
                if let Some(schema) = &call.response_schema {
                    if call.awaiting_response {
                        out.eval(&RESPONSE_SCHEMA_ENFORCED, TOOL_022);
                        if self.schemas.len() < MAX_REMEMBERED {
                            self.schemas.insert(call.tool_call_id.to_string(), schema.clone());
                        }
                    } else {
                        out.fail(
                            &RESPONSE_SCHEMA_ENFORCED,
                            TOOL_022,
                            "a call that does not await a response carries a response_schema",
                        );
                    }
                }
            }
            ServerFrame::CancelAccepted(a) => {
                let asked = self.take(&a.in_reply_to);
                if older {
                    out.fail(
                        &CANCEL_ANSWERED,
                        CANCEL_009,
                        format!(
                            "a chat.cancel on a connection that negotiated {version} was carried out: that version has no such frame, so it must be answered unknown_type and stop nothing"
                        ),
                    );
                } else if let (Some(Ask::Cancel { invocation }), Some(state)) = (&asked, state) {
                    let failing = cancel_refusals(state, &a.invocation_id, offers);
                    if a.invocation_id.as_str() != invocation {
                        out.fail(
                            &CANCEL_ANSWERED,
                            CANCEL_001,
                            format!(
                                "chat.cancel_accepted stops invocation {}, not the one the cancel named, {invocation}",
                                a.invocation_id
                            ),
                        );
                    } else if let Some(due) = error_order::first_failing("chat.cancel", &failing) {
                        let requirement = if due == ErrorCode::RunNotActive { CANCEL_001 } else { CANCEL_006 };
                        out.fail(
                            &CANCEL_ANSWERED,
                            requirement,
                            format!("the cancel was accepted, but it must be refused with {}", due.as_str()),
                        );
                    } else {
                        out.eval(&CANCEL_ANSWERED, CANCEL_001);
                        out.eval(&CANCEL_ANSWERED, CANCEL_002);
                    }
                }
                if let Some(state) = state {
                    let closing = Closing::of(state, &a.invocation_id);
                    for item in closing.streams() {
                        self.cancelled_streams.insert(item.to_string());
                    }
                    self.closing.insert(conn, closing);
                }
            }
            ServerFrame::Error(e) => {
                let Some(reply) = e.in_reply_to.as_ref() else { return };
                match self.take(reply) {
                    Some(Ask::Cancel { invocation }) if version >= Capability::Cancel.since() => {
                        let (Some(state), Ok(invocation)) = (state, Id::parse(invocation)) else { return };
                        let failing = cancel_refusals(state, &invocation, offers);
                        match error_order::first_failing("chat.cancel", &failing) {
                            Some(due) if due == e.code => out.eval(&CANCEL_ANSWERED, CANCEL_006),
                            Some(due) => out.fail(
                                &CANCEL_ANSWERED,
                                CANCEL_006,
                                format!(
                                    "the cancel was refused with {}, but the first failing check in order gives {}",
                                    e.code.as_str(),
                                    due.as_str()
                                ),
                            ),
                            None => out.fail(
                                &CANCEL_ANSWERED,
                                CANCEL_002,
                                format!("a cancel no check refuses was answered with the error {}", e.code.as_str()),
                            ),
                        }
                    }
                    Some(Ask::Cancel { .. }) if older => match e.code {
                        ErrorCode::UnknownType => out.eval(&CANCEL_ANSWERED, CANCEL_009),
                        other => out.fail(
                            &CANCEL_ANSWERED,
                            CANCEL_009,
                            format!(
                                "a chat.cancel on a connection that negotiated {version} was refused with {}, not unknown_type",
                                other.as_str()
                            ),
                        ),
                    },
                    Some(Ask::Submit { call, value }) => {
                        if matches!(e.code, ErrorCode::ResponseInvalid | ErrorCode::InvalidFrame) {
                            self.refused_values.insert(reply.to_string());
                        }
                        self.refused_response(&call, &value, e.code, &e.message, version, out)
                    }
                    _ => {}
                }
            }
            ServerFrame::ToolCallComplete(f) => {
                let requirement = if version >= RESPONSE_SCHEMA_SINCE { TOOL_023 } else { TOOL_025 };
                let refused = f.in_reply_to.as_ref().filter(|r| self.refused_values.set.contains(r.as_str()));
                if refused.is_some() && self.schemas.contains_key(f.tool_call_id.as_str()) {
                    out.fail(
                        &RESPONSE_SCHEMA_ENFORCED,
                        requirement,
                        format!(
                            "the call is settled {} in reply to a value the server refused: a refused value commits nothing and the call stays pending",
                            format!("{:?}", f.status).to_lowercase()
                        ),
                    );
                }
                if let Some(Ask::Submit { call, value }) = f.in_reply_to.as_ref().and_then(|r| self.take(r)) {
                    if let Some(violation) = self.schemas.get(&call).and_then(|s| s.check(&value).err()) {
                        out.fail(
                            &RESPONSE_SCHEMA_ENFORCED,
                            requirement,
                            format!("a value that breaks the call's response_schema was accepted ({violation})"),
                        );
                    } else if self.schemas.contains_key(&call) {
                        out.eval(&RESPONSE_SCHEMA_ENFORCED, requirement);
                    }
                }
            }
            _ => {}
        }
    }

    /// TOOL-023/025 on an error answering a submitted value.
    fn refused_response(
        &self,
        call: &str,
        value: &Value,
        code: ErrorCode,
        message: &str,
        version: ProtocolVersion,
        out: &mut Out,
    ) {
        let Some(schema) = self.schemas.get(call) else { return };
        let (due, requirement) = match version >= RESPONSE_SCHEMA_SINCE {
            true => (ErrorCode::ResponseInvalid, TOOL_023),
            false => (ErrorCode::InvalidFrame, TOOL_025),
        };
        match schema.check(value) {
            Err(violation) if code == due && names_pointer(message, &violation.pointer) => {
                out.eval(&RESPONSE_SCHEMA_ENFORCED, requirement);
                out.eval(&RESPONSE_SCHEMA_ENFORCED, TOOL_024);
            }
            Err(violation) if code == due => out.fail(
                &RESPONSE_SCHEMA_ENFORCED,
                TOOL_024,
                format!(
                    "the {} does not start by naming the first failing pointer {:?} as `value{}` ({message})",
                    code.as_str(),
                    violation.pointer,
                    violation.pointer
                ),
            ),
            Err(violation) if matches!(code, ErrorCode::ResponseInvalid | ErrorCode::InvalidFrame) => out.fail(
                &RESPONSE_SCHEMA_ENFORCED,
                requirement,
                format!(
                    "a value that breaks the response_schema ({violation}) was refused with {}, not {}",
                    code.as_str(),
                    due.as_str()
                ),
            ),
            Ok(()) if code == ErrorCode::ResponseInvalid => out.fail(
                &RESPONSE_SCHEMA_ENFORCED,
                TOOL_023,
                "a value that fits the call's response_schema was refused with response_invalid",
            ),
            _ => {}
        }
    }

    /// CANCEL-003/004: the next event after `chat.cancel_accepted` on `conn` is the next closing one.
    fn closing_event(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        if frame.ui_event().is_none() {
            return;
        }
        let Some(closing) = self.closing.get_mut(&conn) else { return };
        if closing.reopens {
            closing.reopens = false;
            if matches!(frame, ServerFrame::RunStarted(r) if r.invocation_id == closing.invocation) {
                out.eval(&CANCEL_CLOSES_RUN, CANCEL_003);
            } else {
                out.fail(
                    &CANCEL_CLOSES_RUN,
                    CANCEL_003,
                    format!(
                        "{} arrived after chat.cancel_accepted of a turn awaiting input, where its chat.run_started was due",
                        frame.type_name()
                    ),
                );
                self.closing.remove(&conn);
            }
            return;
        }
        if let Some(due) = closing.nested.pop_front() {
            if !cancel_nested::judge(&due, frame, out) {
                self.closing.remove(&conn);
                return;
            }
            match due {
                NestedClose::StreamEnd { .. } => {}
                NestedClose::Dismiss { call } => {
                    if self.closed_at.len() < MAX_REMEMBERED * 2 {
                        self.closed_at.insert(call.to_string(), frame.seq().unwrap_or(0));
                    }
                    self.dismissed_calls.insert(call.to_string());
                    self.nested_closed.insert(call.to_string());
                }
                NestedClose::Complete { host } => self.nested_closed.insert(host.to_string()),
            }
            return;
        }
        let expected = if closing.stream.is_some() {
            "the end of the open stream"
        } else if closing.calls.front().is_some() {
            "a client dismissal (reason cancelled) of the next open call"
        } else {
            "chat.run_complete cancelled"
        };
        // The end of the open stream: a text stream's chat.assistant_message, or a reasoning
        // stream's chat.reasoning (since 1.3).
        let stream_end = match frame {
            ServerFrame::AssistantMessage(m) => Some((&m.item_id, &m.markdown)),
            ServerFrame::Reasoning(r) => Some((&r.item_id, &r.text)),
            _ => None,
        };
        let done = match (frame, &closing.stream, closing.calls.front()) {
            (_, Some((item, streamed)), _) if stream_end.is_some_and(|(ended, _)| ended == item) => {
                let text = stream_end.map_or("", |(_, text)| text.as_str());
                if text == streamed {
                    out.eval(&CANCEL_CLOSES_RUN, CANCEL_004);
                } else {
                    out.fail(
                        &CANCEL_CLOSES_RUN,
                        CANCEL_004,
                        format!(
                            "the cancelled stream ends with {} characters, not the {} streamed so far",
                            text.chars().count(),
                            streamed.chars().count()
                        ),
                    );
                }
                self.ended_streams.insert(conn, item.clone());
                closing.stream = None;
                false
            }
            (ServerFrame::ToolCallDismiss(d), None, Some(next)) if &d.tool_call_id == next => {
                if d.initiated_by == Initiator::Client && d.reason.as_deref() == Some("cancelled") {
                    out.eval(&CANCEL_CLOSES_RUN, CANCEL_003);
                } else {
                    out.fail(
                        &CANCEL_CLOSES_RUN,
                        CANCEL_003,
                        "a call the cancel closes is dismissed without initiated_by client and reason cancelled",
                    );
                }
                self.dismissed_calls.insert(d.tool_call_id.to_string());
                if self.closed_at.len() < MAX_REMEMBERED * 2 {
                    self.closed_at.insert(d.tool_call_id.to_string(), d.seq);
                }
                closing.calls.pop_front();
                false
            }
            (ServerFrame::RunComplete(r), None, None) if r.invocation_id == closing.invocation => {
                if r.status == RunCompleteStatus::Cancelled {
                    out.eval(&CANCEL_CLOSES_RUN, CANCEL_003);
                } else {
                    out.fail(
                        &CANCEL_CLOSES_RUN,
                        CANCEL_003,
                        format!("the cancelled run completes {:?}, not cancelled", r.status).to_lowercase(),
                    );
                }
                self.cancelled_runs.insert(r.invocation_id.to_string());
                if self.closed_at.len() < MAX_REMEMBERED * 2 {
                    self.closed_at.insert(r.invocation_id.to_string(), r.seq);
                }
                true
            }
            (other, _, _) => {
                out.fail(
                    &CANCEL_CLOSES_RUN,
                    CANCEL_003,
                    format!("{} arrived after chat.cancel_accepted where {expected} was due", other.type_name()),
                );
                true
            }
        };
        if done {
            self.closing.remove(&conn);
        }
    }

    /// CANCEL-005: no event of a cancelled run after its end; a retry of the turn reopens it. The
    /// requester's connection sees the reopening as `chat.retry_accepted`; another connection of
    /// the session only as the run starting again after a retry was asked (its frames may be read
    /// before the requester's answer), so there that `chat.run_started` reopens it.
    fn after_cancel(&mut self, conn: u64, frame: &ServerFrame, out: &mut Out) {
        if let ServerFrame::RetryAccepted(r) = frame {
            self.cancelled_runs.set.remove(r.invocation_id.as_str());
            self.cancels_asked.remove(r.invocation_id.as_str());
            self.retry_asked_on = None;
            return;
        }
        if let ServerFrame::RunStarted(r) = frame {
            let retried_elsewhere = self.retry_asked_on.is_some_and(|asker| asker != conn);
            if retried_elsewhere && self.cancelled_runs.set.contains(r.invocation_id.as_str()) {
                self.cancelled_runs.set.remove(r.invocation_id.as_str());
                self.cancels_asked.remove(r.invocation_id.as_str());
                self.retry_asked_on = None;
                out.eval(&CANCELLED_RUN_STAYS_CLOSED, CANCEL_005);
                return;
            }
        }
        if frame.ui_event().is_none() {
            return;
        }
        // A frame at or before the seq that closed it is a closing frame seen on another connection.
        let seq = frame.seq().unwrap_or(u64::MAX);
        let after_close = |id: &str| self.closed_at.get(id).is_none_or(|closed| seq > *closed);
        let of_run = frame
            .invocation_id()
            .is_some_and(|i| self.cancelled_runs.set.contains(i.as_str()) && after_close(i.as_str()));
        let of_call = !matches!(frame, ServerFrame::ToolCallDismiss(_))
            && frame
                .tool_call_id()
                .is_some_and(|c| self.dismissed_calls.set.contains(c.as_str()) && after_close(c.as_str()));
        let nested = |c: &Id| self.nested_closed.set.contains(c.as_str());
        // A sub-agent's frame is charged to SUBAGENT-011, the rule that names it, not CANCEL-005.
        let of_subagent = cancel_nested::of_subagent(frame, nested);
        if (of_run || of_call) && of_subagent {
            out.fail(
                &CANCELLED_SUBAGENTS_STAY_CLOSED,
                SUBAGENT_011,
                format!("{} of a sub-agent whose run was cancelled", frame.type_name()),
            );
        } else if of_run || of_call {
            out.fail(
                &CANCELLED_RUN_STAYS_CLOSED,
                CANCEL_005,
                format!("{} of a run that was cancelled", frame.type_name()),
            );
        } else if !self.cancelled_runs.set.is_empty() {
            out.eval(&CANCELLED_RUN_STAYS_CLOSED, CANCEL_005);
            if !self.nested_closed.set.is_empty() {
                out.eval(&CANCELLED_SUBAGENTS_STAY_CLOSED, SUBAGENT_011);
            }
        }
    }
}

/// Whether `message` names `pointer` as `TOOL-023` writes it: `value` followed by the pointer and
/// a space (`value/age …`), or `the value ` for the whole value (the empty pointer).
fn names_pointer(message: &str, pointer: &str) -> bool {
    match pointer {
        "" => message.starts_with("the value "),
        pointer => message
            .strip_prefix("value")
            .and_then(|rest| rest.strip_prefix(pointer))
            .is_some_and(|rest| rest.starts_with(' ')),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TS: &str = "2026-01-15T10:00:00Z";

    fn server(watch: &mut CancelWatch, frame: Value) -> Vec<String> {
        let frame: ServerFrame = serde_json::from_value(frame).expect("a server frame");
        let mut out = Out::default();
        watch.server(0, &frame, None, &mut out);
        out.raws.iter().map(|r| r.requirement.to_string()).collect()
    }

    /// A 1.2 connection with a form whose response_schema asks for a name; `r1` submitted a value
    /// without one and was refused for it.
    fn refused() -> CancelWatch {
        let mut watch = CancelWatch::default();
        server(
            &mut watch,
            json!({"type": "session.welcome", "seq": 1, "in_reply_to": "h1", "version": "1.2", "session_id": "s-1",
                "resume_token": "t-1", "resumed": false, "capabilities": ["cancel"], "limits": {"max_frame_bytes": 1048576}}),
        );
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let call = json!({"type": "chat.tool_call", "seq": 5, "invocation_id": "inv-1", "tool_call_id": "tc-1",
            "call_index": 0, "tool_name": "ask", "interaction_type": "ui_tool", "awaiting_response": true,
            "display": "inline", "payload": {}, "response_schema": schema, "ts": TS});
        assert_eq!(server(&mut watch, call), Vec::<String>::new());
        for (id, value) in [("r1", json!({"name": 5})), ("r2", json!({"name": "ann"}))] {
            let response: ClientFrame = serde_json::from_value(json!({"type": "chat.tool_call_response", "id": id,
                "tool_call_id": "tc-1", "outcome": {"action": "submit", "value": value}}))
            .expect("a client frame");
            watch.client(0, &response);
        }
        let error = json!({"type": "error", "seq": 7, "in_reply_to": "r1", "code": "response_invalid",
            "message": "value/name breaks the call's response_schema (type): expected string", "fatal": false});
        assert_eq!(server(&mut watch, error), Vec::<String>::new());
        watch
    }

    /// A refused value commits nothing: a settlement answering it breaks TOOL-023 (the call stays
    /// pending), charged by this check, so the step that meets the reopened run is not charged to
    /// the pointer rule (TOOL-024) it was waiting to prove. The settlement of a fitting value is
    /// no finding.
    #[test]
    fn a_call_settled_in_reply_to_a_refused_value_breaks_tool_023() {
        let mut watch = refused();
        let settled = json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": "tc-1", "status": "failed",
            "error": "rejected", "in_reply_to": "r1", "ts": TS});
        assert_eq!(server(&mut watch, settled), ["TOOL-023"]);

        let mut watch = refused();
        let settled = json!({"type": "chat.tool_call_complete", "seq": 9, "tool_call_id": "tc-1", "status": "completed",
            "in_reply_to": "r2", "ts": TS});
        assert_eq!(server(&mut watch, settled), Vec::<String>::new());
    }

    #[test]
    fn a_refusal_names_its_pointer_at_the_start_of_its_message() {
        assert!(names_pointer("value/age breaks the call's response_schema (minimum): less than 0", "/age"));
        assert!(names_pointer("the value breaks the call's response_schema (type): expected object", ""));
        assert!(names_pointer("value/first name breaks it", "/first name"));
        assert!(!names_pointer("value/tags/10 breaks it", "/tags/1"), "a longer pointer is another part");
        assert!(!names_pointer("value/age breaks it", ""), "the whole value is named as such");
        assert!(!names_pointer("the value breaks it, at value/age", "/age"), "the pointer starts the message");
        assert!(!names_pointer("/age: less than 0", "/age"));
    }
}
