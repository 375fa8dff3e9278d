//! The report's view of the traffic: the golden transcript and the last lines of the wire log,
//! redacted when the report is written.

use serde_json::Value;

use super::{Driver, WIRE_LOG_LINES};
use crate::monitor;
use crate::pattern;
use crate::scenario::SWEEP_WATCH;

impl Driver<'_> {
    pub(super) fn log(&mut self, line: String) {
        self.log_raw(line, String::new());
    }

    pub(super) fn log_raw(&mut self, prefix: String, raw: String) {
        if self.wire_log.len() == WIRE_LOG_LINES {
            self.wire_log.pop_front();
        }
        self.wire_log.push_back((prefix, raw));
    }

    /// The wire log as report lines, ids replaced by placeholders.
    pub(super) fn render_wire_log(&mut self) -> Vec<String> {
        let entries: Vec<(String, String)> = self.wire_log.drain(..).collect();
        entries
            .into_iter()
            .map(|(prefix, raw)| {
                if raw.is_empty() {
                    pattern::truncate(&prefix, 300)
                } else {
                    format!("{prefix}{}", self.redact_text(&raw))
                }
            })
            .collect()
    }

    /// A redacted, truncated excerpt of a raw frame (the text itself when it is not JSON).
    pub(super) fn redact_text(&mut self, raw: &str) -> String {
        match serde_json::from_str::<Value>(raw) {
            Ok(v) => self.redact(&v),
            Err(_) => pattern::truncate(raw, monitor::FRAME_EXCERPT),
        }
    }

    pub(super) fn transcript(&mut self, line: String) {
        // The sweep's watching tab is the sweep's, not the scenario's: the golden transcript
        // stays the scenario's own.
        if line.starts_with(SWEEP_WATCH) {
            return;
        }
        // Bounded: a flood must not grow memory without limit.
        if self.transcript.len() < 5_000 {
            self.transcript.push(line);
        }
    }

    pub(super) fn redact(&mut self, value: &Value) -> String {
        self.monitor.excerpt(value)
    }
}
