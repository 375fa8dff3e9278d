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
            // The withheld text read back from the agent's encrypted copy of it, for the reload's
            // sake: the client that reloads sees what the run redacted.
            Fault::RedactedReasoningReloaded => {
                let mut s = state.clone();
                for item in &mut s.items {
                    if let DisplayItem::Reasoning(r) = item {
                        if let Some(text) = r.encrypted.as_deref().filter(|_| r.redacted).and_then(decoded) {
                            r.text = text;
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

/// Fault `redacted-reasoning-reloaded`: the text a payload holds, read as base64 (either alphabet)
/// of UTF-8; `None` where it is not.
fn decoded(payload: &str) -> Option<String> {
    let (mut bits, mut held, mut bytes) = (0u32, 0u32, Vec::new());
    for c in payload.bytes().take_while(|&c| c != b'=') {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        held += 6;
        if held >= 8 {
            held -= 8;
            bytes.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    String::from_utf8(bytes).ok().filter(|text| !text.is_empty())
}

#[cfg(test)]
mod tests {
    use super::decoded;

    #[test]
    fn a_payload_decodes_to_the_text_it_holds() {
        assert_eq!(decoded("SGlkZGVuIHRob3VnaHRz").as_deref(), Some("Hidden thoughts"));
        assert_eq!(decoded("UGljaw==").as_deref(), Some("Pick"));
        assert_eq!(decoded("_-8"), None, "not UTF-8");
        assert_eq!(decoded("a b"), None);
    }
}
