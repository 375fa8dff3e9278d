//! One backend process the runner started (a replica of a [`super::Cluster`]): its own process
//! group, port, storage and bounded stderr tail; killed with SIGKILL, stopped with SIGSTOP and
//! continued with SIGCONT as a whole group.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::time::Instant;

use super::{
    bundled_executable, drain, free_port, kill_group, signal_group, wait_group_stopped, StartError, Tail, Target,
    TempDir,
};

/// Where a replica keeps its sessions besides its own temporary directory, and its name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReplicaConfig {
    /// `r0`, `r1`, …: passed as `--replica` to the bundled reference, `{replica}` in `--exec`.
    pub name: Option<String>,
    /// The URL of the cluster's database (`{store}`, `--store` of the bundled reference).
    pub store: Option<String>,
    /// The same URL with its password hidden, for reports.
    pub store_shown: Option<String>,
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
    replica: ReplicaConfig,
    paused: bool,
}

impl ServerProcess {
    /// Starts `target` (which must be spawnable) with fresh storage and waits until it is ready.
    pub async fn start(target: &Target, label: &str, start_timeout: Duration) -> Result<ServerProcess, StartError> {
        Self::start_replica(target, label, ReplicaConfig::default(), start_timeout).await
    }

    /// Starts one replica of a cluster: as [`ServerProcess::start`], with its name and the
    /// cluster's store.
    pub(crate) async fn start_replica(
        target: &Target,
        label: &str,
        replica: ReplicaConfig,
        start_timeout: Duration,
    ) -> Result<ServerProcess, StartError> {
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
            replica,
            paused: false,
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

    /// Whether the process is running (started and not killed; it may be paused).
    pub fn is_running(&self) -> bool {
        self.pgid.is_some()
    }

    /// Whether the process group is stopped by SIGSTOP ([`ServerProcess::pause`]).
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Notes a line of the runner's own in the stderr tail, so the report shows what was done when.
    pub(crate) fn note(&self, what: &str) {
        if let Ok(mut t) = self.stderr.lock() {
            t.push(format!("[chatwire-conformance: {what}]"));
        }
    }

    /// Stops the whole process group with SIGSTOP and waits (at most a second) until every thread
    /// is stopped: it keeps its sockets but answers nothing.
    pub async fn pause(&mut self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, libc::SIGSTOP);
            self.paused = true;
            if wait_group_stopped(pgid, Duration::from_secs(1)).await {
                self.note("stopped with SIGSTOP");
            } else {
                self.note("sent SIGSTOP; not every thread had stopped a second later");
            }
        }
    }

    /// Continues a paused process group with SIGCONT.
    pub fn unpause(&mut self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, libc::SIGCONT);
            self.note("continued with SIGCONT");
        }
        self.paused = false;
    }

    /// Starts the backend again after [`ServerProcess::kill`], on the same storage and port.
    pub async fn start_again(&mut self) -> Result<(), StartError> {
        if self.is_running() {
            return Ok(());
        }
        self.note("starting again");
        self.spawn().await
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

    /// Asks for an orderly shutdown: SIGTERM to the whole process group (then SIGCONT to a paused
    /// one, which would otherwise hold the signal until continued).
    pub fn request_shutdown(&mut self) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, libc::SIGTERM);
            if self.paused {
                signal_group(pgid, libc::SIGCONT);
                self.paused = false;
            }
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

    /// Kills the whole process group with SIGKILL (a paused one too) and reaps the child.
    pub async fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
        self.paused = false;
        if let Some(mut child) = self.child.take() {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        }
    }

    /// The command to spawn and how reports show it (the store's password hidden).
    fn command(&self) -> (Command, String) {
        let db = self.storage.path().join("chatwire.db");
        let name = self.replica.name.as_deref().unwrap_or("r0");
        match &self.target {
            Target::Exec { command, .. } => {
                let line = command
                    .replace("{port}", &self.port.to_string())
                    .replace("{db}", &db.to_string_lossy())
                    .replace("{replica}", name);
                let shown = line.replace("{store}", self.replica.store_shown.as_deref().unwrap_or(""));
                let line = line.replace("{store}", self.replica.store.as_deref().unwrap_or(""));
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(&line);
                (cmd, shown)
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
                cmd.args(&args);
                let mut shown = format!("{} {}", exe.display(), args.join(" "));
                match (&self.replica.store, &self.replica.name) {
                    (Some(store), name) => {
                        cmd.arg("--store").arg(store);
                        shown.push_str(&format!(" --store {}", self.replica.store_shown.as_deref().unwrap_or("")));
                        if let Some(name) = name {
                            cmd.arg("--replica").arg(name);
                            shown.push_str(&format!(" --replica {name}"));
                        }
                    }
                    (None, _) => {
                        cmd.arg("--db").arg(&db);
                        shown.push_str(&format!(" --db {}", db.display()));
                    }
                }
                if let Some(fault) = &fault {
                    cmd.arg("--fault").arg(fault);
                    shown.push_str(&format!(" --fault {fault}"));
                }
                (cmd, shown)
            }
        }
    }

    async fn spawn(&mut self) -> Result<(), StartError> {
        let bundled = matches!(self.target, Target::Bundled { .. } | Target::BundledOutsideConformance { .. });
        if bundled && !crate::bundled_reference::AVAILABLE {
            // Spawning `__reference` would fail with clap's usage text: say why instead.
            let what = self.target.describe();
            return Err(StartError::Spawn { what, message: crate::bundled_reference::MISSING.to_owned() });
        }
        let (mut cmd, what) = self.command();
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        // Own process group: a kill reaches the shell of --exec and everything it started.
        cmd.process_group(0);
        let mut child = cmd.spawn().map_err(|e| StartError::Spawn { what: what.clone(), message: e.to_string() })?;
        self.paused = false;
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

#[cfg(test)]
mod tests {
    use super::*;

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
