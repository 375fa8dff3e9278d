//! Sessions: the session core that decides, and the pipeline that carries its decisions out.
//!
//! A request, a step of the run or a deadline is *decided* by the core (the handler of a request,
//! the driver, expiry, recovery) as a value: a [`Change`](change::Change) (its events, the
//! request it accepts, the agent's cursor and plan, deadlines, committed responses), or a refusal.
//! The commit pipeline (`pipeline/`) stages the change on the session's state (every event
//! through `UiState::apply`, the schema crate's reducer), decides its lease and checkpoint, commits
//! it in the store, and only then hands each connection its frames in its own view (the outbox,
//! `attachment.rs`) and the deadlines to the timer wheel (`launch.rs`). So the state a client sees
//! is the fold of the events it was sent, and nothing it sees can be lost by a crash.
//!
//! | module | seam |
//! | --- | --- |
//! | `state`, `shared` | a session in memory, and what sessions share (versions, capabilities, agent) |
//! | `registry`, `lifecycle` | loading (the latest checkpoint and the fold after it), eviction, recovery at start |
//! | `partial` | a windowed open from the window checkpoint, and the whole state on demand |
//! | `change`, `pipeline` | a decided change, and the one commit-then-send path |
//! | `attachment`, `view` | the attached connections grouped by view, and the frames of a view |
//! | `outside` | frames that change no state (errors, pages) and their seqs |
//! | `handshake`, `catch_up`, `recent` | `session.hello`: open, resume (takeover or attach), welcome, snapshot or catch-up |
//! | `request` | a connection's request on its session, with the cluster's retries |
//! | `requests`, `retry`, `cancel`, `history` | the requests: decided, then committed |
//! | `driver`, `launch`, `expiry`, `recovery` | the run driver, the tasks the core starts, deadlines, what a crash left |
//! | `replica`, `cluster_tasks` | one replica among several on a shared store |

mod attachment;
mod cancel;
mod catch_up;
mod change;
mod cluster_tasks;
mod driver;
mod expiry;
mod fold;
mod handshake;
mod history;
mod launch;
mod lifecycle;
mod nested;
mod outside;
mod partial;
mod pipeline;
mod recent;
mod recovery;
mod registry;
mod replica;
mod request;
mod requests;
mod retry;
mod shared;
mod state;
mod view;

pub(crate) use cancel::cancel;
pub(crate) use cluster_tasks::{follow, hold_leases, reap, recover_own};
pub(crate) use driver::drive_task;
pub(crate) use expiry::deadline_task;
pub(crate) use handshake::{detach, open_session, resume_session};
pub(crate) use history::history;
pub(crate) use outside::{send_error, send_outside_state};
pub(crate) use partial::PARTIAL_OPENS;
pub(crate) use replica::sync_task;
pub(crate) use request::{carry_out, Attempt};
pub(crate) use requests::{rewind, tool_call_response, user_message};
pub(crate) use retry::retry;
pub(crate) use shared::Setup;
pub(crate) use state::{Inner, Session, Shared, Tasks};
