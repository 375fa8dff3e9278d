//! The command line: `chatwire-reference serve …` (also reached through the conformance runner's
//! hidden subcommand).

use std::ffi::OsString;
use std::future::Future;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use chatwire_schema::session::welcome::Capability;
use chatwire_schema::{ProtocolVersion, SUPPORTED_VERSIONS};
use clap::Parser;

use crate::agent::{Agent, EchoAgent};
use crate::config::{ServeConfig, CRASH_AT_ENV, MAX_NOTICE_DELAY, NOTICE_DELAY_ENV, WITHHOLDABLE};
use crate::fault::Fault;
use crate::outbox::DEFAULT_SEND_QUEUE_BYTES;
use crate::server::{ServeError, Server};
use crate::store::{self, CrashPoint, DbLocation, Durability};
use crate::ui::DemoAgent;

#[derive(Parser, Debug)]
#[command(name = "chatwire-reference", version, about = "Chatwire reference backend (protocol v1)")]
struct Cli {
    /// List the fault names accepted by `serve --fault` and exit (a testing aid).
    #[arg(long)]
    list_faults: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Serve Chatwire over WebSocket; prints the ws:// URL as the first line of stdout.
    Serve(ServeArgs),
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Loopback address to listen on; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    addr: SocketAddr,
    /// Where the sessions live: a SQLite database file (one process), `:memory:`, or a
    /// PostgreSQL database `postgres://USER@HOST:PORT/DB` (also `postgresql://`) that several
    /// replicas share. `--store` and `--db` are the same flag. Default:
    /// $XDG_DATA_HOME/chatwire/reference.db.
    #[arg(long, visible_alias = "store", value_name = "PATH|:memory:|postgres://…")]
    db: Option<String>,
    /// This replica's name on a shared store (default: a random id).
    #[arg(long, value_name = "NAME")]
    replica: Option<String>,
    /// Conformance mode: honour `session.hello.script`.
    #[arg(long)]
    conformance: bool,
    /// How hard a commit tries to survive a crash: `full` survives a power loss (the default),
    /// `normal` only the process being killed. On PostgreSQL: `synchronous_commit` on or off.
    #[arg(long, default_value = "full", value_parser = parse_durability)]
    durability: Durability,
    /// Largest text frame accepted, in bytes.
    #[arg(long, default_value_t = chatwire_schema::DEFAULT_MAX_FRAME_BYTES, value_parser = parse_frame_limit)]
    max_frame_bytes: u64,
    /// The protocol versions to speak, comma-separated (default: every version this build
    /// speaks); `--versions 1.0` plays a server that predates 1.1.
    #[arg(long, value_delimiter = ',', value_parser = parse_version)]
    versions: Vec<ProtocolVersion>,
    /// Bound on one connection's unsent bytes; a client that lets more pile up is closed with
    /// 4008 and resumes (at most 16 MiB).
    #[arg(long, default_value_t = DEFAULT_SEND_QUEUE_BYTES, value_parser = parse_send_queue_bytes)]
    send_queue_bytes: u64,
    /// Capabilities not to offer, comma-separated: `retry` (`chat.retry` gets
    /// capability_not_offered), `assistant_stream` (every `say` goes out whole).
    #[arg(long, value_delimiter = ',', value_parser = parse_withheld)]
    without: Vec<Capability>,
    /// Run with one planted bug (testing aid for the conformance suite; see --list-faults).
    #[arg(long, value_name = "NAME")]
    fault: Option<Fault>,
    /// Also serve the reference chat page at http://ADDR/ (the WebSocket stays at /ws).
    #[arg(long)]
    ui: bool,
    /// Answer every session with the bundled demo script (every feature the chat page renders)
    /// instead of the echo agent.
    #[arg(long, conflicts_with = "conformance")]
    demo: bool,
}

/// `--durability`: `full` or `normal`.
fn parse_durability(text: &str) -> Result<Durability, String> {
    Durability::parse(text).ok_or_else(|| format!("{text:?} is not a durability: use full or normal"))
}

/// `--max-frame-bytes`: a number within the spec's limits (checked by [`ServeConfig::validate`]).
fn parse_frame_limit(text: &str) -> Result<u64, String> {
    let n: u64 = text.parse().map_err(|e| format!("not a number of bytes: {e}"))?;
    let probe = ServeConfig { max_frame_bytes: n, ..ServeConfig::new(([127, 0, 0, 1], 0).into(), DbLocation::Memory) };
    probe.validate().map(|()| n).map_err(|e| e.to_string())
}

/// `--versions`: `MAJOR.MINOR`.
fn parse_version(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::parse(text.trim()).map_err(|e| e.to_string())
}

/// `--without`: a capability in [`WITHHOLDABLE`].
fn parse_withheld(text: &str) -> Result<Capability, String> {
    WITHHOLDABLE.iter().find(|c| c.as_str() == text.trim()).cloned().ok_or_else(|| {
        let names: Vec<&str> = WITHHOLDABLE.iter().map(Capability::as_str).collect();
        format!("{text:?} cannot be withheld: use one of {names:?}")
    })
}

/// `--send-queue-bytes`: a number within the spec's bound (checked by [`ServeConfig::validate`]).
fn parse_send_queue_bytes(text: &str) -> Result<u64, String> {
    let n: u64 = text.parse().map_err(|e| format!("not a number of bytes: {e}"))?;
    let probe = ServeConfig { send_queue_bytes: n, ..ServeConfig::new(([127, 0, 0, 1], 0).into(), DbLocation::Memory) };
    probe.validate().map(|()| n).map_err(|e| e.to_string())
}

/// Runs the command line with these arguments (the first is the program name) and returns the
/// process exit code. `serve` runs until SIGTERM or Ctrl-C.
pub fn run_cli(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    if cli.list_faults {
        for f in Fault::ALL {
            println!("{:<28} {}", f.name(), f.description());
        }
        return ExitCode::SUCCESS;
    }
    let Some(Command::Serve(args)) = cli.command else {
        eprintln!("chatwire-reference: nothing to do; try `chatwire-reference serve --help`");
        return ExitCode::from(2);
    };
    let db = match args.db.as_deref() {
        Some(text) => DbLocation::parse(text),
        None => match store::default_db_path() {
            Some(path) => DbLocation::File(path),
            None => {
                eprintln!("chatwire-reference: {}", ServeError::NoDataDir);
                return ExitCode::FAILURE;
            }
        },
    };
    let crash_at = std::env::var(CRASH_AT_ENV).ok().and_then(|v| {
        let point = CrashPoint::parse(&v);
        if point.is_none() {
            eprintln!("chatwire-reference: ignoring unknown {CRASH_AT_ENV}={v:?}");
        }
        point
    });
    let notice_delay = match std::env::var(NOTICE_DELAY_ENV) {
        Err(_) => Duration::ZERO,
        Ok(v) => match v.parse::<u64>().map(Duration::from_millis) {
            Ok(d) if d <= MAX_NOTICE_DELAY => d,
            _ => {
                eprintln!(
                    "chatwire-reference: {NOTICE_DELAY_ENV}={v:?} is not a number of milliseconds up to {}",
                    MAX_NOTICE_DELAY.as_millis()
                );
                return ExitCode::FAILURE;
            }
        },
    };
    let agent: Arc<dyn Agent> = if args.demo {
        match DemoAgent::bundled() {
            Ok(demo) => Arc::new(demo),
            Err(e) => {
                eprintln!("chatwire-reference: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        Arc::new(EchoAgent)
    };
    let config = ServeConfig {
        conformance: args.conformance,
        agent,
        ui: args.ui,
        max_frame_bytes: args.max_frame_bytes,
        send_queue_bytes: args.send_queue_bytes,
        versions: if args.versions.is_empty() { SUPPORTED_VERSIONS.to_vec() } else { args.versions },
        durability: args.durability,
        without: args.without,
        fault: args.fault,
        crash_at,
        notice_delay,
        replica: args.replica,
        ..ServeConfig::new(args.addr, db)
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("chatwire-reference: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        let shutdown = shutdown_signal();
        let server = Server::bind(config.clone()).await?;
        let mut stdout = std::io::stdout().lock();
        // The first line of stdout is the URL: a spawning runner reads it to find the server.
        let _ = writeln!(stdout, "{}", server.url()).and_then(|()| stdout.flush());
        drop(stdout);
        if let Some(f) = config.fault {
            eprintln!("chatwire-reference: FAULT INJECTED: {f} ({})", f.description());
        }
        match server.replica() {
            Some(replica) => {
                eprintln!("chatwire-reference: listening on {} (db: {}, replica {replica})", server.url(), config.db)
            }
            None => eprintln!("chatwire-reference: listening on {} (db: {})", server.url(), config.db),
        }
        if let Some(page) = server.page_url() {
            eprintln!("chatwire-reference: chat page at {page}");
        }
        server.run(shutdown).await
    });
    match result {
        Ok(()) => {
            eprintln!("chatwire-reference: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("chatwire-reference: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Registers for SIGTERM right away (so that a signal sent as soon as the URL is printed is not
/// missed) and returns a future that completes on SIGTERM or Ctrl-C (SIGINT).
fn shutdown_signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| eprintln!("chatwire-reference: cannot listen for SIGTERM: {e}"))
        .ok();
    async move {
        #[cfg(unix)]
        if let Some(mut term) = term {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
