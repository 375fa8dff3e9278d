//! `chatwire-conformance check-log FILE`: the session monitor run offline over a recorded wire log
//! ([`crate::wirelog`]), so traffic captured in staging or production gets every always-on check
//! and the differential oracle. The result is a report of one pseudo-scenario named after the file.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use chatwire_schema::FrameValidator;

use crate::monitor::Monitor;
use crate::report::{scenario_verdict, CheckSet, ScenarioReport};
use crate::scenario::Level;
use crate::wirelog::{self, LogError};

/// Checks the wire log at `path`.
pub fn check_log(path: &Path, validator: Arc<FrameValidator>) -> Result<ScenarioReport, LogError> {
    let started = Instant::now();
    let mut monitor = Monitor::new(validator);
    let lines = wirelog::check_file(path, &mut monitor)?;
    let mut checks = CheckSet::default();
    for f in monitor.take_findings() {
        let version = monitor.version(f.conn);
        checks.record_monitor_finding(f, None, version);
    }
    checks.add_always_on(&monitor);
    let checks = checks.into_checks();
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(ScenarioReport {
        id: name,
        title: format!("wire log of {lines} line(s) checked offline"),
        level: Level::Must,
        requirements: Vec::new(),
        verdict: scenario_verdict(&checks),
        duration_ms: started.elapsed().as_millis() as u64,
        checks,
        wire_log: Vec::new(),
        backend_stderr: None,
        snapshots: Default::default(),
        sweep: None,
        version: monitor.first_version().map(|v| v.to_string()),
        in_force: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verdict;

    /// Wire logs of the cluster load test (#23) in which a replica's kill met a recovery's early
    /// stream end: of a retried run (SCRIPT-020 charged the retry's say, ended early), and cut off
    /// from its `run_complete` (the cut charged SCRIPT-019); and a tab that read late the frames
    /// whose answers went to a tab taken over since (STATE-007, STATE-038 charged its patches once
    /// the welcome that took it over, numbered below that tab's error, was taken as a reused seq).
    /// A correct server's traffic: no finding.
    #[test]
    fn recorded_recoveries_under_kills_are_not_charged() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/wire-logs/cluster-load");
        let validator = Arc::new(FrameValidator::new());
        let mut logs = 0;
        for entry in std::fs::read_dir(&dir).expect("the recorded logs are there") {
            let path = entry.expect("a directory entry").path();
            let report = check_log(&path, validator.clone()).expect("a readable wire log");
            let failing: Vec<_> =
                report.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn)).collect();
            assert!(failing.is_empty(), "{}: {failing:#?}", path.display());
            logs += 1;
        }
        assert_eq!(logs, 4);
    }

    /// A reconnect sweep with a watching tab (`run --sweep --sweep-watch`) over a sub-agent's
    /// streamed text: the resumed connection's catch-up showed the nested stream's item before the
    /// watching tab read the delta that introduced it (ids across transcripts, `ID-002`). A
    /// correct server's traffic: no finding.
    #[test]
    fn a_nested_stream_shown_by_a_catch_up_before_a_watcher_reads_its_first_delta_is_not_charged() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/wire-logs/watch/nested-stream-read-by-a-watcher-after-a-catch-up-showed-it.jsonl");
        let report = check_log(&path, Arc::new(FrameValidator::new())).expect("a readable wire log");
        let failing: Vec<_> =
            report.checks.iter().filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn)).collect();
        assert!(failing.is_empty(), "{failing:#?}");
        assert!(report.checks.iter().any(|c| c.id == "ids-consistent" && c.verdict == Verdict::Pass));
    }
}
