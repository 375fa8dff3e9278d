//! Windows (since 1.2, `spec/window.md`): the window a hello asks for, and paging a windowed
//! connection back to the session's first item.

use serde_json::{json, Value};

use super::outcome::{unexpected, Next, StepError};
use super::Driver;
use crate::report::Verdict;

/// The most pages one `page_through` sends: 500-item pages of the longest thread a scenario
/// builds, many times over; a server whose cursor never reaches the first item fails instead of
/// paging forever.
const MAX_PAGES: usize = 2_000;

impl Driver<'_> {
    /// The window a hello of a step asks for: the step's own, else the scenario's; 0 asks for none.
    pub(super) fn window_of(&self, step: Option<u32>) -> Option<u32> {
        step.or(self.scenario.window).filter(|n| *n > 0)
    }

    /// Sends `chat.history_request` with the connection's current cursor until the view holds the
    /// first item (`WINDOW-009`); each page is checked by the monitor as it arrives.
    pub(super) async fn page_through(&mut self, conn: &str, limit: u32) -> Result<(), StepError> {
        let id = self.conn_mut(conn)?.id;
        if !self.monitor.windowed(id) {
            return Err(StepError::harness(format!(
                "scenario bug: {conn} asked for no window, so it has nothing to page"
            )));
        }
        for _ in 0..MAX_PAGES {
            let Some(cursor) = self.monitor.window_cursor(id) else { return Ok(()) };
            let request = self.next_id("page");
            let frame = json!({"type": "chat.history_request", "id": request, "before": cursor, "limit": limit});
            self.send_value(conn, frame, true).await?;
            self.await_page(conn, &request).await?;
        }
        Err(StepError::fail(format!("{MAX_PAGES} pages did not reach the session's first item"))
            .with_requirement("WINDOW-009"))
    }

    /// Reads `conn` until the answer to the history request `request`; whatever a run sends
    /// meanwhile goes through the monitor like every frame.
    async fn await_page(&mut self, conn: &str, request: &str) -> Result<(), StepError> {
        let deadline = self.step_deadline(None);
        loop {
            match self.next(conn, deadline).await? {
                Next::Frame(v) if v.get("in_reply_to").and_then(Value::as_str) == Some(request) => {
                    return match v.get("type").and_then(Value::as_str) {
                        Some("chat.history_page") => Ok(()),
                        _ => Err(StepError::fail("the history request was refused").with_frame(Some(self.redact(&v)))),
                    };
                }
                Next::Frame(_) => {}
                Next::Deadline => {
                    return Err(StepError::new(Verdict::Timeout, "no chat.history_page arrived before the deadline"))
                }
                other => return Err(unexpected(other, "chat.history_page")),
            }
        }
    }
}
