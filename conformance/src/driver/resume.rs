//! Resuming (since 1.1 with a catch-up): the cursor a resume sends, the state frame that answers it
//! (a snapshot, or a catch-up patch where `resume_catch_up` is in force), the comparison of a
//! catch-up with a snapshot (RESUME-019), and expectations on the state the runner holds.

use serde_json::{json, Value};
use tokio::time::Instant;

use super::{unexpected, Driver, Handshake, Next, StepError};
use crate::monitor::oracle::divergence;
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
    ) -> Result<(), StepError> {
        let session = self
            .monitor
            .current_session()
            .map(str::to_owned)
            .ok_or_else(|| StepError::harness("resume before any session was opened"))?;
        let deadline = self.step_deadline(None);
        // The frames still in flight on the old connection are taken in first: the cursor names
        // the latest the client holds, as a real client's would.
        self.close_conn(conn, deadline).await;
        let token = self.monitor.resume_token(&session).unwrap_or_default().to_owned();
        let last_seq = last_seq.unwrap_or_else(|| self.cursor(&session, cursor));
        let resume = json!({"session_id": session, "resume_token": token, "last_seq": last_seq});
        let handshake = Handshake { hello: true, subprotocol: true, with_script: false, own_offer: false };
        let (versions, features) = match takeover {
            true => self.takeover_offer(),
            false => (self.cfg.versions.clone(), self.cfg.features.clone()),
        };
        self.connect(conn, handshake, versions, features, Some((resume, answer))).await
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
    fn cursor(&self, session: &str, cursor: Option<ResumeCursor>) -> u64 {
        let highest = self.monitor.max_seq(session).unwrap_or(0);
        let (state_seq, catch_up) = self.monitor.resume_base(session);
        match cursor {
            Some(ResumeCursor::Highest) => highest,
            Some(ResumeCursor::State) => state_seq.unwrap_or(highest),
            Some(ResumeCursor::NonState) => self.monitor.latest_non_state_seq(session).unwrap_or(0),
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
                self.caught_up = true;
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
        self.resume(conn, Some(0), None, Some(ResumeAnswer::Snapshot), false).await?;
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
