//! What the reducer's rules for reasoning (since 1.3, `spec/reasoning.md`) check at the top level
//! (`STATE-060`; `STATE-054` and `STATE-055` themselves are in `transcript.rs`, for every
//! transcript); and the rules for usage (`spec/usage.md`):
//! `STATE-056`, `STATE-057`, refusals `STATE-059`, `STATE-063`. Kept beside the reducer's other
//! rules (`mod.rs`), which call them.

use crate::chat::run_complete::RunComplete;
use crate::ui_state::UiState;
use crate::usage::{UsageError, UsageState};
use crate::Id;

use super::ReduceError;

impl UiState {
    /// `STATE-060`: refuses while a reasoning stream is open.
    pub(super) fn ensure_no_open_reasoning(&self) -> Result<(), ReduceError> {
        match self.open_reasoning() {
            Some(stream) => Err(ReduceError::ReasoningStreamOpen(stream.id.clone())),
            None => Ok(()),
        }
    }

    /// `STATE-056`: the state's usage after `e`, computed before anything changes so a refusal
    /// (`STATE-059`, `STATE-063`) leaves the state as it was; `None` when `e` carries no usage.
    pub(super) fn usage_after(&self, e: &RunComplete) -> Result<Option<UsageState>, ReduceError> {
        let Some(usage) = &e.usage else { return Ok(None) };
        UsageState::added(self.usage.as_ref(), &e.invocation_id, usage).map(Some).map_err(|err| match err {
            UsageError::CurrencyMismatch { found, .. } => ReduceError::UsageCurrencyMismatch(found),
            UsageError::Overflow => ReduceError::UsageOverflow(e.invocation_id.clone()),
        })
    }

    /// `STATE-057`: a rewind removes the usage entries of the invocations it removes; the total
    /// stays.
    pub(super) fn forget_usage_of(&mut self, removed: &[Id]) {
        if let Some(usage) = &mut self.usage {
            usage.invocations.retain(|id, _| !removed.contains(id));
        }
    }
}
