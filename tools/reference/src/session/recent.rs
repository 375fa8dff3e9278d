//! The changes a session committed in this process, kept as patches, so that a catch-up
//! (`RESUME-017`) is the patches of the events after the resume's `last_seq` put together, in
//! time that follows the events missed, not the thread: no fold of the log from its start.
//!
//! Bounded by [`RESUME_RETENTION`] events: a resume from before the oldest kept one, or one after a
//! restart, takes the log's way (`catch_up.rs`). A delta's patch replaces the stream's whole text,
//! so of a run of deltas only the last one's is kept, and a run of them with consecutive seqs is
//! one entry: a long stream costs its text once, not once per delta.

use std::collections::VecDeque;

use chatwire_schema::state_patch::PatchOp;

/// The most events a catch-up patch covers, announced as the welcome's `resume_retention`
/// (`RESUME-018`).
///
/// A catch-up costs the server one read and fold of the session's log whatever the retention, and
/// the client a patch of about one small op group per event missed (a few hundred bytes, plus the
/// content of the items it appends, which a snapshot carries too). 1,000 events cover the blips a
/// catch-up is for (a reconnect after seconds to minutes of a busy turn) while keeping the patch
/// far below the snapshot of any session large enough for the difference to matter; a client that
/// missed more gets the snapshot, as in 1.0.
pub(crate) const RESUME_RETENTION: u32 = 1000;

/// One committed event and what it did to the state, as each kind of connection sees it.
pub(crate) struct RecentEvent {
    pub seq: u64,
    /// A `chat.assistant_message_delta` (`STREAM-002`): only connections that see streams see it.
    pub delta: bool,
    /// A delta that appended to a stream already open: its patch replaces the whole text, so of a
    /// run of them only the last one's is needed.
    pub appends: bool,
    /// The patch for a connection that sees streams.
    pub seen: Vec<PatchOp>,
    /// The patch for one that does not (`STREAM-005`): nothing for a delta, the whole item for
    /// the message that ends a stream; `None` where it is `seen`.
    pub unseen: Option<Vec<PatchOp>>,
    /// Whether a stream is open in the state after it.
    pub stream_open_after: bool,
    /// A reasoning frame (since 1.3): its patches are not those of a connection that does not
    /// see reasoning (`REASON-001`).
    pub reasoning: bool,
    /// A frame of a transcript, or one of a session holding a sub-agent (since 1.3): its patches
    /// are those of a connection where `subagents` is in force and that sees streams.
    pub nested: bool,
}

/// Recent events: one event, or a run of appending deltas of consecutive seqs (`first..=event.seq`),
/// which read alike as a catch-up's base (the run's last patch gives the text of all of them).
struct Entry {
    /// The seq of the entry's first event.
    first: u64,
    /// The entry's last event; where the entry is a run, every event of it has its flags.
    event: RecentEvent,
}

impl Entry {
    /// How many events the entry stands for.
    fn len(&self) -> u64 {
        self.event.seq - self.first + 1
    }
}

/// The session's recent events, oldest first.
pub(crate) struct Recent {
    entries: VecDeque<Entry>,
    /// How many events the entries stand for (at most [`RESUME_RETENTION`]).
    len: u64,
    /// Every event with a greater seq is in `events`.
    floor: u64,
    /// Whether a stream was open in the state of seq `floor`.
    stream_open_at_floor: bool,
    /// Whether a state of the session known here held a reasoning item: the patches kept here are
    /// then no catch-up for a connection that does not see reasoning, whose indices count without
    /// them (`REASON-001`); it takes the log's way.
    pub reasoning_seen: bool,
    /// Whether a state of the session known here held a sub-agent, or an event of a transcript was
    /// kept: the patches kept here are then no catch-up for a connection where `subagents` is not
    /// in force, nor for one that does not see streams (`SUBAGENT-001`, `SUBAGENT-002`).
    pub subagents_seen: bool,
}

/// A catch-up from the recent events.
pub(crate) struct RecentPatch {
    pub patch: Vec<PatchOp>,
    /// Whether a stream was open in the state of the resume's `last_seq` (`STREAM-006`).
    pub stream_open_at_base: bool,
}

impl Recent {
    /// Nothing known before `floor`, the last seq the session used when it was loaded.
    pub fn new(floor: u64, stream_open: bool) -> Self {
        Recent {
            entries: VecDeque::new(),
            len: 0,
            floor,
            stream_open_at_floor: stream_open,
            reasoning_seen: false,
            subagents_seen: false,
        }
    }

    /// Records a committed event; past the bound the oldest goes and the floor moves up to it.
    pub fn push(&mut self, event: RecentEvent) {
        self.reasoning_seen |= event.reasoning;
        self.subagents_seen |= event.nested;
        self.len += 1;
        match self.entries.back_mut().filter(|e| e.event.appends) {
            // The same run, the next seq: the run's entry takes its patch (`since` reads only the
            // run's last).
            Some(run)
                if event.appends
                    && run.event.seq.checked_add(1) == Some(event.seq)
                    && (run.event.delta, run.event.stream_open_after) == (event.delta, event.stream_open_after) =>
            {
                run.event = event;
            }
            before => {
                if let Some(before) = before.filter(|_| event.appends) {
                    // The delta before it in the same run is never read again.
                    before.event.seen = Vec::new();
                }
                self.entries.push_back(Entry { first: event.seq, event });
            }
        }
        while self.len > u64::from(RESUME_RETENTION) {
            let Some(oldest) = self.entries.front_mut() else { break };
            self.len -= 1;
            self.floor = oldest.first;
            self.stream_open_at_floor = oldest.event.stream_open_after;
            if oldest.len() > 1 {
                oldest.first += 1;
            } else {
                self.entries.pop_front();
            }
        }
    }

    /// The patch from the state of `last_seq` to the session's, for a connection that sees
    /// streams or not; `None` when an event after `last_seq` is not kept here.
    pub fn since(&self, last_seq: u64, streams: bool) -> Option<RecentPatch> {
        if last_seq < self.floor {
            return None;
        }
        let first = self.entries.partition_point(|e| e.event.seq <= last_seq);
        let stream_open_at_base = match self.entries.get(first) {
            // Within a run: as after any of its events.
            Some(run) if run.first <= last_seq => run.event.stream_open_after,
            _ => match first.checked_sub(1) {
                Some(index) => self.entries[index].event.stream_open_after,
                None => self.stream_open_at_floor,
            },
        };
        let mut patch = Vec::new();
        // The last appending delta of a run of them: its text replaces all the run's.
        let mut appended: Option<&Vec<PatchOp>> = None;
        for event in self.entries.range(first..).map(|e| &e.event) {
            match (streams, event.delta) {
                (false, true) => continue,
                (false, false) => patch.extend(event.unseen.as_ref().unwrap_or(&event.seen).iter().cloned()),
                (true, _) if event.appends => appended = Some(&event.seen),
                (true, _) => {
                    patch.extend(appended.take().into_iter().flatten().cloned());
                    patch.extend(event.seen.iter().cloned());
                }
            }
        }
        patch.extend(appended.into_iter().flatten().cloned());
        Some(RecentPatch { patch, stream_open_at_base })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(seq: u64, delta: bool, appends: bool, text: &str, open: bool) -> RecentEvent {
        let op = PatchOp::Replace { path: "/items/0/markdown".into(), value: json!(text) };
        RecentEvent {
            seq,
            delta,
            appends,
            seen: vec![op.clone()],
            unseen: delta.then(Vec::new),
            stream_open_after: open,
            reasoning: false,
            nested: false,
        }
    }

    #[test]
    fn a_run_of_appending_deltas_is_one_replace_and_unseen_deltas_are_left_out() {
        let mut recent = Recent::new(2, false);
        recent.push(event(3, true, false, "a", true));
        recent.push(event(4, true, true, "ab", true));
        recent.push(event(5, true, true, "abc", true));
        recent.push(event(7, false, false, "end", false));
        let seen = recent.since(3, true).unwrap();
        let texts: Vec<_> = seen.patch.iter().map(|op| serde_json::to_value(op).unwrap()["value"].clone()).collect();
        assert_eq!(texts, vec![json!("abc"), json!("end")]);
        assert!(seen.stream_open_at_base);
        assert_eq!(recent.since(3, false).unwrap().patch.len(), 1);
        assert!(!recent.since(2, true).unwrap().stream_open_at_base);
        assert!(recent.since(1, true).is_none(), "before the floor");
    }

    #[test]
    fn a_run_of_deltas_keeps_the_patch_of_its_last_delta_only() {
        let mut recent = Recent::new(2, false);
        recent.push(event(3, true, false, "a", true));
        for seq in 4..100 {
            recent.push(event(seq, true, true, "x", true));
        }
        let kept: usize = recent.entries.iter().map(|e| e.event.seen.len()).sum();
        assert_eq!(kept, 2, "the delta that opened the stream and the run's last");
        assert_eq!(recent.entries.len(), 2, "the run is one entry");
        let texts = |from| {
            let since = recent.since(from, true).unwrap();
            since.patch.iter().map(|op| serde_json::to_value(op).unwrap()["value"].clone()).collect::<Vec<_>>()
        };
        assert_eq!(texts(50), vec![json!("x")], "a catch-up from mid-run gets the run's text");
        assert_eq!(texts(2), vec![json!("a"), json!("x")]);
    }

    #[test]
    fn a_run_past_the_bound_gives_up_its_oldest_events_one_by_one() {
        let mut recent = Recent::new(0, false);
        recent.push(event(1, false, false, "item", false));
        recent.push(event(2, true, false, "a", true));
        let last = u64::from(RESUME_RETENTION) + 10;
        for seq in 3..=last {
            recent.push(event(seq, true, true, "x", true));
        }
        assert_eq!(recent.entries.len(), 1, "the run alone, its first events gone");
        assert_eq!(recent.len, u64::from(RESUME_RETENTION));
        let floor = last - u64::from(RESUME_RETENTION);
        assert_eq!(recent.floor, floor);
        assert!(recent.since(floor - 1, true).is_none(), "an event after it is gone");
        let at_floor = recent.since(floor, true).unwrap();
        assert!(at_floor.stream_open_at_base);
        assert_eq!(at_floor.patch.len(), 1);
        assert!(recent.since(floor, false).unwrap().patch.is_empty(), "deltas are not seen without streams");
    }

    #[test]
    fn a_gap_in_the_seqs_or_another_kind_of_event_starts_a_new_entry() {
        let mut recent = Recent::new(0, false);
        recent.push(event(1, true, false, "a", true));
        recent.push(event(2, true, true, "ab", true));
        recent.push(event(3, true, true, "abc", true));
        // A seq taken in between (a refusal): the run does not stand for it.
        recent.push(event(5, true, true, "abcd", true));
        recent.push(event(6, false, false, "end", false));
        assert_eq!(recent.entries.len(), 4);
        assert_eq!(recent.len, 5);
        let texts = |from| {
            let since = recent.since(from, true).unwrap();
            let texts: Vec<_> =
                since.patch.iter().map(|op| serde_json::to_value(op).unwrap()["value"].clone()).collect();
            (texts, since.stream_open_at_base)
        };
        assert_eq!(texts(2), (vec![json!("abcd"), json!("end")], true), "from within the run");
        assert_eq!(texts(4), (vec![json!("abcd"), json!("end")], true), "from the gap");
        assert_eq!(texts(0), (vec![json!("a"), json!("abcd"), json!("end")], false));
        assert_eq!(texts(6), (vec![], false));
    }

    #[test]
    fn past_the_bound_the_floor_moves_up() {
        let mut recent = Recent::new(0, false);
        for seq in 1..=u64::from(RESUME_RETENTION) + 5 {
            recent.push(event(seq, false, false, "x", false));
        }
        assert!(recent.since(4, true).is_none());
        assert_eq!(recent.since(5, true).unwrap().patch.len(), RESUME_RETENTION as usize);
    }
}
