//! What a connection holds: the state each state frame leaves it with (and the session's record
//! of it, for patches and catch-ups), the view it holds it in, and, with several connections on a
//! session (`spec/attach.md`), the frames its seqs skip because they went to another connection.

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::ServerFrame;

use super::patch::Held;
use super::session::{ConnState, IdSeen, SessionTrack};
use super::shared::SharedState;

/// The view a connection holds its state in: its minor, and whether it sees open streams.
pub(super) fn view_of(c: &ConnState) -> (chatwire_schema::ProtocolVersion, bool) {
    let version = c.version.unwrap_or(chatwire_schema::ProtocolVersion { major: 1, minor: 0 });
    (version, c.in_force.has(&Capability::AssistantStream))
}

/// A connection attached beside others skipped the seqs `gap`: the events among them that a
/// connection here received and this one's view shows are folded in (an answer's change reaches
/// this one as a state frame too, `ATTACH-004`); a seq no connection here received makes the next
/// state frame taken as given, as is every gap once the session's seqs name two frames
/// ([`SessionTrack::seqs_void`]).
pub(super) fn fold_foreign(c: &mut ConnState, track: &SessionTrack, gap: std::ops::Range<u64>) {
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
    let (version, streams) = view_of(c);
    let seen = |f: &ServerFrame| {
        (streams || !matches!(f, ServerFrame::AssistantMessageDelta(_)))
            && chatwire_schema::older_minor::frame(f, version).is_some()
    };
    for frame in track.events.range(gap).map(|(_, f)| f).filter(|f| seen(f)) {
        if let Some(event) = frame.ui_event() {
            if c.oracle.apply(event).is_ok() {
                c.update_due = true;
                if c.in_force.any() {
                    c.since_state.push(frame);
                }
            }
        }
    }
}

/// The state the connection's model (its oracle) gives, shared with the state it held last: what a
/// delta leaves the client with. O(change) while the model follows the held state.
pub(super) fn model_state(c: &ConnState) -> Option<SharedState> {
    match &c.held {
        Some(held) => c.oracle.shared_from(held),
        None => c.oracle.expected().map(SharedState::from_state),
    }
}

/// Bookkeeping after a state frame of seq `seq`: the connection's latest state and the session's
/// held state (`state`: what the client now holds, when known; the model, the oracle, equals it).
/// A snapshot or catch-up also registers the ids it shows as used (ID-002).
pub(super) fn took_state(
    c: &mut ConnState,
    track: Option<&mut SessionTrack>,
    seq: u64,
    state: Option<SharedState>,
    whole: bool,
) -> Option<SharedState> {
    c.state_seq = Some(seq);
    c.state_seen = true;
    c.since_state.clear();
    if state.is_some() {
        c.oracle.synced(seq);
    }
    c.held = state.clone().map(|state| Held { seq, state, view: view_of(c) });
    let track = track?;
    // The latest state of the session, whichever connection is read last (ATTACH-004).
    if track.state_seq.is_none_or(|latest| seq >= latest) {
        track.state_seq = Some(seq);
        track.catch_up_base = c.in_force.has(&Capability::ResumeCatchUp);
    }
    if whole {
        for item in state.iter().flat_map(|s| s.iter()) {
            for id in [item.id().to_string(), item.invocation_id().to_string()] {
                track.ids.entry(id).or_insert(IdSeen::Shown(seq));
            }
        }
    }
    // Kept on every version: a 1.1 connection may catch up from the state of a 1.0 one.
    if let Some(held) = &c.held {
        track.held.record(held.clone());
    }
    state
}
