//! What a connection holds: the state each state frame leaves it with (and the session's record
//! of it, for patches and catch-ups), and, with several connections on a session
//! (`spec/attach.md`), the frames its seqs skip because they went to another connection.

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ServerFrame, UiState};

use super::conn::ConnModel;
use super::held::{Held, View};
use super::session::SessionModel;
use super::shared::SharedState;

/// A state frame (or a delta, its own state change) the model took: what the checks that follow
/// the states each connection holds read after it.
#[derive(Clone, Debug)]
pub(crate) struct TookState {
    /// The frame's seq.
    pub seq: u64,
    /// What the client holds after it, when the monitor knows it.
    pub state: Option<SharedState>,
    /// The frame showed the state whole (a snapshot, a catch-up): every id it holds was shown.
    pub whole: bool,
}

/// What the model did with one server frame.
#[derive(Clone, Debug, Default)]
pub(crate) struct Took {
    /// The frame left the connection holding a state.
    pub state: Option<TookState>,
    /// The frame was recorded in its session (its seq, its kind); a patch in place of a new
    /// session's snapshot is judged and then passed over.
    pub recorded: bool,
}

/// A connection attached beside others skipped the seqs `gap`: the events among them that a
/// connection here received and this one's view shows are folded in (an answer's change reaches
/// this one as a state frame too, `ATTACH-004`); a seq no connection here received makes the next
/// state frame taken as given, as is every gap once the session's seqs name two frames
/// ([`SessionModel::seqs_void`]).
pub(crate) fn fold_foreign(c: &mut ConnModel, track: &SessionModel, gap: std::ops::Range<u64>) {
    if gap.is_empty() {
        return;
    }
    if track.seqs_void {
        c.foreign_unknown = true;
        return;
    }
    let width = (gap.end - gap.start) as usize;
    if track.kinds.known_in(gap.clone()) < width {
        // Whether the unknown frames changed the state shows only if a state frame follows.
        c.foreign_unknown = true;
    }
    let (view, streams) = c.view();
    // What the connection's features leave of a frame (`REASON-001`, `USAGE-004`); its minor only
    // decides whether it gets the frame at all.
    let features = chatwire_schema::view::ConnView { version: chatwire_schema::PROTOCOL_VERSION, ..view };
    let seen = |f: &ServerFrame| {
        (streams || !f.is_stream_delta()) && chatwire_schema::older_minor::frame(f, view.version).is_some()
    };
    for frame in track.events.range(gap).map(|(_, f)| f).filter(|f| seen(f)) {
        let Some(frame) = features.frame(frame) else { continue };
        let frame = &*frame;
        if let Some(event) = frame.ui_event() {
            if c.oracle.apply(event).is_ok() {
                c.update_due = true;
                if !c.features.is_empty() {
                    c.since_state.push(frame);
                }
            }
        }
    }
}

/// The state the connection's model (its oracle) gives, shared with the state it held last: what a
/// delta leaves the client with. O(change) while the model follows the held state.
pub(crate) fn model_state(c: &ConnModel) -> Option<SharedState> {
    match &c.held {
        Some(held) => c.oracle.shared_from(held),
        None => c.oracle.expected().map(SharedState::from_state),
    }
}

/// Bookkeeping after a state frame of seq `seq`: the connection's latest state and the session's
/// held state (`state`: what the client now holds, when known; the model, the oracle, equals it).
pub(crate) fn took_state(
    c: &mut ConnModel,
    track: Option<&mut SessionModel>,
    seq: u64,
    state: Option<SharedState>,
    whole: bool,
) -> TookState {
    c.state_seq = Some(seq);
    c.state_seen = true;
    c.since_state.clear();
    if state.is_some() {
        c.oracle.synced(seq);
    }
    c.held = state.clone().map(|state| Held { seq, state, view: c.view() });
    if let Some(track) = track {
        // The latest state of the session, whichever connection is read last (ATTACH-004).
        if track.state_seq.is_none_or(|latest| seq >= latest) {
            track.state_seq = Some(seq);
            track.catch_up_base = c.has(&Capability::ResumeCatchUp);
        }
        // Kept on every version: a 1.1 connection may catch up from the state of a 1.0 one.
        if let Some(held) = &c.held {
            track.held.record(held.clone());
        }
    }
    TookState { seq, state, whole }
}

/// The latest state any connection of the session held, in `view` where one held it so.
pub(crate) fn latest_state(track: &SessionModel, view: View) -> Option<UiState> {
    track.state_seq.and_then(|seq| track.held.at(seq, view)).map(|held| held.state.to_state())
}
