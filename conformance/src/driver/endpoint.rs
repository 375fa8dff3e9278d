//! Where the backend is, and restarting it.

use std::time::Duration;

use super::StepError;
use crate::backend::{ServerProcess, StartError};
use crate::report::Verdict;

/// Where the backend is, for one scenario.
#[derive(Debug)]
pub enum Endpoint {
    /// A backend the runner cannot restart (a URL, or the shared spawned instance).
    Url(String),
    /// A backend the runner started for this scenario alone; `restart` works.
    Process(Box<ServerProcess>),
}

impl Endpoint {
    pub(super) fn url(&self) -> String {
        match self {
            Endpoint::Url(u) => u.clone(),
            Endpoint::Process(p) => p.url().to_owned(),
        }
    }

    /// Asks the backend to shut down in an orderly way (SIGTERM).
    pub(super) fn request_shutdown(&mut self) -> Result<(), StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(
                Verdict::NotApplicable,
                "an orderly restart needs a backend the runner starts (--exec or the bundled one), not --url",
            )),
            Endpoint::Process(p) => {
                p.request_shutdown();
                Ok(())
            }
        }
    }

    /// After [`Endpoint::request_shutdown`]: waits up to `grace` for the exit (killing the backend
    /// otherwise) and starts it again. True when it exited by itself.
    pub(super) async fn restart_after_shutdown(&mut self, grace: Duration) -> Result<bool, StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(Verdict::NotApplicable, "no backend process to restart")),
            Endpoint::Process(p) => {
                p.restart_after_shutdown(grace).await.map_err(|e| restart_error("its orderly shutdown", &e))
            }
        }
    }

    /// Kills the backend, keeps it down for `down`, and starts it again.
    pub(super) async fn restart(&mut self, down: Duration) -> Result<(), StepError> {
        match self {
            Endpoint::Url(_) => Err(StepError::new(
                Verdict::NotApplicable,
                "restart needs a backend the runner starts (--exec or the bundled one), not --url",
            )),
            Endpoint::Process(p) => p.restart(down).await.map_err(|e| restart_error("kill -9", &e)),
        }
    }
}

/// Why a backend did not come back after `after`. A backend that exits when started again on its own
/// storage is broken: it cannot accept the resume of its sessions (RESUME-010). One that is merely
/// slow, or cannot be spawned, is a backend-start (harness) problem, not the scenario's failure.
fn restart_error(after: &str, e: &StartError) -> StepError {
    match e {
        StartError::Exited { .. } => {
            StepError::fail(format!("the backend crashed when started again after {after}: {e}"))
                .with_requirement("RESUME-010")
        }
        _ => StepError::harness(format!("backend start: the backend did not come back after {after}: {e}")),
    }
}
