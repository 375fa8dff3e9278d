//! A spawned backend as a cluster: `N` replicas of one target (`run --replicas N`), each its own
//! process group, port and stderr tail, sharing one database the runner creates on the `--store`
//! server. With one replica and no store it is exactly the single process of before.

use std::time::Duration;

use super::process::ReplicaConfig;
use super::store::{ScratchDb, StoreServer, StoreUrl};
use super::{ServerProcess, StartError, Target};

/// The most replicas a run may start.
pub const MAX_REPLICAS: usize = 8;

/// How a spawned backend is laid out: how many replicas, on which store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSpec {
    /// Replicas started for each cluster, 1 to [`MAX_REPLICAS`].
    pub replicas: usize,
    /// The PostgreSQL server the replicas share (a fresh database per cluster); `None`: each replica
    /// keeps its own SQLite file, so only one replica makes sense.
    pub store: Option<StoreUrl>,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec { replicas: 1, store: None }
    }
}

impl ClusterSpec {
    /// Checks the combination before anything starts: more than one replica needs a shared store.
    pub fn check(&self) -> Result<(), String> {
        if self.replicas == 0 || self.replicas > MAX_REPLICAS {
            return Err(format!("--replicas must be 1 to {MAX_REPLICAS}, not {}", self.replicas));
        }
        if self.replicas > 1 && self.store.is_none() {
            return Err(format!(
                "--replicas {} needs a shared store: --store postgres://…; SQLite replicas would each hold their own sessions",
                self.replicas
            ));
        }
        Ok(())
    }

    /// How reports name `target` started this way: `3 replicas of the bundled reference backend on
    /// postgres://user@host:5432/<a fresh database per cluster>`.
    pub fn describe(&self, target: &Target) -> String {
        let what = target.describe();
        let on = self.store.as_ref().map(|s| format!(" on {}/<a fresh database per cluster>", s.server()));
        match (self.replicas, on, target.is_spawned()) {
            (_, _, false) => what,
            (1, None, true) => what,
            (1, Some(on), true) => format!("{what}{on}"),
            (n, on, true) => format!("{n} replicas of {what}{}", on.unwrap_or_default()),
        }
    }
}

/// What the runner did to a replica last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaState {
    /// Running.
    Up,
    /// Killed and not started again.
    Down,
    /// Stopped with SIGSTOP.
    Paused,
}

/// The replicas of one spawned backend and the database they share; dropping it kills every
/// replica (paused ones included) and drops the database (best effort; [`Cluster::shutdown`] waits).
#[derive(Debug)]
pub struct Cluster {
    label: String,
    replicas: Vec<ServerProcess>,
    db: Option<ScratchDb>,
}

impl Cluster {
    /// Starts `spec.replicas` replicas of `target` one after the other (so schema migrations at
    /// start never race), on a fresh database of `store` when one is given; waits until each is
    /// ready. On failure whatever was started is stopped and the database dropped.
    pub async fn start(
        target: &Target,
        label: &str,
        spec: &ClusterSpec,
        store: Option<&StoreServer>,
        start_timeout: Duration,
    ) -> Result<Cluster, StartError> {
        let db = match store {
            Some(server) => Some(server.create(label).await.map_err(|e| StartError::Store(e.to_string()))?),
            None => None,
        };
        let named = spec.replicas > 1 || db.is_some();
        let mut cluster = Cluster { label: label.to_owned(), replicas: Vec::new(), db };
        for k in 0..spec.replicas.max(1) {
            let config = ReplicaConfig {
                name: named.then(|| replica_name(k)),
                store: cluster.db.as_ref().map(|d| d.url().to_owned()),
                store_shown: cluster.db.as_ref().map(ScratchDb::shown),
            };
            let replica_label = if named { format!("{label}-{}", replica_name(k)) } else { label.to_owned() };
            match ServerProcess::start_replica(target, &replica_label, config, start_timeout).await {
                Ok(p) => cluster.replicas.push(p),
                Err(e) => {
                    cluster.shutdown().await;
                    return Err(match (named, e) {
                        (true, StartError::Exited { status, stderr }) => {
                            StartError::Exited { status: format!("replica {}: {status}", replica_name(k)), stderr }
                        }
                        (_, e) => e,
                    });
                }
            }
        }
        Ok(cluster)
    }

    /// How many replicas it has.
    pub fn len(&self) -> usize {
        self.replicas.len()
    }

    /// Whether it has no replica (never, once started).
    pub fn is_empty(&self) -> bool {
        self.replicas.is_empty()
    }

    /// The label given at start.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The WebSocket URL of replica `k` (its latest incarnation).
    pub fn url(&self, k: usize) -> Option<&str> {
        self.replicas.get(k).map(ServerProcess::url)
    }

    /// The URLs of every replica, in order.
    pub fn urls(&self) -> Vec<String> {
        self.replicas.iter().map(|p| p.url().to_owned()).collect()
    }

    /// The URL of the database the replicas share, its password hidden.
    pub fn store_shown(&self) -> Option<String> {
        self.db.as_ref().map(ScratchDb::shown)
    }

    /// What the runner did to replica `k` last (`Down` for one it does not have).
    pub fn state(&self, k: usize) -> ReplicaState {
        match self.replicas.get(k) {
            Some(p) if p.is_paused() => ReplicaState::Paused,
            Some(p) if p.is_running() => ReplicaState::Up,
            _ => ReplicaState::Down,
        }
    }

    fn replica(&mut self, k: usize) -> Result<&mut ServerProcess, StartError> {
        let n = self.replicas.len();
        self.replicas.get_mut(k).ok_or_else(|| StartError::Replica(format!("no replica {k}: the cluster has {n}")))
    }

    /// Kills replica `k` (its whole process group) with SIGKILL; it stays down until
    /// [`Cluster::start_replica`].
    pub async fn kill_replica(&mut self, k: usize) -> Result<(), StartError> {
        let p = self.replica(k)?;
        p.kill().await;
        p.note("killed with SIGKILL");
        Ok(())
    }

    /// Starts replica `k` again (same port, storage and database) and waits until it is ready.
    pub async fn start_replica(&mut self, k: usize) -> Result<(), StartError> {
        self.replica(k)?.start_again().await
    }

    /// Stops replica `k` with SIGSTOP.
    pub fn pause_replica(&mut self, k: usize) -> Result<(), StartError> {
        self.replica(k)?.pause();
        Ok(())
    }

    /// Continues replica `k` with SIGCONT.
    pub fn continue_replica(&mut self, k: usize) -> Result<(), StartError> {
        self.replica(k)?.unpause();
        Ok(())
    }

    /// Kills every replica, waits `down`, and starts each again (down ones too).
    pub async fn restart(&mut self, down: Duration) -> Result<(), StartError> {
        for p in &mut self.replicas {
            p.kill().await;
            p.note(&format!("killed with SIGKILL, down {} ms, restarting", down.as_millis()));
        }
        tokio::time::sleep(down).await;
        for p in &mut self.replicas {
            p.start_again().await?;
        }
        Ok(())
    }

    /// SIGTERM to every running replica.
    pub fn request_shutdown(&mut self) {
        for p in &mut self.replicas {
            p.request_shutdown();
        }
    }

    /// After [`Cluster::request_shutdown`]: each replica gets up to `grace` to exit and is started
    /// again (down ones too). True when every running replica exited by itself.
    pub async fn restart_after_shutdown(&mut self, grace: Duration) -> Result<bool, StartError> {
        let mut all = true;
        for p in &mut self.replicas {
            if p.is_running() {
                all &= p.restart_after_shutdown(grace).await?;
            } else {
                p.start_again().await?;
            }
        }
        Ok(all)
    }

    /// Kills every replica and drops the database (within the store's deadline).
    pub async fn shutdown(&mut self) {
        for p in &mut self.replicas {
            p.kill().await;
        }
        if let Some(db) = self.db.as_mut() {
            if let Err(e) = db.drop_now().await {
                if let Some(p) = self.replicas.first() {
                    p.note(&format!("could not drop the database: {e}"));
                }
            }
        }
    }

    /// Each replica's stderr, labelled `replica rK` when there are several (or a store).
    pub fn logs(&self) -> Vec<(String, String)> {
        let named = self.replicas.len() > 1 || self.db.is_some();
        self.replicas
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let label = if named { format!("replica {} stderr", replica_name(k)) } else { "stderr".into() };
                (label, p.stderr())
            })
            .collect()
    }

    /// Every replica's stderr in one text: as before for a single replica, else a section per
    /// replica that wrote anything (`replica r1 stderr:`).
    pub fn stderr(&self) -> String {
        if self.replicas.len() == 1 && self.db.is_none() {
            return self.replicas[0].stderr();
        }
        let mut text = String::new();
        for (label, stderr) in self.logs() {
            if !stderr.trim().is_empty() {
                text.push_str(&format!("{label}:\n{stderr}"));
            }
        }
        text
    }
}

/// `r0`, `r1`, …: how logs, reports and the bundled reference's `--replica` name replica `k`.
pub fn replica_name(k: usize) -> String {
    format!("r{k}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(command: &str) -> Target {
        Target::Exec { command: command.into(), path: "/ws".into() }
    }

    #[test]
    fn more_than_one_replica_needs_a_shared_store() {
        let spec = ClusterSpec { replicas: 3, store: None };
        let e = spec.check().unwrap_err();
        assert_eq!(
            e,
            "--replicas 3 needs a shared store: --store postgres://…; SQLite replicas would each hold their own sessions"
        );
        assert!(ClusterSpec { replicas: 9, store: None }.check().is_err());
        assert!(ClusterSpec { replicas: 0, store: None }.check().is_err());
        assert!(ClusterSpec::default().check().is_ok());
        let store = StoreUrl::parse("postgres://u:pw@localhost:5432/postgres").ok();
        let spec = ClusterSpec { replicas: 3, store };
        assert!(spec.check().is_ok());
        let text = spec.describe(&Target::Bundled { fault: None });
        assert_eq!(
            text,
            "3 replicas of bundled reference backend on postgres://u:***@localhost:5432/<a fresh database per cluster>"
        );
        assert_eq!(ClusterSpec::default().describe(&exec("x")), "exec: x");
    }

    /// Whether process `pid` is stopped (`T` in /proc/PID/stat), running, or gone.
    fn proc_state(pid: &str) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?.1.trim_start().chars().next()
    }

    async fn pid_of(cluster: &Cluster, k: usize) -> String {
        // The fake backend writes its pid on stderr right away.
        for _ in 0..100 {
            let text = cluster.replicas[k].stderr();
            if let Some(pid) = text.lines().rev().find_map(|l| l.strip_prefix("pid ")) {
                return pid.trim().to_owned();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no pid on stderr: {}", cluster.replicas[k].stderr());
    }

    #[tokio::test]
    async fn replicas_are_killed_paused_continued_and_started_one_by_one() {
        // A fake backend: prints its replica and port, then sleeps (a subshell keeps `exec` in the
        // group); `$$` is the shell, the group leader.
        let target = exec("echo pid $$ >&2; echo ws://127.0.0.1:{port}/{replica}; exec sleep 30");
        let spec = ClusterSpec { replicas: 3, store: None };
        let mut cluster = Cluster::start(&target, "t", &spec, None, Duration::from_secs(5)).await.unwrap();
        assert_eq!(cluster.len(), 3);
        let urls = cluster.urls();
        assert!(urls[0].ends_with("/r0") && urls[2].ends_with("/r2"), "{urls:?}");
        assert_ne!(urls[0], urls[1], "each replica its own port");
        let pids = [pid_of(&cluster, 0).await, pid_of(&cluster, 1).await, pid_of(&cluster, 2).await];

        cluster.pause_replica(1).unwrap();
        assert_eq!(cluster.state(1), ReplicaState::Paused);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(proc_state(&pids[1]), Some('T'), "SIGSTOP stops the replica");
        assert_ne!(proc_state(&pids[0]), Some('T'));
        cluster.continue_replica(1).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_ne!(proc_state(&pids[1]), Some('T'), "SIGCONT continues it");

        cluster.kill_replica(2).await.unwrap();
        assert_eq!(cluster.state(2), ReplicaState::Down);
        assert!(matches!(proc_state(&pids[2]), None | Some('Z')), "SIGKILL ends the replica");
        assert_eq!(cluster.state(0), ReplicaState::Up);
        cluster.start_replica(2).await.unwrap();
        assert_eq!(cluster.state(2), ReplicaState::Up);
        assert_eq!(cluster.url(2), Some(urls[2].as_str()), "same port after a start");
        let new_pid = pid_of(&cluster, 2).await;
        assert_ne!(new_pid, pids[2]);

        // A paused replica is killed too when the cluster goes.
        cluster.pause_replica(0).unwrap();
        let logs = cluster.stderr();
        assert!(logs.contains("replica r0 stderr:") && logs.contains("replica r2 stderr:"), "{logs}");
        assert!(logs.contains("killed with SIGKILL") && logs.contains("stopped with SIGSTOP"), "{logs}");
        assert!(cluster.kill_replica(7).await.is_err());
        drop(cluster);
        tokio::time::sleep(Duration::from_millis(200)).await;
        for pid in [&pids[0], &pids[1], &new_pid] {
            assert!(matches!(proc_state(pid), None | Some('Z')), "replica {pid} left behind");
        }
    }

    #[tokio::test]
    async fn a_replica_that_fails_to_start_stops_the_others() {
        let target = exec(
            "if [ {replica} = r1 ]; then echo broken >&2; exit 3; fi; echo ws://127.0.0.1:{port}/ws; exec sleep 30",
        );
        let spec = ClusterSpec { replicas: 2, store: None };
        let err = Cluster::start(&target, "t", &spec, None, Duration::from_secs(5)).await.unwrap_err();
        assert!(err.to_string().contains("replica r1") && err.to_string().contains("broken"), "{err}");
    }
}
