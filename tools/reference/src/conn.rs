//! One connection's protocol side: frame validation in the spec's error order, then each frame
//! handed to the handler of its type ([`ClientFrame::dispatch`], exhaustive: a new client frame
//! does not compile until it is handled here): the hello opens or resumes a session, every other
//! frame is a request carried out on the session (`session::carry_out`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chatwire_schema::chat::cancel::Cancel;
use chatwire_schema::chat::history_request::HistoryRequest;
use chatwire_schema::chat::retry::Retry;
use chatwire_schema::chat::rewind::Rewind;
use chatwire_schema::chat::tool_call_response::ToolCallResponse;
use chatwire_schema::chat::user_message::UserMessage;
use chatwire_schema::dispatch::ClientFrameHandler;
use chatwire_schema::session::hello::SessionHello;
use chatwire_schema::session::welcome::{features_in_force, Capability};
use chatwire_schema::{
    ClientFrame, CloseCode, Direction, ErrorCode, ErrorFrame, FrameError, Id, ProtocolVersion, ServerFrame,
    REFUSED_RESUMES_PER_CONNECTION,
};

use crate::agent::AgentSpec;
use crate::fault::RefusalAction;
use crate::outbox::{ConnHandle, Outgoing};
use crate::protocol::{contention_pause, Negotiated, Refusal, CONFLICT_RETRIES};
use crate::session::{self, Session, Shared};

/// The protocol side of one connection: the session it opened or resumed, if any.
pub(crate) struct Conn {
    shared: Arc<Shared>,
    handle: ConnHandle,
    session: Option<Arc<Session>>,
    /// `resume_rejected` errors sent on this connection (RESUME-013).
    refused_resumes: u32,
}

/// What handling one frame returns.
type Handled<'c> = Pin<Box<dyn Future<Output = Result<(), Refusal>> + Send + 'c>>;

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
        match self.shared.faults.wire.on_refusal(&refusal, request) {
            RefusalAction::Answer => {}
            RefusalAction::Ignore => return,
            RefusalAction::Drop => {
                self.handle.kill.notify_one();
                return;
            }
            RefusalAction::Instead(frame) => {
                if let Some(session) = &self.session {
                    let mut g = session.inner.lock().await;
                    session::send_outside_state(session, &mut g, &self.handle, *frame).await;
                }
                return;
            }
        }
        let fatal = refusal.code.is_fatal();
        let code = refusal.code;
        match &self.session {
            Some(session) => {
                let mut g = session.inner.lock().await;
                session::send_error(session, &mut g, &self.handle, refusal, in_reply_to).await;
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

    /// A text message arrived: checked in the spec's error order, then handed to its handler.
    pub(crate) async fn on_text(&mut self, text: &str) {
        let frame = match self.parse(text) {
            Ok(frame) => frame,
            Err((refusal, in_reply_to)) => return self.refuse(refusal, in_reply_to, None).await,
        };
        let reply_to = Some(frame.id().clone());
        // Kept for the refusal seam, which may answer a refused request with something else.
        let request = frame.clone();
        if let Err(refusal) = frame.dispatch(Dispatch { conn: self }).await {
            self.refuse(refusal, reply_to, Some(&request)).await;
        }
    }

    /// A text message as a client frame, or its refusal (and the frame's id, where it has one),
    /// checked in the spec's error order: size, JSON, object, type, schema.
    fn parse(&self, text: &str) -> Result<ClientFrame, (Refusal, Option<Id>)> {
        if text.len() as u64 > self.shared.max_frame_bytes {
            let message =
                format!("frame of {} bytes is over the limit of {} bytes", text.len(), self.shared.max_frame_bytes);
            return Err((Refusal::new(ErrorCode::FrameTooLarge, message), None));
        }
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| (Refusal::new(ErrorCode::MalformedFrame, format!("frame is not valid json: {e}")), None))?;
        if !value.is_object() {
            return Err((Refusal::new(ErrorCode::MalformedFrame, "frame is not a json object"), None));
        }
        let in_reply_to = value.get("id").and_then(|v| v.as_str()).and_then(|s| Id::parse(s).ok());
        let wire = &self.shared.faults.wire;
        if let Some(refusal) = wire.refuses_valid_frame(&value) {
            return Err((refusal, in_reply_to));
        }
        let unbounded = (!wire.bounds_opaque_numbers()).then(|| value.clone());
        let version = self.session.as_ref().map(|_| self.handle.negotiated.version);
        let refused = |refusal| Err((refusal, in_reply_to.clone()));
        match self.shared.validator(version).from_value(Direction::ClientToServer, value) {
            Ok(frame) => Ok(frame),
            // A planted fault: numbers beyond INT-002's bound are taken as the schema alone would.
            Err(FrameError::Invalid(v)) if unbounded.is_some() && v.iter().all(|v| v.message.contains("INT-002")) => {
                match unbounded.and_then(|value| serde_json::from_value(value).ok()) {
                    Some(frame) => Ok(frame),
                    None => refused(Refusal::new(ErrorCode::InvalidFrame, "frame breaks its schema")),
                }
            }
            Err(e @ (FrameError::UnknownType(_) | FrameError::MissingType)) => {
                refused(Refusal::new(ErrorCode::UnknownType, e.to_string()))
            }
            Err(e @ (FrameError::NotJson(_) | FrameError::NotObject)) => {
                refused(Refusal::new(ErrorCode::MalformedFrame, e.to_string()))
            }
            Err(e) => refused(Refusal::new(ErrorCode::InvalidFrame, format!("frame breaks its schema: {e}"))),
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
                        Err(r) if r.contention && attempt < CONFLICT_RETRIES => {
                            attempt += 1;
                            contention_pause(attempt).await;
                        }
                        result => break result?,
                    }
                }
            }
            None => {
                let agent = self.agent_of(hello.script)?;
                session::open_session(&self.shared, &self.handle, hello.id.clone(), agent).await?
            }
        };
        self.session = Some(session);
        Ok(())
    }

    /// The agent a new session runs: its hello's script (in conformance mode), an empty script
    /// (conformance mode, no script sent), or the server's agent.
    fn agent_of(&self, script: Option<chatwire_schema::script::AgentScript>) -> Result<AgentSpec, Refusal> {
        let hello = &self.shared.faults.hello;
        match script {
            Some(_) if !self.shared.conformance && !hello.accepts_scripts_anywhere() => Err(Refusal::new(
                ErrorCode::ScriptNotAllowed,
                "scripts are only accepted by a server in conformance mode",
            )),
            Some(script) => {
                if let Err(e) = script.validate() {
                    if hello.refuses_script(&e) {
                        return Err(Refusal::new(ErrorCode::InvalidScript, e.to_string()));
                    }
                }
                Ok(AgentSpec::Script { script })
            }
            None if self.shared.conformance => {
                Ok(AgentSpec::Script { script: chatwire_schema::script::AgentScript { turns: Vec::new() } })
            }
            None => Ok(AgentSpec::Server),
        }
    }

    /// The features in force on this connection (`SESSION-012`): those the hello asked for (all
    /// when it named none) that this server implements at `version`; unknown names are ignored
    /// (`SESSION-016`).
    fn negotiate_features(&self, version: ProtocolVersion, requested: Option<&[Capability]>) -> Negotiated {
        let hello = &self.shared.faults.hello;
        let features = features_in_force(version, requested, &self.shared.capabilities(version));
        let patches = features.as_ref().is_some_and(|f| f.contains(&Capability::UiStatePatch));
        Negotiated {
            version,
            features: hello.welcome_features(features),
            patches: hello.sends_patches(patches, version),
            window: None,
        }
    }

    /// Carries out a request on the connection's session, each attempt by `attempt`
    /// (`session::carry_out`); a connection without a session is told to send its hello first.
    async fn request<F>(&mut self, attempt: F) -> Result<(), Refusal>
    where
        F: for<'a> FnMut(&'a Arc<Session>, &'a mut session::Inner, &'a ConnHandle) -> session::Attempt<'a>,
    {
        let Some(session) = self.session.clone() else {
            return Err(Refusal::new(ErrorCode::HelloRequired, "send session.hello first"));
        };
        session::carry_out(&session, &self.handle, attempt).await
    }
}

/// Hands each client frame to what handles it: one method per frame type, no fallback.
struct Dispatch<'c> {
    conn: &'c mut Conn,
}

impl<'c> ClientFrameHandler for Dispatch<'c> {
    type Output = Handled<'c>;

    fn hello(self, frame: SessionHello) -> Handled<'c> {
        Box::pin(self.conn.on_hello(frame))
    }

    fn user_message(self, frame: UserMessage) -> Handled<'c> {
        Box::pin(self.conn.request(move |s, g, _| Box::pin(session::user_message(s, g, frame.clone()))))
    }

    fn tool_call_response(self, frame: ToolCallResponse) -> Handled<'c> {
        Box::pin(
            self.conn.request(move |s, g, conn| {
                Box::pin(session::tool_call_response(s, g, &conn.negotiated, frame.clone()))
            }),
        )
    }

    fn rewind(self, frame: Rewind) -> Handled<'c> {
        Box::pin(self.conn.request(move |s, g, _| Box::pin(session::rewind(s, g, frame.clone()))))
    }

    fn retry(self, frame: Retry) -> Handled<'c> {
        Box::pin(self.conn.request(move |s, g, conn| Box::pin(session::retry(s, g, &conn.negotiated, frame.clone()))))
    }

    fn cancel(self, frame: Cancel) -> Handled<'c> {
        Box::pin(self.conn.request(move |s, g, conn| Box::pin(session::cancel(s, g, &conn.negotiated, frame.clone()))))
    }

    fn history_request(self, frame: HistoryRequest) -> Handled<'c> {
        Box::pin(self.conn.request(move |s, g, conn| Box::pin(session::history(s, g, conn, frame.clone()))))
    }
}
