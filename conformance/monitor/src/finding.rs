//! What the monitor reports: the definition of an always-on check ([`CheckDef`]), one violation of
//! it ([`Finding`]), and what the checks found on one frame before the monitor adds the frame and
//! the connection (`Out`).

use chatwire_schema::requirements::Level;
use chatwire_schema::ReqId;

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

/// A finding under construction; the monitor adds the frame and the connection.
#[derive(Debug)]
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

/// The findings and evaluations of one observed frame, before the monitor adds frame and connection.
#[derive(Debug, Default)]
pub(crate) struct Out {
    pub raws: Vec<Raw>,
    pub evaluated: Vec<(&'static CheckDef, ReqId)>,
    /// The frame gives the client a state the monitor knows is not the session's, under this
    /// requirement, without a finding of its own (`crate::diverge`): a scenario's check of that
    /// state proves it, and what follows from it is not charged again.
    pub apart: Option<ReqId>,
}

impl Out {
    /// A check ran and found `requirement` kept.
    pub fn eval(&mut self, check: &'static CheckDef, requirement: ReqId) {
        self.evaluated.push((check, requirement));
    }

    /// A check ran and found `requirement` broken.
    pub fn fail(&mut self, check: &'static CheckDef, requirement: ReqId, message: impl Into<String>) {
        self.raws.push(Raw::new(check, requirement, message));
    }
}
