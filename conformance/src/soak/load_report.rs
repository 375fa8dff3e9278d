//! What `cluster-load` reports: each phase's figures, the cluster's as ratios to the single
//! replica's, the counts CI keeps (sessions, events, kills, findings), as text and as JSON.

use std::time::Duration;

use serde_json::{json, Value};

use super::{SoakReport, FINDINGS_SHOWN};

/// One phase of a load run.
#[derive(Clone, Debug, Default)]
pub struct PhaseReport {
    /// Replicas of its cluster.
    pub replicas: usize,
    /// Replicas killed during it.
    pub kills: u64,
    /// What its sessions measured and found.
    pub soak: SoakReport,
}

impl PhaseReport {
    /// Must-level findings (violations).
    pub fn findings(&self) -> usize {
        self.soak.findings().count()
    }

    fn json(&self) -> Value {
        let r = &self.soak;
        let failing: Vec<Value> = r
            .failed
            .iter()
            .take(FAILING_KEPT)
            .map(|f| {
                let findings: Vec<Value> = f
                    .findings
                    .iter()
                    .filter(|x| x.level == crate::scenario::Level::Must)
                    .map(|x| json!({"check": x.check, "requirement": x.requirement, "message": x.message}))
                    .collect();
                json!({
                    "slot": f.slot,
                    "index": f.index,
                    "plan_seed": f.session_seed,
                    "wire_log": f.wire_log.display().to_string(),
                    "findings": findings,
                    "notes": f.notes,
                })
            })
            .collect();
        json!({
            "replicas": self.replicas,
            "sessions": r.sessions,
            "events": r.events,
            "elapsed_s": r.elapsed.as_secs_f64(),
            "events_per_sec": r.events_per_sec(),
            "latency_ms": {
                "p50": r.latency_ms(0.5),
                "p99": r.latency_ms(0.99),
                "runs": r.latencies_us.len(),
            },
            "kills": self.kills,
            "kill_resumes": r.kill_resumes,
            "interrupted_runs": r.interrupted,
            "lost_messages": r.lost_messages,
            "sessions_hit_by_kills": r.sessions_hit,
            "sessions_recovered": r.sessions_recovered,
            "runs_after_kill": r.runs_after_kill,
            "findings": self.findings(),
            "failing_sessions": r.failed.len(),
            "failing": failing,
            "warnings": r.warnings.len(),
            "harness_errors": r.harness,
        })
    }

    fn line(&self) -> String {
        let r = &self.soak;
        let latency = match (r.latency_ms(0.5), r.latency_ms(0.99)) {
            (Some(p50), Some(p99)) => format!("p50 {p50:.1} ms, p99 {p99:.1} ms ({} runs)", r.latencies_us.len()),
            _ => "no run completed".to_owned(),
        };
        let name = if self.replicas == 1 { "1 replica".to_owned() } else { format!("{} replicas", self.replicas) };
        format!(
            "  {name:<11} {} session(s), {} event(s) in {:.1} s = {:.0} events/s; user message to run complete {latency}; {} violation(s)",
            r.sessions,
            r.events,
            r.elapsed.as_secs_f64(),
            r.events_per_sec(),
            self.findings()
        )
    }
}

/// Failing sessions listed per phase in the JSON report (the wire logs hold the rest).
const FAILING_KEPT: usize = 50;

/// The cluster's figures divided by the single replica's (`None` where either is missing or 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ratios {
    /// Events per second.
    pub events_per_sec: Option<f64>,
    /// Median user message to run complete.
    pub p50: Option<f64>,
    /// 99th percentile user message to run complete.
    pub p99: Option<f64>,
}

fn ratio(cluster: Option<f64>, single: Option<f64>) -> Option<f64> {
    match (cluster, single) {
        (Some(c), Some(s)) if s > 0.0 && c.is_finite() && s.is_finite() => Some(c / s),
        _ => None,
    }
}

/// A whole load run.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// `--seed`.
    pub seed: u64,
    /// Sessions at once in each phase.
    pub sessions: usize,
    /// How long each phase started sessions.
    pub duration: Duration,
    /// A kill every this long in the cluster phase.
    pub kill_every: Duration,
    /// How long a killed replica stayed down.
    pub down: Duration,
    /// The recovery bound the waits allowed after a kill.
    pub recovery_bound: Duration,
    /// The one-replica phase, when it ran.
    pub single: Option<PhaseReport>,
    /// The cluster phase.
    pub cluster: PhaseReport,
    /// Harness problems of the run as a whole (a database not dropped).
    pub harness: Vec<String>,
}

impl LoadReport {
    /// The cluster's figures as ratios to the single replica's.
    pub fn ratios(&self) -> Option<Ratios> {
        let single = &self.single.as_ref()?.soak;
        let cluster = &self.cluster.soak;
        Some(Ratios {
            events_per_sec: ratio(Some(cluster.events_per_sec()), Some(single.events_per_sec())),
            p50: ratio(cluster.latency_ms(0.5), single.latency_ms(0.5)),
            p99: ratio(cluster.latency_ms(0.99), single.latency_ms(0.99)),
        })
    }

    /// Must-level findings in every phase.
    pub fn findings(&self) -> usize {
        self.phases().map(PhaseReport::findings).sum()
    }

    /// Harness errors in every phase and of the run.
    pub fn harness_errors(&self) -> Vec<String> {
        let mut all: Vec<String> = self.phases().flat_map(|p| p.soak.harness.iter().cloned()).collect();
        all.extend(self.harness.iter().cloned());
        all
    }

    fn phases(&self) -> impl Iterator<Item = &PhaseReport> {
        self.single.iter().chain(std::iter::once(&self.cluster))
    }

    /// The JSON report (`--report-json`).
    pub fn to_json(&self) -> Value {
        let ratios = self
            .ratios()
            .map(|r| json!({"events_per_sec": r.events_per_sec, "latency_p50": r.p50, "latency_p99": r.p99}));
        json!({
            "seed": self.seed,
            "sessions_at_once": self.sessions,
            "duration_s": self.duration.as_secs_f64(),
            "kill_every_s": self.kill_every.as_secs_f64(),
            "down_ms": self.down.as_millis() as u64,
            "recovery_bound_s": self.recovery_bound.as_secs_f64(),
            "single": self.single.as_ref().map(PhaseReport::json),
            "cluster": self.cluster.json(),
            "ratios": ratios,
            "findings": self.findings(),
            "harness_errors": self.harness_errors(),
            "passed": self.findings() == 0 && self.harness_errors().is_empty(),
        })
    }
}

fn times(r: Option<f64>) -> String {
    r.map_or("n/a".to_owned(), |r| format!("×{r:.2}"))
}

/// The closing summary: both phases, the ratios, the kills and what they did, the violations.
pub fn summary_text(report: &LoadReport) -> String {
    let mut s = format!(
        "cluster-load (seed {}): {} session(s) at once for {} s per phase, the same seeded plans in each\n",
        report.seed,
        report.sessions,
        report.duration.as_secs_f64()
    );
    for phase in report.phases() {
        s.push_str(&phase.line());
        s.push('\n');
    }
    let c = &report.cluster;
    s.push_str(&format!(
        "  kills: {} (one replica every {:.1} s, down {} ms; recovery bound {:.1} s); {} connection(s) resumed after a kill, \
         {} run(s) interrupted by a recovery (excluded from the latencies), {} message(s) sent again; \
         {} session(s) hit, {} of them completed a run afterwards ({} run(s))\n",
        c.kills,
        report.kill_every.as_secs_f64(),
        report.down.as_millis(),
        report.recovery_bound.as_secs_f64(),
        c.soak.kill_resumes,
        c.soak.interrupted,
        c.soak.lost_messages,
        c.soak.sessions_hit,
        c.soak.sessions_recovered,
        c.soak.runs_after_kill
    ));
    if let Some(r) = report.ratios() {
        s.push_str(&format!(
            "  cluster / single: events/s {}, p50 {}, p99 {}\n",
            times(r.events_per_sec),
            times(r.p50),
            times(r.p99)
        ));
    }
    for phase in report.phases() {
        let warnings = phase.soak.warnings.len();
        if warnings > 0 {
            s.push_str(&format!(
                "  {} warning(s) (should-level, not failing) with {} replica(s)\n",
                warnings, phase.replicas
            ));
        }
    }
    let harness = report.harness_errors();
    for h in harness.iter().take(FINDINGS_SHOWN) {
        s.push_str(&format!("harness error: {h}\n"));
    }
    if harness.len() > FINDINGS_SHOWN {
        s.push_str(&format!("… {} more harness error(s)\n", harness.len() - FINDINGS_SHOWN));
    }
    let per_phase: Vec<String> =
        report.phases().map(|p| format!("{} with {} replica(s)", p.findings(), p.replicas)).collect();
    s.push_str(&format!("{} violation(s): {}\n", report.findings(), per_phase.join(", ")));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(replicas: usize, events: u64, secs: u64, latencies: Vec<u64>) -> PhaseReport {
        PhaseReport {
            replicas,
            kills: 0,
            soak: SoakReport {
                events,
                elapsed: Duration::from_secs(secs),
                latencies_us: latencies,
                sessions: 3,
                ..SoakReport::default()
            },
        }
    }

    #[test]
    fn ratios_divide_the_cluster_by_the_single_replica_and_json_keeps_them() {
        let mut report = LoadReport {
            seed: 7,
            sessions: 3,
            duration: Duration::from_secs(10),
            single: Some(phase(1, 1000, 10, vec![10_000, 20_000])),
            cluster: phase(3, 800, 10, vec![20_000, 60_000]),
            ..LoadReport::default()
        };
        report.cluster.kills = 2;
        let r = report.ratios().unwrap();
        assert_eq!(r.events_per_sec, Some(0.8));
        assert_eq!(r.p50, Some(2.0));
        assert_eq!(r.p99, Some(3.0));
        let v = report.to_json();
        assert_eq!(v["ratios"]["latency_p99"], 3.0);
        assert_eq!(v["cluster"]["kills"], 2);
        assert_eq!(v["single"]["latency_ms"]["p50"], 10.0);
        assert_eq!(v["passed"], true);
        let text = summary_text(&report);
        assert!(text.contains("cluster / single: events/s ×0.80, p50 ×2.00, p99 ×3.00"), "{text}");
        assert!(text.contains("0 violation(s): 0 with 1 replica(s), 0 with 3 replica(s)"), "{text}");
        // No completed run in the baseline: no latency ratio, and the JSON says null.
        report.single = Some(phase(1, 1000, 10, vec![]));
        let r = report.ratios().unwrap();
        assert_eq!((r.p50, r.p99), (None, None));
        assert!(report.to_json()["ratios"]["latency_p50"].is_null());
        report.single = None;
        assert!(report.ratios().is_none() && report.to_json()["ratios"].is_null());
    }
}
