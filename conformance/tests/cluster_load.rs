//! `cluster-load` in short, against the bundled reference on a throwaway PostgreSQL server: the
//! same seeded sessions on one replica and on three, one replica killed every few seconds in the
//! cluster phase. Kills happen, sessions a kill cut resume on another replica and complete runs,
//! every frame passes the monitor (its cluster checks on), and the report carries finite ratios.
//! Skipped (with the reason printed) only where no PostgreSQL binaries are installed; CI sets
//! `CHATWIRE_REQUIRE_POSTGRES=1`, which makes that a failure.

mod pg_scratch;

use pg_scratch::scratch_databases;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chatwire_conformance::backend::{set_bundled_executable, StoreUrl, Target};
use chatwire_conformance::soak::load::{run_load, summary_text, LoadOptions, OnLoadFailure};
use chatwire_conformance::soak::{failure_text, SoakConfig};

const BIN: &str = env!("CARGO_BIN_EXE_chatwire-conformance");

#[test]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test cluster_load -- --ignored)"]
fn twenty_sessions_on_three_replicas_with_kills_find_nothing_and_give_ratios() {
    let Some(pg) =
        chatwire_pgtmp::for_test("twenty_sessions_on_three_replicas_with_kills_find_nothing_and_give_ratios")
    else {
        return;
    };
    set_bundled_executable(BIN);
    let dir = std::env::temp_dir().join(format!("chatwire-cluster-load-test-{}", std::process::id()));
    let options = LoadOptions {
        target: Target::Bundled { fault: None },
        store: StoreUrl::parse(pg.url()).expect("pgtmp gives a postgres url"),
        replicas: 3,
        sessions: 20,
        duration: Duration::from_secs(9),
        seed: 1,
        kill_every: Duration::from_secs(3),
        down: Duration::from_millis(800),
        recovery_bound: Duration::from_secs(10),
        single: true,
        log_dir: dir.clone(),
        keep_logs: false,
        stderr_dir: Some(dir.clone()),
        config: SoakConfig { timeout_scale: 2.0, ..SoakConfig::default() },
    };
    let (failures, on_failure) = failure_collector();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let started = Instant::now();
    let report = runtime.block_on(run_load(&options, on_failure)).expect("both clusters start");
    let wall = started.elapsed();
    let summary = summary_text(&report);
    let failures = failures.lock().map(|t| t.clone()).unwrap_or_default() + &replica_errors(&dir);
    eprintln!("{summary}{failures}(wall time {:.1} s)", wall.as_secs_f64());

    assert_eq!(report.findings(), 0, "{failures}{summary}");
    assert!(report.harness_errors().is_empty(), "{summary}");
    let single = report.single.as_ref().expect("the one-replica phase ran");
    assert_eq!((single.replicas, single.kills), (1, 0), "the baseline is never killed");
    let cluster = &report.cluster;
    assert_eq!(cluster.replicas, 3);
    // At least one: a kill every 3 s for 9 s, but the next kill waits for the killed replica to
    // be up again, which a loaded machine can delay past the end (what is proven here is what a
    // kill does to the sessions, not the killer's cadence).
    assert!(cluster.kills >= 1, "a kill every 3 s for 9 s: {summary}");
    assert!(cluster.soak.sessions_hit >= 1, "a kill cut or interrupted some session: {summary}");
    assert!(cluster.soak.sessions_recovered >= 1, "sessions completed runs after a kill: {summary}");
    assert!(cluster.soak.runs_after_kill >= 1, "{summary}");
    for phase in [single, cluster] {
        assert!(phase.soak.sessions >= 20 && phase.soak.events > 0, "{summary}");
        assert!(phase.soak.latency_ms(0.99).is_some(), "{summary}");
    }
    let ratios = report.ratios().expect("both phases ran");
    for (name, r) in [("events/s", ratios.events_per_sec), ("p50", ratios.p50), ("p99", ratios.p99)] {
        let r = r.unwrap_or_else(|| panic!("no {name} ratio: {summary}"));
        assert!(r.is_finite() && r > 0.0, "{name} ratio {r}: {summary}");
    }
    let json = report.to_json();
    assert_eq!(json["cluster"]["kills"], cluster.kills);
    assert!(json["ratios"]["latency_p99"].as_f64().is_some_and(f64::is_finite), "{json}");
    assert_eq!(json["passed"], true);
    // Every database the phases created is gone, and so is the (empty) log directory.
    assert!(runtime.block_on(scratch_databases(pg.url())).is_empty());
    for replicas in [1, 3] {
        let _ = std::fs::remove_file(dir.join(format!("replicas-{replicas}.stderr")));
    }
    let _ = std::fs::remove_dir(&dir);
    assert!(!dir.exists(), "no failing session, no wire log left");
}

/// Collects the text of every failing session of a load run, and the callback that does it.
fn failure_collector() -> (Arc<Mutex<String>>, OnLoadFailure) {
    let failures = Arc::new(Mutex::new(String::new()));
    let seen = failures.clone();
    let on_failure: OnLoadFailure = Arc::new(move |replicas, failed| {
        if let Ok(mut text) = seen.lock() {
            text.push_str(&format!("[{replicas} replica(s)] {}", failure_text(1, failed)));
        }
    });
    (failures, on_failure)
}

/// The lines in which the replicas of each phase reported a failure of their own (their stderr,
/// written into `dir` at the end of the phase): what the server saw behind an `internal_error`.
fn replica_errors(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for replicas in [1, 3] {
        let path = dir.join(format!("replicas-{replicas}.stderr"));
        let Ok(stderr) = std::fs::read_to_string(&path) else { continue };
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).take(20).collect();
        if !errors.is_empty() {
            text.push_str(&format!("{} ({} line(s)):\n  {}\n", path.display(), errors.len(), errors.join("\n  ")));
        }
    }
    text
}

/// Busy processes that keep every core of the machine loaded twice over, killed when dropped.
struct CpuHog(Vec<std::process::Child>);

impl CpuHog {
    fn start() -> CpuHog {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let spin = || Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh starts");
        CpuHog((0..2 * cores).map(|_| spin()).collect())
    }
}

impl Drop for CpuHog {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A starved host loses no run and charges nothing to no requirement: three replicas and no
/// kills while busy processes keep every core loaded twice over (issue #33: on a loaded 2-core
/// machine, 111 to 132 "run did not end before the deadline" findings and a lease lost by a
/// replica nobody stopped). Leases are renewed on a connection of their own, never behind
/// commits (`CLUSTER-003`); a wait that times out while the runner itself stalled is a harness
/// error, as in `run`. About two minutes, the hog only while the load runs.
#[test]
#[ignore = "slow: .ci/run runs it (cargo test -p chatwire-conformance --test cluster_load -- --ignored)"]
fn three_replicas_on_a_cpu_starved_host_lose_no_run_and_charge_nothing_to_no_requirement() {
    let Some(pg) = chatwire_pgtmp::for_test("three_replicas_on_a_cpu_starved_host") else {
        return;
    };
    set_bundled_executable(BIN);
    let dir = std::env::temp_dir().join(format!("chatwire-cluster-load-hog-{}", std::process::id()));
    let options = LoadOptions {
        target: Target::Bundled { fault: None },
        store: StoreUrl::parse(pg.url()).expect("pgtmp gives a postgres url"),
        replicas: 3,
        sessions: 20,
        duration: Duration::from_secs(40),
        seed: 1,
        kill_every: Duration::ZERO,
        down: Duration::ZERO,
        recovery_bound: Duration::from_secs(10),
        single: false,
        log_dir: dir.clone(),
        keep_logs: false,
        stderr_dir: Some(dir.clone()),
        config: SoakConfig { timeout_scale: 2.0, ..SoakConfig::default() },
    };
    let (failures, on_failure) = failure_collector();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let hog = CpuHog::start();
    let started = Instant::now();
    let report = runtime.block_on(run_load(&options, on_failure));
    drop(hog);
    let report = report.expect("the cluster starts");
    let summary = summary_text(&report);
    let failures = failures.lock().map(|t| t.clone()).unwrap_or_default() + &replica_errors(&dir);
    eprintln!("{summary}{failures}(wall time {:.1} s, under a hog)", started.elapsed().as_secs_f64());
    let unnamed = report.cluster.soak.findings().filter(|(_, f)| f.requirement.is_none()).count();
    assert_eq!(unnamed, 0, "findings under no requirement: {failures}{summary}");
    assert_eq!(report.findings(), 0, "{failures}{summary}");
    assert!(report.harness_errors().is_empty(), "{summary}");
    assert_eq!(report.cluster.kills, 0, "{summary}");
    assert!(report.cluster.soak.sessions >= 20 && report.cluster.soak.events > 0, "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_command_line_refuses_what_cannot_work_before_anything_starts() {
    let run = |args: &[&str]| Command::new(BIN).env("NO_COLOR", "1").args(args).output().expect("the binary runs");
    let text = |o: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    };
    let o = run(&["cluster-load"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--store"), "{}", text(&o));
    let refused: [(&[&str], &str); 3] = [
        (&["cluster-load", "--store", "sqlite:///tmp/x.db"], "postgres://"),
        (&["cluster-load", "--store", "postgres://h/db", "--down-ms", "9000"], "shorter than --kill-every"),
        (&["cluster-load", "--store", "postgres://h/db", "--exec", "backend --port {port}"], "{store}"),
    ];
    for (args, want) in refused {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
    let help = text(&run(&["cluster-load", "--help"]));
    for flag in ["--replicas <N>", "--kill-every <SECONDS>", "--report-json <FILE>", "--cluster-only"] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}
