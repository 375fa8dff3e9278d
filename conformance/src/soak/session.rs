//! One soak session: the plan of [`super::plan`] carried out against a backend over WebSocket, every
//! frame both ways fed to the session [`Monitor`] (the same always-on checks and oracle as the
//! scenarios) and written to the session's wire log, which `check-log` reads.
//!
//! The client acts only where the state it holds says a correct server accepts the request (or the
//! plan expects the refusal, as `run_not_active` for a cancel racing the run's end); any other
//! `error` is a finding of its own. Every read has a deadline; nothing the server sends panics.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{DisplayItem, FrameValidator, RunStatus, ToolCallStatus, UiState};
use futures_util::future::select_all;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::plan::{After, Answer, Cursor, Interrupt, SessionPlan};
use super::{Backend, SoakConfig, SoakFinding};
use crate::conn::{Incoming, WsConn};
use crate::monitor::Monitor;
use crate::scenario::Level;
use crate::wirelog::{WireLog, WireRecord};

/// What one session produced.
#[derive(Debug, Default)]
pub struct SessionOutcome {
    /// Findings, monitor's and the soak's own, in the order seen.
    pub findings: Vec<SoakFinding>,
    /// Events (server frames with a `seq` that are not state frames) on the main connection.
    pub events: u64,
    /// User message to its `chat.run_complete`, in microseconds.
    pub latencies_us: Vec<u64>,
    /// `chat.cancel`s sent while a second tab read along (it sees the run end without the answer).
    pub cancels_beside_tab: u64,
    /// The session could not run for a reason of the harness (the backend could not be started
    /// again, the wire log could not be written).
    pub harness: Option<String>,
}

impl SessionOutcome {
    /// Whether a must-level finding failed the session.
    pub fn failed(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::Must)
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
) -> SessionOutcome {
    let started = Instant::now();
    let mut s = Session {
        plan,
        backend,
        cfg,
        monitor: Monitor::new(validator),
        log: WireLog::create(&log_path),
        started,
        deadline: started + cfg.scaled(Duration::from_secs(90)),
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
        self.log.write(&record.at(at));
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
        if let Err(e) = tab.ws.send_text(frame.to_string(), deadline).await {
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
                let role = self.tabs.iter().find(|t| t.id == id).map(|t| t.role);
                self.received(id, role, incoming)
            }
            None => Ok(()),
        }
    }

    fn received(&mut self, id: u64, role: Option<Role>, incoming: Incoming) -> Result<(), Stop> {
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
            }
            "chat.run_complete" if role == Some(Role::Main) => {
                let inv = v.get("invocation_id").and_then(Value::as_str);
                if inv.is_some() && inv == self.invocation.as_deref() {
                    if let Some(at) = self.sent_at.take() {
                        self.out.latencies_us.push(at.elapsed().as_micros() as u64);
                    }
                }
            }
            _ => {}
        }
        if role == Some(Role::Main) && in_reply_to.is_some() && in_reply_to == self.awaiting.as_deref() {
            self.awaiting = None;
        }
        Ok(())
    }

    /// Pumps until `done` holds, or fails the session with a stall at the deadline.
    async fn wait_until(&mut self, what: &str, done: impl Fn(&Self) -> bool) -> Result<(), Stop> {
        let deadline = self.step_deadline();
        while !done(self) {
            if Instant::now() >= deadline {
                let main = self.main().unwrap_or(0);
                return Err(self.soak_finding("soak-stall", None, main, format!("no {what} before the deadline")));
            }
            self.pump(deadline).await?;
        }
        Ok(())
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

    /// Opens a tab; a resume names `resume`'s seq. Waits for its welcome and state frame.
    async fn connect(
        &mut self,
        role: Role,
        resume: Option<u64>,
        versions: Vec<String>,
        features: Option<Vec<String>>,
    ) -> Result<u64, Stop> {
        let deadline = self.step_deadline();
        let url = self.backend.url();
        let ws = loop {
            match WsConn::open(&url, self.cfg.max_message_bytes, deadline).await {
                Ok(ws) => break ws,
                Err(e) if Instant::now() + Duration::from_millis(100) >= deadline => {
                    return Err(self.soak_finding("soak-connect", None, self.next_conn, format!("{e}")));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        let id = self.next_conn;
        self.next_conn += 1;
        self.monitor.open(id);
        self.tabs.push(Tab { ws, id, role, paused_until: None });
        let hello_id = self.id("h");
        let mut hello = json!({
            "type": "session.hello",
            "id": hello_id,
            "versions": versions,
            "client": concat!("chatwire-conformance-soak/", env!("CARGO_PKG_VERSION")),
        });
        if let Some(features) = features {
            hello["features"] = json!(features);
        }
        match resume {
            None => hello["script"] = self.plan.script.clone(),
            Some(last_seq) => {
                let session = self.monitor.current_session().unwrap_or_default().to_owned();
                let token = self.monitor.resume_token(&session).unwrap_or_default().to_owned();
                hello["resume"] = json!({"session_id": session, "resume_token": token, "last_seq": last_seq});
            }
        }
        self.send(id, hello).await?;
        self.wait_until("welcome and state frame after a hello", |s| {
            s.monitor.state(id).is_some() && !s.monitor.awaiting_state(id)
        })
        .await?;
        Ok(id)
    }

    /// Closes (1000) or cuts a tab.
    async fn drop_tab(&mut self, id: u64, cut: bool) {
        let Some(i) = self.tabs.iter().position(|t| t.id == id) else { return };
        let mut tab = self.tabs.remove(i);
        if cut {
            tab.ws.abandon();
            self.record(WireRecord::close(id, true, None));
        } else {
            let deadline = self.step_deadline();
            let late = tab.ws.close(deadline).await;
            for incoming in late {
                // A late frame cannot stop the session: the tab is going anyway.
                let _ = self.received(id, Some(tab.role), incoming);
            }
            self.record(WireRecord::close(id, true, Some(1000)));
        }
        self.monitor.client_close(id);
        self.collect();
    }

    /// The seq a resume from `conn` names.
    fn cursor(&self, conn: Option<u64>, cursor: Cursor) -> u64 {
        let Some(conn) = conn else { return 0 };
        match cursor {
            Cursor::Zero => 0,
            Cursor::State => self.monitor.state_seq(conn).unwrap_or(0),
            Cursor::Highest => self.monitor.last_seq(conn).unwrap_or(0),
        }
    }

    /// Leaves the main connection (closed or cut) and resumes on a new one.
    async fn resume_main(&mut self, cut: bool, cursor: Cursor) -> Result<(), Stop> {
        let old = self.main();
        if let Some(old) = old {
            self.drop_tab(old, cut).await;
        }
        let last_seq = self.cursor(old, cursor);
        self.connect(Role::Main, Some(last_seq), self.cfg.versions.clone(), None).await?;
        self.after_resume();
        Ok(())
    }

    /// After a resume: an answer the old connection did not get is looked for in the state.
    fn after_resume(&mut self) {
        let Some(awaiting) = self.awaiting.take() else { return };
        if let Some(state) = self.main_state() {
            let accepted = state.items.iter().find_map(|item| match item {
                DisplayItem::UserMessage(m) if m.client_message_id.as_str() == awaiting => {
                    Some(m.invocation_id.to_string())
                }
                _ => None,
            });
            if accepted.is_some() {
                self.invocation = accepted;
            }
        }
    }

    /// A new connection resumes without `multi_attach`: every other tab is taken over.
    async fn takeover(&mut self) -> Result<(), Stop> {
        let Some(old) = self.main() else { return Ok(()) };
        let last_seq = self.cursor(Some(old), Cursor::State);
        for t in &mut self.tabs {
            t.role = Role::Doomed;
        }
        let v1_1 = chatwire_schema::ProtocolVersion { major: 1, minor: 1 };
        let versions: Vec<String> = self
            .cfg
            .versions
            .iter()
            .filter(|v| chatwire_schema::ProtocolVersion::parse(v).is_ok_and(|v| v >= v1_1))
            .cloned()
            .collect();
        let (versions, features) = if versions.is_empty() {
            (self.cfg.versions.clone(), None)
        } else {
            let features = Capability::FEATURES
                .iter()
                .filter(|f| **f != Capability::MultiAttach.as_str())
                .map(|f| (*f).to_owned());
            (versions, Some(features.collect()))
        };
        self.connect(Role::Main, Some(last_seq), versions, features).await?;
        self.after_resume();
        self.wait_until("close of every connection taken over", |s| s.tabs.iter().all(|t| t.role != Role::Doomed)).await
    }

    /// A second tab attaches and reads along (where `multi_attach` is in force).
    async fn attach(&mut self) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Ok(()) };
        if !self.in_force(main, Capability::MultiAttach) || self.tabs.iter().any(|t| t.role == Role::Watcher) {
            return Ok(());
        }
        self.connect(Role::Watcher, Some(0), self.cfg.versions.clone(), None).await.map(|_| ())
    }

    /// Kills the backend (SIGKILL) and starts it again, then resumes. The client drops its
    /// connections first, as the scenarios' restart step does: whatever was in flight is lost, and
    /// the end of the connections is the client's, not an answer of the server's.
    async fn restart(&mut self, cursor: Cursor) -> Result<(), Stop> {
        if !self.backend.can_restart() {
            return Ok(());
        }
        let old = self.main();
        let last_seq = self.cursor(old, cursor);
        for id in self.tabs.iter().map(|t| t.id).collect::<Vec<_>>() {
            self.drop_tab(id, true).await;
        }
        if let Err(e) = self.backend.restart().await {
            self.out.harness = Some(format!("the backend did not come back after kill -9: {e}"));
            return Err(Stop);
        }
        self.connect(Role::Main, Some(last_seq), self.cfg.versions.clone(), None).await?;
        self.after_resume();
        Ok(())
    }

    // ------------------------------------------------------------------ turns

    async fn message(&mut self) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Err(Stop) };
        let id = self.id("m");
        self.awaiting = Some(id.clone());
        self.invocation = None;
        self.cancelled = false;
        self.frames_in_turn = 0;
        self.sent_at = Some(Instant::now());
        self.send(main, json!({"type": "chat.user_message", "id": id, "text": format!("message {id}")})).await
    }

    /// The pending call to answer next: the first pending one the plan answers.
    fn to_answer(&self) -> Option<(String, Answer)> {
        let state = self.main_state()?;
        if self.cancelled || state.run.status != RunStatus::AwaitingInput {
            return None;
        }
        state.items.iter().find_map(|item| match item {
            DisplayItem::ToolCall(c)
                if c.awaiting_response
                    && c.status == ToolCallStatus::Pending
                    && !self.answered.contains(c.id.as_str()) =>
            {
                let key = c.payload.get("key").and_then(Value::as_str).unwrap_or_default();
                match self.plan.answers.get(key) {
                    Some(Answer::Leave) => None,
                    Some(answer) => Some((c.id.to_string(), answer.clone())),
                    None => Some((c.id.to_string(), Answer::Dismiss)),
                }
            }
            _ => None,
        })
    }

    /// Whether the run of the latest turn is over for the session: ended, or waiting only for
    /// answers the plan leaves out.
    fn run_over(&self) -> bool {
        let Some(main) = self.main() else { return false };
        if self.awaiting.is_some() || self.monitor.busy(main) {
            return false;
        }
        let Some(state) = self.main_state() else { return false };
        if self.invocation.is_some()
            && state.run.invocation_id.as_ref().map(|i| i.as_str()) != self.invocation.as_deref()
        {
            return false;
        }
        match state.run.status {
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled => true,
            RunStatus::AwaitingInput => self.to_answer().is_none(),
            RunStatus::Idle | RunStatus::Running => false,
        }
    }

    /// Drives the latest turn's run to its end: answers awaited calls, and carries out `during`
    /// once enough of the turn's frames arrived.
    async fn play_run(&mut self, during: &mut Option<super::plan::During>) -> Result<(), Stop> {
        let deadline = self.step_deadline();
        loop {
            if self.run_over() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let main = self.main().unwrap_or(0);
                return Err(self.soak_finding(
                    "soak-stall",
                    None,
                    main,
                    "the turn's run did not end before the deadline".into(),
                ));
            }
            let active = self.awaiting.is_none()
                && self
                    .main_state()
                    .is_some_and(|s| matches!(s.run.status, RunStatus::Running | RunStatus::AwaitingInput));
            if active && during.as_ref().is_some_and(|d| self.frames_in_turn >= d.at_frame) {
                if let Some(d) = during.take() {
                    self.interrupt(d.action).await?;
                }
                continue;
            }
            if self.awaiting.is_none() {
                if let Some((call, answer)) = self.to_answer() {
                    self.respond(call, answer).await?;
                    continue;
                }
            }
            self.pump(deadline).await?;
        }
    }

    async fn respond(&mut self, call: String, answer: Answer) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Err(Stop) };
        let id = self.id("r");
        let outcome = match answer {
            Answer::Submit(value) => json!({"action": "submit", "value": value}),
            Answer::Dismiss | Answer::Leave => json!({"action": "dismiss", "reason": "not now"}),
        };
        self.answered.insert(call.clone());
        self.awaiting = Some(id.clone());
        self.send(main, json!({"type": "chat.tool_call_response", "id": id, "tool_call_id": call, "outcome": outcome}))
            .await
    }

    async fn interrupt(&mut self, action: Interrupt) -> Result<(), Stop> {
        match action {
            Interrupt::Cut(cursor) => self.resume_main(true, cursor).await,
            Interrupt::Reconnect(cursor) => self.resume_main(false, cursor).await,
            Interrupt::Pause(ms) => {
                let until = Instant::now() + Duration::from_millis(ms);
                if let Some(t) = self.tabs.iter_mut().find(|t| t.role == Role::Main) {
                    t.paused_until = Some(until);
                }
                Ok(())
            }
            Interrupt::Cancel => {
                let (Some(main), Some(invocation)) = (self.main(), self.invocation.clone()) else { return Ok(()) };
                // Also while a second tab reads along: it gets no `chat.cancel_accepted`
                // (ATTACH-005) and sees the run end through its events alone, which the monitor
                // judges as the end of a cancel another tab asked for.
                if !self.offers("cancel") {
                    return Ok(());
                }
                if self.tabs.iter().any(|t| t.role == Role::Watcher) {
                    self.out.cancels_beside_tab += 1;
                }
                let id = self.id("x");
                // The run may end before the server reads the cancel (CANCEL-007).
                self.allowed.insert(id.clone(), &["run_not_active"]);
                self.awaiting = Some(id.clone());
                self.cancelled = true;
                self.send(main, json!({"type": "chat.cancel", "id": id, "invocation_id": invocation})).await
            }
            Interrupt::Takeover => self.takeover().await,
            Interrupt::Restart(cursor) => self.restart(cursor).await,
            Interrupt::Attach => self.attach().await,
        }
    }

    async fn after(&mut self, after: &After) -> Result<(), Stop> {
        self.settle().await?;
        match after {
            After::Retry(k) => self.retry(*k).await,
            After::Rewind(back) => self.rewind(*back).await,
            After::Resume { cut, cursor } => self.resume_main(*cut, *cursor).await,
            After::Takeover => self.takeover().await,
            After::Restart(cursor) => self.restart(*cursor).await,
        }
    }

    async fn retry(&mut self, k: u32) -> Result<(), Stop> {
        if !self.offers("retry") {
            return Ok(());
        }
        let Some(main) = self.main() else { return Err(Stop) };
        let Some(state) = self.main_state() else { return Ok(()) };
        let Some(first) = state.items.iter().rposition(|i| matches!(i, DisplayItem::UserMessage(_))) else {
            return Ok(());
        };
        let turn = &state.items[first..];
        let item = &turn[k as usize % turn.len()];
        let after_item = item.id().to_string();
        let invocation = match &state.items[first] {
            DisplayItem::UserMessage(m) => m.invocation_id.to_string(),
            _ => return Ok(()),
        };
        if crate::monitor::retry::due_refusal(state, &after_item, true).is_some() {
            return Ok(());
        }
        let id = self.id("y");
        self.awaiting = Some(id.clone());
        self.invocation = Some(invocation);
        self.cancelled = false;
        self.frames_in_turn = 0;
        self.send(main, json!({"type": "chat.retry", "id": id, "after_item_id": after_item})).await?;
        self.play_run(&mut None).await
    }

    async fn rewind(&mut self, back: u32) -> Result<(), Stop> {
        if !self.offers("rewind") {
            return Ok(());
        }
        let Some(main) = self.main() else { return Err(Stop) };
        let Some(state) = self.main_state() else { return Ok(()) };
        let invocations: Vec<String> = state
            .items
            .iter()
            .filter_map(|i| match i {
                DisplayItem::UserMessage(m) => Some(m.invocation_id.to_string()),
                _ => None,
            })
            .collect();
        let Some(before) = invocations.len().checked_sub(1 + back as usize).map(|i| invocations[i].clone()) else {
            return Ok(());
        };
        let id = self.id("w");
        self.awaiting = Some(id.clone());
        self.send(main, json!({"type": "chat.rewind", "id": id, "before_invocation_id": before})).await?;
        self.settle().await
    }

    /// Closes every tab, taking in the frames still in flight.
    async fn finish(&mut self) {
        for id in self.tabs.iter().map(|t| t.id).collect::<Vec<_>>() {
            self.drop_tab(id, false).await;
        }
    }
}
