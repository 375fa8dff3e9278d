//! What a session's connections held, by seq: the states of its recent state frames (the base of a
//! patch and of a catch-up after a reconnect), the kinds of its recent frames (which carried a
//! state), and per connection the events since its latest state frame.

use std::collections::BTreeSet;

use chatwire_schema::{ServerFrame, UiEvent};

use super::shared::SharedState;

/// The view a connection holds its state in: its minor with the 1.3 features in force on it
/// (`REASON-001`, `USAGE-004`), and whether it sees open streams.
pub(crate) type View = (chatwire_schema::view::ConnView, bool);

/// The latest state a session's client holds, and the seq of the frame that carried it. Shared
/// (in chunks, `SharedState`), because a patch and a catch-up after a reconnect start from the same
/// state, and each frame's state differs from the last one's only where the frame says.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub seq: u64,
    pub state: SharedState,
    /// The view it was held in (minor, open streams seen): a catch-up starts from the state of
    /// the resuming client's own view (`spec/attach.md`: several views share a seq).
    pub view: View,
}

/// The latest states a session's clients received, by seq: a patch applies to the newest, a
/// catch-up to the one its resume named, which may be older (a client resumes from the state it
/// holds, not from frames it received while closing).
#[derive(Clone, Debug, Default)]
pub(crate) struct HeldStates {
    /// By seq, the newest kept: attached connections read late must not push out newer states.
    states: std::collections::BTreeMap<u64, Vec<Held>>,
}

/// How many states a session keeps for catch-ups.
const HELD_STATES: usize = 32;

impl HeldStates {
    /// The state of seq `seq`, when known (`None`: the state it gave is unknown).
    pub(crate) fn record(&mut self, held: Held) {
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
    pub(crate) fn correct(&mut self, held: Held) {
        let views = self.states.entry(held.seq).or_default();
        views.retain(|h| h.view != held.view);
        views.push(held);
    }

    /// The state the frame of seq `seq` carried, if still kept: as `view` held it where a
    /// connection of that view received it, else as any connection did.
    pub(crate) fn at(&self, seq: u64, view: View) -> Option<&Held> {
        let at_seq = self.states.get(&seq)?;
        at_seq.iter().find(|h| h.view == view).or_else(|| at_seq.first())
    }

    /// Every view's state of the frame of seq `seq` that is still kept.
    pub(crate) fn views(&self, seq: u64) -> &[Held] {
        self.states.get(&seq).map_or(&[], Vec::as_slice)
    }

    /// The latest state kept below seq `below` as a connection of `view` held it.
    fn latest_in_view(&self, below: u64, view: View) -> Option<&Held> {
        self.states.range(..below).rev().find_map(|(_, views)| views.iter().find(|h| h.view == view))
    }
}

/// The session's effective state at a resume's welcome of seq `welcome_seq`, as `view` shows it,
/// where the monitor knows it: the latest state a connection of that view held, when every seq
/// between it and the welcome names a frame a connection here received that leaves that view's
/// state as it was (an error, another connection's welcome, an answer that changes no state; a
/// delta where the view shows no open stream, `STREAM-005`). Another attached connection saw every
/// change, or nothing changed since. `None`: a seq between is unknown or changed the state.
pub(crate) fn known_at_welcome<'h>(
    held: &'h HeldStates,
    kinds: &SeqKinds,
    welcome_seq: u64,
    view: View,
) -> Option<&'h Held> {
    let latest = held.latest_in_view(welcome_seq, view)?;
    (latest.seq + 1..welcome_seq).all(|seq| kinds.leaves_view(seq, view.1)).then_some(latest)
}

/// After a resume welcome: what the frame right after it is checked against.
#[derive(Clone, Debug)]
pub(crate) struct CatchUpWindow {
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
pub(crate) struct SeqKinds {
    state: BTreeSet<u64>,
    event: BTreeSet<u64>,
    other: BTreeSet<u64>,
    /// Those of `state` that are deltas: they change no view without open streams (`STREAM-005`).
    delta: BTreeSet<u64>,
}

impl SeqKinds {
    /// Notes the frame `frame` of seq `seq`.
    pub(crate) fn note(&mut self, seq: u64, frame: &ServerFrame) {
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
        if frame.is_stream_delta() {
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
    pub(crate) fn known_in(&self, range: std::ops::Range<u64>) -> usize {
        self.state.range(range.clone()).count()
            + self.event.range(range.clone()).count()
            + self.other.range(range).count()
    }

    /// Whether `seq` is known to name a frame that carried a state.
    pub(crate) fn is_known_state(&self, seq: u64) -> bool {
        self.state.contains(&seq)
    }

    /// Whether `seq` is known to name a frame that carried no state.
    pub(crate) fn is_known_non_state(&self, seq: u64) -> bool {
        seq == 0 || self.event.contains(&seq) || self.other.contains(&seq)
    }

    /// The highest seq known to name a frame that carried no state.
    pub(crate) fn latest_non_state(&self, upto: u64) -> Option<u64> {
        let below = |set: &BTreeSet<u64>| set.range(..=upto).next_back().copied();
        below(&self.event).max(below(&self.other))
    }

    /// How many event frames with a seq above `seq` were seen: a lower bound of the events
    /// committed after it.
    pub(crate) fn events_after(&self, seq: u64) -> usize {
        self.event.range(seq.saturating_add(1)..).count()
    }
}

/// The events of a connection since its latest state frame, for the shape check. Bounded: a server
/// that sends events without states gets STATE-003 findings, and its patches no shape check.
#[derive(Clone, Debug, Default)]
pub(crate) struct SinceState {
    events: Vec<ServerFrame>,
    overflowed: bool,
}

/// Most events kept between two states (a batch of tool calls is the longest legitimate run).
const MAX_EVENTS_SINCE_STATE: usize = 512;

impl SinceState {
    pub(crate) fn push(&mut self, frame: &ServerFrame) {
        if self.events.len() < MAX_EVENTS_SINCE_STATE {
            self.events.push(frame.clone());
        } else {
            self.overflowed = true;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.events.clear();
        self.overflowed = false;
    }

    pub(crate) fn events(&self) -> Option<Vec<UiEvent<'_>>> {
        (!self.overflowed).then(|| self.events.iter().filter_map(ServerFrame::ui_event).collect())
    }
}
