//! What the monitor reports: the definition of an always-on check and one finding of it.

use chatwire_schema::ReqId;

use chatwire_schema::requirements::Level;

/// A check the monitor applies to every frame of every connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckDef {
    /// Stable id, used in reports and baselines.
    pub id: &'static str,
    /// Every requirement a finding of this check can name; each finding names exactly one of them.
    pub requirements: &'static [ReqId],
    /// What it verifies, one line.
    pub summary: &'static str,
    /// How binding: a finding of a `must` check fails the scenario whatever its level, one of a
    /// `should` check is a warning.
    pub level: Level,
}

impl CheckDef {
    /// The requirement ids as report strings.
    pub fn requirement_list(&self) -> Vec<String> {
        self.requirements.iter().map(ToString::to_string).collect()
    }
}

/// One violation the monitor saw.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The check that found it.
    pub check: &'static CheckDef,
    /// The requirement broken: one of the check's.
    pub requirement: ReqId,
    /// What is wrong; ids in it are replaced by the same placeholders as in `frame`.
    pub message: String,
    /// The offending frame, ids redacted and cut short, when there is one.
    pub frame: Option<String>,
    /// The connection it was seen on.
    pub conn: u64,
}

/// A finding under construction; [`super::Monitor`] adds the frame and the connection.
pub(crate) struct Raw {
    pub check: &'static CheckDef,
    pub requirement: ReqId,
    pub message: String,
}

impl Raw {
    pub fn new(check: &'static CheckDef, requirement: ReqId, message: impl Into<String>) -> Self {
        debug_assert!(check.requirements.contains(&requirement), "check {} does not declare {requirement}", check.id);
        Raw { check, requirement, message: message.into() }
    }
}
