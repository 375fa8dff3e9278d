//! What the monitor knows about one connection: the session it is bound to, what its welcome
//! negotiated, and the state it holds (the oracle's fold, the state of its latest state frame, its
//! window), all as of the frames read so far.

use std::sync::Arc;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::ConnView;
use chatwire_schema::{ProtocolVersion, ReqId, UiState};

use super::held::{CatchUpWindow, Held, SinceState, View};
use super::oracle::StateOracle;
use super::window::WindowTrack;
use crate::script::SessionScript;

/// What a hello the client sent asks of the welcome that answers it.
#[derive(Clone, Debug)]
pub(crate) struct PendingHello {
    pub id: String,
    pub versions: Vec<String>,
    /// For a resume: the highest seq seen on the session before it; the welcome must be above it.
    pub resume_floor: Option<u64>,
    /// For a resume: the `last_seq` it sent.
    pub resume_last_seq: Option<u64>,
    /// The features the hello asked for (`None`: no `features` member).
    pub features: Option<Vec<Capability>>,
    /// The script it carried, as the monitor reads it.
    pub script: Option<Arc<SessionScript>>,
    /// The window it asked for (`WINDOW-001`).
    pub window: Option<u32>,
    /// For a resume: the cursor of the view it holds (`WINDOW-012`).
    pub before: Option<chatwire_schema::Id>,
}

/// What the monitor knows about one connection.
#[derive(Debug, Default)]
pub(crate) struct ConnModel {
    pub session: Option<String>,
    pub last_seq: Option<u64>,
    /// The fold of the latest snapshot and every event since: what the client should hold.
    pub oracle: StateOracle,
    /// A welcome came and its state frame has not.
    pub awaiting_snapshot: bool,
    pub hello: Option<PendingHello>,
    /// An event arrived whose state frame has not come yet (STATE-003).
    pub update_due: bool,
    /// The last event was one the reducer refuses (charged there): a state frame may follow it or
    /// not, and neither is charged. There is no valid state after it, so its missing state frame,
    /// or one that came, is a consequence of the refusal, not a second fault.
    pub update_optional: bool,
    /// The event being folded was refused by the reducer (set by the fold, read right after it).
    pub event_refused: bool,
    /// The welcome just received opened a new session, so the snapshot must be empty (STATE-005).
    pub new_session: bool,
    /// The connection has ended (either side); later frames on it are not expected.
    pub ended: bool,
    /// The version its welcome negotiated (COMPAT-005).
    pub version: Option<ProtocolVersion>,
    /// The capabilities its latest welcome listed.
    pub capabilities: Vec<Capability>,
    /// The features in force by the latest welcome (SESSION-012), sorted.
    pub features: Vec<Capability>,
    /// The seq of the latest frame that carried a state (STATE-037).
    pub state_seq: Option<u64>,
    /// The events since that frame (STATE-039/040), kept where a feature is in force.
    pub since_state: SinceState,
    /// After a resume welcome, until the frame that follows it: what a catch-up is checked against.
    pub catch_up: Option<CatchUpWindow>,
    /// A state frame followed the latest welcome (a catch-up whose result is unknown included).
    pub state_seen: bool,
    /// The state the connection holds (the base of its next patch), in its view.
    pub held: Option<Held>,
    /// Frames went to other connections since its latest state frame that no connection here
    /// received (answers, `ATTACH-005`): its next state frame is taken as given (`ATTACH-004`).
    pub foreign_unknown: bool,
    /// Its window, where it asked for one (`spec/window.md`).
    pub window: WindowTrack,
    /// For a resume welcome: the cursor of the view the resume said it holds (`WINDOW-012`).
    pub resume_before: Option<chatwire_schema::Id>,
    /// After an update that was not the fold of the events sent (STATE-004): that fold, with
    /// every event since. The client's state is apart until an update equals it (`diverge`).
    pub shadow: Option<UiState>,
    /// After a resumed welcome, until the state frame that follows it: the welcome's seq.
    pub resume_welcome_seq: Option<u64>,
    /// The state it holds left the oracle's fold at a finding under this requirement, and no
    /// state frame gave the server's state since (`crate::diverge`).
    pub diverged: Option<ReqId>,
    /// The last event was a tool call of this invocation with this call_index: a batch in
    /// progress (MULTI-001, MULTI-002).
    pub batch: Option<(String, u32)>,
}

impl ConnModel {
    /// The state the connection should hold, as the oracle folds it.
    pub fn state(&self) -> Option<&UiState> {
        self.oracle.expected()
    }

    /// Whether `feature` is in force on the connection.
    pub fn has(&self, feature: &Capability) -> bool {
        self.features.contains(feature)
    }

    /// Whether its welcome negotiated 1.1 or later.
    pub fn since_1_1(&self) -> bool {
        self.version.is_some_and(|v| v.major > 1 || v.minor >= 1)
    }

    /// The view it holds its state in: its minor with the 1.3 features in force on it
    /// (`REASON-001`, `USAGE-004`), and whether it sees open streams.
    pub fn view(&self) -> View {
        let version = self.version.unwrap_or(ProtocolVersion { major: 1, minor: 0 });
        (ConnView::new(version, Some(&self.features)), self.has(&Capability::AssistantStream))
    }
}
