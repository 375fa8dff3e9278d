//! What a session does about the replicas the harness kills under it (a load run on a shared
//! cluster): a connection a kill cut ends as the client's drop, the main connection resumes on
//! another replica, a request the kill lost is made again where the state says it was lost, and a
//! run that ends `failed`, reason `interrupted`, is accepted only where a replica was killed while
//! it ran.

use serde_json::Value;

use super::{Role, Session, Stop};
use crate::soak::plan::Cursor;
use crate::wirelog::WireRecord;

/// Notes kept per session (each kill that cut one of its connections).
const NOTES_KEPT: usize = 32;

impl Session<'_> {
    /// The harness killed the replica under tab `id`: the connection ends as the driver's kill
    /// step ends it, dropped by the client (`client_close`), so nothing the kill cut short (a close
    /// code a fatal error owes, an open stream's end) is charged to the server. The main connection
    /// is resumed at the next wait.
    pub(super) fn cut_by_kill(&mut self, id: u64, role: Role) {
        let held = self.tabs.iter().any(|t| t.id == id);
        let replica = self.replica_of.get(&id).map_or("?".to_owned(), |k| format!("r{k}"));
        if self.out.notes.len() < NOTES_KEPT {
            let at = self.started.elapsed().as_millis();
            self.out.notes.push(format!("+{at} ms: conn {id} ({role:?}) cut by the kill of replica {replica}"));
        }
        self.record(WireRecord::close(id, true, None));
        self.monitor.client_close(id);
        self.collect();
        self.tabs.retain(|t| t.id != id);
        self.cut.insert(id);
        if held && role == Role::Main {
            self.main_lost = Some(id);
        }
    }

    /// Resumes the main connection a kill cut, on another replica, from the latest state it held;
    /// then a user message the kill lost (not in the state) is sent again, calls answered on the
    /// lost connection that are still pending are answered again, and a retry the state shows no
    /// run of is given up.
    pub(super) async fn recover(&mut self) -> Result<(), Stop> {
        let Some(old) = self.main_lost.take() else { return Ok(()) };
        self.out.kill_resumes += 1;
        let last_seq = self.cursor(Some(old), Cursor::State);
        let lost_message = self.awaiting.as_deref().is_some_and(|a| a.starts_with('m'));
        let lost_retry = self.awaiting.as_deref().is_some_and(|a| a.starts_with('y'));
        self.connect(Role::Main, Some(last_seq), self.cfg.versions.clone(), None).await?;
        self.after_resume();
        if let Some(state) = self.main_state() {
            let pending: Vec<String> = state
                .items
                .iter()
                .filter_map(|item| match item {
                    chatwire_schema::DisplayItem::ToolCall(c)
                        if c.awaiting_response && c.status == chatwire_schema::ToolCallStatus::Pending =>
                    {
                        Some(c.id.to_string())
                    }
                    _ => None,
                })
                .collect();
            let ran = state.run.status != chatwire_schema::RunStatus::Idle
                && state.run.invocation_id.as_ref().map(|i| i.as_str()) == self.invocation.as_deref();
            let again: Vec<String> = self.answered.iter().filter(|c| pending.contains(c)).cloned().collect();
            for call in again {
                self.answered.remove(&call);
                self.reanswer.insert(call);
            }
            if lost_retry && !ran {
                self.run_lost = true;
            }
        }
        if lost_message && self.invocation.is_none() {
            // Never committed: the user sends it again (the latency still counts from the first send).
            self.out.lost_messages += 1;
            let first_sent = self.sent_at;
            self.message().await?;
            self.sent_at = first_sent.or(self.sent_at);
        }
        Ok(())
    }

    /// The run of the latest invocation started (or its start became known): it remembers the
    /// kills so far, to tell whether a kill happened while it ran.
    pub(super) fn run_started(&mut self) {
        if let Some(invocation) = &self.invocation {
            self.run_kills.insert(invocation.clone(), self.kills_at_send);
        }
    }

    /// A `chat.run_complete` on the main connection: a latency for the latest turn's run, or an
    /// interrupted run (counted once, without a latency), which a kill must explain.
    pub(super) fn run_complete(&mut self, conn: u64, v: &Value) -> Result<(), Stop> {
        let invocation = v.get("invocation_id").and_then(Value::as_str).map(str::to_owned);
        let current = invocation.is_some() && invocation == self.invocation;
        let interrupted = v.get("status").and_then(Value::as_str) == Some("failed")
            && v.get("reason").and_then(Value::as_str) == Some("interrupted");
        if !interrupted {
            if current {
                if let Some(at) = self.sent_at.take() {
                    self.out.latencies_us.push(at.elapsed().as_micros() as u64);
                    if self.out.hit_by_kill() {
                        self.out.runs_after_kill += 1;
                    }
                }
            }
            return Ok(());
        }
        let seq = v.get("seq").and_then(Value::as_u64).unwrap_or_default();
        if !self.interrupted_seen.insert(seq) {
            return Ok(());
        }
        self.out.interrupted += 1;
        if current {
            self.sent_at = None;
        }
        if !self.backend.kills_known() {
            return Ok(());
        }
        let started = invocation.as_ref().and_then(|i| self.run_kills.get(i)).copied().unwrap_or(self.kills_at_start);
        if self.backend.kills() > started {
            return Ok(());
        }
        Err(self.soak_finding(
            "soak-interrupted-without-kill",
            None,
            conn,
            format!(
                "the run of invocation {} ended failed, reason interrupted, although no replica was killed while it ran \
                 (a replica that was never stopped lost the run)",
                invocation.as_deref().unwrap_or("(none)")
            ),
        ))
    }
}
