//! What a shared store (PostgreSQL) adds for a cluster of replicas: optimistic commits checked
//! against the session's `next_seq`, the run lease with its fencing token, the committed changes
//! other replicas replay, and the notices that tell them to.
//!
//! The embedded SQLite store has none of this: it serves one process (an exclusive lock on the
//! database file refuses a second), ignores [`Commit::base_seq`](super::Commit::base_seq),
//! [`Commit::lease`](super::Commit::lease) and [`Commit::notify`](super::Commit::notify), and
//! answers the cluster-only calls with [`StoreError::NotShared`](super::StoreError::NotShared).

use std::time::Duration;

/// How long a run lease lives without being renewed. The holder renews it (every commit that
/// holds it, and the session layer's heartbeat); once it has expired any replica may claim it
/// ([`StoreWriter::claim_expired_leases`](super::StoreWriter::claim_expired_leases)). Expiry is
/// judged by the database's clock, so the replicas' clocks do not matter.
pub const LEASE_TTL: Duration = Duration::from_secs(5);

/// What a commit does to the session's run lease (the `leases` row of a shared store).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LeaseOp {
    /// No lease check; the lease is left as it is.
    #[default]
    Keep,
    /// Takes the lease if there is none or it has expired: owner = this replica, token = the
    /// previous token + 1 (1 for the first). A live lease of another replica refuses the commit
    /// with [`StoreError::LeaseHeld`](super::StoreError::LeaseHeld); a live lease of this replica
    /// is taken over the same way (a new token). The commit returns the new token.
    Acquire,
    /// The lease must exist, belong to this replica and carry this token, else the commit is
    /// refused with [`StoreError::Fenced`](super::StoreError::Fenced). Renews its expiry.
    Hold(u64),
    /// Deletes the lease. With `Some(token)` it must first be this replica's with that token
    /// (else [`StoreError::Fenced`](super::StoreError::Fenced)); with `None` it is deleted
    /// whoever holds it (or none).
    Release(Option<u64>),
}

/// One committed change as another replica replays it
/// ([`StoreWriter::changes_since`](super::StoreWriter::changes_since)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredChange {
    /// The session's `next_seq` the change was staged from (its first seq, if it used any).
    pub first_seq: u64,
    /// The session's `next_seq` after the change.
    pub next_seq: u64,
    /// The change's units, JSON, as the committing replica gave them (`None`: the commit only
    /// consumed seqs, e.g. an error frame or a resume's reservation).
    pub units: Option<String>,
    /// The agent cursor after the change, JSON, when the change set it.
    pub cursor: Option<String>,
    /// The turn's plan after the change, JSON, when the change set it.
    pub turn_plan: Option<String>,
}

/// What the shared store tells every replica ([`StoreWriter::notices`](super::StoreWriter::notices)).
///
/// Delivered through a bounded `tokio::sync::broadcast` channel: a receiver that falls behind gets
/// `RecvError::Lagged` and must treat it exactly like [`Notice::Lost`] (notices were dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A commit of `session_id` left its `next_seq` at this value.
    Committed {
        /// The session.
        session_id: String,
        /// Its `next_seq` after the commit.
        next_seq: u64,
    },
    /// The notification connection was lost (and is being re-established): notices may have
    /// been missed, so every session held in memory must be synced from the store.
    Lost,
}
