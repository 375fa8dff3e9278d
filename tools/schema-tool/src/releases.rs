//! The released schema sets, one directory per released minor: `schema/releases/v1/<MAJOR.MINOR>/`
//! (`spec/versioning.md#the-released-baselines-and-the-gate`, `COMPAT-012`).
//!
//! A released set is written once, by `export`, when its minor is released, and never rewritten:
//! it is the baseline the change gate compares against. `check` proves that the current types,
//! cut down to that minor ([`chatwire_schema::since::project`]), still define exactly the released
//! shape (prose aside): the only way a minor may change what an older minor's connections carry is
//! not at all (`COMPAT-005`), so every addition must be annotated with the minor that made it.

use std::path::{Path, PathBuf};

use chatwire_schema::requirements::Requirement;
use chatwire_schema::schema_gen::{to_pretty, SchemaDoc};
use chatwire_schema::since::{project, without_later_formats, without_prose, RELEASED_VERSIONS};
use chatwire_schema::ProtocolVersion;
use serde_json::Value;

use crate::frozen::FrozenRequirements;
use crate::generated::GenerateError;

/// Where the released sets of major 1 live, relative to the repository root.
pub const RELEASES_DIR: &str = "schema/releases/v1";

/// The released set of one minor.
#[derive(Clone, Debug)]
pub struct ReleaseSet {
    /// `schema/releases/v1/<version>`.
    pub dir: PathBuf,
    /// The minor.
    pub version: ProtocolVersion,
    /// The protocol's documents as the current types define them for this minor.
    pub protocol: Vec<(String, Value)>,
    /// The conformance tooling's documents (scenario, report, baseline formats): written with the
    /// release, compared afterwards only by the gate, because the runner's formats evolve on
    /// their own (with the gate's rules).
    pub tooling: Vec<(String, Value)>,
    /// Its frozen requirement set and errata (`requirements/`, [`crate::frozen`]).
    pub requirements: Option<FrozenRequirements>,
}

/// The released sets of the repository at `root`, from the protocol documents `protocol` and the
/// tooling documents `tooling` of this build, and the requirement `registry` of its spec.
pub fn release_sets(
    root: &Path,
    protocol: &[SchemaDoc],
    tooling: &[SchemaDoc],
    registry: &[Requirement],
) -> Vec<ReleaseSet> {
    RELEASED_VERSIONS
        .iter()
        .map(|&version| ReleaseSet {
            dir: root.join(RELEASES_DIR).join(version.to_string()),
            requirements: FrozenRequirements::new(
                &root.join(RELEASES_DIR).join(version.to_string()),
                version,
                registry,
            ),
            version,
            protocol: protocol
                .iter()
                // A format dated after the release is not in its copy (since::FORMATS_SINCE).
                .filter_map(|d| {
                    project(&d.schema, version).map(|s| (d.file.clone(), without_later_formats(&s, version)))
                })
                .collect(),
            tooling: tooling.iter().map(|d| (d.file.clone(), d.schema.clone())).collect(),
        })
        .collect()
}

impl ReleaseSet {
    /// Writes the schemas if the directory does not exist yet and the frozen requirement set if it
    /// has none (a released set is never rewritten), and rewrites the errata file. Returns whether
    /// it wrote schemas or a requirement set.
    pub fn write_if_missing(&self) -> Result<bool, GenerateError> {
        let schemas = self.write_schemas_if_missing()?;
        let requirements = match &self.requirements {
            Some(r) => r.write()?,
            None => false,
        };
        Ok(schemas || requirements)
    }

    fn write_schemas_if_missing(&self) -> Result<bool, GenerateError> {
        if self.dir.exists() {
            return Ok(false);
        }
        let write_err = |path: PathBuf| move |source| GenerateError::Write { path, source };
        std::fs::create_dir_all(&self.dir).map_err(write_err(self.dir.clone()))?;
        for (name, schema) in self.protocol.iter().chain(&self.tooling) {
            let path = self.dir.join(name);
            std::fs::write(&path, to_pretty(schema)).map_err(write_err(path))?;
        }
        Ok(true)
    }

    /// One line per protocol document whose released shape the current types no longer define,
    /// per released file that is missing or unexpected, and per departure of the spec's
    /// requirements from the frozen set ([`FrozenRequirements::drift`]).
    pub fn drift(&self) -> Vec<String> {
        let mut drift = self.schema_drift();
        if let Some(r) = &self.requirements {
            drift.extend(r.drift());
        }
        drift
    }

    fn schema_drift(&self) -> Vec<String> {
        let mut drift = Vec::new();
        let shown = self.dir.display();
        if !self.dir.is_dir() {
            drift.push(format!("{shown}: missing; `export` writes the released set of {}", self.version));
            return drift;
        }
        for (name, schema) in &self.protocol {
            let path = self.dir.join(name);
            let committed: Option<Value> =
                std::fs::read_to_string(&path).ok().and_then(|text| serde_json::from_str(&text).ok());
            match committed {
                None => drift.push(format!(
                    "{}: the types define it for {} but the release does not hold it (or it is not JSON): \
                     annotate the addition with x-chatwire-since",
                    path.display(),
                    self.version
                )),
                Some(committed) if without_prose(&committed) != without_prose(schema) => drift.push(format!(
                    "{}: the types, cut down to {}, no longer define the released shape ({}); a released \
                     minor never changes: annotate additions with x-chatwire-since, anything else needs a \
                     new major",
                    path.display(),
                    self.version,
                    first_difference(&without_prose(&committed), &without_prose(schema), "")
                        .unwrap_or_else(|| "/".into())
                )),
                Some(_) => {}
            }
        }
        let known = |name: &str| self.protocol.iter().chain(&self.tooling).any(|(f, _)| f == name);
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            let mut unexpected: Vec<String> = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".json") && !known(name))
                .collect();
            unexpected.sort();
            for name in unexpected {
                drift.push(format!(
                    "{}: released, but the types no longer define it for {}",
                    self.dir.join(name).display(),
                    self.version
                ));
            }
        }
        drift
    }
}

/// The JSON pointer of the first place two values differ.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => {
                        if let Some(d) = first_difference(p, q, &here) {
                            return Some(d);
                        }
                    }
                    _ => return Some(here),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}/{i}")))
        }
        _ if a == b => None,
        _ => Some(if at.is_empty() { "/".into() } else { at.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc(file: &str, schema: Value) -> SchemaDoc {
        SchemaDoc { file: file.into(), schema, message: None }
    }

    #[test]
    fn a_released_set_is_written_once_and_checked_against_the_types_cut_down_to_its_minor() {
        let root = std::env::temp_dir().join(format!("chatwire-releases-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let hello = json!({
            "description": "hello",
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "additionalProperties": false,
        });
        let tooling = [doc("scenario.json", json!({"type": "object"}))];
        let set = |hello: Value| {
            let mut set = release_sets(&root, &[doc("session.hello.json", hello)], &tooling, &[]).remove(0);
            set.requirements = None;
            set
        };
        assert_eq!(set(hello.clone()).drift().len(), 1, "a missing released set is drift");
        assert!(set(hello.clone()).write_if_missing().unwrap());
        assert_eq!(set(hello.clone()).drift(), Vec::<String>::new());

        // A member annotated with a newer minor is cut away: the 1.0 set still matches.
        let mut annotated = hello.clone();
        annotated["properties"]["features"] = json!({"x-chatwire-since": "1.1", "type": "array"});
        assert_eq!(set(annotated).drift(), Vec::<String>::new());
        // Prose may be clarified.
        let mut clarified = hello.clone();
        clarified["description"] = json!("a clearer hello");
        assert_eq!(set(clarified).drift(), Vec::<String>::new());
        // An unannotated member changes the released shape.
        let mut widened = hello.clone();
        widened["properties"]["features"] = json!({"type": "array"});
        let drift = set(widened.clone()).drift();
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert!(drift[0].contains("/properties/features"), "{drift:?}");
        // export never rewrites a released set.
        assert!(!set(widened.clone()).write_if_missing().unwrap());
        assert_eq!(set(widened).drift().len(), 1);
        // A released protocol document the types no longer define.
        let gone = release_sets(&root, &[], &tooling, &[]).remove(0).schema_drift();
        assert!(gone.iter().any(|d| d.contains("session.hello.json") && d.contains("no longer define")), "{gone:?}");
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn first_difference_names_the_pointer() {
        let a = json!({"properties": {"x": {"type": "string"}, "y": [1, 2]}});
        let b = json!({"properties": {"x": {"type": "integer"}, "y": [1, 2]}});
        assert_eq!(first_difference(&a, &b, "").as_deref(), Some("/properties/x/type"));
        assert_eq!(first_difference(&a, &a, ""), None);
        assert_eq!(first_difference(&json!([1]), &json!([1, 2]), "").as_deref(), Some("/"));
    }
}
