//! Streamed assistant text (since 1.1, `spec/streaming.md`) against the script that produced it.
//!
//! The reducer (STATE-042/043/046/047, the oracle) already proves that deltas append to one open
//! stream and that the end frame carries the streamed text. What only the script can tell is
//! whether that text is the right one: each delta must be the next chunk of a `say` given the text
//! so far (SCRIPT-019), the end frame must come after the last chunk and carry the say's whole
//! `markdown` (SCRIPT-019), a say with chunks must stream where `assistant_stream` is in force and
//! come whole where it is not (SCRIPT-019), and the first delta after a resume or a takeover must
//! continue exactly the text the resumed state holds, neither repeating nor skipping a chunk
//! (STREAM-003).
//!
//! The monitor reads the script from the hello that opened the session (a client's own frame). A
//! session without a script (a recorded log of a backend outside conformance mode) is not judged.
//! Matching is by text, not by turn: the say whose chunks lead to the text so far is the one
//! playing, which holds across resumes, restarts, rewinds and retries alike.

use std::collections::HashMap;

use chatwire_schema::chat::run_complete::RunCompleteStatus;
use chatwire_schema::requirements::Level;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ReqId, RunStatus, ServerFrame, UiState};

use super::cancel::CancelWatch;
use crate::check::{Check, CloseCx, ServerCx};
use crate::finding::{CheckDef, Out};
use crate::model::ConnModel;
use crate::script::{ScriptSays, SessionScript};

const SCRIPT_019: ReqId = ReqId::new("SCRIPT-019");
const STREAM_003: ReqId = ReqId::new("STREAM-003");

/// Deltas, end frames and whole messages are what the script's `say` steps make of them.
pub static SAY_CHUNKS_AS_SCRIPTED: CheckDef = CheckDef {
    id: "say-chunks-as-scripted",
    requirements: &[SCRIPT_019],
    summary: "where assistant_stream is in force a say with chunks comes as one delta per chunk in order, then the whole markdown; elsewhere as one whole chat.assistant_message",
    level: Level::Must,
};

/// After a resume the stream continues exactly after the text the resumed state holds.
pub static STREAM_CONTINUES_AFTER_RESUME: CheckDef = CheckDef {
    id: "stream-continues-after-resume",
    requirements: &[STREAM_003],
    summary: "the first delta after a resume or takeover is the chunk that follows the text the snapshot or catch-up holds: no chunk repeated, none lost",
    level: Level::Must,
};

/// The stream checks' own state.
#[derive(Debug, Default)]
pub(crate) struct Stream {
    conns: HashMap<u64, ConnStream>,
    /// Per session: a stream's early end a connection left undecided when it ended; the next
    /// resume judges it.
    parked: HashMap<String, EarlyEnd>,
}

#[derive(Debug, Default)]
struct ConnStream {
    /// A stream that ended early, judged at the next event.
    early_end: EarlyEnd,
    /// The connection resumed (or took over) and no delta has come since (STREAM-003).
    resumed: bool,
}

impl Check for Stream {
    fn on_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        let Some(c) = cx.conn() else { return };
        let mine = self.conns.entry(cx.conn).or_default();
        match cx.frame {
            ServerFrame::Welcome(w) => {
                mine.resumed = w.resumed;
                if w.resumed {
                    let parked = self.parked.remove(w.session_id.as_str()).unwrap_or_default();
                    mine.early_end = EarlyEnd::resume(parked);
                }
            }
            ServerFrame::UiStateSnapshot(_)
            | ServerFrame::UiStatePatch(_)
            | ServerFrame::UiStateUpdated(_)
            | ServerFrame::Error(_) => {}
            // Not a stream this connection holds: the features check charges it (STREAM-005).
            frame if super::features::stray_delta(frame, c) => {}
            frame => {
                let script = cx.session().and_then(|t| t.script.as_deref());
                // The end of a stream an accepted cancel closed is `CANCEL-004`'s to judge.
                let cancelled = match frame {
                    ServerFrame::AssistantMessage(m) => cx
                        .peers
                        .get::<CancelWatch>()
                        .is_some_and(|w| w.ended_by_cancel(cx.conn, &m.item_id, &m.invocation_id)),
                    _ => false,
                };
                check_stream(mine, c, script, frame, cancelled, out);
            }
        }
    }

    fn after_server(&mut self, cx: &mut ServerCx<'_>, out: &mut Out) {
        if matches!(
            cx.frame,
            ServerFrame::UiStateSnapshot(_) | ServerFrame::UiStatePatch(_) | ServerFrame::UiStateUpdated(_)
        ) {
            let state = cx.state();
            if let Some(mine) = self.conns.get_mut(&cx.conn) {
                mine.early_end.resumed_state(state, out);
            }
        }
    }

    /// A connection ended with a stream's early end undecided: the frame that would decide it
    /// went to no connection here, so it waits for the session's next resume.
    fn on_close(&mut self, cx: &CloseCx<'_>, _out: &mut Out) {
        let Some(mine) = self.conns.get_mut(&cx.conn) else { return };
        let parked = mine.early_end.cut();
        let session = cx.model.conn(cx.conn).and_then(|c| c.session.clone());
        if let (true, Some(session)) = (parked.is_pending(), session) {
            self.parked.insert(session, parked);
        }
    }
}

/// The stream checks on an event: the script's view of deltas, stream ends and whole messages
/// (SCRIPT-019, STREAM-003), against `c`, the connection before the event. `cancelled`: the frame
/// is the end of a stream an accepted cancel closed.
fn check_stream(
    mine: &mut ConnStream,
    c: &ConnModel,
    script: Option<&SessionScript>,
    frame: &ServerFrame,
    cancelled: bool,
    out: &mut Out,
) {
    mine.early_end.next(frame, out);
    let open = c.state().and_then(UiState::open_stream);
    match frame {
        ServerFrame::AssistantMessageDelta(d) => {
            let first_after_resume = std::mem::take(&mut mine.resumed);
            let text = match open {
                Some(m) if m.id == d.item_id => m.markdown.as_str(),
                // Another item that is no open stream: the reducer's refusal (STATE-045/046).
                Some(_) => return,
                None if c.oracle.has_item(&d.item_id) => return,
                None => "",
            };
            if let Some(script) = script.filter(|s| s.says.streams()) {
                delta(&script.says, text, &d.delta, first_after_resume, out);
            }
        }
        ServerFrame::AssistantMessage(m) => {
            let Some(script) = script.filter(|_| !cancelled) else { return };
            match open {
                Some(o) if o.id == m.item_id => {
                    end(&script.says, &o.markdown, &m.markdown, &m.invocation_id, &mut mine.early_end, out)
                }
                _ if c.oracle.has_item(&m.item_id) => {}
                _ => whole(&script.says, &m.markdown, c.has(&Capability::AssistantStream), out),
            }
        }
        _ => {}
    }
}

/// What a delta is, given the text its item held before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeltaJudgement {
    /// The next chunk of a say.
    Next,
    /// The script cannot tell (no say leads to the text so far).
    Unknown,
    /// The chunk before again (alone, or in front of the next one).
    Repeated,
    /// A later chunk: this many chunks were skipped.
    Skipped(usize),
    /// After the last chunk of every say the text could belong to.
    PastEnd,
    /// Something else.
    Other,
}

/// Judges `delta` after `text`.
pub fn judge_delta(says: &ScriptSays, text: &str, delta: &str) -> DeltaJudgement {
    // The delta that opens a stream: the first chunk of some say, looked up; the says are walked
    // only to name what else it is.
    if text.is_empty() && says.opens_with(delta) {
        return DeltaJudgement::Next;
    }
    let mut found = false;
    let mut judgement = DeltaJudgement::Other;
    let mut past_end = true;
    for (chunks, k) in says.positions(text) {
        found = true;
        if chunks.get(k).is_some_and(|c| c == delta) {
            return DeltaJudgement::Next;
        }
        if k < chunks.len() {
            past_end = false;
        }
        if k > 0
            && delta.starts_with(chunks[k - 1].as_str())
            && chunks.get(k).is_none_or(|c| !delta.starts_with(c.as_str()))
        {
            judgement = DeltaJudgement::Repeated;
        } else if let Some(skipped) = chunks.iter().skip(k + 1).position(|c| c == delta) {
            if judgement == DeltaJudgement::Other {
                judgement = DeltaJudgement::Skipped(skipped + 1);
            }
        }
    }
    match (found, past_end, judgement) {
        (false, _, _) => DeltaJudgement::Unknown,
        (true, true, DeltaJudgement::Other) => DeltaJudgement::PastEnd,
        (true, _, j) => j,
    }
}

/// A delta of the stream whose text so far is `text` (empty for the delta that opens it);
/// `first_after_resume`: the first delta on a connection that resumed or took over.
fn delta(says: &ScriptSays, text: &str, delta: &str, first_after_resume: bool, out: &mut Out) {
    let judgement = judge_delta(says, text, delta);
    let (check, requirement) = if first_after_resume {
        (&STREAM_CONTINUES_AFTER_RESUME, STREAM_003)
    } else {
        (&SAY_CHUNKS_AS_SCRIPTED, SCRIPT_019)
    };
    let after = if first_after_resume { "the first delta after the resume" } else { "the delta" };
    let held = if first_after_resume { "the resumed state holds" } else { "streamed so far" };
    let message = match judgement {
        DeltaJudgement::Next => return out.eval(check, requirement),
        DeltaJudgement::Unknown => return,
        DeltaJudgement::Repeated => format!(
            "{after} repeats the chunk {delta:?} that the text {held} already ends with ({} characters)",
            text.chars().count()
        ),
        DeltaJudgement::Skipped(n) => format!(
            "{after} is {delta:?}, but {n} chunk(s) of the say come before it after the text {held} ({} characters): a chunk was lost",
            text.chars().count()
        ),
        DeltaJudgement::PastEnd => {
            format!("{after} is {delta:?}, but the text {held} is already the say's whole markdown")
        }
        DeltaJudgement::Other => format!(
            "{after} is {delta:?}, which is not the say's next chunk after the text {held} ({} characters)",
            text.chars().count()
        ),
    };
    out.fail(check, requirement, message);
}

/// A stream that ended before its say's last chunk, judged at the connection's next event: a
/// recovery's `run_complete` (`failed`, reason `interrupted`) of the same run makes it the end
/// `STREAM-004` owes a run whose server stopped mid-stream (another instance recovered it,
/// `spec/cluster.md`); anything else makes it `SCRIPT-019`'s finding. A connection cut before that
/// event hands it to the session ([`EarlyEnd::cut`]): the state the next resume gives tells how the
/// run ended ([`EarlyEnd::resumed_state`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct EarlyEnd {
    /// The run of the early end, and the finding it is if nothing explains it.
    pending: Option<(chatwire_schema::Id, String)>,
    /// Taken over from a cut connection: the resume's first state frame judges it.
    resumed: bool,
}

impl EarlyEnd {
    /// The next event of the connection arrived (before it is judged itself).
    pub fn next(&mut self, frame: &ServerFrame, out: &mut Out) {
        self.resumed = false;
        let Some((invocation, message)) = self.pending.take() else { return };
        match frame {
            ServerFrame::RunComplete(f)
                if f.invocation_id == invocation
                    && f.status == RunCompleteStatus::Failed
                    && f.reason.as_deref() == Some("interrupted") => {}
            // What a recovery settles before the run's end (its open calls).
            ServerFrame::ToolCallComplete(_) | ServerFrame::ToolCallDismiss(_) => {
                self.pending = Some((invocation, message))
            }
            _ => out.fail(&SAY_CHUNKS_AS_SCRIPTED, SCRIPT_019, message),
        }
    }

    /// The connection ended (closed, or cut by a kill) before the event that decides the early
    /// end: what it left undecided, for the session's next resume. Never resumed, it stays
    /// undecided, not charged: the frames that would decide it went to no connection here.
    pub fn cut(&mut self) -> EarlyEnd {
        EarlyEnd { pending: self.pending.take(), resumed: false }
    }

    /// Whether an early end waits for its decision.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// A resumed connection takes over the early end a cut connection of its session left.
    pub fn resume(parked: EarlyEnd) -> EarlyEnd {
        EarlyEnd { resumed: parked.pending.is_some(), pending: parked.pending }
    }

    /// The state the resume's first state frame gives (a snapshot or a catch-up): the run ended
    /// `failed` is the interrupted end (the `run_complete` was committed while no connection was
    /// open, so its reason is not seen); `completed` or `awaiting_input` went on after the early
    /// end, `SCRIPT-019`'s finding; still `running`, the next event decides. Anything else (another
    /// turn since, a cancel, an unknown state) cannot tell, and is left undecided.
    pub fn resumed_state(&mut self, state: Option<&UiState>, out: &mut Out) {
        if !std::mem::take(&mut self.resumed) {
            return;
        }
        let Some((invocation, message)) = self.pending.take() else { return };
        let Some(run) = state.map(|s| &s.run).filter(|r| r.invocation_id.as_ref() == Some(&invocation)) else {
            return;
        };
        match run.status {
            RunStatus::Running => self.pending = Some((invocation, message)),
            RunStatus::Completed | RunStatus::AwaitingInput => out.fail(
                &SAY_CHUNKS_AS_SCRIPTED,
                SCRIPT_019,
                format!("{message}, and the state after the resume shows the run went on"),
            ),
            RunStatus::Failed | RunStatus::Cancelled | RunStatus::Idle => {}
        }
    }
}

/// The `chat.assistant_message` of `invocation` that ends a stream whose text so far is `text`;
/// an end before the say's last chunk waits in `early` for what follows it.
fn end(
    says: &ScriptSays,
    text: &str,
    markdown: &str,
    invocation: &chatwire_schema::Id,
    early: &mut EarlyEnd,
    out: &mut Out,
) {
    let mut known = false;
    for (chunks, k) in says.positions(text) {
        known = true;
        if k == chunks.len() {
            if markdown == text {
                return out.eval(&SAY_CHUNKS_AS_SCRIPTED, SCRIPT_019);
            }
            return out.fail(
                &SAY_CHUNKS_AS_SCRIPTED,
                SCRIPT_019,
                format!(
                    "the chat.assistant_message that ends the stream carries {} characters, not the say's whole markdown ({} characters)",
                    markdown.chars().count(),
                    text.chars().count()
                ),
            );
        }
    }
    if known {
        let (chunks, k) = says.positions(text).next().map_or((0, 0), |(c, k)| (c.len(), k));
        early.pending = Some((invocation.clone(), format!("the stream ends after {k} of the say's {chunks} chunks")));
    }
}

/// A `chat.assistant_message` that opens and ends its item at once; `streaming`: whether
/// `assistant_stream` is in force on the connection.
fn whole(says: &ScriptSays, markdown: &str, streaming: bool, out: &mut Out) {
    let chunked = says.has_chunked(markdown);
    let plain = says.has_whole(markdown);
    match (chunked, plain, streaming) {
        (true, false, true) => out.fail(
            &SAY_CHUNKS_AS_SCRIPTED,
            SCRIPT_019,
            "a say with chunks came as one whole chat.assistant_message, but assistant_stream is in force on this connection",
        ),
        (true, _, _) | (false, true, _) => out.eval(&SAY_CHUNKS_AS_SCRIPTED, SCRIPT_019),
        (false, false, _) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn says() -> ScriptSays {
        let script = serde_json::from_value(json!({"turns": [
            {"steps": [{"op": "say", "markdown": "Hello, world!", "chunks": ["Hel", "lo, ", "world", "!"]},
                       {"op": "say", "markdown": "Plain."}],
             "retries": [{"steps": [{"op": "say", "markdown": "Again", "chunks": ["Ag", "ain"]}]}]}
        ]}))
        .expect("a valid script");
        ScriptSays::from_script(&script)
    }

    fn run(f: impl FnOnce(&mut Out)) -> (Vec<ReqId>, Vec<ReqId>) {
        let mut out = Out::default();
        f(&mut out);
        (out.evaluated.iter().map(|(_, r)| *r).collect(), out.raws.iter().map(|r| r.requirement).collect())
    }

    #[test]
    fn each_next_chunk_passes() {
        let s = says();
        assert_eq!(judge_delta(&s, "", "Hel"), DeltaJudgement::Next);
        assert_eq!(judge_delta(&s, "Hel", "lo, "), DeltaJudgement::Next);
        assert_eq!(judge_delta(&s, "Hello, world", "!"), DeltaJudgement::Next);
        assert_eq!(judge_delta(&s, "Ag", "ain"), DeltaJudgement::Next);
        let (ok, bad) = run(|o| delta(&s, "Hel", "lo, ", true, o));
        assert_eq!((ok, bad), (vec![STREAM_003], vec![]));
        let (ok, bad) = run(|o| delta(&s, "Hel", "lo, ", false, o));
        assert_eq!((ok, bad), (vec![SCRIPT_019], vec![]));
    }

    #[test]
    fn a_repeated_and_a_lost_chunk_are_named_after_a_resume() {
        let s = says();
        assert_eq!(judge_delta(&s, "Hello, ", "lo, "), DeltaJudgement::Repeated);
        assert_eq!(judge_delta(&s, "Hello, ", "lo, world"), DeltaJudgement::Repeated, "the chunk before in front");
        assert_eq!(judge_delta(&s, "Hel", "world"), DeltaJudgement::Skipped(1));
        assert_eq!(judge_delta(&s, "Hello, world!", "!"), DeltaJudgement::Repeated);
        assert_eq!(judge_delta(&s, "Hello, world!", "?"), DeltaJudgement::PastEnd);
        assert_eq!(judge_delta(&s, "Hel", "xyz"), DeltaJudgement::Other);
        assert_eq!(judge_delta(&s, "Unscripted", "x"), DeltaJudgement::Unknown);
        let mut out = Out::default();
        delta(&s, "Hello, ", "lo, ", true, &mut out);
        assert_eq!(out.raws.len(), 1);
        assert_eq!(out.raws[0].requirement, STREAM_003);
        assert!(out.raws[0].message.contains("repeats"), "{}", out.raws[0].message);
        let mut out = Out::default();
        delta(&s, "Hel", "world", true, &mut out);
        assert!(out.raws[0].message.contains("lost"), "{}", out.raws[0].message);
        let (ok, bad) = run(|o| delta(&s, "Hel", "world", false, o));
        assert_eq!((ok, bad), (vec![], vec![SCRIPT_019]));
        let (ok, bad) = run(|o| delta(&ScriptSays::default(), "", "x", true, o));
        assert_eq!((ok, bad), (vec![], vec![]));
    }

    /// `end`, with an early end judged at once by what follows it (`next`, when given).
    fn end_then(s: &ScriptSays, text: &str, markdown: &str, next: Option<&ServerFrame>, o: &mut Out) {
        let inv = chatwire_schema::Id::parse("inv_a").unwrap();
        let mut early = EarlyEnd::default();
        end(s, text, markdown, &inv, &mut early, o);
        match next {
            Some(frame) => early.next(frame, o),
            // Undecided at the end (no connection cut): the test reads it as the finding it would be.
            None if early.is_pending() => o.fail(&SAY_CHUNKS_AS_SCRIPTED, SCRIPT_019, "undecided"),
            None => {}
        }
    }

    fn run_complete(status: &str, reason: &str) -> ServerFrame {
        serde_json::from_value(serde_json::json!({"type": "chat.run_complete", "seq": 9, "invocation_id": "inv_a",
            "status": status, "reason": reason, "ts": "2026-11-26T00:00:00Z"}))
        .unwrap()
    }

    #[test]
    fn the_end_carries_the_whole_markdown_after_the_last_chunk() {
        let s = says();
        assert_eq!(run(|o| end_then(&s, "Hello, world!", "Hello, world!", None, o)), (vec![SCRIPT_019], vec![]));
        assert_eq!(run(|o| end_then(&s, "Hello, world!", "Hello, world?", None, o)), (vec![], vec![SCRIPT_019]));
        assert_eq!(run(|o| end_then(&s, "Hello, ", "Hello, ", None, o)), (vec![], vec![SCRIPT_019]));
        assert_eq!(run(|o| end_then(&s, "Unscripted", "Unscripted", None, o)), (vec![], vec![]));
    }

    #[test]
    fn an_early_end_is_the_interrupted_end_only_when_a_recovery_fails_the_run() {
        let s = says();
        let interrupted = run_complete("failed", "interrupted");
        assert_eq!(run(|o| end_then(&s, "Hello, ", "Hello, ", Some(&interrupted), o)), (vec![], vec![]));
        let completed = run_complete("completed", "completed");
        assert_eq!(run(|o| end_then(&s, "Hello, ", "Hello, ", Some(&completed), o)), (vec![], vec![SCRIPT_019]));
    }

    #[test]
    fn a_chunked_say_comes_whole_only_where_streams_are_not_in_force() {
        let s = says();
        assert_eq!(run(|o| whole(&s, "Hello, world!", false, o)), (vec![SCRIPT_019], vec![]));
        assert_eq!(run(|o| whole(&s, "Hello, world!", true, o)), (vec![], vec![SCRIPT_019]));
        assert_eq!(run(|o| whole(&s, "Plain.", true, o)), (vec![SCRIPT_019], vec![]));
        assert_eq!(run(|o| whole(&s, "Other", true, o)), (vec![], vec![]));
    }
}
