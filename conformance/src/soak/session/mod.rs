//! One soak session: the plan of [`super::plan`] carried out against a backend over WebSocket, every
//! frame both ways fed to the session [`Monitor`] (the same always-on checks and oracle as the
//! scenarios) and written to the session's wire log, which `check-log` reads.
//!
//! The client acts only where the state it holds says a correct server accepts the request (or the
//! plan expects the refusal, as `run_not_active` for a cancel racing the run's end); any other
//! `error` is a finding of its own. Every read has a deadline; nothing the server sends panics.
//!
//! On a cluster whose replicas the harness kills under the sessions ([`kills`]), a connection cut
//! by a kill is resumed on another replica, and a run a recovery ended as `interrupted` is
//! accepted where a replica was killed while it ran, and only there.

mod conns;
mod kills;
mod turns;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{FrameValidator, RunStatus, UiState};
use futures_util::future::select_all;
use serde_json::Value;
use tokio::time::Instant;

use super::backend::Backend;
use super::config::{SoakConfig, SoakFinding};
use super::fleet::Placed;
use super::plan::SessionPlan;
use crate::conn::{Incoming, WsConn};
use crate::monitor::Monitor;
use crate::scenario::Level;
use crate::stall::{StallWatch, HARNESS_STALL};
use crate::wirelog::{WireLog, WireRecord};

/// What one session produced.
#[derive(Debug, Default)]
pub struct SessionOutcome {
    /// Findings, monitor's and the soak's own, in the order seen.
    pub findings: Vec<SoakFinding>,
    /// Events (server frames with a `seq` that are not state frames) on the main connection.
    pub events: u64,
    /// User message to its `chat.run_complete`, in microseconds (runs a recovery ended as
    /// `interrupted` excepted: they are counted in `interrupted`).
    pub latencies_us: Vec<u64>,
    /// `chat.cancel`s sent while a second tab read along (it sees the run end without the answer).
    pub cancels_beside_tab: u64,
    /// Runs that ended `failed`, reason `interrupted` (a recovery after a kill).
    pub interrupted: u64,
    /// Times the main connection was cut by a kill of its replica and resumed on another.
    pub kill_resumes: u64,
    /// User messages lost with the replica they were sent to (never committed: no run).
    pub lost_messages: u64,
    /// Runs completed (with a latency) after a kill first cut the session or interrupted its run.
    pub runs_after_kill: u64,
    /// What the harness did to the session's connections (the kills that cut them), for reports.
    pub notes: Vec<String>,
    /// The session could not run for a reason of the harness (the backend could not be started
    /// again, the wire log could not be written).
    pub harness: Option<String>,
}

impl SessionOutcome {
    /// Whether a must-level finding failed the session.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Must)
    }

    /// Whether a kill cut the session or interrupted one of its runs.
    pub fn hit_by_kill(&self) -> bool {
        self.kill_resumes > 0 || self.interrupted > 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Main,
    Watcher,
    /// Taken over: waits for its `session_taken_over` and close.
    Doomed,
}

struct Tab {
    ws: WsConn,
    id: u64,
    role: Role,
    paused_until: Option<Instant>,
    /// The replica of a shared cluster it is on.
    placed: Option<Placed>,
}

/// The session ended early; the reason is among the findings (or `harness`).
struct Stop;

/// Runs `plan` and returns what it found. The wire log goes to `log_path`.
pub(super) async fn run_session(
    plan: &SessionPlan,
    backend: &mut Backend,
    cfg: &SoakConfig,
    validator: Arc<FrameValidator>,
    log_path: PathBuf,
    stalls: &StallWatch,
) -> SessionOutcome {
    let started = Instant::now();
    let mut monitor = Monitor::new(validator);
    if backend.replicas() > 1 {
        // Several instances: the cluster checks run too (spec/cluster.md), as in the driver.
        monitor.cluster();
    }
    let kills_at_start = backend.kills();
    let mut s = Session {
        plan,
        backend,
        cfg,
        stalls,
        monitor,
        log: WireLog::create(&log_path),
        started,
        deadline: started + cfg.scaled(cfg.session_limit),
        tabs: Vec::new(),
        next_conn: 0,
        next_id: 0,
        allowed: HashMap::new(),
        awaiting: None,
        sent_at: None,
        invocation: None,
        frames_in_turn: 0,
        answered: HashSet::new(),
        cancelled: false,
        capabilities: Vec::new(),
        main_lost: None,
        main_replica: None,
        kills_at_start,
        kills_at_send: kills_at_start,
        run_kills: HashMap::new(),
        interrupted_seen: HashSet::new(),
        cut: HashSet::new(),
        reanswer: HashSet::new(),
        replica_of: HashMap::new(),
        run_lost: false,
        out: SessionOutcome::default(),
    };
    let _ = s.run().await;
    s.finish().await;
    if let Err(e) = s.log.finish() {
        s.out.harness.get_or_insert(format!("cannot write the wire log {}: {e}", log_path.display()));
    }
    s.out
}

struct Session<'a> {
    plan: &'a SessionPlan,
    backend: &'a mut Backend,
    cfg: &'a SoakConfig,
    /// The runner's own stalls ([`crate::stall`]).
    stalls: &'a StallWatch,
    monitor: Monitor,
    log: WireLog,
    started: Instant,
    deadline: Instant,
    tabs: Vec<Tab>,
    next_conn: u64,
    next_id: u64,
    /// Error codes a request may be refused with (a race the plan expects), by request id.
    allowed: HashMap<String, &'static [&'static str]>,
    /// The request whose answer (`in_reply_to`) the session waits for.
    awaiting: Option<String>,
    /// When the latest user message was sent, until its run completes.
    sent_at: Option<Instant>,
    /// The invocation of the latest turn.
    invocation: Option<String>,
    /// Server frames on the main connection since the turn's message.
    frames_in_turn: u32,
    /// Tool calls the session answered.
    answered: HashSet<String>,
    /// A cancel of the latest turn was sent: its pending calls are the cancel's to close.
    cancelled: bool,
    capabilities: Vec<String>,
    /// The main connection was cut by a kill of its replica: its id, until it is resumed.
    main_lost: Option<u64>,
    /// The replica the main connection is (or was last) on, in a shared cluster.
    main_replica: Option<usize>,
    /// Kills under the sessions when the session started.
    kills_at_start: u64,
    /// Kills when the latest user message or retry was sent (the start of the run it asks for).
    kills_at_send: u64,
    /// Kills when each run started, by invocation (a retry starts its invocation's run anew).
    run_kills: HashMap<String, u64>,
    /// The seqs of the `interrupted` run ends seen (a catch-up may repeat one): each counted once.
    interrupted_seen: HashSet<u64>,
    /// Tabs a kill cut.
    cut: HashSet<u64>,
    /// Calls answered on a connection a kill cut, still pending after the resume: answered again.
    reanswer: HashSet<String>,
    /// A retry was lost with the replica it was sent to: the turn has no run to wait for.
    run_lost: bool,
    /// The replica of a shared cluster each connection went to.
    replica_of: HashMap<u64, usize>,
    out: SessionOutcome,
}

impl Session<'_> {
    async fn run(&mut self) -> Result<(), Stop> {
        let versions = self.cfg.versions.clone();
        self.connect(Role::Main, None, versions, None).await?;
        let plan = self.plan;
        for turn in &plan.turns {
            self.settle().await?;
            self.message().await?;
            let mut during = turn.during.clone();
            self.play_run(&mut during).await?;
            for after in &turn.after {
                self.after(after).await?;
            }
        }
        self.settle().await
    }

    // ------------------------------------------------------------------ plumbing

    fn step_deadline(&self) -> Instant {
        (Instant::now() + self.cfg.scaled(Duration::from_secs(10))).min(self.deadline)
    }

    fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}{}", self.next_id)
    }

    fn record(&mut self, record: WireRecord) {
        let at = self.started.elapsed().as_millis() as u64;
        // On a shared cluster each record names its connection's replica, as the driver's do (so
        // `check-log` runs the cluster checks too).
        let replica = self.replica_of.get(&record.conn).and_then(|k| u32::try_from(*k).ok());
        self.log.write(&record.at(at).on_replica(replica));
    }

    fn collect(&mut self) {
        for f in self.monitor.take_findings() {
            self.out.findings.push(SoakFinding {
                check: f.check.id.to_owned(),
                requirement: Some(f.requirement.to_string()),
                message: f.message,
                frame: f.frame,
                conn: f.conn,
                level: f.check.level,
            });
        }
    }

    /// A wait that passed its deadline: a `soak-stall` finding, or, when the runner itself was
    /// stalled for [`HARNESS_STALL`] or more during the session (its own load or the machine's),
    /// a harness error: its deadlines did not measure the backend, as `run` says of its scenarios.
    fn stall(&mut self, conn: u64, message: String) -> Stop {
        let stalled = self.stalls.stalled_between(self.started, Instant::now());
        if stalled < HARNESS_STALL {
            return self.soak_finding("soak-stall", None, conn, message);
        }
        self.out.harness.get_or_insert(format!(
            "{message}, but the runner itself was stalled for {} ms during the session (its own load or the \
             machine's), so its deadlines did not measure the backend; rerun with fewer --sessions or a larger \
             --timeout-scale",
            stalled.as_millis()
        ));
        Stop
    }

    /// A finding of the soak itself (a stall, an unexpected refusal or close).
    fn soak_finding(&mut self, check: &str, requirement: Option<&str>, conn: u64, message: String) -> Stop {
        self.out.findings.push(SoakFinding {
            check: check.to_owned(),
            requirement: requirement.map(str::to_owned),
            message,
            frame: None,
            conn,
            level: Level::Must,
        });
        Stop
    }

    fn main(&self) -> Option<u64> {
        self.tabs.iter().find(|t| t.role == Role::Main).map(|t| t.id)
    }

    fn main_state(&self) -> Option<&UiState> {
        let main = self.main()?;
        if self.monitor.awaiting_state(main) {
            return None;
        }
        self.monitor.state(main)
    }

    fn in_force(&self, conn: u64, feature: Capability) -> bool {
        self.monitor.features(conn).contains(&feature)
    }

    fn offers(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    async fn send(&mut self, conn: u64, frame: Value) -> Result<(), Stop> {
        let deadline = self.step_deadline();
        self.record(WireRecord::frame(conn, true, &frame));
        self.monitor.client_frame(conn, &frame);
        self.collect();
        let Some(tab) = self.tabs.iter_mut().find(|t| t.id == conn) else { return Err(Stop) };
        let (placed, role) = (tab.placed, tab.role);
        if let Err(e) = tab.ws.send_text(frame.to_string(), deadline).await {
            if self.backend.lost_to_kill(placed) {
                // The replica was killed under the connection: the frame is lost with it, and
                // the session resumes elsewhere (the request is looked for in the state then).
                self.cut_by_kill(conn, role);
                return Ok(());
            }
            return Err(self.soak_finding("soak-send", None, conn, format!("cannot send a frame: {e}")));
        }
        Ok(())
    }

    /// Reads one frame from any tab that reads (or waits until `until`).
    async fn pump(&mut self, until: Instant) -> Result<(), Stop> {
        let now = Instant::now();
        let mut wake = until;
        for t in &mut self.tabs {
            match t.paused_until {
                Some(p) if p <= now => t.paused_until = None,
                Some(p) => wake = wake.min(p),
                None => {}
            }
        }
        let reading: Vec<_> = self
            .tabs
            .iter_mut()
            .filter(|t| t.paused_until.is_none() && !t.ws.is_closed())
            .map(|t| {
                let id = t.id;
                let ws = &mut t.ws;
                Box::pin(async move { (id, ws.recv(wake).await) })
            })
            .collect();
        if reading.is_empty() {
            tokio::time::sleep_until(wake).await;
            return Ok(());
        }
        let ((id, incoming), _, _) = select_all(reading).await;
        match incoming {
            Some(incoming) => {
                let tab = self.tabs.iter().find(|t| t.id == id);
                let (role, placed) = (tab.map(|t| t.role), tab.and_then(|t| t.placed));
                self.received(id, role, placed, incoming)
            }
            None => Ok(()),
        }
    }

    fn received(
        &mut self,
        id: u64,
        role: Option<Role>,
        placed: Option<Placed>,
        incoming: Incoming,
    ) -> Result<(), Stop> {
        match incoming {
            Incoming::Text(text) => {
                let received = self.monitor.server_text(id, &text);
                match &received.value {
                    Some(v) => self.record(WireRecord::frame(id, false, v)),
                    None => self.record(WireRecord::text(id, false, &text)),
                }
                self.collect();
                if let Some(v) = received.value {
                    return self.frame(id, role, &v);
                }
                Ok(())
            }
            Incoming::Binary(n) => {
                self.record(WireRecord::binary(id, false, n));
                self.monitor.server_binary(id, n);
                self.collect();
                Ok(())
            }
            Incoming::Pong(_) => Ok(()),
            // The harness killed the replica under the connection (no close frame: a killed process
            // sends none): it ends as the client's drop.
            Incoming::Closed { code: None, .. } | Incoming::Broken(_) if self.backend.lost_to_kill(placed) => {
                self.cut_by_kill(id, role.unwrap_or(Role::Watcher));
                Ok(())
            }
            Incoming::Closed { code, .. } => self.closed(id, role, code),
            Incoming::Broken(_) => self.closed(id, role, None),
        }
    }

    fn closed(&mut self, id: u64, role: Option<Role>, code: Option<u16>) -> Result<(), Stop> {
        self.record(WireRecord::close(id, false, code));
        self.monitor.server_close(id, code);
        self.collect();
        self.tabs.retain(|t| t.id != id);
        match role {
            Some(Role::Main) => {
                let code = code.map_or("no close frame".to_owned(), |c| format!("code {c}"));
                Err(self.soak_finding(
                    "soak-unexpected-close",
                    None,
                    id,
                    format!(
                        "the server closed the main connection ({code}) although the client sent nothing it refuses"
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    fn frame(&mut self, id: u64, role: Option<Role>, v: &Value) -> Result<(), Stop> {
        let kind = v.get("type").and_then(Value::as_str).unwrap_or_default();
        let in_reply_to = v.get("in_reply_to").and_then(Value::as_str);
        if role == Some(Role::Main) {
            self.frames_in_turn = self.frames_in_turn.saturating_add(1);
            if v.get("seq").is_some() && !kind.starts_with("ui_state_") {
                self.out.events += 1;
            }
        }
        match kind {
            "session.welcome" => {
                if let Some(caps) = v.get("capabilities").and_then(Value::as_array) {
                    self.capabilities = caps.iter().filter_map(Value::as_str).map(str::to_owned).collect();
                }
            }
            "error" => {
                let code = v.get("code").and_then(Value::as_str).unwrap_or_default();
                let expected = match in_reply_to {
                    Some(r) => self.allowed.get(r).is_some_and(|codes| codes.contains(&code)),
                    None => role == Some(Role::Doomed) && code == "session_taken_over",
                };
                if !expected {
                    let frame = self.monitor.excerpt(v);
                    let mut f = SoakFinding {
                        check: "soak-unexpected-refusal".into(),
                        requirement: None,
                        message: format!(
                            "error {code} in reply to {}: the client sent it where the state it held says a correct server accepts it",
                            in_reply_to.unwrap_or("nothing")
                        ),
                        frame: Some(frame),
                        conn: id,
                        level: Level::Must,
                    };
                    if role == Some(Role::Doomed) {
                        f.message = format!("error {code} on a connection taken over");
                    }
                    self.out.findings.push(f);
                    return Err(Stop);
                }
            }
            "chat.user_message_accepted"
                if role == Some(Role::Main) && in_reply_to.is_some() && in_reply_to == self.awaiting.as_deref() =>
            {
                self.invocation = v.get("invocation_id").and_then(Value::as_str).map(str::to_owned);
                self.run_started();
            }
            "chat.run_complete" if role == Some(Role::Main) => return self.run_complete(id, v),
            _ => {}
        }
        if role == Some(Role::Main) && in_reply_to.is_some() && in_reply_to == self.awaiting.as_deref() {
            self.awaiting = None;
        }
        Ok(())
    }

    /// Pumps until `done` holds, or fails the session with a stall at the deadline (later after
    /// a kill: the recovery bound plus a margin). A main connection a kill cut is resumed first.
    async fn wait_until(&mut self, what: &str, done: impl Fn(&Self) -> bool) -> Result<(), Stop> {
        let deadline = self.step_deadline();
        loop {
            if self.main_lost.is_some() {
                self.recover().await?;
            }
            if done(self) {
                return Ok(());
            }
            let deadline = self.extended(deadline);
            if Instant::now() >= deadline {
                let main = self.main().unwrap_or(0);
                return Err(self.stall(main, format!("no {what} before the deadline")));
            }
            self.pump(deadline).await?;
        }
    }

    /// `deadline`, later where a kill under the sessions asks for time to recover; never past the
    /// session's own deadline.
    fn extended(&self, deadline: Instant) -> Instant {
        self.backend.extended(deadline, self.deadline)
    }

    /// Waits until the main connection holds a state, owes no update and no answer is due.
    async fn settle(&mut self) -> Result<(), Stop> {
        self.wait_until("settled state (run not in progress, answers in)", |s| {
            s.awaiting.is_none()
                && s.main().is_some_and(|m| !s.monitor.busy(m))
                && s.main_state().is_some_and(|st| st.run.status != RunStatus::Running)
        })
        .await
    }

    // ------------------------------------------------------------------ connections
}
