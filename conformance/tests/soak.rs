//! Soak mode finds planted faults of the reference backend that its random sessions run into
//! (no scenario aimed at them: the plans are drawn from the seed), each finding naming the
//! requirement the fault breaks, and `check-log` replays a failing session's wire log to the same
//! finding.

use std::sync::Arc;
use std::time::Duration;

use chatwire_conformance::backend::{set_bundled_executable, Target};
use chatwire_conformance::checklog::check_log;
use chatwire_conformance::report::Verdict;
use chatwire_conformance::soak::{run_soak, SoakConfig, SoakOptions, SoakReport};

/// Faults the random sessions trigger, with the requirement each breaks (the kill matrix's rows).
const FAULTS: &[(&str, &str)] = &[
    // Every patch names the wrong base.
    ("patch-wrong-base-seq", "STATE-037"),
    // A patch of two or more ops loses its last one.
    ("patch-missing-op", "STATE-038"),
    // A cut or reconnect in the middle of a streamed say, resumed by catch-up.
    ("stream-chunk-lost-on-resume", "STREAM-003"),
    // A kill -9 restart, then a resume.
    ("seq-restarts-after-restart", "SEQ-001"),
];

fn soak(fault: &str, dir: &std::path::Path) -> SoakReport {
    set_bundled_executable(env!("CARGO_BIN_EXE_chatwire-conformance"));
    let options = SoakOptions {
        target: Target::Bundled { fault: Some(fault.to_owned()) },
        sessions: 2,
        duration: Duration::from_secs(20),
        seed: 1,
        max_sessions: Some(200),
        fail_fast: true,
        log_dir: dir.join(fault),
        keep_logs: false,
        config: SoakConfig::default(),
        cluster: Default::default(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(run_soak(&options, Arc::new(|_| {}))).unwrap()
}

fn names(report: &SoakReport, requirement: &str) -> bool {
    report.findings().any(|(_, f)| f.requirement.as_deref() == Some(requirement))
}

#[test]
fn soak_finds_planted_faults_and_check_log_replays_them() {
    let dir = std::env::temp_dir().join(format!("chatwire-soak-test-{}", std::process::id()));
    let mut replayed = false;
    for (fault, requirement) in FAULTS {
        let mut report = soak(fault, &dir);
        // A harness problem (a backend that did not come back in time on a loaded machine) can
        // end the soak before its sessions reach the fault: that run says nothing about the
        // suite, so it is run again, once. A soak that ran cleanly gets no second chance.
        if !report.harness.is_empty() && !names(&report, requirement) {
            eprintln!("soak against {fault}: harness problems {:?}; run again", report.harness);
            report = soak(fault, &dir);
        }
        if !names(&report, requirement) {
            let findings: Vec<String> = report
                .findings()
                .map(|(s, f)| {
                    format!(
                        "session {} ({}): {} {:?}: {}",
                        s.index,
                        s.wire_log.display(),
                        f.check,
                        f.requirement,
                        f.message
                    )
                })
                .collect();
            panic!(
                "soak against {fault} did not name {requirement} in {} session(s) ({:.1} s); findings: {findings:#?}; harness: {:?}",
                report.sessions,
                report.elapsed.as_secs_f64(),
                report.harness
            );
        }
        if replayed {
            continue;
        }
        // check-log over the failing session's wire log reaches the same finding.
        let (session, _) = report
            .findings()
            .find(|(_, f)| f.requirement.as_deref() == Some(requirement))
            .expect("a finding naming the requirement");
        let validator = Arc::new(chatwire_schema::FrameValidator::new());
        let replay = check_log(&session.wire_log, validator).unwrap();
        assert_eq!(replay.verdict, Verdict::Fail, "{fault}: check-log of {}", session.wire_log.display());
        let live: Vec<(&str, Option<&str>)> = session
            .findings
            .iter()
            .filter(|f| f.requirement.is_some())
            .map(|f| (f.check.as_str(), f.requirement.as_deref()))
            .collect();
        for check in replay.checks.iter().filter(|c| c.verdict == Verdict::Fail) {
            for finding in &check.findings {
                let req = finding.requirement.as_deref();
                assert!(
                    live.contains(&(check.id.as_str(), req)),
                    "check-log found {} {req:?}, the soak did not: {live:?}",
                    check.id
                );
            }
        }
        assert!(
            replay.checks.iter().any(|c| c.verdict == Verdict::Fail
                && c.findings.iter().any(|f| f.requirement.as_deref() == Some(requirement))),
            "check-log of {} does not name {requirement}",
            session.wire_log.display()
        );
        replayed = true;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
