//! How binding a scenario or a check is: the spec's one [`Level`]
//! (`chatwire_schema::requirements::Level`), which scenario files and reports spell in lowercase
//! (`must`, `should`, `may`) where the spec and its released requirement sets say `MUST`.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serializer};

pub use chatwire_schema::requirements::Level;

/// The lowercase name of `level`, as scenario files and reports write it.
pub fn name(level: Level) -> &'static str {
    match level {
        Level::Must => "must",
        Level::Should => "should",
        Level::May => "may",
    }
}

/// serde's `with` for a [`Level`] written in lowercase.
pub(crate) mod lowercase {
    use super::*;

    pub fn serialize<S: Serializer>(level: &Level, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(name(*level))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        [Level::Must, Level::Should, Level::May]
            .into_iter()
            .find(|level| name(*level) == text)
            .ok_or_else(|| serde::de::Error::unknown_variant(&text, &["must", "should", "may"]))
    }
}

/// The JSON Schema of a [`Level`] written in lowercase (schemars' `with` for such a field): the
/// `Level` definition of the scenario and report schemas.
pub(crate) struct Lowercase;

impl JsonSchema for Lowercase {
    fn schema_name() -> Cow<'static, str> {
        "Level".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "oneOf": [
                {"type": "string", "const": "must", "description": "A MUST of the spec: a failure fails the run."},
                {"type": "string", "const": "should", "description": "A SHOULD: a failure is reported as a warning."},
                {"type": "string", "const": "may", "description": "A MAY: a failure is reported as a warning."}
            ],
            "description": "How binding a scenario is."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "lowercase")]
        level: Level,
    }

    #[test]
    fn a_level_reads_and_writes_in_lowercase_only() {
        for level in [Level::Must, Level::Should, Level::May] {
            let text = serde_json::to_string(&Holder { level }).expect("serializes");
            assert_eq!(text, format!(r#"{{"level":"{}"}}"#, name(level)));
            assert_eq!(serde_json::from_str::<Holder>(&text).expect("reads back"), Holder { level });
        }
        assert!(serde_json::from_str::<Holder>(r#"{"level":"MUST"}"#).is_err());
    }
}
