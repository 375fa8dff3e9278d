//! The commit pipeline: the one way a session's state changes. A change the session core decided
//! ([`Change`](super::change::Change)) goes through its steps, each its own module: `stage`
//! applies its events (the stream rules, the log rows), `frames` builds each group of connections'
//! frames (answers, deltas, patches, windows), `lease` and `checkpoint` decide what the change
//! does to the run lease and whether a checkpoint is due; `batch` stages the run driver's
//! consecutive changes and commits them together; `commit` commits the result in the
//! store, then hands the frames to the outbox and the deadlines to the timer wheel; `around`
//! holds what surrounds either commit (the seam before it, the restore after a failure).

mod around;
mod batch;
mod checkpoint;
mod commit;
mod frames;
mod lease;
mod nested_view;
mod stage;

pub(crate) use batch::{begin as begin_batch, flush as flush_batch, has_room as batch_has_room};
pub(crate) use checkpoint::save as save_checkpoint;
#[cfg(test)]
pub(crate) use checkpoint::window_checkpoint;
pub(crate) use commit::{commit, replay};
pub(crate) use lease::{base_seq, is_active, lost_lease};
