//! The differential oracle: the monitor folds `chatwire_schema::reducer` over the last snapshot and
//! every event since (per connection), and every state the server sends must equal that fold
//! (STATE-004). Every event must be one the reducer accepts (STATE-006 and the refusal rules).
//!
//! The fold is held indexed (`chatwire_schema::IndexedUiState`: items and invocations by id, the
//! open calls counted), so folding an event costs what the event changes, not the whole state.
//! Other state frames use the same seam: [`StateOracle::expected`] is the reduction, and
//! `StateOracle::adopt` compares any state the client holds with it; the patch oracle
//! (`super::patch`) applies each `ui_state_patch` to the state last received and calls it.

use chatwire_schema::reducer::REFUSAL_RULES;
use chatwire_schema::requirements::Level;
use chatwire_schema::{IndexedUiState, ReduceError, ReqId, ServerFrame, UiEvent, UiState};

use super::held::Held;
use super::shared::SharedState;
use crate::finding::{CheckDef, Raw};
use crate::normalize::Normalizer;
use crate::redact::divergence;

const STATE_004: ReqId = ReqId::new("STATE-004");

/// Every UiState the server sends equals the runner's reduction.
pub static STATE_MATCHES_REDUCER: CheckDef = CheckDef {
    id: "state-matches-reducer",
    requirements: &[STATE_004],
    summary: "every ui_state_updated equals the last snapshot folded with the events received since",
    level: Level::Must,
};

/// Every event is one the reducer accepts in the current state; a refusal names its own rule.
/// The rules are the reducer's own table (`chatwire_schema::reducer::REFUSAL_RULES`).
pub static EVENTS_ACCEPTED: CheckDef = CheckDef {
    id: "events-follow-reducer-rules",
    requirements: REFUSAL_RULES,
    summary: "every event is applicable to the state the client holds (the reducer refuses none)",
    level: Level::Must,
};

/// The refusal rule a reducer error names (`STATE-015`, `STATE-020`..`STATE-035`: the reducer's own
/// `ReduceError::requirement`).
pub fn rule_of_refusal(error: &ReduceError) -> ReqId {
    ReqId::parse(error.requirement()).unwrap_or(ReqId::new("STATE-006"))
}

/// The runner's model of one connection's UiState.
#[derive(Clone, Debug, Default)]
pub struct StateOracle {
    state: Option<IndexedUiState>,
    /// Since the model last equalled a state the client held (`Sync`): where it changed since,
    /// so comparing it with the next state costs what changed, not the whole state.
    sync: Option<Sync>,
    /// The fold the latest divergence replaced (`adopt`), for `crate::diverge`'s shadow.
    replaced: Option<UiState>,
}

/// The model equalled the state of seq `seq`, and has changed since only from item `from` on (and
/// in its run).
#[derive(Clone, Copy, Debug)]
struct Sync {
    seq: u64,
    from: usize,
}

impl StateOracle {
    /// The reduction so far; `None` before the first snapshot of the connection.
    pub fn expected(&self) -> Option<&UiState> {
        self.state.as_ref().map(IndexedUiState::state)
    }

    /// Whether the reduction holds an item with this id (an index lookup).
    /// The fold, indexed: what the schema's frame facts read a state through (`HeldItems`).
    pub fn indexed(&self) -> Option<&IndexedUiState> {
        self.state.as_ref()
    }

    pub fn has_item(&self, id: &chatwire_schema::Id) -> bool {
        self.state.as_ref().is_some_and(|s| s.has_item(id))
    }

    /// Forgets the state (a new welcome: a snapshot follows).
    pub fn clear(&mut self) {
        self.state = None;
        self.sync = None;
    }

    /// A snapshot replaces the model.
    pub fn snapshot(&mut self, state: &UiState) {
        self.state = Some(IndexedUiState::new(state.clone()));
        self.sync = None;
    }

    /// Folds an event in. Refusals the monitor charges elsewhere come back as `Err` too; the caller
    /// decides under which check they are reported.
    pub fn apply(&mut self, event: UiEvent<'_>) -> Result<(), ReduceError> {
        let Some(state) = self.state.as_mut() else { return Ok(()) };
        let Some(sync) = self.sync.as_mut() else { return state.apply(event) };
        // The event's own patch says which items it changed.
        let len = state.items.len();
        let ops = state.apply_with_patch(event)?;
        for op in &ops {
            let changed = match op.path().strip_prefix("/items/").map(|r| r.split('/').next().unwrap_or("")) {
                Some("-") => len,
                Some(index) => index.parse().unwrap_or(0),
                None => continue,
            };
            sync.from = sync.from.min(changed);
        }
        Ok(())
    }

    /// The client now holds the model's state, as the state frame of seq `seq` left it.
    pub(crate) fn synced(&mut self, seq: u64) {
        self.sync = self.state.is_some().then_some(Sync { seq, from: usize::MAX });
    }

    /// The model as a shared state, built from `base` (the state of the client's latest state
    /// frame) where the model still equals it below the items it changed since: O(change).
    pub(crate) fn shared_from(&self, base: &Held) -> Option<SharedState> {
        let state = self.expected()?;
        Some(match self.sync {
            Some(sync) if sync.seq == base.seq => base.state.synced_to(state, sync.from),
            _ => SharedState::from_state(state),
        })
    }

    /// [`StateOracle::adopt`] for a state patched from the state of seq `base_seq` at items `low`
    /// and above: where the model equalled that state, only what either changed is compared.
    pub(crate) fn adopt_shared(
        &mut self,
        got: &SharedState,
        base_seq: u64,
        low: usize,
        redactor: &mut Normalizer,
    ) -> Option<String> {
        let expected = self.expected()?;
        if let Some(sync) = self.sync.filter(|s| s.seq == base_seq) {
            if got.equals_from(expected, sync.from.min(low)) {
                return None;
            }
        }
        self.adopt(&got.to_state(), redactor)
    }

    /// Compares a state the server sent with the reduction; on a divergence the model takes the
    /// server's state, so one divergence is reported once and not on every later frame.
    pub(crate) fn received(&mut self, got: &UiState, redactor: &mut Normalizer) -> Option<Raw> {
        let found = self.adopt(got, redactor)?;
        Some(Raw::new(
            &STATE_MATCHES_REDUCER,
            STATE_004,
            format!("the state differs from the reducer's fold of the events received (expected = reducer):\n{found}"),
        ))
    }

    /// Compares a state the client now holds (received whole, or patched) with the reduction and
    /// returns how they differ; on a divergence the model takes `got`, so it is reported once.
    pub(crate) fn adopt(&mut self, got: &UiState, redactor: &mut Normalizer) -> Option<String> {
        let expected = self.expected()?;
        let found = divergence(expected, got, redactor)?;
        let replaced = self.state.replace(IndexedUiState::new(got.clone()));
        self.replaced = replaced.map(IndexedUiState::into_state);
        self.sync = None;
        Some(found)
    }

    /// The fold the latest divergence replaced with the state the client holds.
    pub(crate) fn take_replaced(&mut self) -> Option<UiState> {
        self.replaced.take()
    }
}

/// The tool call a frame reports on: the call it names, unless it is the `chat.tool_call` that
/// makes it.
pub(crate) fn referenced_call(frame: &ServerFrame) -> Option<&chatwire_schema::Id> {
    frame.tool_call_id().filter(|_| !matches!(frame, ServerFrame::ToolCall(_)))
}

/// The status of the call `frame` reports on, when `state` shows it settled already (TOOL-010).
pub(crate) fn settled_call(state: Option<&UiState>, frame: &ServerFrame) -> Option<String> {
    let call = state?.tool_call(referenced_call(frame)?)?;
    call.status.is_terminal().then(|| format!("{:?}", call.status).to_lowercase())
}
