//! Sub-agent transcripts (since 1.3, feature `subagents`): the `subagent` member of a tool call
//! item, and how the one reducer finds its way through transcripts.
//!
//! Spec: `spec/subagents.md`. A tool call item that hosts a sub-agent run holds that run's
//! transcript (`subagent.items`), items of the same kinds as the top level, folded by the same
//! rules (`STATE-065`). Ids are unique across every transcript, so a call or an item is found by
//! id alone; [`ItemPath`] says where it sits. The member's types live with the other items'
//! ([`crate::ui_state::SubagentState`]).

use crate::ui_state::{DisplayItem, ToolCallItem, UiState};
use crate::Id;

/// How deep a sub-agent may run: a top-level call's sub-agent runs at depth 1, a sub-agent hosted
/// by a call of a depth-d transcript at d + 1 (`STATE-069`, `SUBAGENT-003`).
pub const MAX_SUBAGENT_DEPTH: usize = 4;

/// Where an item sits: its index in the top level, then, for an item of a transcript, its index
/// in each host's transcript on the way down. `[3]` is the fourth top-level item, `[3, 0]` the
/// first item of the transcript the fourth item hosts.
pub type ItemPath = Vec<usize>;

pub use crate::ui_state::{open_stream_of, SubagentState, SubagentStatus};

/// The transcript a call hosts, if it hosts one.
pub fn transcript_of(call: &ToolCallItem) -> Option<&[DisplayItem]> {
    call.subagent.as_deref().map(|s| &s.items[..])
}

impl UiState {
    /// Where the item with this id sits, in any transcript (O(items of every transcript)).
    pub fn item_path(&self, id: &Id) -> Option<ItemPath> {
        let mut path = Vec::new();
        find_in(&self.items, id, &mut path).then_some(path)
    }

    /// The item at `path`.
    pub fn item_at(&self, path: &[usize]) -> Option<&DisplayItem> {
        let (last, hosts) = path.split_last()?;
        transcript_at(&self.items, hosts)?.get(*last)
    }

    /// The tool call with this id, in any transcript, and where it sits.
    pub fn find_call(&self, id: &Id) -> Option<(ItemPath, &ToolCallItem)> {
        let path = self.item_path(id)?;
        match self.item_at(&path)? {
            DisplayItem::ToolCall(call) => Some((path, call)),
            _ => None,
        }
    }

    /// Whether some transcript, the top level included, holds an item with this id.
    pub fn holds_item_anywhere(&self, id: &Id) -> bool {
        self.item_path(id).is_some()
    }

    /// Whether `id` is the open stream of its transcript, the top level's or a sub-agent's.
    pub fn is_open_stream_anywhere(&self, id: &Id) -> bool {
        if self.open_stream_id() == Some(id) {
            return true;
        }
        let Some(path) = self.item_path(id) else { return false };
        let (_, hosts) = path.split_last().expect("a found item has a path");
        transcript_at(&self.items, hosts).and_then(open_stream_of) == Some(id)
    }

    /// The latest call, in display order over every transcript, hosting a run of `thread`.
    pub fn latest_call_of_thread(&self, thread: &Id) -> Option<&ToolCallItem> {
        let mut latest = None;
        visit_calls(&self.items, &mut |call| {
            if call.subagent.as_ref().is_some_and(|s| &s.thread_id == thread) {
                latest = Some(call);
            }
        });
        latest
    }
}

/// The transcript at the end of `hosts` (each a host's index in the transcript above), starting
/// from `items`; `items` itself for no hosts.
pub(crate) fn transcript_at<'a>(items: &'a [DisplayItem], hosts: &[usize]) -> Option<&'a [DisplayItem]> {
    let Some((first, rest)) = hosts.split_first() else { return Some(items) };
    match items.get(*first)? {
        DisplayItem::ToolCall(call) => transcript_at(transcript_of(call)?, rest),
        _ => None,
    }
}

/// [`transcript_at`], mutable.
pub(crate) fn transcript_at_mut<'a>(
    items: &'a mut Vec<DisplayItem>,
    hosts: &[usize],
) -> Option<&'a mut Vec<DisplayItem>> {
    let Some((first, rest)) = hosts.split_first() else { return Some(items) };
    match items.get_mut(*first)? {
        DisplayItem::ToolCall(call) => transcript_at_mut(&mut call.subagent.as_mut()?.items, rest),
        _ => None,
    }
}

/// Depth-first search for `id`, top level from its newest item (where a named item usually is),
/// each host before its transcript; leaves the path to the item in `path` when found.
fn find_in(items: &[DisplayItem], id: &Id, path: &mut ItemPath) -> bool {
    for (index, item) in items.iter().enumerate().rev() {
        path.push(index);
        if item.id() == id {
            return true;
        }
        if let DisplayItem::ToolCall(ToolCallItem { subagent: Some(sub), .. }) = item {
            if find_in(&sub.items, id, path) {
                return true;
            }
        }
        path.pop();
    }
    false
}

/// Calls `f` on every tool call of `items` and of their transcripts, in display order (a host
/// before its transcript).
pub(crate) fn visit_calls<'a>(items: &'a [DisplayItem], f: &mut impl FnMut(&'a ToolCallItem)) {
    for item in items {
        if let DisplayItem::ToolCall(call) = item {
            f(call);
            if let Some(sub) = &call.subagent {
                visit_calls(&sub.items, f);
            }
        }
    }
}

/// Calls `f` on every item of `items` and of their transcripts, in display order.
pub fn visit_items<'a>(items: &'a [DisplayItem], f: &mut impl FnMut(&'a DisplayItem)) {
    for item in items {
        f(item);
        if let DisplayItem::ToolCall(ToolCallItem { subagent: Some(sub), .. }) = item {
            visit_items(&sub.items, f);
        }
    }
}

/// A running transcript as a run that ends early must close it (a cancel, `SUBAGENT-010`; a
/// restart, `SUBAGENT-009`): its open stream, then its open calls, then its run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTranscript {
    /// The call hosting it.
    pub host: Id,
    /// Its open stream: the item, the text it holds and whether it is a reasoning stream.
    pub stream: Option<(Id, String, bool)>,
    /// Its `pending` and `running` calls, in display order, with their status.
    pub open_calls: Vec<(Id, crate::ToolCallStatus)>,
}

impl UiState {
    /// Every running transcript hosted by a call of `invocation`, in the order they close: the
    /// deepest first and, at one depth, in display order (`SUBAGENT-009`, `SUBAGENT-010`). A host
    /// is an open call of the transcript above it, closed after its own transcript.
    pub fn open_transcripts(&self, invocation: &Id) -> Vec<OpenTranscript> {
        let mut found: Vec<(usize, OpenTranscript)> = Vec::new();
        collect_open(&self.items, invocation, 1, &mut found);
        // Stable: display order is kept within a depth.
        found.sort_by_key(|(depth, _)| std::cmp::Reverse(*depth));
        found.into_iter().map(|(_, t)| t).collect()
    }
}

fn collect_open(items: &[DisplayItem], invocation: &Id, depth: usize, found: &mut Vec<(usize, OpenTranscript)>) {
    for item in items {
        let DisplayItem::ToolCall(call) = item else { continue };
        let Some(sub) = call.subagent.as_deref() else { continue };
        if &call.invocation_id == invocation && sub.status == SubagentStatus::Running {
            let stream = match sub.items.last() {
                Some(DisplayItem::AssistantMarkdown(m)) if m.streaming => {
                    Some((m.id.clone(), m.markdown.clone(), false))
                }
                Some(DisplayItem::Reasoning(r)) if r.streaming => Some((r.id.clone(), r.text.clone(), true)),
                _ => None,
            };
            let open_calls = sub
                .items
                .iter()
                .filter_map(|i| match i {
                    DisplayItem::ToolCall(c)
                        if matches!(c.status, crate::ToolCallStatus::Pending | crate::ToolCallStatus::Running) =>
                    {
                        Some((c.id.clone(), c.status))
                    }
                    _ => None,
                })
                .collect();
            found.push((depth, OpenTranscript { host: call.id.clone(), stream, open_calls }));
        }
        collect_open(&sub.items, invocation, depth + 1, found);
    }
}

impl UiState {
    /// Whether any transcript, the top level included, has an open stream.
    pub fn has_open_stream_anywhere(&self) -> bool {
        fn nested(items: &[DisplayItem]) -> bool {
            items.iter().any(|i| match i {
                DisplayItem::ToolCall(ToolCallItem { subagent: Some(sub), .. }) => {
                    open_stream_of(&sub.items).is_some() || nested(&sub.items)
                }
                _ => false,
            })
        }
        self.open_stream_id().is_some() || nested(&self.items)
    }

    /// Whether some call, in any transcript, hosts a sub-agent run.
    pub fn holds_subagents(&self) -> bool {
        self.items.iter().any(|i| matches!(i, DisplayItem::ToolCall(c) if c.subagent.is_some()))
    }
}
