use serde_json::json;

use super::*;
use crate::ui_state::UserMessageItem;

fn id(s: &str) -> Id {
    Id::try_from(s.to_owned()).expect("a valid id")
}

fn message(n: usize) -> DisplayItem {
    DisplayItem::UserMessage(UserMessageItem {
        id: id(&format!("m{n}")),
        invocation_id: id(&format!("i{n}")),
        client_message_id: id(&format!("c{n}")),
        text: format!("message {n}"),
        ts: "2026-01-15T10:00:00Z".into(),
    })
}

fn form(n: usize) -> DisplayItem {
    serde_json::from_value(json!({
        "kind": "tool_call", "id": format!("form{n}"), "invocation_id": format!("i{n}"), "tool_name": "ask",
        "component_type": "form", "interaction_type": "ui_tool", "display": "inline",
        "awaiting_response": true, "status": "pending", "payload": {}, "ts": "2026-01-15T10:00:00Z"
    }))
    .expect("a valid tool call item")
}

fn thread(n: usize, form_at: usize) -> UiState {
    UiState { items: (0..n).map(|i| if i == form_at { form(i) } else { message(i) }).collect(), ..UiState::default() }
}

#[test]
fn a_window_keeps_an_old_form_and_names_its_first_item() {
    let state = thread(10, 2);
    let (view, window) = window_of(&state, 3);
    let held: Vec<&str> = view.items.iter().map(|i| i.id().as_str()).collect();
    assert_eq!(held, ["form2", "m7", "m8", "m9"]);
    assert_eq!(window, Window { before: Some(id("m7")), total: 10 });
}

#[test]
fn a_window_larger_than_the_thread_holds_everything_and_has_no_cursor() {
    let state = thread(4, 99);
    let (view, window) = window_of(&state, 10);
    assert_eq!(view, state);
    assert_eq!(window.before, None);
}

#[test]
fn pages_absorb_held_items_and_stop_at_the_first() {
    let state = thread(10, 2);
    let mut view = WindowView::open(&state, 3);
    let page = view.page(&state, 4);
    assert_eq!(page.items.iter().map(|i| i.id().as_str()).collect::<Vec<_>>(), ["m3", "m4", "m5", "m6"]);
    assert_eq!(page.before, Some(id("m3")));
    let page = view.page(&state, 4);
    assert_eq!(page.items.iter().map(|i| i.id().as_str()).collect::<Vec<_>>(), ["m0", "m1", "form2"]);
    assert_eq!(page.before, None);
    assert!(view.holds_all());
    assert!(view.page(&state, 4).items.is_empty());
}

#[test]
fn ops_on_unheld_items_are_left_out_and_indices_follow_the_view() {
    let state = thread(10, 2);
    let mut view = WindowView::open(&state, 3);
    let ops = vec![
        PatchOp::Test { path: "/items/4/id".into(), value: json!("m4") },
        PatchOp::Replace { path: "/items/4/text".into(), value: json!("x") },
        PatchOp::Test { path: "/items/2/id".into(), value: json!("form2") },
        PatchOp::Replace { path: "/items/2/status".into(), value: json!("completed") },
        PatchOp::Test { path: "/items/8/id".into(), value: json!("m8") },
        PatchOp::Add { path: "/items/-".into(), value: json!({"kind": "user_message"}) },
        PatchOp::Replace { path: "/run".into(), value: json!({"status": "idle"}) },
    ];
    let projected = view.project(&ops).unwrap();
    let paths: Vec<&str> = projected.iter().map(PatchOp::path).collect();
    assert_eq!(paths, ["/items/0/id", "/items/0/status", "/items/2/id", "/items/-", "/run"]);
}

#[test]
fn an_output_inserted_after_a_held_call_is_held_and_moves_the_cursor() {
    let state = thread(10, 2);
    let mut view = WindowView::open(&state, 3);
    let ops = vec![
        PatchOp::Test { path: "/items/2/id".into(), value: json!("form2") },
        PatchOp::Add { path: "/items/3".into(), value: json!({"kind": "tool_output", "id": "form2.output"}) },
    ];
    let projected = view.project(&ops).unwrap();
    assert_eq!(projected[1].path(), "/items/1");
    assert_eq!((view.start, view.pinned.clone()), (8, vec![2, 3]));
    let unheld =
        vec![PatchOp::Add { path: "/items/5".into(), value: json!({"kind": "tool_output", "id": "x.output"}) }];
    assert_eq!(view.project(&unheld).unwrap(), vec![]);
    assert_eq!(view.start, 9);
}

#[test]
fn a_cut_through_the_cursor_asks_for_a_fresh_window_and_changes_nothing() {
    let state = thread(10, 2);
    let mut view = WindowView::open(&state, 3);
    let before = view.clone();
    let cut: Vec<PatchOp> = (6..10).rev().map(|i| PatchOp::Remove { path: format!("/items/{i}") }).collect();
    assert_eq!(view.project(&cut), Err(ProjectError::CursorRemoved));
    assert_eq!(view, before);
    let short: Vec<PatchOp> = (8..10).rev().map(|i| PatchOp::Remove { path: format!("/items/{i}") }).collect();
    assert_eq!(view.project(&short).unwrap().iter().map(PatchOp::path).collect::<Vec<_>>(), ["/items/3", "/items/2"]);
}

#[test]
fn ops_no_reducer_sends_are_refused() {
    let mut view = WindowView::open(&thread(3, 9), 1);
    let op = PatchOp::Move { from: "/items/0".into(), path: "/items/1".into() };
    assert!(matches!(view.project(&[op]), Err(ProjectError::Unsupported { op: "move", .. })));
}
