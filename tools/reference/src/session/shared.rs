//! What the server offers: the versions it speaks with their schemas, the capabilities of each,
//! and the agent a session runs.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{FrameValidator, Id, ProtocolVersion, SUPPORTED_VERSIONS};
use tokio::sync::Mutex;

use super::state::{Shared, Tasks};
use crate::agent::{Agent, AgentSpec, ScriptedAgent};
use crate::fault::Faults;
use crate::plan::TurnPlan;
use crate::store::{Store, StoredAgent};
use crate::util::{hash_token, random_id};

/// How a server is set up: what [`Shared::new`] takes.
pub(crate) struct Setup {
    pub store: Store,
    pub faults: Faults,
    pub agent: Arc<dyn Agent>,
    pub conformance: bool,
    pub durable: bool,
    pub max_frame_bytes: u64,
    pub versions: Vec<ProtocolVersion>,
    pub tasks: Tasks,
}

impl Shared {
    pub fn new(setup: Setup) -> Self {
        let Setup { store, faults, agent, conformance, durable, max_frame_bytes, mut versions, tasks } = setup;
        if versions.is_empty() {
            versions = SUPPORTED_VERSIONS.to_vec();
        }
        versions.sort_by(|a, b| b.cmp(a));
        Shared {
            store,
            faults,
            agent,
            conformance,
            durable,
            max_frame_bytes,
            // Client frames are judged by the schemas of the version their connection negotiated
            // (the newest this server speaks until then), so a member a later minor adds is
            // refused as unknown (FRAME-003), not silently accepted.
            validators: versions.iter().map(|v| (*v, FrameValidator::for_version(*v))).collect(),
            unmatchable_token_hash: hash_token(random_id("rt", 32).as_str()),
            legacy_resume_lookup: false,
            deadline_lag: Duration::ZERO,
            send_queue_bytes: crate::outbox::DEFAULT_SEND_QUEUE_BYTES,
            withheld: Vec::new(),
            max_attached: chatwire_schema::MIN_ATTACHED_CONNECTIONS,
            tasks,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The versions this server speaks, newest first.
    pub fn versions(&self) -> Vec<ProtocolVersion> {
        self.validators.iter().map(|(v, _)| *v).collect()
    }

    /// The schemas client frames on a connection that negotiated `version` are judged by; before
    /// a hello is accepted (`None`), the newest version's.
    pub fn validator(&self, version: Option<ProtocolVersion>) -> &FrameValidator {
        let newest = &self.validators[0].1;
        version.and_then(|v| self.validators.iter().find(|(w, _)| *w == v)).map_or(newest, |(_, validator)| validator)
    }

    /// What this server offers in the welcome of a connection that negotiated `version`: the
    /// 1.1 features only where 1.1 was negotiated (`COMPAT-005`).
    pub fn capabilities(&self, version: ProtocolVersion) -> Vec<Capability> {
        let mut caps = vec![Capability::Rewind, Capability::ToolOutput, Capability::ToolExpiry];
        for feature in [
            Capability::UiStatePatch,
            Capability::ResumeCatchUp,
            Capability::AssistantStream,
            Capability::MultiAttach,
            Capability::StateWindow,
            Capability::Reasoning,
            Capability::Usage,
            Capability::Subagents,
        ] {
            if feature.feature_since().is_some_and(|since| since <= version) {
                caps.push(feature);
            }
        }
        for plain in [Capability::Retry, Capability::Cancel] {
            if plain.since() <= version {
                caps.push(plain);
            }
        }
        caps.retain(|c| !self.withheld.contains(c));
        if self.conformance {
            caps.push(Capability::ConformanceScript);
        }
        if self.durable {
            caps.push(Capability::RestartDurability);
        }
        self.faults.hello.capabilities(caps)
    }

    /// Whether a `say` with `chunks` is committed as a stream (`SCRIPT-019`): where this server
    /// offers `assistant_stream` at the newest version it speaks. The stream is the session's;
    /// connections where the feature is not in force see its end as one whole message.
    pub fn streams(&self) -> bool {
        self.implements(&Capability::AssistantStream)
    }

    /// Whether this server offers `feature` at the newest version it speaks: what it implements.
    /// A `reason` step of a server that does not implement `reasoning` plays as nothing
    /// (`SCRIPT-027`).
    pub fn implements(&self, feature: &Capability) -> bool {
        self.capabilities(self.validators[0].0).contains(feature)
    }

    /// Whether a connection that negotiated `version` is offered `capability`.
    pub fn offers(&self, version: ProtocolVersion, capability: &Capability) -> bool {
        self.capabilities(version).contains(capability)
    }

    /// The agent a stored agent spec names.
    pub fn agent_for(&self, spec: AgentSpec) -> Arc<dyn Agent> {
        let agent: Arc<dyn Agent> = match spec {
            AgentSpec::Script { script } => Arc::new(ScriptedAgent::new(script)),
            AgentSpec::Server => self.agent.clone(),
        };
        self.faults.decide.agent(agent)
    }

    /// The agent and the turn's plan a stored session names (unreadable ones fall back to the
    /// server's agent and no plan, said on stderr).
    pub fn agent_and_plan(&self, id: &Id, stored: &StoredAgent) -> (Arc<dyn Agent>, Option<Arc<TurnPlan>>) {
        let parse_failed = |what: &str, e: serde_json::Error| {
            eprintln!("chatwire-reference: session {id}: stored {what} unreadable ({e}), using default");
        };
        let agent = self.agent_for(serde_json::from_str(&stored.agent).unwrap_or_else(|e| {
            parse_failed("agent", e);
            AgentSpec::Server
        }));
        let plan = match stored.turn_plan.as_deref() {
            Some(text) => serde_json::from_str::<Option<TurnPlan>>(text).unwrap_or_else(|e| {
                parse_failed("turn plan", e);
                None
            }),
            None => None,
        };
        (agent, plan.map(Arc::new))
    }
}
