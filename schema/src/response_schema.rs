//! `response_schema` (since 1.2) — the shape of the `value` a tool call awaits, and the one checker
//! of it.
//!
//! Spec: `spec/tool-calls.md#response_schema` (`TOOL-022`..`TOOL-026`). A response schema is a JSON
//! Schema (draft 2020-12) written with the keywords of [`KEYWORDS`] only, so every server and every
//! client can check a value with the same small interpreter: this module is that interpreter, and
//! the npm and Python copies are proven equal to it on `fixtures/response-schemas`.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The keywords a response schema may use (`TOOL-022`): the validation keywords every server must
/// check, and two annotations a form may show.
pub const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "enum",
    "items",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "additionalProperties",
    "title",
    "description",
];

/// The JSON Schema type names a `type` may list.
pub const TYPES: &[&str] = &["null", "boolean", "object", "array", "number", "integer", "string"];

/// How deep response schemas nest (`properties`, `items`, `additionalProperties`), at most.
pub const MAX_DEPTH: usize = 16;

/// A response schema: a JSON object using only [`KEYWORDS`], nested at most [`MAX_DEPTH`] deep.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseSchema(Map<String, Value>);

/// Why a JSON value is not a response schema.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema, or a nested one, is not a JSON object.
    #[error("{at}: a response schema is a json object")]
    NotAnObject {
        /// JSON Pointer of the offending schema within the whole schema.
        at: String,
    },
    /// A keyword outside the subset.
    #[error("{at}: keyword {keyword} is not in the response_schema subset")]
    UnknownKeyword {
        /// JSON Pointer of the schema that uses it.
        at: String,
        /// The keyword.
        keyword: String,
    },
    /// A keyword's value has the wrong shape.
    #[error("{at}: {keyword} must be {expected}")]
    BadKeyword {
        /// JSON Pointer of the schema that uses it.
        at: String,
        /// The keyword.
        keyword: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("{at}: response schemas nest at most {MAX_DEPTH} deep")]
    TooDeep {
        /// JSON Pointer of the schema past the depth.
        at: String,
    },
}

/// Why a value breaks a response schema: the first failing check in the order `TOOL-024` states.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct Violation {
    /// JSON Pointer (RFC 6901) of the failing part of the value; `""` is the whole value.
    pub pointer: String,
    /// The keyword that failed.
    pub keyword: &'static str,
    /// One sentence, lowercase.
    pub message: String,
}

impl ResponseSchema {
    /// Checks that `value` is a response schema.
    pub fn new(value: Value) -> Result<Self, SchemaError> {
        check_schema(&value, "", 0)?;
        match value {
            Value::Object(map) => Ok(ResponseSchema(map)),
            _ => Err(SchemaError::NotAnObject { at: String::new() }),
        }
    }

    /// The schema as a JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// Checks `value` against the schema; the first failing check, in the order of `TOOL-024`.
    pub fn check(&self, value: &Value) -> Result<(), Violation> {
        check_value(&self.0, value, &mut String::new())
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn check_schema(schema: &Value, at: &str, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH {
        return Err(SchemaError::TooDeep { at: at.to_owned() });
    }
    let Value::Object(map) = schema else {
        return Err(SchemaError::NotAnObject { at: at.to_owned() });
    };
    let bad = |keyword: &'static str, expected: &'static str| SchemaError::BadKeyword {
        at: at.to_owned(),
        keyword,
        expected,
    };
    for (keyword, value) in map {
        match keyword.as_str() {
            "type" => {
                let names: Vec<&Value> = match value {
                    Value::Array(list) if !list.is_empty() => list.iter().collect(),
                    Value::String(_) => vec![value],
                    _ => return Err(bad("type", "a type name or a non-empty array of them")),
                };
                if !names.iter().all(|n| n.as_str().is_some_and(|n| TYPES.contains(&n))) {
                    return Err(bad("type", "a type name or a non-empty array of them"));
                }
            }
            "properties" => {
                let Value::Object(props) = value else { return Err(bad("properties", "an object of schemas")) };
                for (name, sub) in props {
                    check_schema(sub, &format!("{at}/properties/{}", escape(name)), depth + 1)?;
                }
            }
            "required" => {
                let ok = matches!(value, Value::Array(names) if names.iter().all(Value::is_string));
                if !ok {
                    return Err(bad("required", "an array of property names"));
                }
            }
            "enum" => {
                if !matches!(value, Value::Array(list) if !list.is_empty()) {
                    return Err(bad("enum", "a non-empty array"));
                }
            }
            "items" => check_schema(value, &format!("{at}/items"), depth + 1)?,
            "additionalProperties" => {
                if !value.is_boolean() {
                    check_schema(value, &format!("{at}/additionalProperties"), depth + 1)?;
                }
            }
            "minimum" | "maximum" => {
                if !value.is_number() {
                    return Err(bad(if keyword == "minimum" { "minimum" } else { "maximum" }, "a number"));
                }
            }
            "minLength" | "maxLength" => {
                if !value.is_u64() {
                    return Err(bad(
                        if keyword == "minLength" { "minLength" } else { "maxLength" },
                        "a non-negative integer",
                    ));
                }
            }
            "title" | "description" => {
                if !value.is_string() {
                    return Err(bad(if keyword == "title" { "title" } else { "description" }, "a string"));
                }
            }
            other => return Err(SchemaError::UnknownKeyword { at: at.to_owned(), keyword: other.to_owned() }),
        }
    }
    Ok(())
}

/// Whether `value` is of the JSON Schema type `name` (an integer is a number with no fraction).
fn has_type(value: &Value, name: &str) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        "string" => value.is_string(),
        _ => false,
    }
}

/// JSON equality as JSON Schema's `enum` sees it: numbers by value (1 equals 1.0).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().zip(y.as_f64()).is_some_and(|(x, y)| x == y),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn violation(pointer: &str, keyword: &'static str, message: String) -> Violation {
    Violation { pointer: pointer.to_owned(), keyword, message }
}

/// The checks of one schema on one value, in the order of `TOOL-024`: `type`, `enum`,
/// `minLength`/`maxLength`, `minimum`/`maximum`, `required` (in its order), `properties` (in the
/// schema's order), `additionalProperties` (in the value's order), `items` (by index).
fn check_value(schema: &Map<String, Value>, value: &Value, pointer: &mut String) -> Result<(), Violation> {
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !names.iter().any(|n| has_type(value, n)) {
            return Err(violation(pointer, "type", format!("expected {}", names.join(" or "))));
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.iter().any(|o| json_equal(o, value)) {
            return Err(violation(pointer, "enum", "not one of the allowed values".to_owned()));
        }
    }
    if let Value::String(text) = value {
        let length = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
            if length < min {
                return Err(violation(pointer, "minLength", format!("shorter than {min} characters")));
            }
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
            if length > max {
                return Err(violation(pointer, "maxLength", format!("longer than {max} characters")));
            }
        }
    }
    if let Some(number) = value.as_f64().filter(|_| value.is_number()) {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
            if number < min {
                return Err(violation(pointer, "minimum", format!("less than {min}")));
            }
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
            if number > max {
                return Err(violation(pointer, "maximum", format!("greater than {max}")));
            }
        }
    }
    if let Value::Object(object) = value {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    let at = format!("{pointer}/{}", escape(name));
                    return Err(violation(&at, "required", format!("required property {name} is missing")));
                }
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(properties) = properties {
            for (name, sub) in properties {
                if let (Some(member), Some(sub)) = (object.get(name), sub.as_object()) {
                    within(pointer, name, |p| check_value(sub, member, p))?;
                }
            }
        }
        if let Some(extra) = schema.get("additionalProperties") {
            for (name, member) in object {
                if properties.is_some_and(|p| p.contains_key(name)) {
                    continue;
                }
                match extra {
                    Value::Bool(false) => {
                        let at = format!("{pointer}/{}", escape(name));
                        return Err(violation(&at, "additionalProperties", format!("property {name} is not allowed")));
                    }
                    Value::Object(sub) => within(pointer, name, |p| check_value(sub, member, p))?,
                    _ => {}
                }
            }
        }
    }
    if let (Value::Array(elements), Some(Value::Object(sub))) = (value, schema.get("items")) {
        for (index, element) in elements.iter().enumerate() {
            within(pointer, &index.to_string(), |p| check_value(sub, element, p))?;
        }
    }
    Ok(())
}

/// Runs `f` with `pointer` extended by one token, then restores it.
fn within(
    pointer: &mut String,
    token: &str,
    f: impl FnOnce(&mut String) -> Result<(), Violation>,
) -> Result<(), Violation> {
    let length = pointer.len();
    pointer.push('/');
    pointer.push_str(&escape(token));
    let result = f(pointer);
    pointer.truncate(length);
    result
}

impl Serialize for ResponseSchema {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ResponseSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ResponseSchema::new(Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for ResponseSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Value::Object(self.0.clone()).to_string())
    }
}

impl JsonSchema for ResponseSchema {
    fn schema_name() -> Cow<'static, str> {
        "ResponseSchema".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let nested = generator.subschema_for::<ResponseSchema>();
        let type_name = json_schema!({ "enum": TYPES });
        json_schema!({
            "description": "A JSON Schema (draft 2020-12) using only the response_schema subset (TOOL-022).",
            "type": "object",
            "properties": {
                "type": { "anyOf": [type_name, { "type": "array", "items": type_name, "minItems": 1 }] },
                "properties": { "type": "object", "additionalProperties": nested },
                "required": { "type": "array", "items": { "type": "string" } },
                "enum": { "type": "array", "minItems": 1 },
                "items": nested,
                "minimum": { "type": "number" },
                "maximum": { "type": "number" },
                "minLength": { "type": "integer", "minimum": 0 },
                "maxLength": { "type": "integer", "minimum": 0 },
                "additionalProperties": { "anyOf": [{ "type": "boolean" }, nested] },
                "title": { "type": "string" },
                "description": { "type": "string" }
            },
            "additionalProperties": false
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> ResponseSchema {
        ResponseSchema::new(v).expect("a response schema")
    }

    #[test]
    fn a_form_schema_accepts_a_good_value_and_names_the_pointer_of_a_bad_one() {
        let s = schema(json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1, "maxLength": 5 },
                "age": { "type": "integer", "minimum": 0, "maximum": 150 },
                "tags": { "type": "array", "items": { "enum": ["a", "b"] } }
            },
            "required": ["name"],
            "additionalProperties": false
        }));
        assert_eq!(s.check(&json!({"name": "ann", "age": 3, "tags": ["a"]})), Ok(()));
        assert_eq!(s.check(&json!({"name": "ann", "age": 3.0})), Ok(()), "3.0 is an integer");
        let pointer = |v: Value| s.check(&v).unwrap_err().pointer;
        assert_eq!(pointer(json!({})), "/name");
        assert_eq!(pointer(json!({"name": ""})), "/name");
        assert_eq!(pointer(json!({"name": "abcdef"})), "/name");
        assert_eq!(pointer(json!({"name": "a", "age": -1})), "/age");
        assert_eq!(pointer(json!({"name": "a", "age": 1.5})), "/age");
        assert_eq!(pointer(json!({"name": "a", "tags": ["a", "c"]})), "/tags/1");
        assert_eq!(pointer(json!({"name": "a", "x/y": 1})), "/x~1y");
        assert_eq!(pointer(json!([])), "");
    }

    #[test]
    fn lengths_count_code_points_and_enum_compares_numbers_by_value() {
        let s = schema(json!({"type": "string", "maxLength": 2}));
        assert_eq!(s.check(&json!("é😀")), Ok(()));
        let s = schema(json!({"enum": [1, "x", {"a": [1]}]}));
        assert_eq!(s.check(&json!(1.0)), Ok(()));
        assert_eq!(s.check(&json!({"a": [1.0]})), Ok(()));
        assert_eq!(s.check(&json!(2)).unwrap_err().keyword, "enum");
    }

    #[test]
    fn schemas_outside_the_subset_are_refused_with_their_place() {
        assert!(matches!(ResponseSchema::new(json!([])), Err(SchemaError::NotAnObject { .. })));
        let e = ResponseSchema::new(json!({"properties": {"a": {"pattern": "x"}}})).unwrap_err();
        assert_eq!(e.to_string(), "/properties/a: keyword pattern is not in the response_schema subset");
        assert!(matches!(ResponseSchema::new(json!({"type": "text"})), Err(SchemaError::BadKeyword { .. })));
        assert!(matches!(ResponseSchema::new(json!({"minLength": -1})), Err(SchemaError::BadKeyword { .. })));
        let mut deep = json!({"type": "string"});
        for _ in 0..=MAX_DEPTH {
            deep = json!({ "items": deep });
        }
        assert!(matches!(ResponseSchema::new(deep), Err(SchemaError::TooDeep { .. })));
    }
}
