//! The decision seam: what the session decides for a request or a run (the agent, a cancel, a
//! response's schema check, what recovery does with an interrupted turn).

use std::sync::Arc;

use chatwire_schema::script::ScriptTurn;
use chatwire_schema::{Id, UiState};

use super::list::{Fault, NoFault};
use crate::agent::Agent;

/// Faults of the session's decisions; the defaults are the correct server.
pub(crate) trait DecisionFaults: Send + Sync + std::fmt::Debug {
    /// The agent a session runs, given the one it names.
    fn agent(&self, agent: Arc<dyn Agent>) -> Arc<dyn Agent> {
        agent
    }

    /// Whether a response's value is checked against its call's `response_schema` before it is
    /// accepted (`TOOL-023`).
    fn checks_response_schema(&self) -> bool {
        true
    }

    /// The invocation a `chat.cancel` is checked against and stops, given the one it named and
    /// the session's state (`CANCEL-001`: always the named one).
    fn cancel_target(&self, named: &Id, _state: &UiState) -> Id {
        named.clone()
    }

    /// Whether an accepted cancel closes the run (`CANCEL-003`); `false` answers it and lets the
    /// run go on.
    fn cancel_closes_run(&self) -> bool {
        true
    }

    /// The text the end of a cancelled stream carries, given the text streamed so far
    /// (`CANCEL-004`).
    fn cancelled_stream_text(&self, streamed: String) -> String {
        streamed
    }

    /// Whether a tool that was running when its run was cancelled still reports its result when
    /// it finishes (`CANCEL-005`: never).
    fn settles_after_cancel(&self) -> bool {
        false
    }

    /// Whether a retry starts the sub-agents of the hosts it keeps again (`SUBAGENT-012`: never).
    fn reruns_kept_subagents(&self) -> bool {
        false
    }

    /// Whether a sub-agent whose stream a cancel ended streams on after it (`SUBAGENT-011`: never).
    fn subagent_runs_after_cancel(&self) -> bool {
        false
    }

    /// Whether a turn whose tool was running when the server stopped is continued (the tool run
    /// again) instead of ended as interrupted (`SCRIPT-015`).
    fn continues_interrupted_turns(&self) -> bool {
        false
    }

    /// Whether a `usage` step adds to its slice's usage (`SCRIPT-028`) rather than replacing it.
    fn sums_usage(&self) -> bool {
        true
    }

    /// Whether recovery ends a stream that was open when the server stopped (`STREAM-004`).
    fn ends_open_streams(&self) -> bool {
        true
    }

    /// Whether a run continuing a thread whose latest run returned answers that `return`
    /// (`SUBAGENT-005`) rather than starting as a new prompt.
    fn answers_return(&self) -> bool {
        true
    }
}

impl DecisionFaults for NoFault {}

impl DecisionFaults for Fault {
    fn agent(&self, agent: Arc<dyn Agent>) -> Arc<dyn Agent> {
        match self {
            Fault::RetryReexecutesKeptTool => Arc::new(ReplaysTurnOnRetry(agent)),
            _ => agent,
        }
    }

    fn checks_response_schema(&self) -> bool {
        *self != Fault::ResponseAcceptedAgainstSchema
    }

    fn cancel_target(&self, named: &Id, state: &UiState) -> Id {
        // A known turn other than the current run: the late cancel of an earlier turn.
        match (self, &state.run.invocation_id) {
            (Fault::CancelStopsNewerInvocation, Some(current)) if current != named && state.has_invocation(named) => {
                current.clone()
            }
            _ => named.clone(),
        }
    }

    fn cancel_closes_run(&self) -> bool {
        *self != Fault::CancelIgnored
    }

    fn cancelled_stream_text(&self, streamed: String) -> String {
        match self {
            // Without the last chunk: the text up to the last space, as a chunk boundary would be.
            Fault::CancelStreamLosesChunks => match streamed.trim_end().rfind(' ') {
                Some(cut) if cut > 0 => streamed[..cut].to_owned(),
                _ => streamed,
            },
            _ => streamed,
        }
    }

    fn settles_after_cancel(&self) -> bool {
        *self == Fault::CancelToolSettlesCompleted
    }

    fn reruns_kept_subagents(&self) -> bool {
        *self == Fault::RetryRerunsSubagent
    }

    fn subagent_runs_after_cancel(&self) -> bool {
        *self == Fault::CancelLeavesSubagentRunning
    }

    fn continues_interrupted_turns(&self) -> bool {
        *self == Fault::RunningCallContinuedAfterRestart
    }

    fn sums_usage(&self) -> bool {
        *self != Fault::UsageNotSummed
    }

    fn ends_open_streams(&self) -> bool {
        *self != Fault::StreamLeftOpenAfterRestart
    }

    fn answers_return(&self) -> bool {
        *self != Fault::ContinuedThreadNewPrompt
    }
}

/// Fault `retry-reexecutes-kept-tool`: an agent that answers a retry by playing its turn again.
#[derive(Debug)]
struct ReplaysTurnOnRetry(Arc<dyn Agent>);

impl Agent for ReplaysTurnOnRetry {
    fn plan_turn(&self, turn_index: u64, user_text: &str) -> Option<ScriptTurn> {
        self.0.plan_turn(turn_index, user_text)
    }

    fn plan_retry(&self, turn_index: u64, _retry_index: u64, user_text: &str) -> Option<ScriptTurn> {
        self.0.plan_turn(turn_index, user_text)
    }
}
