//! What the runner saw of each session, for the cursors that count events
//! (`ResumeCursor::Retention`, `ResumeCursor::PastRetention`).

use std::collections::HashMap;

use chatwire_schema::ServerFrame;

use super::outcome::StepError;
use crate::report::Verdict;

/// What the runner saw of each session, in order: per frame its seq, whether it is an event and
/// whether it carried a state; and the latest `resume_retention` a welcome announced.
#[derive(Debug, Default)]
pub(super) struct History {
    /// The session of each connection (by the monitor's number), from its welcome.
    sessions: HashMap<u64, String>,
    frames: HashMap<String, Vec<Seen>>,
    retention: HashMap<String, u32>,
}

/// One frame of a session as [`History`] keeps it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    seq: u64,
    event: bool,
    state: bool,
}

impl History {
    /// Notes a frame received on connection `conn`.
    pub(super) fn note(&mut self, conn: u64, frame: &ServerFrame) {
        if let ServerFrame::Welcome(w) = frame {
            let session = w.session_id.to_string();
            match w.resume_retention {
                Some(r) => self.retention.insert(session.clone(), r),
                None => self.retention.remove(&session),
            };
            self.sessions.insert(conn, session);
        }
        let (Some(session), Some(seq)) = (self.sessions.get(&conn), frame.seq()) else { return };
        let seen = Seen { seq, event: frame.ui_event().is_some(), state: frame.carries_state() };
        // Looked up by reference: the entry API would copy the session's id for every frame.
        match self.frames.get_mut(session.as_str()) {
            Some(frames) => frames.push(seen),
            None => {
                self.frames.insert(session.clone(), vec![seen]);
            }
        }
    }

    /// The seq of the latest frame of `session` that carried a state and after which exactly
    /// `resume_retention + beyond` events were committed (`ResumeCursor::Retention`,
    /// `ResumeCursor::PastRetention`). Not applicable where no welcome announced a retention or the
    /// session is too short for one: the scenario cannot reach that server's edge.
    pub(super) fn retention_base(&self, session: &str, beyond: u64) -> Result<u64, StepError> {
        let Some(retention) = self.retention.get(session) else {
            return Err(StepError::new(
                Verdict::NotApplicable,
                "the welcome announced no resume_retention, so there is no retention edge to resume from",
            ));
        };
        let target = u64::from(*retention) + beyond;
        let frames = self.frames.get(session).map_or(&[][..], Vec::as_slice);
        edge(frames, target).ok_or_else(|| {
            StepError::new(
                Verdict::NotApplicable,
                format!(
                    "no state frame of the session has exactly {target} events after it: the scenario's turn is \
                     too short for a resume_retention of {retention}"
                ),
            )
        })
    }
}

/// The latest frame that carried a state with exactly `target` events after it.
fn edge(frames: &[Seen], target: u64) -> Option<u64> {
    let mut after = 0u64;
    for seen in frames.iter().rev() {
        // A delta is both: the events after it do not include itself.
        if seen.state && after == target {
            return Some(seen.seq);
        }
        if seen.event {
            after += 1;
            if after > target {
                return None;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(seq: u64, event: bool, state: bool) -> Seen {
        Seen { seq, event, state }
    }

    #[test]
    fn the_edge_counts_events_after_a_state_frame_deltas_included() {
        // welcome, snapshot, accepted + patch, started + patch, delta, delta, message + patch
        let frames = [
            seen(1, false, false),
            seen(2, false, true),
            seen(3, true, false),
            seen(4, false, true),
            seen(5, true, false),
            seen(6, false, true),
            seen(7, true, true),
            seen(8, true, true),
            seen(9, true, false),
            seen(10, false, true),
        ];
        assert_eq!(edge(&frames, 0), Some(10));
        assert_eq!(edge(&frames, 1), Some(8), "the second delta has the message after it");
        assert_eq!(edge(&frames, 2), Some(7));
        assert_eq!(edge(&frames, 3), Some(6), "the run_started patch: two deltas and the message");
        assert_eq!(edge(&frames, 4), Some(4));
        assert_eq!(edge(&frames, 5), Some(2), "the snapshot has every event after it");
        assert_eq!(edge(&frames, 6), None, "no frame has more events after it than there are");
    }
}
