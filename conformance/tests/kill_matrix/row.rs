//! What a row of the kill matrix's table says (`table.rs`): the fault, the scenarios that exercise
//! it, the ids it violates, how it is caught and under which offer.

/// One row of the table: the fault, the scenarios (globs) that exercise what it breaks, the
/// requirement ids it violates (exactly the ids its failing checks name: one it does not break is a
/// fault charged to an innocent requirement, one they do not name is a stale row), and how it is caught.
pub struct Expectation {
    pub fault: &'static str,
    pub scenarios: &'static [&'static str],
    pub violates: &'static [&'static str],
    /// Requirements its findings name although it does not break them: a cascade not yet cut,
    /// listed so that the comparison stays exact and the cascade stays visible. Empty in every row
    /// since issue #25 cut the last ones; a fix that removes one makes the row stale, and the test
    /// says so.
    pub cascades: &'static [&'static str],
    pub caught_by: Caught,
    pub offer: Offer,
}

/// The versions the fault's runs offer (CI runs the suite with both).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// The runner's default: every version it supports, newest first (1.1 with every feature once
    /// the reference speaks it).
    Default,
    /// `--versions 1.0`: for faults in what only a 1.0 connection receives, the whole-state update,
    /// which a 1.1 connection's patches never take.
    V1_0,
    /// The default offer against 3 replicas on a throwaway PostgreSQL (`--replicas 3 --store`):
    /// for faults of a deployment of several instances (`spec/cluster.md`).
    Cluster,
}

impl Offer {
    pub fn versions(self) -> Option<Vec<String>> {
        match self {
            Offer::Default | Offer::Cluster => None,
            Offer::V1_0 => Some(vec!["1.0".to_owned()]),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Offer::Default => "default",
            Offer::V1_0 => "1.0",
            Offer::Cluster => "default, 3 replicas",
        }
    }
}

/// What counts as catching a fault.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    /// A check of a must-level scenario fails (or times out): the fault breaks a MUST.
    MustFailure,
    /// A check of a should-level scenario warns: the fault breaks a SHOULD, which the suite reports
    /// as a warning and never as a failure.
    ShouldWarning,
}
