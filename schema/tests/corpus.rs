//! The example message corpus (`fixtures/messages`), one test per file.
//!
//! `valid/<wire type>/*.json` holds one frame each: the schema accepts it, serde reads it into
//! [`ClientFrame`]/[`ServerFrame`], and writing it back gives the identical JSON value.
//! `invalid/<wire type | envelope>/*.json` holds a case wrapper (format: `fixtures/messages/README.md`):
//! the validator rejects the frame with the expected kind at the expected instance path, and serde
//! rejects it too, so schema and types accept exactly the same frames on the corpus.

use std::path::Path;
use std::sync::OnceLock;

use chatwire_schema::validate::direction_of;
use chatwire_schema::{ClientFrame, Direction, FrameError, FrameValidator, ServerFrame};
use serde::Deserialize;
use serde_json::Value;

type TestResult = datatest_stable::Result<()>;

/// Compiling every schema takes a while; the harness runs the cases on several threads.
fn validator() -> &'static FrameValidator {
    static VALIDATOR: OnceLock<FrameValidator> = OnceLock::new();
    VALIDATOR.get_or_init(FrameValidator::new)
}

/// The name of the directory a fixture sits in: its wire type, or `envelope`.
fn group_of(path: &Path) -> Result<&str, String> {
    path.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .ok_or_else(|| format!("{}: fixture is not inside a named directory", path.display()))
}

fn direction_of_group(path: &Path, group: &str) -> Result<Direction, String> {
    direction_of(group).ok_or_else(|| format!("{}: directory {group:?} names no wire type", path.display()))
}

fn valid_frame(path: &Path, contents: String) -> TestResult {
    let wire = group_of(path)?;
    let direction = direction_of_group(path, wire)?;
    let frame: Value = serde_json::from_str(&contents)?;

    let checked =
        validator().check(direction, &frame).map_err(|e| format!("the schema rejects a valid fixture: {e}"))?;
    if checked != wire {
        return Err(format!("frame type {checked:?} is filed under {wire:?}").into());
    }

    let written = match direction {
        Direction::ClientToServer => {
            let typed: ClientFrame = serde_json::from_value(frame.clone())
                .map_err(|e| format!("serde rejects what the schema accepts: {e}"))?;
            if let ClientFrame::Hello(hello) = &typed {
                // A corpus script is an example to copy, so it must also pass the checks the schema cannot express.
                if let Some(script) = &hello.script {
                    script.validate().map_err(|e| format!("the script would get invalid_script: {e}"))?;
                }
            }
            serde_json::to_value(&typed)?
        }
        Direction::ServerToClient => {
            let typed: ServerFrame = serde_json::from_value(frame.clone())
                .map_err(|e| format!("serde rejects what the schema accepts: {e}"))?;
            serde_json::to_value(&typed)?
        }
    };
    match first_difference(&frame, &written, String::new()) {
        None => Ok(()),
        Some(diff) => Err(format!("the round trip through the Rust type changes the frame: {diff}").into()),
    }
}

/// Where two JSON values first differ, as a JSON Pointer and both sides; `None` when equal.
fn first_difference(fixture: &Value, written: &Value, at: String) -> Option<String> {
    match (fixture, written) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => first_difference(x, y, here),
                    (Some(x), None) => Some(format!("{here}: {x} is dropped")),
                    (None, Some(y)) => Some(format!("{here}: {y} is added")),
                    (None, None) => None,
                }
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().find_map(|(i, (x, y))| first_difference(x, y, format!("{at}/{i}")))
        }
        _ if fixture == written => None,
        _ => Some(format!("{at}: fixture has {fixture}, serde writes {written}")),
    }
}

/// How the validator must reject an invalid fixture.
#[derive(Debug, Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Expect {
    Invalid,
    UnknownType,
    NotObject,
    MissingType,
}

/// The wrapper of an invalid fixture (`fixtures/messages/README.md`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InvalidCase {
    rule: String,
    expect_path: String,
    expect: Expect,
    #[serde(default)]
    direction: Option<String>,
    frame: Value,
}

fn invalid_frame(path: &Path, contents: String) -> TestResult {
    let group = group_of(path)?;
    let case: InvalidCase = serde_json::from_str(&contents).map_err(|e| format!("bad case wrapper: {e}"))?;
    if case.rule.trim().is_empty() {
        return Err("the case must say which rule it breaks".into());
    }
    let direction = if group == "envelope" {
        match case.direction.as_deref() {
            Some("client-to-server") => Direction::ClientToServer,
            Some("server-to-client") => Direction::ServerToClient,
            other => {
                return Err(format!(
                    "an envelope case needs direction client-to-server or server-to-client, got {other:?}"
                )
                .into())
            }
        }
    } else {
        if case.direction.is_some() {
            return Err("direction comes from the directory; only envelope cases name it".into());
        }
        let wire = case.frame.get("type").and_then(Value::as_str);
        if wire != Some(group) {
            return Err(format!(
                "a case under {group:?} must keep type {group:?} so it tests that schema, got {wire:?}"
            )
            .into());
        }
        direction_of_group(path, group)?
    };
    if case.expect != Expect::Invalid && !case.expect_path.is_empty() {
        return Err("only `invalid` cases report violations; expect_path must be \"\"".into());
    }

    let verdict = validator().check(direction, &case.frame);
    match (case.expect, &verdict) {
        (_, Ok(wire)) => return Err(format!("the schema accepts this {wire} frame; rule: {}", case.rule).into()),
        (Expect::Invalid, Err(FrameError::Invalid(violations))) => {
            if !violations.iter().any(|v| v.instance_path == case.expect_path) {
                let found: Vec<String> = violations.iter().map(ToString::to_string).collect();
                return Err(format!("no violation at {:?}; reported: {}", case.expect_path, found.join("; ")).into());
            }
        }
        (Expect::UnknownType, Err(FrameError::UnknownType(_)))
        | (Expect::NotObject, Err(FrameError::NotObject))
        | (Expect::MissingType, Err(FrameError::MissingType)) => {}
        (expect, Err(e)) => return Err(format!("expected {expect:?}, the validator says: {e}").into()),
    }

    let serde_verdict = match direction {
        Direction::ClientToServer => serde_json::from_value::<ClientFrame>(case.frame).map(|f| format!("{f:?}")),
        Direction::ServerToClient => serde_json::from_value::<ServerFrame>(case.frame).map(|f| format!("{f:?}")),
    };
    match serde_verdict {
        Err(_) => Ok(()),
        Ok(read) => Err(format!("the schema rejects this frame but serde reads it as {read}").into()),
    }
}

datatest_stable::harness! {
    { test = valid_frame, root = "../fixtures/messages/valid", pattern = r"\.json$" },
    { test = invalid_frame, root = "../fixtures/messages/invalid", pattern = r"\.json$" },
}
