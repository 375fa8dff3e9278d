//! The shape of a `ui_state_patch` (`STATE-039`, `STATE-040`), checked against the events it
//! covers without applying it: every op on an existing item guarded by a `test` of its id, and
//! nothing touched but `/run`, appends and the items the events name.

use super::*;

/// A patch that breaks the addressing or the size rule of `ui_state_patch`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{requirement}: op {op} ({path}): {reason}")]
pub struct PatchShapeError {
    /// `STATE-039` (a missing `test` guard) or `STATE-040` (a path the events do not name).
    pub requirement: &'static str,
    /// The index of the offending op in the patch.
    pub op: usize,
    /// The op's path.
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

/// One item of the patched array as the checker tracks it.
struct Tracked {
    id: Option<String>,
    guarded: bool,
}

/// The state a patch applies to, read item by item: a holder that shares states in pieces (the
/// conformance monitor) checks a patch's shape without building the whole state.
pub trait PatchBase {
    /// How many items it has.
    fn item_count(&self) -> usize;
    /// The item at `index` (`index < item_count()`).
    fn item(&self, index: usize) -> &DisplayItem;
    /// The whole state, for the rare check that folds several events over it.
    fn to_state(&self) -> UiState;
}

impl PatchBase for UiState {
    fn item_count(&self) -> usize {
        self.items.len()
    }

    fn item(&self, index: usize) -> &DisplayItem {
        &self.items[index]
    }

    fn to_state(&self) -> UiState {
        self.clone()
    }
}

/// Checks the shape of a patch against the events it covers, without applying it: every op on an
/// existing item is guarded by a `test` of that item's id (`STATE-039`), and the patch touches
/// only `/run`, appends, and the items the events name (`STATE-040`). `base` is the state the
/// patch applies to, `events` the events committed since then (one for a `ui_state_patch` after
/// an event, several for a catch-up). Whether the patch gives the right state is `STATE-038`:
/// apply it (RFC 6902) and compare with the reducer's result.
///
/// Its cost follows the patch, not the state: only the items from the lowest index an op names
/// on are tracked (ops never shift the items below it).
pub fn check_shape<B: PatchBase + ?Sized>(
    base: &B,
    events: &[UiEvent<'_>],
    ops: &[PatchOp],
) -> Result<(), PatchShapeError> {
    let named = named_items(base, events);
    let len = base.item_count();
    // The item before the lowest index named may guard an insertion there.
    let start = ops
        .iter()
        .filter_map(|op| op.path().strip_prefix("/items/"))
        .filter_map(|rest| rest.split('/').next().and_then(|t| t.parse::<usize>().ok()))
        .min()
        .unwrap_or(len)
        .min(len)
        .saturating_sub(1);
    let mut items: Vec<Tracked> =
        (start..len).map(|i| Tracked { id: Some(base.item(i).id().to_string()), guarded: false }).collect();
    // The hosts whose transcripts hold a named item (since 1.3), found once, when an op needs them.
    let mut hosts: Option<std::collections::BTreeSet<String>> = None;
    for (n, op) in ops.iter().enumerate() {
        let fail = |requirement, reason: String| PatchShapeError { requirement, op: n, path: op.path().into(), reason };
        if let PatchOp::Move { .. } | PatchOp::Copy { .. } = op {
            return Err(fail("STATE-040", "a patch neither moves nor copies".into()));
        }
        let path = op.path();
        // `/usage` (since 1.3) changes only as a whole, by an event that carries or cuts usage.
        if path == "/run" || (path == USAGE_PATH && events.iter().any(|e| changes_usage(*e))) {
            continue;
        }
        let Some(rest) = path.strip_prefix("/items/") else {
            return Err(fail("STATE-040", "only /run, /usage and /items/... may change".into()));
        };
        let (token, below) = match rest.split_once('/') {
            Some((token, below)) => (token, Some(below)),
            None => (rest, None),
        };
        if token == "-" {
            if !matches!(op, PatchOp::Add { .. }) || below.is_some() {
                return Err(fail("STATE-040", "/items/- only takes an add of a whole item".into()));
            }
            items.push(Tracked { id: new_item_id(op), guarded: false });
            continue;
        }
        let count = start + items.len();
        let index = match token.parse::<usize>() {
            Ok(i) if i < count || (i == count && below.is_none() && matches!(op, PatchOp::Add { .. })) => i,
            _ => return Err(fail("STATE-038", format!("no item at index {token}"))),
        };
        // Every index an op names is at least `start + 1` (or 0 with `start` 0).
        let at = index - start;
        match (op, below) {
            (PatchOp::Test { value, .. }, Some("id")) => {
                if value.as_str() == items[at].id.as_deref() {
                    items[at].guarded = true;
                }
            }
            (PatchOp::Test { .. }, _) => {}
            (PatchOp::Add { .. }, None) => {
                // An insertion at `index`: guarded by a test of the item it follows.
                if index == 0 || !items[at - 1].guarded {
                    return Err(fail("STATE-039", "an insertion needs a test of the item it follows".into()));
                }
                items.insert(at, Tracked { id: new_item_id(op), guarded: false });
            }
            _ => {
                let item = &items[at];
                if !item.guarded {
                    return Err(fail("STATE-039", format!("no test of /items/{index}/id before it")));
                }
                let nested = below.is_some_and(|b| b == "subagent" || b.starts_with("subagent/"));
                let is_named = item.id.as_ref().is_some_and(|id| named.contains(id));
                if !is_named && nested && hosts.is_none() {
                    hosts = Some(hosts_of_named(base, &named));
                }
                let host_of_named = item.id.as_ref().is_some_and(|id| hosts.as_ref().is_some_and(|h| h.contains(id)));
                if !(is_named || nested && host_of_named) {
                    return Err(fail("STATE-040", format!("item {:?} is not named by the events", item.id)));
                }
                if matches!(op, PatchOp::Remove { .. }) && below.is_none() {
                    items.remove(at);
                }
            }
        }
    }
    Ok(())
}

/// Whether `event` may change the state's usage: a run's end that carries usage (`STATE-056`), a
/// rewind (`STATE-057`).
fn changes_usage(event: UiEvent<'_>) -> bool {
    matches!(event, UiEvent::RunComplete(e) if e.usage.is_some()) || matches!(event, UiEvent::RewindComplete(_))
}

/// Whether the items `event` names depend on the state it applies to (not only on the event).
fn names_by_state(event: UiEvent<'_>) -> bool {
    matches!(
        event,
        UiEvent::RewindComplete(_)
            | UiEvent::RetryAccepted(_)
            | UiEvent::AssistantMessageDelta(_)
            | UiEvent::AssistantMessage(_)
            | UiEvent::ReasoningDelta(_)
            | UiEvent::Reasoning(_)
    )
}

/// The ids of the items `events`, applied in order from `base`, name: the tool call each call
/// event names, that call's output item, every item a rewind or a retry cuts, and the open stream
/// a delta appends to or a message ends. Events the reducer refuses
/// name nothing. The state after earlier events is built only when a later event needs it.
fn named_items<B: PatchBase + ?Sized>(base: &B, events: &[UiEvent<'_>]) -> std::collections::BTreeSet<String> {
    let mut named = std::collections::BTreeSet::new();
    let mut state: Option<UiState> = None;
    for (position, &event) in events.iter().enumerate() {
        let call = match event {
            UiEvent::ToolProgress(e) => Some(&e.tool_call_id),
            UiEvent::ToolOutput(e) => Some(&e.tool_call_id),
            UiEvent::ToolCallComplete(e) => Some(&e.tool_call_id),
            UiEvent::ToolCallDismiss(e) => Some(&e.tool_call_id),
            // Since 1.3: the host a sub-agent frame names, the host an item goes into.
            UiEvent::SubagentStarted(e) => Some(&e.tool_call_id),
            UiEvent::SubagentComplete(e) => Some(&e.tool_call_id),
            _ => event.parent_call_id(),
        };
        if let Some(call) = call {
            named.insert(call.to_string());
            if let Ok(output) = crate::reducer::output_item_id(call) {
                named.insert(output.to_string());
            }
        }
        if position > 0 && state.is_none() && events[position..].iter().any(|e| names_by_state(*e)) {
            let mut folded = base.to_state();
            for &earlier in &events[..position] {
                // A refused event changes nothing; the next one applies to the same state.
                let _ = folded.apply(earlier);
            }
            state = Some(folded);
        }
        match &state {
            Some(state) => name_by_state(state, event, &mut named),
            None if position == 0 => name_by_state(base, event, &mut named),
            None => {}
        }
        if let Some(state) = state.as_mut() {
            let _ = state.apply(event);
        }
    }
    named
}

/// The items `event`, applied to `state`, names by where they are: what a rewind or a retry cuts,
/// the open stream a delta appends to or a message ends.
fn name_by_state<B: PatchBase + ?Sized>(state: &B, event: UiEvent<'_>, named: &mut std::collections::BTreeSet<String>) {
    let len = state.item_count();
    let cut_ids = |cut: usize, named: &mut std::collections::BTreeSet<String>| {
        named.extend((cut..len).map(|i| state.item(i).id().to_string()));
    };
    let open_stream = |id: &Id, invocation: &Id| {
        len > 0
            && matches!(state.item(len - 1), DisplayItem::AssistantMarkdown(m)
                if m.streaming && &m.id == id && &m.invocation_id == invocation)
    };
    let open_reasoning = |id: &Id, invocation: &Id| {
        len > 0
            && matches!(state.item(len - 1), DisplayItem::Reasoning(r)
                if r.streaming && &r.id == id && &r.invocation_id == invocation)
    };
    match event {
        UiEvent::RewindComplete(e) => {
            if let Some(cut) = (0..len).find(|&i| state.item(i).invocation_id() == &e.before_invocation_id) {
                cut_ids(cut, named);
            }
        }
        UiEvent::RetryAccepted(e) => {
            if let Some(named_at) = (0..len).rev().find(|&i| state.item(i).id() == &e.after_item_id) {
                // The cut looks at the named item and the one after it only.
                let pair: Vec<DisplayItem> = (named_at..len.min(named_at + 2)).map(|i| state.item(i).clone()).collect();
                cut_ids(named_at + crate::reducer::retry_cut(&pair, 0), named);
            }
        }
        // A delta appending to the open stream, or the message ending it, names that item.
        UiEvent::AssistantMessageDelta(e) if open_stream(&e.item_id, &e.invocation_id) => {
            named.insert(e.item_id.to_string());
        }
        UiEvent::AssistantMessage(e) if open_stream(&e.item_id, &e.invocation_id) => {
            named.insert(e.item_id.to_string());
        }
        UiEvent::ReasoningDelta(e) if open_reasoning(&e.item_id, &e.invocation_id) => {
            named.insert(e.item_id.to_string());
        }
        UiEvent::Reasoning(e) if open_reasoning(&e.item_id, &e.invocation_id) => {
            named.insert(e.item_id.to_string());
        }
        _ => {}
    }
}

/// The ids of the top-level items of `base` whose transcripts hold, at any depth, an item `named`
/// holds (since 1.3): ops below such a host's `subagent` reach a named item. A scan of the hosts'
/// transcripts, made only for a patch that reaches into one.
fn hosts_of_named<B: PatchBase + ?Sized>(
    base: &B,
    named: &std::collections::BTreeSet<String>,
) -> std::collections::BTreeSet<String> {
    let mut hosts = std::collections::BTreeSet::new();
    for index in 0..base.item_count() {
        let DisplayItem::ToolCall(call) = base.item(index) else { continue };
        let Some(sub) = &call.subagent else { continue };
        let mut holds = false;
        crate::subagent::visit_items(&sub.items, &mut |item| holds |= named.contains(item.id().as_str()));
        if holds {
            hosts.insert(call.id.to_string());
        }
    }
    hosts
}

fn new_item_id(op: &PatchOp) -> Option<String> {
    match op {
        PatchOp::Add { value, .. } => value.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}
