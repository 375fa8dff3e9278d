//! The session's turns: the user message, answers to awaited calls, what the plan does while a
//! run goes on and after it, retries and rewinds.

use std::time::Duration;

use chatwire_schema::{DisplayItem, RunStatus, ToolCallStatus};
use serde_json::{json, Value};
use tokio::time::Instant;

use super::{Role, Session, Stop};
use crate::soak::plan::{After, Answer, Interrupt};

impl Session<'_> {
    /// Sends the turn's user message on the main connection.
    pub(super) async fn message(&mut self) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Err(Stop) };
        let id = self.id("m");
        self.awaiting = Some(id.clone());
        self.invocation = None;
        self.cancelled = false;
        self.frames_in_turn = 0;
        self.sent_at = Some(Instant::now());
        self.run_lost = false;
        self.kills_at_send = self.backend.kills();
        self.send(main, json!({"type": "chat.user_message", "id": id, "text": format!("message {id}")})).await
    }

    /// The pending call to answer next: the first pending one the plan answers.
    pub(super) fn to_answer(&self) -> Option<(String, Answer)> {
        let state = self.main_state()?;
        if self.cancelled || state.run.status != RunStatus::AwaitingInput {
            return None;
        }
        state.items.iter().find_map(|item| match item {
            DisplayItem::ToolCall(c)
                if c.awaiting_response
                    && c.status == ToolCallStatus::Pending
                    && !self.answered.contains(c.id.as_str()) =>
            {
                let key = c.payload.get("key").and_then(Value::as_str).unwrap_or_default();
                match self.plan.answers.get(key) {
                    Some(Answer::Leave) => None,
                    Some(answer) => Some((c.id.to_string(), answer.clone())),
                    None => Some((c.id.to_string(), Answer::Dismiss)),
                }
            }
            _ => None,
        })
    }

    /// Whether the run of the latest turn is over for the session: ended, or waiting only for
    /// answers the plan leaves out.
    pub(super) fn run_over(&self) -> bool {
        let Some(main) = self.main() else { return false };
        if self.awaiting.is_some() || self.monitor.busy(main) {
            return false;
        }
        if self.run_lost {
            // A retry a kill lost: no run of it to wait for.
            return true;
        }
        let Some(state) = self.main_state() else { return false };
        if self.invocation.is_some()
            && state.run.invocation_id.as_ref().map(|i| i.as_str()) != self.invocation.as_deref()
        {
            return false;
        }
        match state.run.status {
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled => true,
            RunStatus::AwaitingInput => self.to_answer().is_none(),
            RunStatus::Idle | RunStatus::Running => false,
        }
    }

    /// Drives the latest turn's run to its end: answers awaited calls, and carries out `during`
    /// once enough of the turn's frames arrived.
    pub(super) async fn play_run(&mut self, during: &mut Option<crate::soak::plan::During>) -> Result<(), Stop> {
        let deadline = self.step_deadline();
        loop {
            if self.main_lost.is_some() {
                self.recover().await?;
            }
            if self.run_over() {
                return Ok(());
            }
            let deadline = self.extended(deadline);
            if Instant::now() >= deadline {
                let main = self.main().unwrap_or(0);
                return Err(self.stall(main, "the turn's run did not end before the deadline".into()));
            }
            let active = self.awaiting.is_none()
                && self
                    .main_state()
                    .is_some_and(|s| matches!(s.run.status, RunStatus::Running | RunStatus::AwaitingInput));
            if active && during.as_ref().is_some_and(|d| self.frames_in_turn >= d.at_frame) {
                if let Some(d) = during.take() {
                    self.interrupt(d.action).await?;
                }
                continue;
            }
            if self.awaiting.is_none() {
                if let Some((call, answer)) = self.to_answer() {
                    self.respond(call, answer).await?;
                    continue;
                }
            }
            self.pump(deadline).await?;
        }
    }

    pub(super) async fn respond(&mut self, call: String, answer: Answer) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Err(Stop) };
        let id = self.id("r");
        let outcome = match answer {
            Answer::Submit(value) => json!({"action": "submit", "value": value}),
            Answer::Dismiss | Answer::Leave => json!({"action": "dismiss", "reason": "not now"}),
        };
        self.answered.insert(call.clone());
        if self.reanswer.remove(&call) {
            // The first answer went with a killed replica, and may have been committed there: its
            // recovery may settle the call before this one is read.
            self.allowed.insert(id.clone(), &["tool_call_settled"]);
        }
        self.awaiting = Some(id.clone());
        self.send(main, json!({"type": "chat.tool_call_response", "id": id, "tool_call_id": call, "outcome": outcome}))
            .await
    }

    pub(super) async fn interrupt(&mut self, action: Interrupt) -> Result<(), Stop> {
        match action {
            Interrupt::Cut(cursor) => self.resume_main(true, cursor).await,
            Interrupt::Reconnect(cursor) => self.resume_main(false, cursor).await,
            Interrupt::Pause(ms) => {
                let until = Instant::now() + Duration::from_millis(ms);
                if let Some(t) = self.tabs.iter_mut().find(|t| t.role == Role::Main) {
                    t.paused_until = Some(until);
                }
                Ok(())
            }
            Interrupt::Cancel => {
                let (Some(main), Some(invocation)) = (self.main(), self.invocation.clone()) else { return Ok(()) };
                // Also while a second tab reads along: it gets no `chat.cancel_accepted`
                // (ATTACH-005) and sees the run end through its events alone, which the monitor
                // judges as the end of a cancel another tab asked for.
                if !self.offers("cancel") {
                    return Ok(());
                }
                if self.tabs.iter().any(|t| t.role == Role::Watcher) {
                    self.out.cancels_beside_tab += 1;
                }
                let id = self.id("x");
                // The run may end before the server reads the cancel (CANCEL-007).
                self.allowed.insert(id.clone(), &["run_not_active"]);
                self.awaiting = Some(id.clone());
                self.cancelled = true;
                self.send(main, json!({"type": "chat.cancel", "id": id, "invocation_id": invocation})).await
            }
            Interrupt::Takeover => self.takeover().await,
            Interrupt::Restart(cursor) => self.restart(cursor).await,
            Interrupt::Attach => self.attach().await,
        }
    }

    pub(super) async fn after(&mut self, after: &After) -> Result<(), Stop> {
        self.settle().await?;
        match after {
            After::Retry(k) => self.retry(*k).await,
            After::Rewind(back) => self.rewind(*back).await,
            After::Resume { cut, cursor } => self.resume_main(*cut, *cursor).await,
            After::Takeover => self.takeover().await,
            After::Restart(cursor) => self.restart(*cursor).await,
        }
    }

    pub(super) async fn retry(&mut self, k: u32) -> Result<(), Stop> {
        if !self.offers("retry") {
            return Ok(());
        }
        let Some(main) = self.main() else { return Err(Stop) };
        let Some(state) = self.main_state() else { return Ok(()) };
        let Some(first) = state.items.iter().rposition(|i| matches!(i, DisplayItem::UserMessage(_))) else {
            return Ok(());
        };
        let turn = &state.items[first..];
        let item = &turn[k as usize % turn.len()];
        let after_item = item.id().to_string();
        let invocation = match &state.items[first] {
            DisplayItem::UserMessage(m) => m.invocation_id.to_string(),
            _ => return Ok(()),
        };
        if crate::monitor::checks::retry::due_refusal(state, &after_item, true).is_some() {
            return Ok(());
        }
        let id = self.id("y");
        self.awaiting = Some(id.clone());
        self.kills_at_send = self.backend.kills();
        self.run_lost = false;
        self.run_kills.insert(invocation.clone(), self.kills_at_send);
        self.invocation = Some(invocation);
        self.cancelled = false;
        self.frames_in_turn = 0;
        self.send(main, json!({"type": "chat.retry", "id": id, "after_item_id": after_item})).await?;
        self.play_run(&mut None).await
    }

    pub(super) async fn rewind(&mut self, back: u32) -> Result<(), Stop> {
        if !self.offers("rewind") {
            return Ok(());
        }
        let Some(main) = self.main() else { return Err(Stop) };
        let Some(state) = self.main_state() else { return Ok(()) };
        let invocations: Vec<String> = state
            .items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::UserMessage(m) => Some(m.invocation_id.to_string()),
                _ => None,
            })
            .collect();
        let Some(before) = invocations.len().checked_sub(1 + back as usize).map(|i| invocations[i].clone()) else {
            return Ok(());
        };
        let id = self.id("w");
        self.awaiting = Some(id.clone());
        self.send(main, json!({"type": "chat.rewind", "id": id, "before_invocation_id": before})).await?;
        self.settle().await
    }

    /// Closes every tab, taking in the frames still in flight.
    pub(super) async fn finish(&mut self) {
        for id in self.tabs.iter().map(|t| t.id).collect::<Vec<_>>() {
            self.drop_tab(id, false).await;
        }
    }
}
