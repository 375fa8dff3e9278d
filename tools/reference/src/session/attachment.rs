//! The connections attached to a session (`spec/attach.md`), grouped by what they see, and the
//! delivery of one change's frames to each of them through its outbox.
//!
//! A session has one state and one log; a connection holds only where its view stands (the base
//! of its next patch, whether it resumed mid-stream). The frames of a change are built once per
//! group of connections that see the same bytes, and an answer goes only to its requester
//! (`ATTACH-005`).

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::view::ConnView;
use chatwire_schema::window::WindowView;
use chatwire_schema::{DisplayItem, ProtocolVersion};

use crate::outbox::ConnHandle;

/// One connection attached to a session, and where its view of the session stands.
pub(crate) struct Attachment {
    pub conn: ConnHandle,
    /// The seq of the latest state frame sent to it: the base of its next patch (`STATE-037`).
    pub last_state_seq: u64,
    /// It resumed while a stream was open and has had no delta since (`STREAM-003`).
    pub resumed_mid_stream: bool,
    /// Where its window stands, on a connection that asked for one (`spec/window.md`).
    pub window: Option<WindowView>,
    /// The planted fault `page-from-cache`: the items older than the window when it opened.
    pub page_cache: Option<Vec<DisplayItem>>,
}

impl Attachment {
    /// A connection whose latest state frame had seq `last_state_seq`.
    pub fn new(conn: ConnHandle, last_state_seq: u64, resumed_mid_stream: bool, window: Option<WindowView>) -> Self {
        Attachment { conn, last_state_seq, resumed_mid_stream, window, page_cache: None }
    }
}

/// How a connection sees the session: whether state frames go out as patches (`STATE-036`),
/// whether it sees open streams (`assistant_stream` in force, `STREAM-001`), and its minor with
/// the 1.3 features in force on it (`REASON-001`, `USAGE-004`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct View {
    pub patches: bool,
    pub streams: bool,
    pub conn: ConnView,
}

impl View {
    pub fn of(conn: &ConnHandle) -> View {
        View {
            patches: conn.negotiated.patches,
            streams: conn.negotiated.has(&Capability::AssistantStream),
            conn: conn.negotiated.view(),
        }
    }

    /// The negotiated minor.
    pub fn version(&self) -> ProtocolVersion {
        self.conn.version
    }
}

/// A frame of a change, with the one connection it is for when it is an answer.
pub(crate) struct Piece {
    /// `Some(conn id)`: only that connection gets it (`ATTACH-005`).
    pub only: Option<u64>,
    pub text: String,
}

/// The attached connections that get the same bytes for a change: one view, one patch base, one
/// stream position. Its frames are built once. A windowed connection is a group of its own: what
/// it holds is its own (`WINDOW-004`).
pub(crate) struct Group {
    pub view: View,
    /// The window of its one member, moved by each state frame staged for it.
    pub window: Option<WindowView>,
    /// The base of the group's next patch; moved by each state frame staged for it.
    pub base: u64,
    pub resumed_mid_stream: bool,
    /// Indices into the session's attachments.
    pub members: Vec<usize>,
    pub wire: Vec<Piece>,
    /// Where each change of a batch but the last ends in `wire` (`pipeline/batch.rs`): each
    /// change's frames are queued as one unit, as they would be after its own commit.
    pub unit_ends: Vec<usize>,
}

impl Group {
    /// Stages `text` for every member (`only: None`) or for one.
    pub fn push(&mut self, only: Option<u64>, text: String) {
        self.wire.push(Piece { only, text });
    }

    /// The texts a member gets, in order.
    pub fn texts_for(&self, conn: u64) -> Vec<String> {
        self.wire.iter().filter(|p| p.only.is_none_or(|id| id == conn)).map(|p| p.text.clone()).collect()
    }

    /// The texts a member gets, unit by unit ([`Group::unit_ends`]); for the group's last member
    /// (`take`) taken out of the group (the others got copies).
    fn units_for(&mut self, conn: u64, take: bool) -> Vec<Vec<String>> {
        let wire = match take {
            true => std::mem::take(&mut self.wire),
            false => self.wire.iter().map(|p| Piece { only: p.only, text: p.text.clone() }).collect(),
        };
        let mut units = Vec::with_capacity(self.unit_ends.len() + 1);
        let mut unit = Vec::new();
        let mut ends = self.unit_ends.iter().copied().peekable();
        for (i, piece) in wire.into_iter().enumerate() {
            while ends.next_if(|end| *end <= i).is_some() {
                units.push(std::mem::take(&mut unit));
            }
            if piece.only.is_none_or(|id| id == conn) {
                unit.push(piece.text);
            }
        }
        units.push(unit);
        units
    }

    /// The texts the group's last member gets, taken out of the group (the others got copies).
    fn take_texts_for(&mut self, conn: u64) -> Vec<String> {
        std::mem::take(&mut self.wire)
            .into_iter()
            .filter(|p| p.only.is_none_or(|id| id == conn))
            .map(|p| p.text)
            .collect()
    }
}

/// Groups the attachments; at most one group per distinct (view, base, stream position).
pub(crate) fn groups(attached: &[Attachment]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for (index, a) in attached.iter().enumerate() {
        let view = View::of(&a.conn);
        let same = groups.iter_mut().find(|g| {
            a.window.is_none()
                && g.window.is_none()
                && g.view == view
                && g.base == a.last_state_seq
                && g.resumed_mid_stream == a.resumed_mid_stream
        });
        match same {
            Some(g) => g.members.push(index),
            None => groups.push(Group {
                view,
                window: a.window.clone(),
                base: a.last_state_seq,
                resumed_mid_stream: a.resumed_mid_stream,
                members: vec![index],
                wire: Vec::new(),
                unit_ends: Vec::new(),
            }),
        }
    }
    groups
}

/// Queues each group's frames to its members and moves their views on; a member whose queue
/// overflows is closing with 4008 and leaves the session alone (`ATTACH-010`).
pub(crate) fn deliver(attached: &mut Vec<Attachment>, groups: Vec<Group>) {
    let mut dropped = Vec::new();
    for mut group in groups {
        let last = group.members.len().saturating_sub(1);
        for (n, &index) in group.members.clone().iter().enumerate() {
            let Some(a) = attached.get_mut(index) else { continue };
            a.last_state_seq = group.base;
            a.resumed_mid_stream = group.resumed_mid_stream;
            if a.window.is_some() {
                a.window.clone_from(&group.window);
            }
            let units = match (group.unit_ends.is_empty(), n == last) {
                (true, true) => vec![group.take_texts_for(a.conn.id)],
                (true, false) => vec![group.texts_for(a.conn.id)],
                (false, take) => group.units_for(a.conn.id, take),
            };
            for texts in units {
                if !texts.is_empty() && !a.conn.send_all(texts) {
                    eprintln!("chatwire-reference: connection {} too slow, dropped", a.conn.id);
                    dropped.push(a.conn.id);
                    break;
                }
            }
        }
    }
    attached.retain(|a| !dropped.contains(&a.conn.id));
}
