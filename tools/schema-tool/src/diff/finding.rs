//! One classified change, and how a report line says which way its document travels.

use serde_json::{json, Value};

use super::rules::{Flow, Level, Rule};

/// How report lines name the way the conformance tooling's documents travel. They are graded like
/// the frames in [`DOCUMENT_FLOWS`], but no client or server is involved, so a line says who
/// writes and who reads them, and which direction's rules grade them.
const RUNNER_DOCUMENTS: &[(&str, &str)] = &[
    ("scenario.json", "written by scenario authors, read by the runner"),
    ("conformance-baseline.json", "written by users, read by the runner"),
    ("conformance-report.json", "written by the runner, read by CI tooling"),
    ("wire-log-record.json", "written by recorders, read by the runner's check-log"),
];

/// Which way the instances of `file` travel, for report lines: client→server or server→client for
/// frames and protocol documents; who writes and reads the conformance tooling's documents, with
/// the direction whose rules grade them.
pub fn travels(file: &str, flow: Flow) -> String {
    match RUNNER_DOCUMENTS.iter().find(|(f, _)| *f == file) {
        Some((_, who)) => format!("{who}; graded like {}", flow.arrow()),
        None => flow.arrow().to_owned(),
    }
}

/// One classified change.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// ERR, WARN or INFO, from the rule and the direction.
    pub level: Level,
    /// What kind of change.
    pub rule: Rule,
    /// The message `type` (or document title) the change is in.
    pub message: String,
    /// The schema file.
    pub file: String,
    /// Which way the message travels.
    pub flow: Flow,
    /// Where in the schema, `$ref` resolved (`/properties/display/enum`).
    pub path: String,
    /// What changed.
    pub detail: String,
    /// The `$defs` entry the change is in, when it is in one (reported once per message).
    pub def: Option<String>,
}

impl Finding {
    /// The human-readable report line.
    pub fn line(&self) -> String {
        let def = self.def.as_ref().map(|d| format!(" [$defs/{d}]")).unwrap_or_default();
        format!(
            "{:<4} {}  {}: {} ({}: {}){def}",
            self.level.as_str(),
            self.message,
            self.path,
            self.detail,
            travels(&self.file, self.flow),
            self.rule.why(self.flow)
        )
    }

    /// The `--json` form.
    pub fn to_json(&self) -> Value {
        json!({
            "level": self.level.as_str(),
            "rule": self.rule.id(),
            "message": self.message,
            "file": self.file,
            "direction": self.flow.as_str(),
            "travels": travels(&self.file, self.flow),
            "path": self.path,
            "detail": self.detail,
            "why": self.rule.why(self.flow),
            "def": self.def,
        })
    }
}
