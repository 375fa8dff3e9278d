//! The requirement registry, derived from the normative text in `spec/`.
//!
//! Spec: `spec/README.md#requirement-ids`. Every normative statement in the spec starts with a
//! marker `**[PREFIX-NNN]**`; this module reads the embedded Markdown and turns each marked
//! statement into a [`Requirement`]. The spec is the only place requirements are written: the
//! conformance runner, reports and tests take ids, levels and wording from here.
//!
//! Parsing rules:
//! - A marker is `**[` … `]**` outside fenced code blocks and inline code spans. Its content must
//!   be uppercase ASCII letters, a hyphen and exactly three digits (`RESUME-003`).
//! - The statement runs from the marker to the end of its block: a blank line, a heading, the
//!   next list item, the next marker, or (inside a table row) the next cell separator.
//! - The level is the strongest RFC 2119 keyword in the statement (`MUST`/`MUST NOT`/`REQUIRED`/
//!   `SHALL` → [`Level::Must`], `SHOULD`/`RECOMMENDED` → [`Level::Should`], `MAY`/`OPTIONAL` →
//!   [`Level::May`]); a statement without one is an error.
//! - A statement that ends with `(untestable: <reason>)` carries that reason in
//!   [`Requirement::untestable`]; the note is not part of [`Requirement::text`].
//! - A statement may open, right after its marker, with its version metadata in emphasised
//!   parentheses: `*(since 1.1, retry)*`, `*(since 1.0, erratum 2026-11-23)*`
//!   (`spec/README.md#versions-and-errata`). It gives [`Requirement::since`],
//!   [`Requirement::group`] and [`Requirement::erratum`] and is not part of [`Requirement::text`];
//!   a statement without it applies from 1.0, to every implementation (group `core`), as released.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ProtocolVersion;

/// Every spec file the registry reads, as `(file name, Markdown)`, in reading order. Embedded from
/// `spec/` in the repository, from the package's copy `schema/spec/` elsewhere (`build.rs`).
pub const SPEC_FILES: &[(&str, &str)] = &[
    ("README.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/README.md"))),
    ("overview.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/overview.md"))),
    ("transport.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/transport.md"))),
    ("session.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/session.md"))),
    ("tool-calls.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/tool-calls.md"))),
    ("run-completion.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/run-completion.md"))),
    ("ui-state.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/ui-state.md"))),
    ("resume.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/resume.md"))),
    ("rewind.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/rewind.md"))),
    ("retry.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/retry.md"))),
    ("attach.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/attach.md"))),
    ("window.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/window.md"))),
    ("cancel.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/cancel.md"))),
    ("cluster.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/cluster.md"))),
    ("streaming.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/streaming.md"))),
    ("reasoning.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/reasoning.md"))),
    ("usage.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/usage.md"))),
    ("subagents.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/subagents.md"))),
    ("multi-tool.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/multi-tool.md"))),
    ("errors.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/errors.md"))),
    ("conformance-profile.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/conformance-profile.md"))),
    ("versioning.md", include_str!(concat!(env!("CHATWIRE_SPEC_DIR"), "/versioning.md"))),
];

/// How binding a requirement is, and how the conformance runner treats a violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// `MUST`, `MUST NOT`, `REQUIRED`, `SHALL`, `SHALL NOT`: a violation fails the run.
    #[serde(rename = "MUST")]
    Must,
    /// `SHOULD`, `SHOULD NOT`, `RECOMMENDED`, `NOT RECOMMENDED`: a violation is a warning.
    #[serde(rename = "SHOULD")]
    Should,
    /// `MAY`, `OPTIONAL`: checked only when the implementation offers the capability.
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// The keyword as written in reports: `MUST`, `SHOULD` or `MAY`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One normative statement of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// The stable id, e.g. `RESUME-003`.
    pub id: String,
    /// How binding it is.
    pub level: Level,
    /// The spec file that defines it, e.g. `resume.md`.
    pub file: String,
    /// The 1-based line of the marker in that file.
    pub line: usize,
    /// The GitHub-style anchor of the nearest heading above it (empty before the first heading).
    pub section: String,
    /// The statement without its marker and without an `(untestable: …)` note, on one line.
    pub text: String,
    /// Why no machine can check it, when the spec says so.
    pub untestable: Option<String>,
    /// The protocol version it applies from: connections that negotiated this minor or a later
    /// one are judged by it (`since` in its metadata; 1.0 without metadata).
    pub since: ProtocolVersion,
    /// The capability or feature it belongs to (`retry`, `ui_state_patch`…), or `core` when it
    /// binds every implementation of its version.
    pub group: String,
    /// For a rule added after the version it applies from was released: the date it was added
    /// (`YYYY-MM-DD`). It is an erratum to every released minor from [`Requirement::since`] that
    /// was released on or before that date (`crate::requirement_sets`).
    pub erratum: Option<String>,
}

/// The group of a requirement that belongs to no capability or feature.
pub const CORE_GROUP: &str = "core";

/// The group of the requirements a deployment of several instances owes its clients
/// (`spec/cluster.md`): no capability announces it, and only a run against several instances
/// (`chatwire-conformance run --replicas N`) can observe them.
pub const CLUSTER_GROUP: &str = "cluster";

impl Requirement {
    /// Where the requirement is defined, as a link relative to the repository root:
    /// `spec/<file>#<section>`.
    pub fn link(&self) -> String {
        if self.section.is_empty() {
            format!("spec/{}", self.file)
        } else {
            format!("spec/{}#{}", self.file, self.section)
        }
    }
}

/// A place in the spec: file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The spec file.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Why the spec text does not yield a valid registry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A marker whose content is not `PREFIX-NNN` (uppercase letters, hyphen, three digits).
    #[error("{at}: malformed requirement id {found:?}, expected uppercase letters, '-' and three digits")]
    MalformedId {
        /// Where the marker is.
        at: Location,
        /// What stands between `**[` and `]**`.
        found: String,
    },
    /// Two statements carry the same id.
    #[error("duplicate requirement id {id}: defined at {first} and again at {second}")]
    DuplicateId {
        /// The id.
        id: String,
        /// The first definition.
        first: Location,
        /// The second definition.
        second: Location,
    },
    /// A statement with no RFC 2119 keyword, so it has no level.
    #[error("{at}: requirement {id} has no MUST, SHOULD or MAY keyword")]
    MissingLevel {
        /// Where the marker is.
        at: Location,
        /// The id.
        id: String,
    },
    /// A statement with an `(untestable:` note but no reason in it.
    #[error("{at}: requirement {id} is marked untestable without a reason")]
    EmptyUntestableReason {
        /// Where the marker is.
        at: Location,
        /// The id.
        id: String,
    },
    /// Version metadata (`*(since 1.1, retry)*`) that does not parse.
    #[error("{at}: requirement {id} has malformed version metadata {found:?}: {reason}")]
    MalformedMetadata {
        /// Where the marker is.
        at: Location,
        /// The id.
        id: String,
        /// What stands between `*(` and `)*`.
        found: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// Every requirement of the embedded spec, in file order then line order. Ids are unique across
/// all files.
pub fn all() -> Result<Vec<Requirement>, RegistryError> {
    from_files(SPEC_FILES)
}

/// Parses several Markdown files, given as `(file name, Markdown)`, into one registry whose ids are
/// unique across all of them.
pub fn from_files(files: &[(&str, &str)]) -> Result<Vec<Requirement>, RegistryError> {
    let mut out = Vec::new();
    for (file, markdown) in files {
        out.extend(parse(file, markdown)?);
    }
    check_unique(&out)?;
    Ok(out)
}

/// Parses the requirements of one Markdown file; ids must be unique within it.
pub fn parse(file: &str, markdown: &str) -> Result<Vec<Requirement>, RegistryError> {
    let mut out = Vec::new();
    let mut open: Option<OpenStatement> = None;
    let mut section = String::new();
    let mut anchors: HashMap<String, usize> = HashMap::new();
    let mut fence: Option<&str> = None;

    for (index, raw) in markdown.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = raw.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            finish(&mut open, &mut out, file)?;
            fence = Some(marker);
            continue;
        }
        if trimmed.is_empty() {
            finish(&mut open, &mut out, file)?;
            continue;
        }
        if let Some(title) = heading_text(trimmed) {
            finish(&mut open, &mut out, file)?;
            section = unique_anchor(&mut anchors, &github_anchor(title));
            continue;
        }
        let in_table = trimmed.starts_with('|');
        if in_table || starts_list_item(trimmed) {
            finish(&mut open, &mut out, file)?;
        }
        scan_line(raw, in_table, line_no, file, &section, &mut open, &mut out)?;
        if in_table {
            finish(&mut open, &mut out, file)?;
        }
    }
    finish(&mut open, &mut out, file)?;
    check_unique(&out)?;
    Ok(out)
}

/// The GitHub anchor of a heading: lowercase, only letters, digits, spaces, `-` and `_` kept,
/// spaces turned into hyphens (`` `chat.tool_call` `` → `chattool_call`).
pub fn github_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every heading anchor of a Markdown file, with GitHub's `-1`, `-2` suffixes for repeats.
pub fn anchors(markdown: &str) -> Vec<String> {
    let mut seen = HashMap::new();
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for raw in markdown.lines() {
        let trimmed = raw.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = Some(marker);
            continue;
        }
        if let Some(title) = heading_text(trimmed) {
            out.push(unique_anchor(&mut seen, &github_anchor(title)));
        }
    }
    out
}

/// A statement whose end has not been seen yet.
struct OpenStatement {
    id: String,
    line: usize,
    section: String,
    text: String,
}

fn check_unique(reqs: &[Requirement]) -> Result<(), RegistryError> {
    let mut seen: HashMap<&str, &Requirement> = HashMap::new();
    for r in reqs {
        if let Some(first) = seen.insert(&r.id, r) {
            return Err(RegistryError::DuplicateId {
                id: r.id.clone(),
                first: Location { file: first.file.clone(), line: first.line },
                second: Location { file: r.file.clone(), line: r.line },
            });
        }
    }
    Ok(())
}

fn heading_text(trimmed: &str) -> Option<&str> {
    let hashes = trimmed.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        Some(trimmed[hashes..].trim().trim_end_matches('#').trim())
    } else {
        None
    }
}

fn unique_anchor(seen: &mut HashMap<String, usize>, base: &str) -> String {
    let count = seen.entry(base.to_owned()).or_insert(0);
    let anchor = if *count == 0 { base.to_owned() } else { format!("{base}-{count}") };
    *count += 1;
    anchor
}

fn starts_list_item(trimmed: &str) -> bool {
    if let Some(rest) = trimmed.strip_prefix(['-', '*', '+']) {
        return rest.starts_with(' ');
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && matches!(&trimmed.as_bytes()[digits..], [b'.' | b')', b' ', ..])
}

/// Walks one line, skipping inline code, opening a statement at each marker and feeding text
/// to the open one. In a table row a cell separator closes the open statement.
fn scan_line(
    line: &str,
    in_table: bool,
    line_no: usize,
    file: &str,
    section: &str,
    open: &mut Option<OpenStatement>,
    out: &mut Vec<Requirement>,
) -> Result<(), RegistryError> {
    let mut rest = line;
    let mut pending_text = String::new();
    while !rest.is_empty() {
        if rest.starts_with('`') {
            let ticks = rest.len() - rest.trim_start_matches('`').len();
            let delimiter = &rest[..ticks];
            let after = &rest[ticks..];
            let span_len = match after.find(delimiter) {
                Some(end) => ticks + end + ticks,
                None => rest.len(),
            };
            pending_text.push_str(&rest[..span_len]);
            rest = &rest[span_len..];
            continue;
        }
        if in_table && rest.starts_with('|') {
            flush_text(open, &mut pending_text);
            finish(open, out, file)?;
            rest = &rest[1..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("**[") {
            if let Some(end) = after.find("]**") {
                let content = &after[..end];
                if !content.contains(['[', ']', '`']) && !content.contains(char::is_whitespace) && !content.is_empty() {
                    flush_text(open, &mut pending_text);
                    finish(open, out, file)?;
                    if !is_valid_id(content) {
                        return Err(RegistryError::MalformedId {
                            at: Location { file: file.to_owned(), line: line_no },
                            found: content.to_owned(),
                        });
                    }
                    *open = Some(OpenStatement {
                        id: content.to_owned(),
                        line: line_no,
                        section: section.to_owned(),
                        text: String::new(),
                    });
                    rest = &after[end + 3..];
                    continue;
                }
            }
        }
        let next = rest.chars().next().map_or(1, char::len_utf8);
        pending_text.push_str(&rest[..next]);
        rest = &rest[next..];
    }
    flush_text(open, &mut pending_text);
    Ok(())
}

fn flush_text(open: &mut Option<OpenStatement>, pending: &mut String) {
    if let Some(statement) = open {
        let piece = pending.trim();
        if !piece.is_empty() {
            if !statement.text.is_empty() {
                statement.text.push(' ');
            }
            statement.text.push_str(piece);
        }
    }
    pending.clear();
}

fn finish(open: &mut Option<OpenStatement>, out: &mut Vec<Requirement>, file: &str) -> Result<(), RegistryError> {
    let Some(statement) = open.take() else { return Ok(()) };
    let at = Location { file: file.to_owned(), line: statement.line };
    let (metadata, body) = split_metadata(&statement.text);
    let Metadata { since, group, erratum } = match metadata.map(parse_metadata).transpose() {
        Ok(m) => m.unwrap_or_default(),
        Err(reason) => {
            return Err(RegistryError::MalformedMetadata {
                at,
                id: statement.id,
                found: metadata.unwrap_or_default().to_owned(),
                reason,
            });
        }
    };
    let (text, untestable) = split_untestable(body);
    let untestable = match untestable {
        Some("") => {
            return Err(RegistryError::EmptyUntestableReason { at, id: statement.id });
        }
        other => other.map(str::to_owned),
    };
    let level = level_of(body).ok_or_else(|| RegistryError::MissingLevel { at, id: statement.id.clone() })?;
    out.push(Requirement {
        id: statement.id,
        level,
        file: file.to_owned(),
        line: statement.line,
        section: statement.section,
        text: text.to_owned(),
        untestable,
        since,
        group,
        erratum,
    });
    Ok(())
}

/// A statement's version metadata.
struct Metadata {
    since: ProtocolVersion,
    group: String,
    erratum: Option<String>,
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata { since: ProtocolVersion { major: 1, minor: 0 }, group: CORE_GROUP.to_owned(), erratum: None }
    }
}

/// Splits a leading `*(…)*` off the statement: `(Some(inside), rest)`, or `(None, text)`.
fn split_metadata(text: &str) -> (Option<&str>, &str) {
    if let Some(after) = text.strip_prefix("*(") {
        if let Some(end) = after.find(")*") {
            return (Some(after[..end].trim()), after[end + 2..].trim_start());
        }
    }
    (None, text)
}

/// Parses `since MAJOR.MINOR[, GROUP][, erratum YYYY-MM-DD]`.
fn parse_metadata(inside: &str) -> Result<Metadata, String> {
    let mut parts = inside.split(',').map(str::trim);
    let first = parts.next().unwrap_or_default();
    let Some(version) = first.strip_prefix("since ") else {
        return Err("expected it to start with `since MAJOR.MINOR`".into());
    };
    let since = ProtocolVersion::parse(version.trim()).map_err(|e| format!("{version:?} is no version: {e}"))?;
    let mut out = Metadata { since, ..Metadata::default() };
    let mut group_seen = false;
    for part in parts {
        if let Some(date) = part.strip_prefix("erratum ") {
            let date = date.trim();
            if !is_iso_date(date) {
                return Err(format!("erratum date {date:?} is not YYYY-MM-DD"));
            }
            if out.erratum.replace(date.to_owned()).is_some() {
                return Err("more than one erratum date".into());
            }
        } else if !group_seen
            && out.erratum.is_none()
            && !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        {
            part.clone_into(&mut out.group);
            group_seen = true;
        } else {
            return Err(format!("unexpected {part:?}; expected a group (lowercase, `_`) then `erratum YYYY-MM-DD`"));
        }
    }
    Ok(out)
}

/// `YYYY-MM-DD` with a month 01–12 and a day 01–31.
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// `PREFIX-NNN`: one or more uppercase ASCII letters, a hyphen, exactly three digits.
fn is_valid_id(s: &str) -> bool {
    let Some((prefix, number)) = s.split_once('-') else { return false };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_uppercase())
        && number.len() == 3
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// Splits a trailing `(untestable: reason)` note off the statement.
fn split_untestable(text: &str) -> (&str, Option<&str>) {
    const NOTE: &str = "(untestable:";
    let trimmed = text.trim_end();
    if let (Some(start), true) = (trimmed.rfind(NOTE), trimmed.ends_with(')')) {
        let reason = trimmed[start + NOTE.len()..trimmed.len() - 1].trim();
        return (trimmed[..start].trim_end(), Some(reason));
    }
    (trimmed, None)
}

/// The strongest RFC 2119 keyword among the statement's uppercase words.
fn level_of(text: &str) -> Option<Level> {
    text.split(|c: char| !c.is_ascii_alphabetic())
        .filter_map(|word| match word {
            "MUST" | "REQUIRED" | "SHALL" => Some(Level::Must),
            "SHOULD" | "RECOMMENDED" => Some(Level::Should),
            "MAY" | "OPTIONAL" => Some(Level::May),
            _ => None,
        })
        .min()
}
