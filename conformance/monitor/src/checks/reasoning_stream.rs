//! Reasoning (since 1.3, `spec/reasoning.md`) against the script that produced it, as the stream
//! checks (`stream.rs`) judge a say's text: the reducer (STATE-054/055, STATE-060/061, the oracle)
//! proves that reasoning deltas append to the one open stream and that the end carries the
//! streamed text. What only the script tells: each delta is the next chunk of a `reason` step
//! (SCRIPT-027), the first delta after a resume continues exactly the text the resumed state holds
//! (REASON-007), a step with chunks streams where `assistant_stream` is in force, a redacted
//! reasoning carries no text (REASON-003), and the `encrypted` payload is the step's, byte for
//! byte, on its frame and in every later state that holds the item (REASON-004).
//!
//! The monitor reads the script from the hello that opened the session; a session without one is
//! judged only on what needs no script (REASON-003, a payload that changes between states).

use std::collections::HashMap;

use chatwire_schema::chat::reasoning::Reasoning;
use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{DisplayItem, ReqId, ServerFrame, UiState};

use super::stream::{judge_delta, DeltaJudgement};
use crate::check::{Check, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::script::SessionScript;

const SCRIPT_027: ReqId = ReqId::new("SCRIPT-027");
const REASON_003: ReqId = ReqId::new("REASON-003");
const REASON_004: ReqId = ReqId::new("REASON-004");
const REASON_007: ReqId = ReqId::new("REASON-007");

/// Reasoning frames are what the script's `reason` steps make of them.
pub static REASON_STEPS_AS_SCRIPTED: CheckDef = CheckDef {
    id: "reason-steps-as-scripted",
    requirements: &[SCRIPT_027, REASON_003, REASON_004],
    summary: "reasoning deltas are a reason step's chunks in order, a redacted reasoning carries no text, and every encrypted payload is its step's, the same in every state that holds the item",
    level: Level::Must,
};

/// After a resume the reasoning stream continues exactly after the text the resumed state holds.
pub static REASONING_CONTINUES_AFTER_RESUME: CheckDef = CheckDef {
    id: "reasoning-continues-after-resume",
    requirements: &[REASON_007],
    summary: "the first chat.reasoning_delta after a resume is the chunk that follows the text the snapshot or catch-up holds for the open reasoning item",
    level: Level::Must,
};

/// What a reasoning item's `chat.reasoning` said that every later state must keep.
#[derive(Debug)]
struct Ended {
    encrypted: Option<String>,
    redacted: bool,
}

/// Most reasoning items whose payload one session remembers.
const MAX_PAYLOADS: usize = 4096;

/// The check's own state.
#[derive(Debug, Default)]
pub(crate) struct ReasoningStream {
    /// Connections that resumed and have had no reasoning delta since.
    resumed: HashMap<u64, bool>,
    /// Per session, what each reasoning item's `chat.reasoning` carried: its payload (REASON-004)
    /// and whether it was redacted (REASON-003).
    payloads: HashMap<String, HashMap<String, Ended>>,
}

impl Check for ReasoningStream {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let script = cx.session().and_then(|t| t.script.as_deref());
        match cx.frame {
            ServerFrame::Welcome(w) => {
                self.resumed.insert(cx.conn, w.resumed);
            }
            // Where assistant_stream is not in force the reasoning check charges it (REASON-002).
            ServerFrame::ReasoningDelta(d) if c.has(&Capability::AssistantStream) => {
                let first_after_resume = self.resumed.insert(cx.conn, false).unwrap_or(false);
                let text = match c.state().and_then(UiState::open_reasoning) {
                    Some(open) if open.id == d.item_id => open.text.as_str(),
                    // Not the open reasoning stream: the reducer's refusal (STATE-058, STATE-060).
                    Some(_) => return,
                    None if c.oracle.has_item(&d.item_id) => return,
                    None => "",
                };
                if let Some(script) = script.filter(|s| s.reasons.streams()) {
                    delta(script, text, &d.text, first_after_resume, out);
                }
            }
            ServerFrame::Reasoning(r) => {
                if r.redacted {
                    match r.text.is_empty() {
                        true => out.eval(&REASON_STEPS_AS_SCRIPTED, REASON_003),
                        false => out.fail(&REASON_STEPS_AS_SCRIPTED, REASON_003, "a redacted chat.reasoning carries text"),
                    }
                }
                let open = c.state().and_then(UiState::open_reasoning).filter(|o| o.id == r.item_id);
                if let Some(script) = script {
                    match open {
                        Some(open) => stream_end(script, &open.text, r, out),
                        None if c.oracle.has_item(&r.item_id) => {}
                        None => whole(script, r, c.has(&Capability::AssistantStream), out),
                    }
                }
                if let Some(session) = cx.session_id() {
                    let known = self.payloads.entry(session.to_owned()).or_default();
                    if known.len() < MAX_PAYLOADS {
                        known.insert(r.item_id.to_string(), Ended { encrypted: r.encrypted.clone(), redacted: r.redacted });
                    }
                }
            }
            _ => {}
        }
    }

    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if !matches!(
            cx.frame,
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStatePatch(_) | ServerFrame::UiStateUpdated(_)
        ) {
            return;
        }
        let Some(session) = cx.session_id() else { return };
        let known = self.payloads.get(session);
        let script = cx.session().and_then(|t| t.script.as_deref());
        let Some(state) = cx.state() else { return };
        for item in &state.items {
            let DisplayItem::Reasoning(r) = item else { continue };
            let carried = known.and_then(|k| k.get(r.id.as_str()));
            if carried.is_some_and(|c| c.redacted) {
                match r.redacted && r.text.is_empty() {
                    true => out.eval(&REASON_STEPS_AS_SCRIPTED, REASON_003),
                    false => out.fail(
                        &REASON_STEPS_AS_SCRIPTED,
                        REASON_003,
                        format!("reasoning item {} was redacted, but a later state holds it unredacted", r.id),
                    ),
                }
            }
            let message = match (carried.map(|c| &c.encrypted), &r.encrypted, script) {
                (Some(carried), held, _) if carried != held => {
                    format!("reasoning item {} holds another encrypted payload than its chat.reasoning carried", r.id)
                }
                (Some(_), _, _) => {
                    out.eval(&REASON_STEPS_AS_SCRIPTED, REASON_004);
                    continue;
                }
                (None, Some(held), Some(script)) if !script.payloads.contains(held) => {
                    format!("reasoning item {} holds an encrypted payload no reason step of the script has", r.id)
                }
                (None, Some(_), Some(_)) => {
                    out.eval(&REASON_STEPS_AS_SCRIPTED, REASON_004);
                    continue;
                }
                _ => continue,
            };
            out.fail(&REASON_STEPS_AS_SCRIPTED, REASON_004, message);
        }
    }
}

/// A reasoning delta after `text` (empty for the one that opens the stream).
fn delta(script: &SessionScript, text: &str, chunk: &str, first_after_resume: bool, out: &mut Out) {
    let (check, requirement) = match first_after_resume {
        true => (&REASONING_CONTINUES_AFTER_RESUME, REASON_007),
        false => (&REASON_STEPS_AS_SCRIPTED, SCRIPT_027),
    };
    let message = match judge_delta(&script.reasons, text, chunk) {
        DeltaJudgement::Next => return out.eval(check, requirement),
        DeltaJudgement::Unknown => return,
        DeltaJudgement::Repeated => format!("the reasoning delta {chunk:?} repeats a chunk the text so far ends with"),
        DeltaJudgement::Skipped(n) => format!("the reasoning delta {chunk:?} skips {n} chunk(s) of the reason step"),
        DeltaJudgement::PastEnd => format!("the reasoning delta {chunk:?} follows the reason step's whole text"),
        DeltaJudgement::Other => format!("the reasoning delta {chunk:?} is not the reason step's next chunk"),
    };
    out.fail(check, requirement, message);
}

/// The `chat.reasoning` that ends a stream whose text so far is `streamed`. An end before the
/// step's last chunk is a cancel's or a recovery's (CANCEL-004 and STREAM-004 judge those).
fn stream_end(script: &SessionScript, streamed: &str, end: &Reasoning, out: &mut Out) {
    if script.reasons.positions(streamed).any(|(chunks, k)| k == chunks.len()) {
        payload(script, end, out);
    }
}

/// A `chat.reasoning` that appends a whole item; `streams`: `assistant_stream` is in force.
fn whole(script: &SessionScript, end: &Reasoning, streams: bool, out: &mut Out) {
    let (chunked, plain) = (script.reasons.has_chunked(&end.text), script.reasons.has_whole(&end.text));
    match (chunked, plain, streams) {
        (true, false, true) => out.fail(
            &REASON_STEPS_AS_SCRIPTED,
            SCRIPT_027,
            "a reason step with chunks came as one whole chat.reasoning, but assistant_stream is in force",
        ),
        (true, _, _) | (false, true, _) => {
            out.eval(&REASON_STEPS_AS_SCRIPTED, SCRIPT_027);
            payload(script, end, out);
        }
        (false, false, _) => {}
    }
}

/// The payload of a step's frame is one of the script's, unchanged (REASON-004).
fn payload(script: &SessionScript, end: &Reasoning, out: &mut Out) {
    match &end.encrypted {
        Some(p) if script.payloads.contains(p) => out.eval(&REASON_STEPS_AS_SCRIPTED, REASON_004),
        Some(_) => out.fail(
            &REASON_STEPS_AS_SCRIPTED,
            REASON_004,
            format!("chat.reasoning {} carries an encrypted payload no reason step of the script has", end.item_id),
        ),
        None => {}
    }
}
