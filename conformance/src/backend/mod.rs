//! The implementation under test: a URL, a command the runner spawns (`--exec`), or the bundled
//! reference backend (the runner re-executes itself with the hidden `__reference` subcommand).
//!
//! A spawned backend runs in its own process group, so `restart` and the final cleanup kill the
//! whole tree with SIGKILL; its stderr is kept (bounded) for the report. A spawned backend is a
//! [`Cluster`] of one or more replicas ([`ServerProcess`] each, `run --replicas N`), which share a
//! PostgreSQL database the runner creates for the cluster ([`store`], `run --store URL`) when
//! there is more than one.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

mod cluster;
mod process;
pub mod store;

pub use cluster::{Cluster, ClusterSpec, ReplicaState, MAX_REPLICAS};
pub use process::ServerProcess;
pub use store::{StoreError, StoreServer, StoreUrl};

/// What to test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A backend already running at this WebSocket URL; `restart` is not applicable.
    Url(String),
    /// A shell command with `{port}` (and optionally `{db}`, `{store}`, `{replica}`) placeholders;
    /// the runner spawns it, once per replica.
    Exec {
        /// The command line, run with `sh -c`.
        command: String,
        /// URL path used when the backend does not print its URL (default `/ws`).
        path: String,
    },
    /// The reference backend built into this binary, optionally with a planted fault.
    Bundled {
        /// `--fault NAME` for the reference backend (a testing aid for the suite itself).
        fault: Option<String>,
    },
    /// The bundled reference backend started outside conformance mode (no `--conformance`), for
    /// the scenarios that check what a backend does there (`conformance_mode: false`).
    BundledOutsideConformance {
        /// `--fault NAME`, as for [`Target::Bundled`].
        fault: Option<String>,
    },
}

impl Target {
    /// Whether the runner starts the backend itself (and so can restart it).
    pub fn is_spawned(&self) -> bool {
        !matches!(self, Target::Url(_))
    }

    /// The same implementation outside conformance mode, when the runner can derive it (the
    /// bundled backend); other targets name it with `--plain-url` / `--plain-exec`.
    pub fn outside_conformance(&self) -> Option<Target> {
        match self {
            Target::Bundled { fault } => Some(Target::BundledOutsideConformance { fault: fault.clone() }),
            Target::BundledOutsideConformance { .. } => Some(self.clone()),
            Target::Url(_) | Target::Exec { .. } => None,
        }
    }

    /// How reports name the target.
    pub fn describe(&self) -> String {
        match self {
            Target::Url(u) => u.clone(),
            Target::Exec { command, .. } => format!("exec: {command}"),
            Target::Bundled { fault: None } => "bundled reference backend".to_owned(),
            Target::Bundled { fault: Some(f) } => format!("bundled reference backend with fault {f}"),
            Target::BundledOutsideConformance { fault: None } => {
                "bundled reference backend outside conformance mode".to_owned()
            }
            Target::BundledOutsideConformance { fault: Some(f) } => {
                format!("bundled reference backend outside conformance mode with fault {f}")
            }
        }
    }
}

/// Why a backend could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The process could not be spawned.
    #[error("cannot start the backend ({what}): {message}")]
    Spawn {
        /// What was run.
        what: String,
        /// The OS error.
        message: String,
    },
    /// It exited before it was ready.
    #[error("the backend exited before it was ready ({status}); stderr:\n{stderr}")]
    Exited {
        /// Exit status.
        status: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// It did not become ready before the deadline.
    #[error("the backend did not become ready within {waited_ms} ms (no ws:// line on stdout, port {port} closed); stderr:\n{stderr}")]
    NotReady {
        /// How long the runner waited.
        waited_ms: u64,
        /// The port it was given.
        port: u16,
        /// The end of its stderr.
        stderr: String,
    },
    /// The temporary storage directory could not be created.
    #[error("cannot create temporary storage: {0}")]
    Storage(String),
    /// The cluster's database could not be created on the `--store` server.
    #[error("cannot prepare the shared store: {0}")]
    Store(String),
    /// A replica the cluster does not have, or one in the wrong state for the operation.
    #[error("{0}")]
    Replica(String),
}

/// Most stderr bytes kept per backend instance.
pub(crate) const STDERR_KEEP_BYTES: usize = 64 * 1024;

/// A bounded tail of a stream's text.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
    dropped: usize,
}

impl Tail {
    pub(crate) fn push(&mut self, line: String) {
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > STDERR_KEEP_BYTES {
            match self.lines.pop_front() {
                Some(old) => {
                    self.bytes -= old.len() + 1;
                    self.dropped += 1;
                }
                None => break,
            }
        }
    }

    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        if self.dropped > 0 {
            s.push_str(&format!("[{} earlier line(s) dropped]\n", self.dropped));
        }
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// A temporary directory removed on drop.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh directory under the system temp dir.
    pub fn new(label: &str) -> Result<TempDir, StartError> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("chatwire-conformance-{}-{label}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| StartError::Storage(format!("{}: {e}", dir.display())))?;
        Ok(TempDir(dir))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

static BUNDLED_EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Names the executable that serves the bundled backend through its `__reference` subcommand, for
/// callers whose own executable is not `chatwire-conformance` (integration tests, benches).
/// The first call wins.
pub fn set_bundled_executable(path: impl Into<PathBuf>) {
    let _ = BUNDLED_EXE.set(path.into());
}

pub(crate) fn bundled_executable() -> PathBuf {
    BUNDLED_EXE
        .get()
        .cloned()
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("chatwire-conformance"))
}

pub(crate) fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

pub(crate) fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: killpg only sends a signal; the group was created for this child by process_group(0).
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Reads lines until EOF: stdout lines go to `lines` (the first ones, for readiness) and are then
/// discarded so the child never blocks on a full pipe; stderr lines go to `tail`.
pub(crate) async fn drain(
    stream: impl AsyncRead + Unpin,
    tail: Option<Arc<Mutex<Tail>>>,
    mut lines: Option<tokio::sync::mpsc::Sender<String>>,
) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Very long lines are cut: the tail is for humans.
        let line = String::from_utf8_lossy(&buf[..buf.len().min(4096)]).trim_end().to_owned();
        if let Some(tail) = &tail {
            if let Ok(mut t) = tail.lock() {
                t.push(line.clone());
            }
        }
        if let Some(tx) = &lines {
            if tx.try_send(line).is_err() && tx.is_closed() {
                lines = None;
            }
        }
    }
}

/// A port that was free a moment ago on 127.0.0.1.
pub(crate) fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end() {
        let mut t = Tail::default();
        for i in 0..10_000 {
            t.push(format!("line {i} {}", "x".repeat(20)));
        }
        let text = t.text();
        assert!(text.len() <= STDERR_KEEP_BYTES + 100);
        assert!(text.contains("line 9999"));
        assert!(text.starts_with('['));
    }
}
