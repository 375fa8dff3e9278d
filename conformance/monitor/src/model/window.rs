//! The checks of windowed connections (`spec/window.md`): what each one holds is its own view of
//! the session's one state, checked against the view the monitor's own fold of the whole state
//! gives for its cursor (`chatwire_schema::window::held_view`), frame by frame.
//!
//! The monitor keeps two things per windowed connection: the view as the connection's own frames
//! built it (snapshots, patches, pages), and its cursor. The whole state stays the connection's
//! oracle fold of every event (events reach a windowed connection unchanged). After a finding on
//! what the connection holds, what it holds is unknown until its next snapshot: later state frames
//! build on the server's wrong view, so judging them would charge the same fault again.

use chatwire_schema::chat::history_page::HistoryPage;
use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::ui_state_snapshot::UiStateSnapshot;
use chatwire_schema::window::{always_held, held_view, page_of, window_of};
use chatwire_schema::{ErrorCode, Id, ReqId, UiState};

use chatwire_schema::requirements::Level;

use super::shared::apply_json;
use crate::finding::{CheckDef, Out};

const WINDOW_002: ReqId = ReqId::new("WINDOW-002");
const WINDOW_003: ReqId = ReqId::new("WINDOW-003");
const WINDOW_004: ReqId = ReqId::new("WINDOW-004");
const WINDOW_005: ReqId = ReqId::new("WINDOW-005");
const WINDOW_006: ReqId = ReqId::new("WINDOW-006");
const WINDOW_008: ReqId = ReqId::new("WINDOW-008");
const WINDOW_009: ReqId = ReqId::new("WINDOW-009");
const WINDOW_010: ReqId = ReqId::new("WINDOW-010");
const WINDOW_011: ReqId = ReqId::new("WINDOW-011");
const WINDOW_012: ReqId = ReqId::new("WINDOW-012");

/// A windowed snapshot holds the newest items and the always-held older ones, and says so.
pub static WINDOW_SNAPSHOT: CheckDef = CheckDef {
    id: "window-snapshot-holds-the-tail",
    requirements: &[WINDOW_002, WINDOW_003, WINDOW_006, WINDOW_011],
    summary: "a snapshot on a windowed connection holds exactly the newest `window` items and the always-held older ones, with window.before and window.total; a fresh one follows a cut of its cursor item; no other snapshot carries window",
    level: Level::Must,
};

/// Every later state frame keeps the view equal to the fold's view from its cursor.
pub static WINDOW_VIEW: CheckDef = CheckDef {
    id: "window-view-matches-fold",
    requirements: &[WINDOW_004, WINDOW_005, WINDOW_012],
    summary: "every state frame (a catch-up included) leaves a windowed connection holding exactly the view of the reducer's state from its cursor, and addresses no item it does not hold",
    level: Level::Must,
};

/// Pages are exact, refused for a cursor that is not current, and reach the first item gap-free.
pub static HISTORY_PAGES: CheckDef = CheckDef {
    id: "history-pages-exact",
    requirements: &[WINDOW_008, WINDOW_009, WINDOW_010],
    summary: "a history page holds exactly the items just before the connection's current cursor and the next cursor; a cursor that is not current gets stale_cursor; paging to the first item yields every item once, in order",
    level: Level::Must,
};

/// What the monitor knows about one connection's window.
#[derive(Clone, Debug, Default)]
pub(crate) struct WindowTrack {
    /// The window its hello asked for where `state_window` is in force (`WINDOW-001`).
    pub size: Option<u32>,
    /// The cursor of the view it holds; `None` when it holds every item.
    pub cursor: Option<Id>,
    /// The view, as its frames built it; `None` when unknown.
    pub view: Option<UiState>,
    /// History requests sent and not answered yet: id, cursor, limit.
    pub asked: Vec<(String, String, u32)>,
    /// A finding made what it holds unknown: state frames are not judged until a snapshot.
    pub diverged: bool,
    /// The server answered the window with a snapshot of the whole state (`WINDOW-011`'s or
    /// `WINDOW-006`'s finding): until its next snapshot it holds the connection as windowless, so
    /// its refusal of the cursor the client was owed follows from that finding and is not judged.
    pub unwindowed: bool,
}

impl WindowTrack {
    /// Whether the connection holds a window (its state frames carry a view, not the state).
    pub fn windowed(&self) -> bool {
        self.size.is_some()
    }

    /// The client sent a `chat.history_request` (a bounded list: the oldest is forgotten).
    pub fn asked(&mut self, id: String, before: String, limit: u32) {
        if self.asked.len() >= 64 {
            self.asked.remove(0);
        }
        self.asked.push((id, before, limit));
    }

    fn take_request(&mut self, id: &str) -> Option<(String, u32)> {
        let at = self.asked.iter().position(|(asked, _, _)| asked == id)?;
        let (_, before, limit) = self.asked.remove(at);
        Some((before, limit))
    }
}

/// A `ui_state_snapshot`: `full` is the whole state it must be a window of, where known;
/// `fresh` says it follows a cut (`WINDOW-006`) rather than a welcome.
pub(crate) fn snapshot(w: &mut WindowTrack, full: Option<&UiState>, s: &UiStateSnapshot, fresh: bool, out: &mut Out) {
    let Some(size) = w.size else {
        if s.window.is_some() {
            out.fail(&WINDOW_SNAPSHOT, WINDOW_002, "a snapshot carries window on a connection that asked for none");
        }
        return;
    };
    let requirement = if fresh { WINDOW_006 } else { WINDOW_011 };
    w.diverged = false;
    w.unwindowed = false;
    let Some(window) = &s.window else {
        out.fail(
            &WINDOW_SNAPSHOT,
            requirement,
            format!("the snapshot of a connection that asked for a window of {size} carries no window"),
        );
        // The client is owed the window's cursor; the server's later frames build on the whole
        // state it sent: judged again from the next snapshot.
        w.cursor = full.and_then(|f| window_of(f, size).1.before);
        diverge(w);
        w.unwindowed = true;
        return;
    };
    w.view = Some(s.state.clone());
    w.cursor = window.before.clone();
    let Some(full) = full else { return };
    let (expected, expected_window) = window_of(full, size);
    if s.state == expected && *window == expected_window {
        for r in [WINDOW_002, WINDOW_003, requirement] {
            out.eval(&WINDOW_SNAPSHOT, r);
        }
        return;
    }
    let suffix = full.items.len().saturating_sub(size as usize);
    let missing_held: Vec<&str> = (0..suffix)
        .filter(|&i| always_held(&full.items, i))
        .map(|i| full.items[i].id().as_str())
        .filter(|id| !s.state.items.iter().any(|item| item.id().as_str() == *id))
        .collect();
    let message = match (missing_held.is_empty(), *window == expected_window) {
        (false, _) => format!("the window leaves out always-held older items: {}", missing_held.join(", ")),
        (true, false) => format!(
            "window is {:?}, expected {:?} for a window of {size} over {} items",
            window,
            expected_window,
            full.items.len()
        ),
        (true, true) => format!("the snapshot's items are not the newest {size} and the always-held older ones"),
    };
    let broken = if missing_held.is_empty() { requirement } else { WINDOW_003 };
    let broken = if broken == WINDOW_011 { WINDOW_002 } else { broken };
    out.fail(&WINDOW_SNAPSHOT, broken, message);
    w.cursor = expected_window.before;
    diverge(w);
}

/// After a finding on what the connection holds: nothing more is judged of it until a snapshot.
fn diverge(w: &mut WindowTrack) {
    w.view = None;
    w.diverged = true;
}

/// A `ui_state_patch` on a windowed connection whose whole state is now `full`.
pub(crate) fn patch(w: &mut WindowTrack, full: Option<&UiState>, ops: &[PatchOp], out: &mut Out) {
    if w.diverged {
        return;
    }
    let Some(view) = w.view.take() else { return resync(w, full) };
    match apply_json(&view, ops) {
        Ok(next) => compare(w, full, next, WINDOW_004, out),
        Err(e) => {
            out.fail(
                &WINDOW_VIEW,
                WINDOW_005,
                format!("the patch does not apply to the view this connection holds (it addresses an item the view does not hold?): {e}"),
            );
            diverge(w);
        }
    }
}

/// A `ui_state_updated` on a windowed connection: it carries the view itself.
pub(crate) fn updated(w: &mut WindowTrack, full: Option<&UiState>, state: &UiState, out: &mut Out) {
    if w.diverged {
        return;
    }
    compare(w, full, state.clone(), WINDOW_004, out);
}

/// The catch-up patch that answered a resume from a view with cursor `before` of `base`.
pub(crate) fn catch_up(
    w: &mut WindowTrack,
    base: Option<&UiState>,
    before: Option<&Id>,
    full: Option<&UiState>,
    ops: &[PatchOp],
    out: &mut Out,
) {
    w.cursor = before.cloned();
    w.diverged = false;
    let Some(view) = base.and_then(|base| held_view(base, before)) else { return resync(w, full) };
    match apply_json(&view, ops) {
        Ok(next) => compare(w, full, next, WINDOW_012, out),
        Err(e) => {
            out.fail(
                &WINDOW_VIEW,
                WINDOW_012,
                format!("the catch-up does not apply to the view the client holds: {e}"),
            );
            diverge(w);
        }
    }
}

/// The view `got` a state frame left, against the fold's view from the cursor.
fn compare(w: &mut WindowTrack, full: Option<&UiState>, got: UiState, requirement: ReqId, out: &mut Out) {
    let Some(full) = full else {
        w.view = Some(got);
        return;
    };
    match held_view(full, w.cursor.as_ref()) {
        Some(expected) if expected == got => {
            out.eval(&WINDOW_VIEW, requirement);
            if requirement == WINDOW_004 {
                out.eval(&WINDOW_VIEW, WINDOW_005);
            }
            w.view = Some(got);
        }
        Some(expected) => {
            let held: Vec<&str> = got.items.iter().map(|i| i.id().as_str()).collect();
            let want: Vec<&str> = expected.items.iter().map(|i| i.id().as_str()).collect();
            let message = match held == want {
                true => "the view holds the right items, but not as the reducer's state has them".to_owned(),
                false => format!("the view holds items {held:?}, the fold's view from its cursor {want:?}"),
            };
            out.fail(&WINDOW_VIEW, requirement, message);
            diverge(w);
        }
        // The cursor item left the state without a fresh window: WINDOW-006's to report.
        None => {
            out.fail(&WINDOW_SNAPSHOT, WINDOW_006, "a cut removed the cursor item and no fresh window followed");
            diverge(w);
        }
    }
}

/// A delta on a windowed connection: its own state change (`STREAM-002`), to the open stream,
/// which is the last item and so always in the view.
pub(crate) fn delta(w: &mut WindowTrack, full: Option<&UiState>) {
    if !w.diverged {
        resync(w, full);
    }
}

/// Back to what the connection should hold, after a finding or from nothing known.
fn resync(w: &mut WindowTrack, full: Option<&UiState>) {
    w.view = full.and_then(|f| held_view(f, w.cursor.as_ref()));
}

/// A `chat.history_page` on a connection whose whole state is `full`. Where that is unknown (the
/// server ran on while no connection here watched), a page that reaches the first item makes it
/// known: the view the pages built is the whole state, returned.
pub(crate) fn page(w: &mut WindowTrack, full: Option<&UiState>, page: &HistoryPage, out: &mut Out) -> Option<UiState> {
    let (before, limit) = w.take_request(page.in_reply_to.as_str())?;
    if w.cursor.as_ref().map(Id::as_str) != Some(before.as_str()) {
        out.fail(
            &HISTORY_PAGES,
            WINDOW_010,
            format!(
                "a page answered cursor {before}, which is not the connection's current one; expected stale_cursor"
            ),
        );
        resync(w, full);
        return None;
    }
    out.eval(&HISTORY_PAGES, WINDOW_010);
    let cursor = w.cursor.clone()?;
    let Some(full) = full else {
        let assembled = w.view.take().map(|view| assemble(&view, &cursor, page));
        w.cursor = page.before.clone();
        w.view = assembled;
        return w.view.clone().filter(|_| page.before.is_none());
    };
    let (items, next) = page_of(full, &cursor, limit)?;
    if page.items != items || page.before != next || page.total != full.items.len() as u64 {
        let got: Vec<&str> = page.items.iter().map(|i| i.id().as_str()).collect();
        let want: Vec<&str> = items.iter().map(|i| i.id().as_str()).collect();
        out.fail(
            &HISTORY_PAGES,
            WINDOW_008,
            format!(
                "the page before {cursor} holds {got:?} with before {:?} and total {}; the state gives {want:?}, before {:?}, total {}",
                page.before.as_ref().map(Id::as_str),
                page.total,
                next.as_ref().map(Id::as_str),
                full.items.len()
            ),
        );
        w.cursor = next;
        resync(w, Some(full));
        return None;
    }
    out.eval(&HISTORY_PAGES, WINDOW_008);
    let assembled = w.view.take().map(|view| assemble(&view, &cursor, page));
    w.cursor = page.before.clone();
    let expected = held_view(full, w.cursor.as_ref());
    if page.before.is_none() {
        match (&assembled, &expected) {
            (Some(got), Some(want)) if got == want => out.eval(&HISTORY_PAGES, WINDOW_009),
            (Some(got), Some(want)) => out.fail(
                &HISTORY_PAGES,
                WINDOW_009,
                format!(
                    "paged to the first item, the connection holds {} items, the state {}",
                    got.items.len(),
                    want.items.len()
                ),
            ),
            _ => {}
        }
    }
    w.view = expected;
    None
}

/// The view a client builds from `view` and a page before `cursor`: its older always-held items
/// the page does not repeat, the page, then what it held from the old cursor on.
fn assemble(view: &UiState, cursor: &Id, page: &HistoryPage) -> UiState {
    let at = view.items.iter().position(|i| i.id() == cursor).unwrap_or(view.items.len());
    let older = view.items[..at].iter().filter(|i| !page.items.iter().any(|p| p.id() == i.id()));
    let items = older.chain(&page.items).chain(&view.items[at..]).cloned().collect();
    UiState { items, run: view.run.clone(), usage: view.usage.clone() }
}

/// An `error` answering `in_reply_to`: a `stale_cursor` must answer a cursor that is not current.
pub(crate) fn error(w: &mut WindowTrack, in_reply_to: Option<&Id>, code: ErrorCode, out: &mut Out) {
    let Some((before, _)) = in_reply_to.and_then(|id| w.take_request(id.as_str())) else { return };
    if code != ErrorCode::StaleCursor || w.unwindowed {
        return;
    }
    if w.cursor.as_ref().map(Id::as_str) == Some(before.as_str()) {
        out.fail(&HISTORY_PAGES, WINDOW_010, format!("stale_cursor for {before}, the connection's current cursor"));
    } else {
        out.eval(&HISTORY_PAGES, WINDOW_010);
    }
}

/// The whole state the monitor can know from `base`, a state the session had earlier, and `view`,
/// what a windowed connection holds now from `cursor`: the items of `base` older than the cursor
/// (those the view holds in their newer form), then the view's items from the cursor on. Exact
/// whenever nothing changed the unheld older items since `base` (a cut never does: it removes from
/// the end, and a cut through the cursor brings a fresh window). `None` when `base` does not hold
/// the cursor item, or the view does not.
pub(crate) fn splice(base: &UiState, cursor: Option<&Id>, view: &UiState) -> Option<UiState> {
    let Some(cursor) = cursor else { return Some(view.clone()) };
    let at = base.items.iter().position(|i| i.id() == cursor)?;
    let view_at = view.items.iter().position(|i| i.id() == cursor)?;
    let held = &view.items[..view_at];
    let mut items = Vec::with_capacity(at + view.items.len() - view_at);
    for item in &base.items[..at] {
        let newer = held.iter().find(|h| h.id() == item.id());
        items.push(newer.unwrap_or(item).clone());
        // An output item the view holds that `base` did not have yet follows its call.
        if let chatwire_schema::DisplayItem::ToolCall(call) = item {
            let output = held.iter().find(|h| {
                matches!(h, chatwire_schema::DisplayItem::ToolOutput(o) if o.tool_call_id == call.id)
                    && !base.items[..at].iter().any(|b| b.id() == h.id())
            });
            items.extend(output.cloned());
        }
    }
    items.extend(view.items[view_at..].iter().cloned());
    Some(UiState { items, run: view.run.clone(), usage: view.usage.clone() })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(n: u32) -> serde_json::Value {
        json!({"kind": "user_message", "id": format!("um-{n}"), "invocation_id": format!("inv-{n}"),
            "client_message_id": format!("m-{n}"), "text": format!("message {n}"), "ts": "2026-11-22T10:00:00Z"})
    }

    fn state(n: u32) -> UiState {
        serde_json::from_value(json!({"items": (1..=n).map(message).collect::<Vec<_>>(), "run": {"status": "idle"}}))
            .expect("a state")
    }

    fn snapshot_of(state: &UiState, window: Option<serde_json::Value>) -> UiStateSnapshot {
        let mut frame = json!({"seq": 3, "v": "ui_state_v1", "state": state});
        if let Some(window) = window {
            frame["window"] = window;
        }
        serde_json::from_value(frame).expect("a snapshot")
    }

    fn requirements(out: &Out) -> Vec<String> {
        out.raws.iter().map(|r| r.requirement.to_string()).collect()
    }

    /// A resume that asked for a window of 2 gets the whole state: WINDOW-011, once. The server
    /// then holds the connection as windowless: its whole-state patch and its stale_cursor for
    /// the cursor the client was owed follow from that finding. From the next (windowed)
    /// snapshot on, a stale_cursor for the current cursor is WINDOW-010's finding again.
    #[test]
    fn a_window_answered_with_the_whole_state_is_charged_once() {
        let full = state(4);
        let mut w = WindowTrack { size: Some(2), ..WindowTrack::default() };
        let mut out = Out::default();
        snapshot(&mut w, Some(&full), &snapshot_of(&full, None), false, &mut out);
        assert_eq!(requirements(&out), ["WINDOW-011"]);

        let mut out = Out::default();
        let next = state(5);
        // The whole state's patch: index 3 is an item the view of 2 does not hold.
        let ops = json!([{"op": "replace", "path": "/items/3/text", "value": "message 4"},
            {"op": "add", "path": "/items/-", "value": message(5)}]);
        patch(&mut w, Some(&next), &serde_json::from_value::<Vec<PatchOp>>(ops).expect("ops"), &mut out);
        w.asked("h1".to_owned(), "um-3".to_owned(), 2);
        error(&mut w, Some(&Id::parse("h1").expect("an id")), ErrorCode::StaleCursor, &mut out);
        assert_eq!(requirements(&out), Vec::<String>::new(), "consequences of WINDOW-011");

        let mut out = Out::default();
        let window = json!({"before": "um-4", "total": 5});
        let view = UiState { items: next.items[3..].to_vec(), run: next.run.clone(), usage: None };
        snapshot(&mut w, Some(&next), &snapshot_of(&view, Some(window)), true, &mut out);
        assert_eq!(requirements(&out), Vec::<String>::new(), "a right fresh window");
        w.asked("h2".to_owned(), "um-4".to_owned(), 2);
        error(&mut w, Some(&Id::parse("h2").expect("an id")), ErrorCode::StaleCursor, &mut out);
        assert_eq!(requirements(&out), ["WINDOW-010"]);
    }
}
