//! One connection's protocol side: frame validation in the spec's error order, and dispatch of
//! each frame to the handshake or to the session's request handlers.

use std::sync::Arc;

use chatwire_schema::session::hello::SessionHello;
use chatwire_schema::session::welcome::{features_in_force, Capability};
use chatwire_schema::{
    ClientFrame, CloseCode, Direction, ErrorCode, ErrorFrame, FrameError, Id, ProtocolVersion, ServerFrame,
    REFUSED_RESUMES_PER_CONNECTION,
};

use crate::agent::AgentSpec;
use crate::hooks::RefusalAction;
use crate::session::{self, Negotiated, Refusal, Session, Shared};
use crate::transport::{ConnHandle, Outgoing};

/// The protocol side of one connection: the session it opened or resumed, if any.
pub(crate) struct Conn {
    shared: Arc<Shared>,
    handle: ConnHandle,
    session: Option<Arc<Session>>,
    /// `resume_rejected` errors sent on this connection (RESUME-013).
    refused_resumes: u32,
}

impl Conn {
    /// A connection with no session yet.
    pub(crate) fn new(shared: Arc<Shared>, handle: ConnHandle) -> Self {
        Conn { shared, handle, session: None, refused_resumes: 0 }
    }

    /// The connection closed: the session (if any) no longer talks to it.
    pub(crate) async fn close(mut self) {
        if let Some(session) = self.session.take() {
            session::detach(&session, &self.handle).await;
        }
    }

    /// A binary message arrived (TRANSPORT-002).
    pub(crate) async fn on_binary(&mut self) {
        let refusal = Refusal::new(ErrorCode::BinaryFrame, "binary frames are not supported; send text");
        self.refuse(refusal, None, None).await;
    }

    /// Answers a refused frame with its typed error (through the session when bound, for its seq).
    async fn refuse(&mut self, refusal: Refusal, in_reply_to: Option<Id>, request: Option<&ClientFrame>) {
        match self.shared.hooks.on_refusal(&refusal, request) {
            RefusalAction::Answer => {}
            RefusalAction::Ignore => return,
            RefusalAction::Drop => {
                self.handle.kill.notify_one();
                return;
            }
            RefusalAction::Instead(frame) => {
                if let Some(session) = &self.session {
                    session.inner.lock().await.send_outside_state(session, &self.handle, *frame).await;
                }
                return;
            }
        }
        let fatal = refusal.code.is_fatal();
        let code = refusal.code;
        match &self.session {
            Some(session) => {
                let mut g = session.inner.lock().await;
                g.send_error(session, &self.handle, refusal, in_reply_to).await;
            }
            None => {
                let frame = ErrorFrame {
                    seq: None,
                    code: refusal.code,
                    message: refusal.message,
                    in_reply_to,
                    fatal,
                    supported_versions: (refusal.code == ErrorCode::UnsupportedVersion).then(|| self.shared.versions()),
                };
                if let Ok(text) = serde_json::to_string(&ServerFrame::Error(frame)) {
                    self.handle.send(Outgoing::Text(text));
                }
            }
        }
        if let Some(close) = code.close_code() {
            self.handle.send(Outgoing::Close(close));
        } else if code == ErrorCode::ResumeRejected {
            self.refused_resumes += 1;
            if self.refused_resumes >= REFUSED_RESUMES_PER_CONNECTION {
                self.handle.send(Outgoing::Close(CloseCode::PolicyViolation));
            }
        }
    }

    /// A text message arrived: checked in the spec's error order, then dispatched.
    pub(crate) async fn on_text(&mut self, text: &str) {
        if text.len() as u64 > self.shared.max_frame_bytes {
            let message =
                format!("frame of {} bytes is over the limit of {} bytes", text.len(), self.shared.max_frame_bytes);
            return self.refuse(Refusal::new(ErrorCode::FrameTooLarge, message), None, None).await;
        }
        let value: serde_json::Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let message = format!("frame is not valid json: {e}");
                return self.refuse(Refusal::new(ErrorCode::MalformedFrame, message), None, None).await;
            }
        };
        if !value.is_object() {
            return self
                .refuse(Refusal::new(ErrorCode::MalformedFrame, "frame is not a json object"), None, None)
                .await;
        }
        let in_reply_to = value.get("id").and_then(|v| v.as_str()).and_then(|s| Id::parse(s).ok());
        if let Some(refusal) = self.shared.hooks.refuses_valid_frame(&value) {
            return self.refuse(refusal, in_reply_to, None).await;
        }
        let unbounded = (!self.shared.hooks.bounds_opaque_numbers()).then(|| value.clone());
        let version = self.session.as_ref().map(|_| self.handle.negotiated.version);
        let frame: ClientFrame = match self.shared.validator(version).from_value(Direction::ClientToServer, value) {
            Ok(frame) => frame,
            // A planted fault: numbers beyond INT-002's bound are taken as the schema alone would.
            Err(FrameError::Invalid(v)) if unbounded.is_some() && v.iter().all(|v| v.message.contains("INT-002")) => {
                match unbounded.and_then(|value| serde_json::from_value(value).ok()) {
                    Some(frame) => frame,
                    None => {
                        let refusal = Refusal::new(ErrorCode::InvalidFrame, "frame breaks its schema");
                        return self.refuse(refusal, in_reply_to, None).await;
                    }
                }
            }
            Err(e @ (FrameError::UnknownType(_) | FrameError::MissingType)) => {
                return self.refuse(Refusal::new(ErrorCode::UnknownType, e.to_string()), in_reply_to, None).await;
            }
            Err(e @ (FrameError::NotJson(_) | FrameError::NotObject)) => {
                return self.refuse(Refusal::new(ErrorCode::MalformedFrame, e.to_string()), in_reply_to, None).await;
            }
            Err(e) => {
                let message = format!("frame breaks its schema: {e}");
                return self.refuse(Refusal::new(ErrorCode::InvalidFrame, message), in_reply_to, None).await;
            }
        };
        let reply_to = Some(frame.id().clone());
        // Kept for the refusal seam, which may answer a refused request with something else.
        let request = frame.clone();
        let result = match frame {
            ClientFrame::Hello(hello) => self.on_hello(hello).await,
            other => self.on_session_frame(other).await,
        };
        if let Err(refusal) = result {
            self.refuse(refusal, reply_to, Some(&request)).await;
        }
    }

    async fn on_hello(&mut self, hello: SessionHello) -> Result<(), Refusal> {
        if self.session.is_some() {
            return Err(Refusal::new(ErrorCode::AlreadyOpen, "this connection already has an open session"));
        }
        let Some(version) = ProtocolVersion::negotiate(&hello.versions, &self.shared.versions()) else {
            let offered: Vec<String> = hello.versions.iter().map(ToString::to_string).collect();
            let message = format!("none of the offered versions {offered:?} is supported");
            return Err(Refusal::new(ErrorCode::UnsupportedVersion, message));
        };
        self.handle.negotiated = self.negotiate_features(version, hello.features.as_deref());
        if self.handle.negotiated.has(&Capability::StateWindow) {
            // WINDOW-012: a client that holds a window but asks for no size keeps the largest one.
            let holds_window = hello.resume.as_ref().is_some_and(|r| r.before.is_some());
            self.handle.negotiated.window =
                hello.window.or(holds_window.then_some(chatwire_schema::window::MAX_WINDOW_ITEMS));
        }
        let session = match &hello.resume {
            Some(resume) => {
                if hello.script.is_some() {
                    return Err(Refusal::new(
                        ErrorCode::ScriptNotAllowed,
                        "a script is only accepted when opening a session",
                    ));
                }
                let mut attempt = 0;
                loop {
                    match session::resume_session(&self.shared, &self.handle, hello.id.clone(), resume).await {
                        // Another replica committed first: resume again from the newer state.
                        Err(r) if r.contention && attempt < session::CONFLICT_RETRIES => attempt += 1,
                        result => break result?,
                    }
                }
            }
            None => {
                let agent = match hello.script {
                    Some(_) if !self.shared.conformance && !self.shared.hooks.accepts_scripts_anywhere() => {
                        return Err(Refusal::new(
                            ErrorCode::ScriptNotAllowed,
                            "scripts are only accepted by a server in conformance mode",
                        ));
                    }
                    Some(script) => {
                        if let Err(e) = script.validate() {
                            if self.shared.hooks.refuses_script(&e) {
                                return Err(Refusal::new(ErrorCode::InvalidScript, e.to_string()));
                            }
                        }
                        AgentSpec::Script { script }
                    }
                    None if self.shared.conformance => {
                        AgentSpec::Script { script: chatwire_schema::script::AgentScript { turns: Vec::new() } }
                    }
                    None => AgentSpec::Server,
                };
                session::open_session(&self.shared, &self.handle, hello.id.clone(), agent).await?
            }
        };
        self.session = Some(session);
        Ok(())
    }

    /// The features in force on this connection (`SESSION-012`): those the hello asked for (all
    /// when it named none) that this server implements at `version`; unknown names are ignored
    /// (`SESSION-016`).
    fn negotiate_features(&self, version: ProtocolVersion, requested: Option<&[Capability]>) -> Negotiated {
        let hooks = &self.shared.hooks;
        let features = features_in_force(version, requested, &self.shared.capabilities(version));
        let patches = features.as_ref().is_some_and(|f| f.contains(&Capability::UiStatePatch));
        Negotiated {
            version,
            features: hooks.welcome_features(features),
            patches: hooks.sends_patches(patches, version),
            window: None,
        }
    }

    async fn on_session_frame(&mut self, frame: ClientFrame) -> Result<(), Refusal> {
        let Some(session) = self.session.clone() else {
            return Err(Refusal::new(ErrorCode::HelloRequired, "send session.hello first"));
        };
        let mut g = session.inner.lock().await;
        // A request reads and changes the whole state, not a window of it (`partial.rs`).
        session::ensure_full(&session, &mut g).await?;
        let mut attempt = 0;
        loop {
            // What other replicas committed reaches this one before the request is judged.
            session::sync(&session, &mut g).await;
            if !g.is_attached(&self.handle) {
                return Ok(());
            }
            g.requester = Some(self.handle.id);
            let result = self.carry_out(&session, &mut g, frame.clone()).await;
            g.requester = None;
            match result {
                // Another replica committed first: nothing changed; carry it out on the newer state.
                Err(r) if r.contention && attempt < session::CONFLICT_RETRIES => attempt += 1,
                result => return result,
            }
        }
    }

    async fn carry_out(
        &self,
        session: &Arc<Session>,
        g: &mut session::Inner,
        frame: ClientFrame,
    ) -> Result<(), Refusal> {
        let result = match frame {
            ClientFrame::UserMessage(m) => session::user_message(session, g, m).await,
            ClientFrame::ToolCallResponse(r) => {
                session::tool_call_response(session, g, &self.handle.negotiated, r).await
            }
            ClientFrame::Rewind(r) => session::rewind(session, g, r).await,
            ClientFrame::Retry(r) => session::retry(session, g, &self.handle.negotiated, r).await,
            ClientFrame::Cancel(c) => session::cancel(session, g, &self.handle.negotiated, c).await,
            ClientFrame::HistoryRequest(r) => session::history(session, g, &self.handle, r).await,
            other => Err(Refusal::new(ErrorCode::UnknownType, format!("unexpected frame type {}", other.type_name()))),
        };
        result
    }
}
