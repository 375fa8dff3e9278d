//! The reconnect sweep's part of a scenario run: where to cut, the recovery after the cut, and the
//! comparison of a cut variant with the uninterrupted run (see `crate::sweep`).

use std::time::Duration;

use chatwire_schema::Id;

use serde_json::Value;

use super::describe::describe;
use super::outcome::{unexpected, Next, StepError};
use super::sweep_track::SweepBaseline;
use super::Driver;
use crate::pattern;
use crate::report::Verdict;
use crate::scenario::{ResumeCursor, Step, DEFAULT_CONN, SWEEP_WATCH};
use crate::snapshot::{self, Normalizer};

impl Driver<'_> {
    /// Cuts the main connection (no closing handshake) if the sweep's cut point was reached.
    pub(super) fn take_cut(&mut self) -> bool {
        let Some(sweep) = self.sweep.as_mut() else { return false };
        if !sweep.cut_due || sweep.cut_done {
            return false;
        }
        sweep.cut_due = false;
        sweep.cut_done = true;
        let k = sweep.main_frames;
        self.drop_conn(DEFAULT_CONN);
        self.transcript(format!("-- sweep: cut after frame {k} --"));
        self.log(format!("-- sweep: connection cut after frame {k} --"));
        true
    }

    /// After a sweep cut: resume at once, replay the client actions not yet sent (each once the run
    /// is idle; a response to a call the resumed state shows settled is skipped), and end idle. The
    /// scenario's expectations are not replayed: frames sent while the connection was down are lost
    /// by design (no replay in v1) and the snapshot stands for them.
    pub(super) async fn recover(&mut self, remaining: &[Step], first_index: usize) -> bool {
        let cursor = self.sweep_cursor();
        let resume = Step::Resume {
            conn: None,
            replica: None,
            last_seq: None,
            cursor,
            answer: None,
            compare_with_snapshot: false,
            takeover: false,
            window: None,
            requirements: Vec::new(),
        };
        let summary = match cursor {
            Some(ResumeCursor::State) => {
                "after the cut: resume at once from the latest state (welcome resumed=true, a catch-up or a snapshot)"
            }
            Some(ResumeCursor::NonState) => {
                "after the cut: resume at once from the latest frame without a state (welcome resumed=true, ui_state_snapshot)"
            }
            _ => "after the cut: resume at once (welcome resumed=true, ui_state_snapshot)",
        };
        if !self.recovery_step("sweep-resume", summary, &resume).await {
            return true;
        }
        for (offset, step) in remaining.iter().enumerate() {
            self.step = first_index + offset + 1;
            if self.step > self.scenario.steps.len() {
                break;
            }
            let id = format!("sweep-step-{:02}-{}", self.step, step.kind());
            let is_action = matches!(
                step,
                Step::UserMessage { .. }
                    | Step::Respond { .. }
                    | Step::Rewind { .. }
                    | Step::Retry { .. }
                    | Step::Cancel { .. }
            );
            let replayed = match step {
                Step::UserMessage { .. }
                | Step::Respond { .. }
                | Step::Rewind { .. }
                | Step::Retry { .. }
                | Step::Cancel { .. } => {
                    let idle =
                        Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None, requirements: Vec::new() };
                    let summary = "before a replayed action: wait until the run is idle";
                    if !self.recovery_step(&format!("sweep-idle-before-{:02}", self.step), summary, &idle).await {
                        return true;
                    }
                    match self.resolve_for_variant(step) {
                        Some(resolved) => resolved,
                        None => {
                            let summary =
                                format!("{} (skipped: the resumed state shows the call settled)", describe(step));
                            self.checks.touch(&id, &[], &summary);
                            continue;
                        }
                    }
                }
                // Paging from wherever the resumed window starts still reaches the first item.
                Step::Disconnect { .. } | Step::Resume { .. } | Step::Sleep { .. } | Step::PageThrough { .. } => {
                    step.clone()
                }
                // Expectations and snapshots: the frames they name may have been lost in the cut.
                _ => continue,
            };
            let summary = format!("replayed: {}", describe(step));
            if !self.recovery_step(&id, &summary, &replayed).await {
                return true;
            }
            if is_action && !self.recovery_answer(&id, &summary, &replayed).await {
                return true;
            }
        }
        self.step = self.scenario.steps.len() + 1;
        let idle = Step::WaitIdle { conn: None, quiet_ms: None, timeout_ms: None, requirements: Vec::new() };
        self.recovery_step("sweep-final-idle", "the variant ends with the run idle", &idle).await;
        true
    }

    /// The cursor of the resume after the cut. Where `resume_catch_up` was in force, the sweep runs
    /// both ways: cut points 1-2, 5-6, … resume from the latest state (a catch-up, RESUME-017),
    /// cut points 3-4, 7-8, … from the latest frame without a state (a snapshot, RESUME-018), so
    /// each way is cut after events and after states alike, and every variant must reach the
    /// uninterrupted run's final state. Elsewhere the 1.0 cursor, the highest seq seen.
    fn sweep_cursor(&self) -> Option<ResumeCursor> {
        let k = self.sweep.as_ref()?.cut_after?;
        let session = self.monitor.current_session()?;
        let (_, catch_up) = self.monitor.resume_base(session);
        catch_up.then_some(if ((k - 1) / 2) % 2 == 0 { ResumeCursor::State } else { ResumeCursor::NonState })
    }

    /// Runs one step of a sweep recovery as a check; false when it did not complete.
    async fn recovery_step(&mut self, id: &str, summary: &str, step: &Step) -> bool {
        let requirements = &self.requirements_of(step);
        match self.run_step(step).await {
            Ok(()) => {
                self.checks.touch(id, requirements, summary);
                true
            }
            Err(e) => {
                let verdict =
                    self.level_verdict(if e.verdict == Verdict::NotApplicable { Verdict::Fail } else { e.verdict });
                let f = self.finding(e.message, e.frame, e.requirement);
                self.checks.record(id, requirements, summary, verdict, Some(f));
                false
            }
        }
    }

    /// After a replayed action: read its connection until the frame answering it (`in_reply_to`
    /// its `id`). Its expectations are not replayed, so without this the next wait for an idle run
    /// could end before the server read the action (the state still shows the call pending, the run
    /// awaiting input), and the variant would be compared with the uninterrupted run too early on
    /// a slow machine. A missing answer is a failure of the replayed step, under its requirements.
    async fn recovery_answer(&mut self, id: &str, summary: &str, step: &Step) -> bool {
        let conn = step.conn().unwrap_or(DEFAULT_CONN).to_owned();
        let Some(sent) = self.conns.get(&conn).and_then(|c| c.last_sent_id.clone()) else { return true };
        let deadline = self.step_deadline(None);
        let answered = loop {
            match self.next(&conn, deadline).await {
                Ok(Next::Frame(frame)) if frame.get("in_reply_to").and_then(Value::as_str) == Some(sent.as_str()) => {
                    break Ok(());
                }
                Ok(Next::Frame(_) | Next::NotJson(_)) => {}
                Ok(Next::Deadline) => {
                    break Err(StepError::new(
                        Verdict::Timeout,
                        format!(
                            "no frame answered the replayed {} (in_reply_to {sent}) before the deadline",
                            step.kind()
                        ),
                    ))
                }
                Ok(other) => break Err(unexpected(other, "the answer to the replayed action")),
                Err(e) => break Err(e),
            }
        };
        match answered {
            Ok(()) => true,
            Err(e) => {
                let requirements = self.requirements_of(step);
                let verdict = self.level_verdict(e.verdict);
                let f = self.finding(e.message, e.frame, e.requirement);
                self.checks.record(id, &requirements, summary, verdict, Some(f));
                false
            }
        }
    }

    /// A replayed action with its placeholders mapped to this variant's ids: the id the uninterrupted
    /// run bound to a name is the n-th of its kind there, so it is the n-th here. `None` when the
    /// action is a response to a call the current state shows settled (sending it would only get
    /// `tool_call_settled`).
    fn resolve_for_variant(&self, step: &Step) -> Option<Step> {
        let map = |template: &str| -> String {
            let mapped = pattern::placeholder(template)
                .and_then(|name| self.sweep.as_ref()?.corresponding_id(self.sweep_baseline?, name));
            mapped.map_or_else(|| template.to_owned(), str::to_owned)
        };
        match step {
            Step::Respond { conn, id, tool_call, outcome } => {
                let target = map(tool_call);
                let settled = self.main_state().is_some_and(|state| {
                    Id::parse(target.as_str())
                        .ok()
                        .and_then(|id| state.tool_call(&id))
                        .is_some_and(|c| c.status.is_terminal())
                });
                (!settled).then(|| Step::Respond {
                    conn: conn.clone(),
                    id: id.clone(),
                    tool_call: target,
                    outcome: outcome.clone(),
                })
            }
            Step::Rewind { conn, id, before } => {
                Some(Step::Rewind { conn: conn.clone(), id: id.clone(), before: map(before) })
            }
            Step::Retry { conn, id, after_item } => {
                Some(Step::Retry { conn: conn.clone(), id: id.clone(), after_item: map(after_item) })
            }
            Step::Cancel { conn, id, invocation } => {
                Some(Step::Cancel { conn: conn.clone(), id: id.clone(), invocation: map(invocation) })
            }
            other => Some(other.clone()),
        }
    }

    /// Where `multi_attach` is in force on the main connection, a second tab attaches to the
    /// session right after it opens and stays attached while the main connection is cut and
    /// resumed; it is read at the end (after the main connection, so every answer it did not get
    /// is known), and must then hold the main connection's state (`ATTACH-004`, `ATTACH-007`).
    pub(super) async fn open_sweep_watch(&mut self) {
        use chatwire_schema::session::welcome::Capability;
        // Only where the sweep itself applies: a scenario it runs as it is stays the scenario's.
        if !self.cfg.sweep_watch || crate::sweep::not_sweepable_reason(self.scenario).is_some() {
            return;
        }
        let Some(id) = self.conns.get(DEFAULT_CONN).map(|c| c.id) else { return };
        if !self.monitor.features(id).contains(&Capability::MultiAttach) || self.conns.contains_key(SWEEP_WATCH) {
            return;
        }
        if let Err(e) = self.resume(SWEEP_WATCH, None, None, None, false, None).await {
            self.log(format!("the sweep's watching tab could not attach: {}", e.message));
            self.drop_conn(SWEEP_WATCH);
        }
    }

    /// The watching tab, read to the end, holds the main connection's final state.
    pub(super) async fn check_sweep_watch(&mut self) {
        // Without a known final state on the main connection the run has nothing to compare, and
        // the sweep reports it not applicable.
        if !self.conns.contains_key(SWEEP_WATCH) || self.main_state().is_none() {
            return;
        }
        let ids = ["ATTACH-004".to_owned(), "ATTACH-007".to_owned()];
        let summary = "a tab attached throughout holds the main connection's final state";
        let deadline = self.step_deadline(None);
        if let Err(e) = self.wait_idle(SWEEP_WATCH, Duration::from_millis(200), deadline).await {
            let f = self.finding(format!("the watching tab: {}", e.message), e.frame, Some("ATTACH-004".into()));
            self.checks.record("sweep-watch-agrees", &ids, summary, self.level_verdict(e.verdict), Some(f));
            return;
        }
        let normalize = |state: Option<&chatwire_schema::UiState>| {
            let value = serde_json::to_value(state?).ok()?;
            serde_json::to_string_pretty(&Normalizer::default().normalize(&value)).ok()
        };
        let (main, watch) = (normalize(self.main_state()), normalize(self.conn_state(SWEEP_WATCH)));
        let diff = match (&main, &watch) {
            (Some(main), Some(watch)) => snapshot::line_diff(main, watch, 60),
            _ => vec!["no state on one of the two connections".to_owned()],
        };
        if diff.is_empty() {
            self.checks.touch("sweep-watch-agrees", &ids, summary);
        } else {
            let message = format!(
                "the watching tab's final state differs from the main connection's (- main, + watching tab):\n{}",
                diff.join("\n")
            );
            let f = self.finding(message, None, Some("ATTACH-007".into()));
            self.checks.record("sweep-watch-agrees", &ids, summary, self.level_verdict(Verdict::Fail), Some(f));
        }
    }

    /// The monitor's model of the main connection's UiState.
    fn main_state(&self) -> Option<&chatwire_schema::UiState> {
        self.conn_state(DEFAULT_CONN)
    }

    /// The main connection's final state, normalized like snapshots.
    fn normalized_final_state(&self) -> Option<String> {
        let state = self.main_state()?;
        let value = serde_json::to_value(state).ok()?;
        serde_json::to_string_pretty(&Normalizer::default().normalize(&value)).ok()
    }

    /// What the variants of this (uninterrupted) run are compared with.
    pub(super) fn record_baseline(&mut self) -> Option<SweepBaseline> {
        let final_state = self.normalized_final_state()?;
        Some(self.sweep.as_ref()?.baseline(final_state, self.bindings.iter()))
    }

    /// The sweep assertions of a variant: same final state as the uninterrupted run, no call settled twice.
    pub(super) fn compare_with_baseline(&mut self, baseline: &SweepBaseline) {
        let reqs = |ids: &[&str]| ids.iter().map(|r| (*r).to_owned()).collect::<Vec<String>>();
        // A variant that caught up proves its catch-up gave the snapshot's state (RESUME-019).
        let state_reqs = if self.caught_up {
            reqs(&["RESUME-002", "RESUME-009", "RESUME-019"])
        } else {
            reqs(&["RESUME-002", "RESUME-009"])
        };
        let summary = "the final normalized UiState equals the uninterrupted run's";
        let problem = match self.normalized_final_state() {
            None => Some(self.finding("the variant ended without a session state".into(), None, None)),
            Some(state) => {
                let diff = snapshot::line_diff(&baseline.final_state, &state, 60);
                (!diff.is_empty()).then(|| {
                    let message = format!(
                        "the final state differs from the uninterrupted run's (- uninterrupted, + cut and resumed):\n{}",
                        diff.join("\n")
                    );
                    let requirement = if self.caught_up { "RESUME-019" } else { "RESUME-002" };
                    self.finding(message, None, Some(requirement.into()))
                })
            }
        };
        match problem {
            None => self.checks.touch("sweep-final-state", &state_reqs, summary),
            Some(f) => {
                let verdict = self.level_verdict(Verdict::Fail);
                self.checks.record("sweep-final-state", &state_reqs, summary, verdict, Some(f));
            }
        }
        let once_reqs = reqs(&["TOOL-010", "TOOL-012"]);
        let summary = "no tool call settles twice across the variant's connections";
        self.checks.touch("sweep-settled-once", &once_reqs, summary);
        let twice = self.sweep.as_ref().map(|s| s.settled_twice()).unwrap_or_default();
        for (call, n) in twice {
            let name = self.monitor.redactor().id("tool_call", &call);
            let message = format!("tool call {name} settled {n} times (settlement frames across the connections)");
            let f = self.finding(message, None, Some("TOOL-010".into()));
            self.checks.record("sweep-settled-once", &once_reqs, summary, self.level_verdict(Verdict::Fail), Some(f));
        }
    }
}
