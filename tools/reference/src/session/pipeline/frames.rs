//! The fan-out step of the commit pipeline: for each group of attached connections that see the
//! same bytes ([`Group`]), the frames a change sends it, each as its view defines it: answers to
//! the requester alone (`ATTACH-005`), deltas only where streams are seen (`STREAM-001`), after
//! each unit a `ui_state_patch` where patches are in force (`STATE-036`) or else a
//! `ui_state_updated`, and for a windowed connection the patch projected onto its window
//! (`WINDOW-004`, `WINDOW-005`) or a fresh windowed snapshot (`WINDOW-006`).

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::window::{ProjectError, WindowView};
use chatwire_schema::{ServerFrame, UiState};

use crate::fault::Faults;
use crate::session::attachment::{groups, Attachment, Group, View};
use crate::session::view::{
    announced_text, open_window, patch_frame, seen_state, state_frame, usage_seen, window_snapshot,
};

/// The ops of one unit's events, as each kind of connection sees them: whether it sees open
/// streams (`STREAM-005`) and whether it sees reasoning items (`REASON-001`); only the lists some
/// group needs are built ([`Frames::wanted_ops`]). Usage and the minor's shapes are taken off per
/// group, as they need no state.
#[derive(Default)]
pub(crate) struct UnitOps {
    /// Indexed by [`UnitOps::index`].
    pub lists: [Vec<PatchOp>; 8],
    /// Which of the lists are built.
    pub wanted: [bool; 8],
}

impl UnitOps {
    /// The list for connections that see streams (`streams`), reasoning (`reasoning`) and
    /// sub-agents' transcripts (`subagents`).
    pub fn index(streams: bool, reasoning: bool, subagents: bool) -> usize {
        usize::from(subagents) * 4 + usize::from(streams) * 2 + usize::from(reasoning)
    }

    /// Whether a list for connections that do not see reasoning is built.
    pub fn wants_plain(&self) -> bool {
        [false, true]
            .iter()
            .any(|&streams| [false, true].iter().any(|&sub| self.wanted[Self::index(streams, false, sub)]))
    }

    /// The list `view` gets.
    fn of(&self, view: View) -> &[PatchOp] {
        &self.lists[Self::index(view.streams, view.conn.reasoning, view.conn.subagents)]
    }
}

/// The frames of one change for each group, built as the change is staged.
pub(crate) struct Frames<'f> {
    faults: &'f Faults,
    groups: Vec<Group>,
    /// The connection whose request caused the change, where it is attached.
    requester: Option<u64>,
    /// A replay of another replica's commit: its requester is not here, and no answer is sent.
    replay: bool,
}

impl<'f> Frames<'f> {
    pub fn new(faults: &'f Faults, attached: &[Attachment], requester: Option<u64>, replay: bool) -> Self {
        let mut groups = groups(attached);
        // What each group is sent of the session (a planted fault sends more).
        groups.iter_mut().for_each(|gr| gr.view.conn = faults.fanout.sent_view(gr.view.conn));
        Frames { faults, groups, requester, replay }
    }

    /// Frames that follow those already staged in `groups` (a batch's earlier changes).
    pub fn continuing(faults: &'f Faults, groups: Vec<Group>, requester: Option<u64>, replay: bool) -> Self {
        Frames { faults, groups, requester, replay }
    }

    /// Whether some group needs each unit's ops: one that gets patches, or a window, which moves
    /// with the ops whatever its connection gets (`WINDOW-004`).
    pub fn wants_ops(&self) -> bool {
        self.groups.iter().any(|gr| gr.view.patches || gr.window.is_some())
    }

    /// Which of a unit's op lists some group needs ([`UnitOps::index`]); only those are built.
    pub fn wanted_ops(&self) -> [bool; 8] {
        let mut wanted = [false; 8];
        for gr in self.groups.iter().filter(|gr| gr.view.patches || gr.window.is_some()) {
            wanted[UnitOps::index(gr.view.streams, gr.view.conn.reasoning, gr.view.conn.subagents)] = true;
        }
        wanted
    }

    /// Whether a group does not see sub-agents' transcripts (`SUBAGENT-001`): frames of a session
    /// holding one are then seen by the state before them ([`ConnView::frame_at`]).
    pub fn has_blind(&self) -> bool {
        self.groups.iter().any(|gr| !gr.view.conn.subagents)
    }

    /// The groups and their frames.
    pub fn into_groups(self) -> Vec<Group> {
        self.groups
    }

    /// Stages `frame` for `group` as its minor defines it: for every member, or for the
    /// requester alone where it is an answer and the requester is attached (`ATTACH-005`).
    fn push_frame(
        &self,
        group: &mut Group,
        frame: &ServerFrame,
        before: Option<&UiState>,
    ) -> Result<(), serde_json::Error> {
        if self.replay && frame.is_answer() {
            return Ok(());
        }
        let only = if frame.is_answer() && !self.faults.fanout.answers_to_all() { self.requester } else { None };
        if let Some(text) = announced_text(frame, group.view.conn, before)? {
            group.push(only, text);
        }
        Ok(())
    }

    /// A frame that answers the change's request and changes no state.
    pub fn answer(&mut self, frame: ServerFrame) -> Result<(), serde_json::Error> {
        let frame = self.faults.fanout.announce(frame);
        let mut groups = std::mem::take(&mut self.groups);
        let pushed = groups.iter_mut().try_for_each(|group| self.push_frame(group, &frame, None));
        self.groups = groups;
        pushed
    }

    /// The stream ends: no group is still owed its first delta after a resume (`STREAM-003`).
    pub fn stream_ended(&mut self) {
        self.groups.iter_mut().for_each(|gr| gr.resumed_mid_stream = false);
    }

    /// An event that is not a delta, announced to every group (to the requester alone under the
    /// planted fault `event-only-to-requester`); `before`: the state before it, where a group
    /// sees it by that state ([`ConnView::frame_at`]).
    pub fn event(
        &mut self,
        frame: ServerFrame,
        ends_stream: bool,
        before: Option<&UiState>,
    ) -> Result<(), serde_json::Error> {
        let fanout = &self.faults.fanout;
        let announced = match ends_stream {
            true => fanout.announce_stream_end(fanout.announce(frame)),
            false => fanout.announce(frame),
        };
        let only_requester = self.requester.filter(|_| fanout.events_only_to_requester());
        let mut groups = std::mem::take(&mut self.groups);
        let pushed = groups.iter_mut().try_for_each(|group| match only_requester {
            Some(id) if !announced.is_answer() => {
                if let Some(text) = announced_text(&announced, group.view.conn, before)? {
                    group.push(Some(id), text);
                }
                Ok(())
            }
            _ => self.push_frame(group, &announced, before),
        });
        self.groups = groups;
        pushed
    }

    /// A delta, to the groups that see streams (and reasoning, for a reasoning delta); `previous`
    /// is the text of the delta committed before it (a planted fault repeats it after a resume).
    pub fn delta(
        &mut self,
        frame: &ServerFrame,
        previous: Option<&str>,
        before: Option<&UiState>,
    ) -> Result<(), serde_json::Error> {
        let fanout = &self.faults.fanout;
        let receives = |view: View| view.streams && frame.ui_event().is_some_and(|e| view.conn.sees_event(e));
        let mut groups = std::mem::take(&mut self.groups);
        let pushed = groups.iter_mut().filter(|gr| receives(gr.view)).try_for_each(|group| {
            let announced = match std::mem::take(&mut group.resumed_mid_stream) {
                true => fanout.first_delta_after_resume(frame.clone(), previous),
                false => Some(frame.clone()),
            };
            match announced {
                Some(frame) => self.push_frame(group, &fanout.announce(frame), before),
                None => Ok(()),
            }
        });
        self.groups = groups;
        pushed
    }

    /// After a unit of deltas only (`STREAM-002`): the delta is the state frame of a connection
    /// that received it, the base of its next patch; a connection that did not (it does not see
    /// streams, or reasoning for a reasoning delta) has not moved.
    pub fn after_deltas(&mut self, seq: u64, reasoning: bool, nested: bool) {
        let received =
            |view: View| view.streams && (!reasoning || view.conn.reasoning) && (!nested || view.conn.subagents);
        self.groups.iter_mut().filter(|gr| received(gr.view)).for_each(|gr| gr.base = seq);
    }

    /// The state frame of each group after a unit (seq `seq`, the state `state`); returns whether
    /// every group sees streams: only what a connection that does not see streams got can be a
    /// base without the open stream (`STREAM-006`).
    /// `reasoning_only`: every event of the unit is a reasoning frame; a group where `reasoning` is
    /// not in force received none of them (`REASON-001`) and gets no state frame either, its view
    /// unchanged.
    pub fn unit_state(
        &mut self,
        state: &UiState,
        seq: u64,
        ops: &UnitOps,
        reasoning_only: bool,
        hidden_from_blind: bool,
    ) -> Result<bool, serde_json::Error> {
        let fanout = &self.faults.fanout;
        for group in &mut self.groups {
            if (reasoning_only && !group.view.conn.reasoning) || (hidden_from_blind && !group.view.conn.subagents) {
                continue;
            }
            let View { patches, streams, conn } = group.view;
            let unit_ops = usage_seen(ops.of(group.view), conn);
            let text = if let Some(window) = group.window.as_mut() {
                windowed_state_frame(self.faults, state, window, group.view, seq, group.base, &unit_ops)?
            } else if patches {
                patch_frame(seq, fanout.patch_base_seq(group.base), &fanout.patch(&unit_ops), conn.version)?
            } else {
                let state = seen_state(state, streams, conn);
                state_frame("ui_state_updated", seq, &fanout.present(&state, false))?
            };
            group.push(None, text);
            group.base = seq;
        }
        Ok(self.groups.iter().all(|gr| gr.view.streams))
    }
}

/// The state frame of a windowed connection for a change whose ops on the whole state (as the
/// connection sees it) are `ops` (`WINDOW-004`, `WINDOW-005`): the ops projected onto its view, or
/// the view itself where it gets whole states; a fresh windowed snapshot where the change cut its
/// cursor item away (`WINDOW-006`).
fn windowed_state_frame(
    faults: &Faults,
    state: &UiState,
    window: &mut WindowView,
    view: View,
    seq: u64,
    base: u64,
    ops: &[PatchOp],
) -> Result<String, serde_json::Error> {
    let projected = match faults.window.projects_patches() {
        true => window.project(ops),
        // The planted fault `unheld-change-sent`: the whole state's ops, as a client holding it all would get them.
        false => Ok(ops.to_vec()),
    };
    match projected {
        Ok(ops) if view.patches => patch_frame(seq, base, &faults.fanout.patch(&ops), view.version()),
        Ok(_) => {
            let seen = seen_state(state, view.streams, view.conn);
            state_frame("ui_state_updated", seq, &window.view(&seen))
        }
        Err(ProjectError::CursorRemoved | ProjectError::Unsupported { .. }) => {
            let seen = seen_state(state, view.streams, view.conn);
            *window = open_window(faults, &seen, window.size);
            window_snapshot(seq, &window.view(&seen), &window.window(&seen))
        }
    }
}
