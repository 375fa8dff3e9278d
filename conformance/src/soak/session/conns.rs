//! The session's connections: opening a tab (placed on a replica of a shared cluster), closing or
//! cutting it, resuming, taking over, attaching a second tab, restarting the backend, and carrying
//! on after the harness killed the replica a connection was on.

use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::DisplayItem;
use serde_json::{json, Value};
use tokio::time::Instant;

use super::{Role, Session, Stop, Tab};
use crate::conn::WsConn;
use crate::soak::fleet::Placed;
use crate::soak::plan::Cursor;
use crate::wirelog::WireRecord;

impl Session<'_> {
    /// Opens a tab; a resume names `resume`'s seq. Waits for its welcome and state frame. In a
    /// shared cluster the tab goes to another replica than the main connection's (a resume of the
    /// main connection moves on; a second tab reads along elsewhere), and a tab a kill cut before
    /// its state arrived is opened again on another replica.
    pub(super) async fn connect(
        &mut self,
        role: Role,
        resume: Option<u64>,
        versions: Vec<String>,
        features: Option<Vec<String>>,
    ) -> Result<u64, Stop> {
        let deadline = self.step_deadline();
        let mut after = self.main_replica;
        loop {
            let (ws, placed) = self.open(after, deadline).await?;
            let id = self.next_conn;
            self.next_conn += 1;
            self.monitor.open(id);
            if let Some(p) = placed {
                self.replica_of.insert(id, p.replica);
            }
            self.tabs.push(Tab { ws, id, role, paused_until: None, placed });
            let hello = self.hello(resume, &versions, features.as_deref());
            self.send(id, hello).await?;
            if self.await_state(id, deadline).await? {
                if role == Role::Main {
                    self.main_replica = placed.map(|p| p.replica);
                }
                return Ok(id);
            }
            // Cut by a kill before its state arrived: the same hello on another replica.
            if self.main_lost == Some(id) {
                self.main_lost = None;
            }
            after = placed.map(|p| p.replica);
        }
    }

    /// Opens a WebSocket connection to the replica after `after` (or the backend's URL), trying
    /// again (another replica where one is up) until the deadline.
    pub(super) async fn open(
        &mut self,
        mut after: Option<usize>,
        deadline: Instant,
    ) -> Result<(WsConn, Option<Placed>), Stop> {
        loop {
            let deadline = self.extended(deadline);
            let error = match self.backend.place(after) {
                Ok((url, placed)) => match WsConn::open(&url, self.cfg.max_message_bytes, deadline).await {
                    Ok(ws) => return Ok((ws, placed)),
                    Err(e) => {
                        if placed.is_some() {
                            after = placed.map(|p| p.replica);
                        }
                        e.to_string()
                    }
                },
                Err(e) => e,
            };
            if Instant::now() + Duration::from_millis(100) >= deadline {
                return Err(self.soak_finding("soak-connect", None, self.next_conn, error));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The hello of a new tab: a new session with the plan's script, or a resume from `last_seq`.
    pub(super) fn hello(&mut self, resume: Option<u64>, versions: &[String], features: Option<&[String]>) -> Value {
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
        hello
    }

    /// Waits for tab `id`'s welcome and state frame: true once they are in, false when a kill cut
    /// the tab first. (No resume of a lost main connection here: this is part of one.)
    pub(super) async fn await_state(&mut self, id: u64, deadline: Instant) -> Result<bool, Stop> {
        loop {
            if !self.tabs.iter().any(|t| t.id == id) {
                if self.cut.contains(&id) {
                    return Ok(false);
                }
                return Err(self.soak_finding(
                    "soak-unexpected-close",
                    None,
                    id,
                    "the server closed a connection before its welcome and state frame".into(),
                ));
            }
            if self.monitor.state(id).is_some() && !self.monitor.awaiting_state(id) {
                return Ok(true);
            }
            let deadline = self.extended(deadline);
            if Instant::now() >= deadline {
                return Err(self.stall(id, "no welcome and state frame after a hello before the deadline".into()));
            }
            self.pump(deadline).await?;
        }
    }

    /// Closes (1000) or cuts a tab.
    pub(super) async fn drop_tab(&mut self, id: u64, cut: bool) {
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
                let _ = self.received(id, Some(tab.role), tab.placed, incoming);
            }
            self.record(WireRecord::close(id, true, Some(1000)));
        }
        self.monitor.client_close(id);
        self.collect();
    }

    /// The seq a resume from `conn` names.
    pub(super) fn cursor(&self, conn: Option<u64>, cursor: Cursor) -> u64 {
        let Some(conn) = conn else { return 0 };
        match cursor {
            Cursor::Zero => 0,
            Cursor::State => self.monitor.state_seq(conn).unwrap_or(0),
            Cursor::Highest => self.monitor.last_seq(conn).unwrap_or(0),
        }
    }

    /// Leaves the main connection (closed or cut) and resumes on a new one.
    pub(super) async fn resume_main(&mut self, cut: bool, cursor: Cursor) -> Result<(), Stop> {
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
    pub(super) fn after_resume(&mut self) {
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
                self.run_started();
            }
        }
    }

    /// A new connection resumes without `multi_attach`: every other tab is taken over.
    pub(super) async fn takeover(&mut self) -> Result<(), Stop> {
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
    pub(super) async fn attach(&mut self) -> Result<(), Stop> {
        let Some(main) = self.main() else { return Ok(()) };
        if !self.in_force(main, Capability::MultiAttach) || self.tabs.iter().any(|t| t.role == Role::Watcher) {
            return Ok(());
        }
        self.connect(Role::Watcher, Some(0), self.cfg.versions.clone(), None).await.map(|_| ())
    }

    /// Kills the backend (SIGKILL) and starts it again, then resumes. The client drops its
    /// connections first, as the scenarios' restart step does: whatever was in flight is lost, and
    /// the end of the connections is the client's, not an answer of the server's.
    pub(super) async fn restart(&mut self, cursor: Cursor) -> Result<(), Stop> {
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
}
