//! The shared store of a cluster (`run --store postgres://…`): the runner creates a fresh database
//! on that server for every cluster it starts (`CREATE DATABASE`, a unique name) and drops it when
//! the cluster ends, so runs and the scenarios with a cluster of their own never see each other's
//! sessions. Databases still listed when the run ends (a scenario task abandoned at its deadline)
//! are dropped then ([`StoreServer::drop_leftovers`]).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

/// How long creating or dropping a database may take.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(15);

/// Why the store server could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Not a PostgreSQL URL.
    #[error("--store takes a postgres:// or postgresql:// url, not {0:?}")]
    NotPostgres(String),
    /// A PostgreSQL URL the client cannot read.
    #[error("--store {url}: {message}")]
    BadUrl {
        /// The URL, its password hidden.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The server refused or failed a statement (or the connection).
    #[error("{what} on {url}: {message}")]
    Postgres {
        /// What was attempted.
        what: String,
        /// The server, its password hidden.
        url: String,
        /// The client's or server's message.
        message: String,
    },
    /// No answer before the deadline.
    #[error("{what} on {url}: no answer within {ms} ms")]
    Timeout {
        /// What was attempted.
        what: String,
        /// The server, its password hidden.
        url: String,
        /// How long the runner waited.
        ms: u64,
    },
}

/// A `postgres://` or `postgresql://` URL, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreUrl {
    url: String,
    /// `scheme://authority` (no trailing slash).
    base: String,
    /// The query string, with its `?`, or empty.
    query: String,
}

impl StoreUrl {
    /// Checks `text`: a PostgreSQL URL (the form the `--exec` backend and the bundled reference get
    /// back, with the database replaced) that the client can read.
    pub fn parse(text: &str) -> Result<StoreUrl, StoreError> {
        let text = text.trim();
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(StoreError::NotPostgres(redact(text)));
        };
        if !scheme.eq_ignore_ascii_case("postgres") && !scheme.eq_ignore_ascii_case("postgresql") {
            return Err(StoreError::NotPostgres(redact(text)));
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if tail.contains('#') {
            return Err(StoreError::BadUrl { url: redact(text), message: "a fragment (#) is not allowed".into() });
        }
        let query = tail.find('?').map_or(String::new(), |q| tail[q..].to_owned());
        text.parse::<tokio_postgres::Config>()
            .map_err(|e| StoreError::BadUrl { url: redact(text), message: error_text(&e) })?;
        Ok(StoreUrl { url: text.to_owned(), base: format!("{scheme}://{authority}"), query })
    }

    /// The URL as given.
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The same server and options with the database `name`.
    pub fn with_database(&self, name: &str) -> String {
        format!("{}/{name}{}", self.base, self.query)
    }

    /// The URL with its password hidden, for reports.
    pub fn redacted(&self) -> String {
        redact(&self.url)
    }

    /// The server without a database, its password hidden: `postgres://user@host:5432`.
    pub fn server(&self) -> String {
        redact(&self.base)
    }
}

/// `text` with the password of its user info and any `password=` option replaced by `***`.
pub fn redact(text: &str) -> String {
    let mut out = text.to_owned();
    if let Some(start) = out.find("://").map(|i| i + 3) {
        let end = out[start..].find(['/', '?', '#']).map_or(out.len(), |e| start + e);
        if let Some(at) = out[start..end].rfind('@').map(|a| start + a) {
            if let Some(colon) = out[start..at].find(':').map(|c| start + c) {
                out.replace_range(colon + 1..at, "***");
            }
        }
    }
    if let Some(q) = out.find('?') {
        let (head, query) = out.split_at(q + 1);
        let parts: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_owned(),
            })
            .collect();
        out = format!("{head}{}", parts.join("&"));
    }
    out
}

/// A client error with its causes, in one line.
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = s.source();
    }
    text
}

/// The `--store` server of a run: creates and drops the clusters' databases, and remembers those
/// not dropped yet. Cheap to clone (shared state).
#[derive(Clone, Debug)]
pub struct StoreServer {
    url: StoreUrl,
    live: Arc<Mutex<BTreeSet<String>>>,
}

impl StoreServer {
    /// The server `url` names; nothing is contacted yet.
    pub fn new(url: StoreUrl) -> StoreServer {
        StoreServer { url, live: Arc::new(Mutex::new(BTreeSet::new())) }
    }

    /// Its URL.
    pub fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// Creates a fresh database (a unique name derived from `label`) and returns its URL.
    pub async fn create(&self, label: &str) -> Result<ScratchDb, StoreError> {
        let name = unique_name(label);
        self.execute("create database", &format!("CREATE DATABASE \"{name}\""), Instant::now() + ADMIN_TIMEOUT).await?;
        if let Ok(mut live) = self.live.lock() {
            live.insert(name.clone());
        }
        Ok(ScratchDb { url: self.url.with_database(&name), name, server: self.clone(), dropped: false })
    }

    /// Drops the database `name` (connections to it are ended first).
    pub async fn drop_database(&self, name: &str, deadline: Instant) -> Result<(), StoreError> {
        let forced = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        let result = match self.execute("drop database", &forced, deadline).await {
            // Before PostgreSQL 13 there is no FORCE; the replicas are dead by now anyway.
            Err(StoreError::Postgres { message, .. }) if message.contains("syntax error") => {
                self.execute("drop database", &format!("DROP DATABASE IF EXISTS \"{name}\""), deadline).await
            }
            other => other,
        };
        if result.is_ok() {
            if let Ok(mut live) = self.live.lock() {
                live.remove(name);
            }
        }
        result
    }

    /// The databases created and not dropped yet.
    pub fn live(&self) -> Vec<String> {
        self.live.lock().map(|l| l.iter().cloned().collect()).unwrap_or_default()
    }

    /// Drops every database still listed (each within `ADMIN_TIMEOUT`); returns the errors.
    pub async fn drop_leftovers(&self) -> Vec<StoreError> {
        let mut errors = Vec::new();
        for name in self.live() {
            if let Err(e) = self.drop_database(&name, Instant::now() + ADMIN_TIMEOUT).await {
                errors.push(e);
            }
        }
        errors
    }

    /// Runs `sql` on a connection of its own to the server's URL, by `deadline`.
    async fn execute(&self, what: &str, sql: &str, deadline: Instant) -> Result<(), StoreError> {
        let url = self.url.redacted();
        let failed = |e: tokio_postgres::Error| StoreError::Postgres {
            what: what.to_owned(),
            url: url.clone(),
            message: match e.as_db_error() {
                Some(db) => format!("{}: {}", db.severity().to_lowercase(), db.message()),
                None => error_text(&e),
            },
        };
        let work = async {
            let (client, connection) =
                tokio_postgres::connect(self.url.as_str(), tokio_postgres::NoTls).await.map_err(&failed)?;
            let driver = tokio::spawn(connection);
            let result = client.batch_execute(sql).await.map_err(&failed);
            drop(client);
            let _ = driver.await;
            result
        };
        let started = Instant::now();
        tokio::time::timeout_at(deadline, work).await.unwrap_or_else(|_| {
            Err(StoreError::Timeout {
                what: what.to_owned(),
                url: url.clone(),
                ms: started.elapsed().as_millis() as u64,
            })
        })
    }
}

/// A database name no other run or cluster uses: `chatwire_conformance_<label>_<pid>_<n>_<time>`
/// (the label cut to fit),
/// lowercase letters, digits and `_`, at most 63 bytes (PostgreSQL's limit).
fn unique_name(label: &str) -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let label: String =
        label.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).take(20).collect();
    let name = format!("chatwire_conformance_{label}_{}_{n}_{nanos:x}", std::process::id());
    // Cut in the label, never in the unique tail.
    let over = name.len().saturating_sub(63);
    let label = &label[..label.len().saturating_sub(over)];
    format!("chatwire_conformance_{label}_{}_{n}_{nanos:x}", std::process::id())
}

/// A database the runner created for one cluster; [`ScratchDb::drop_now`] removes it (a drop
/// without it leaves it to [`StoreServer::drop_leftovers`], or to a task spawned on the runtime).
#[derive(Debug)]
pub struct ScratchDb {
    name: String,
    url: String,
    server: StoreServer,
    dropped: bool,
}

impl ScratchDb {
    /// Its URL (the `--store` URL with this database).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its URL with the password hidden.
    pub fn shown(&self) -> String {
        redact(&self.url)
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops the database now, within [`ADMIN_TIMEOUT`].
    pub async fn drop_now(&mut self) -> Result<(), StoreError> {
        if self.dropped {
            return Ok(());
        }
        self.dropped = true;
        self.server.drop_database(&self.name, Instant::now() + ADMIN_TIMEOUT).await
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        // Best effort on the runtime, if there still is one; the run's final sweep catches the rest.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let (server, name) = (self.server.clone(), self.name.clone());
            handle.spawn(async move {
                let _ = server.drop_database(&name, Instant::now() + ADMIN_TIMEOUT).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_rewritten_and_redacted() {
        let url = StoreUrl::parse("postgres://cw:secret@127.0.0.1:5433/postgres?sslmode=disable").unwrap();
        assert_eq!(url.with_database("x_1"), "postgres://cw:secret@127.0.0.1:5433/x_1?sslmode=disable");
        assert_eq!(url.redacted(), "postgres://cw:***@127.0.0.1:5433/postgres?sslmode=disable");
        assert_eq!(url.server(), "postgres://cw:***@127.0.0.1:5433");
        let bare = StoreUrl::parse("postgresql://localhost").unwrap();
        assert_eq!(bare.with_database("d"), "postgresql://localhost/d");
        let socket = StoreUrl::parse("postgres://me@%2Ftmp%2Fpg/db?password=p&port=5").unwrap();
        assert_eq!(socket.with_database("d"), "postgres://me@%2Ftmp%2Fpg/d?password=p&port=5");
        assert_eq!(socket.redacted(), "postgres://me@%2Ftmp%2Fpg/db?password=***&port=5");
        for bad in ["sqlite:///tmp/x.db", "/tmp/x.db", "host=localhost", "mysql://h/db"] {
            assert!(matches!(StoreUrl::parse(bad), Err(StoreError::NotPostgres(_))), "{bad}");
        }
        assert!(matches!(StoreUrl::parse("postgres://h/db#frag"), Err(StoreError::BadUrl { .. })));
        let e = StoreUrl::parse("postgres://u:pw@h:notaport/db").unwrap_err();
        assert!(!e.to_string().contains("pw@"), "{e}");
    }

    #[test]
    fn database_names_are_unique_and_valid_identifiers() {
        let a = unique_name("Restart-Resume@reload with a very long label indeed");
        let b = unique_name("Restart-Resume@reload with a very long label indeed");
        assert_ne!(a, b);
        for name in [a, b] {
            assert!(name.len() <= 63, "{name}");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'), "{name}");
        }
    }
}
