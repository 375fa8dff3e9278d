//! Writes and drift-checks `fixtures/window-views/cases.jsonl`: what `chatwire_schema::window`
//! says of the states of the shared patch corpus (`fixtures/state-patches/patches.jsonl`), so that a
//! second implementation of windows (the Python kit's `chatwire.window`) proves it holds the same
//! items, cuts the same pages and projects each patch onto a view op for op (`spec/window.md`).
//!
//! For every trace, every third state along its patches gets a cursor (an item's id, or none), a
//! window size and a page limit drawn from a fixed seed, and records the ids of `window_of`,
//! `held_view` and `page_of`, and the projection of the next patch onto the view at that cursor.
//! After a deliberate change: `CHATWIRE_UPDATE_CORPORA=1 cargo test -p chatwire-schema --test
//! window_corpus`, then review the diff.

use std::path::PathBuf;

use chatwire_schema::state_patch::PatchOp;
use chatwire_schema::window::{
    held_view, page_of, window_of, ProjectError, WindowView, MAX_HISTORY_PAGE_ITEMS, MAX_WINDOW_ITEMS,
};
use chatwire_schema::{Id, UiState, MIN_ATTACHED_CONNECTIONS};
use serde_json::{json, Value};

const UPDATE_ENV: &str = "CHATWIRE_UPDATE_CORPORA";
const PATCHES: &str = "fixtures/state-patches/patches.jsonl";
const CASES: &str = "fixtures/window-views/cases.jsonl";
/// Every how many states of a trace a case is drawn.
const EVERY: usize = 3;

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// xorshift64*: the same draws on every platform and Rust version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn ids<'a>(items: impl IntoIterator<Item = &'a chatwire_schema::DisplayItem>) -> Value {
    Value::Array(items.into_iter().map(|item| json!(item.id().as_str())).collect())
}

/// One case: the state after `at` patches of the trace, a cursor, a size and a limit, and what the
/// crate says of them.
fn case(state: &UiState, at: usize, next_patch: Option<&[PatchOp]>, rng: &mut Rng) -> Value {
    let cursor: Option<Id> = match state.items.len() {
        0 => None,
        n => match rng.below(5) {
            0 => None,
            _ => Some(state.items[rng.below(n)].id().clone()),
        },
    };
    let size = 1 + rng.below(state.items.len() + 2) as u32;
    let limit = 1 + rng.below(state.items.len() + 1) as u32;
    let (window, about) = window_of(state, size);
    let held = held_view(state, cursor.as_ref()).expect("the cursor names an item of the state");
    let page = match &cursor {
        Some(c) => {
            let (items, before) = page_of(state, c, limit).expect("the cursor names an item");
            json!({"ids": ids(&items), "before": before.map(|b| b.as_str().to_owned())})
        }
        None => Value::Null,
    };
    let project = next_patch.map(|ops| {
        let mut view = WindowView::at_cursor(state, size, cursor.as_ref()).expect("the cursor names an item");
        match view.project(ops) {
            Ok(projected) => json!({"ops": ops, "projected": projected, "start": view.start()}),
            Err(ProjectError::CursorRemoved) => json!({"ops": ops, "error": "cursor_removed"}),
            Err(ProjectError::Unsupported { .. }) => json!({"ops": ops, "error": "unsupported"}),
        }
    });
    json!({
        "at": at,
        "cursor": cursor.map(|c| c.as_str().to_owned()),
        "size": size,
        "limit": limit,
        "window": {"ids": ids(&window.items), "before": about.before.map(|b| b.as_str().to_owned()), "total": about.total},
        "held": ids(&held.items),
        "page": page,
        "project": project,
    })
}

fn cases(patches: &str) -> String {
    let mut rng = Rng(0x5EED_0000_0000_1202);
    let limits = json!({
        "max_window_items": MAX_WINDOW_ITEMS,
        "max_history_page_items": MAX_HISTORY_PAGE_ITEMS,
        "min_attached_connections": MIN_ATTACHED_CONNECTIONS,
    });
    let mut out = serde_json::to_string(&json!({"limits": limits})).expect("serializes") + "\n";
    for line in patches.lines() {
        let trace: Value = serde_json::from_str(line).expect("a patch trace parses");
        let mut state: Value = trace["initial"].clone();
        let steps: Vec<Vec<PatchOp>> =
            serde_json::from_value(trace["patches"].clone()).expect("patches are the crate's ops");
        let mut drawn = Vec::new();
        for at in 0..=steps.len() {
            if at % EVERY == 0 {
                let typed: UiState = serde_json::from_value(state.clone()).expect("a state of the corpus");
                drawn.push(case(&typed, at, steps.get(at).map(Vec::as_slice), &mut rng));
            }
            if let Some(ops) = steps.get(at) {
                let raw: Vec<json_patch::PatchOperation> =
                    serde_json::from_value(serde_json::to_value(ops).expect("serializes")).expect("RFC 6902");
                json_patch::patch(&mut state, &raw).expect("the corpus's patches apply");
            }
        }
        let line = json!({"name": trace["name"], "cases": drawn});
        out.push_str(&serde_json::to_string(&line).expect("serializes"));
        out.push('\n');
    }
    out
}

#[test]
fn window_corpus_is_what_the_window_module_says() {
    let patches = std::fs::read_to_string(repo_path(PATCHES)).expect("the state-patch corpus is committed");
    let generated = cases(&patches);
    // The corpus must reach every branch a second implementation can get wrong.
    for needle in ["\"error\":\"cursor_removed\"", "\"projected\":[", "\"before\":null", "\"page\":{"] {
        assert!(generated.contains(needle), "the window corpus has no case with {needle}");
    }
    let path = repo_path(CASES);
    if std::env::var_os(UPDATE_ENV).is_some() {
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create the corpus directory");
        std::fs::write(&path, &generated).expect("write the corpus");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{CASES} differs from what this test generates; after a deliberate change run \
         {UPDATE_ENV}=1 cargo test -p chatwire-schema --test window_corpus and review the diff"
    );
}
