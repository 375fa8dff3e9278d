//! The agent seam: what answers a user message.
//!
//! An [`Agent`] plans a turn as a list of [`ScriptStep`]s, the instruction set of the run driver.
//! The driver executes the steps durably (reducer, log, transport) the same way for every agent.
//! Two implementations ship: [`ScriptedAgent`] plays the `session.hello.script` of the
//! conformance driver profile, and [`EchoAgent`] (the default of [`crate::ServeConfig::agent`])
//! quotes each message back. A library user passes their own as an `Arc<dyn Agent>` in
//! `ServeConfig::agent`; `examples/custom_agent.rs` plugs in a (stand-in) model.
//!
//! The plan of a turn is committed with the message that started it, so a restarted server
//! continues the turn from its plan without asking the agent again.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use chatwire_schema::script::{AgentScript, ScriptStep, ScriptTurn};
use chatwire_schema::usage::Usage;
use chatwire_schema::Id;

pub use crate::plan::TurnPlan;

/// Plans the answer to one user message.
///
/// `plan_turn` runs while the session is locked, on the server's async runtime: it must return
/// promptly. An agent backed by a remote model calls the model before answering (for example
/// with `tokio::task::block_in_place` around a blocking client), or plans a `say` step that
/// tells the user to wait and finishes in a later turn.
pub trait Agent: Send + Sync + std::fmt::Debug {
    /// The steps answering the `turn_index`-th accepted user message of the session (from 0,
    /// rewound ones included), or `None` when the agent has nothing to say for it; the run then
    /// fails with reason `script_exhausted`.
    fn plan_turn(&self, turn_index: u64, user_text: &str) -> Option<ScriptTurn>;

    /// [`Agent::plan_turn`] as a shared [`TurnPlan`], which the session holds while the turn runs.
    /// An agent that keeps its plans ([`ScriptedAgent`]) hands out the one it holds, so a session
    /// does not hold a second copy of a long script's turn.
    fn plan_turn_shared(&self, turn_index: u64, user_text: &str) -> Option<Arc<TurnPlan>> {
        self.plan_turn(turn_index, user_text).map(|turn| Arc::new(TurnPlan::from(turn)))
    }

    /// The steps of the `retry_index`-th accepted retry (from 0) of the `turn_index`-th turn
    /// (`chat.retry`, `SCRIPT-020`): the run slice that follows the kept items. By default the
    /// turn is planned again, as a model answering the same message again would; `None` fails the
    /// retry's run with reason `script_exhausted`.
    fn plan_retry(&self, turn_index: u64, retry_index: u64, user_text: &str) -> Option<ScriptTurn> {
        let _ = retry_index;
        self.plan_turn(turn_index, user_text)
    }
}

/// The scripted agent (`spec/conformance-profile.md`): `turns[n]` answers the n-th message.
/// Each turn is held once, as a [`TurnPlan`], and shared with the session playing it
/// ([`Agent::plan_turn_shared`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedAgent {
    turns: Vec<Arc<TurnPlan>>,
}

impl ScriptedAgent {
    /// The agent playing `script` (from `session.hello.script`).
    pub fn new(script: AgentScript) -> Self {
        ScriptedAgent { turns: script.turns.into_iter().map(|turn| Arc::new(TurnPlan::from(turn))).collect() }
    }

    fn turn(&self, turn_index: u64) -> Option<&Arc<TurnPlan>> {
        usize::try_from(turn_index).ok().and_then(|i| self.turns.get(i))
    }
}

impl Agent for ScriptedAgent {
    fn plan_turn(&self, turn_index: u64, _user_text: &str) -> Option<ScriptTurn> {
        self.turn(turn_index).map(|turn| turn.to_turn())
    }

    fn plan_turn_shared(&self, turn_index: u64, _user_text: &str) -> Option<Arc<TurnPlan>> {
        self.turn(turn_index).cloned()
    }

    /// `turns[n].retries[k].steps`; with no `retries[k]` there is no plan, so the retry's run
    /// slice fails with reason `script_exhausted`, as a message without a turn does (`SCRIPT-020`).
    fn plan_retry(&self, turn_index: u64, retry_index: u64, _user_text: &str) -> Option<ScriptTurn> {
        self.turn(turn_index)?.retry(usize::try_from(retry_index).ok()?)
    }
}

/// The default agent of normal mode: answers every message by quoting it back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EchoAgent;

impl Agent for EchoAgent {
    fn plan_turn(&self, _turn_index: u64, user_text: &str) -> Option<ScriptTurn> {
        let quoted: String = user_text.lines().map(|l| format!("> {l}\n")).collect();
        let markdown = format!("You said:\n\n{quoted}");
        Some(ScriptTurn {
            steps: vec![ScriptStep::Say { markdown, chunks: None, chunk_delay_ms: None }],
            retries: Vec::new(),
        })
    }
}

/// The agent of a session held only partially (a windowed open reads the window, not the
/// session's script): it plans nothing, and is replaced by the session's own agent before any
/// request is carried out. Planning with it is a bug, said on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NotLoaded;

impl Agent for NotLoaded {
    fn plan_turn(&self, _turn_index: u64, _user_text: &str) -> Option<ScriptTurn> {
        eprintln!("chatwire-reference: internal error: a turn was planned before the session's agent was loaded");
        None
    }
}

/// Which agent a session runs; persisted with the session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentSpec {
    /// The scripted agent with this script (conformance mode; an empty script when none was sent).
    Script {
        /// The script.
        script: AgentScript,
    },
    /// The server's configured agent ([`crate::ServeConfig::agent`]); stored as `echo` by
    /// earlier versions, whose only such agent was the echo agent.
    #[serde(alias = "echo")]
    Server,
}

/// Where the run driver is in the current turn; persisted with every event it commits, so a
/// restart continues from the last committed step and never repeats one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    /// How many user messages the session accepted (the next one is answered by turn `turns_accepted`).
    pub turns_accepted: u64,
    /// The invocation the driver works on; `None` once the turn is over or rewound.
    pub invocation_id: Option<Id>,
    /// Index of the current step of the turn's plan.
    pub step: usize,
    /// Progress through the current `tool_calls` step.
    pub batch: Option<BatchCursor>,
    /// Progress through the current `say` or `reason` step while it streams (`SCRIPT-019`,
    /// `SCRIPT-027`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamCursor>,
    /// What the current run slice's `usage` steps added up to (`SCRIPT-028`), carried by the
    /// slice's `chat.run_complete`; committed with the next event, so a restart neither loses nor
    /// repeats a step's usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The levels above the one `step`, `batch` and `stream` describe, outermost first, while the
    /// turn plays inside sub-agents (`SCRIPT-029`): each the `tool_calls` step whose call hosts
    /// the level below. Empty at the top level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outer: Vec<OuterLevel>,
}

/// A level of the plan the driver stepped into a sub-agent from: the batch, and its call hosting
/// the sub-agent that plays now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OuterLevel {
    /// Index of the `tool_calls` step in its level's steps.
    pub step: usize,
    /// Progress through that batch (the host is the call its settle sequence is at).
    pub batch: BatchCursor,
    /// The id of the call hosting the level below.
    pub host: Id,
}

impl Cursor {
    /// The cursor once the turn is over (or rewound, or cancelled): no invocation, no step, no
    /// progress, no usage; the count of accepted messages kept.
    pub fn ended(&self) -> Cursor {
        Cursor { turns_accepted: self.turns_accepted, ..Cursor::default() }
    }
}

/// Progress through a streamed `say` step: the item it opened and how many chunks are committed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamCursor {
    /// The id of the streaming item.
    pub item_id: Id,
    /// How many of the step's chunks are committed as deltas.
    pub sent: usize,
}

/// Progress through a `tool_calls` step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCursor {
    /// The ids given to the calls, in call order.
    pub call_ids: Vec<Id>,
    /// How many entries of the settle sequence have settled.
    pub settled: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn say(markdown: &str) -> ScriptStep {
        ScriptStep::Say { markdown: markdown.into(), chunks: None, chunk_delay_ms: None }
    }

    #[test]
    fn scripted_agent_answers_by_index_and_runs_out() {
        let script = AgentScript { turns: vec![ScriptTurn { steps: vec![say("hi")], retries: Vec::new() }] };
        let agent = ScriptedAgent::new(script.clone());
        assert_eq!(agent.plan_turn(0, "x"), Some(script.turns[0].clone()));
        assert_eq!(agent.plan_turn(1, "x"), None);
        // The shared plan is the agent's own: a session playing it holds no second copy.
        let (a, b) = (agent.plan_turn_shared(0, "x").unwrap(), agent.plan_turn_shared(0, "y").unwrap());
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(agent.plan_turn_shared(1, "x"), None);
    }

    #[test]
    fn scripted_agent_answers_the_kth_retry_with_its_steps_then_with_none() {
        let retry = |text: &str| chatwire_schema::script::ScriptRetry { steps: vec![say(text)] };
        let turn = ScriptTurn { steps: vec![say("first")], retries: vec![retry("r0"), retry("r1")] };
        let agent = ScriptedAgent::new(AgentScript { turns: vec![turn] });
        let steps = |k| agent.plan_retry(0, k, "x").map(|t| t.steps);
        assert_eq!((steps(0), steps(1), steps(2)), (Some(vec![say("r0")]), Some(vec![say("r1")]), None));
        assert_eq!(agent.plan_retry(1, 0, "x"), None, "no turn: the run fails as script_exhausted");
        // The default for a server agent: the turn planned again.
        assert_eq!(EchoAgent.plan_retry(3, 5, "a"), EchoAgent.plan_turn(3, "a"));
    }

    #[test]
    fn echo_agent_quotes_every_line() {
        let plan = EchoAgent.plan_turn(7, "a\nb").unwrap();
        assert_eq!(plan.steps, vec![say("You said:\n\n> a\n> b\n")]);
    }

    #[test]
    fn spec_round_trips() {
        let spec = AgentSpec::Script { script: AgentScript { turns: vec![] } };
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<AgentSpec>(&json).unwrap(), spec);
        assert_eq!(serde_json::from_str::<AgentSpec>(r#"{"kind":"echo"}"#).unwrap(), AgentSpec::Server);
    }
}
