//! Which ids a frame introduces into its session, and which a client frame names: frame facts
//! ([`crate::frame_facts`]) about ids, declared once beside each frame type.
//!
//! Spec: `spec/overview.md#identifiers`. A server never uses an invocation id, display item id or
//! `tool_call_id` twice in a session (`ID-002`): every id of these kinds is *introduced* by exactly
//! one frame, and every later frame only names it again. Which frames introduce which ids is a fact
//! of each frame type ([`IdSlot`]); whether a given frame is the introduction can depend on the
//! session's state for a stream's item ([`Introduction`]), which [`IntroducedId::is_new`] decides
//! from the state before the frame.

use crate::reducer::IndexedUiState;
use crate::ui_state::UiState;
use crate::Id;

/// The kinds of ids a session keeps unique (`ID-002`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdKind {
    /// An `invocation_id`: one turn.
    Invocation,
    /// A display item's id.
    Item,
    /// A `tool_call_id` (also the id of the call's display item).
    ToolCall,
}

impl IdKind {
    /// Every kind, in declaration order.
    pub const ALL: &'static [IdKind] = &[IdKind::Invocation, IdKind::Item, IdKind::ToolCall];

    /// The kind's name in `fixtures/protocol-facts.json` (`"invocation"`, `"item"`, `"tool_call"`).
    pub fn as_str(self) -> &'static str {
        match self {
            IdKind::Invocation => "invocation",
            IdKind::Item => "item",
            IdKind::ToolCall => "tool_call",
        }
    }
}

/// When a frame of a type that introduces an id is the one that introduces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Introduction {
    /// Every frame of the type introduces the id: no earlier frame of the session names it.
    Always,
    /// The id is new unless it is the item of the stream the state holds open: the
    /// `chat.assistant_message` that ends a stream names the item the stream's first delta
    /// introduced. With the state unknown the message counts as new.
    UnlessOpenStream,
    /// The id is new when the state holds no item with it: a stream's first
    /// `chat.assistant_message_delta` introduces its item, every later delta names it again. With
    /// the state unknown (a catch-up whose base was never seen) a delta may continue a stream begun
    /// before it, so it does not count as new.
    UnlessHeld,
}

impl Introduction {
    /// The rule's name in `fixtures/protocol-facts.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Introduction::Always => "always",
            Introduction::UnlessOpenStream => "unless_open_stream",
            Introduction::UnlessHeld => "unless_held",
        }
    }
}

/// What an [`Introduction`] rule reads of a session's state before the frame.
pub trait HeldItems {
    /// Whether the state holds a display item with this id, in any transcript.
    fn holds_item(&self, id: &Id) -> bool;
    /// Whether the item with this id is an open stream: the top level's, or since 1.3 a
    /// sub-agent transcript's (`STATE-065`).
    fn is_open_stream_item(&self, id: &Id) -> bool;
}

impl HeldItems for UiState {
    /// A scan of the items of every transcript: O(items). [`IndexedUiState`] answers from its
    /// index.
    fn holds_item(&self, id: &Id) -> bool {
        self.holds_item_anywhere(id)
    }

    fn is_open_stream_item(&self, id: &Id) -> bool {
        self.is_open_stream_anywhere(id)
    }
}

impl HeldItems for IndexedUiState {
    fn holds_item(&self, id: &Id) -> bool {
        self.has_item(id)
    }

    /// O(1) for the top level's stream and for an id the index does not hold; a scan otherwise.
    fn is_open_stream_item(&self, id: &Id) -> bool {
        self.open_stream_id() == Some(id) || (self.has_item(id) && self.is_open_stream_anywhere(id))
    }
}

/// A frame type's declaration of one id it introduces: the member that carries it, its kind, and
/// when the frame is its introduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdSlot {
    /// The kind of id.
    pub kind: IdKind,
    /// The frame member that carries it (its wire name).
    pub member: &'static str,
    /// When a frame of the type introduces it.
    pub rule: Introduction,
}

/// A frame type's declaration of an id it names without introducing it (a client frame names the
/// call, item or invocation it acts on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IdMember {
    /// The kind of id.
    pub kind: IdKind,
    /// The frame member that carries it (its wire name).
    pub member: &'static str,
}

/// One id a frame introduces (under its type's [`Introduction`] rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntroducedId<'a> {
    /// The kind of id.
    pub kind: IdKind,
    /// The id.
    pub id: &'a Id,
    /// When the frame introduces it.
    pub rule: Introduction,
}

impl IntroducedId<'_> {
    /// Whether the frame introduces this id, given the session's state before the frame (`None`:
    /// not known).
    pub fn is_new<S: HeldItems + ?Sized>(&self, before: Option<&S>) -> bool {
        match self.rule {
            Introduction::Always => true,
            Introduction::UnlessOpenStream => !before.is_some_and(|state| state.is_open_stream_item(self.id)),
            Introduction::UnlessHeld => before.is_some_and(|state| !state.holds_item(self.id)),
        }
    }
}

/// Most ids one frame introduces (`chat.user_message_accepted`: its invocation and its item).
const MAX_INTRODUCED: usize = 2;

/// The ids one frame introduces, in the order its type declares them; no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntroducedIds<'a> {
    ids: [Option<IntroducedId<'a>>; MAX_INTRODUCED],
}

impl<'a> IntroducedIds<'a> {
    /// The ids of `ids`, in order. More than two does not compile.
    pub fn new<const N: usize>(ids: [IntroducedId<'a>; N]) -> Self {
        const { assert!(N <= MAX_INTRODUCED, "a frame introduces at most two ids") };
        let mut out = IntroducedIds::default();
        for (slot, id) in out.ids.iter_mut().zip(ids) {
            *slot = Some(id);
        }
        out
    }

    /// The ids, in declaration order.
    pub fn iter(&self) -> impl Iterator<Item = IntroducedId<'a>> + '_ {
        self.ids.iter().flatten().copied()
    }

    /// How many ids the frame introduces under its rules (before any state is consulted).
    pub fn len(&self) -> usize {
        self.ids.iter().flatten().count()
    }

    /// Whether the frame's type introduces no id.
    pub fn is_empty(&self) -> bool {
        self.ids[0].is_none()
    }
}

impl<'a> IntoIterator for IntroducedIds<'a> {
    type Item = IntroducedId<'a>;
    type IntoIter = std::iter::Flatten<std::array::IntoIter<Option<IntroducedId<'a>>, MAX_INTRODUCED>>;

    fn into_iter(self) -> Self::IntoIter {
        self.ids.into_iter().flatten()
    }
}

/// The id a client frame names: the call it responds to, the item it retries after or pages
/// before, the invocation it cancels or rewinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedId<'a> {
    /// The kind of id.
    pub kind: IdKind,
    /// The id.
    pub id: &'a Id,
}
