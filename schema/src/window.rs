//! Tail-first windows and paged history (since 1.2, capability and feature `state_window`): which
//! items a windowed connection holds, the page before its cursor, and its share of each patch.
//!
//! Spec: `spec/window.md`. A windowed connection holds a *view* of the session's one state: the
//! items from its cursor item on (the window, grown by the pages it asked for and by every item
//! appended since), the items older than that which are always held (`WINDOW-003`), and the whole
//! `run`. The view is a function of the state and the cursor alone ([`held_view`]), so a client,
//! a server after a restart and the conformance monitor all agree on it without any per-connection
//! memory. [`WindowView`] is the same view as positions, for a server that keeps the state in
//! memory: it opens a window, pages, and turns each patch of the whole state into the patch of the
//! view ([`WindowView::project`]) in time that follows the patch, not the thread.

use serde::{Deserialize, Deserializer, Serialize};

use crate::patch_op::PatchOp;
use crate::ui_state::{DisplayItem, UiState};
use crate::Id;

/// The largest `window` a `session.hello` may ask for (`WINDOW-001`).
pub const MAX_WINDOW_ITEMS: u32 = 1000;

/// The largest `limit` of a `chat.history_request` (`WINDOW-007`).
pub const MAX_HISTORY_PAGE_ITEMS: u32 = 500;

/// What a windowed `ui_state_snapshot` says about the part of the state it leaves out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.2"))]
pub struct Window {
    /// The cursor of the page before the window: the id of the window's first (oldest) item.
    /// Absent when the window holds the session's first item, so there is nothing to page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Id>,
    /// How many items the whole state holds.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub total: u64,
}

/// Why a patch of the whole state has no patch of a view.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProjectError {
    /// A cut removes the window's first item: the connection needs a fresh window (`WINDOW-006`).
    #[error("the patch removes the window's first item")]
    CursorRemoved,
    /// An op a reducer's patch never has (`move`, `copy`, or a path that is not the state's).
    #[error("op {op} at {path} cannot be projected onto a window")]
    Unsupported {
        /// The op's name.
        op: &'static str,
        /// Its path.
        path: String,
    },
}

/// Whether the item at `index` is held by every windowed connection even when it is older than
/// its window (`WINDOW-003`): a tool call that awaits (or awaited) a response, so a form asked
/// long ago stays visible and answerable, and the output item of such a call.
pub fn always_held(items: &[DisplayItem], index: usize) -> bool {
    match items.get(index) {
        Some(DisplayItem::ToolCall(call)) => call.awaiting_response,
        Some(DisplayItem::ToolOutput(output)) => index.checked_sub(1).and_then(|call| items.get(call)).is_some_and(
            |call| matches!(call, DisplayItem::ToolCall(c) if c.awaiting_response && c.id == output.tool_call_id),
        ),
        _ => false,
    }
}

/// The view of `state` a connection holds from `cursor` (`None`: it holds every item), or `None`
/// when no item of `state` has that id.
pub fn held_view(state: &UiState, cursor: Option<&Id>) -> Option<UiState> {
    let view = WindowView::at_cursor(state, 1, cursor)?;
    Some(view.view(state))
}

/// The window of the newest `size` items of `state`, with what a snapshot says about the rest.
pub fn window_of(state: &UiState, size: u32) -> (UiState, Window) {
    let view = WindowView::open(state, size);
    (view.view(state), view.window(state))
}

/// The items a page before `cursor` holds: the `limit` items just before the cursor item, and
/// the next cursor. `None` when no item of `state` has the id `cursor`.
pub fn page_of(state: &UiState, cursor: &Id, limit: u32) -> Option<(Vec<DisplayItem>, Option<Id>)> {
    let mut view = WindowView::at_cursor(state, 1, Some(cursor))?;
    let page = view.page(state, limit);
    Some((page.items.to_vec(), page.before))
}

/// A page cut from the state: its items (borrowed) and the cursor before them.
#[derive(Debug)]
pub struct Page<'a> {
    /// The items, oldest first.
    pub items: &'a [DisplayItem],
    /// The next cursor; `None` once the page reaches the first item.
    pub before: Option<Id>,
}

/// Where a windowed connection's view stands in the whole state, as positions: the cursor item's
/// position and those of the always-held items before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowView {
    /// The window the connection asked for: a cut that removes its cursor item opens a fresh one
    /// of this size (`WINDOW-006`).
    pub size: u32,
    /// Position of the cursor item; 0 when the connection holds every item.
    start: usize,
    /// Positions of the always-held items before `start`, ascending.
    pinned: Vec<usize>,
}

impl WindowView {
    /// The newest `size` items of `state` and the always-held items before them (`WINDOW-002`).
    /// Finding those costs a scan of the older items; a server that keeps an index of the
    /// always-held positions builds the view with [`WindowView::from_parts`] instead.
    pub fn open(state: &UiState, size: u32) -> WindowView {
        let start = state.items.len().saturating_sub(size as usize);
        WindowView { size, start, pinned: (0..start).filter(|&i| always_held(&state.items, i)).collect() }
    }

    /// The view of a client that holds `state` from `cursor` on (`None`: every item), or `None`
    /// when no item has that id.
    pub fn at_cursor(state: &UiState, size: u32, cursor: Option<&Id>) -> Option<WindowView> {
        let start = match cursor {
            None => 0,
            Some(id) => state.items.iter().position(|item| item.id() == id)?,
        };
        Some(WindowView { size, start, pinned: (0..start).filter(|&i| always_held(&state.items, i)).collect() })
    }

    /// A view from its parts: the cursor item's position and the always-held positions before it
    /// (ascending; those at or after `start` are dropped).
    pub fn from_parts(size: u32, start: usize, mut pinned: Vec<usize>) -> WindowView {
        pinned.retain(|&p| p < start);
        pinned.sort_unstable();
        pinned.dedup();
        WindowView { size, start, pinned }
    }

    /// The position of the cursor item in the whole state (0 when the connection holds every item).
    pub fn start(&self) -> usize {
        self.start
    }

    /// Whether the connection holds every item (its window reaches the first one).
    pub fn holds_all(&self) -> bool {
        self.start == 0
    }

    /// The cursor: the id of the window's first item, `None` when it holds every item.
    pub fn cursor(&self, state: &UiState) -> Option<Id> {
        self.cursor_item(state).map(|item| item.id().clone())
    }

    /// The window's first item, `None` when the connection holds every item.
    pub fn cursor_item<'a>(&self, state: &'a UiState) -> Option<&'a DisplayItem> {
        match self.start {
            0 => None,
            start => state.items.get(start),
        }
    }

    /// What a windowed snapshot of `state` says about the rest.
    pub fn window(&self, state: &UiState) -> Window {
        Window { before: self.cursor(state), total: state.items.len() as u64 }
    }

    /// The items the connection holds, in display order.
    pub fn items<'a>(&'a self, state: &'a UiState) -> impl Iterator<Item = &'a DisplayItem> + 'a {
        let start = self.start.min(state.items.len());
        self.pinned.iter().filter_map(|&i| state.items.get(i)).chain(&state.items[start..])
    }

    /// The view itself: the held items and the whole run.
    pub fn view(&self, state: &UiState) -> UiState {
        UiState { items: self.items(state).cloned().collect(), run: state.run.clone(), usage: state.usage.clone() }
    }

    /// The page of up to `limit` items just before the cursor, and the view moved to hold them
    /// (`WINDOW-008`). A connection that holds every item gets an empty page.
    pub fn page<'a>(&mut self, state: &'a UiState, limit: u32) -> Page<'a> {
        let end = self.start.min(state.items.len());
        let first = end.saturating_sub(limit as usize);
        self.start = first;
        self.pinned.retain(|&p| p < first);
        Page { items: &state.items[first..end], before: self.cursor(state) }
    }

    /// The position in the view of the item at `index` of the whole state, if the view holds it.
    fn position(&self, index: usize) -> Option<usize> {
        if index >= self.start {
            return Some(self.pinned.len() + index - self.start);
        }
        self.pinned.binary_search(&index).ok()
    }

    /// Turns `ops`, a patch of the whole state (one change's, or a catch-up's), into the patch of
    /// this view, moving the view along (`WINDOW-004`, `WINDOW-005`): ops on items it does not
    /// hold are left out, item indices become view indices, and an item inserted before the
    /// cursor is held only if it is always held (an output item after a held call). On error the
    /// view is unchanged; [`ProjectError::CursorRemoved`] means a fresh window is due.
    pub fn project(&mut self, ops: &[PatchOp]) -> Result<Vec<PatchOp>, ProjectError> {
        let mut next = self.clone();
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            if let Some(op) = next.project_op(op)? {
                out.push(op);
            }
        }
        *self = next;
        Ok(out)
    }

    fn project_op(&mut self, op: &PatchOp) -> Result<Option<PatchOp>, ProjectError> {
        let unsupported = || ProjectError::Unsupported { op: op.name(), path: op.path().to_owned() };
        let path = op.path();
        let Some(rest) = path.strip_prefix("/items") else {
            return match op {
                PatchOp::Move { .. } | PatchOp::Copy { .. } => Err(unsupported()),
                _ => Ok(Some(op.clone())),
            };
        };
        if rest.is_empty() {
            return Err(unsupported());
        }
        let rest = rest.strip_prefix('/').ok_or_else(unsupported)?;
        let (index, member) = match rest.split_once('/') {
            Some((index, member)) => (index, Some(member)),
            None => (rest, None),
        };
        if index == "-" {
            // Appended: the newest item is always in the window.
            return match (op, member) {
                (PatchOp::Add { .. }, None) => Ok(Some(op.clone())),
                _ => Err(unsupported()),
            };
        }
        let index: usize = index.parse().map_err(|_| unsupported())?;
        let before_cursor = self.start > 0 && index <= self.start;
        match (op, member) {
            (PatchOp::Add { value, .. }, None) if before_cursor => {
                // Inserted before the cursor item: everything from `index` on moves up by one.
                self.start += 1;
                let moved = self.pinned.partition_point(|&p| p < index);
                self.pinned[moved..].iter_mut().for_each(|p| *p += 1);
                let after_held_call = index.checked_sub(1).is_some_and(|call| self.pinned.binary_search(&call).is_ok());
                let held = match value.get("kind").and_then(|k| k.as_str()) {
                    Some("tool_call") => value.get("awaiting_response").and_then(|a| a.as_bool()) == Some(true),
                    Some("tool_output") => after_held_call,
                    _ => false,
                };
                if !held {
                    return Ok(None);
                }
                self.pinned.insert(moved, index);
                Ok(Some(PatchOp::Add { path: format!("/items/{moved}"), value: value.clone() }))
            }
            (PatchOp::Remove { .. }, None) if before_cursor => Err(ProjectError::CursorRemoved),
            (PatchOp::Move { .. } | PatchOp::Copy { .. }, _) => Err(unsupported()),
            _ => {
                let Some(at) = self.position(index) else { return Ok(None) };
                let path = match member {
                    Some(member) => format!("/items/{at}/{member}"),
                    None => format!("/items/{at}"),
                };
                Ok(Some(op.with_path(path)))
            }
        }
    }
}

/// Deserializes `session.hello.window`: an integer from 1 to [`MAX_WINDOW_ITEMS`].
pub(crate) fn window_size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let size: Option<u32> = crate::serde_util::optional_integer(d)?;
    match size {
        Some(n) if !(1..=MAX_WINDOW_ITEMS).contains(&n) => {
            Err(serde::de::Error::custom(format!("window {n} is not between 1 and {MAX_WINDOW_ITEMS}")))
        }
        other => Ok(other),
    }
}

/// Deserializes `chat.history_request.limit`: an integer from 1 to [`MAX_HISTORY_PAGE_ITEMS`].
pub(crate) fn page_limit<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let limit: u32 = crate::serde_util::integer(d)?;
    if !(1..=MAX_HISTORY_PAGE_ITEMS).contains(&limit) {
        return Err(serde::de::Error::custom(format!("limit {limit} is not between 1 and {MAX_HISTORY_PAGE_ITEMS}")));
    }
    Ok(limit)
}

#[cfg(test)]
mod tests;
