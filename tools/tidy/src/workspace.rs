//! The workspace's crates as `cargo metadata` lists them: each library and binary target, its
//! root file, and each package's dependencies on other crates of the workspace.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::files::Files;
use crate::graph::Graph;
use crate::rust::{self, TreeError};

/// How long `cargo metadata --no-deps --offline` may take.
const METADATA_DEADLINE: Duration = Duration::from_secs(120);

/// Why the workspace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// `cargo metadata` could not run, failed, or took too long.
    #[error("cargo metadata: {0}")]
    Metadata(String),
    /// Its output is not what cargo writes.
    #[error("cargo metadata wrote something unexpected: {0}")]
    Shape(String),
    /// A crate's sources could not be read.
    #[error(transparent)]
    Tree(#[from] TreeError),
}

/// One library or binary target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The crate's name as code names it (`chatwire_schema`).
    pub name: String,
    /// Its root file, from the repository root.
    pub root: String,
}

/// One package of the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// Its name (`chatwire-schema`).
    pub name: String,
    /// Its library and binary targets.
    pub targets: Vec<Target>,
    /// The workspace packages it depends on (normal and build dependencies; not dev).
    pub depends_on: Vec<String>,
}

/// Runs `cargo metadata` for the workspace at `root` and lists its packages.
pub fn packages(root: &Path) -> Result<Vec<Package>, WorkspaceError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = root.join("Cargo.toml");
    let mut child = Command::new(cargo)
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| WorkspaceError::Metadata(e.to_string()))?;
    let mut stdout = child.stdout.take().ok_or_else(|| WorkspaceError::Metadata("no stdout".into()))?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| WorkspaceError::Metadata(e.to_string()))? {
            Some(status) => break status,
            None if started.elapsed() > METADATA_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(WorkspaceError::Metadata(format!("no answer within {METADATA_DEADLINE:?}")));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let text = reader
        .join()
        .map_err(|_| WorkspaceError::Metadata("the reader thread failed".into()))?
        .map_err(|e| WorkspaceError::Metadata(e.to_string()))?;
    if !status.success() {
        return Err(WorkspaceError::Metadata(format!("exited with {status}")));
    }
    let metadata: Value = serde_json::from_str(&text).map_err(|e| WorkspaceError::Shape(e.to_string()))?;
    // cargo writes canonical paths: strip the canonical root from them.
    let root = root.canonicalize().map_err(|e| WorkspaceError::Metadata(format!("{}: {e}", root.display())))?;
    parse_metadata(&metadata, &root)
}

/// The packages of `cargo metadata`'s output, with paths relative to `root`.
pub fn parse_metadata(metadata: &Value, root: &Path) -> Result<Vec<Package>, WorkspaceError> {
    let shape = |what: &str| WorkspaceError::Shape(what.to_owned());
    let root_text = root.to_string_lossy().replace('\\', "/");
    let relative = |path: &str| {
        let path = path.replace('\\', "/");
        path.strip_prefix(&format!("{root_text}/")).map(str::to_owned).unwrap_or(path)
    };
    let list = metadata["packages"].as_array().ok_or_else(|| shape("no packages"))?;
    let names: BTreeSet<&str> = list.iter().filter_map(|p| p["name"].as_str()).collect();
    let mut out = Vec::new();
    for package in list {
        let name = package["name"].as_str().ok_or_else(|| shape("a package without a name"))?;
        let mut targets = Vec::new();
        for target in package["targets"].as_array().ok_or_else(|| shape("a package without targets"))? {
            let kinds: Vec<&str> = target["kind"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            if !kinds.iter().any(|k| matches!(*k, "lib" | "rlib" | "bin" | "proc-macro")) {
                continue;
            }
            let target_name = target["name"].as_str().ok_or_else(|| shape("a target without a name"))?;
            let src = target["src_path"].as_str().ok_or_else(|| shape("a target without src_path"))?;
            targets.push(Target { name: target_name.replace('-', "_"), root: relative(src) });
        }
        let depends_on = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| d["kind"].as_str() != Some("dev"))
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(d))
            .map(str::to_owned)
            .collect();
        out.push(Package { name: name.to_owned(), targets, depends_on });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The graph of every file of every target of `packages`, with its edges to the other crates.
pub fn rust_graph(files: &dyn Files, packages: &[Package]) -> Result<Graph, WorkspaceError> {
    let crates: BTreeSet<String> = packages.iter().flat_map(|p| p.targets.iter().map(|t| t.name.clone())).collect();
    let mut graph = Graph::new();
    for target in packages.iter().flat_map(|p| &p.targets) {
        graph.extend(rust::crate_graph(files, &target.name, &target.root, &crates)?);
    }
    Ok(graph)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn metadata_gives_targets_with_code_names_and_workspace_dependencies() {
        let metadata = json!({"packages": [
            {"name": "a-lib", "targets": [
                {"name": "a_lib", "kind": ["lib"], "src_path": "/repo/a/src/lib.rs"},
                {"name": "a-tool", "kind": ["bin"], "src_path": "/repo/a/src/main.rs"},
                {"name": "bench", "kind": ["bench"], "src_path": "/repo/a/benches/b.rs"},
            ], "dependencies": [
                {"name": "b", "kind": null}, {"name": "serde", "kind": null}, {"name": "c", "kind": "dev"},
            ]},
            {"name": "b", "targets": [{"name": "b", "kind": ["lib"], "src_path": "/repo/b/src/lib.rs"}], "dependencies": []},
            {"name": "c", "targets": [], "dependencies": []},
        ]});
        let packages = parse_metadata(&metadata, Path::new("/repo")).expect("metadata");
        assert_eq!(packages[0].name, "a-lib");
        assert_eq!(
            packages[0].targets,
            [
                Target { name: "a_lib".into(), root: "a/src/lib.rs".into() },
                Target { name: "a_tool".into(), root: "a/src/main.rs".into() },
            ]
        );
        assert_eq!(packages[0].depends_on, ["b"], "dev dependencies and outside crates are left out");
    }
}
