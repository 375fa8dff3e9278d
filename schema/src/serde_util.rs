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
