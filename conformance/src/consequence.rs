//! One fault, one charge, across a connection: a comparison a scenario step makes on a connection
//! that fails because of a failure seen on that connection before (or, in the same step, right
//! after) is reported as its consequence, charged to that failure's requirements instead of the
//! ones the step was written for.
//!
//! A scenario step compares what a connection holds or receives with what the scenario expects; an
//! always-on check of the monitor judges each frame by one rule. Once a connection went apart,
//! what it holds and receives afterwards follows from that: the state a later `expect_state`,
//! golden snapshot or page walk compares is not the one the scenario meant; a tab the server
//! closed or took over fails every later step on it; a step waiting for the next refusal meets
//! the events the server committed for a refused request. Charging those comparisons to the
//! requirements the step was written for (a stream scenario's `STATE-046`, a rewind scenario's
//! `REWIND-003`, the pointer rule `TOOL-024`) charges rules that held. So, per connection (the
//! monitor's number: a resumed connection is a new one), a failed step comparison whose finding
//! names no requirement of its own (a step that knows which rule its finding breaks names it) is
//! charged to the first of:
//!
//! 1. for a comparison of what the connection holds (`expect_state`, a golden snapshot,
//!    `page_through`): the first must-level finding of an always-on check on the connection at an
//!    earlier step (the state it holds diverged there);
//! 2. when a comparison of what the connection holds failed at an earlier step: that comparison
//!    (or, when it is itself a consequence, its root). The connection holds a state other than
//!    the one the scenario's later steps are written against, so they judge the server by a state
//!    it never gave that connection (a response the server refuses as settled, because the state
//!    it showed holds the call settled);
//! 3. when the server had closed the connection (a takeover, a detach, a close) at an earlier
//!    step: the first failure on it before that close (a finding, or a failed comparison);
//! 4. the first must-level finding on the connection seen in the same step after the comparison
//!    failed (while the scenario closed its connections), when none came before it in that step:
//!    the monitor judged a frame that came after the one that surprised the step, by the rule it
//!    breaks.
//!
//! A comparison that follows none of these keeps its charge: after a finding about a frame (not
//! about what the connection holds) a later step may prove another rule the same fault breaks (a
//! response answered wrongly, a fresh window that never came). The always-on checks keep judging
//! every frame of a connection that went apart, each by its own rule, against the state the
//! server gave it: a second fault still shows there. Findings of the always-on checks are not
//! changed here: each names the rule its own check breaks (`monitor::diverge` drops those that
//! follow from a divergence of the oracle's fold).

use std::collections::HashMap;

use crate::report::{CheckSet, Finding};

/// What happened on one connection, in the order the driver saw it.
#[derive(Clone, Debug)]
enum Seen {
    /// A must-level finding of the always-on check `check`, charged to `requirement`.
    Finding { step: Option<usize>, check: String, requirement: String },
    /// The step comparison `check` failed (charged to what its report names).
    Comparison { step: usize, check: String },
    /// The server closed the connection (or it broke) during `step`.
    Ended { step: usize },
}

/// Whether the check `id` compares what a connection holds: its state or its pages.
fn compares_what_is_held(id: &str) -> bool {
    id.starts_with("snapshot-") || id.ends_with("-expect_state") || id.ends_with("-page_through")
}

/// The failures of one scenario's connections, for [`RootCauses::charge`].
#[derive(Clone, Debug, Default)]
pub struct RootCauses {
    seen: HashMap<u64, Vec<Seen>>,
}

/// The root a consequence is charged to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Root {
    /// The check that found it, and the step it was seen at.
    check: String,
    step: Option<usize>,
    /// The requirements it is charged to.
    requirements: Vec<String>,
}

impl RootCauses {
    /// Notes a must-level finding of the always-on check `check` on `conn`, seen at `step`.
    pub fn finding(&mut self, conn: u64, step: Option<usize>, check: &str, requirement: &str) {
        let seen = Seen::Finding { step, check: check.to_owned(), requirement: requirement.to_owned() };
        self.seen.entry(conn).or_default().push(seen);
    }

    /// Notes that the step comparison `check` (a step's or a snapshot's check id) failed on `conn`
    /// at `step`.
    pub fn comparison(&mut self, conn: u64, step: usize, check: &str) {
        self.seen.entry(conn).or_default().push(Seen::Comparison { step, check: check.to_owned() });
    }

    /// Notes that the server closed `conn` (or it broke) during `step`.
    pub fn ended(&mut self, conn: u64, step: usize) {
        self.seen.entry(conn).or_default().push(Seen::Ended { step });
    }

    /// The root of the comparison at `index` of `conn`'s failures, when it is not its own.
    fn root(&self, conn: u64, index: usize, checks: &CheckSet) -> Option<Root> {
        let seen = self.seen.get(&conn)?;
        let Seen::Comparison { step, check: own } = &seen[index] else { return None };
        // A comparison that is itself a consequence roots its own consequences at its root.
        let as_root = |at: usize| match &seen[at] {
            Seen::Finding { step, check, requirement } => {
                Some(Root { check: check.clone(), step: *step, requirements: vec![requirement.clone()] })
            }
            Seen::Comparison { step, check } => self.root(conn, at, checks).or_else(|| {
                let requirements = checks.get(check)?.charged_requirements();
                Some(Root { check: check.clone(), step: Some(*step), requirements })
            }),
            Seen::Ended { .. } => None,
        };
        let before = &seen[..index];
        let first = |pick: &dyn Fn(&Seen) -> bool| before.iter().position(pick).and_then(as_root);
        let diverged = || {
            first(&|s| matches!(s, Seen::Finding { step: Some(at), .. } if at < step))
                .filter(|_| compares_what_is_held(own))
        };
        // What the connection holds was found apart from the scenario's at an earlier step: every
        // later step judges it against a state the server never gave it.
        let apart = || {
            first(&|s| matches!(s, Seen::Comparison { step: at, check } if at < step && compares_what_is_held(check)))
        };
        // Closed at an earlier step: a close the failing step itself met is its own failure.
        let closed = || {
            let end = before.iter().position(|s| matches!(s, Seen::Ended { step: at } if at < step))?;
            (0..end).find_map(as_root)
        };
        // Unless the monitor judged a frame of this step before it failed: the frame the step
        // failed on is then that finding's (`report`'s one frame, one charge) or the step's own.
        let same_step = |s: &Seen| matches!(s, Seen::Finding { step: Some(at), .. } if at == step);
        let judged_after = || {
            if before.iter().any(same_step) {
                return None;
            }
            (index + 1..seen.len()).find(|at| same_step(&seen[*at])).and_then(as_root)
        };
        diverged().or_else(apart).or_else(closed).or_else(judged_after)
    }

    /// Charges every failed comparison that follows from an earlier failure on its connection to
    /// that failure's requirements (see the module's documentation).
    pub fn charge(&self, checks: &mut CheckSet) {
        let mut charges = Vec::new();
        for (conn, seen) in &self.seen {
            for (index, s) in seen.iter().enumerate() {
                let Seen::Comparison { check, .. } = s else { continue };
                if let Some(root) = self.root(*conn, index, checks).filter(|r| r.check != *check) {
                    charges.push((check.clone(), root));
                }
            }
        }
        for (check, root) in charges {
            let Some(report) = checks.get_mut(&check) else { continue };
            let own: Vec<&mut Finding> = report.findings.iter_mut().filter(|f| f.requirement.is_none()).collect();
            if own.is_empty() {
                continue;
            }
            let at = root.step.map(|s| format!(" at step {s}")).unwrap_or_default();
            let single = (root.requirements.len() == 1).then(|| root.requirements[0].clone());
            for f in own {
                f.message.push_str(&format!(
                    "\n(a consequence of the failure of {}{at} on this connection, charged there: one fault, one charge)",
                    root.check
                ));
                f.requirement.clone_from(&single);
            }
            if single.is_none() {
                report.requirements = root.requirements;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verdict;

    fn fail(checks: &mut CheckSet, id: &str, step: usize, requirements: &[&str], requirement: Option<&str>) {
        let ids: Vec<String> = requirements.iter().map(|r| (*r).to_owned()).collect();
        let finding = Finding {
            message: format!("{id} failed"),
            step: Some(step),
            requirement: requirement.map(str::to_owned),
            frame: None,
            version: None,
        };
        checks.record(id, &ids, id, Verdict::Fail, Some(finding));
    }

    fn charged(checks: &CheckSet, id: &str) -> Vec<String> {
        checks.get(id).expect("the check").charged_requirements()
    }

    /// A stream whose patches name a wrong base: the monitor charges STATE-037 on the first patch;
    /// the `expect_state` of the scenario and its final golden snapshot, both written for
    /// STATE-046, compare the state that wrong patch left. Both are consequences.
    #[test]
    fn after_a_divergence_later_expect_state_and_snapshot_are_charged_to_it() {
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "patch-base-is-latest-state", 6, &[], Some("STATE-037"));
        roots.finding(0, Some(6), "patch-base-is-latest-state", "STATE-037");
        fail(&mut checks, "snapshot-final", 12, &["STATE-046"], None);
        roots.comparison(0, 12, "snapshot-final");
        fail(&mut checks, "step-11-expect_state", 11, &["STATE-046"], None);
        roots.comparison(0, 11, "step-11-expect_state");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "snapshot-final"), ["STATE-037"]);
        assert_eq!(charged(&checks, "step-11-expect_state"), ["STATE-037"]);
        let message = &checks.get("snapshot-final").expect("the check").findings[0].message;
        assert!(message.contains("consequence of the failure of patch-base-is-latest-state at step 6"), "{message}");
    }

    /// A call the server settled while nobody was connected: the monitor charges RESUME-008 on
    /// the resume's snapshot; the golden snapshot, written for RESUME-002 and RESUME-008, compares
    /// that state later, and the step that answers the call then meets the server's refusal of a
    /// settled call (RUN-007 expected a reopened run). Both follow from the first, the snapshot's
    /// through its own root; another connection keeps its charge.
    #[test]
    fn a_state_found_apart_roots_every_later_step_on_the_connection() {
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "pending-calls-survive-disconnect", 9, &[], Some("RESUME-008"));
        roots.finding(0, Some(9), "pending-calls-survive-disconnect", "RESUME-008");
        fail(&mut checks, "snapshot-pending-after-resume", 11, &["RESUME-002", "RESUME-008"], None);
        roots.comparison(0, 11, "snapshot-pending-after-resume");
        fail(&mut checks, "step-13-expect", 13, &["RUN-007"], None);
        roots.comparison(0, 13, "step-13-expect");
        fail(&mut checks, "step-14-expect", 14, &["TURN-001"], None);
        roots.comparison(1, 14, "step-14-expect");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "snapshot-pending-after-resume"), ["RESUME-008"]);
        assert_eq!(charged(&checks, "step-13-expect"), ["RESUME-008"], "through the snapshot's root");
        assert_eq!(charged(&checks, "step-14-expect"), ["TURN-001"], "another connection");

        // With no root of its own, the failed comparison of what is held is the root.
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "step-06-expect_state", 6, &["REWIND-004"], None);
        roots.comparison(0, 6, "step-06-expect_state");
        fail(&mut checks, "step-08-expect", 8, &["SCRIPT-004"], None);
        roots.comparison(0, 8, "step-08-expect");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "step-08-expect"), ["REWIND-004"]);
    }

    /// A tab taken over (or closed, or detached) fails every later step expectation; the first
    /// failure on it is the root and the later ones, written for other rules, follow from it.
    /// Another connection's failures are not its consequences.
    #[test]
    fn a_taken_over_tab_is_charged_once_for_every_later_step_on_it() {
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "step-06-expect", 6, &["ATTACH-001"], None);
        roots.comparison(1, 6, "step-06-expect");
        roots.ended(1, 7);
        for (step, id) in [(8, "ATTACH-004"), (10, "STATE-037"), (12, "RUN-001")] {
            let check = format!("step-{step:02}-expect");
            fail(&mut checks, &check, step, &[id], None);
            roots.comparison(1, step, &check);
        }
        fail(&mut checks, "step-13-expect", 13, &["SESSION-011"], None);
        roots.comparison(2, 13, "step-13-expect");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "step-06-expect"), ["ATTACH-001"]);
        for step in [8, 10, 12] {
            assert_eq!(charged(&checks, &format!("step-{step:02}-expect")), ["ATTACH-001"], "step {step}");
        }
        assert_eq!(charged(&checks, "step-13-expect"), ["SESSION-011"], "another connection");
    }

    /// A refused answer that the server then settles anyway: the step waiting for the next
    /// refusal meets the reopened run first and names the pointer rule (TOOL-024); the monitor
    /// judges the settlement that answers the refused value (TOOL-023) while the scenario closes
    /// its connection after that step. The step is charged to TOOL-023.
    #[test]
    fn a_step_surprised_by_what_the_monitor_charges_in_the_same_step_is_charged_to_the_monitor() {
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "step-10-expect_error", 10, &["TOOL-024"], None);
        roots.comparison(0, 10, "step-10-expect_error");
        fail(&mut checks, "response-schema-enforced", 10, &[], Some("TOOL-023"));
        roots.finding(0, Some(10), "response-schema-enforced", "TOOL-023");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "step-10-expect_error"), ["TOOL-023"]);
        assert_eq!(charged(&checks, "response-schema-enforced"), ["TOOL-023"]);

        // A frame the monitor judged in the step before the step failed on it is that finding's
        // (one frame, one charge, in `report`), not the next finding's.
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "negotiated-version-only", 8, &[], Some("COMPAT-005"));
        roots.finding(0, Some(8), "negotiated-version-only", "COMPAT-005");
        fail(&mut checks, "step-08-expect", 8, &["TOOL-025"], None);
        roots.comparison(0, 8, "step-08-expect");
        fail(&mut checks, "patch-matches-reducer", 8, &[], Some("STATE-038"));
        roots.finding(0, Some(8), "patch-matches-reducer", "STATE-038");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "step-08-expect"), ["TOOL-025"], "left to one frame, one charge");
    }

    /// What does not follow from a root keeps its own charge: the first failure of a connection,
    /// a step that names the rule its own finding breaks, a later expectation of a frame on a
    /// connection still open after a finding about a frame (it may prove another rule the same
    /// fault breaks), a finding of a later step; and a root charged to several ids moves the
    /// consequence's requirements to them. After a comparison of what the connection holds
    /// failed, every later comparison on it follows from it.
    #[test]
    fn what_a_root_does_not_explain_keeps_its_own_charge() {
        let mut checks = CheckSet::default();
        let mut roots = RootCauses::default();
        fail(&mut checks, "step-04-expect", 4, &["TURN-001"], None);
        roots.comparison(0, 4, "step-04-expect");
        fail(&mut checks, "step-05-resume", 5, &["RESUME-001"], Some("RESUME-019"));
        roots.comparison(0, 5, "step-05-resume");
        fail(&mut checks, "seq-monotonic", 7, &[], Some("SEQ-001"));
        roots.finding(0, Some(7), "seq-monotonic", "SEQ-001");
        fail(&mut checks, "step-09-expect", 9, &["TOOL-012"], None);
        roots.comparison(0, 9, "step-09-expect");
        fail(&mut checks, "seq-monotonic-later", 10, &[], Some("SEQ-001"));
        roots.finding(0, Some(10), "seq-monotonic-later", "SEQ-001");
        fail(&mut checks, "snapshot-after", 9, &["RESUME-002", "RESUME-008"], None);
        roots.comparison(3, 9, "snapshot-after");
        fail(&mut checks, "step-11-expect", 11, &["RUN-007"], None);
        roots.comparison(3, 11, "step-11-expect");
        roots.ended(3, 11);
        fail(&mut checks, "step-12-expect", 12, &["RUN-001"], None);
        roots.comparison(3, 12, "step-12-expect");
        fail(&mut checks, "step-08-wait_idle", 8, &["CLUSTER-006"], None);
        roots.ended(4, 8);
        roots.comparison(4, 8, "step-08-wait_idle");
        fail(&mut checks, "attached-views-agree", 5, &[], Some("ATTACH-007"));
        roots.finding(4, Some(5), "attached-views-agree", "ATTACH-007");
        roots.charge(&mut checks);
        assert_eq!(charged(&checks, "step-04-expect"), ["TURN-001"], "the first failure");
        assert_eq!(charged(&checks, "step-05-resume"), ["RESUME-019"], "names its own rule");
        assert_eq!(charged(&checks, "step-09-expect"), ["TOOL-012"], "an expectation on an open connection");
        assert_eq!(charged(&checks, "snapshot-after"), ["RESUME-002", "RESUME-008"]);
        assert_eq!(charged(&checks, "step-11-expect"), ["RESUME-002", "RESUME-008"], "after the state was found apart");
        assert_eq!(charged(&checks, "step-12-expect"), ["RESUME-002", "RESUME-008"], "after the close");
        assert_eq!(charged(&checks, "step-08-wait_idle"), ["CLUSTER-006"], "the close the step itself met");
    }
}
