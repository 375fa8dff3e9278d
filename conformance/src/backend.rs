//! The implementation under test: a URL, a command the runner spawns (`--exec`), or the bundled
//! reference backend (the runner re-executes itself with the hidden `__reference` subcommand).
//!
//! A spawned backend runs in its own process group, so `restart` and the final cleanup kill the
//! whole tree with SIGKILL; its stderr is kept (bounded) for the report.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// What to test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A backend already running at this WebSocket URL; `restart` is not applicable.
    Url(String),
    /// A shell command with `{port}` (and optionally `{db}`) placeholders; the runner spawns it.
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
}

/// Most stderr bytes kept per backend instance.
const STDERR_KEEP_BYTES: usize = 64 * 1024;

/// A bounded tail of a stream's text.
#[derive(Debug, Default)]
struct Tail {
    lines: VecDeque<String>,
    bytes: usize,
    dropped: usize,
}

impl Tail {
    fn push(&mut self, line: String) {
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

    fn text(&self) -> String {
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

/// A backend process the runner started; killed (whole process group) on drop.
#[derive(Debug)]
pub struct ServerProcess {
    target: Target,
    label: String,
    storage: TempDir,
    port: u16,
    child: Option<Child>,
    pgid: Option<i32>,
    url: String,
    stderr: Arc<Mutex<Tail>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    start_timeout: Duration,
}

impl ServerProcess {
    /// Starts `target` (which must be spawnable) with fresh storage and waits until it is ready.
    pub async fn start(target: &Target, label: &str, start_timeout: Duration) -> Result<ServerProcess, StartError> {
        let storage = TempDir::new(label)?;
        let port = match target {
            Target::Exec { .. } => {
                free_port().map_err(|e| StartError::Spawn { what: "free port".into(), message: e })?
            }
            _ => 0,
        };
        let mut server = ServerProcess {
            target: target.clone(),
            label: label.to_owned(),
            storage,
            port,
            child: None,
            pgid: None,
            url: String::new(),
            stderr: Arc::new(Mutex::new(Tail::default())),
            stderr_task: None,
            start_timeout,
        };
        server.spawn().await?;
        Ok(server)
    }

    /// The WebSocket URL of the running instance.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The label given at start.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The stderr kept so far (all incarnations).
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|t| t.text()).unwrap_or_default()
    }

    /// Kills the process group with SIGKILL, waits `down` (a deadline may pass meanwhile) and
    /// starts the backend again on the same storage (and, for `--exec`, the same port).
    pub async fn restart(&mut self, down: Duration) -> Result<(), StartError> {
        self.kill().await;
        if let Ok(mut t) = self.stderr.lock() {
            t.push(format!("[chatwire-conformance: killed with SIGKILL, down {} ms, restarting]", down.as_millis()));
        }
        tokio::time::sleep(down).await;
        self.spawn().await
    }

    /// Asks for an orderly shutdown: SIGTERM to the whole process group.
    pub fn request_shutdown(&self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, libc::SIGTERM);
        }
    }

    /// After [`ServerProcess::request_shutdown`]: waits up to `grace` for the backend to exit, kills
    /// it if it has not, and starts it again on the same storage. True when it exited by itself.
    pub async fn restart_after_shutdown(&mut self, grace: Duration) -> Result<bool, StartError> {
        let exited = match self.child.as_mut() {
            Some(child) => matches!(tokio::time::timeout(grace, child.wait()).await, Ok(Ok(_))),
            None => true,
        };
        // Whatever is left of the group (or a backend that ignored SIGTERM) goes now.
        self.kill().await;
        if let Ok(mut t) = self.stderr.lock() {
            let how = if exited { "exited after SIGTERM" } else { "ignored SIGTERM, killed" };
            t.push(format!("[chatwire-conformance: {how}, restarting]"));
        }
        self.spawn().await?;
        Ok(exited)
    }

    /// Kills the whole process group with SIGKILL and reaps the child.
    pub async fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        }
    }

    fn command(&self) -> (Command, String) {
        let db = self.storage.path().join("chatwire.db");
        match &self.target {
            Target::Exec { command, .. } => {
                let line = command.replace("{port}", &self.port.to_string()).replace("{db}", &db.to_string_lossy());
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(&line);
                (cmd, line)
            }
            Target::Bundled { .. } | Target::BundledOutsideConformance { .. } | Target::Url(_) => {
                let (fault, conformance) = match &self.target {
                    Target::Bundled { fault } => (fault.clone(), true),
                    Target::BundledOutsideConformance { fault } => (fault.clone(), false),
                    Target::Url(_) | Target::Exec { .. } => (None, true),
                };
                let exe = bundled_executable();
                let mut cmd = Command::new(&exe);
                let mut args = vec!["__reference", "serve", "--addr", "127.0.0.1:0"];
                if conformance {
                    args.push("--conformance");
                }
                args.push("--db");
                cmd.args(&args).arg(&db);
                if let Some(fault) = &fault {
                    cmd.arg("--fault").arg(fault);
                }
                let fault = fault.map(|f| format!(" --fault {f}")).unwrap_or_default();
                (cmd, format!("{} {} {}{fault}", exe.display(), args.join(" "), db.display()))
            }
        }
    }

    async fn spawn(&mut self) -> Result<(), StartError> {
        let (mut cmd, what) = self.command();
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        // Own process group: a kill reaches the shell of --exec and everything it started.
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| StartError::Spawn { what: what.clone(), message: e.to_string() })?;
        self.pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let (line_tx, mut line_rx) = tokio::sync::mpsc::channel::<String>(1);
        if let Some(out) = child.stdout.take() {
            tokio::spawn(drain(out, None, Some(line_tx)));
        }
        if let Some(err) = child.stderr.take() {
            self.stderr_task = Some(tokio::spawn(drain(err, Some(self.stderr.clone()), None)));
        }
        self.child = Some(child);
        let started = Instant::now();
        let deadline = started + self.start_timeout;
        let default_url = match &self.target {
            Target::Exec { path, .. } => Some(format!("ws://127.0.0.1:{}{path}", self.port)),
            _ => None,
        };
        let mut stdout_open = true;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.pgid = None;
                    // Let the last stderr lines arrive (bounded: a grandchild may keep the pipe open).
                    if let Some(task) = self.stderr_task.take() {
                        let _ = tokio::time::timeout(Duration::from_millis(500), task).await;
                    }
                    return Err(StartError::Exited { status: status.to_string(), stderr: self.stderr() });
                }
            }
            if Instant::now() >= deadline {
                let waited_ms = started.elapsed().as_millis() as u64;
                let port = self.port;
                let stderr = self.stderr();
                self.kill().await;
                return Err(StartError::NotReady { waited_ms, port, stderr });
            }
            let tick = Instant::now() + Duration::from_millis(50);
            if stdout_open {
                match tokio::time::timeout_at(tick.min(deadline), line_rx.recv()).await {
                    Ok(Some(line)) => {
                        let line = line.trim();
                        if line.starts_with("ws://") || line.starts_with("wss://") {
                            self.url = line.to_owned();
                            return Ok(());
                        }
                    }
                    Ok(None) => stdout_open = false,
                    Err(_) => {}
                }
            } else {
                tokio::time::sleep_until(tick.min(deadline)).await;
            }
            if let Some(url) = &default_url {
                let probe = tokio::net::TcpStream::connect(("127.0.0.1", self.port));
                if let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(200), probe).await {
                    self.url = url.clone();
                    return Ok(());
                }
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
    }
}

static BUNDLED_EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Names the executable that serves the bundled backend through its `__reference` subcommand, for
/// callers whose own executable is not `chatwire-conformance` (integration tests, benches).
/// The first call wins.
pub fn set_bundled_executable(path: impl Into<PathBuf>) {
    let _ = BUNDLED_EXE.set(path.into());
}

fn bundled_executable() -> PathBuf {
    BUNDLED_EXE
        .get()
        .cloned()
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("chatwire-conformance"))
}

fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

fn signal_group(pgid: i32, signal: libc::c_int) {
    if pgid > 0 {
        // SAFETY: killpg only sends a signal; the group was created for this child by process_group(0).
        unsafe {
            libc::killpg(pgid, signal);
        }
    }
}

/// Reads lines until EOF: stdout lines go to `lines` (the first ones, for readiness) and are then
/// discarded so the child never blocks on a full pipe; stderr lines go to `tail`.
async fn drain(
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
fn free_port() -> Result<u16, String> {
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

    #[tokio::test]
    async fn exec_readiness_by_stdout_line_and_group_kill() {
        let target = Target::Exec {
            command: "echo ws://127.0.0.1:{port}/x; echo oops >&2; sleep 30".into(),
            path: "/ws".into(),
        };
        let mut server = ServerProcess::start(&target, "t", Duration::from_secs(5)).await.unwrap();
        assert!(server.url().starts_with("ws://127.0.0.1:") && server.url().ends_with("/x"), "{}", server.url());
        // stderr is drained concurrently: give it a bounded moment to arrive.
        for _ in 0..100 {
            if server.stderr().contains("oops") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(server.stderr().contains("oops"));
        server.kill().await;
        assert!(server.stderr().contains("oops"));
    }

    #[tokio::test]
    async fn exec_that_exits_or_never_listens_is_reported() {
        let target = Target::Exec { command: "echo broken >&2; exit 3".into(), path: "/ws".into() };
        let err = ServerProcess::start(&target, "t", Duration::from_secs(5)).await.unwrap_err();
        assert!(matches!(err, StartError::Exited { .. }), "{err}");
        assert!(err.to_string().contains("broken"), "{err}");
        let target = Target::Exec { command: "sleep 30".into(), path: "/ws".into() };
        let err = ServerProcess::start(&target, "t", Duration::from_millis(400)).await.unwrap_err();
        assert!(matches!(err, StartError::NotReady { .. }), "{err}");
    }
}
