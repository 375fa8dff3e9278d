//! Writes and drift-checks `fixtures/response-schemas/cases.jsonl`: what this crate's checker
//! (`chatwire_schema::response_schema`, `TOOL-021`..`TOOL-023`) says of a schema, and of values
//! against it. The npm package's copy (`tools/npm/src/response_schema.ts`) and the Python kit's
//! (`tools/python/src/chatwire/response_schema.py`) replay the corpus and must give the same
//! verdicts: accepted, or the first failing JSON Pointer and keyword.
//!
//! One line per case: `{"schema": …, "schema_error": null | "<kind>", "values": [{"value": …,
//! "verdict": null | {"pointer", "keyword"}}]}`. Systematic, not random: every keyword alone and
//! mixed, each with values that pass and values that fail every check, in every type. After a
//! deliberate change: `CHATWIRE_UPDATE_CORPORA=1 cargo test -p chatwire-schema --test
//! response_schema_corpus`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use chatwire_schema::response_schema::{ResponseSchema, SchemaError};
use serde_json::{json, Value};

const UPDATE_ENV: &str = "CHATWIRE_UPDATE_CORPORA";
const CORPUS: &str = "fixtures/response-schemas/cases.jsonl";

fn repo_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Values of every JSON type, with edge cases: integers written with a fraction, astral
/// characters, empty containers, names that need escaping in a JSON Pointer.
fn values() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(3),
        json!(3.0),
        json!(2.5),
        json!(150),
        json!(151),
        json!(1e300),
        json!(""),
        json!("a"),
        json!("abcde"),
        json!("abcdef"),
        json!("é😀"),
        json!([]),
        json!(["a"]),
        json!(["a", "c"]),
        json!([1, "a"]),
        json!({}),
        json!({"name": "ann"}),
        json!({"name": "ann", "age": 3}),
        json!({"name": "ann", "age": 3.0, "tags": ["a", "b"]}),
        json!({"name": "", "age": -1}),
        json!({"name": "ann", "age": 1.5}),
        json!({"name": "ann", "extra": true}),
        json!({"name": "ann", "a/b": 1, "c~d": 2}),
        json!({"name": "ann", "nested": {"ok": "x"}}),
        json!({"name": "ann", "nested": {"ok": 1}}),
        json!({"name": "ann", "nested": {}}),
    ]
}

/// Schemas: each keyword alone, then the mixes a form uses, then schemas outside the subset.
fn schemas() -> Vec<Value> {
    let mut out = vec![json!({})];
    for t in ["null", "boolean", "object", "array", "number", "integer", "string"] {
        out.push(json!({ "type": t }));
    }
    out.extend([
        json!({"type": ["string", "null"]}),
        json!({"enum": ["a", 3, null, {"x": [1]}]}),
        json!({"enum": [3]}),
        json!({"minLength": 1}),
        json!({"maxLength": 5}),
        json!({"type": "string", "minLength": 1, "maxLength": 2}),
        json!({"minimum": 0}),
        json!({"maximum": 150}),
        json!({"type": "integer", "minimum": 0, "maximum": 150}),
        json!({"type": "number", "minimum": -0.5, "maximum": 2.5}),
        json!({"required": ["name", "age"]}),
        json!({"properties": {"name": {"type": "string", "minLength": 1}}}),
        json!({"additionalProperties": false}),
        json!({"additionalProperties": {"type": "integer"}}),
        json!({"properties": {"name": {}}, "additionalProperties": false}),
        json!({"items": {"enum": ["a", "b"]}}),
        json!({"type": "array", "items": {"type": "string", "maxLength": 1}}),
        json!({
            "title": "Profile", "description": "Who you are",
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 5, "title": "Name"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}},
                "nested": {"type": "object", "properties": {"ok": {"type": "string"}}, "required": ["ok"]}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
        json!({"type": "object", "properties": {"a/b": {"type": "string"}}, "additionalProperties": {"type": "string"}}),
        // Outside the subset: refused before any value is checked.
        json!([]),
        json!({"pattern": "x"}),
        json!({"properties": {"a": {"const": 1}}}),
        json!({"type": "text"}),
        json!({"type": []}),
        json!({"required": "name"}),
        json!({"enum": []}),
        json!({"minLength": -1}),
        json!({"maxLength": 1.5}),
        json!({"minimum": "0"}),
        json!({"title": 3}),
        json!({"items": true}),
        json!({"additionalProperties": 1}),
    ]);
    let mut deep = json!({"type": "string"});
    for _ in 0..=chatwire_schema::response_schema::MAX_DEPTH {
        deep = json!({ "items": deep });
    }
    out.push(deep);
    out
}

fn schema_error_kind(e: &SchemaError) -> &'static str {
    match e {
        SchemaError::NotAnObject { .. } => "NotAnObject",
        SchemaError::UnknownKeyword { .. } => "UnknownKeyword",
        SchemaError::BadKeyword { .. } => "BadKeyword",
        SchemaError::TooDeep { .. } => "TooDeep",
    }
}

fn generate() -> String {
    let mut out = String::new();
    for schema in schemas() {
        let case = match ResponseSchema::new(schema.clone()) {
            Err(e) => json!({"schema": schema, "schema_error": schema_error_kind(&e), "values": []}),
            Ok(checker) => {
                let verdicts: Vec<Value> = values()
                    .into_iter()
                    .map(|value| {
                        let verdict = match checker.check(&value) {
                            Ok(()) => Value::Null,
                            Err(v) => json!({"pointer": v.pointer, "keyword": v.keyword}),
                        };
                        json!({"value": value, "verdict": verdict})
                    })
                    .collect();
                json!({"schema": schema, "schema_error": null, "values": verdicts})
            }
        };
        out.push_str(&case.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn the_response_schema_corpus_is_what_the_checker_says() {
    let generated = generate();
    // The corpus is worth replaying only if it reaches every outcome.
    let mut seen = BTreeSet::new();
    for line in generated.lines() {
        let case: Value = serde_json::from_str(line).expect("a case parses");
        if let Some(kind) = case["schema_error"].as_str() {
            seen.insert(kind.to_owned());
        }
        for v in case["values"].as_array().expect("values") {
            seen.insert(v["verdict"]["keyword"].as_str().unwrap_or("accepted").to_owned());
        }
    }
    for outcome in [
        "accepted",
        "type",
        "enum",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "required",
        "additionalProperties",
        "NotAnObject",
        "UnknownKeyword",
        "BadKeyword",
        "TooDeep",
    ] {
        assert!(seen.contains(outcome), "the corpus has no case of {outcome}");
    }
    let path = repo_path(CORPUS);
    if std::env::var_os(UPDATE_ENV).is_some() {
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).expect("create the corpus directory");
        std::fs::write(&path, &generated).expect("write the corpus");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{CORPUS} differs from what this test generates; after a deliberate change run \
         {UPDATE_ENV}=1 cargo test -p chatwire-schema --test response_schema_corpus and review the diff"
    );
}
