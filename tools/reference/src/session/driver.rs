//! The run driver: plays the current turn's plan step by step, each step committed with the
//! cursor that says it is done.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::chat::assistant_message::AssistantMessage;
use chatwire_schema::chat::assistant_message_delta::AssistantMessageDelta;
use chatwire_schema::chat::reasoning::Reasoning;
use chatwire_schema::chat::reasoning_delta::ReasoningDelta;
use chatwire_schema::chat::run_complete::{RunComplete, RunCompleteStatus};
use chatwire_schema::chat::run_started::RunStarted;
use chatwire_schema::chat::tool_call::ToolCall;
use chatwire_schema::chat::tool_call_complete::{CompletionStatus, ToolCallComplete};
use chatwire_schema::chat::tool_call_dismiss::{Initiator, ToolCallDismiss};
use chatwire_schema::chat::tool_output::ToolOutput;
use chatwire_schema::chat::tool_progress::ToolProgress;
use chatwire_schema::script::{settle_sequence, ScriptEnd, ScriptOutcome, ScriptStep, ScriptToolCall};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::usage::Usage;
use chatwire_schema::{DisplayItem, Id, RunStatus, ServerFrame, ToolCallStatus};

use super::change::{Change, Unit};
use super::nested::{self, Closing};
use super::outside::send_outside_state;
use super::pipeline::{batch_has_room, begin_batch, commit, flush_batch};
use super::replica::sync;
use super::state::{DriverLaunch, Inner, Session};
use crate::agent::{BatchCursor, Cursor, StreamCursor};
use crate::plan::Chunks;
use crate::protocol::{EmitError, CONFLICT_RETRIES};
use crate::util::{now_ms, random_id, rfc3339_now};

/// A `chat.run_complete` for `invocation`.
pub(super) fn run_complete(
    invocation: &Id,
    status: RunCompleteStatus,
    reason: &str,
    error: Option<&str>,
) -> ServerFrame {
    ServerFrame::RunComplete(RunComplete {
        seq: 0,
        invocation_id: invocation.clone(),
        status,
        reason: Some(reason.to_owned()),
        error: error.map(str::to_owned),
        usage: None,
        ts: rfc3339_now(),
    })
}

/// The `chat.run_complete` that ends the current run slice: [`run_complete`] carrying what the
/// slice's `usage` steps added up to (`SCRIPT-028`, `USAGE-003`), none when it had none.
pub(super) fn slice_end(
    cursor: &Cursor,
    invocation: &Id,
    status: RunCompleteStatus,
    reason: &str,
    error: Option<&str>,
) -> ServerFrame {
    let mut frame = run_complete(invocation, status, reason, error);
    if let ServerFrame::RunComplete(end) = &mut frame {
        end.usage = cursor.usage.clone();
    }
    frame
}

/// A `chat.run_started` for `invocation`.
pub(super) fn run_started(invocation: &Id) -> ServerFrame {
    ServerFrame::RunStarted(RunStarted { seq: 0, invocation_id: invocation.clone(), ts: rfc3339_now() })
}

/// Ends recovery's hold on the session's driver. A driver started during recovery plays every
/// step that is due now before this returns, so that recovery is finished before any resume is
/// answered (RESUME-014); what has to wait (a `wait` step, a running tool) continues on a task.
pub(super) async fn play_held_driver(session: &Arc<Session>) {
    let (requested, epoch) = {
        let mut g = session.inner.lock().await;
        let requested = g.driver_launch == DriverLaunch::HeldByRecovery { requested: true };
        g.driver_launch = DriverLaunch::Spawn;
        (requested, g.driver_epoch)
    };
    if !requested {
        return;
    }
    match play_due_steps(session, epoch).await {
        Some(wait) => spawn_driver(session, Some(wait), epoch),
        None => session.shared.evict_if_quiescent(session).await,
    }
}

/// The run driver as the core's tasks name it (`state::Tasks`): plays the turn from where its
/// cursor stands, then lets the session leave memory if nothing else holds it.
pub(crate) fn drive_task(session: Arc<Session>, epoch: u64) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        drive(&session, None, epoch).await;
        session.shared.evict_if_quiescent(&session).await;
    })
}

fn spawn_driver(session: &Arc<Session>, waiting: Option<Wait>, epoch: u64) {
    let s = session.clone();
    tokio::spawn(async move {
        drive(&s, waiting, epoch).await;
        s.shared.evict_if_quiescent(&s).await;
    });
}

/// What the driver does next.
enum Next {
    /// Look again right away.
    Continue,
    /// Sleep, then look again.
    Sleep(u64),
    /// Run a self-settling tool: wait `run_ms`, then report and settle it.
    RunTool { call: Box<ScriptToolCall>, id: Id },
    /// The slice is over (or something went wrong).
    Stop,
}

/// What the turn waits for before it goes on.
enum Wait {
    /// A `wait` step.
    Sleep(u64),
    /// A self-settling tool that runs for `call.run_ms`.
    Tool { call: Box<ScriptToolCall>, id: Id },
}

/// The run driver: executes the current turn's plan step by step, each step committed with the
/// cursor that says it is done, starting with `waiting` when the turn waits for something.
async fn drive(session: &Arc<Session>, mut waiting: Option<Wait>, epoch: u64) {
    // Bounded: every iteration waits once and plays the steps due after it; a plan has finitely
    // many steps.
    loop {
        match waiting.take() {
            None => {}
            Some(Wait::Sleep(ms)) => tokio::time::sleep(Duration::from_millis(ms)).await,
            Some(Wait::Tool { call, id }) => {
                tokio::time::sleep(Duration::from_millis(call.run_ms)).await;
                let mut g = session.inner.lock().await;
                if g.driver_epoch != epoch {
                    // Cancelled while the tool ran: its result goes nowhere (CANCEL-005).
                    if session.shared.faults.decide.settles_after_cancel() {
                        settle_after_cancel(session, &mut g, &call, &id).await;
                    }
                    return;
                }
                match settle_tool(session, &mut g, &call, &id).await {
                    Ok(()) => {}
                    // The turn looks again on the newer state (the tool runs again if it is still due).
                    Err(e) if e.is_contention() => {
                        if !after_contention(session, &mut g).await {
                            return;
                        }
                    }
                    Err(e) => {
                        abandon_turn(session, &mut g, &e).await;
                        g.driver_active = false;
                        return;
                    }
                }
            }
        }
        match play_due_steps(session, epoch).await {
            Some(wait) => waiting = Some(wait),
            None => return,
        }
    }
}

/// Plays the steps that are due now under the session lock, in batches committed together
/// (`pipeline/batch.rs`); returns what the turn waits for next, or `None` once the slice is over
/// (the driver is then inactive).
async fn play_due_steps(session: &Arc<Session>, epoch: u64) -> Option<Wait> {
    // Bounded: every batch commits progress or returns (a plan has finitely many steps), or met
    // another replica's commit, at most CONFLICT_RETRIES times in a row.
    let mut contended = 0;
    loop {
        let mut g = session.inner.lock().await;
        if g.driver_epoch != epoch {
            // A cancel stopped this driver; a later run has a driver of its own.
            return None;
        }
        begin_batch(session, &mut g);
        let played = play_batch(session, &mut g, &mut contended).await;
        let flushed = flush_batch(session, &mut g).await;
        g.batch = None;
        if let Err(e) = flushed {
            abandon_turn(session, &mut g, &e).await;
            g.driver_active = false;
            return None;
        }
        match played {
            Played::Full => {}
            Played::Done(wait) => return wait,
        }
    }
}

/// How a batch of steps ended.
enum Played {
    /// The batch is full and more steps are due.
    Full,
    /// The turn waits for something (`Some`), or the slice is over.
    Done(Option<Wait>),
}

/// Plays steps under the lock while they are due and the batch has room (one step where the
/// store does not batch).
async fn play_batch(session: &Arc<Session>, g: &mut Inner, contended: &mut usize) -> Played {
    loop {
        let next = match next_step(session, g).await {
            Ok(next) => {
                *contended = 0;
                next
            }
            Err(e) if e.is_contention() && *contended < CONFLICT_RETRIES => {
                *contended += 1;
                match after_contention(session, g).await {
                    true => Next::Continue,
                    false => return Played::Done(None),
                }
            }
            Err(e) => {
                abandon_turn(session, g, &e).await;
                Next::Stop
            }
        };
        match next {
            Next::Continue | Next::Sleep(0) => {}
            Next::Stop => {
                g.driver_active = false;
                return Played::Done(None);
            }
            Next::Sleep(ms) => return Played::Done(Some(Wait::Sleep(ms))),
            Next::RunTool { call, id } if call.run_ms == 0 => match settle_tool(session, g, &call, &id).await {
                Ok(()) => {}
                Err(e) if e.is_contention() => {
                    if !after_contention(session, g).await {
                        return Played::Done(None);
                    }
                }
                Err(e) => {
                    abandon_turn(session, g, &e).await;
                    g.driver_active = false;
                    return Played::Done(None);
                }
            },
            Next::RunTool { call, id } => return Played::Done(Some(Wait::Tool { call, id })),
        }
        if !batch_has_room(g) {
            return Played::Full;
        }
    }
}

/// A commit of the driver met another replica's (`replica.rs`): unless this replica lost the
/// run (fenced), the session is brought up to date and the driver looks again.
async fn after_contention(session: &Arc<Session>, g: &mut Inner) -> bool {
    if g.lease.is_none() {
        // Fenced: another replica drives the run now (`CLUSTER-003`).
        g.driver_active = false;
        return false;
    }
    sync(session, g).await;
    true
}

/// A step failed (e.g. the agent planned a frame the reducer refuses): the run ends `failed`,
/// reason `agent_error`, rather than staying `running` forever.
async fn abandon_turn(session: &Arc<Session>, g: &mut Inner, cause: &EmitError) {
    eprintln!("chatwire-reference: session {}: turn abandoned: {cause}", session.id);
    let Some(invocation) = g.state.run.invocation_id.clone().filter(|_| g.state.run.status == RunStatus::Running)
    else {
        return;
    };
    let error = format!("the agent step could not be carried out: {cause}");
    if let Err(e) = end_run_failed(session, g, invocation, "agent_error", &error).await {
        eprintln!("chatwire-reference: session {}: cannot end the abandoned run: {e}", session.id);
    }
}

async fn next_step(session: &Arc<Session>, g: &mut Inner) -> Result<Next, EmitError> {
    if g.evicted {
        // Discarded after a failure (`registry::discard`): the next load continues the turn.
        return Ok(Next::Stop);
    }
    let invocation = match (&g.state.run.invocation_id, &g.cursor.invocation_id) {
        (Some(run), Some(cur)) if run == cur && g.state.run.status == RunStatus::Running => run.clone(),
        _ => return Ok(Next::Stop),
    };
    // The plan is shared: a step is read where it is, not copied (a streamed `say`'s chunks are
    // read once per chunk).
    let plan = g.plan.clone();
    let planned = plan.as_ref().and_then(|p| nested::current_step(p, &g.cursor));
    // The call whose sub-agent plays now: every item the step makes goes into its transcript.
    let parent = nested::host(&g.cursor).cloned();
    let step = planned.map(|s| s.op);
    let ended = g.cursor.ended();
    if let Some(batch) = &g.cursor.batch {
        let Some(ScriptStep::ToolCalls { calls, settle_order }) = step else {
            return Err(EmitError::NotAnEvent("cursor points into a batch but the step is not tool_calls"));
        };
        let order = settle_sequence(calls, settle_order.as_deref());
        if let Some(&index) = order.get(batch.settled) {
            let index = index as usize;
            return Ok(Next::RunTool { call: Box::new(calls[index].clone()), id: batch.call_ids[index].clone() });
        }
        let waits = match &parent {
            Some(host) => nested::transcript_has_open_call(&g.state, host),
            None => g.state.open_tool_calls(Some(&invocation)).next().is_some(),
        };
        if waits {
            let frame =
                slice_end(&g.cursor, &invocation, RunCompleteStatus::AwaitingInput, "awaiting_user_input", None);
            // The next slice (after the answer) adds up its own usage.
            let cursor = Cursor { usage: None, ..g.cursor.clone() };
            commit(session, g, Change { units: vec![Unit::Event(frame)], cursor: Some(cursor), ..Change::default() })
                .await?;
            return Ok(Next::Stop);
        }
        g.cursor.batch = None;
        g.cursor.step += 1;
        return Ok(Next::Continue);
    }
    let ts = rfc3339_now();
    let (units, cursor, add_timers) = match step {
        None if g.plan.is_none() => {
            let frame = run_complete(
                &invocation,
                RunCompleteStatus::Failed,
                "script_exhausted",
                Some("the script has no turn for this message"),
            );
            (vec![Unit::Event(frame)], ended, Vec::new())
        }
        None if parent.is_some() => {
            // The sub-agent's steps are over: its run ends, then its host settles (SCRIPT-029).
            let (Some(sub), Some(call), Some(host), Some(cursor)) = (
                plan.as_deref().and_then(|p| nested::playing_subagent(p, &g.cursor)),
                plan.as_deref().and_then(|p| nested::playing_host(p, &g.cursor)),
                parent.as_ref(),
                nested::left(&g.cursor),
            ) else {
                return Err(EmitError::NotAnEvent("the cursor is inside a sub-agent the plan does not hold"));
            };
            let units = vec![Unit::Event(nested::completed(host, sub)), Unit::Event(settlement(call, host, ts)?)];
            (units, cursor, Vec::new())
        }
        None => (
            vec![Unit::Event(slice_end(&g.cursor, &invocation, RunCompleteStatus::Completed, "completed", None))],
            ended,
            Vec::new(),
        ),
        Some(ScriptStep::Say { markdown, chunk_delay_ms, .. }) => {
            // The chunks as the plan holds them (offsets into the markdown).
            let chunks = planned.map_or(Chunks::of(&[]), |s| s.chunks);
            if !chunks.is_empty() && session.shared.streams() {
                let streamed = Streamed::Say { markdown };
                return stream_step(session, g, invocation, streamed, chunks, chunk_delay_ms.unwrap_or(0)).await;
            }
            let frame = ServerFrame::AssistantMessage(AssistantMessage {
                parent_call_id: parent.clone(),
                seq: 0,
                invocation_id: invocation.clone(),
                item_id: random_id("am", 8),
                markdown: markdown.clone(),
                ts,
            });
            (vec![Unit::Event(frame)], Cursor { step: g.cursor.step + 1, ..g.cursor.clone() }, Vec::new())
        }
        Some(ScriptStep::Reason { text, chunks, chunk_delay_ms, encrypted, redacted }) => {
            if !session.shared.implements(&Capability::Reasoning) {
                // SCRIPT-027: a server that does not implement reasoning plays the step as nothing.
                g.cursor.step += 1;
                return Ok(Next::Continue);
            }
            // A reason step's chunks are the step's own (the plan holds only a say's as offsets).
            let chunks = Chunks::of(chunks.as_deref().unwrap_or_default());
            let streamed = Streamed::Reason { text, encrypted: encrypted.as_deref(), redacted: *redacted };
            if !chunks.is_empty() && !*redacted && session.shared.streams() {
                return stream_step(session, g, invocation, streamed, chunks, chunk_delay_ms.unwrap_or(0)).await;
            }
            let frame = streamed.end(invocation.clone(), random_id(streamed.id_prefix(), 8), ts);
            let frame = nested::in_transcript(frame, parent.as_ref());
            (vec![Unit::Event(frame)], Cursor { step: g.cursor.step + 1, ..g.cursor.clone() }, Vec::new())
        }
        Some(ScriptStep::Usage(usage)) => {
            // No frame (SCRIPT-028): the sum rides on the next commit's cursor, and a crash before
            // it redoes the step along with everything else since that commit.
            let sum = g.cursor.usage.as_ref().filter(|_| session.shared.faults.decide.sums_usage());
            g.cursor.usage = Some(added_usage(sum, usage));
            g.cursor.step += 1;
            return Ok(Next::Continue);
        }
        Some(ScriptStep::Wait { ms }) => {
            // Not committed on its own: after a crash during the wait, the wait is redone.
            g.cursor.step += 1;
            return Ok(Next::Sleep(*ms));
        }
        Some(ScriptStep::End { .. }) if parent.is_some() => {
            return Err(EmitError::NotAnEvent("a sub-agent's steps hold no end step (EndInSubagent)"));
        }
        Some(ScriptStep::End { status, error }) => {
            let (status, reason) = match status {
                ScriptEnd::Completed => (RunCompleteStatus::Completed, "completed"),
                ScriptEnd::Failed => (RunCompleteStatus::Failed, "failed"),
                ScriptEnd::Cancelled => (RunCompleteStatus::Cancelled, "cancelled"),
            };
            let frame = slice_end(&g.cursor, &invocation, status, reason, error.as_deref());
            (vec![Unit::Event(frame)], ended, Vec::new())
        }
        Some(ScriptStep::ToolCalls { calls, .. }) => {
            let (ids, units, timers) = call_batch(calls, parent.as_ref(), &invocation, &ts);
            let cursor = Cursor { batch: Some(BatchCursor { call_ids: ids, settled: 0 }), ..g.cursor.clone() };
            (units, cursor, timers)
        }
    };
    commit(session, g, Change { units, cursor: Some(cursor), add_timers, ..Change::default() }).await?;
    Ok(Next::Continue)
}

/// A `tool_calls` step's calls as one batch (`SCRIPT-010`): their ids, the units to commit (the
/// batch, then the output of each call that awaits the client) and the expiry timers to add.
fn call_batch(
    calls: &[ScriptToolCall],
    parent: Option<&Id>,
    invocation: &Id,
    ts: &str,
) -> (Vec<Id>, Vec<Unit>, Vec<(Id, i64)>) {
    let ids: Vec<Id> = calls.iter().map(|_| random_id("tc", 8)).collect();
    let batch = calls
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(index, (c, id))| {
            ServerFrame::ToolCall(ToolCall {
                parent_call_id: parent.cloned(),
                seq: 0,
                invocation_id: invocation.clone(),
                tool_call_id: id.clone(),
                corr: None,
                tool_name: c.tool_name.clone(),
                component_type: c.component_type.clone(),
                workflow_name: c.workflow_name.clone(),
                interaction_type: c.interaction_type,
                awaiting_response: c.outcome.awaits_response(),
                display: c.display,
                payload: c.payload.clone(),
                response_schema: c.response_schema.clone(),
                call_index: index as u32,
                ts: ts.to_owned(),
            })
        })
        .collect();
    let mut units = vec![Unit::Batch(batch)];
    let mut timers = Vec::new();
    for (c, id) in calls.iter().zip(&ids) {
        if let ScriptOutcome::AwaitResponse { expire_after_ms, .. } = &c.outcome {
            units.extend(output_units(c, id, ts));
            if let Some(ms) = expire_after_ms {
                timers.push((id.clone(), now_ms().saturating_add(i64::try_from(*ms).unwrap_or(i64::MAX))));
            }
        }
    }
    (ids, units, timers)
}

/// A step that may stream: a `say` (`SCRIPT-019`) or a `reason` (`SCRIPT-027`), and the frames
/// it is played as.
#[derive(Clone, Copy)]
enum Streamed<'a> {
    Say { markdown: &'a str },
    Reason { text: &'a str, encrypted: Option<&'a str>, redacted: bool },
}

impl Streamed<'_> {
    /// The prefix of the ids of the items it makes.
    fn id_prefix(&self) -> &'static str {
        match self {
            Streamed::Say { .. } => "am",
            Streamed::Reason { .. } => "rs",
        }
    }

    /// One chunk of its stream.
    fn delta(&self, invocation: Id, item_id: Id, chunk: &str, ts: String) -> ServerFrame {
        match self {
            Streamed::Say { .. } => ServerFrame::AssistantMessageDelta(AssistantMessageDelta {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation,
                item_id,
                delta: chunk.to_owned(),
                ts,
            }),
            Streamed::Reason { .. } => ServerFrame::ReasoningDelta(ReasoningDelta {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation,
                item_id,
                text: chunk.to_owned(),
                ts,
            }),
        }
    }

    /// The whole item, or the end of its stream: a redacted reasoning carries no text
    /// (`REASON-003`), and the payload goes out as the script gave it (`REASON-004`).
    fn end(&self, invocation: Id, item_id: Id, ts: String) -> ServerFrame {
        match *self {
            Streamed::Say { markdown } => ServerFrame::AssistantMessage(AssistantMessage {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation,
                item_id,
                markdown: markdown.to_owned(),
                ts,
            }),
            Streamed::Reason { text, encrypted, redacted } => ServerFrame::Reasoning(Reasoning {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation,
                item_id,
                text: if redacted { String::new() } else { text.to_owned() },
                redacted,
                encrypted: encrypted.map(str::to_owned),
                ts,
            }),
        }
    }
}

/// One move of a streamed step (`SCRIPT-019`, `SCRIPT-027`): the next chunk as a delta, each its
/// own commit (waiting `delay_ms` before every chunk after the first), then the end frame with the
/// whole text and the same item id. A restart in between ends the stream where it stands and
/// fails the run (`STREAM-004`, in recovery), so the cursor's stream progress only matters within
/// one process.
async fn stream_step(
    session: &Arc<Session>,
    g: &mut Inner,
    invocation: Id,
    streamed: Streamed<'_>,
    chunks: Chunks<'_>,
    delay_ms: u64,
) -> Result<Next, EmitError> {
    let (item_id, sent) = match &g.cursor.stream {
        Some(stream) => (stream.item_id.clone(), stream.sent),
        None => (random_id(streamed.id_prefix(), 8), 0),
    };
    let ts = rfc3339_now();
    let parent = nested::host(&g.cursor).cloned();
    let Some(chunk) = chunks.get(sent) else {
        let frame = nested::in_transcript(streamed.end(invocation, item_id, ts), parent.as_ref());
        let cursor = Cursor { step: g.cursor.step + 1, stream: None, ..g.cursor.clone() };
        commit(session, g, Change { units: vec![Unit::Event(frame)], cursor: Some(cursor), ..Change::default() })
            .await?;
        return Ok(Next::Continue);
    };
    let frame = nested::in_transcript(streamed.delta(invocation, item_id.clone(), chunk, ts), parent.as_ref());
    let cursor = Cursor { stream: Some(StreamCursor { item_id, sent: sent + 1 }), ..g.cursor.clone() };
    commit(session, g, Change { units: vec![Unit::Event(frame)], cursor: Some(cursor), ..Change::default() }).await?;
    Ok(if sent + 1 < chunks.len() { Next::Sleep(delay_ms) } else { Next::Continue })
}

/// The slice's usage after a `usage` step (`SCRIPT-028`). A sum past 2^53 − 1, which the reducer
/// would refuse on the slice's end (`STATE-063`), keeps the largest integer instead: the script
/// asked for more than the protocol can carry, and the run still ends.
fn added_usage(sum: Option<&Usage>, step: &Usage) -> Usage {
    let Some(sum) = sum else { return step.clone() };
    sum.plus(step).unwrap_or_else(|e| {
        eprintln!("chatwire-reference: a usage step cannot be added ({e}); the slice keeps its usage so far");
        sum.clone()
    })
}

/// The `chat.tool_output` frames of a scripted call: one per approval, then one with the rest.
fn output_units(call: &ScriptToolCall, id: &Id, ts: &str) -> Vec<Unit> {
    let Some(out) = &call.output else { return Vec::new() };
    let blank = ToolOutput {
        seq: 0,
        tool_call_id: id.clone(),
        command: None,
        approval: None,
        stdout: None,
        stderr: None,
        exit_code: None,
        ts: ts.to_owned(),
    };
    // SCRIPT-011: one frame per present part, in the order command, approvals, stdout, stderr, exit_code.
    let part = |edit: &dyn Fn(&mut ToolOutput)| {
        let mut frame = blank.clone();
        edit(&mut frame);
        Unit::Event(ServerFrame::ToolOutput(frame))
    };
    let mut units = Vec::new();
    if let Some(command) = &out.command {
        units.push(part(&|f| f.command = Some(command.clone())));
    }
    for approval in &out.approvals {
        units.push(part(&|f| f.approval = Some(*approval)));
    }
    if let Some(stdout) = &out.stdout {
        units.push(part(&|f| f.stdout = Some(stdout.clone())));
    }
    if let Some(stderr) = &out.stderr {
        units.push(part(&|f| f.stderr = Some(stderr.clone())));
    }
    if let Some(code) = out.exit_code {
        units.push(part(&|f| f.exit_code = Some(code)));
    }
    units
}

/// Reports a self-settling tool's progress and output, then settles it per its outcome; a call
/// hosting a sub-agent starts it instead, and settles once its steps are played (`SCRIPT-029`).
async fn settle_tool(session: &Arc<Session>, g: &mut Inner, call: &ScriptToolCall, id: &Id) -> Result<(), EmitError> {
    let Some(batch) = g.cursor.batch.clone() else { return Ok(()) };
    let ts = rfc3339_now();
    let mut units: Vec<Unit> = call
        .progress
        .iter()
        .map(|p| {
            Unit::Event(ServerFrame::ToolProgress(ToolProgress {
                seq: 0,
                tool_call_id: id.clone(),
                message: p.message.clone(),
                fraction: p.fraction,
                ts: ts.clone(),
            }))
        })
        .collect();
    if let Some(sub) = call.subagent.as_deref().filter(|_| session.shared.implements(&Capability::Subagents)) {
        let answers = session.shared.faults.decide.answers_return();
        units.push(Unit::Event(nested::started(&g.state, id, sub, answers)));
        let cursor = nested::entered(&g.cursor, id).ok_or(EmitError::NotAnEvent("a sub-agent starts from a batch"))?;
        return commit(session, g, Change { units, cursor: Some(cursor), ..Change::default() }).await;
    }
    units.extend(output_units(call, id, &ts));
    units.push(Unit::Event(settlement(call, id, ts)?));
    let cursor = Cursor { batch: Some(BatchCursor { settled: batch.settled + 1, ..batch }), ..g.cursor.clone() };
    commit(session, g, Change { units, cursor: Some(cursor), ..Change::default() }).await
}

/// The frame that settles a self-settling call per its outcome.
fn settlement(call: &ScriptToolCall, id: &Id, ts: String) -> Result<ServerFrame, EmitError> {
    Ok(match &call.outcome {
        ScriptOutcome::Result { value, summary } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: id.clone(),
            status: CompletionStatus::Completed,
            result: Some(value.clone()),
            error: None,
            summary: summary.clone(),
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::Error { message } => ServerFrame::ToolCallComplete(ToolCallComplete {
            seq: 0,
            tool_call_id: id.clone(),
            status: CompletionStatus::Failed,
            result: None,
            error: Some(message.clone()),
            summary: None,
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::Dismiss { reason } => ServerFrame::ToolCallDismiss(ToolCallDismiss {
            seq: 0,
            tool_call_id: id.clone(),
            initiated_by: Initiator::Server,
            reason: reason.clone(),
            in_reply_to: None,
            ts,
        }),
        ScriptOutcome::AwaitResponse { .. } => return Err(EmitError::NotAnEvent("an awaited call cannot self-settle")),
    })
}

/// A planted fault's settlement of a tool whose run was cancelled: sent outside the state, as the
/// reducer refuses it (the call was dismissed by the cancel).
async fn settle_after_cancel(session: &Arc<Session>, g: &mut Inner, call: &ScriptToolCall, id: &Id) {
    let value = match &call.outcome {
        ScriptOutcome::Result { value, .. } => value.clone(),
        _ => serde_json::Value::Null,
    };
    let frame = ServerFrame::ToolCallComplete(ToolCallComplete {
        seq: 0,
        tool_call_id: id.clone(),
        status: CompletionStatus::Completed,
        result: Some(value),
        error: None,
        summary: None,
        in_reply_to: None,
        ts: rfc3339_now(),
    });
    let conns: Vec<_> = g.attached.iter().map(|a| a.conn.clone()).collect();
    for conn in conns {
        send_outside_state(session, g, &conn, frame.clone()).await;
    }
}

/// Ends a run that cannot go on (a crash while a tool ran or a stream was open, or an agent step
/// the protocol refuses): an open stream ends as it stands, running calls fail with `error`,
/// pending ones are dismissed by the server, the run fails.
pub(super) async fn end_run_failed(
    session: &Arc<Session>,
    g: &mut Inner,
    invocation: Id,
    reason: &str,
    error: &str,
) -> Result<(), EmitError> {
    let change = run_failed(g, invocation, reason, error);
    commit(session, g, change).await
}

/// The change that ends a run as failed: its open stream ended with the text it has
/// (`STREAM-004`: a run cannot end while a stream is open, `STATE-046`), its open calls settled or
/// dismissed, its cursor ended.
fn run_failed(g: &mut Inner, invocation: Id, reason: &str, error: &str) -> Change {
    let ts = rfc3339_now();
    let mut change = Change::default();
    // Transcripts first, from the deepest up (SUBAGENT-009): each host is then an open call above.
    let (closing, timers) = nested::close_transcripts(&g.state, &invocation, Closing::Failed { reason, error });
    change.units.extend(closing.into_iter().map(Unit::Event));
    change.remove_timers.extend(timers);
    if let Some(end) = open_stream_end(&g.state, &invocation, &ts) {
        change.units.push(Unit::Event(end));
    }
    let top_level = g.state.open_tool_calls(Some(&invocation)).filter(|c| nested::is_top_level(&g.state, &c.id));
    for call in top_level.collect::<Vec<_>>() {
        let frame = if call.status == ToolCallStatus::Running {
            ServerFrame::ToolCallComplete(ToolCallComplete {
                seq: 0,
                tool_call_id: call.id.clone(),
                status: CompletionStatus::Failed,
                result: None,
                error: Some(error.to_owned()),
                summary: None,
                in_reply_to: None,
                ts: ts.clone(),
            })
        } else {
            change.remove_timers.push(call.id.clone());
            ServerFrame::ToolCallDismiss(ToolCallDismiss {
                seq: 0,
                tool_call_id: call.id.clone(),
                initiated_by: Initiator::Server,
                reason: Some(reason.to_owned()),
                in_reply_to: None,
                ts: ts.clone(),
            })
        };
        change.units.push(Unit::Event(frame));
    }
    change.units.push(Unit::Event(slice_end(&g.cursor, &invocation, RunCompleteStatus::Failed, reason, Some(error))));
    change.cursor = Some(g.cursor.ended());
    change
}

/// The frame that ends `invocation`'s open stream with exactly the text it holds (`STREAM-004`,
/// `CANCEL-003`): a `chat.assistant_message` for a text stream, a `chat.reasoning` for a reasoning
/// stream (`STATE-055`); `None` when no stream of it is open.
pub(super) fn open_stream_end(state: &chatwire_schema::UiState, invocation: &Id, ts: &str) -> Option<ServerFrame> {
    match state.items.last()? {
        DisplayItem::AssistantMarkdown(m) if m.streaming && &m.invocation_id == invocation => {
            Some(ServerFrame::AssistantMessage(AssistantMessage {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation.clone(),
                item_id: m.id.clone(),
                markdown: m.markdown.clone(),
                ts: ts.to_owned(),
            }))
        }
        DisplayItem::Reasoning(r) if r.streaming && &r.invocation_id == invocation => {
            Some(ServerFrame::Reasoning(Reasoning {
                parent_call_id: None,
                seq: 0,
                invocation_id: invocation.clone(),
                item_id: r.id.clone(),
                text: r.text.clone(),
                redacted: false,
                encrypted: None,
                ts: ts.to_owned(),
            }))
        }
        _ => None,
    }
}
