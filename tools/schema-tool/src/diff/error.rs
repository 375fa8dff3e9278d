//! Why a diff could not run.

use std::path::PathBuf;

use chatwire_schema::ProtocolVersion;

/// Why a diff could not run (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A file or directory could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// What was being read.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A schema file is not JSON.
    #[error("{origin} is not JSON: {reason}")]
    NotJson {
        /// File path or `REF:path`.
        origin: String,
        /// The parser's message.
        reason: String,
    },
    /// A schema set holds no `*.json` file.
    #[error("no schema files in {0}")]
    NoSchemas(String),
    /// A protocol version that is not `MAJOR.MINOR`.
    #[error("bad protocol version in {origin}: {reason}")]
    BadVersion {
        /// Where the version came from.
        origin: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The new major version is lower than the old one.
    #[error("the protocol version goes backwards: {old} -> {new}")]
    VersionBackwards {
        /// Baseline version.
        old: ProtocolVersion,
        /// Candidate version.
        new: ProtocolVersion,
    },
    /// A git revision the gate refuses to pass to git.
    #[error("not a plain git revision: {0:?}")]
    BadRef(String),
    /// git failed.
    #[error("`{command}` failed: {reason}")]
    Git {
        /// The git command line.
        command: String,
        /// git's message.
        reason: String,
    },
    /// Arguments that do not form one of the two invocations.
    #[error("{0}")]
    Usage(String),
}
