//! Where sources are read from: the repository on disk, or a tree held in memory (the unit tests'
//! synthetic trees). Paths are relative to the tree's root, with `/` separators.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A tree of source files.
pub trait Files {
    /// The text of the file at `path`, `None` when there is no such file or it cannot be read.
    fn read(&self, path: &str) -> Option<String>;
    /// The files directly in the directory `dir` (not recursive), as paths, sorted.
    fn list(&self, dir: &str) -> Vec<String>;
}

/// The files under a directory on disk.
#[derive(Clone, Debug)]
pub struct Disk {
    root: PathBuf,
}

impl Disk {
    /// The tree rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Disk { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Files for Disk {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path)).ok()
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.root.join(dir)) else { return Vec::new() };
        let mut out: Vec<String> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().to_str().map(|name| join(dir, name)))
            .collect();
        out.sort();
        out
    }
}

/// A tree held in memory: `path -> text`.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    files: BTreeMap<String, String>,
}

impl Memory {
    /// An empty tree.
    pub fn new() -> Self {
        Memory::default()
    }

    /// Adds (or replaces) the file at `path`.
    pub fn with(mut self, path: &str, text: &str) -> Self {
        self.files.insert(path.to_owned(), text.to_owned());
        self
    }
}

impl Files for Memory {
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(&normalize(path)).cloned()
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let dir = normalize(dir);
        let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
        self.files.keys().filter(|p| p.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('/'))).cloned().collect()
    }
}

/// `dir/name`, or `name` at the root.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// The directory of `path` (`""` at the root).
pub fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// `path` with `.` and `..` segments folded (`a/./b/../c` is `a/c`); a `..` above the root is kept.
pub fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." if out.last().is_some_and(|s| *s != "..") => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_fold_and_memory_lists_one_level() {
        assert_eq!(normalize("a/./b/../c.rs"), "a/c.rs");
        assert_eq!(normalize("../x"), "../x");
        assert_eq!(parent("a/b/c.rs"), "a/b");
        assert_eq!(parent("c.rs"), "");
        let tree = Memory::new().with("src/a.rs", "").with("src/b/c.rs", "").with("src/d.rs", "");
        assert_eq!(tree.list("src"), ["src/a.rs", "src/d.rs"]);
        assert_eq!(tree.read("src/./b/c.rs").as_deref(), Some(""));
    }
}
