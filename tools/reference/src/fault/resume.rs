//! The resume seam: the token and cursor checks, takeover or attach, and what a resume sends (the
//! snapshot, or the catch-up patch).

use std::borrow::Cow;

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::{DisplayItem, ToolCallStatus, UiState};

use super::fanout::FanoutFaults;
use super::list::{Fault, NoFault};

/// Faults of resuming a session; the defaults are the correct server.
pub(crate) trait ResumeFaults: Send + Sync + std::fmt::Debug {
    /// Whether a resume's `last_seq` is checked before its token.
    fn checks_cursor_before_token(&self) -> bool {
        false
    }

    /// Whether a resume token is accepted, given whether it matched.
    fn token_matches(&self, matches: bool) -> bool {
        matches
    }

    /// Whether a resume attaches (`multi_attach` in force, `ATTACH-001`) rather than taking the
    /// session over.
    fn attaches(&self, in_force: bool) -> bool {
        in_force
    }

    /// The state sent in the resume snapshot, or `None` to send no snapshot.
    fn resume_snapshot<'s>(&self, state: &'s UiState) -> Option<Cow<'s, UiState>> {
        Some(Cow::Borrowed(state))
    }

    /// How many of the `before` events committed before the resume's `last_seq` the catch-up
    /// patch's base state folds (all of them: the state of `last_seq`).
    fn catch_up_split(&self, before: usize) -> usize {
        before
    }

    /// Whether a catch-up may be put together from the patches of the events committed in this
    /// process, rather than from a fold of the log.
    fn catch_up_from_memory(&self) -> bool {
        true
    }

    /// The ops put on the wire in the catch-up patch that answers a resume (`RESUME-017`).
    fn catch_up_patch(&self, ops: Vec<PatchOp>) -> Vec<PatchOp> {
        ops
    }
}

impl ResumeFaults for NoFault {}

impl ResumeFaults for Fault {
    fn checks_cursor_before_token(&self) -> bool {
        *self == Fault::CursorCheckedBeforeToken
    }

    fn token_matches(&self, matches: bool) -> bool {
        matches || *self == Fault::ResumeSkipsTokenCheck
    }

    fn attaches(&self, in_force: bool) -> bool {
        in_force && *self != Fault::AttachTakesOver
    }

    fn resume_snapshot<'s>(&self, state: &'s UiState) -> Option<Cow<'s, UiState>> {
        match self {
            Fault::SnapshotMissingOnResume => None,
            Fault::PendingLostOnResume => {
                let mut s = state.clone();
                s.items.retain(|i| !matches!(i, DisplayItem::ToolCall(c) if c.status == ToolCallStatus::Pending));
                Some(Cow::Owned(s))
            }
            // A payload decoded and encoded again, its padding lost: the same bytes to a careless
            // eye, not to the model that gets it back.
            Fault::ReasoningPayloadAltered => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::Reasoning(r) = item {
                        r.encrypted = r.encrypted.take().map(|p| p.trim_end_matches('=').to_owned() + "A");
                    }
                }
                Some(Cow::Owned(s))
            }
            // The reload shows a redacted reasoning's payload as its text: the client that reloads
            // gets what the run withheld, in the form the agent kept it.
            Fault::RedactedReasoningReloaded => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::Reasoning(r) = item {
                        if let Some(payload) = r.encrypted.as_ref().filter(|_| r.redacted) {
                            r.text = payload.clone();
                        }
                    }
                }
                Some(Cow::Owned(s))
            }
            _ => Some(FanoutFaults::present(self, state, true)),
        }
    }

    fn catch_up_split(&self, before: usize) -> usize {
        if *self == Fault::CatchUpWrongBase {
            0
        } else {
            before
        }
    }

    fn catch_up_from_memory(&self) -> bool {
        *self != Fault::CatchUpWrongBase
    }

    fn catch_up_patch(&self, mut ops: Vec<PatchOp>) -> Vec<PatchOp> {
        if *self == Fault::CatchUpMissingOp && ops.len() >= 2 {
            ops.pop();
        }
        ops
    }
}
