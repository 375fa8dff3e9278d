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
                    json!({"type": "chat.run_started", "seq": n, "invocation_id": "inv-1", "ts": "t"}),
                ),
                (
                    Direction::ServerToClient,
                    json!({"type": "chat.tool_output", "seq": 1, "tool_call_id": "tc-1", "exit_code": n, "ts": "t"}),
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
}
