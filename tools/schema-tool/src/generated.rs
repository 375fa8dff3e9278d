//! Every file the repository generates, and how `export` writes them and `check` compares them.
//!
//! Besides the JSON Schemas (`schema/json/`) the tool generates the AsyncAPI document
//! (`schema/asyncapi.json`), the protocol facts other languages generate their tables from
//! (`fixtures/protocol-facts.json`, `chatwire_schema::protocol_facts`), and the copies that let
//! the crates build from their published packages, outside this repository:
//! - `schema/spec/`: the spec text the requirement registry embeds, copied from `spec/`;
//! - `conformance/scenarios/` and `conformance/snapshots/`: what the runner embeds, copied from
//!   `fixtures/scenarios/` and `fixtures/snapshots/`.
//!
//! The copies are never edited by hand: edit `spec/` or `fixtures/` and run `export`.

use std::path::{Path, PathBuf};

use chatwire_schema::schema_gen::{to_pretty, SchemaDoc};

use crate::asyncapi;

/// A generated set could not be built or written.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A source directory or file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// What was read.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// A source directory holds none of the files it must provide.
    #[error("{path} holds no {suffix} file to copy")]
    EmptySource {
        /// The directory.
        path: PathBuf,
        /// The file name suffix looked for.
        suffix: &'static str,
    },
    /// The spec's requirement registry does not parse, so no requirement set can be frozen.
    #[error("the spec's requirement registry is invalid: {0}")]
    Registry(#[from] chatwire_schema::requirements::RegistryError),
    /// A generated file or directory could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// What was written.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// Files generated into one directory.
#[derive(Clone, Debug)]
pub struct GeneratedSet {
    /// The directory.
    pub dir: PathBuf,
    /// `(file name, contents)` of every file of the set.
    pub files: Vec<(String, String)>,
    /// When the set owns every file of `dir` with this suffix: others are stale, so `export`
    /// removes them and `check` reports them. `None` when the directory holds other files too.
    pub owns_suffix: Option<&'static str>,
    /// What the files are generated from, for messages (`the types`, `spec/`).
    pub source: String,
}

/// The schemas of `docs`, as the files of `dir`.
pub fn schema_set(dir: PathBuf, docs: &[SchemaDoc]) -> GeneratedSet {
    GeneratedSet {
        dir,
        files: docs.iter().map(|d| (d.file.clone(), to_pretty(&d.schema))).collect(),
        owns_suffix: Some(".json"),
        source: "the types".into(),
    }
}

/// Everything generated in the repository rooted at `root`, from the types in `docs` and the
/// sources under `root`.
pub fn repository_sets(root: &Path, docs: &[SchemaDoc]) -> Result<Vec<GeneratedSet>, GenerateError> {
    let schema = root.join("schema");
    Ok(vec![
        schema_set(schema.join("json"), docs),
        GeneratedSet {
            dir: schema.clone(),
            files: vec![(asyncapi::FILE.to_owned(), to_pretty(&asyncapi::document(docs, "json")))],
            owns_suffix: None,
            source: "the types".into(),
        },
        facts_set(root),
        copy_set(root, "spec", "schema/spec", ".md")?,
        copy_set(root, "fixtures/scenarios", "conformance/scenarios", ".json")?,
        copy_set(root, "fixtures/snapshots", "conformance/snapshots", ".snap")?,
    ])
}

/// `fixtures/protocol-facts.json`, from the crate's constants and frame facts.
fn facts_set(root: &Path) -> GeneratedSet {
    let file = Path::new(chatwire_schema::protocol_facts::FILE);
    let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str())) else {
        unreachable!("protocol_facts::FILE names a file in a directory")
    };
    GeneratedSet {
        dir: root.join(dir),
        files: vec![(name.to_owned(), chatwire_schema::protocol_facts::document_text())],
        owns_suffix: None,
        source: "the crate's facts (chatwire_schema::protocol_facts)".into(),
    }
}

/// A copy of the `suffix` files of `root/from` (not recursive) into `root/to`.
fn copy_set(root: &Path, from: &str, to: &str, suffix: &'static str) -> Result<GeneratedSet, GenerateError> {
    let source = root.join(from);
    let read_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| GenerateError::Read { path, source }
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&source).map_err(read_err(&source))? {
        let path = entry.map_err(read_err(&source))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        if name.ends_with(suffix) && path.is_file() {
            let text = std::fs::read_to_string(&path).map_err(read_err(&path))?;
            files.push((name.to_owned(), text));
        }
    }
    if files.is_empty() {
        return Err(GenerateError::EmptySource { path: source, suffix });
    }
    files.sort();
    Ok(GeneratedSet { dir: root.join(to), files, owns_suffix: Some(suffix), source: format!("{from}/") })
}

impl GeneratedSet {
    /// Writes every file and removes the stale ones; returns the names of the removed files.
    pub fn write(&self) -> Result<Vec<String>, GenerateError> {
        let write_err = |path: PathBuf| move |source| GenerateError::Write { path, source };
        std::fs::create_dir_all(&self.dir).map_err(write_err(self.dir.clone()))?;
        for (name, text) in &self.files {
            let path = self.dir.join(name);
            // Unchanged files keep their timestamps, so builds that embed them are not redone.
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(&path, text).map_err(write_err(path))?;
            }
        }
        let mut removed = Vec::new();
        for stale in self.stale_files() {
            let path = self.dir.join(&stale);
            std::fs::remove_file(&path).map_err(write_err(path))?;
            removed.push(stale);
        }
        Ok(removed)
    }

    /// One line per file of the directory that differs from the set: edited, missing or stale.
    pub fn drift(&self) -> Vec<String> {
        let mut drift = Vec::new();
        for (name, text) in &self.files {
            let path = self.dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(committed) if committed == *text => {}
                Ok(_) => drift.push(format!("{}: differs from what {} generate", path.display(), self.source)),
                Err(_) => drift.push(format!("{}: missing", path.display())),
            }
        }
        for stale in self.stale_files() {
            drift.push(format!("{}: not generated from {}; remove it", self.dir.join(stale).display(), self.source));
        }
        drift
    }

    /// Files of the directory with the owned suffix that the set does not hold.
    fn stale_files(&self) -> Vec<String> {
        let Some(suffix) = self.owns_suffix else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut stale: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(suffix) && !self.files.iter().any(|(f, _)| f == name))
            .collect();
        stale.sort();
        stale
    }
}
