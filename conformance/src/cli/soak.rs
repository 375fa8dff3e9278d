//! `soak`: many seeded random sessions against a backend (see [`crate::soak`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::shared::{cluster_spec, offer, EXIT_FAIL, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use crate::backend::Target;

#[derive(Args)]
pub(super) struct SoakArgs {
    /// Soak a backend that is already running at this WebSocket URL (the sessions share it; no
    /// kill -9 restarts).
    #[arg(long, value_name = "WS_URL", conflicts_with = "exec")]
    url: Option<String>,
    /// Spawn the backend with this shell command, one instance per concurrent session (same
    /// placeholders as `run --exec`); sessions may kill it with SIGKILL and start it again.
    #[arg(long, value_name = "CMD")]
    exec: Option<String>,
    /// URL path used with --exec when the backend does not print its URL.
    #[arg(long, value_name = "PATH", default_value = "/ws", requires = "exec")]
    exec_path: String,
    /// Start each session slot's backend as a cluster of N replicas (1 to 8) sharing one store, as
    /// `run --replicas`; connections take the replicas in turn.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=8))]
    replicas: u16,
    /// The PostgreSQL server the replicas share, as `run --store` (a fresh database per slot).
    #[arg(long, value_name = "URL", conflicts_with = "url")]
    store: Option<String>,
    /// Run the bundled reference backend with this planted fault (testing aid).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["url", "exec"], value_parser = crate::bundled_reference::parse_fault)]
    reference_fault: Option<String>,
    /// Sessions run at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=256))]
    sessions: u16,
    /// Start sessions for this many seconds (those running then finish).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    duration: u64,
    /// The seed every session's plan derives from (the same seed, the same plans).
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Run at most this many sessions in all.
    #[arg(long, value_name = "N")]
    max_sessions: Option<u64>,
    /// Start no session after the first that fails.
    #[arg(long)]
    fail_fast: bool,
    /// Write the wire log of every failing session into this directory, for `check-log`.
    #[arg(long, value_name = "DIR", default_value = "chatwire-soak-logs")]
    wire_log: PathBuf,
    /// Keep the wire log of every session in --wire-log, not only of the failing ones.
    #[arg(long)]
    keep_logs: bool,
    /// Multiply every deadline by this factor.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    timeout_scale: f64,
    /// The versions `session.hello` offers, newest first, comma-separated [default: every version
    /// the runner supports].
    #[arg(long, value_name = "V,V", value_delimiter = ',')]
    versions: Option<Vec<String>>,
}

/// `soak`: runs the sessions and prints what failed.
pub(super) fn soak(args: SoakArgs) -> u8 {
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0 && args.timeout_scale <= 1000.0) {
        err_line!("error: --timeout-scale must be a number in (0, 1000]");
        return EXIT_USAGE;
    }
    let commands = [args.exec.as_ref()];
    let cluster = match cluster_spec(args.replicas, args.store.as_deref(), args.url.as_deref(), &commands) {
        Ok(spec) => spec,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let (versions, _) = match offer(args.versions.clone(), None) {
        Ok(offer) => offer,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let target = match (&args.url, &args.exec) {
        (Some(url), _) => Target::Url(url.clone()),
        (None, Some(command)) => Target::Exec { command: command.clone(), path: args.exec_path.clone() },
        (None, None) => match crate::bundled_reference::target(args.reference_fault.clone()) {
            Ok(target) => target,
            Err(e) => {
                err_line!("error: {e}");
                return EXIT_USAGE;
            }
        },
    };
    let options = crate::soak::SoakOptions {
        target,
        sessions: usize::from(args.sessions),
        duration: Duration::from_secs(args.duration),
        seed: args.seed,
        max_sessions: args.max_sessions,
        fail_fast: args.fail_fast,
        log_dir: args.wire_log.clone(),
        keep_logs: args.keep_logs,
        config: crate::soak::SoakConfig {
            versions,
            timeout_scale: args.timeout_scale,
            ..crate::soak::SoakConfig::default()
        },
        cluster,
    };
    out_line!(
        "chatwire-conformance soak: {} session(s) at once for {} s against {}, seed {}, offering [{}]",
        options.sessions,
        args.duration,
        options.cluster.describe(&options.target),
        options.seed,
        options.config.versions.join(", ")
    );
    let seed = options.seed;
    let on_failure: Arc<dyn Fn(&crate::soak::FailedSession) + Send + Sync> =
        Arc::new(move |failed| out_text!("{}", crate::soak::failure_text(seed, failed)));
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            err_line!("error: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let report = match runtime.block_on(crate::soak::run_soak(&options, on_failure)) {
        Ok(r) => r,
        Err(e @ (crate::soak::SoakError::LogDir { .. } | crate::soak::SoakError::Options(_))) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_UNREACHABLE;
        }
    };
    out_text!("{}", crate::soak::summary_text(&report));
    if !report.failed.is_empty() {
        EXIT_FAIL
    } else if !report.harness.is_empty() {
        EXIT_USAGE
    } else {
        EXIT_OK
    }
}
