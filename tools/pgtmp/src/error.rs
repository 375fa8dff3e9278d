//! Why no server could be had: the one error of the crate, below both the server ([`crate::TempPostgres`])
//! and the programs it runs (`cmd.rs`).

use std::time::Duration;

use crate::env::BINDIR_ENV;

/// Why no throwaway PostgreSQL server could be had.
#[derive(Debug, thiserror::Error)]
pub enum PgUnavailable {
    /// No PostgreSQL server binaries are installed.
    #[error(
        "no postgresql server binaries found (searched {searched}); install them (apt-get install postgresql) or set {BINDIR_ENV}"
    )]
    NoBinaries {
        /// Where they were looked for.
        searched: String,
    },
    /// Running as root, and no unprivileged user to run the server as.
    #[error("running as root and neither the postgres nor the nobody user exists to run the server as")]
    NoUser,
    /// A file or process operation failed.
    #[error("cannot {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// A program exited with an error.
    #[error("{what} failed: {output}")]
    Failed {
        /// The program.
        what: String,
        /// Its exit status and output.
        output: String,
    },
    /// A program did not finish within its deadline (it was killed).
    #[error("{what} did not finish within {after:?}")]
    Timeout {
        /// The program.
        what: String,
        /// The deadline.
        after: Duration,
    },
    /// A database name other than lowercase letters, digits and `_` (at most 63 bytes).
    #[error("invalid database name {0:?}: use 1 to 63 lowercase letters, digits and _")]
    BadName(String),
}

impl PgUnavailable {
    /// Whether the reason is only that PostgreSQL is not installed (a test may skip then).
    pub fn is_missing(&self) -> bool {
        matches!(self, PgUnavailable::NoBinaries { .. })
    }
}
