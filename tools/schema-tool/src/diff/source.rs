//! Where the two schema sets come from: a directory, or `schema/json/` at a git revision.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chatwire_schema::ProtocolVersion;
use serde_json::Value;

use super::error::DiffError;

/// The directory, relative to the repository root, that holds the published schemas.
pub const SCHEMA_DIR_IN_REPO: &str = "schema/json";

/// Name of the optional text file beside a schema set that states its protocol version. A released
/// set (`schema/releases/v1/1.0/`) needs none: its directory is named after its version.
/// `schema/json/` itself holds only generated files.
pub const VERSION_FILE: &str = "VERSION";

/// A set of schema documents by file name, where it came from, and its stated version.
#[derive(Clone, Debug)]
pub struct SchemaSet {
    /// A directory path or `REF:schema/json`, for reports.
    pub label: String,
    /// File name → parsed document.
    pub files: BTreeMap<String, Value>,
    /// The protocol version from a `VERSION` file beside the schemas, else from a directory
    /// named `MAJOR.MINOR`, if any.
    pub version: Option<ProtocolVersion>,
}

impl SchemaSet {
    /// Reads every `*.json` file of `dir` (and `VERSION`, if present; else a directory named like a
    /// version, `1.0`, states its version).
    pub fn from_dir(dir: &Path) -> Result<Self, DiffError> {
        let io = |source| DiffError::Io { path: dir.to_path_buf(), source };
        let mut files = BTreeMap::new();
        let mut version = None;
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else { continue };
            if name == VERSION_FILE {
                let text = read(&path)?;
                version = Some(parse_version(text.trim(), &path.display().to_string())?);
            } else if name.ends_with(".json") && path.is_file() {
                let text = read(&path)?;
                let value = serde_json::from_str(&text)
                    .map_err(|e| DiffError::NotJson { origin: path.display().to_string(), reason: e.to_string() })?;
                files.insert(name, value);
            }
        }
        if files.is_empty() {
            return Err(DiffError::NoSchemas(dir.display().to_string()));
        }
        let version =
            version.or_else(|| dir.file_name().and_then(|n| n.to_str()).and_then(|n| ProtocolVersion::parse(n).ok()));
        Ok(SchemaSet { label: dir.display().to_string(), files, version })
    }

    /// Reads `schema/json/*.json` as committed at `git_ref` in the repository at `repo`.
    pub fn from_git(repo: &Path, git_ref: &str) -> Result<Self, DiffError> {
        check_ref(git_ref)?;
        let listing = git(repo, &["ls-tree", "--name-only", git_ref, "--", &format!("{SCHEMA_DIR_IN_REPO}/")])?;
        let mut files = BTreeMap::new();
        for path in listing.lines().filter(|l| l.ends_with(".json")) {
            let name = path.rsplit('/').next().unwrap_or(path).to_owned();
            let text = git(repo, &["show", &format!("{git_ref}:{path}")])?;
            let origin = format!("{git_ref}:{path}");
            let value =
                serde_json::from_str(&text).map_err(|e| DiffError::NotJson { origin, reason: e.to_string() })?;
            files.insert(name, value);
        }
        if files.is_empty() {
            return Err(DiffError::NoSchemas(format!("{git_ref}:{SCHEMA_DIR_IN_REPO}")));
        }
        Ok(SchemaSet { label: format!("{git_ref}:{SCHEMA_DIR_IN_REPO}"), files, version: None })
    }
}

/// The root of the git work tree containing the current directory.
pub fn repo_root() -> Result<PathBuf, DiffError> {
    let out = git(Path::new("."), &["rev-parse", "--show-toplevel"])?;
    Ok(PathBuf::from(out.trim_end_matches(['\n', '\r'])))
}

/// Parses `MAJOR.MINOR`, naming where it came from on failure.
pub fn parse_version(text: &str, origin: &str) -> Result<ProtocolVersion, DiffError> {
    ProtocolVersion::parse(text).map_err(|e| DiffError::BadVersion { origin: origin.to_owned(), reason: e.to_string() })
}

fn read(path: &Path) -> Result<String, DiffError> {
    std::fs::read_to_string(path).map_err(|source| DiffError::Io { path: path.to_path_buf(), source })
}

/// A revision is passed to git as an argument, never through a shell; still refuse anything that
/// git could read as an option or that is not a plain revision expression.
fn check_ref(git_ref: &str) -> Result<(), DiffError> {
    let plain = !git_ref.is_empty()
        && !git_ref.starts_with('-')
        && git_ref.chars().all(|c| !c.is_whitespace() && !c.is_control() && c != ':');
    if plain {
        Ok(())
    } else {
        Err(DiffError::BadRef(git_ref.to_owned()))
    }
}

fn git(repo: &Path, args: &[&str]) -> Result<String, DiffError> {
    let command = format!("git {}", args.join(" "));
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| DiffError::Git { command: command.clone(), reason: e.to_string() })?;
    if !output.status.success() {
        let reason = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        return Err(DiffError::Git { command, reason });
    }
    String::from_utf8(output.stdout).map_err(|e| DiffError::Git { command, reason: e.to_string() })
}
