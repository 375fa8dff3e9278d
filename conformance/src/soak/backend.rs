//! The backend a soak slot's sessions talk to: a URL, a cluster of the slot's own (one or more
//! replicas, which a session may restart), or the one cluster every slot shares in a load run
//! (whose replicas the killer kills, never a session).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::fleet::{Fleet, Placed};
use crate::backend::Cluster;

/// The backend of one slot.
#[derive(Debug)]
pub(crate) enum Backend {
    /// A backend already running.
    Url(String),
    /// The slot's own cluster, and the number of connections opened to it so far, which picks the
    /// next replica.
    Process(Box<Cluster>, AtomicUsize),
    /// The cluster every slot shares.
    Shared(Arc<Fleet>),
}

impl Backend {
    /// How many replicas it has (1 for a URL).
    pub fn replicas(&self) -> usize {
        match self {
            Backend::Url(_) => 1,
            Backend::Process(c, _) => c.len().max(1),
            Backend::Shared(f) => f.len().max(1),
        }
    }

    /// Where the next connection goes: the URL, and in a shared cluster the replica. A reconnect
    /// names the replica its connection was on (`after`), and goes to another one where it can.
    pub fn place(&self, after: Option<usize>) -> Result<(String, Option<Placed>), String> {
        match self {
            Backend::Url(u) => Ok((u.clone(), None)),
            Backend::Process(c, opened) => {
                let k = opened.fetch_add(1, Ordering::Relaxed) % c.len().max(1);
                Ok((c.url(k).unwrap_or_default().to_owned(), None))
            }
            Backend::Shared(f) => match f.place(after) {
                Some((url, placed)) => Ok((url, Some(placed))),
                None => Err("every replica is down".into()),
            },
        }
    }

    /// Whether a connection placed at `placed` was cut by a kill of its replica.
    pub fn lost_to_kill(&self, placed: Option<Placed>) -> bool {
        match (self, placed) {
            (Backend::Shared(f), Some(p)) => f.lost_to_kill(p),
            _ => false,
        }
    }

    /// Whether every kill under the sessions is the harness's and counted (a shared cluster): a
    /// run interrupted while none happened is then a finding.
    pub fn kills_known(&self) -> bool {
        matches!(self, Backend::Shared(_))
    }

    /// Kills so far under the sessions.
    pub fn kills(&self) -> u64 {
        match self {
            Backend::Shared(f) => f.kills(),
            _ => 0,
        }
    }

    /// `deadline`, later where a kill asks for time to recover (never past `cap`).
    pub fn extended(&self, deadline: Instant, cap: Instant) -> Instant {
        match self {
            Backend::Shared(f) => f.recovery_deadline().map_or(deadline, |r| deadline.max(r.min(cap))),
            _ => deadline,
        }
    }

    /// Whether a session may kill and start it again.
    pub fn can_restart(&self) -> bool {
        matches!(self, Backend::Process(..))
    }

    /// Kills every replica and starts them again.
    pub async fn restart(&mut self) -> Result<(), String> {
        match self {
            Backend::Url(_) | Backend::Shared(_) => Err("this backend cannot be restarted by a session".into()),
            Backend::Process(c, _) => c.restart(Duration::ZERO).await.map_err(|e| e.to_string()),
        }
    }
}
