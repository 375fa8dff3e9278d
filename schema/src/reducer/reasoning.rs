//! The reducer's rules for reasoning (since 1.3, `spec/reasoning.md`): `STATE-054`, `STATE-055`
//! and their refusals `STATE-058`, `STATE-060` … `STATE-062`; and for usage (`spec/usage.md`):
//! `STATE-056`, `STATE-057`, refusals `STATE-059`, `STATE-063`. Kept beside the reducer's other
//! rules (`mod.rs`), which call them.

use crate::chat::reasoning::Reasoning;
use crate::chat::reasoning_delta::ReasoningDelta;
use crate::chat::run_complete::RunComplete;
use crate::ui_state::{DisplayItem, ReasoningItem, UiState};
use crate::usage::{UsageError, UsageState};
use crate::Id;

use super::{Lookup, ReduceError};

impl UiState {
    /// `STATE-054`: a reasoning delta opens or grows the open reasoning stream.
    pub(super) fn apply_reasoning_delta(&mut self, e: &ReasoningDelta, lookup: Lookup<'_>) -> Result<(), ReduceError> {
        self.ensure_running(&e.invocation_id)?;
        if let Some(open) = self.open_stream_id() {
            if open != &e.item_id {
                return Err(ReduceError::ReasoningStreamOpen(open.clone()));
            }
            return match self.open_reasoning_mut() {
                Some(stream) if stream.invocation_id == e.invocation_id => {
                    stream.text.push_str(&e.text);
                    Ok(())
                }
                // The open stream is a text stream, or another invocation's.
                _ => Err(ReduceError::NotReasoningStream(e.item_id.clone())),
            };
        }
        if self.ensure_new_id(&e.item_id, lookup).is_err() {
            return Err(ReduceError::NotReasoningStream(e.item_id.clone()));
        }
        self.items.push(DisplayItem::Reasoning(ReasoningItem {
            id: e.item_id.clone(),
            invocation_id: e.invocation_id.clone(),
            text: e.text.clone(),
            streaming: true,
            redacted: false,
            encrypted: None,
            ts: e.ts.clone(),
        }));
        Ok(())
    }

    /// `STATE-055`: a whole reasoning item, or the end of the open reasoning stream.
    pub(super) fn apply_reasoning(&mut self, e: &Reasoning, lookup: Lookup<'_>) -> Result<(), ReduceError> {
        self.ensure_running(&e.invocation_id)?;
        if e.redacted && !e.text.is_empty() {
            return Err(ReduceError::RedactedWithText(e.item_id.clone()));
        }
        if let Some(open) = self.open_stream_id() {
            if open != &e.item_id {
                return Err(ReduceError::ReasoningStreamOpen(open.clone()));
            }
            let Some(stream) = self.open_reasoning_mut() else {
                // The open stream is a text stream: a reasoning frame cannot end it.
                return Err(ReduceError::NotReasoningStream(e.item_id.clone()));
            };
            if stream.invocation_id == e.invocation_id {
                if !e.redacted && stream.text != e.text {
                    return Err(ReduceError::ReasoningTextMismatch(e.item_id.clone()));
                }
                stream.streaming = false;
                if e.redacted {
                    stream.redacted = true;
                    stream.text.clear();
                }
                if e.encrypted.is_some() {
                    stream.encrypted = e.encrypted.clone();
                }
                stream.ts = e.ts.clone();
                return Ok(());
            }
        }
        self.ensure_new_id(&e.item_id, lookup)?;
        self.items.push(DisplayItem::Reasoning(ReasoningItem {
            id: e.item_id.clone(),
            invocation_id: e.invocation_id.clone(),
            text: e.text.clone(),
            streaming: false,
            redacted: e.redacted,
            encrypted: e.encrypted.clone(),
            ts: e.ts.clone(),
        }));
        Ok(())
    }

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

    fn open_reasoning_mut(&mut self) -> Option<&mut ReasoningItem> {
        match self.items.last_mut() {
            Some(DisplayItem::Reasoning(r)) if r.streaming => Some(r),
            _ => None,
        }
    }
}
