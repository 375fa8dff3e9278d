//! Property tests of windows (`spec/window.md`) over the trace model's valid event sequences:
//! a window opened anywhere in a session and moved along by the projected patch of every later
//! event is always exactly the view its cursor defines, and paging back from any window reaches
//! the first item with every item once, in order.

#[path = "support/trace_model.rs"]
mod trace_model;

use chatwire_schema::window::{held_view, page_of, window_of, ProjectError, WindowView};
use chatwire_schema::{DisplayItem, Id, UiState};
use proptest::prelude::*;
use trace_model::*;

fn ids(items: &[DisplayItem]) -> Vec<Id> {
    items.iter().map(|i| i.id().clone()).collect()
}

/// Pages from `cursor` back to the first item with `limit` items per page; the pages oldest first.
fn page_to_start(state: &UiState, mut cursor: Option<Id>, limit: u32) -> Vec<DisplayItem> {
    let mut pages: Vec<Vec<DisplayItem>> = Vec::new();
    while let Some(before) = cursor {
        let (items, next) = page_of(state, &before, limit).expect("a page of a cursor the state holds");
        assert!(!items.is_empty() && items.len() <= limit as usize, "a page holds 1..=limit items");
        pages.push(items);
        cursor = next;
    }
    pages.into_iter().rev().flatten().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// WINDOW-004/005/006: the projected patches keep the view equal to `held_view` of its cursor;
    /// a cut that removes the cursor item is the only thing that asks for a fresh window.
    #[test]
    fn projected_patches_keep_the_view(plan in plan_strategy(), at in 0usize..64, size in 1u32..12) {
        let frames = build(&plan, false);
        let split = at.min(frames.len());
        let mut state = fold_valid(&frames[..split])?;
        let mut window = WindowView::open(&state, size);
        let mut view = serde_json::to_value(window.view(&state)).unwrap();
        for frame in &frames[split..] {
            let ops = state.apply_with_patch(event(frame)).expect("the model's events are valid");
            match window.project(&ops) {
                Ok(projected) => {
                    let patch: json_patch::Patch =
                        serde_json::from_value(serde_json::to_value(&projected).unwrap()).unwrap();
                    json_patch::patch(&mut view, &patch).map_err(|e| TestCaseError::fail(format!("{e}")))?;
                }
                Err(ProjectError::CursorRemoved) => {
                    window = WindowView::open(&state, size);
                    view = serde_json::to_value(window.view(&state)).unwrap();
                }
                Err(other) => return Err(TestCaseError::fail(other.to_string())),
            }
            let expected = held_view(&state, window.cursor(&state).as_ref()).expect("the cursor item is held");
            prop_assert_eq!(&view, &serde_json::to_value(&expected).unwrap());
            prop_assert_eq!(&expected, &window.view(&state));
        }
    }

    /// WINDOW-002/003/008/009: a window holds the newest items and every always-held older one,
    /// and paging back from it yields every item before the cursor once, in display order.
    #[test]
    fn paging_from_any_window_reaches_the_first_item(plan in plan_strategy(), size in 1u32..12, limit in 1u32..9) {
        let state = fold_valid(&build(&plan, false))?;
        let (view, window) = window_of(&state, size);
        prop_assert_eq!(window.total, state.items.len() as u64);
        let suffix = state.items.len().saturating_sub(size as usize);
        prop_assert_eq!(&view.items[view.items.len() - (state.items.len() - suffix)..], &state.items[suffix..]);
        prop_assert_eq!(window.before.is_some(), suffix > 0);
        for (i, item) in state.items[..suffix].iter().enumerate() {
            let held = view.items.iter().any(|v| v.id() == item.id());
            prop_assert_eq!(held, chatwire_schema::window::always_held(&state.items, i));
        }
        let mut whole = page_to_start(&state, window.before.clone(), limit);
        whole.extend_from_slice(&state.items[suffix..]);
        prop_assert_eq!(ids(&whole), ids(&state.items));
    }
}
