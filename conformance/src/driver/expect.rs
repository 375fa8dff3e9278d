//! The steps that wait for the server: expectations, closes, an orderly restart, idleness, snapshots.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::outcome::{unexpected, Next, StepError};
use super::{Driver, SnapshotMode};
use crate::pattern::{self, match_value};
use crate::report::Verdict;
use crate::snapshot;

/// Whether `frame` is a state change after an event (`ui_state_updated`, or its 1.1 stand-in
/// `ui_state_patch`): expectations read past them unless they ask for one.
pub(super) fn is_state_change(frame: &Value) -> bool {
    matches!(frame.get("type").and_then(Value::as_str), Some("ui_state_updated" | "ui_state_patch"))
}

/// What an `expect_close` step lets come before, or instead of, the close.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CloseAllowance {
    /// Frames before the close are taken in.
    pub after_frames: bool,
    /// The most bytes of frames taken in before the close.
    pub max_bytes: Option<u64>,
    /// A drop without a close frame passes after the connection was not read for this long.
    pub drop_allowed_after: Option<std::time::Duration>,
}

impl Driver<'_> {
    pub(super) async fn expect_one(
        &mut self,
        conn: &str,
        pattern: &Value,
        deadline: Instant,
        skip_updates: bool,
    ) -> Result<(), StepError> {
        let wanted = pattern.get("type").and_then(Value::as_str).unwrap_or("a frame").to_owned();
        let skip = skip_updates && !is_state_change(pattern);
        loop {
            match self.next(conn, deadline).await? {
                Next::Frame(v) => {
                    if skip && is_state_change(&v) {
                        continue;
                    }
                    return match match_value(pattern, &v, &mut self.bindings) {
                        Ok(()) => Ok(()),
                        Err(m) => {
                            let excerpt = self.redact(&v);
                            Err(StepError::fail(format!("expected {wanted}: {m}")).with_frame(Some(excerpt)))
                        }
                    };
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail(format!("expected {wanted}, got a frame that is not JSON"))
                        .with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    let why = if Instant::now() >= self.deadline { " (scenario deadline)" } else { "" };
                    return Err(StepError::new(
                        Verdict::Timeout,
                        format!(
                            "no {wanted} arrived before the deadline{why}; waiting for {}",
                            pattern::excerpt(pattern, 200)
                        ),
                    ));
                }
                other => return Err(unexpected(other, &wanted)),
            }
        }
    }

    pub(super) async fn expect_unordered(
        &mut self,
        conn: &str,
        patterns: &[Value],
        deadline: Instant,
    ) -> Result<(), StepError> {
        let mut open: Vec<&Value> = patterns.iter().collect();
        while !open.is_empty() {
            match self.next(conn, deadline).await? {
                Next::Frame(v) => {
                    let wants_updates = open.iter().any(|p| is_state_change(p));
                    if !wants_updates && is_state_change(&v) {
                        continue;
                    }
                    let Some(i) = open.iter().position(|p| match_value(p, &v, &mut self.bindings.clone()).is_ok())
                    else {
                        let left: Vec<String> = open.iter().map(|p| pattern::excerpt(p, 120)).collect();
                        let excerpt = self.redact(&v);
                        return Err(StepError::fail(format!(
                            "the frame matches none of the expected: {}",
                            left.join(" | ")
                        ))
                        .with_frame(Some(excerpt)));
                    };
                    // Bind for real with the pattern that matched.
                    let _ = match_value(open[i], &v, &mut self.bindings);
                    open.remove(i);
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail("got a frame that is not JSON").with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    return Err(StepError::new(
                        Verdict::Timeout,
                        format!("{} expected frame(s) did not arrive before the deadline", open.len()),
                    ))
                }
                other => return Err(unexpected(other, "the expected frames")),
            }
        }
        Ok(())
    }

    pub(super) async fn expect_close(
        &mut self,
        conn: &str,
        code: Option<u16>,
        allowance: CloseAllowance,
        deadline: Instant,
    ) -> Result<(), StepError> {
        let (bytes_before, unread_for) = {
            let c = self.conn_mut(conn)?;
            (c.bytes_in, c.last_read.elapsed())
        };
        let mut taken_in = 0usize;
        loop {
            match self.next(conn, deadline).await? {
                Next::Closed(got, reason) => {
                    self.conns.remove(conn);
                    if taken_in > 0 {
                        self.log(format!("{conn}: {taken_in} frame(s) taken in before the close"));
                    }
                    let dropped_ok =
                        got.is_none() && allowance.drop_allowed_after.is_some_and(|after| unread_for >= after);
                    if dropped_ok {
                        self.log(format!(
                            "{conn}: dropped without a close frame after {} ms unread, which the spec allows",
                            unread_for.as_millis()
                        ));
                    }
                    return match (code, got) {
                        (None, _) => Ok(()),
                        (Some(_), None) if dropped_ok => Ok(()),
                        (Some(want), Some(got)) if want == got => Ok(()),
                        (Some(want), got) => Err(StepError::fail(format!(
                            "expected close code {want}, got {} ({reason})",
                            got.map_or("none".into(), |c| c.to_string())
                        ))),
                    };
                }
                Next::Frame(v) if is_state_change(&v) && !allowance.after_frames => {}
                Next::Frame(_) | Next::NotJson(_) if allowance.after_frames => {
                    taken_in += 1;
                    let bytes = self.conn_mut(conn)?.bytes_in.saturating_sub(bytes_before);
                    if let Some(max) = allowance.max_bytes.filter(|max| bytes > *max) {
                        return Err(StepError::fail(format!(
                            "the server delivered {bytes} bytes in {taken_in} frames after the pause without closing, \
                             more than the {max} its bound and the socket buffers can hold"
                        )));
                    }
                }
                Next::Frame(v) => {
                    let excerpt = self.redact(&v);
                    return Err(StepError::fail("expected the server to close, got a frame").with_frame(Some(excerpt)));
                }
                Next::NotJson(raw) => {
                    let excerpt = self.redact_text(&raw);
                    return Err(StepError::fail("expected the server to close, got a frame").with_frame(Some(excerpt)));
                }
                Next::Deadline => {
                    return Err(StepError::new(Verdict::Timeout, "the server did not close the connection in time"))
                }
                Next::Broken(message) if allowance.drop_allowed_after.is_some_and(|after| unread_for >= after) => {
                    self.conns.remove(conn);
                    self.log(format!(
                        "{conn}: broken after {} ms unread ({message}), a drop the spec allows",
                        unread_for.as_millis()
                    ));
                    return Ok(());
                }
                other => return Err(unexpected(other, "a close")),
            }
        }
    }

    /// `Step::Drain`: reads `conn` past every check until `bytes` bytes of text frames or its
    /// close, then drops it. A deadline first is a timeout: the backend did not produce that much.
    pub(super) async fn drain(
        &mut self,
        conn: &str,
        bytes: u64,
        quiet: Option<Duration>,
        deadline: Instant,
    ) -> Result<(), StepError> {
        let mut got = 0u64;
        let mut frames = 0u64;
        let ended = loop {
            let wait_until = match quiet {
                _ if got < bytes => deadline,
                None => break "the byte count",
                Some(quiet) => (Instant::now() + quiet).min(deadline),
            };
            let Some(incoming) = self.conn_mut(conn)?.ws.recv(wait_until).await else {
                if got >= bytes && Instant::now() < deadline {
                    break "the byte count and a quiet pause";
                }
                self.drop_conn(conn);
                return Err(StepError::new(
                    Verdict::Timeout,
                    format!("the pace connection got {got} of {bytes} bytes before the deadline"),
                ));
            };
            match incoming {
                crate::conn::Incoming::Text(text) => {
                    got = got.saturating_add(text.len() as u64);
                    frames += 1;
                }
                crate::conn::Incoming::Closed { .. } | crate::conn::Incoming::Broken(_) => break "its close",
                _ => {}
            }
        };
        self.drop_conn(conn);
        self.transcript(format!("{conn} x drained"));
        self.log(format!("{conn}: drained {got} bytes in {frames} frames unchecked, up to {ended}"));
        Ok(())
    }

    /// SIGTERM, every open connection closed by the server with 1001 (TRANSPORT-009), then the
    /// backend started again on the same storage. Frames still in flight before the close are
    /// taken in (and checked) like any other.
    pub(super) async fn graceful_restart(&mut self) -> Result<(), StepError> {
        self.transcript("-- orderly shutdown (SIGTERM) --".into());
        self.log("-- orderly shutdown (SIGTERM) --".into());
        self.endpoint.request_shutdown()?;
        let deadline = self.step_deadline(None);
        let mut problems = Vec::new();
        let names: Vec<String> = self.conns.keys().cloned().collect();
        for name in names {
            let outcome = loop {
                match self.next(&name, deadline).await {
                    Err(e) => break Some(e.message),
                    Ok(Next::Closed(Some(1001), _)) => break None,
                    Ok(Next::Closed(code, reason)) => {
                        let code = code.map_or("no close code".to_owned(), |c| format!("close code {c}"));
                        break Some(format!("closed with {code} ({reason})"));
                    }
                    Ok(Next::Broken(message)) => break Some(format!("dropped without a close frame: {message}")),
                    Ok(Next::Deadline) => break Some("still open at the step deadline".to_owned()),
                    Ok(_) => {}
                }
            };
            self.drop_conn(&name);
            if let Some(problem) = outcome {
                problems.push(format!("{name}: {problem}"));
            }
        }
        self.transcript("-- started again --".into());
        let grace = self.cfg.scaled(Duration::from_secs(10));
        let exited = self.endpoint.restart_after_shutdown(grace).await?;
        self.restarted = true;
        if !exited {
            self.log(format!("the backend was still running {} s after SIGTERM and was killed", grace.as_secs()));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(StepError::fail(format!(
                "on an orderly shutdown every connection must be closed with 1001: {}",
                problems.join("; ")
            ))
            .with_requirement("TRANSPORT-009"))
        }
    }

    pub(super) async fn wait_idle(&mut self, conn: &str, quiet: Duration, deadline: Instant) -> Result<(), StepError> {
        loop {
            // Idle: no run slice in progress and the last event's update has arrived, so what
            // follows does not depend on how fast the server is. Busy, a frame on this connection
            // is owed, and only a frame changes that: wait for it (no polling, whatever `quiet`).
            let busy = self.conns.get(conn).is_some_and(|c| self.monitor.busy(c.id));
            let until = if busy { deadline } else { (Instant::now() + quiet).min(deadline) };
            match self.next(conn, until).await? {
                Next::Frame(_) | Next::NotJson(_) => {}
                Next::Deadline => {
                    if !busy {
                        return Ok(());
                    }
                    if Instant::now() >= deadline {
                        // Only the state frame of the last event kept it busy: that rule is broken.
                        let owed = self.conns.get(conn).and_then(|c| self.monitor.owed_state_frame(c.id));
                        if let Some(rule) = owed {
                            return Err(StepError::new(
                                Verdict::Timeout,
                                "the run is not running, but the state frame of the last event never came before the deadline",
                            )
                            .with_requirement(&rule.to_string()));
                        }
                        return Err(StepError::new(
                            Verdict::Timeout,
                            "the run is still running (or its last ui_state_updated, or an event another connection of the session got, is missing) at the deadline",
                        ));
                    }
                }
                other => return Err(unexpected(other, "the run to become idle")),
            }
        }
    }

    pub(super) fn snapshot(&mut self, conn: &str, name: &str) -> Result<(), StepError> {
        let state = self
            .conn_state(conn)
            .map(|state| serde_json::to_value(state).unwrap_or(Value::Null))
            .ok_or_else(|| StepError::fail("no UiState to snapshot: no ui_state_snapshot was received"))?;
        let text = snapshot::projection(&mut self.snap_normalizer, &state, &self.transcript);
        self.snapshots.insert(name.to_owned(), text.clone());
        let id = format!("snapshot-{name}");
        let requirements = self.step_requirements.clone();
        let summary = format!(
            "final UiState and transcript equal the golden snapshot {}",
            snapshot::file_name(&self.scenario.id, name)
        );
        let (verdict, message) = match &self.cfg.snapshots {
            SnapshotMode::Collect => (Verdict::Pass, None),
            SnapshotMode::Compare(store) => match store.golden(&self.scenario.id, name) {
                None => (
                    Verdict::HarnessError,
                    Some(format!(
                        "no golden snapshot {} (record it with `cargo insta test -p chatwire-conformance` against the reference)",
                        snapshot::file_name(&self.scenario.id, name)
                    )),
                ),
                Some(Err(e)) => (Verdict::HarnessError, Some(e)),
                Some(Ok(golden)) => {
                    let diff = snapshot::line_diff(&golden, &text, 60);
                    if diff.is_empty() {
                        (Verdict::Pass, None)
                    } else {
                        (
                            self.level_verdict(Verdict::Fail),
                            Some(format!("differs from the golden snapshot (- golden, + this backend):\n{}", diff.join("\n"))),
                        )
                    }
                }
            },
        };
        // One fault, one charge: a state that left the oracle's fold at a finding the monitor
        // charged, with no state frame since, differs from the golden one because of it.
        let divergence =
            if verdict.is_failure() { self.conns.get(conn).and_then(|c| self.monitor.divergence(c.id)) } else { None };
        let finding = message.map(|m| match divergence {
            Some(req) => self.finding(
                format!("{m}\n(the state left the reducer's fold at the {req} finding above, and no state frame came since: one fault, one charge)"),
                None,
                Some(req.to_string()),
            ),
            None => self.finding(m, None, None),
        });
        self.checks.record(&id, &requirements, &summary, verdict, finding);
        if verdict.is_failure() {
            // `conn` is the running step's (`step_conn`).
            self.note_comparison(&id);
        }
        Ok(())
    }
}
