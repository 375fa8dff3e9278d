//! The one trait every check of typed frames implements ([`Check`]) over the shared session
//! model, and what it is shown of each frame.
//!
//! A check owns its state. It is told of every frame the client sends ([`Check::on_client`]), of
//! every typed server frame twice, before the model takes it ([`Check::on_server`]: the model is
//! then what the connection held before the frame) and after ([`Check::after_server`]), and of
//! every connection's end ([`Check::on_close`]). What it finds goes to [`Out`], each finding under
//! one of the requirements its definitions declare.

use std::any::Any;

use chatwire_schema::{ClientFrame, ServerFrame};

use crate::finding::Out;
use crate::model::{ConnModel, Model, SessionModel, Took};
use crate::normalize::Normalizer;

/// A frame the client sent, as a check sees it.
pub(crate) struct ClientCx<'a> {
    /// The connection it went out on.
    pub conn: u64,
    /// The frame, parsed once; `None` when it is no valid client frame.
    pub frame: Option<&'a ClientFrame>,
    /// Its `id` member, valid frame or not: a server answers any JSON object with an `id`
    /// naming it (`ERROR-004`, `ATTACH-005`).
    pub id: Option<&'a str>,
    /// The model, before the frame.
    pub model: &'a Model,
}

impl ClientCx<'_> {
    /// The connection's model.
    pub fn conn(&self) -> Option<&ConnModel> {
        self.model.conn(self.conn)
    }
}

/// A typed server frame, as a check sees it.
pub(crate) struct ServerCx<'a> {
    /// The connection it arrived on.
    pub conn: u64,
    /// The frame.
    pub frame: &'a ServerFrame,
    /// The model: before the frame in [`Check::on_server`], after it in [`Check::after_server`].
    pub model: &'a Model,
    /// What the model did with the frame ([`Check::after_server`] only).
    pub took: Option<&'a Took>,
    /// The other checks, for the rare check that asks another what only that one knows.
    pub peers: Peers<'a>,
    /// The placeholder naming of ids, for a message that shows states.
    pub redactor: &'a mut Normalizer,
}

impl ServerCx<'_> {
    /// The connection's model.
    pub fn conn(&self) -> Option<&ConnModel> {
        self.model.conn(self.conn)
    }

    /// The model of the connection's session, once a welcome bound it.
    pub fn session(&self) -> Option<&SessionModel> {
        self.model.session_of(self.conn)
    }

    /// The id of the connection's session, once a welcome bound it.
    pub fn session_id(&self) -> Option<&str> {
        self.conn().and_then(|c| c.session.as_deref())
    }

    /// The state the connection holds, as the model folds it.
    pub fn state(&self) -> Option<&chatwire_schema::UiState> {
        self.conn().and_then(ConnModel::state)
    }
}

/// A connection's end, as a check sees it.
pub(crate) struct CloseCx<'a> {
    /// The connection.
    pub conn: u64,
    /// `Some(code)`: the server closed it (`None` inside: without a close frame, or it broke);
    /// `None`: the client closed or dropped it.
    pub server_code: Option<Option<u16>>,
    /// The model, the connection marked ended.
    pub model: &'a Model,
}

/// Every check but the one being told, found by type.
#[derive(Clone, Copy)]
pub(crate) struct Peers<'a> {
    before: &'a [Box<dyn Check>],
    after: &'a [Box<dyn Check>],
}

impl<'a> Peers<'a> {
    /// The checks registered before the one being told, and after it.
    pub fn new(before: &'a [Box<dyn Check>], after: &'a [Box<dyn Check>]) -> Self {
        Peers { before, after }
    }

    /// The registered check of type `T`, if any.
    pub fn get<T: Check>(&self) -> Option<&'a T> {
        self.before.iter().chain(self.after).find_map(|c| c.as_ref().as_any().downcast_ref::<T>())
    }
}

/// Lets a check be found by its type ([`Peers::get`]). Call it on the check (`&dyn Check`), not on
/// its box: a `Box<dyn Check>` is itself `Any`.
pub(crate) trait AsAny {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One always-on check of typed frames: it owns its state and sees every frame through the shared
/// session model. Every method has a default that does nothing, so a check implements only what
/// it judges.
pub(crate) trait Check: AsAny + std::fmt::Debug + Send + Sync + 'static {
    /// The client sent a frame.
    fn on_client(&mut self, _cx: &ClientCx<'_>) {}

    /// A typed server frame, before the model takes it.
    fn on_server(&mut self, _cx: &mut ServerCx<'_>, _out: &mut Out) {}

    /// The same frame, after the model took it.
    fn after_server(&mut self, _cx: &mut ServerCx<'_>, _out: &mut Out) {}

    /// A connection ended (either side), once.
    fn on_close(&mut self, _cx: &CloseCx<'_>, _out: &mut Out) {}
}
