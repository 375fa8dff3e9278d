//! What the example message corpus (`fixtures/messages`) covers, as a whole.
//!
//! `corpus.rs` checks each fixture on its own; this checks that the set is complete: every wire
//! type has examples, and the valid frames use every value of the protocol's closed enums and
//! tagged unions. The expected values come from the generated schemas, so a new variant without
//! an example fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chatwire_schema::schema_gen::root_schema;
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ClientFrame, ServerFrame};
use serde_json::Value;

fn corpus_dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/messages").join(kind)
}

/// `(directory name, file contents as JSON)` of every fixture under `valid/` or `invalid/`.
fn load(kind: &str) -> Vec<(String, PathBuf, Value)> {
    let mut out = Vec::new();
    let root = corpus_dir(kind);
    let dirs = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("cannot list {}: {e}", root.display()));
    for dir in dirs {
        let dir = dir.expect("readable directory entry").path();
        let group = dir.file_name().and_then(|n| n.to_str()).expect("UTF-8 directory name").to_owned();
        for file in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())) {
            let file = file.expect("readable directory entry").path();
            if file.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", file.display()));
            out.push((group.clone(), file, value));
        }
    }
    out
}

fn count_by_group(fixtures: &[(String, PathBuf, Value)]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for (group, _, _) in fixtures {
        *counts.entry(group.as_str()).or_insert(0) += 1;
    }
    counts
}

fn all_wire_types() -> impl Iterator<Item = &'static str> {
    ClientFrame::TYPES.iter().chain(ServerFrame::TYPES).copied()
}

#[test]
fn every_wire_type_has_two_valid_fixtures_and_the_corpus_has_its_size() {
    let valid = load("valid");
    let counts = count_by_group(&valid);
    for group in counts.keys() {
        assert!(all_wire_types().any(|t| t == *group), "valid/{group} names no wire type");
    }
    let thin: Vec<String> = all_wire_types()
        .filter(|t| counts.get(t).copied().unwrap_or(0) < 2)
        .map(|t| format!("{t}: {}", counts.get(t).copied().unwrap_or(0)))
        .collect();
    assert!(thin.is_empty(), "wire types with fewer than 2 valid fixtures: {thin:?}");
    assert!(valid.len() >= 45, "only {} valid fixtures", valid.len());
}

#[test]
fn every_wire_type_has_an_invalid_fixture() {
    let invalid = load("invalid");
    let counts = count_by_group(&invalid);
    for group in counts.keys() {
        assert!(*group == "envelope" || all_wire_types().any(|t| t == *group), "invalid/{group} names no wire type");
    }
    let missing: Vec<&str> = all_wire_types().filter(|t| !counts.contains_key(t)).collect();
    assert!(missing.is_empty(), "wire types without an invalid fixture: {missing:?}");
    assert!(invalid.len() >= 65, "only {} invalid fixtures", invalid.len());
    let kinds: BTreeSet<&str> = invalid.iter().filter_map(|(_, _, case)| case["expect"].as_str()).collect();
    let wanted = BTreeSet::from(["invalid", "unknown_type", "not_object", "missing_type"]);
    assert_eq!(kinds, wanted, "every rejection kind has a case");
}

/// The values of a closed enum (`const` per branch) or the tags of a tagged union
/// (`properties.<tag>.const` per branch) in the union schema's `$defs`.
fn schema_values(union: &Value, def: &str, tag: Option<&str>) -> BTreeSet<String> {
    let branches = union["$defs"][def]["oneOf"].as_array().unwrap_or_else(|| panic!("$defs/{def} is not a oneOf"));
    let values: BTreeSet<String> = branches
        .iter()
        .map(|b| match tag {
            None => &b["const"],
            Some(tag) => &b["properties"][tag]["const"],
        })
        .map(|c| c.as_str().unwrap_or_else(|| panic!("$defs/{def}: a branch without a string const")).to_owned())
        .collect();
    assert!(!values.is_empty(), "$defs/{def} has no values");
    values
}

/// Values the valid corpus uses, per enum or union name.
#[derive(Default)]
struct Seen(BTreeMap<&'static str, BTreeSet<String>>);

impl Seen {
    fn add(&mut self, name: &'static str, value: &Value) {
        if let Some(s) = value.as_str() {
            self.0.entry(name).or_default().insert(s.to_owned());
        }
    }

    fn assert_covers(&self, union: &Value, def: &'static str, tag: Option<&str>) {
        let expected = schema_values(union, def, tag);
        let seen = self.0.get(def).cloned().unwrap_or_default();
        let missing: Vec<&String> = expected.difference(&seen).collect();
        assert!(missing.is_empty(), "no valid fixture uses {def} value(s) {missing:?}");
    }
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

#[test]
fn valid_corpus_uses_every_client_enum_value() {
    let mut seen = Seen::default();
    let mut resume_hellos = 0;
    for (group, _, frame) in load("valid") {
        match group.as_str() {
            "chat.tool_call_response" => seen.add("ResponseOutcome", &frame["outcome"]["action"]),
            "session.hello" => {
                resume_hellos += usize::from(frame.get("resume").is_some());
                for turn in items(&frame["script"]["turns"]) {
                    for step in items(&turn["steps"]) {
                        seen.add("ScriptStep", &step["op"]);
                        seen.add("ScriptEnd", &step["status"]);
                        for call in items(&step["calls"]) {
                            seen.add("ScriptOutcome", &call["outcome"]["kind"]);
                            seen.add("InteractionType", &call["interaction_type"]);
                            seen.add("DisplayMode", &call["display"]);
                            for approval in items(&call["output"]["approvals"]) {
                                seen.add("ApprovalDecision", approval);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    assert!(resume_hellos >= 1, "no session.hello with resume");
    let union = root_schema::<ClientFrame>();
    seen.assert_covers(&union, "ResponseOutcome", Some("action"));
    seen.assert_covers(&union, "ScriptStep", Some("op"));
    seen.assert_covers(&union, "ScriptOutcome", Some("kind"));
    for def in ["ScriptEnd", "InteractionType", "DisplayMode", "ApprovalDecision"] {
        seen.assert_covers(&union, def, None);
    }
}

#[test]
fn valid_corpus_uses_every_server_enum_value() {
    let mut seen = Seen::default();
    let (mut errors_with_seq, mut errors_without_seq, mut unknown_capabilities) = (0, 0, 0);
    for (group, _, frame) in load("valid") {
        match group.as_str() {
            "chat.run_complete" => seen.add("RunCompleteStatus", &frame["status"]),
            "chat.tool_call_complete" => seen.add("CompletionStatus", &frame["status"]),
            "chat.tool_call_dismiss" => seen.add("Initiator", &frame["initiated_by"]),
            "chat.tool_output" => seen.add("ApprovalDecision", &frame["approval"]),
            "chat.tool_call" => {
                seen.add("InteractionType", &frame["interaction_type"]);
                seen.add("DisplayMode", &frame["display"]);
            }
            "ui_state_snapshot" | "ui_state_updated" => {
                seen.add("RunStatus", &frame["state"]["run"]["status"]);
                for item in items(&frame["state"]["items"]) {
                    seen.add("DisplayItem", &item["kind"]);
                    if item["kind"] == "tool_call" {
                        seen.add("ToolCallStatus", &item["status"]);
                    }
                }
            }
            "session.welcome" => {
                let other =
                    |c: &Value| c.as_str().is_some_and(|s| matches!(Capability::from_wire(s), Capability::Other(_)));
                unknown_capabilities += items(&frame["capabilities"]).iter().filter(|c| other(c)).count();
            }
            "error" => match frame.get("seq") {
                Some(_) => errors_with_seq += 1,
                None => errors_without_seq += 1,
            },
            _ => {}
        }
    }
    assert!(unknown_capabilities >= 1, "no welcome offers a capability this crate does not know");
    assert!(errors_with_seq >= 1 && errors_without_seq >= 1, "error frames need examples with and without seq");
    let union = root_schema::<ServerFrame>();
    seen.assert_covers(&union, "DisplayItem", Some("kind"));
    for def in [
        "RunCompleteStatus",
        "CompletionStatus",
        "Initiator",
        "ApprovalDecision",
        "InteractionType",
        "DisplayMode",
        "RunStatus",
        "ToolCallStatus",
    ] {
        seen.assert_covers(&union, def, None);
    }
}
