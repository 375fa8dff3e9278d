//! What a sweep keeps of a run, with no I/O: the cut point and the frames counted towards it,
//! the ids the session introduced in order, the settlements per call, and what the uninterrupted
//! run leaves for its variants ([`SweepBaseline`]). `sweep.rs` carries the cut and recovery out.

use std::collections::{BTreeMap, HashMap};

use chatwire_schema::{DisplayItem, ServerFrame};

/// The part a run of a scenario plays in a sweep.
pub(super) enum SweepRole<'b> {
    /// The uninterrupted run: records what the variants are compared with.
    Baseline,
    /// Cut the main connection after its `cut_after`-th frame, resume, finish, compare.
    Cut { cut_after: usize, baseline: &'b SweepBaseline },
}

/// What the uninterrupted run of a sweepable scenario leaves for its cut variants.
#[derive(Clone, Debug)]
pub struct SweepBaseline {
    /// Frames received on the main connection after its first welcome and snapshot: the cut points.
    pub frames: usize,
    /// The first cut point: after the last `chat.cancel_accepted` of the run, else 1. Where a cancel
    /// races the run (CANCEL-007), a cut before it moves it to another point of the run and so
    /// legitimately changes the final state (more text streamed, another step done); only cuts
    /// after it have one right final state.
    pub first_cut: usize,
    /// The final UiState, normalized like snapshots (ids numbered, timestamps redacted), pretty JSON.
    pub final_state: String,
    /// Placeholders bound to ids the session introduced: name -> (kind, ordinal of introduction).
    /// A variant's session has other ids; the scripted agent makes the n-th of a kind correspond.
    id_bindings: HashMap<String, (IdKind, usize)>,
}

/// Kinds of ids whose order of introduction a sweep tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum IdKind {
    Invocation = 0,
    ToolCall = 1,
    Item = 2,
}

/// Ids in the order the session introduced them, per kind, learnt from event frames and, for those a
/// cut lost, from the resume snapshot (display order, which is call and turn order).
#[derive(Default)]
struct IdOrder {
    lists: [Vec<String>; 3],
    known: HashMap<String, (IdKind, usize)>,
}

impl IdOrder {
    fn note(&mut self, kind: IdKind, id: &str) {
        if !self.known.contains_key(id) {
            let list = &mut self.lists[kind as usize];
            self.known.insert(id.to_owned(), (kind, list.len()));
            list.push(id.to_owned());
        }
    }

    fn get(&self, kind: IdKind, ordinal: usize) -> Option<&str> {
        self.lists[kind as usize].get(ordinal).map(String::as_str)
    }
}

/// Sweep bookkeeping of one run (absent outside sweeps, so ordinary runs pay nothing for it).
pub(super) struct SweepTrack {
    /// Cut after this many main-connection frames; `None` in the uninterrupted run.
    pub(super) cut_after: Option<usize>,
    /// Counting starts once the first connect (welcome + snapshot) completed.
    pub(super) counting: bool,
    pub(super) main_frames: usize,
    /// The main frame number of the latest `chat.cancel_accepted` (0: none).
    pub(super) cancelled_at: usize,
    pub(super) cut_due: bool,
    pub(super) cut_done: bool,
    order: IdOrder,
    /// Settlement frames (`tool_call_complete`, `tool_call_dismiss`) per call, on every connection.
    settlements: BTreeMap<String, usize>,
}

impl SweepTrack {
    pub(super) fn new(cut_after: Option<usize>) -> Self {
        SweepTrack {
            cut_after,
            counting: false,
            main_frames: 0,
            cancelled_at: 0,
            cut_due: false,
            cut_done: false,
            order: IdOrder::default(),
            settlements: BTreeMap::new(),
        }
    }

    pub(super) fn note_frame(&mut self, frame: &ServerFrame) {
        match frame {
            ServerFrame::UserMessageAccepted(f) => {
                self.order.note(IdKind::Invocation, f.invocation_id.as_str());
                self.order.note(IdKind::Item, f.item_id.as_str());
            }
            ServerFrame::AssistantMessage(f) => self.order.note(IdKind::Item, f.item_id.as_str()),
            ServerFrame::AssistantMessageDelta(f) => self.order.note(IdKind::Item, f.item_id.as_str()),
            ServerFrame::ReasoningDelta(f) => self.order.note(IdKind::Item, f.item_id.as_str()),
            ServerFrame::Reasoning(f) => self.order.note(IdKind::Item, f.item_id.as_str()),
            ServerFrame::ToolCall(f) => self.order.note(IdKind::ToolCall, f.tool_call_id.as_str()),
            ServerFrame::ToolCallComplete(f) => *self.settlements.entry(f.tool_call_id.to_string()).or_insert(0) += 1,
            ServerFrame::ToolCallDismiss(f) => *self.settlements.entry(f.tool_call_id.to_string()).or_insert(0) += 1,
            ServerFrame::UiStateSnapshot(s) => self.note_state(&s.state),
            ServerFrame::CancelAccepted(_) => self.cancelled_at = self.main_frames,
            _ => {}
        }
    }

    /// Learns the ids a whole state shows: a snapshot, or the state a catch-up gave.
    pub(super) fn note_state(&mut self, state: &chatwire_schema::UiState) {
        for item in &state.items {
            self.order.note(IdKind::Invocation, item.invocation_id().as_str());
            match item {
                DisplayItem::ToolCall(c) => self.order.note(IdKind::ToolCall, c.id.as_str()),
                DisplayItem::ToolOutput(_) => {}
                other => self.order.note(IdKind::Item, other.id().as_str()),
            }
        }
    }

    /// The id that is, in this run, what the uninterrupted run bound to the placeholder `name`: the
    /// n-th of its kind there is the n-th here.
    pub(super) fn corresponding_id(&self, baseline: &SweepBaseline, name: &str) -> Option<&str> {
        let (kind, ordinal) = baseline.id_bindings.get(name)?;
        self.order.get(*kind, *ordinal)
    }

    /// What the variants of this (uninterrupted) run are compared with: its normalized final state
    /// and, for each placeholder bound to an id the session introduced, that id's kind and ordinal.
    pub(super) fn baseline<'v>(
        &self,
        final_state: String,
        bindings: impl Iterator<Item = (&'v str, &'v serde_json::Value)>,
    ) -> SweepBaseline {
        let id_bindings = bindings
            .filter_map(|(name, value)| Some((name.to_owned(), *self.order.known.get(value.as_str()?)?)))
            .collect();
        SweepBaseline { frames: self.main_frames, first_cut: self.cancelled_at.max(1), final_state, id_bindings }
    }

    /// The calls settled more than once (settlement frames across the connections), with how often.
    pub(super) fn settled_twice(&self) -> Vec<(String, usize)> {
        self.settlements.iter().filter(|(_, n)| **n > 1).map(|(id, n)| (id.clone(), *n)).collect()
    }
}
