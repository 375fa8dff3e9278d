//! A throwaway PostgreSQL server for trying `cluster-load` (or `run --store`) by hand: starts one
//! as the tests do ([`chatwire_pgtmp::TempPostgres`]), prints its URL on stdout, and stops it and
//! removes its directory when standard input closes (Ctrl-D, or the end of a pipe).
//!
//! ```text
//! cargo run -p chatwire-conformance --example throwaway_postgres
//! postgres://postgres@127.0.0.1:PORT/chatwire
//! ```

use std::io::Read;

fn main() -> std::process::ExitCode {
    let pg = match chatwire_pgtmp::TempPostgres::start() {
        Ok(pg) => pg,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    println!("{}", pg.url());
    eprintln!("(close standard input to stop the server)");
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(pg);
    std::process::ExitCode::SUCCESS
}
