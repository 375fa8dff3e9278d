//! The patch oracle (since 1.1): every `ui_state_patch` is applied (RFC 6902, all or nothing, the
//! json-patch crate) to the state of the frame its `base_seq` names, and the result compared with
//! the reducer's fold, the differential oracle extended to patches.
//!
//! - A patch after an event: `base_seq` is the seq of the connection's latest state frame
//!   (STATE-037); its shape keeps to the events since that state (`state_patch::check_shape`,
//!   STATE-039/040); applied, it gives exactly the reducer's state (STATE-038).
//! - A catch-up patch, the frame right after a resume welcome: only where `resume_catch_up` is in
//!   force and `last_seq` named a state frame within the retention (RESUME-018), with `base_seq`
//!   equal to that `last_seq`, applying to the state of that frame (RESUME-017). Its result must be
//!   the session's effective state (RESUME-019): the monitor compares it with the latest state a
//!   connection here held in the resumed connection's view wherever no seq between that state and
//!   the welcome is unknown to it (another attached connection saw every change, or nothing
//!   changed: `known_at_welcome`). Where the client missed events no connection here received,
//!   the driver proves it by comparing with a snapshot (the reconnect sweep, and `resume` with
//!   `compare_with_snapshot`). A windowed connection's catch-up is `super::window`'s (WINDOW-012).
//! - Where patches are in force, a `ui_state_updated` is a finding and a patch is due wherever an
//!   update would be (STATE-036; the flow itself is checked in `session`), except after a
//!   `chat.assistant_message_delta`: a delta is its own state change, followed by no state frame,
//!   and counts as a state frame itself, so the next patch's `base_seq` and a catch-up's
//!   `last_seq` may name it (STREAM-002).

use std::collections::BTreeSet;

use chatwire_schema::state_patch::{check_shape, PatchOp};
use chatwire_schema::ui_state_patch::UiStatePatch;
use chatwire_schema::{ReqId, ServerFrame, UiEvent, UiState};

use super::check::CheckDef;
use super::oracle::StateOracle;
use super::shared::SharedState;
use super::Out;
use crate::normalize::Normalizer;
use chatwire_schema::requirements::Level;

pub(super) const STATE_036: ReqId = ReqId::new("STATE-036");
pub(super) const STREAM_002: ReqId = ReqId::new("STREAM-002");
const STATE_037: ReqId = ReqId::new("STATE-037");
const STATE_038: ReqId = ReqId::new("STATE-038");
const STATE_039: ReqId = ReqId::new("STATE-039");
const STATE_040: ReqId = ReqId::new("STATE-040");
const RESUME_017: ReqId = ReqId::new("RESUME-017");
const RESUME_018: ReqId = ReqId::new("RESUME-018");
const RESUME_019: ReqId = ReqId::new("RESUME-019");

/// Where patches are in force, state changes come as patches, never as whole updates; a delta is
/// its own state change and gets none.
pub static PATCH_IN_PLACE_OF_UPDATE: CheckDef = CheckDef {
    id: "patch-in-place-of-update",
    requirements: &[STATE_036, STREAM_002],
    summary: "where ui_state_patch is in force, a ui_state_patch follows every event (batch) but a delta, no state frame follows a delta, and no ui_state_updated is sent",
    level: Level::Must,
};

/// Every patch applies to its base and gives the reducer's state.
pub static PATCH_MATCHES_REDUCER: CheckDef = CheckDef {
    id: "patch-matches-reducer",
    requirements: &[STATE_037, STATE_038, STATE_039, STATE_040],
    summary: "every ui_state_patch names the latest state as its base, guards and touches only what its events name, and applied to that state gives the reducer's fold",
    level: Level::Must,
};

/// A resume gets a catch-up patch only where it may, built from the state of `last_seq`, giving
/// the session's state.
pub static CATCH_UP_RESUME: CheckDef = CheckDef {
    id: "catch-up-resume",
    requirements: &[RESUME_017, RESUME_018, RESUME_019],
    summary: "a catch-up patch comes exactly where resume_catch_up is in force and last_seq named a state frame within the retention (no snapshot there), with base_seq = last_seq, applies to that state and, where the monitor knows the session's state, gives it",
    level: Level::Must,
};

/// The latest state a session's client holds, and the seq of the frame that carried it. Shared
/// (in chunks, `SharedState`), because a patch and a catch-up after a reconnect start from the same
/// state, and each frame's state differs from the last one's only where the frame says.
#[derive(Clone, Debug)]
pub(super) struct Held {
    pub seq: u64,
    pub state: SharedState,
    /// The view it was held in (minor, open streams seen): a catch-up starts from the state of
    /// the resuming client's own view (`spec/attach.md`: several views share a seq).
    pub view: (chatwire_schema::ProtocolVersion, bool),
}

/// The latest states a session's clients received, by seq: a patch applies to the newest, a
/// catch-up to the one its resume named, which may be older (a client resumes from the state it
/// holds, not from frames it received while closing).
#[derive(Clone, Debug, Default)]
pub(super) struct HeldStates {
    /// By seq, the newest kept: attached connections read late must not push out newer states.
    states: std::collections::BTreeMap<u64, Vec<Held>>,
}

/// How many states a session keeps for catch-ups.
const HELD_STATES: usize = 32;

impl HeldStates {
    /// The state of seq `seq`, when known (`None`: the state it gave is unknown).
    pub(super) fn record(&mut self, held: Held) {
        let views = self.states.entry(held.seq).or_default();
        if views.len() < 8 && !views.iter().any(|h| h.view == held.view) {
            views.push(held);
        }
        while self.states.len() > HELD_STATES {
            self.states.pop_first();
        }
    }

    /// The session's state at `held.seq` in its view is `held`, whatever a connection was sent
    /// then (a resume's snapshot the monitor knows is not the session's, `super::diverge`): a
    /// later resume is judged against the session's state, not against that snapshot.
    pub(super) fn correct(&mut self, held: Held) {
        let views = self.states.entry(held.seq).or_default();
        views.retain(|h| h.view != held.view);
        views.push(held);
    }

    /// The state the frame of seq `seq` carried, if still kept: as `view` held it where a
    /// connection of that view received it, else as any connection did.
    pub(super) fn at(&self, seq: u64, view: (chatwire_schema::ProtocolVersion, bool)) -> Option<&Held> {
        let at_seq = self.states.get(&seq)?;
        at_seq.iter().find(|h| h.view == view).or_else(|| at_seq.first())
    }

    /// Every view's state of the frame of seq `seq` that is still kept.
    pub(super) fn views(&self, seq: u64) -> &[Held] {
        self.states.get(&seq).map_or(&[], Vec::as_slice)
    }

    /// The latest state kept below seq `below` as a connection of `view` held it.
    fn latest_in_view(&self, below: u64, view: (chatwire_schema::ProtocolVersion, bool)) -> Option<&Held> {
        self.states.range(..below).rev().find_map(|(_, views)| views.iter().find(|h| h.view == view))
    }
}

/// The session's effective state at a resume's welcome of seq `welcome_seq`, as `view` shows it,
/// where the monitor knows it: the latest state a connection of that view held, when every seq
/// between it and the welcome names a frame a connection here received that leaves that view's
/// state as it was (an error, another connection's welcome, an answer that changes no state; a
/// delta where the view shows no open stream, `STREAM-005`). Another attached connection saw every
/// change, or nothing changed since. `None`: a seq between is unknown or changed the state.
pub(super) fn known_at_welcome<'h>(
    held: &'h HeldStates,
    kinds: &SeqKinds,
    welcome_seq: u64,
    view: (chatwire_schema::ProtocolVersion, bool),
) -> Option<&'h Held> {
    let latest = held.latest_in_view(welcome_seq, view)?;
    (latest.seq + 1..welcome_seq).all(|seq| kinds.leaves_view(seq, view.1)).then_some(latest)
}

/// After a resume welcome: what the frame right after it is checked against.
#[derive(Clone, Debug)]
pub(super) struct CatchUpWindow {
    /// The resume's `last_seq`.
    pub last_seq: u64,
    /// Whether `resume_catch_up` is in force on the resumed connection.
    pub in_force: bool,
    /// The welcome's `resume_retention`.
    pub retention: Option<u32>,
    /// The welcome's seq: the frames after `last_seq` before it bound the events the client missed.
    pub welcome_seq: u64,
}

/// How many seqs of each kind a session remembers (the most recent ones).
const SEQ_MEMORY: usize = 4096;

/// The kinds of a session's recent frames by seq: which carried a state, which an event, which
/// neither (a welcome or an error), so that a resume's `last_seq` can be judged.
#[derive(Clone, Debug, Default)]
pub(super) struct SeqKinds {
    state: BTreeSet<u64>,
    event: BTreeSet<u64>,
    other: BTreeSet<u64>,
    /// Those of `state` that are deltas: they change no view without open streams (`STREAM-005`).
    delta: BTreeSet<u64>,
}

impl SeqKinds {
    /// Notes the frame `frame` of seq `seq`.
    pub(super) fn note(&mut self, seq: u64, frame: &ServerFrame) {
        let set = if frame.carries_state() {
            &mut self.state
        } else if frame.ui_event().is_some() {
            &mut self.event
        } else {
            &mut self.other
        };
        set.insert(seq);
        if set.len() > SEQ_MEMORY {
            set.pop_first();
        }
        if matches!(frame, ServerFrame::AssistantMessageDelta(_)) {
            self.delta.insert(seq);
            if self.delta.len() > SEQ_MEMORY {
                self.delta.pop_first();
            }
        }
    }

    /// Whether `seq` names a frame a connection here received that changes no state of a view
    /// (`streams`: whether the view shows open streams).
    fn leaves_view(&self, seq: u64, streams: bool) -> bool {
        self.other.contains(&seq) || (!streams && self.delta.contains(&seq))
    }

    /// How many seqs in `range` name a frame some connection of the session received.
    pub(super) fn known_in(&self, range: std::ops::Range<u64>) -> usize {
        self.state.range(range.clone()).count()
            + self.event.range(range.clone()).count()
            + self.other.range(range).count()
    }

    /// Whether `seq` is known to name a frame that carried a state.
    pub(super) fn is_known_state(&self, seq: u64) -> bool {
        self.state.contains(&seq)
    }

    /// Whether `seq` is known to name a frame that carried no state.
    fn is_known_non_state(&self, seq: u64) -> bool {
        seq == 0 || self.event.contains(&seq) || self.other.contains(&seq)
    }

    /// The highest seq known to name a frame that carried no state.
    pub(super) fn latest_non_state(&self, upto: u64) -> Option<u64> {
        let below = |set: &BTreeSet<u64>| set.range(..=upto).next_back().copied();
        below(&self.event).max(below(&self.other))
    }

    /// How many event frames with a seq above `seq` were seen: a lower bound of the events
    /// committed after it.
    fn events_after(&self, seq: u64) -> usize {
        self.event.range(seq.saturating_add(1)..).count()
    }
}

/// The events of a connection since its latest state frame, for the shape check. Bounded: a server
/// that sends events without states gets STATE-003 findings, and its patches no shape check.
#[derive(Clone, Debug, Default)]
pub(super) struct SinceState {
    events: Vec<ServerFrame>,
    overflowed: bool,
}

/// Most events kept between two states (a batch of tool calls is the longest legitimate run).
const MAX_EVENTS_SINCE_STATE: usize = 512;

impl SinceState {
    pub(super) fn push(&mut self, frame: &ServerFrame) {
        if self.events.len() < MAX_EVENTS_SINCE_STATE {
            self.events.push(frame.clone());
        } else {
            self.overflowed = true;
        }
    }

    pub(super) fn clear(&mut self) {
        self.events.clear();
        self.overflowed = false;
    }

    fn events(&self) -> Option<Vec<UiEvent<'_>>> {
        (!self.overflowed).then(|| self.events.iter().filter_map(ServerFrame::ui_event).collect())
    }
}

/// A patch after an event. `state_seq` is the seq of the connection's latest state frame, `held`
/// that frame's state, `since` the events since it (`None`: the change came from frames sent to
/// another attached connection that no connection here received, so the patch is taken as given,
/// `ATTACH-004`). Returns the state the client holds after it: the patched state, or where the
/// patch does not apply the reducer's (so one defect is reported once).
pub(super) fn after_event(
    p: &UiStatePatch,
    state_seq: Option<u64>,
    held: Option<&Held>,
    since: Option<&SinceState>,
    oracle: &mut StateOracle,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> Option<SharedState> {
    match state_seq {
        Some(seq) if seq == p.base_seq => out.eval(&PATCH_MATCHES_REDUCER, STATE_037),
        Some(seq) => out.fail(
            &PATCH_MATCHES_REDUCER,
            STATE_037,
            format!("base_seq {} is not {seq}, the seq of the latest state frame on this connection", p.base_seq),
        ),
        None => {}
    }
    // The base is the state the client holds, whatever base_seq claims.
    let base = held?;
    let Some(since) = since else {
        // The change came from answers sent to another connection that this monitor has not seen
        // (ATTACH-004): the patch is taken as given; the attached views' agreement judges it.
        let patched = base.state.apply(&p.patch);
        if let Err(e) = &patched {
            out.fail(&PATCH_MATCHES_REDUCER, STATE_038, e.clone());
        }
        let (patched, _) = patched.ok()?;
        oracle.snapshot(&patched.to_state());
        return Some(patched);
    };
    if let Some(events) = since.events() {
        match check_shape(&base.state, &events, &p.patch) {
            Ok(()) => {
                out.eval(&PATCH_MATCHES_REDUCER, STATE_039);
                out.eval(&PATCH_MATCHES_REDUCER, STATE_040);
            }
            // A path that does not exist is the application's to report (STATE-038), once.
            Err(e) if e.requirement == STATE_038.as_str() => {}
            Err(e) => {
                let requirement =
                    ReqId::parse(e.requirement).ok().filter(|r| PATCH_MATCHES_REDUCER.requirements.contains(r));
                out.fail(&PATCH_MATCHES_REDUCER, requirement.unwrap_or(STATE_038), e.to_string());
            }
        }
    }
    match base.state.apply(&p.patch) {
        Ok((patched, low)) => {
            match oracle.adopt_shared(&patched, base.seq, low, redactor) {
                Some(diff) => out.fail(
                    &PATCH_MATCHES_REDUCER,
                    STATE_038,
                    format!("the patched state differs from the reducer's fold of the events received (expected = reducer):\n{diff}"),
                ),
                None if oracle.expected().is_some() => out.eval(&PATCH_MATCHES_REDUCER, STATE_038),
                None => {}
            }
            Some(patched)
        }
        Err(e) => {
            out.fail(&PATCH_MATCHES_REDUCER, STATE_038, e);
            oracle.shared_from(base)
        }
    }
}

/// The frame right after a resume welcome is a patch; `held` is the state of the resume's
/// `last_seq`, `known` the session's state at the welcome where the monitor knows it
/// ([`known_at_welcome`]). Returns the state the client holds after it, when the monitor knows it:
/// the patched state, or where it differs from `known`, `known` (the server's state, so the wrong
/// catch-up is charged once, under RESUME-019, and not again by every later patch).
pub(super) fn catch_up(
    p: &UiStatePatch,
    window: &CatchUpWindow,
    held: Option<&Held>,
    known: Option<&Held>,
    kinds: &SeqKinds,
    redactor: &mut Normalizer,
    out: &mut Out,
) -> Option<SharedState> {
    let last = window.last_seq;
    if !window.in_force {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            "a ui_state_patch in place of the snapshot, but resume_catch_up is not in force on this connection",
        );
    } else if kinds.is_known_non_state(last) {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            format!("a catch-up patch, but the resume's last_seq {last} names a frame that carried no state"),
        );
    } else if let Some(limit) = window.retention.filter(|r| kinds.events_after(last) > *r as usize) {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_018,
            format!(
                "a catch-up patch, but at least {} events were committed after last_seq {last} (resume_retention {limit})",
                kinds.events_after(last)
            ),
        );
    } else {
        out.eval(&CATCH_UP_RESUME, RESUME_018);
    }
    if p.base_seq == last {
        out.eval(&CATCH_UP_RESUME, RESUME_017);
    } else {
        out.fail(
            &CATCH_UP_RESUME,
            RESUME_017,
            format!("the catch-up patch has base_seq {}, not the resume's last_seq {last}", p.base_seq),
        );
    }
    let base = held?;
    let state = match base.state.apply(&p.patch) {
        Ok((state, _)) => {
            out.eval(&CATCH_UP_RESUME, RESUME_017);
            state
        }
        Err(e) => {
            out.fail(
                &CATCH_UP_RESUME,
                RESUME_017,
                format!("the catch-up patch does not apply to the state of last_seq {last}: {e}"),
            );
            // Charged once: the client goes on from the server's state where the monitor knows it.
            return known.map(|k| k.state.clone());
        }
    };
    let Some(known) = known else { return Some(state) };
    match super::oracle::divergence(&known.state.to_state(), &state.to_state(), redactor) {
        None => {
            out.eval(&CATCH_UP_RESUME, RESUME_019);
            Some(state)
        }
        Some(diff) => {
            out.fail(
                &CATCH_UP_RESUME,
                RESUME_019,
                format!(
                    "the catch-up patch from last_seq {last} gives a state other than the session's, which the state of seq {} shows with nothing changed since (expected = session):\n{diff}",
                    known.seq
                ),
            );
            Some(known.state.clone())
        }
    }
}

/// Applies `ops` to the JSON of `base`, all or nothing, and reads the result as a UiState: the
/// reference the monitor's in-place application (`SharedState::apply`) falls back to and agrees with.
pub fn apply(base: &UiState, ops: &[PatchOp]) -> Result<UiState, String> {
    let mut doc = serde_json::to_value(base).map_err(|e| format!("the base state does not serialize: {e}"))?;
    let patch: json_patch::Patch = serde_json::to_value(ops)
        .and_then(serde_json::from_value)
        .map_err(|e| format!("the patch is no RFC 6902 patch: {e}"))?;
    json_patch::patch(&mut doc, &patch).map_err(|e| format!("the patch does not apply: {e}"))?;
    serde_json::from_value(doc).map_err(|e| format!("the patched state is not a UiState: {e}"))
}
