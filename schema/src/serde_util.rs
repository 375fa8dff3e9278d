//! Field-level rules that serde must enforce exactly as the schema does.

use serde::{Deserialize, Deserializer};

/// Deserializes a list that must hold at least one element (schema: `minItems: 1`).
pub fn non_empty<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let v = Vec::<T>::deserialize(d)?;
    if v.is_empty() {
        return Err(serde::de::Error::invalid_length(0, &"at least one element"));
    }
    Ok(v)
}

/// Whether a flag is off: such a flag is left out of the JSON (`skip_serializing_if`).
pub fn is_false(flag: &bool) -> bool {
    !*flag
}

/// Deserializes a string that must not be empty (schema: `minLength: 1`).
pub fn non_empty_string<'de, D>(d: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    let s = String::deserialize(d)?;
    if s.is_empty() {
        return Err(serde::de::Error::invalid_length(0, &"at least one character"));
    }
    Ok(s)
}

/// Deserializes a JSON value that must be present. Without this, serde fills a missing
/// `serde_json::Value` field with `null`, while the schema marks the field required.
pub fn required_value<'de, D>(d: D) -> Result<serde_json::Value, D::Error>
where
    D: Deserializer<'de>,
{
    serde_json::Value::deserialize(d)
}

/// Deserializes an integer field as the schema's `"type": "integer"` reads one: any JSON number
/// without a fractional part, so `4.0` and `1e3` count as integers too. serde alone refuses
/// them while every JSON Schema validator accepts them. The range is the Rust type's, which the
/// schema states as `minimum`/`maximum`, and never beyond ±(2^53 − 1), the integers every JSON
/// reader (JavaScript included) represents exactly.
pub fn integer<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i128>,
{
    let n = d.deserialize_any(IntegerVisitor)?;
    if n.unsigned_abs() > crate::MAX_SAFE_INTEGER.unsigned_abs() as u128 {
        return Err(out_of_range(n));
    }
    T::try_from(n).map_err(|_| out_of_range(n))
}

/// [`integer`] for an optional field (`null` or absent is `None`).
pub fn optional_integer<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i128>,
{
    Ok(Option::<Integer<T>>::deserialize(d)?.map(|i| i.0))
}

/// [`integer`] for an optional list of integers.
pub fn optional_integers<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i128>,
{
    Ok(Option::<Vec<Integer<T>>>::deserialize(d)?.map(|v| v.into_iter().map(|i| i.0).collect()))
}

/// Whether `s` is an RFC 3339 `date-time` (section 5.6), the rule `FRAME-004` gives every `ts`:
/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction, and `Z` or `±HH:MM`; `T` and `Z` in either case.
/// The date must exist, and a leap second (`:60`) is accepted only at 23:59 UTC, where it can
/// occur. The schema states the same rule as `"format": "date-time"`; the shared list of cases in
/// `fixtures/formats/date-time.json` keeps this, the schema validator and the npm package's
/// `isDateTime` in agreement.
pub fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(range)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
    };
    let at = |i: usize, c: u8| b.get(i).is_some_and(|x| x.eq_ignore_ascii_case(&c));
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else { return false };
    let (Some(hour), Some(minute), Some(second)) = (digits(11..13), digits(14..16), digits(17..19)) else {
        return false;
    };
    if !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':')) {
        return false;
    }
    let mut i = 19;
    if at(i, b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    let offset_minutes: i64 = if at(i, b'Z') && b.len() == i + 1 {
        0
    } else if (at(i, b'+') || at(i, b'-')) && b.len() == i + 6 && at(i + 3, b':') {
        let (Some(h), Some(m)) = (digits(i + 1..i + 3), digits(i + 4..i + 6)) else { return false };
        if h > 23 || m > 59 {
            return false;
        }
        let sign = if at(i, b'-') { -1 } else { 1 };
        sign * i64::from(h * 60 + m)
    } else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=12).contains(&month) || day < 1 || day > days || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if second == 60 {
        let utc = (i64::from(hour * 60 + minute) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// Deserializes a `ts` member: a string that must be an RFC 3339 date-time ([`is_date_time`]).
pub fn date_time<'de, D>(d: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    let s = String::deserialize(d)?;
    if is_date_time(&s) {
        Ok(s)
    } else {
        Err(serde::de::Error::invalid_value(serde::de::Unexpected::Str(&s), &"an RFC 3339 date-time"))
    }
}

/// [`date_time`] for an optional member (`null` or absent is `None`).
pub fn optional_date_time<'de, D>(d: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    match Option::<String>::deserialize(d)? {
        Some(s) if !is_date_time(&s) => {
            Err(serde::de::Error::invalid_value(serde::de::Unexpected::Str(&s), &"an RFC 3339 date-time"))
        }
        other => Ok(other),
    }
}

fn out_of_range<E: serde::de::Error>(n: i128) -> E {
    E::invalid_value(serde::de::Unexpected::Other(&format!("integer {n}")), &"an integer in the field's range")
}

/// An integer read with [`integer`], for use inside `Option` and `Vec`.
struct Integer<T>(T);

impl<'de, T: TryFrom<i128>> Deserialize<'de> for Integer<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        integer(d).map(Integer)
    }
}

struct IntegerVisitor;

impl serde::de::Visitor<'_> for IntegerVisitor {
    type Value = i128;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an integer")
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<i128, E> {
        Ok(v.into())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<i128, E> {
        Ok(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<i128, E> {
        // Every integral f64 below 2^127 converts exactly; larger ones are out of any field's range.
        if v.fract() == 0.0 && v.abs() < 2f64.powi(127) {
            Ok(v as i128)
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Float(v), &self))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use crate::{ClientFrame, Direction, FrameValidator, ServerFrame};

    /// Whether the schema and serde accept `frame`, which must be the same answer.
    fn verdicts(validator: &FrameValidator, direction: Direction, frame: &Value) -> (bool, bool) {
        let schema = validator.check(direction, frame).is_ok();
        let serde = match direction {
            Direction::ClientToServer => serde_json::from_value::<ClientFrame>(frame.clone()).is_ok(),
            Direction::ServerToClient => serde_json::from_value::<ServerFrame>(frame.clone()).is_ok(),
        };
        (schema, serde)
    }

    // The corpus cannot hold these: an accepted `4.0` is written back as `4`, so it has no
    // identical round trip. Each number is tried in a u64, an i32, a u32 list and an optional u64.
    #[test]
    fn schema_and_serde_agree_on_integer_spellings_and_ranges() {
        let validator = FrameValidator::new();
        let frames = |n: &Value| {
            [
                (
                    Direction::ServerToClient,
                    json!({"type": "chat.run_started", "seq": n, "invocation_id": "inv-1", "ts": "2026-01-15T10:00:00Z"}),
                ),
                (
                    Direction::ServerToClient,
                    json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": "tc-1", "exit_code": n, "ts": "2026-01-15T10:00:00Z"}),
                ),
                (
                    Direction::ServerToClient,
                    json!({"type": "error", "seq": n, "code": "internal_error", "message": "m", "fatal": false}),
                ),
                (
                    Direction::ClientToServer,
                    json!({"type": "session.hello", "id": "h", "versions": ["1.0"], "script": {"turns": [{"steps": [
                        {"op": "tool_calls", "calls": [{"tool_name": "t", "interaction_type": "auto_tool",
                            "display": "inline", "outcome": {"kind": "dismiss"}}], "settle_order": [n]}
                    ]}]}}),
                ),
            ]
        };
        let numbers = [
            json!(0),
            json!(4),
            json!(4.0),
            json!(-0.0),
            json!(1e3),
            json!(4.5),
            json!(-1),
            json!(-1.0),
            json!(i32::MAX),
            json!(2147483648.0),
            json!(i32::MIN),
            json!(-2147483649_i64),
            json!(u32::MAX),
            json!(4294967296_u64),
            json!(u64::MAX),
            json!(18446744073709551616.0),
            json!(1e300),
            json!("4"),
        ];
        let mut accepted = 0;
        for n in &numbers {
            for (direction, frame) in frames(n) {
                let (schema, serde) = verdicts(&validator, direction, &frame);
                assert_eq!(schema, serde, "schema accepts: {schema}, serde accepts: {serde}, for {frame}");
                accepted += usize::from(schema);
            }
        }
        // Guards the table itself: both outcomes occur.
        assert!(accepted > 0 && accepted < numbers.len() * 4, "accepted {accepted}");
    }

    /// `fixtures/formats/date-time.json`, the list every implementation of `date-time` agrees on.
    fn date_time_cases() -> (Vec<String>, Vec<String>) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/formats/date-time.json");
        let text = std::fs::read_to_string(path).expect("fixtures/formats/date-time.json is readable");
        let cases: Value = serde_json::from_str(&text).expect("fixtures/formats/date-time.json is JSON");
        let list = |key: &str| -> Vec<String> {
            cases[key].as_array().expect("a list").iter().map(|v| v.as_str().expect("a string").to_owned()).collect()
        };
        (list("valid"), list("invalid"))
    }

    #[test]
    fn date_time_matches_the_shared_cases() {
        let (valid, invalid) = date_time_cases();
        assert!(valid.len() > 5 && invalid.len() > 10, "the shared list is too short");
        for s in &valid {
            assert!(super::is_date_time(s), "{s:?} is an RFC 3339 date-time");
        }
        for s in &invalid {
            assert!(!super::is_date_time(s), "{s:?} is not an RFC 3339 date-time");
        }
    }

    // The schema (`format: date-time`, asserted by FrameValidator) and serde read every `ts` the
    // same way, in a top-level member, an optional nested one and a required nested one.
    #[test]
    fn schema_and_serde_agree_on_date_times() {
        let validator = FrameValidator::new();
        let (valid, invalid) = date_time_cases();
        for (s, expected) in valid.iter().map(|s| (s, true)).chain(invalid.iter().map(|s| (s, false))) {
            let item = json!({"kind": "tool_call", "id": "tc-1", "invocation_id": "inv-1", "tool_name": "t",
                "interaction_type": "auto_tool", "display": "inline", "awaiting_response": false,
                "status": "completed", "payload": {}, "ts": "2026-01-15T10:00:00Z", "settled_ts": s});
            let frames = [
                json!({"type": "chat.run_started", "seq": 1, "invocation_id": "inv-1", "ts": s}),
                json!({"type": "ui_state_updated", "seq": 2, "v": "ui_state_v1",
                    "state": {"items": [item], "run": {"status": "idle"}}}),
            ];
            for frame in frames {
                let (schema, serde) = verdicts(&validator, Direction::ServerToClient, &frame);
                assert_eq!((schema, serde), (expected, expected), "schema, serde on {s:?} in {frame}");
            }
        }
    }
}
