//! The command line: `run`, `soak`, `cluster-load`, `check-log`, `list`, `requirements`, and the
//! hidden `__reference` that runs the bundled reference backend (so the runner can spawn, kill and
//! restart it as a real process).
//!
//! Exit codes (`run` and `check-log` alike): 0 every mandatory check passed; 1 a conformance
//! failure or a stale baseline entry; 2 usage or harness error (an unreadable log included); 3 the
//! implementation could not be reached or started.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::backend::Target;
use crate::baseline;
use crate::catalog;
use crate::coverage;
use crate::driver::{DriverConfig, SnapshotMode};
use crate::output::{self, Style};
use crate::runner::{self, Progress, RunOptions};
use crate::scenario::{glob_match, Scenario};
use crate::snapshot::SnapshotStore;

// Output that never panics: a closed pipe (`chatwire-conformance list | head -1`) or a closed
// stderr ends the output quietly instead of the process.
macro_rules! out_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}
macro_rules! out_text {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
macro_rules! err_line {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod load;
mod shared;
mod soak;
use load::{cluster_load, LoadArgs};
use shared::{cluster_spec, offer};
pub use shared::{EXIT_FAIL, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE};
use soak::{soak, SoakArgs};

#[derive(Parser)]
#[command(
    name = "chatwire-conformance",
    version,
    about = "Chatwire conformance runner: drives a backend through scripted scenarios and checks every frame",
    after_help = "Exit codes: 0 conformant; 1 conformance failure or stale baseline entry; 2 usage or harness error; 3 backend unreachable or failed to start."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the scenarios against a backend (the bundled reference backend unless --url or --exec).
    Run(Box<RunArgs>),
    /// Soak: many seeded random sessions at once against a backend (the bundled reference backend
    /// unless --url or --exec), every frame through the always-on checks; failing sessions' wire
    /// logs are written for `check-log`.
    Soak(SoakArgs),
    /// Load on a cluster: the same seeded soak sessions against one replica and then against a
    /// cluster of several (one replica killed every few seconds), all on one PostgreSQL server;
    /// reports violations, events/s and p50/p99 latency, the cluster's as ratios to the single's.
    ClusterLoad(Box<LoadArgs>),
    /// Check a recorded JSON Lines wire log offline with every always-on check and the
    /// differential oracle (format: schema/json/wire-log-record.json; `run --wire-log` writes them).
    CheckLog(CheckLogArgs),
    /// List the scenarios with their level, capabilities and requirement ids.
    List(ListArgs),
    /// List every requirement of the spec with the checks that assert it; claimed-only and
    /// uncovered MUSTs last.
    Requirements(RequirementsArgs),
    /// Write one run's HTML page and SVG badges from its JSON report (`run --report-json`).
    Report(crate::certify::command::ReportArgs),
    /// Write the HTML matrix of several runs (runs × requirements) with each run's page and badges.
    Matrix(crate::certify::command::MatrixArgs),
    /// Run the bundled reference backend (used by the runner itself).
    #[cfg(feature = "bundled-reference")]
    #[command(name = "__reference", hide = true, disable_help_flag = true)]
    Reference {
        /// Arguments for chatwire-reference.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
}

#[derive(Args)]
struct SourceArgs {
    /// Read scenarios from this directory instead of those built into the binary.
    #[arg(long, value_name = "DIR")]
    scenarios_dir: Option<PathBuf>,
}

#[derive(Args)]
struct RequirementsArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Measure: run the scenarios against the bundled reference backend and count a requirement as
    /// covered only when a check naming it was evaluated in a passing scenario.
    #[arg(long)]
    measure: bool,
}

#[derive(Args)]
struct CheckLogArgs {
    /// The wire log: one JSON object per line, {"conn": N, "from": "client"|"server", "frame": {...}}
    /// or {"conn": N, "from": ..., "event": "close", "code": N}.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Write the JSON report here (schema: schema/json/conformance-report.json).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Fail on errata too: a finding of a rule added after the negotiated version was released
    /// fails instead of warning (COMPAT-017).
    #[arg(long)]
    strict: bool,
}

#[derive(Args)]
struct ListArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Only scenarios whose id matches (`*` and `?`); repeatable.
    #[arg(long = "scenario", value_name = "GLOB")]
    scenarios: Vec<String>,
}

#[derive(Args)]
struct RunArgs {
    /// Test a backend that is already running at this WebSocket URL (restart scenarios are n/a).
    #[arg(long, value_name = "WS_URL", conflicts_with = "exec")]
    url: Option<String>,
    /// Spawn the backend with this shell command; `{port}` becomes a free port, `{db}` a fresh
    /// storage path, `{store}` the URL of the cluster's database (with --store), `{replica}` the
    /// replica's name (r0, r1, …). Ready when it prints a ws:// URL on stdout or accepts TCP on the
    /// port. Started once per replica (--replicas).
    #[arg(long, value_name = "CMD")]
    exec: Option<String>,
    /// URL path used with --exec when the backend does not print its URL.
    #[arg(long, value_name = "PATH", default_value = "/ws", requires = "exec")]
    exec_path: String,
    /// Start every backend the runner spawns (--exec or the bundled one) as a cluster of N replicas,
    /// 1 to 8, each its own process and port, sharing one store; more than one needs --store
    /// postgres://…. Connections are spread round-robin and each reconnect goes to another replica;
    /// scenarios that need more replicas than N are n/a.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=8))]
    replicas: u16,
    /// The PostgreSQL server the replicas share (postgres:// or postgresql://, e.g.
    /// postgres://user:pass@localhost:5432/postgres): the runner creates a fresh database there for
    /// each cluster it starts (the shared one, and each scenario's own) and drops it afterwards. The
    /// bundled reference gets `--store URL --replica rK`; --exec gets the URL as `{store}`.
    #[arg(long, value_name = "URL", conflicts_with = "url")]
    store: Option<String>,
    /// The same implementation already running outside conformance mode at this URL, for the
    /// scenarios that check behaviour there (SCRIPT-001, SCRIPT-003); they are n/a without it,
    /// unless the backend is the bundled one, which the runner starts without --conformance itself.
    #[arg(long, value_name = "WS_URL", conflicts_with = "plain_exec")]
    plain_url: Option<String>,
    /// Like --plain-url, but spawn it with this shell command (same placeholders as --exec).
    #[arg(long, value_name = "CMD")]
    plain_exec: Option<String>,
    /// Run the bundled reference backend with this planted fault (testing aid); an unknown name
    /// is refused with the list of faults.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["url", "exec"], value_parser = crate::bundled_reference::parse_fault)]
    reference_fault: Option<String>,
    /// Only scenarios whose id matches (`*` and `?`); repeatable.
    #[arg(long = "scenario", value_name = "GLOB")]
    scenarios: Vec<String>,
    /// Scenarios run in parallel [default: 16 against the bundled reference, 8 against another
    /// backend, whatever the core count: scenarios wait, they do not compute; heavy ones run alone].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: Option<u16>,
    /// Multiply every deadline (per step, scenario, run, backend start) by this factor.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    timeout_scale: f64,
    /// Write the JSON report here (schema: schema/json/conformance-report.json).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Write one JSON Lines wire log per scenario into this directory (`<scenario>.jsonl`), for
    /// `check-log`.
    #[arg(long, value_name = "DIR")]
    wire_log: Option<PathBuf>,
    /// Write a JUnit XML report here (testsuite = scenario, testcase = check).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Expected failures: a JSON list of {scenario, check, reason}.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Fail on errata too. Each connection is judged by the requirement set of the version it
    /// negotiated, frozen at that version's release; a check that fails only on errata (rules added
    /// after the release, spec/versioning.md#frozen-requirement-sets) is a warning naming them,
    /// unless --strict (COMPAT-017).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    source: SourceArgs,
    /// Read golden snapshots from this directory instead of those built into the binary.
    #[arg(long, value_name = "DIR")]
    snapshots_dir: Option<PathBuf>,
    /// Largest frame the runner accepts from the backend, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::conn::DEFAULT_MAX_MESSAGE_BYTES)]
    max_frame_bytes: usize,
    /// Deadline of one scenario in seconds (before scaling).
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    scenario_timeout: u64,
    /// Reconnect sweep: run each selected scenario uninterrupted, then once per server frame k of its
    /// main connection, cut right after frame k, resumed at once and finished; the final state must
    /// equal the uninterrupted run's and no tool call may settle twice. Scenarios with restarts,
    /// deliberate errors, several connections or version negotiation are reported n/a.
    #[arg(long)]
    sweep: bool,
    /// With --sweep: at most this many cut variants per scenario (the first frames are cut).
    #[arg(long, value_name = "N", default_value_t = crate::sweep::DEFAULT_SWEEP_MAX, requires = "sweep",
          value_parser = clap::value_parser!(u16).range(1..=10_000))]
    sweep_max: u16,
    /// With --sweep: where `multi_attach` is in force, a second tab attaches right after the main
    /// connection opens and stays attached through every cut; at the end it must hold the main
    /// connection's final state (ATTACH-004, ATTACH-007). The session then never leaves memory, so
    /// run the plain sweep too: only it reloads the session on each resume.
    #[arg(long, requires = "sweep")]
    sweep_watch: bool,
    /// Deadline of the whole run in seconds (before scaling).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    run_timeout: u64,
    /// The versions `session.hello` offers, in order of preference, comma-separated (e.g.
    /// `1.1,1.0`; `1.0` for a 1.0-only client) [default: every version the runner supports,
    /// newest first]. Scenarios needing a feature are not applicable where 1.0 is negotiated.
    #[arg(long, value_name = "V,V", value_delimiter = ',')]
    versions: Option<Vec<String>>,
    /// Send `session.hello.features` with these names, comma-separated (empty: `--features ''`
    /// asks for none) [default: no member, so every feature the server implements is in force].
    /// Refused with a version below 1.1 offered (SESSION-014).
    #[arg(long, value_name = "NAME,NAME", value_delimiter = ',')]
    features: Option<Vec<String>>,
}

/// Runs the command line (`args` includes the program name) and returns the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { EXIT_OK });
        }
    };
    match cli.command {
        #[cfg(feature = "bundled-reference")]
        Command::Reference { args } => crate::bundled_reference::run(args),
        Command::List(args) => ExitCode::from(list(&args)),
        Command::CheckLog(args) => ExitCode::from(check_log(&args)),
        Command::Requirements(args) => ExitCode::from(requirements(&args)),
        Command::Run(args) => ExitCode::from(run(*args)),
        Command::Soak(args) => ExitCode::from(soak(args)),
        Command::ClusterLoad(args) => ExitCode::from(cluster_load(*args)),
        Command::Report(args) => {
            ExitCode::from(crate::certify::command::finish(crate::certify::command::report(&args)))
        }
        Command::Matrix(args) => {
            ExitCode::from(crate::certify::command::finish(crate::certify::command::matrix(&args)))
        }
    }
}

fn load_scenarios(source: &SourceArgs, globs: &[String]) -> Result<Vec<Scenario>, String> {
    let all = match &source.scenarios_dir {
        Some(dir) => catalog::scenarios_from_dir(dir),
        None => catalog::embedded_scenarios(),
    }
    .map_err(|e| e.to_string())?;
    if globs.is_empty() {
        return Ok(all);
    }
    let picked: Vec<Scenario> = all.into_iter().filter(|s| globs.iter().any(|g| glob_match(g, &s.id))).collect();
    if picked.is_empty() {
        return Err(format!("no scenario matches {}", globs.join(", ")));
    }
    Ok(picked)
}

fn list(args: &ListArgs) -> u8 {
    let scenarios = match load_scenarios(&args.source, &args.scenarios) {
        Ok(s) => s,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let registry = match registry() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let width = scenarios.iter().map(|s| s.id.len()).max().unwrap_or(2);
    out_line!("{:<width$}  {:<6}  {:<40}  requirements", "id", "level", "capabilities");
    for s in &scenarios {
        let caps = s.needed_capabilities().join(",");
        let reqs: Vec<String> = s.requirements.iter().map(ToString::to_string).collect();
        out_line!("{:<width$}  {:<6}  {:<40}  {}", s.id, crate::level::name(s.level), caps, reqs.join(" "));
        out_line!("{:<width$}  {}", "", s.title);
        if let Some(versions) = crate::errata::scenario_versions(&reqs, &registry) {
            out_line!("{:<width$}  {versions}", "");
        }
    }
    out_line!("{} scenario(s)", scenarios.len());
    EXIT_OK
}

fn requirements(args: &RequirementsArgs) -> u8 {
    let scenarios = match load_scenarios(&args.source, &[]) {
        Ok(s) => s,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let registry = match registry() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let (map, how) = if args.measure {
        match measure(&scenarios) {
            Ok(m) => (m, "evaluated in a passing run against the bundled reference"),
            Err(code) => return code,
        }
    } else {
        (coverage::declared(&scenarios), "declared by the checks (run with --measure to evaluate them)")
    };
    let mut claimed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in &scenarios {
        for r in &s.requirements {
            claimed.entry(r.as_str()).or_default().push(&s.id);
        }
    }
    out_line!("checks asserting each requirement, {how}:");
    let mut covered = 0;
    let mut claim_only = Vec::new();
    let mut uncovered = Vec::new();
    for r in &registry {
        let checks: Vec<&String> = chatwire_schema::ReqId::parse(&r.id)
            .ok()
            .and_then(|id| map.get(&id))
            .map(|c| c.iter().collect())
            .unwrap_or_default();
        let mut line = format!("{:<14} {:<6} {}", r.id, r.level.as_str(), r.link());
        line.push_str(&format!("\n               {}", crate::errata::requirement_versions(r)));
        if !checks.is_empty() {
            let shown: Vec<&str> = checks.iter().take(6).map(|c| c.as_str()).collect();
            let more =
                if checks.len() > shown.len() { format!(", … ({} checks)", checks.len()) } else { String::new() };
            line.push_str(&format!("\n               checks: {}{more}", shown.join(", ")));
        }
        if let Some(reason) = &r.untestable {
            line.push_str(&format!("\n               untestable: {reason}"));
        }
        match (checks.is_empty(), claimed.get(r.id.as_str()), &r.untestable) {
            (false, _, _) | (true, _, Some(_)) => covered += 1,
            (true, Some(by), None) => {
                line.push_str(&format!("\n               claimed only, by scenarios: {}", by.join(", ")));
                claim_only.push(r);
            }
            (true, None, None) => uncovered.push(r),
        }
        out_line!("{line}");
    }
    let is_must =
        |r: &&&chatwire_schema::requirements::Requirement| r.level == chatwire_schema::requirements::Level::Must;
    let claim_only_must: Vec<_> = claim_only.iter().filter(is_must).collect();
    out_line!("\nMUST claimed by a scenario but asserted by no check ({}):", claim_only_must.len());
    for r in &claim_only_must {
        out_line!("{:<14} {:<6} {}", r.id, r.level.as_str(), r.link());
    }
    let uncovered_other: Vec<_> = uncovered.iter().filter(|r| !is_must(r)).collect();
    if !uncovered_other.is_empty() {
        out_line!("\nuncovered SHOULD/MAY ({}):", uncovered_other.len());
        for r in &uncovered_other {
            out_line!("{:<14} {:<6} {}", r.id, r.level.as_str(), r.link());
        }
    }
    let uncovered_must: Vec<_> = uncovered.iter().filter(is_must).collect();
    out_line!("\nuncovered MUST ({}):", uncovered_must.len());
    for r in &uncovered_must {
        let text: String = r.text.chars().take(100).collect();
        let cut = if r.text.chars().count() > 100 { "…" } else { "" };
        out_line!("{:<14} {:<6} {}  {text}{cut}", r.id, r.level.as_str(), r.link());
    }
    let unknown: Vec<&str> = claimed.keys().copied().filter(|id| !registry.iter().any(|r| r.id == *id)).collect();
    if !unknown.is_empty() {
        out_line!("\nscenarios name ids the spec does not define: {}", unknown.join(", "));
    }
    out_line!("\nrequirement sets (spec/versioning.md#frozen-requirement-sets):");
    for line in crate::errata::set_summary(&registry) {
        out_line!("  {line}");
    }
    out_line!(
        "\n{} requirement(s): {covered} covered or untestable, {} claimed only ({} MUST), {} uncovered ({} MUST)",
        registry.len(),
        claim_only.len(),
        claim_only_must.len(),
        uncovered.len(),
        uncovered_must.len()
    );
    EXIT_OK
}

/// Runs the scenarios against the bundled reference and returns what their passing checks evaluated.
fn measure(scenarios: &[Scenario]) -> Result<coverage::CoverageMap, u8> {
    let target = crate::bundled_reference::target(None).map_err(|e| {
        err_line!("error: --measure runs the bundled reference backend: {e}");
        EXIT_USAGE
    })?;
    let opts = RunOptions { target, jobs: runner::DEFAULT_JOBS, ..RunOptions::default() };
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| {
        err_line!("error: cannot start the async runtime: {e}");
        EXIT_USAGE
    })?;
    err_line!("measuring: {} scenario(s) against the bundled reference backend…", scenarios.len());
    let report = runtime.block_on(runner::run_suite(scenarios.to_vec(), &opts, Arc::new(|_| {}))).map_err(|e| {
        err_line!("error: {e}");
        EXIT_UNREACHABLE
    })?;
    Ok(coverage::measured(&report, scenarios))
}

/// The spec's requirement registry, or the usage error that it is invalid.
fn registry() -> Result<Vec<chatwire_schema::requirements::Requirement>, u8> {
    chatwire_schema::requirements::all().map_err(|e| {
        err_line!("error: the spec's requirement registry is invalid: {e}");
        EXIT_USAGE
    })
}

fn check_log(args: &CheckLogArgs) -> u8 {
    let registry = match registry() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let validator = Arc::new(chatwire_schema::FrameValidator::new());
    let report = match crate::checklog::check_log(&args.file, validator) {
        Ok(r) => r,
        Err(e) => {
            err_line!("error: {}: {e}", args.file.display());
            return EXIT_USAGE;
        }
    };
    let mut run = crate::report::RunReport {
        tool: concat!("chatwire-conformance ", env!("CARGO_PKG_VERSION")).to_owned(),
        target: format!("wire log {}", args.file.display()),
        replicas: 1,
        timeout_scale: 1.0,
        duration_ms: report.duration_ms,
        summary: Default::default(),
        scenarios: vec![report],
        stale_baseline: Vec::new(),
        backend_logs: Vec::new(),
        sweep: None,
        strict: false,
        levels: Vec::new(),
        exit_code: EXIT_OK,
    };
    crate::errata::apply(&mut run, &registry, args.strict);
    let style = Style::detect();
    if let Some(report) = run.scenarios.first() {
        out_line!("{}", output::scenario_block(style, report, 1, 1));
        run.exit_code = if report.verdict.is_failure() { EXIT_FAIL } else { EXIT_OK };
    }
    for levels in &run.levels {
        out_line!("{}: {}", crate::errata::heading(levels), crate::errata::line(levels));
    }
    let code = run.exit_code;
    if let Some(path) = &args.report_json {
        let written = serde_json::to_string_pretty(&run)
            .map_err(|e| e.to_string())
            .and_then(|text| std::fs::write(path, text + "\n").map_err(|e| e.to_string()));
        if let Err(e) = written {
            err_line!("error: cannot write {}: {e}", path.display());
            return code.max(EXIT_USAGE);
        }
    }
    code
}

fn run(args: RunArgs) -> u8 {
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0 && args.timeout_scale <= 1000.0) {
        err_line!("error: --timeout-scale must be a number in (0, 1000]");
        return EXIT_USAGE;
    }
    let commands = [args.exec.as_ref(), args.plain_exec.as_ref()];
    let cluster = match cluster_spec(args.replicas, args.store.as_deref(), args.url.as_deref(), &commands) {
        Ok(spec) => spec,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if let Some(cmd) = &args.exec {
        if !cmd.contains("{port}") && !cmd.contains("{db}") {
            err_line!("note: --exec command has no {{port}}; the runner waits for a ws:// URL on its stdout");
        }
    }
    let (versions, features) = match offer(args.versions.clone(), args.features.clone()) {
        Ok(offer) => offer,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let scenarios = match load_scenarios(&args.source, &args.scenarios) {
        Ok(s) => s,
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let registry = match registry() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let baseline = match &args.baseline {
        Some(path) => match baseline::load(path) {
            Ok(b) => b,
            Err(e) => {
                err_line!("error: {e}");
                return EXIT_USAGE;
            }
        },
        None => Vec::new(),
    };
    let store = match &args.snapshots_dir {
        Some(dir) => match SnapshotStore::from_dir(dir) {
            Ok(s) => s,
            Err(e) => {
                err_line!("error: cannot read snapshots from {}: {e}", dir.display());
                return EXIT_USAGE;
            }
        },
        None => SnapshotStore::embedded(),
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
    let plain_target = match (&args.plain_url, &args.plain_exec) {
        (Some(url), _) => Some(Target::Url(url.clone())),
        (None, Some(command)) => Some(Target::Exec { command: command.clone(), path: args.exec_path.clone() }),
        (None, None) => None,
    };
    if let Some(dir) = &args.wire_log {
        if let Err(e) = std::fs::create_dir_all(dir) {
            err_line!("error: cannot create the wire log directory {}: {e}", dir.display());
            return EXIT_USAGE;
        }
    }
    let jobs = args.jobs.map_or_else(|| runner::default_jobs(&target), usize::from);
    let opts = RunOptions {
        target,
        jobs,
        driver: DriverConfig {
            timeout_scale: args.timeout_scale,
            max_message_bytes: args.max_frame_bytes.max(1024),
            snapshots: SnapshotMode::Compare(store),
            wire_log_dir: args.wire_log.clone(),
            versions,
            features,
            sweep_watch: args.sweep_watch,
            ..DriverConfig::default()
        },
        scenario_timeout: Duration::from_secs(args.scenario_timeout.max(1)),
        run_timeout: Duration::from_secs(args.run_timeout.max(1)),
        sweep: args.sweep.then_some(usize::from(args.sweep_max)),
        plain_target,
        cluster,
        ..RunOptions::default()
    };
    let style = Style::detect();
    let live = style.colour;
    let mode = if opts.sweep.is_some() { " (reconnect sweep)" } else { "" };
    let features = match &opts.driver.features {
        Some(f) => format!(", features [{}]", f.join(", ")),
        None => String::new(),
    };
    let reload_variants = runner::reload_variant_count(&scenarios, &opts);
    out_line!(
        "chatwire-conformance: {}{mode} against {}, offering [{}]{features}",
        output::run_count(scenarios.len() + reload_variants, reload_variants),
        opts.cluster.describe(&opts.target),
        opts.driver.versions.join(", ")
    );
    // What is printed as each scenario ends is judged as the final report is (errata, --strict).
    let judged = {
        let (registry, strict) = (Arc::new(registry.clone()), args.strict);
        move |report: &crate::report::ScenarioReport| {
            let mut report = report.clone();
            crate::errata::apply_to_scenario(&mut report, &registry, strict);
            report
        }
    };
    let progress: runner::ProgressFn = Arc::new(move |event| match event {
        Progress::Started(id) if live => {
            out_text!("\r\x1b[K  … {id}");
            let _ = std::io::Write::flush(&mut std::io::stdout());
        }
        Progress::Started(_) => {}
        Progress::Variant(report) => {
            if live {
                out_text!("\r\x1b[K");
            }
            out_line!("{}", output::variant_block(style, &judged(report)));
        }
        Progress::Finished { report, done, total } => {
            if live {
                out_text!("\r\x1b[K");
            }
            out_line!("{}", output::scenario_block(style, &judged(report), done, total));
        }
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            err_line!("error: cannot start the async runtime: {e}");
            return EXIT_USAGE;
        }
    };
    let result = runtime.block_on(runner::run_suite(scenarios, &opts, progress));
    let mut report = match result {
        Ok(r) => r,
        Err(e @ runner::RunError::Options(_)) => {
            err_line!("error: {e}");
            return EXIT_USAGE;
        }
        Err(e) => {
            err_line!("error: {e}");
            return EXIT_UNREACHABLE;
        }
    };
    crate::errata::apply(&mut report, &registry, args.strict);
    baseline::apply(&mut report, &baseline);
    // Counted again: a baselined failure charges nothing.
    report.levels = crate::errata::tally(&report, &registry);
    report.exit_code = baseline::exit_code(&report);
    for log in &report.backend_logs {
        if report.exit_code != EXIT_OK {
            let tail: Vec<&str> = log.stderr.lines().rev().take(20).collect();
            out_line!("\nbackend stderr ({}), last lines:", log.label);
            for line in tail.into_iter().rev() {
                out_line!("  {line}");
            }
        }
    }
    out_line!("{}", output::summary_block(style, &report));
    let mut code = report.exit_code;
    if let Some(path) = &args.report_json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => {
                if let Err(e) = std::fs::write(path, text + "\n") {
                    err_line!("error: cannot write {}: {e}", path.display());
                    code = code.max(EXIT_USAGE);
                }
            }
            Err(e) => {
                err_line!("error: cannot serialize the report: {e}");
                code = code.max(EXIT_USAGE);
            }
        }
    }
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, output::junit(&report)) {
            err_line!("error: cannot write {}: {e}", path.display());
            code = code.max(EXIT_USAGE);
        }
    }
    code
}
