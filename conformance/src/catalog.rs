//! Where scenarios and golden snapshots come from: embedded in the binary at build time (so the
//! runner works from any directory and after `cargo install`), or a directory given on the command line.

use std::path::Path;

use crate::scenario::{Scenario, ScenarioError, ScenarioLoader};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// Why the scenarios could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The directory could not be read.
    #[error("cannot read scenarios from {dir}: {source}")]
    Io {
        /// The directory.
        dir: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// One or more files are invalid.
    #[error("{} invalid scenario file(s):\n  {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  "))]
    Invalid(Vec<ScenarioError>),
}

/// The scenarios embedded at build time, validated.
pub fn embedded_scenarios() -> Result<Vec<Scenario>, CatalogError> {
    ScenarioLoader::new().parse_all(EMBEDDED_SCENARIOS.iter().copied()).map_err(CatalogError::Invalid)
}

/// The `*.json` scenarios of a directory, validated.
pub fn scenarios_from_dir(dir: &Path) -> Result<Vec<Scenario>, CatalogError> {
    let io = |source| CatalogError::Io { dir: dir.display().to_string(), source };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
        if name.ends_with(".json") {
            files.push((name, std::fs::read_to_string(&path).map_err(io)?));
        }
    }
    ScenarioLoader::new().parse_all(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))).map_err(CatalogError::Invalid)
}
