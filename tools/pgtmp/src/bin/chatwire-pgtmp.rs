//! `chatwire-pgtmp`: a throwaway PostgreSQL server from the command line, for the cluster recipes of
//! the README (`chatwire-conformance run --replicas N --store …`, `cluster-load`).
//!
//! ```text
//! chatwire-pgtmp -- COMMAND [ARGS…]   start a server, run COMMAND with CHATWIRE_PG_URL set, stop and
//!                                     delete the server, exit with COMMAND's code
//! chatwire-pgtmp                      start a server, print `CHATWIRE_PG_URL=postgres://…`, and keep
//!                                     it until Enter, end of input or Ctrl-C
//! ```
//!
//! It needs PostgreSQL's server programs (`initdb`, `pg_ctl`: Debian's `postgresql` package), runs
//! them as a non-root user where needed, listens on 127.0.0.1 only with trust authentication, and
//! keeps nothing: the data directory is deleted when the server stops, also when this process is
//! killed. Exit codes: COMMAND's, or 2 when the server cannot start, 127 when COMMAND cannot run.

use std::io::{BufRead, Write};
use std::process::{Command, ExitCode};

use chatwire_pgtmp::TempPostgres;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match args.split_first() {
        None => None,
        Some((dashes, rest)) if dashes == "--" && !rest.is_empty() => Some(rest.to_vec()),
        Some((flag, _)) if flag == "-h" || flag == "--help" => {
            println!("usage: chatwire-pgtmp [-- COMMAND [ARGS...]]\n\nWith a command: starts a throwaway PostgreSQL server, runs COMMAND with CHATWIRE_PG_URL set,\nthen stops and deletes the server. Without: prints CHATWIRE_PG_URL=... and keeps the server\nuntil Enter, end of input or Ctrl-C.");
            return ExitCode::SUCCESS;
        }
        Some(_) => {
            eprintln!("usage: chatwire-pgtmp [-- COMMAND [ARGS...]]");
            return ExitCode::from(2);
        }
    };
    let pg = match TempPostgres::start() {
        Ok(pg) => pg,
        Err(e) => {
            eprintln!("chatwire-pgtmp: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!("chatwire-pgtmp: PostgreSQL at {} (data in {}, deleted when it stops)", pg.url(), pg.dir().display());
    let Some(command) = command else {
        // A closed stdout (`| head`) must not end the process before the server is handed over.
        let _ = writeln!(std::io::stdout(), "CHATWIRE_PG_URL={}", pg.url());
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        return ExitCode::SUCCESS;
    };
    let status = Command::new(&command[0]).args(&command[1..]).env("CHATWIRE_PG_URL", pg.url()).status();
    drop(pg);
    match status {
        Ok(status) => ExitCode::from(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1))),
        Err(e) => {
            eprintln!("chatwire-pgtmp: cannot run {}: {e}", command[0]);
            ExitCode::from(127)
        }
    }
}
