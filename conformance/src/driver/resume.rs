//! Resuming (since 1.1 with a catch-up): the cursor a resume sends, the state frame that answers it
//! (a snapshot, or a catch-up patch where `resume_catch_up` is in force), the comparison of a
//! catch-up with a snapshot (RESUME-019), and expectations on the state the runner holds.

use serde_json::{json, Value};
use tokio::time::Instant;

use super::outcome::{unexpected, Next, StepError};
use super::{Driver, Handshake};
use crate::monitor::redact::divergence;
use crate::pattern::{self, match_value};
use crate::scenario::{ResumeAnswer, ResumeCursor};

impl Driver<'_> {
    /// Closes `conn` and resumes the current session on a new connection under the same name,
    /// sending `last_seq` or the seq `cursor` picks; `answer` is the state frame required after the
    /// welcome (`None`: whichever the spec allows).
    pub(super) async fn resume(
        &mut self,
        conn: &str,
        last_seq: Option<u64>,
        cursor: Option<ResumeCursor>,
        answer: Option<ResumeAnswer>,
        takeover: bool,
        window: Option<u32>,
    ) -> Result<(), StepError> {
        let session = self
            .monitor
            .current_session()
            .map(str::to_owned)
            .ok_or_else(|| StepError::harness("resume before any session was opened"))?;
        let deadline = self.step_deadline(None);
        // The frames still in flight on the old connection are taken in first: the cursor names
        // the latest the client holds, as a real client's would. On a replica the scenario stopped
        // no closing handshake can complete: the connection is dropped.
        if self.on_stopped_replica(conn) {
            self.drop_conn(conn);
        } else {
            self.close_conn(conn, deadline).await;
        }
        let token = self.monitor.resume_token(&session).unwrap_or_default().to_owned();
        // A connection that had this name resumes from what it held; a new one from the
        // session's latest state (a tab that copies another's cursor).
        let held = self.last_ids.get(conn).copied();
        let last_seq = match (last_seq, cursor) {
            (Some(seq), _) => seq,
            (None, Some(edge @ (ResumeCursor::Retention | ResumeCursor::PastRetention))) => {
                let beyond = u64::from(edge == ResumeCursor::PastRetention);
                self.history.retention_base(&session, beyond)?
            }
            (None, cursor) => self.cursor(&session, cursor, held),
        };
        let mut resume = json!({"session_id": session, "resume_token": token, "last_seq": last_seq});
        // WINDOW-012: a windowed client that holds a state says from which cursor it holds it.
        if let Some(before) =
            held.filter(|_| window.is_some() && last_seq > 0).and_then(|id| self.monitor.window_cursor(id))
        {
            resume["before"] = Value::String(before);
        }
        let handshake = Handshake { hello: true, subprotocol: true, with_script: false, own_offer: false, window };
        let (versions, features) = match takeover {
            true => self.takeover_offer(),
            false => (self.cfg.versions.clone(), self.cfg.features.clone()),
        };
        self.connect(conn, handshake, versions, features, Some((resume, answer))).await
    }

    /// Attaches `<prefix>-1`, … until the scenario's open connections number the bound the latest
    /// welcome announced (`ATTACH-003`).
    pub(super) async fn attach_to_bound(&mut self, prefix: &str) -> Result<(), StepError> {
        const MOST: u32 = 64;
        let limit = self.conns.values().filter_map(|c| self.monitor.attach_limit(c.id)).max();
        let Some(limit) = limit else {
            return Err(StepError::fail("no welcome of the session announced limits.max_attached_connections")
                .with_requirement("ATTACH-003"));
        };
        if limit > MOST {
            return Err(StepError::new(
                crate::report::Verdict::NotApplicable,
                format!("the server keeps {limit} connections attached; the runner tests bounds up to {MOST}"),
            ));
        }
        let open = self.conns.len() as u32;
        for k in 1..=limit.saturating_sub(open) {
            let window = self.window_of(None);
            self.resume(&format!("{prefix}-{k}"), None, None, None, false, window).await?;
        }
        Ok(())
    }

    /// The offer of a resume that takes the session over (`ATTACH-002`): where a connection of
    /// the scenario negotiated 1.2 or later, the runner's versions from 1.1 on with the features
    /// it asks for (all it knows when it names none) but `multi_attach`, which `SESSION-014`
    /// allows only without 1.0 in the offer; otherwise the runner's own offer, which takes over.
    fn takeover_offer(&self) -> (Vec<String>, Option<Vec<String>>) {
        use chatwire_schema::session::welcome::Capability;
        use chatwire_schema::ProtocolVersion;
        let since = Capability::MultiAttach.since();
        let negotiated = self.conns.values().filter_map(|c| self.monitor.version(c.id)).max();
        if negotiated.is_none_or(|v| v < since) {
            return (self.cfg.versions.clone(), self.cfg.features.clone());
        }
        let v1_1 = ProtocolVersion { major: 1, minor: 1 };
        let versions =
            self.cfg.versions.iter().filter(|v| ProtocolVersion::parse(v).is_ok_and(|v| v >= v1_1)).cloned().collect();
        let asked =
            self.cfg.features.clone().unwrap_or_else(|| Capability::FEATURES.iter().map(|f| (*f).to_owned()).collect());
        let features = asked.into_iter().filter(|f| f != Capability::MultiAttach.as_str()).collect();
        (versions, Some(features))
    }

    /// The seq a resume of `session` sends. By default the seq of the latest state the client holds
    /// where `resume_catch_up` was in force when it arrived (a catch-up starts from it), otherwise
    /// the highest seq seen, as a 1.0 client does.
    fn cursor(&self, session: &str, cursor: Option<ResumeCursor>, held: Option<u64>) -> u64 {
        use chatwire_schema::session::welcome::Capability;
        let (highest, state_seq, catch_up) = match held.filter(|id| self.monitor.last_seq(*id).is_some()) {
            Some(id) => (
                self.monitor.last_seq(id).unwrap_or(0),
                self.monitor.state_seq(id),
                self.monitor.features(id).contains(&Capability::ResumeCatchUp),
            ),
            None => {
                let (state_seq, catch_up) = self.monitor.resume_base(session);
                (self.monitor.max_seq(session).unwrap_or(0), state_seq, catch_up)
            }
        };
        match cursor {
            Some(ResumeCursor::Highest) => highest,
            Some(ResumeCursor::State) => state_seq.unwrap_or(highest),
            Some(ResumeCursor::NonState) => self.monitor.latest_non_state_seq(session, highest).unwrap_or(0),
            // Picked by `History::retention_base` before this is asked.
            Some(ResumeCursor::Retention | ResumeCursor::PastRetention) => highest,
            None if catch_up => state_seq.unwrap_or(highest),
            None => highest,
        }
    }

    /// The frame right after a resume's welcome: a snapshot, or a catch-up patch (RESUME-017); the
    /// monitor checks whether a patch may come there (RESUME-018) and what it gives.
    pub(super) async fn expect_resume_state(
        &mut self,
        conn: &str,
        answer: Option<ResumeAnswer>,
        deadline: Instant,
    ) -> Result<(), StepError> {
        let v = match self.next(conn, deadline).await? {
            Next::Frame(v) => v,
            other => return Err(unexpected(other, "the snapshot or catch-up after the welcome")),
        };
        let wire = v.get("type").and_then(Value::as_str).unwrap_or("(no type)").to_owned();
        let problem = match (wire.as_str(), answer) {
            ("ui_state_snapshot", Some(ResumeAnswer::CatchUp)) => Some((
                "RESUME-017",
                "expected a catch-up ui_state_patch after the welcome (resume_catch_up in force, last_seq a state frame), got a ui_state_snapshot",
            )),
            ("ui_state_patch", Some(ResumeAnswer::Snapshot)) => {
                Some(("RESUME-018", "expected a ui_state_snapshot after the welcome, got a catch-up ui_state_patch"))
            }
            ("ui_state_snapshot", _) => None,
            ("ui_state_patch", _) => {
                // The sweep's watching tab attaches by catch-up; the variant's own resume decides.
                if conn != crate::scenario::SWEEP_WATCH {
                    self.caught_up = true;
                }
                None
            }
            _ => Some(("STATE-002", "expected ui_state_snapshot (or a catch-up ui_state_patch) after the welcome")),
        };
        match problem {
            None => Ok(()),
            Some((requirement, message)) => {
                let excerpt = self.redact(&v);
                Err(StepError::fail(format!("{message}; got {wire}"))
                    .with_frame(Some(excerpt))
                    .with_requirement(requirement))
            }
        }
    }

    /// RESUME-019: the state a catch-up gave equals the snapshot a resume from seq 0 gets right
    /// after it (nothing may happen in between: the scenario resumes when the session is idle).
    pub(super) async fn compare_catch_up_with_snapshot(&mut self, conn: &str) -> Result<(), StepError> {
        let caught_up =
            self.conn_state(conn).cloned().ok_or_else(|| StepError::fail("no state after the resume to compare"))?;
        self.resume(conn, Some(0), None, Some(ResumeAnswer::Snapshot), false, None).await?;
        let snapshot =
            self.conn_state(conn).cloned().ok_or_else(|| StepError::fail("no state after the second resume"))?;
        match divergence(&snapshot, &caught_up, self.monitor.redactor()) {
            None => Ok(()),
            Some(diff) => Err(StepError::fail(format!(
                "the state the catch-up gave differs from the snapshot of a resume right after it (expected = snapshot):\n{diff}"
            ))
            .with_requirement("RESUME-019")),
        }
    }

    /// The state the runner holds on `conn` matches `pattern`, with exactly `items` items if given.
    pub(super) fn expect_state(&mut self, conn: &str, pattern: &Value, items: Option<usize>) -> Result<(), StepError> {
        let state = self
            .conn_state(conn)
            .map(|s| serde_json::to_value(s).unwrap_or(Value::Null))
            .ok_or_else(|| StepError::fail("no UiState on the connection: no ui_state_snapshot was received"))?;
        let count = state.get("items").and_then(Value::as_array).map_or(0, Vec::len);
        if let Some(want) = items.filter(|n| *n != count) {
            return Err(StepError::fail(format!("the UiState holds {count} items, not {want}")));
        }
        match_value(pattern, &state, &mut self.bindings).map_err(|m| {
            let excerpt = self.redact(&state);
            StepError::fail(format!("the UiState does not match {}: {m}", pattern::excerpt(pattern, 120)))
                .with_frame(Some(excerpt))
        })
    }
}
