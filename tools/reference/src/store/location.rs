//! Where the database lives: [`DbLocation`], read from `serve --store`/`--db`, shown without a
//! URL's password.

use std::path::{Path, PathBuf};

/// Where the database lives.
#[derive(Clone, PartialEq, Eq)]
pub enum DbLocation {
    /// A private in-memory SQLite database, gone when the server exits.
    Memory,
    /// A SQLite file; created with its parent directory if missing. One process at a time.
    File(PathBuf),
    /// A PostgreSQL database, `postgres://…` or `postgresql://…` (no TLS: loopback or a trusted
    /// network only), which several replicas share.
    Postgres(String),
}

impl DbLocation {
    /// Reads a `--store`/`--db` value: `:memory:`, a `postgres://`/`postgresql://` URL, or a
    /// SQLite file path.
    pub fn parse(text: &str) -> DbLocation {
        if text == ":memory:" {
            DbLocation::Memory
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            DbLocation::Postgres(text.to_owned())
        } else {
            DbLocation::File(PathBuf::from(text))
        }
    }
}

/// Shows the location with a URL's password hidden, so it can be logged.
impl std::fmt::Display for DbLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbLocation::Memory => f.write_str(":memory:"),
            DbLocation::File(path) => write!(f, "{}", path.display()),
            DbLocation::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

/// Like [`Display`](std::fmt::Display): a URL's password is never printed.
impl std::fmt::Debug for DbLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbLocation::Memory => f.write_str("Memory"),
            DbLocation::File(path) => f.debug_tuple("File").field(path).finish(),
            DbLocation::Postgres(_) => f.debug_tuple("Postgres").field(&self.to_string()).finish(),
        }
    }
}

/// `scheme://user:secret@host/…` → `scheme://user:***@host/…`; anything else unchanged.
fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The default database file: `$XDG_DATA_HOME/chatwire/reference.db`, else `~/.local/share/chatwire/reference.db`.
pub fn default_db_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| Path::new(&h).join(".local/share")))?;
    Some(base.join("chatwire").join("reference.db"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_parse_and_never_show_a_password() {
        assert_eq!(DbLocation::parse(":memory:"), DbLocation::Memory);
        assert_eq!(DbLocation::parse("a/b.db"), DbLocation::File("a/b.db".into()));
        for url in ["postgres://u@h/db", "postgresql://u:p@h:5/db?x=1"] {
            assert_eq!(DbLocation::parse(url), DbLocation::Postgres(url.into()));
        }
        let secret = DbLocation::parse("postgresql://user:hunter2@host:5432/db?sslmode=disable");
        assert_eq!(secret.to_string(), "postgresql://user:***@host:5432/db?sslmode=disable");
        assert!(!format!("{secret:?}").contains("hunter2"));
        assert_eq!(DbLocation::parse("postgres://user@host/db").to_string(), "postgres://user@host/db");
        assert_eq!(DbLocation::parse("postgres://host/p@th").to_string(), "postgres://host/p@th");
        assert_eq!(DbLocation::Memory.to_string(), ":memory:");
    }
}
