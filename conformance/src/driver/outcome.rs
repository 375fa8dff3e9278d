//! What a step and a read come to: why a step did not complete ([`StepError`]), what reading a
//! connection produced ([`Next`]), and what an unexpected read means to a step waiting for
//! something else. A leaf below the driver and its steps: it decides, and does no I/O.

use serde_json::Value;

use crate::report::Verdict;

/// Why a step did not complete.
#[derive(Clone, Debug)]
pub(super) struct StepError {
    /// The step's verdict.
    pub(super) verdict: Verdict,
    /// What happened, for the report.
    pub(super) message: String,
    /// An excerpt of the frame it is about.
    pub(super) frame: Option<String>,
    /// The requirement that breaks, where the step names one.
    pub(super) requirement: Option<String>,
    /// The sweep cut the connection here on purpose: not a finding, the variant's recovery follows.
    pub(super) cut: bool,
}

impl StepError {
    pub(super) fn new(verdict: Verdict, message: impl Into<String>) -> Self {
        StepError { verdict, message: message.into(), frame: None, requirement: None, cut: false }
    }

    pub(super) fn cut() -> Self {
        StepError { cut: true, ..Self::new(Verdict::Pass, "the sweep cut the connection") }
    }

    pub(super) fn fail(message: impl Into<String>) -> Self {
        Self::new(Verdict::Fail, message)
    }

    pub(super) fn harness(message: impl Into<String>) -> Self {
        Self::new(Verdict::HarnessError, message)
    }

    pub(super) fn with_frame(mut self, frame: Option<String>) -> Self {
        self.frame = frame;
        self
    }

    pub(super) fn with_requirement(mut self, requirement: &str) -> Self {
        self.requirement = Some(requirement.to_owned());
        self
    }
}

/// What reading from a connection produced, after the always-on checks saw it.
pub(super) enum Next {
    /// A text frame that is JSON (its raw text went to the wire log, not copied).
    Frame(Value),
    /// A text frame that is not JSON, as received.
    NotJson(String),
    Binary(usize),
    Closed(Option<u16>, String),
    Broken(String),
    /// A pong's payload; only returned to the ping step, other steps read past pongs.
    Pong(Vec<u8>),
    Deadline,
}

/// The failure (or timeout) of a step that waited for `wanted` and read `next`.
pub(super) fn unexpected(next: Next, wanted: &str) -> StepError {
    match next {
        Next::Closed(code, reason) => StepError::fail(format!(
            "the server closed the connection (code {}{}) while the runner waited for {wanted}",
            code.map_or("none".into(), |c| c.to_string()),
            if reason.is_empty() { String::new() } else { format!(", {reason}") }
        )),
        Next::Broken(message) => {
            StepError::fail(format!("the connection broke while the runner waited for {wanted}: {message}"))
        }
        Next::Binary(n) => {
            StepError::fail(format!("a binary frame ({n} bytes) arrived while the runner waited for {wanted}"))
                .with_requirement("TRANSPORT-001")
        }
        Next::NotJson(_) => StepError::fail(format!("a frame that is not JSON arrived while waiting for {wanted}")),
        Next::Frame(value) => {
            let wire = value.get("type").and_then(Value::as_str).unwrap_or("unreadable").to_owned();
            StepError::fail(format!("unexpected {wire} frame while waiting for {wanted}"))
        }
        Next::Pong(_) => StepError::fail(format!("a pong arrived while the runner waited for {wanted}")),
        Next::Deadline => {
            StepError::new(Verdict::Timeout, format!("nothing arrived before the deadline; waited for {wanted}"))
        }
    }
}
