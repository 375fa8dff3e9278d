//! The commit seam: what is applied and what is logged for an announced event, whether the
//! state is checkpointed, what a load resumes at, and the moment before a commit.

use std::time::Duration;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::chat::tool_call_complete::CompletionStatus;
use chatwire_schema::{ServerFrame, UiState};

use super::list::{Fault, NoFault};
use crate::outbox::{ConnHandle, Outgoing};

/// Faults of the commit pipeline and of loading; the defaults are the correct server.
pub(crate) trait CommitFaults: Send + Sync + std::fmt::Debug {
    /// A frame applied to the state in place of `frame` (which is still announced).
    fn applied_instead(&self, _frame: &ServerFrame, _state: &UiState) -> Option<ServerFrame> {
        None
    }

    /// Whether an applied event is written to the log.
    fn persists(&self, _frame: &ServerFrame) -> bool {
        true
    }

    /// Whether the session's state is checkpointed (`store::Checkpoint`). A checkpoint is taken
    /// of the state in memory, which some faults make differ from the log.
    fn checkpoints(&self) -> bool {
        true
    }

    /// Called with the frames of a change right before it is committed.
    fn before_commit(&self, _wire: &[String], _conn: Option<&ConnHandle>) {}

    /// The first unused seq of a session read from the database.
    fn loaded_next_seq(&self, stored: u64) -> u64 {
        stored
    }
}

impl CommitFaults for NoFault {}

impl CommitFaults for Fault {
    fn applied_instead(&self, frame: &ServerFrame, state: &UiState) -> Option<ServerFrame> {
        if let (Fault::CancelStreamLosesChunks, ServerFrame::AssistantMessage(m)) = (self, frame) {
            // The state keeps the whole streamed text; only the announced end lost its tail.
            let open = state.open_stream().filter(|o| o.id == m.item_id && o.markdown != m.markdown)?;
            let mut applied = m.clone();
            applied.markdown = open.markdown.clone();
            return Some(ServerFrame::AssistantMessage(applied));
        }
        if let (Fault::RetryCutsWrongItem, ServerFrame::RetryAccepted(ra)) = (self, frame) {
            // Cut after the first item the announced cut removes, when there is one.
            let next = ra.removed_item_ids.first()?;
            let named = state.items.iter().rposition(|i| i.id() == next)?;
            let cut = chatwire_schema::reducer::retry_cut(&state.items, named);
            let mut applied = ra.clone();
            applied.after_item_id = next.clone();
            applied.removed_item_ids = state.items[cut..].iter().map(|i| i.id().clone()).collect();
            return Some(ServerFrame::RetryAccepted(applied));
        }
        let ServerFrame::RewindComplete(rc) = frame else { return None };
        if *self != Fault::RewindWrongCut {
            return None;
        }
        let invocations = state.invocations();
        let cut = invocations.iter().position(|i| *i == &rc.before_invocation_id)?;
        if invocations.len() < 2 {
            return None;
        }
        let wrong = if cut + 1 < invocations.len() { cut + 1 } else { cut - 1 };
        let mut applied = rc.clone();
        applied.before_invocation_id = invocations[wrong].clone();
        applied.removed_invocation_ids = invocations[wrong..].iter().map(|i| (*i).clone()).collect();
        Some(ServerFrame::RewindComplete(applied))
    }

    fn persists(&self, frame: &ServerFrame) -> bool {
        match frame {
            ServerFrame::ToolCallComplete(c) if c.status == CompletionStatus::Completed => {
                *self != Fault::CompletionNotPersisted
            }
            ServerFrame::ToolCallDismiss(_) => *self != Fault::DismissalNotPersisted,
            ServerFrame::RewindComplete(_) => *self != Fault::RewindNotPersisted,
            ServerFrame::RunComplete(r) if r.status == RunCompleteStatus::Cancelled => {
                *self != Fault::CancelUndoneByRestart
            }
            _ => true,
        }
    }

    // A faulty build folds the whole log at every load, as before checkpoints: a fault that
    // keeps an event out of the log must come back on reload, whatever the state in memory.
    fn checkpoints(&self) -> bool {
        false
    }

    fn before_commit(&self, wire: &[String], conn: Option<&ConnHandle>) {
        if *self == Fault::AnnounceBeforeCommit
            && wire.iter().any(|t| t.contains("\"type\":\"chat.tool_call_complete\""))
        {
            announce_then_die(wire, conn);
        }
    }

    fn loaded_next_seq(&self, stored: u64) -> u64 {
        if *self == Fault::SeqRestartsAfterRestart {
            1
        } else {
            stored
        }
    }
}

/// Fault `announce-before-commit`: the frames go out, the commit never happens.
fn announce_then_die(wire: &[String], conn: Option<&ConnHandle>) -> ! {
    if let Some(conn) = conn {
        for text in wire {
            conn.send(Outgoing::Text(text.clone()));
        }
        let handle = tokio::runtime::Handle::current();
        if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread {
            let (ack, done) = tokio::sync::oneshot::channel();
            if conn.send(Outgoing::Flush(ack)) {
                // Give this worker's queue (the writer task may sit in it) to another thread while we
                // wait, bounded, for the writer to flush what was announced.
                tokio::task::block_in_place(|| {
                    let _ = handle.block_on(tokio::time::timeout(Duration::from_secs(2), done));
                });
            }
        }
    }
    eprintln!("chatwire-reference: fault announce-before-commit: dying before the commit");
    std::process::abort();
}
