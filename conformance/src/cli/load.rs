//! `cluster-load`: the same seeded load against one replica and against a cluster whose replicas
//! are killed under it (see [`crate::soak::load`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::shared::{offer, EXIT_FAIL, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use crate::backend::{StoreUrl, Target};
use crate::soak::load::{run_load, summary_text, LoadOptions, OnLoadFailure};
use crate::soak::{failure_text, SoakConfig, SoakError};

#[derive(Args)]
pub(super) struct LoadArgs {
    /// The PostgreSQL server the replicas share: each phase gets a fresh database on it, dropped at
    /// the end.
    #[arg(long, value_name = "URL")]
    store: String,
    /// Spawn each replica with this shell command (placeholders as `run --exec`; it must use
    /// {store}, and may use {port} and {replica}); default: the bundled reference backend.
    #[arg(long, value_name = "CMD")]
    exec: Option<String>,
    /// URL path used with --exec when the backend does not print its URL.
    #[arg(long, value_name = "PATH", default_value = "/ws", requires = "exec")]
    exec_path: String,
    /// Run the bundled reference backend with this planted fault (testing aid).
    #[arg(long, value_name = "NAME", conflicts_with = "exec", value_parser = crate::bundled_reference::parse_fault)]
    reference_fault: Option<String>,
    /// Replicas of the cluster phase.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u16).range(2..=8))]
    replicas: u16,
    /// Sessions at once in each phase, all on the one cluster.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u16).range(1..=1000))]
    sessions: u16,
    /// Start sessions for this many seconds in each phase (those running then finish).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    duration: u64,
    /// SIGKILL one replica (in turn) every this many seconds in the cluster phase; 0: no kills.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    kill_every: f64,
    /// How long a killed replica stays down before it is started again.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    down_ms: u64,
    /// The bound within which another replica recovers the runs of a killed one (CLUSTER-004; the
    /// reference documents 10 s): after a kill every wait may take this much longer, plus a margin.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    recovery_bound: f64,
    /// Skip the one-replica phase (no ratios).
    #[arg(long)]
    cluster_only: bool,
    /// The seed every session's plan derives from (the same seed, the same plans in both phases).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Write the JSON report here (both phases' figures, the ratios, the counts).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Write the wire log of every failing session into this directory, for `check-log` (default:
    /// `chatwire-load-logs` in the system's temporary directory, never the working directory).
    #[arg(long, value_name = "DIR", default_value_os_t = std::env::temp_dir().join("chatwire-load-logs"))]
    wire_log: PathBuf,
    /// Keep the wire log of every session in --wire-log, not only of the failing ones.
    #[arg(long)]
    keep_logs: bool,
    /// Write each phase's replicas' stderr (the end of it, with the runner's notes of kills and
    /// starts) into this directory: replicas-1.stderr, replicas-3.stderr.
    #[arg(long, value_name = "DIR")]
    backend_stderr: Option<PathBuf>,
    /// Multiply every deadline by this factor.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    timeout_scale: f64,
    /// The versions `session.hello` offers, newest first, comma-separated [default: every version
    /// the runner supports].
    #[arg(long, value_name = "V,V", value_delimiter = ',')]
    versions: Option<Vec<String>>,
}

/// Seconds given as a number: finite, in `[0, max]`.
fn seconds(name: &str, value: f64, max: f64) -> Result<Duration, String> {
    if value.is_finite() && (0.0..=max).contains(&value) {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(format!("{name} must be a number of seconds in [0, {max}]"))
    }
}

fn options(args: &LoadArgs) -> Result<LoadOptions, String> {
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0 && args.timeout_scale <= 1000.0) {
        return Err("--timeout-scale must be a number in (0, 1000]".into());
    }
    let store = StoreUrl::parse(&args.store).map_err(|e| e.to_string())?;
    if let Some(command) = &args.exec {
        if !command.contains("{store}") {
            return Err(
                "--exec needs {store}: the runner creates a fresh database per phase and passes its url there".into()
            );
        }
    }
    let (versions, _) = offer(args.versions.clone(), None)?;
    let target = match &args.exec {
        Some(command) => Target::Exec { command: command.clone(), path: args.exec_path.clone() },
        None => crate::bundled_reference::target(args.reference_fault.clone())?,
    };
    let options = LoadOptions {
        target,
        store,
        replicas: usize::from(args.replicas),
        sessions: usize::from(args.sessions),
        duration: Duration::from_secs(args.duration),
        seed: args.seed,
        kill_every: seconds("--kill-every", args.kill_every, 3600.0)?,
        down: Duration::from_millis(args.down_ms),
        recovery_bound: seconds("--recovery-bound", args.recovery_bound, 600.0)?,
        single: !args.cluster_only,
        log_dir: args.wire_log.clone(),
        keep_logs: args.keep_logs,
        stderr_dir: args.backend_stderr.clone(),
        config: SoakConfig { versions, timeout_scale: args.timeout_scale, ..SoakConfig::default() },
    };
    options.check()?;
    Ok(options)
}

/// `cluster-load`: runs both phases, prints the summary, writes the JSON report.
pub(super) fn cluster_load(args: LoadArgs) -> u8 {
    let options = match options(&args) {
        Ok(o) => o,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let kills = if options.kill_every.is_zero() {
        "no kills".to_owned()
    } else {
        format!("one replica killed every {:.1} s, down {} ms", options.kill_every.as_secs_f64(), args.down_ms)
    };
    out_line!(
        "chatwire-conformance cluster-load: {} session(s) at once for {} s against {}{} replica(s) of {} on {}/<a fresh database per phase> ({kills}), seed {}, offering [{}]",
        options.sessions,
        args.duration,
        if options.single { "1 replica, then " } else { "" },
        options.replicas,
        options.target.describe(),
        options.store.server(),
        options.seed,
        options.config.versions.join(", ")
    );
    let seed = options.seed;
    let on_failure: OnLoadFailure = Arc::new(move |replicas, failed| {
        out_text!("[{replicas} replica(s)] {}", failure_text(seed, failed));
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            err_line!("error: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let report = match runtime.block_on(run_load(&options, on_failure)) {
        Ok(r) => r,
        Err(e @ (SoakError::LogDir { .. } | SoakError::Options(_))) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_UNREACHABLE;
        }
    };
    out_text!("{}", summary_text(&report));
    if let Some(path) = &args.report_json {
        let text = serde_json::to_string_pretty(&report.to_json()).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            err_line!("error: cannot write the report {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    if report.findings() > 0 {
        EXIT_FAIL
    } else if !report.harness_errors().is_empty() {
        EXIT_USAGE
    } else {
        EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: LoadArgs,
    }

    /// `args` parsed; on a runner without the bundled reference backend, naming a backend when
    /// `args` name none (the refusals below are of other options).
    fn parse(args: &[&str]) -> Result<LoadOptions, String> {
        let mut all = vec!["x"];
        all.extend_from_slice(args);
        if !crate::bundled_reference::AVAILABLE && !args.contains(&"--exec") {
            all.extend_from_slice(&["--exec", "backend --port {port} --store {store}"]);
        }
        let wrap = Wrap::try_parse_from(all).map_err(|e| e.to_string())?;
        options(&wrap.args)
    }

    #[test]
    fn options_that_cannot_work_are_refused_with_a_reason() {
        let ok = parse(&["--store", "postgres://u@h/db"]).unwrap();
        assert_eq!((ok.replicas, ok.sessions, ok.duration.as_secs()), (3, 200, 60));
        assert_eq!((ok.kill_every, ok.down), (Duration::from_secs(5), Duration::from_secs(1)));
        assert!(ok.single);
        let refused: [(&[&str], &str); 7] = [
            (&["--store", "postgres://h/db", "--recovery-bound", "nan"], "--recovery-bound must be"),
            (&["--store", "sqlite:///x.db"], "postgres://"),
            (&["--store", "postgres://h/db", "--down-ms", "6000"], "shorter than --kill-every"),
            (&["--store", "postgres://h/db", "--kill-every=-1"], "--kill-every must be"),
            (&["--store", "postgres://h/db", "--timeout-scale", "0"], "--timeout-scale"),
            (&["--store", "postgres://h/db", "--exec", "backend --port {port}"], "{store}"),
            (&["--store", "postgres://h/db", "--replicas", "1"], "1"),
        ];
        for (args, want) in refused {
            let e = parse(args).unwrap_err();
            assert!(e.contains(want), "{args:?}: {e}");
        }
        let no_kills = parse(&["--store", "postgres://h/db", "--kill-every", "0", "--cluster-only"]).unwrap();
        assert!(no_kills.kill_every.is_zero() && !no_kills.single);
    }

    #[test]
    fn naming_no_backend_needs_the_bundled_reference() {
        let wrap = Wrap::try_parse_from(["x", "--store", "postgres://h/db"]).unwrap();
        match options(&wrap.args) {
            Ok(o) => assert!(crate::bundled_reference::AVAILABLE && o.target == Target::Bundled { fault: None }),
            Err(e) => assert!(!crate::bundled_reference::AVAILABLE && e.contains("--url or --exec"), "{e}"),
        }
    }
}
