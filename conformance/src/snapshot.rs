//! Golden snapshots: a normalized projection of the final UiState and of the frame-type transcript,
//! stored as insta `.snap` files under `fixtures/snapshots/`. The workspace tests assert them with
//! insta; the CLI parses the same files itself and prints a line diff, so no cargo is needed.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

pub use chatwire_monitor::normalize::Normalizer;
pub use chatwire_monitor::text::json_diff;

/// The text of a snapshot: the normalized state and the transcript, as pretty JSON.
pub fn projection(normalizer: &mut Normalizer, state: &Value, transcript: &[String]) -> String {
    let mut doc = Map::new();
    doc.insert("state".into(), normalizer.normalize(state));
    doc.insert("transcript".into(), Value::Array(transcript.iter().cloned().map(Value::String).collect()));
    serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default()
}

/// The file name of a scenario's snapshot.
pub fn file_name(scenario: &str, snapshot: &str) -> String {
    format!("{scenario}__{snapshot}.snap")
}

/// The body of an insta `.snap` file: everything after the metadata header (`---` … `---`).
pub fn parse_snap(text: &str) -> Option<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            let body: Vec<&str> = lines.collect();
            return Some(body.join("\n").trim_end().to_owned());
        }
    }
    None
}

/// Golden snapshots by file name.
#[derive(Clone, Debug, Default)]
pub struct SnapshotStore {
    files: BTreeMap<String, String>,
}

impl SnapshotStore {
    /// The snapshots embedded in the binary at build time.
    pub fn embedded() -> Self {
        SnapshotStore {
            files: crate::catalog::EMBEDDED_SNAPSHOTS.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect(),
        }
    }

    /// The `.snap` files of a directory.
    pub fn from_dir(dir: &Path) -> std::io::Result<Self> {
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            if name.ends_with(".snap") {
                files.insert(name.to_owned(), std::fs::read_to_string(&path)?);
            }
        }
        Ok(SnapshotStore { files })
    }

    /// The golden body for a scenario's snapshot, if stored and readable.
    pub fn golden(&self, scenario: &str, snapshot: &str) -> Option<Result<String, String>> {
        let file = file_name(scenario, snapshot);
        self.files.get(&file).map(|text| parse_snap(text).ok_or_else(|| format!("{file} is not an insta .snap file")))
    }
}

/// A readable line diff (`-` golden, `+` actual) with a little context; empty when equal.
pub fn line_diff(expected: &str, actual: &str, max_lines: usize) -> Vec<String> {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    if a == b {
        return Vec::new();
    }
    // LCS table; snapshots are small, and the size is capped so a huge answer cannot blow up memory.
    const CAP: usize = 4000;
    if a.len() > CAP || b.len() > CAP {
        return vec![format!("(snapshot too large to diff: {} vs {} lines)", a.len(), b.len())];
    }
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    // Keep changed lines with two lines of context around them.
    let changed: Vec<usize> = ops.iter().enumerate().filter(|(_, (c, _))| *c != ' ').map(|(k, _)| k).collect();
    let mut out = Vec::new();
    let mut last_shown: Option<usize> = None;
    for (k, (c, line)) in ops.iter().enumerate() {
        let near = changed.iter().any(|&x| x.abs_diff(k) <= 2);
        if !near {
            continue;
        }
        if last_shown.is_some_and(|l| k > l + 1) {
            out.push("  …".to_owned());
        }
        out.push(format!("{c} {line}"));
        last_shown = Some(k);
        if out.len() >= max_lines {
            out.push(format!("  … ({} changed lines in all)", changed.len()));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snap_files_parse() {
        let text = "---\nsource: conformance/tests/reference.rs\nexpression: projection\n---\n{\n  \"a\": 1\n}\n";
        assert_eq!(parse_snap(text).unwrap(), "{\n  \"a\": 1\n}");
        assert_eq!(parse_snap("no header"), None);
        assert_eq!(parse_snap("---\nunterminated"), None);
    }

    #[test]
    fn line_diff_shows_changes_with_context() {
        let golden = "a\nb\nc\nd\ne\nf\ng";
        let actual = "a\nb\nc\nX\ne\nf\ng";
        let diff = line_diff(golden, actual, 20);
        assert!(diff.contains(&"- d".to_owned()), "{diff:?}");
        assert!(diff.contains(&"+ X".to_owned()), "{diff:?}");
        assert!(diff.contains(&"  c".to_owned()), "{diff:?}");
        assert!(!diff.contains(&"  a".to_owned()), "{diff:?}");
        assert!(line_diff(golden, golden, 20).is_empty());
    }
}
