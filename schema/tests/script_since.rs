//! `AgentScript::since` agrees with the `x-chatwire-since` annotations of the script schema: a
//! script is valid under the schema an older minor defines exactly when that minor is at least
//! the one `since` names. The conformance runner decides from `since` whether a scenario is
//! applicable to a server speaking an older minor, so a step or member added later without its
//! case in `ScriptStep::since` fails here.

use std::path::Path;

use chatwire_schema::script::AgentScript;
use chatwire_schema::since::schemas_for;
use chatwire_schema::ProtocolVersion;
use serde_json::{json, Value};

const MINORS: [u16; 4] = [0, 1, 2, 3];

fn script_validator(version: ProtocolVersion) -> jsonschema::Validator {
    let doc = schemas_for(version).into_iter().find(|d| d.file == "agent-script.json").expect("agent-script.json");
    jsonschema::draft202012::options().build(&doc.schema).expect("the projected script schema compiles")
}

/// The scripts of the conformance scenarios, and one per member that a later minor added.
fn corpus() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .expect("conformance/scenarios")
        .filter_map(|e| {
            let path = e.ok()?.path();
            let scenario: Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
            Some((path.file_name()?.to_string_lossy().into_owned(), scenario.get("script")?.clone()))
        })
        .collect();
    let say = json!({"op": "say", "markdown": "hi"});
    let call = |extra: Value| {
        let mut c = json!({"tool_name": "t", "interaction_type": "ui_tool", "display": "artifact", "payload": {},
            "outcome": {"kind": "await_response"}});
        c.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"op": "tool_calls", "calls": [c]})
    };
    for (name, turn) in [
        ("plain say", json!({"steps": [say]})),
        ("say with chunks", json!({"steps": [{"op": "say", "markdown": "ab", "chunks": ["a", "b"]}]})),
        ("say with a chunk delay", json!({"steps": [{"op": "say", "markdown": "ab", "chunk_delay_ms": 5}]})),
        ("retries", json!({"steps": [say], "retries": [{"steps": [say]}]})),
        (
            "a retry's streamed say",
            json!({"steps": [say], "retries": [{"steps": [{"op": "say", "markdown": "a", "chunks": ["a"]}]}]}),
        ),
        ("a call awaiting a response", json!({"steps": [call(json!({}))]})),
        (
            "a typed response",
            json!({"steps": [call(json!({"response_schema": {"type": "object", "properties": {}}}))]}),
        ),
        ("reason", json!({"steps": [{"op": "reason", "text": "because"}]})),
        ("usage", json!({"steps": [{"op": "usage", "input_tokens": 1, "output_tokens": 2}]})),
        (
            "a call hosting a sub-agent",
            json!({"steps": [{"op": "tool_calls", "calls": [{"tool_name": "t", "interaction_type": "auto_tool",
                "display": "inline", "outcome": {"kind": "result", "value": 1},
                "subagent": {"thread": "th-1", "input": "go", "steps": [say], "end": {"status": "completed"}}}]}]}),
        ),
        ("wait and end", json!({"steps": [{"op": "wait", "ms": 1}, {"op": "end", "status": "failed", "error": "x"}]})),
    ] {
        out.push((name.to_owned(), json!({"turns": [turn]})));
    }
    out
}

#[test]
fn a_scripts_since_is_the_oldest_minor_whose_schema_accepts_it() {
    let validators: Vec<(ProtocolVersion, jsonschema::Validator)> = MINORS
        .iter()
        .map(|&minor| {
            let v = ProtocolVersion { major: 1, minor };
            (v, script_validator(v))
        })
        .collect();
    let corpus = corpus();
    let mut seen = std::collections::BTreeSet::new();
    for (name, script) in &corpus {
        let typed: AgentScript =
            serde_json::from_value(script.clone()).unwrap_or_else(|e| panic!("{name}: not a script: {e}"));
        let since = typed.since();
        seen.insert(since);
        for (version, validator) in &validators {
            assert_eq!(
                validator.is_valid(script),
                *version >= since,
                "{name}: AgentScript::since says {since}, but the {version} schema {} it",
                if validator.is_valid(script) { "accepts" } else { "refuses" }
            );
        }
    }
    // Every minor is somewhere in the corpus, so each branch of `since` was compared.
    assert_eq!(seen.len(), MINORS.len(), "the corpus covers the minors {seen:?}");
}
