//! Connecting, sending and reading: every frame both ways goes through the monitor and the logs.

use std::collections::HashMap;

use chatwire_schema::schema_gen::Direction;
use chatwire_schema::ServerFrame;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::describe::transcript_detail;
use super::expect::is_state_change;
use super::outcome::{unexpected, Next, StepError};
use super::{Conn, Driver, Handshake, MAX_FRAMES_PER_SCENARIO, RETRY_PAUSE};
use crate::conn::{ConnectError, Incoming, WsConn};
use crate::pattern::{self, substitute};
use crate::report::Verdict;
use crate::scenario::{ResumeAnswer, DEFAULT_CONN};
use crate::wirelog::WireRecord;

impl Driver<'_> {
    pub(super) fn conn_mut(&mut self, name: &str) -> Result<&mut Conn, StepError> {
        self.conns.get_mut(name).ok_or_else(|| StepError::fail(format!("connection {name} is no longer open")))
    }

    pub(super) fn substitute(&self, conn: &str, template: &Value) -> Result<Value, StepError> {
        let mut builtins: HashMap<&str, Value> = HashMap::new();
        if let Some(s) = self.monitor.current_session() {
            builtins.insert("session_id", Value::String(s.to_owned()));
            if let Some(seq) = self.monitor.max_seq(s) {
                builtins.insert("last_seq", json!(seq));
            }
            if let Some(token) = self.monitor.resume_token(s) {
                builtins.insert("resume_token", Value::String(token.to_owned()));
            }
        }
        if let Some(id) = self.conns.get(conn).and_then(|c| c.last_sent_id.clone()) {
            builtins.insert("last_sent_id", Value::String(id));
        }
        if let Some(cursor) = self.conns.get(conn).and_then(|c| self.monitor.window_cursor(c.id)) {
            builtins.insert("cursor", Value::String(cursor));
        }
        let lookup = |name: &str| builtins.get(name).cloned();
        substitute(template, &self.bindings, &lookup).map_err(|e| StepError::harness(format!("scenario bug: {e}")))
    }

    pub(super) async fn send_value(&mut self, conn: &str, frame: Value, typed: bool) -> Result<(), StepError> {
        if typed {
            if let Err(e) = self.validator.check(Direction::ClientToServer, &frame) {
                return Err(StepError::harness(format!("scenario bug: the frame to send is invalid: {e}")));
            }
        }
        let wire = frame.get("type").and_then(Value::as_str).unwrap_or("(no type)").to_owned();
        let id = frame.get("id").and_then(Value::as_str).map(str::to_owned);
        let text = frame.to_string();
        self.transcript(format!("{conn} > {wire}"));
        self.log(format!("{conn} > {}", pattern::truncate(&text, 200)));
        let deadline = self.step_deadline(None);
        let c = self.conn_mut(conn)?;
        c.last_sent_id = id;
        let conn_id = c.id;
        let sent = c.ws.send_text(text, deadline).await;
        self.wire_frame(conn_id, true, &frame);
        self.monitor.client_frame(conn_id, &frame);
        sent.map_err(|e| self.cannot_send(&e))
    }

    /// A send that failed: the connection is gone. What the server did to it (its close code, and
    /// the requirement that breaks) was reported when the close was read; this names the close.
    pub(super) fn cannot_send(&self, error: &str) -> StepError {
        StepError::fail(format!("cannot send: the connection is no longer usable ({error})"))
    }

    pub(super) async fn connect(
        &mut self,
        conn: &str,
        handshake: Handshake,
        versions: Vec<String>,
        features: Option<Vec<String>>,
        resume: Option<(Value, Option<ResumeAnswer>)>,
    ) -> Result<(), StepError> {
        let Handshake { hello, subprotocol, with_script, own_offer, window } = handshake;
        // A hello with a window offers no version below 1.2, like one with `features` (WINDOW-001).
        let versions = match window {
            Some(_) => {
                let windowed: Vec<String> = versions
                    .into_iter()
                    .filter(|v| chatwire_schema::ProtocolVersion::parse(v).is_ok_and(|v| v.major > 1 || v.minor >= 2))
                    .collect();
                if windowed.is_empty() {
                    return Err(StepError::new(Verdict::NotApplicable, "a window needs an offer of 1.2 or later"));
                }
                windowed
            }
            None => versions,
        };
        let deadline = self.step_deadline(None);
        let replica = self.place(conn);
        let url = self.endpoint.url(replica);
        let needs = self.scenario.needs_version();
        // A connection whose offer cannot put the scenario's features in force (a 1.0 tab that a
        // 1.2 tab attaches to later) is not where the scenario's applicability is decided.
        let offer_max = versions.iter().filter_map(|v| chatwire_schema::ProtocolVersion::parse(v).ok()).max();
        let decides =
            !own_offer || self.scenario.features_since().is_none_or(|since| offer_max.is_some_and(|m| m >= since));
        if !self.capabilities_checked && decides && needs.minor > 0 {
            // Its script or frames use members of a later minor, which a server speaking only an
            // older one refuses as invalid: find out first, on a connection of its own, what this
            // offer negotiates (also before a connection that sends its own hello).
            match self.probe_version(&url, &versions, deadline).await {
                Some(v) if v >= needs => {}
                got => {
                    let got = got.map_or("no version".to_owned(), |v| v.to_string());
                    return Err(StepError::new(
                        Verdict::NotApplicable,
                        format!("the scenario needs {needs} (its script or frames), but the offer negotiates {got}"),
                    ));
                }
            }
        }
        let ws = self.open_ws(&url, subprotocol, deadline).await?;
        let opened = if subprotocol { "open" } else { "open (no subprotocol offered)" };
        self.transcript(format!("{conn} {opened}"));
        self.log(format!("{conn} {opened} {url}{}", self.replica_note(replica)));
        let id = self.next_conn;
        self.next_conn += 1;
        if self.endpoint.replicas() > 1 {
            self.conn_replicas.insert(id, replica);
        }
        self.monitor.open(id);
        let conn_state = Conn { ws, id, last_sent_id: None, bytes_in: 0, last_read: Instant::now(), replica };
        self.conns.insert(conn.to_owned(), conn_state);
        self.last_ids.insert(conn.to_owned(), id);
        if !hello {
            return Ok(());
        }
        let hello_id = self.next_id("h");
        let mut frame = json!({
            "type": "session.hello",
            "id": hello_id,
            "versions": versions,
            "client": concat!("chatwire-conformance/", env!("CARGO_PKG_VERSION")),
        });
        if with_script {
            if let Some(script) = &self.scenario.script {
                frame["script"] = serde_json::to_value(script).unwrap_or(Value::Null);
            }
        }
        if let Some(features) = features {
            frame["features"] = json!(features);
        }
        if let Some(window) = window {
            frame["window"] = json!(window);
        }
        let resumed = resume.is_some();
        let answer = resume.as_ref().and_then(|(_, a)| *a);
        if let Some((resume, _)) = resume {
            frame["resume"] = resume;
        }
        self.send_value(conn, frame, true).await?;
        let mut welcome = json!({"type": "session.welcome", "in_reply_to": hello_id, "resumed": resumed});
        if resumed {
            welcome["session_id"] = Value::String(self.monitor.current_session().unwrap_or_default().to_owned());
        }
        self.expect_one(conn, &welcome, deadline, false).await?;
        if resumed {
            self.expect_resume_state(conn, answer, deadline).await?;
        } else {
            self.expect_one(conn, &json!({"type": "ui_state_snapshot"}), deadline, false).await?;
        }
        if !self.capabilities_checked && decides {
            self.capabilities_checked = true;
            let offered: Vec<String> = self
                .bindings
                .get("capabilities")
                .and_then(Value::as_array)
                .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect());
            let missing: Vec<String> =
                self.scenario.needed_capabilities().into_iter().filter(|c| !offered.contains(c)).collect();
            if !missing.is_empty() {
                return Err(StepError::new(
                    Verdict::NotApplicable,
                    format!("the server does not offer {} (welcome lists: {})", missing.join(", "), offered.join(", ")),
                ));
            }
            let id = self.conns.get(conn).map(|c| c.id).unwrap_or_default();
            let in_force: Vec<&str> = self.monitor.features(id).iter().map(|f| f.as_str()).collect();
            let absent: Vec<&str> =
                self.scenario.features.iter().map(String::as_str).filter(|f| !in_force.contains(f)).collect();
            if !absent.is_empty() {
                let version = self.monitor.version(id).map_or("no version".to_owned(), |v| v.to_string());
                return Err(StepError::new(
                    Verdict::NotApplicable,
                    format!(
                        "the feature(s) {} are not in force (negotiated {version}; in force: [{}])",
                        absent.join(", "),
                        in_force.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The version a hello without a script offering `versions` negotiates, on a connection of
    /// its own that nothing checks and that is closed at once; `None` without a welcome.
    async fn probe_version(
        &mut self,
        url: &str,
        versions: &[String],
        deadline: Instant,
    ) -> Option<chatwire_schema::ProtocolVersion> {
        let mut ws = WsConn::open_with(url, self.cfg.max_message_bytes, deadline, true).await.ok()?;
        let hello = json!({"type": "session.hello", "id": "probe", "versions": versions,
            "client": concat!("chatwire-conformance/", env!("CARGO_PKG_VERSION"))});
        let mut version = None;
        if ws.send_text(hello.to_string(), deadline).await.is_ok() {
            while let Some(incoming) = ws.recv(deadline).await {
                let Incoming::Text(text) = incoming else { continue };
                let frame: Option<Value> = serde_json::from_str(&text).ok();
                version = frame
                    .filter(|f| f.get("type").and_then(Value::as_str) == Some("session.welcome"))
                    .and_then(|f| f.get("version")?.as_str().map(str::to_owned))
                    .and_then(|v| chatwire_schema::ProtocolVersion::parse(&v).ok());
                break;
            }
        }
        ws.close(deadline).await;
        self.log(format!("probe: the offer [{}] negotiates {version:?}", versions.join(", ")));
        version
    }

    /// Opens a WebSocket. Right after a restart the backend may still be coming up: a refused or
    /// reset connection is retried until the backend-start deadline, then reported as a harness
    /// error (the backend did not come back), never as the scenario's failure.
    pub(super) async fn open_ws(
        &mut self,
        url: &str,
        subprotocol: bool,
        deadline: Instant,
    ) -> Result<WsConn, StepError> {
        // A handshake the server gets wrong breaks the rule for what was offered.
        let requirement = if subprotocol { "TRANSPORT-003" } else { "TRANSPORT-004" };
        let retry_until = self.restarted.then(|| Instant::now() + self.cfg.scaled(self.cfg.start_timeout));
        loop {
            let attempt_deadline = retry_until.map_or(deadline, |r| deadline.max(r));
            let result = WsConn::open_with(url, self.cfg.max_message_bytes, attempt_deadline, subprotocol).await;
            match result {
                Ok(ws) => {
                    self.restarted = false;
                    return Ok(ws);
                }
                Err(ConnectError::Subprotocol { .. } | ConnectError::Refused { .. }) => {
                    let e = result.err().map(|e| e.to_string()).unwrap_or_default();
                    return Err(StepError::fail(e).with_requirement(requirement));
                }
                Err(e @ (ConnectError::Failed { .. } | ConnectError::Timeout { .. })) => match retry_until {
                    Some(until) if Instant::now() + RETRY_PAUSE < until => {
                        tokio::time::sleep(RETRY_PAUSE).await;
                    }
                    Some(_) => {
                        return Err(StepError::harness(format!(
                            "the backend did not accept connections within {} s of its restart: {e}",
                            self.cfg.scaled(self.cfg.start_timeout).as_secs()
                        )))
                    }
                    None if matches!(e, ConnectError::Timeout { .. }) => {
                        return Err(StepError::new(Verdict::Timeout, e.to_string()))
                    }
                    None => return Err(StepError::fail(e.to_string())),
                },
                Err(e) => return Err(StepError::harness(e.to_string())),
            }
        }
    }

    // ---------------------------------------------------------------- reading and always-on checks

    /// The next frame on `conn`; pongs are logged and read past (a server may send unsolicited ones).
    pub(super) async fn next(&mut self, conn: &str, deadline: Instant) -> Result<Next, StepError> {
        loop {
            match self.next_or_pong(conn, deadline).await? {
                Next::Pong(_) => continue,
                other => return Ok(other),
            }
        }
    }

    /// The next frame or pong on `conn`. Every read counts against the scenario's frame cap, so a
    /// flood of pongs ends the scenario too.
    pub(super) async fn next_or_pong(&mut self, conn: &str, deadline: Instant) -> Result<Next, StepError> {
        if self.frames >= MAX_FRAMES_PER_SCENARIO {
            return Err(StepError::fail(format!(
                "the server sent more than {MAX_FRAMES_PER_SCENARIO} frames in one scenario (flood)"
            )));
        }
        let c = self.conn_mut(conn)?;
        let Some(incoming) = c.ws.recv(deadline).await else {
            c.last_read = Instant::now();
            return Ok(Next::Deadline);
        };
        c.last_read = Instant::now();
        if let Incoming::Text(text) = &incoming {
            c.bytes_in = c.bytes_in.saturating_add(text.len() as u64);
        }
        let next = self.observe(conn, incoming);
        if self.take_cut() {
            return Err(StepError::cut());
        }
        Ok(next)
    }

    /// Sends a ping and waits for the pong with the same payload (TRANSPORT-010). Pongs with another
    /// payload may be unsolicited heartbeats, so they are noted and the wait goes on; if the right
    /// one never comes, they are the evidence.
    pub(super) async fn ping(&mut self, conn: &str, payload: &str, deadline: Instant) -> Result<(), StepError> {
        self.transcript(format!("{conn} > ping"));
        self.log(format!("{conn} > ping {payload:?}"));
        self.conn_mut(conn)?
            .ws
            .send_ping(payload.as_bytes().to_vec(), deadline)
            .await
            .map_err(|e| StepError::fail(format!("cannot send a ping: {e}")))?;
        let mut other_pongs: Vec<String> = Vec::new();
        loop {
            match self.next_or_pong(conn, deadline).await? {
                Next::Pong(got) if got == payload.as_bytes() => {
                    self.transcript(format!("{conn} < pong"));
                    return Ok(());
                }
                Next::Pong(got) => {
                    if other_pongs.len() < 5 {
                        other_pongs.push(format!("{:?}", String::from_utf8_lossy(&got)));
                    }
                }
                Next::Frame(v) if is_state_change(&v) => {}
                Next::Deadline => {
                    let (verdict, message) = if other_pongs.is_empty() {
                        (Verdict::Timeout, format!("no pong answered the ping {payload:?} before the deadline"))
                    } else {
                        (
                            Verdict::Fail,
                            format!(
                                "the ping carried {payload:?} but the pongs that came back carried {}",
                                other_pongs.join(", ")
                            ),
                        )
                    };
                    return Err(StepError::new(verdict, message).with_requirement("TRANSPORT-010"));
                }
                other => return Err(unexpected(other, &format!("the pong answering the ping {payload:?}"))),
            }
        }
    }

    /// Feeds what arrived on `conn` to the monitor and the logs, and records the monitor's findings.
    pub(super) fn observe(&mut self, conn: &str, incoming: Incoming) -> Next {
        self.frames += 1;
        let Some(id) = self.conns.get(conn).map(|c| c.id) else { return Next::Deadline };
        let next = match incoming {
            Incoming::Text(text) => {
                if let Some(sweep) = self.sweep.as_mut().filter(|s| s.counting && conn == DEFAULT_CONN) {
                    sweep.main_frames += 1;
                    sweep.cut_due |= sweep.cut_after == Some(sweep.main_frames) && !sweep.cut_done;
                }
                self.observe_text(conn, id, text)
            }
            Incoming::Binary(n) => {
                self.transcript(format!("{conn} < binary"));
                self.log(format!("{conn} < binary ({n} bytes)"));
                self.wire_record(WireRecord::binary(id, false, n));
                self.monitor.server_binary(id, n);
                Next::Binary(n)
            }
            Incoming::Closed { code, reason } => {
                let shown = code.map_or("no code".to_owned(), |c| c.to_string());
                self.transcript(format!("{conn} < close {shown}"));
                self.log(format!("{conn} < close {shown} {reason}"));
                self.wire_record(WireRecord::close(id, false, code));
                self.monitor.server_close(id, code);
                self.roots.ended(id, self.step);
                Next::Closed(code, reason)
            }
            Incoming::Pong(payload) => {
                self.log(format!("{conn} < pong {:?}", pattern::truncate(&String::from_utf8_lossy(&payload), 60)));
                Next::Pong(payload)
            }
            Incoming::Broken(message) => {
                self.transcript(format!("{conn} < broken"));
                self.log(format!("{conn} < broken: {message}"));
                self.wire_record(WireRecord::close(id, false, None));
                self.monitor.server_close(id, None);
                self.roots.ended(id, self.step);
                Next::Broken(message)
            }
        };
        self.record_findings();
        next
    }

    pub(super) fn observe_text(&mut self, conn: &str, id: u64, text: String) -> Next {
        let catch_up_position = self.monitor.awaiting_state(id);
        let received = self.monitor.server_text(id, &text);
        let Some(value) = received.value else {
            self.transcript(format!("{conn} < (not json)"));
            self.wire_record(WireRecord::text(id, false, &text));
            self.log_raw(format!("{conn} < "), text.clone());
            return Next::NotJson(text);
        };
        let wire = value.get("type").and_then(Value::as_str).unwrap_or("(no type)").to_owned();
        // The transcript names a state frame by what the client then holds, so that one golden
        // serves every offer: a patch is the update (or, right after a resume's welcome, the
        // snapshot) it stands in for. The wire log keeps the frames as sent.
        let shown = match wire.as_str() {
            "ui_state_patch" if catch_up_position => "ui_state_snapshot",
            "ui_state_patch" => "ui_state_updated",
            other => other,
        };
        self.transcript(format!("{conn} < {shown}{}", transcript_detail(&value)));
        self.wire_frame(id, false, &value);
        self.log_raw(format!("{conn} < "), text);
        if let Some(frame) = &received.frame {
            if let Some(sweep) = self.sweep.as_mut().filter(|_| conn != crate::scenario::SWEEP_WATCH) {
                sweep.note_frame(frame);
                // A catch-up stands for a snapshot: its result shows the ids the cut lost.
                if catch_up_position && matches!(frame, ServerFrame::UiStatePatch(_)) {
                    if let Some(state) = self.monitor.state(id) {
                        sweep.note_state(state);
                    }
                }
            }
            self.history.note(id, frame);
            if let ServerFrame::Welcome(w) = frame {
                if self.negotiated.is_none() {
                    self.negotiated = self.monitor.version(id);
                }
                self.bindings.set("session_id", Value::String(w.session_id.to_string()));
                self.bindings.set("resume_token", Value::String(w.resume_token.to_string()));
                let caps: Vec<Value> = w.capabilities.iter().map(|c| Value::String(c.as_str().to_owned())).collect();
                self.bindings.set("capabilities", Value::Array(caps));
                let listed = w.capabilities.iter().filter(|c| c.feature_since().is_none());
                let in_force = self.monitor.features(id).iter().chain(listed).map(|c| c.as_str().to_owned());
                self.in_force.entry(w.version.to_string()).or_default().extend(in_force);
            }
        }
        Next::Frame(value)
    }

    /// Records the monitor's new findings as failures (or warnings) of their checks.
    pub(super) fn record_findings(&mut self) {
        let step = (self.step > 0).then_some(self.step);
        for f in self.monitor.take_findings() {
            if f.check.level == crate::scenario::Level::Must {
                self.roots.finding(f.conn, step, f.check.id, f.requirement.as_str());
            }
            let version = self.monitor.version(f.conn);
            self.checks.record_monitor_finding(f, step, version);
        }
    }

    /// Appends a JSON frame to the wire log, if one is written; only then is the frame copied
    /// (a copy per frame is what a 1.0 update, a whole state, would otherwise cost every run).
    pub(super) fn wire_frame(&mut self, conn: u64, client: bool, frame: &Value) {
        if self.wire.is_some() {
            self.wire_record(WireRecord::frame(conn, client, frame));
        }
    }

    /// Appends to the wire log, if one is written.
    pub(super) fn wire_record(&mut self, record: WireRecord) {
        let at = self.started.elapsed().as_millis() as u64;
        // Only a deployment of several instances names them: `check-log` then runs the cluster
        // checks as the live run did.
        let clustered = self.endpoint.replicas() > 1;
        let replica = self.conn_replicas.get(&record.conn).filter(|_| clustered).map(|k| *k as u32);
        if let Some(w) = self.wire.as_mut() {
            w.write(&record.at(at).on_replica(replica));
        }
    }
}
