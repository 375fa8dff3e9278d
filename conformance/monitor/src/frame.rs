//! Frame-level checks: one JSON object per text frame, valid against the schema of its `type`
//! (FRAME-001, FRAME-002, FRAME-003, ID-001), text frames only (TRANSPORT-001), and every `ts` in
//! RFC 3339 (FRAME-004).

use chatwire_schema::{FrameError, ReqId, Violation};
use serde_json::Value;

use crate::finding::{CheckDef, Raw};
use chatwire_schema::requirements::Level;

const FRAME_001: ReqId = ReqId::new("FRAME-001");
const FRAME_002: ReqId = ReqId::new("FRAME-002");
const FRAME_003: ReqId = ReqId::new("FRAME-003");
const FRAME_004: ReqId = ReqId::new("FRAME-004");
const ID_001: ReqId = ReqId::new("ID-001");
const INT_002: ReqId = ReqId::new("INT-002");
const TRANSPORT_001: ReqId = ReqId::new("TRANSPORT-001");

/// Every server frame is one JSON object that validates against the schema of its `type`.
pub static WIRE_SCHEMA_VALID: CheckDef = CheckDef {
    id: "wire-schema-valid",
    requirements: &[FRAME_001, FRAME_002, FRAME_003, ID_001, INT_002],
    summary: "every server frame is one JSON object, valid against the schema of its type, with no unknown members",
    level: Level::Must,
};

/// Servers send text frames only.
pub static TEXT_FRAMES_ONLY: CheckDef = CheckDef {
    id: "text-frames-only",
    requirements: &[TRANSPORT_001],
    summary: "the server sends text frames only",
    level: Level::Must,
};

/// Every `ts` is RFC 3339 with an offset.
pub static TS_FORMAT: CheckDef = CheckDef {
    id: "ts-rfc3339",
    requirements: &[FRAME_004],
    summary: "every ts is an RFC 3339 date-time with a time zone offset",
    level: Level::Must,
};

/// Deepest nesting serde_json reads; a deeper frame is refused as too deep, not as "not JSON".
const RECURSION_LIMIT: usize = 128;

/// Parses a server text frame, saying precisely what is wrong when it is not one JSON value.
pub(crate) fn parse(text: &str) -> Result<Value, Raw> {
    serde_json::from_str(text).map_err(|e| {
        let message = if e.to_string().contains("recursion limit") {
            format!("the frame is nested deeper than {RECURSION_LIMIT} levels, beyond what any JSON reader must accept")
        } else {
            format!("the frame is not JSON: {e}")
        };
        Raw::new(&WIRE_SCHEMA_VALID, FRAME_001, message)
    })
}

/// The finding for a binary frame.
pub(crate) fn binary(bytes: usize) -> Raw {
    Raw::new(&TEXT_FRAMES_ONLY, TRANSPORT_001, format!("the server sent a binary frame of {bytes} bytes"))
}

/// The name of a JSON value's kind, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The findings for a frame the validator refused, each under the requirement it breaks.
pub(crate) fn schema_findings(value: &Value, error: FrameError) -> Vec<Raw> {
    let wire = value.get("type").and_then(Value::as_str).unwrap_or("(no type)");
    match error {
        FrameError::NotObject => {
            vec![Raw::new(&WIRE_SCHEMA_VALID, FRAME_001, format!("the frame is {}, not a JSON object", kind(value)))]
        }
        FrameError::MissingType => vec![Raw::new(
            &WIRE_SCHEMA_VALID,
            FRAME_001,
            match value.get("type") {
                None => "the frame has no type member".to_owned(),
                Some(t) => format!("the frame's type is {}, not a string", kind(t)),
            },
        )],
        FrameError::UnknownType(t) => {
            vec![Raw::new(&WIRE_SCHEMA_VALID, FRAME_001, format!("{t:?} is not the type of a server-to-client frame"))]
        }
        FrameError::Invalid(violations) => {
            let (unknown, rest): (Vec<Violation>, Vec<Violation>) =
                violations.into_iter().partition(|v| v.message.contains("Additional properties"));
            let (ids, rest): (Vec<Violation>, Vec<Violation>) = rest.into_iter().partition(is_id_violation);
            // A number beyond the bound breaks INT-002 (an erratum to 1.0), not the frame's schema.
            let (numbers, rest): (Vec<Violation>, Vec<Violation>) =
                rest.into_iter().partition(Violation::is_unsafe_number);
            let mut out = Vec::new();
            for (list, req, what) in [
                (unknown, FRAME_003, "members its schema does not define"),
                (ids, ID_001, "a malformed identifier"),
                (numbers, INT_002, "a number beyond ±(2^53 − 1)"),
                (rest, FRAME_002, "a schema violation"),
            ] {
                if !list.is_empty() {
                    let detail: Vec<String> = list.iter().map(ToString::to_string).collect();
                    out.push(Raw::new(&WIRE_SCHEMA_VALID, req, format!("{wire} has {what}: {}", detail.join("; "))));
                }
            }
            out
        }
        other => vec![Raw::new(&WIRE_SCHEMA_VALID, FRAME_002, format!("{wire}: {other}"))],
    }
}

/// Whether a violation is about an identifier member (`id`, `*_id`, `in_reply_to`) failing its pattern
/// or length (ID-001), not about its presence or type.
fn is_id_violation(v: &Violation) -> bool {
    let last = v.instance_path.rsplit('/').next().unwrap_or("");
    let id_member = last == "id" || last.ends_with("_id") || last == "in_reply_to";
    id_member && !v.message.contains("is not of type") && !v.message.contains("required")
}

/// Every malformed `ts` or `settled_ts` in the frame (FRAME-004).
pub(crate) fn timestamp_findings(value: &Value) -> Vec<Raw> {
    let mut bad = Vec::new();
    collect_bad_ts(value, &mut bad);
    bad.into_iter()
        .map(|ts| Raw::new(&TS_FORMAT, FRAME_004, format!("{ts:?} is not an RFC 3339 date-time with an offset")))
        .collect()
}

fn collect_bad_ts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                match (k.as_str(), val) {
                    ("ts" | "settled_ts", Value::String(s)) if !is_rfc3339(s) => out.push(s.clone()),
                    _ => collect_bad_ts(val, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_bad_ts(i, out)),
        _ => {}
    }
}

/// Whether `ts` is an RFC 3339 date-time with a time zone offset (`2026-01-15T10:00:00Z`,
/// `2026-01-15T10:00:00.123+02:00`).
pub fn is_rfc3339(ts: &str) -> bool {
    let b = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| b.get(range).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let num = |range: std::ops::Range<usize>| -> u32 {
        b.get(range).map_or(99, |s| s.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
    };
    if b.len() < 20 || !digits(0..4) || b[4] != b'-' || !digits(5..7) || b[7] != b'-' || !digits(8..10) {
        return false;
    }
    if !matches!(b[10], b'T' | b't') || !digits(11..13) || b[13] != b':' || !digits(14..16) || b[16] != b':' {
        return false;
    }
    if !digits(17..19) {
        return false;
    }
    let (month, day, hour, minute, second) = (num(5..7), num(8..10), num(11..13), num(14..16), num(17..19));
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && digits(i + 1..i + 3)
                && b[i + 3] == b':'
                && digits(i + 4..i + 6)
                && num(i + 1..i + 3) < 24
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_accepts_offsets_and_fractions() {
        for ok in ["2026-01-15T10:00:00Z", "2026-01-15T10:00:00.123456+02:00", "2026-12-31t23:59:60z"] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-01-15T10:00:00",
            "2026-01-15 10:00:00Z",
            "2026-13-15T10:00:00Z",
            "2026-01-15T10:00:00.Z",
            "2026-01-15T10:00:00+0200",
            "1700000000",
            "",
            "2026-01-15T10:00:00Zjunk",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn a_frame_that_is_not_one_json_object_says_what_it_is_instead() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let raw = parse(&deep).expect_err("too deep");
        assert!(raw.message.contains("nested deeper than 128"), "{}", raw.message);
        assert_eq!(raw.requirement, FRAME_001);
        let raw = parse("{nope").expect_err("not json");
        assert!(raw.message.starts_with("the frame is not JSON"), "{}", raw.message);

        let validator = chatwire_schema::FrameValidator::new();
        let dir = chatwire_schema::Direction::ServerToClient;
        let cases = [
            (serde_json::json!([1]), "is an array, not a JSON object"),
            (serde_json::json!({"seq": 1}), "has no type member"),
            (serde_json::json!({"type": 7}), "type is a number, not a string"),
            (serde_json::json!({"type": "session.hello"}), "not the type of a server-to-client frame"),
        ];
        for (value, says) in cases {
            let found = schema_findings(&value, validator.check(dir, &value).expect_err("refused"));
            assert_eq!(found.len(), 1);
            assert!(found[0].message.contains(says), "{}", found[0].message);
            assert_eq!(found[0].requirement, FRAME_001);
        }
    }

    #[test]
    fn schema_violations_are_charged_to_the_requirement_they_break() {
        let validator = chatwire_schema::FrameValidator::new();
        let dir = chatwire_schema::Direction::ServerToClient;
        let error = |extra: serde_json::Value| {
            let mut v = serde_json::json!({"type": "error", "code": "invalid_frame", "message": "bad", "fatal": false});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let e = validator.check(dir, &v).expect_err("refused");
            schema_findings(&v, e).into_iter().map(|r| r.requirement).collect::<Vec<_>>()
        };
        assert_eq!(error(serde_json::json!({"extra": 1})), vec![FRAME_003]);
        assert_eq!(error(serde_json::json!({"in_reply_to": "not an id!"})), vec![ID_001]);
        assert_eq!(error(serde_json::json!({"fatal": "no"})), vec![FRAME_002]);
    }
}
