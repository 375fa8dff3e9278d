//! `chatwire-schema diff`: the protocol-change gate.
//!
//! Compares two sets of published schemas (two directories, or `schema/json/` at a git revision
//! against a directory) message by message and classifies every change as ERR, WARN or INFO by
//! the direction the message travels. The policy it enforces is `spec/versioning.md`; the rule
//! table is [`rules`]. An ERR passes only when the protocol major version goes up.

mod error;
mod finding;
mod rules;
mod shape;
mod source;
mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

use chatwire_schema::schema_gen::{variants, CLIENT_UNION_FILE, SERVER_UNION_FILE};
use chatwire_schema::since::since_through_ref;
use chatwire_schema::validate::direction_of;
use chatwire_schema::{ProtocolVersion, PROTOCOL_VERSION};
use serde_json::{json, Value};

pub use error::DiffError;
pub use finding::Finding;
pub use rules::{Flow, Level, Rule};
pub use source::SchemaSet;

/// Published documents that are not frames, and which way they travel: the UiState reaches
/// clients inside snapshots and updates; an agent script reaches servers inside `session.hello`.
/// The conformance tooling's documents travel like them: scenario and baseline files are written
/// by authors and read by the runner (like a request, widening is safe: the reader is the newer
/// party), the run report is written by the runner and read by CI tooling (like a response). Wire
/// log records are written by recorders and read by `check-log` (like a request).
const DOCUMENT_FLOWS: &[(&str, Flow)] = &[
    ("ui-state.json", Flow::ServerToClient),
    ("agent-script.json", Flow::ClientToServer),
    ("scenario.json", Flow::ClientToServer),
    ("conformance-baseline.json", Flow::ClientToServer),
    ("conformance-report.json", Flow::ServerToClient),
    ("wire-log-record.json", Flow::ClientToServer),
];

/// A message or document of a schema set.
#[derive(Clone, Debug)]
struct Entry {
    /// Name in reports: the wire `type`, or a document's title.
    name: String,
    /// The file holding its schema, if the set has one (a union may list a message without one).
    file: Option<String>,
    flow: Flow,
    /// A frame (as opposed to a document such as `ui-state.json`).
    is_message: bool,
}

/// Every message (by wire type) and document (by file name) of a set, with its direction.
///
/// Direction comes from the set's own unions (`client-frame.json`, `server-frame.json`), then from
/// the frame types this build knows, then from [`DOCUMENT_FLOWS`]; otherwise it is unknown and
/// every change in what the schema accepts is an ERR.
fn catalogue(set: &SchemaSet) -> BTreeMap<String, Entry> {
    let mut union_flow = BTreeMap::new();
    for (file, flow) in [(CLIENT_UNION_FILE, Flow::ClientToServer), (SERVER_UNION_FILE, Flow::ServerToClient)] {
        if let Some(union) = set.files.get(file) {
            for (wire, _) in variants(union) {
                union_flow.insert(wire, flow);
            }
        }
    }
    let mut out = BTreeMap::new();
    for (file, schema) in &set.files {
        if file == CLIENT_UNION_FILE || file == SERVER_UNION_FILE {
            continue;
        }
        let wire = schema.pointer("/properties/type/const").and_then(Value::as_str);
        match wire {
            Some(wire) if *file == format!("{wire}.json") => {
                let flow = union_flow
                    .get(wire)
                    .copied()
                    .or_else(|| direction_of(wire).map(Flow::from))
                    .unwrap_or(Flow::Unknown);
                out.insert(
                    wire.to_owned(),
                    Entry { name: wire.to_owned(), file: Some(file.clone()), flow, is_message: true },
                );
            }
            _ => {
                let flow = DOCUMENT_FLOWS.iter().find(|(f, _)| f == file).map_or(Flow::Unknown, |(_, flow)| *flow);
                let name = schema.get("title").and_then(Value::as_str).unwrap_or(file).to_owned();
                out.insert(file.clone(), Entry { name, file: Some(file.clone()), flow, is_message: false });
            }
        }
    }
    for (wire, flow) in union_flow {
        out.entry(wire.clone()).or_insert(Entry { name: wire, file: None, flow, is_message: true });
    }
    out
}

/// The since annotation of a message or document of `set`: on its file's root, else on its branch
/// of the set's union.
fn since_of_entry(set: &SchemaSet, entry: &Entry) -> Option<ProtocolVersion> {
    if let Some(doc) = entry.file.as_ref().and_then(|f| set.files.get(f)) {
        return since_through_ref(doc, doc);
    }
    [CLIENT_UNION_FILE, SERVER_UNION_FILE].iter().filter_map(|f| set.files.get(*f)).find_map(|union| {
        variants(union).into_iter().find(|(wire, _)| *wire == entry.name).and_then(|(_, b)| since_through_ref(b, union))
    })
}

/// Every change from `old` to `new`, message by message; `baseline` is the old set's version,
/// against which since annotations are read.
pub fn diff_sets(old: &SchemaSet, new: &SchemaSet, baseline: ProtocolVersion) -> Vec<Finding> {
    let (old_entries, new_entries) = (catalogue(old), catalogue(new));
    let keys: BTreeSet<&String> = old_entries.keys().chain(new_entries.keys()).collect();
    let mut findings = Vec::new();
    let whole = |rule: Rule, entry: &Entry, detail: String| Finding {
        level: rule.level(entry.flow),
        rule,
        message: entry.name.clone(),
        file: entry.file.clone().unwrap_or_else(|| "(union only)".into()),
        flow: entry.flow,
        path: "/".into(),
        detail,
        def: None,
    };
    for key in keys {
        match (old_entries.get(key), new_entries.get(key)) {
            (Some(o), Some(n)) if o.flow != n.flow && o.flow != Flow::Unknown && n.flow != Flow::Unknown => {
                findings.push(whole(Rule::MessageRemoved, o, format!("{} removed from {}", o.name, o.flow.arrow())));
                findings.push(whole(Rule::MessageAdded, n, format!("{} added to {}", n.name, n.flow.arrow())));
            }
            (Some(o), Some(n)) => {
                let flow = if n.flow == Flow::Unknown { o.flow } else { n.flow };
                let (Some(of), Some(nf)) = (&o.file, &n.file) else { continue };
                let (Some(old_doc), Some(new_doc)) = (old.files.get(of), new.files.get(nf)) else { continue };
                findings.extend(walk::Walker::new(old_doc, new_doc, flow, &n.name, nf, baseline).run());
            }
            (Some(o), None) => {
                let rule = if o.is_message { Rule::MessageRemoved } else { Rule::DocumentRemoved };
                findings.push(whole(rule, o, format!("{} removed", o.name)))
            }
            (None, Some(n)) => {
                let rule = if n.is_message { Rule::MessageAdded } else { Rule::DocumentAdded };
                let (rule, detail) =
                    shape::addition_rule(rule, n.flow, since_of_entry(new, n), baseline, format!("{} added", n.name));
                findings.push(whole(rule, n, detail))
            }
            (None, None) => {}
        }
    }
    findings
}

/// A finished comparison: the findings and the version decision.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every change found.
    pub findings: Vec<Finding>,
    /// Baseline protocol version.
    pub old_version: ProtocolVersion,
    /// Candidate protocol version.
    pub new_version: ProtocolVersion,
    /// Labels of the two sets.
    pub labels: (String, String),
}

impl Outcome {
    /// Compares two sets; the versions decide whether ERRs are acknowledged.
    pub fn new(
        old: &SchemaSet,
        new: &SchemaSet,
        old_version: ProtocolVersion,
        new_version: ProtocolVersion,
    ) -> Result<Self, DiffError> {
        if new_version.major < old_version.major {
            return Err(DiffError::VersionBackwards { old: old_version, new: new_version });
        }
        Ok(Outcome {
            findings: diff_sets(old, new, old_version),
            old_version,
            new_version,
            labels: (old.label.clone(), new.label.clone()),
        })
    }

    /// Number of findings at `level`.
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }

    /// True when the protocol major version goes up, which is what allows breaking changes.
    pub fn major_bump(&self) -> bool {
        self.new_version.major > self.old_version.major
    }

    /// `pass` (no ERR), `acknowledged` (ERRs with a major bump) or `fail`.
    pub fn verdict(&self) -> &'static str {
        match (self.count(Level::Err), self.major_bump()) {
            (0, _) => "pass",
            (_, true) => "acknowledged",
            (_, false) => "fail",
        }
    }

    /// 0 unless an ERR is not acknowledged.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.verdict() == "fail")
    }

    /// The human-readable report.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            out.push_str(&f.line());
            out.push('\n');
        }
        let (e, w, i) = (self.count(Level::Err), self.count(Level::Warn), self.count(Level::Info));
        let decision = match self.verdict() {
            "pass" if self.findings.is_empty() => "no changes".to_owned(),
            "pass" => "no breaking change".to_owned(),
            "acknowledged" => "breaking changes acknowledged by the major version change".to_owned(),
            _ => "breaking changes need a new protocol major version (spec/versioning.md)".to_owned(),
        };
        out.push_str(&format!(
            "{e} ERR, {w} WARN, {i} INFO: {} -> {}; protocol {} -> {}: {decision}\n",
            self.labels.0, self.labels.1, self.old_version, self.new_version
        ));
        out
    }

    /// The `--json` report.
    pub fn render_json(&self) -> Value {
        json!({
            "old": self.labels.0,
            "new": self.labels.1,
            "old_version": self.old_version.to_string(),
            "new_version": self.new_version.to_string(),
            "major_bump": self.major_bump(),
            "verdict": self.verdict(),
            "counts": {
                "ERR": self.count(Level::Err),
                "WARN": self.count(Level::Warn),
                "INFO": self.count(Level::Info),
            },
            "changes": self.findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The `diff` subcommand's arguments.
#[derive(Clone, Debug, Default)]
pub struct DiffArgs {
    /// `OLD_DIR NEW_DIR`, or with `--base` at most `NEW_DIR`.
    pub dirs: Vec<PathBuf>,
    /// Compare `schema/json/` at this git revision (the old side).
    pub base: Option<String>,
    /// Print JSON instead of lines.
    pub json: bool,
    /// Baseline protocol version (default: the old set's VERSION file, else the new version).
    pub old_version: Option<String>,
    /// Candidate protocol version (default: the new set's VERSION file, else this build's).
    pub new_version: Option<String>,
    /// Print the rule table instead of comparing.
    pub rules: bool,
}

/// Runs the subcommand; exit 0 (no unacknowledged ERR), 1 (an unacknowledged ERR), 2 (error).
pub fn run(args: &DiffArgs) -> ExitCode {
    if args.rules {
        print_rules(args.json);
        return ExitCode::SUCCESS;
    }
    match outcome(args) {
        Ok(outcome) => {
            if args.json {
                let text = serde_json::to_string_pretty(&outcome.render_json()).unwrap_or_default();
                println!("{text}");
            } else {
                print!("{}", outcome.render_text());
            }
            ExitCode::from(outcome.exit_code())
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The rule table as the spec shows it (`| rule | client→server | server→client |`), or as JSON.
fn print_rules(as_json: bool) {
    if as_json {
        let rows: Vec<Value> = Rule::ALL
            .iter()
            .map(|r| {
                json!({
                    "rule": r.id(),
                    "client-to-server": r.level(Flow::ClientToServer).as_str(),
                    "server-to-client": r.level(Flow::ServerToClient).as_str(),
                    "unknown": r.level(Flow::Unknown).as_str(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
        return;
    }
    for r in Rule::ALL {
        println!(
            "| `{}` | {} | {} | {} / {} |",
            r.id(),
            r.level(Flow::ClientToServer),
            r.level(Flow::ServerToClient),
            r.why(Flow::ClientToServer),
            r.why(Flow::ServerToClient)
        );
    }
}

fn outcome(args: &DiffArgs) -> Result<Outcome, DiffError> {
    let (old, new) = match (&args.base, args.dirs.as_slice()) {
        (Some(git_ref), dirs) if dirs.len() <= 1 => {
            let root = source::repo_root()?;
            let new_dir = dirs.first().cloned().unwrap_or_else(|| root.join(source::SCHEMA_DIR_IN_REPO));
            (SchemaSet::from_git(&root, git_ref)?, SchemaSet::from_dir(&new_dir)?)
        }
        (None, [old_dir, new_dir]) => (SchemaSet::from_dir(old_dir)?, SchemaSet::from_dir(new_dir)?),
        _ => {
            return Err(DiffError::Usage(
                "usage: chatwire-schema diff OLD_DIR NEW_DIR | diff --base GIT_REF [NEW_DIR]".into(),
            ))
        }
    };
    let new_version = match &args.new_version {
        Some(v) => source::parse_version(v, "--new-version")?,
        None => new.version.unwrap_or(PROTOCOL_VERSION),
    };
    let old_version = match &args.old_version {
        Some(v) => source::parse_version(v, "--old-version")?,
        // Unknown baseline version: assume no major bump, so a breaking change cannot slip through.
        None => old.version.unwrap_or(new_version),
    };
    Outcome::new(&old, &new, old_version, new_version)
}
