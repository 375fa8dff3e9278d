//! The corpus table of the template kill matrix: `tools/python/template_faults/corpus.json`, one
//! row per fault planted in the Python template (see that file's `about` for what each list means).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The repository's root, from this crate's manifest.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The directory of the fault launcher and its table.
pub fn faults_dir() -> PathBuf {
    repo_root().join("tools/python/template_faults")
}

/// The table as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corpus {
    /// What the file is, in prose.
    #[allow(dead_code)]
    pub about: Vec<String>,
    /// One row per fault.
    pub faults: Vec<Row>,
}

/// One planted fault, what it breaks and what the suite charges for it today.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Row {
    /// The name `serve.py --fault` takes.
    pub fault: String,
    /// The protocol version whose feature the fault breaks.
    pub since: String,
    /// The versions the runner offers: `default` or `1.0`.
    pub offer: String,
    /// Scenario globs that exercise what it breaks.
    pub scenarios: Vec<String>,
    /// The requirements its own behaviour breaks (reasoned from the spec).
    pub violates: Vec<String>,
    /// Those of `violates` that no failing check names today.
    pub unnamed: Vec<String>,
    /// Ids named today that it does not break.
    pub cascades: Vec<String>,
    /// The realistic bug, one line.
    pub bug: String,
    /// Why `violates` is what it is.
    pub why: String,
}

impl Row {
    /// The ids the failing checks must name today: what it breaks and the suite names, plus the
    /// cascades.
    pub fn expected(&self) -> BTreeSet<String> {
        let unnamed: BTreeSet<&String> = self.unnamed.iter().collect();
        self.violates.iter().filter(|id| !unnamed.contains(id)).chain(&self.cascades).cloned().collect()
    }

    /// The versions the runner offers for this row; `None` for its default.
    pub fn versions(&self) -> Option<Vec<String>> {
        (self.offer == "1.0").then(|| vec!["1.0".to_owned()])
    }
}

/// Reads the table.
pub fn load() -> Corpus {
    let path = faults_dir().join("corpus.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What is wrong with the table itself, before anything runs: duplicates, unknown offers or
/// requirement ids, an `unnamed` id outside `violates`, a cascade that is also a violation.
pub fn problems(corpus: &Corpus, known_ids: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for row in &corpus.faults {
        let f = &row.fault;
        if !seen.insert(f.as_str()) {
            problems.push(format!("{f}: listed twice"));
        }
        if !["default", "1.0"].contains(&row.offer.as_str()) {
            problems.push(format!("{f}: offer {:?} is neither \"default\" nor \"1.0\"", row.offer));
        }
        if !["1.0", "1.1", "1.2", "1.3"].contains(&row.since.as_str()) {
            problems.push(format!("{f}: since {:?} is not a version", row.since));
        }
        if row.scenarios.is_empty() || row.violates.is_empty() || row.bug.is_empty() || row.why.is_empty() {
            problems.push(format!("{f}: scenarios, violates, bug and why must not be empty"));
        }
        for id in row.violates.iter().chain(&row.unnamed).chain(&row.cascades) {
            if !known_ids.contains(id) {
                problems.push(format!("{f}: {id} is no requirement of spec/"));
            }
        }
        for id in &row.unnamed {
            if !row.violates.contains(id) {
                problems.push(format!("{f}: unnamed {id} is not in violates"));
            }
        }
        for id in &row.cascades {
            if row.violates.contains(id) {
                problems.push(format!("{f}: {id} is both violated and a cascade"));
            }
        }
    }
    problems
}
