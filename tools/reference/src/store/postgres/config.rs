//! How this store connects to PostgreSQL: its deadlines, and the connection options that carry
//! them and the durability.

use std::str::FromStr;
use std::time::Duration;

use crate::store::error::StoreError;
use crate::store::types::Durability;

/// Connections the pool opens at most (per replica).
pub(crate) const POOL_SIZE: usize = 16;
/// How long opening a connection may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an operation waits for a free pooled connection.
pub(crate) const POOL_WAIT: Duration = Duration::from_secs(10);
/// The server-side bound on one statement (lock waits included).
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);
/// The client-side bound on one whole operation (a transaction of several statements).
pub(crate) const OP_DEADLINE: Duration = Duration::from_secs(20);
/// A transaction left idle this long is ended by the server (a replica that froze mid-commit
/// must not keep its session row locked).
const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(30);

/// Parses `url` (`postgres://…` or `postgresql://…`) and adds this store's deadlines and
/// durability to the connection's options.
pub(crate) fn connection_config(url: &str, durability: Durability) -> Result<tokio_postgres::Config, StoreError> {
    let mut config = tokio_postgres::Config::from_str(url).map_err(|e| StoreError::PostgresUrl(e.to_string()))?;
    let ms = |d: Duration| d.as_millis();
    // Durability::Full: a commit is flushed to the server's disk before it returns (survives a
    // crash of the database machine); Normal: it survives this process being killed (the server
    // has it) but the server may lose its last commits if it crashes.
    let sync = match durability {
        Durability::Full => "on",
        Durability::Normal => "off",
    };
    let ours = format!(
        "-c statement_timeout={} -c idle_in_transaction_session_timeout={} -c synchronous_commit={sync}",
        ms(STATEMENT_TIMEOUT),
        ms(IDLE_IN_TRANSACTION_TIMEOUT)
    );
    let options = match config.get_options() {
        Some(theirs) if !theirs.trim().is_empty() => format!("{theirs} {ours}"),
        _ => ours,
    };
    config.options(options).connect_timeout(CONNECT_TIMEOUT).keepalives(true).keepalives_idle(Duration::from_secs(10));
    if config.get_application_name().is_none() {
        config.application_name("chatwire-reference");
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_the_stores_deadlines_and_keep_their_own_options() {
        let c = connection_config("postgres://u:secret@127.0.0.1:5432/db", Durability::Full).unwrap();
        assert_eq!(c.get_dbname(), Some("db"));
        let options = c.get_options().unwrap();
        assert!(options.contains("statement_timeout=10000"), "{options}");
        assert!(options.contains("synchronous_commit=on"), "{options}");
        assert_eq!(c.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(c.get_application_name(), Some("chatwire-reference"));
        let c = connection_config(
            "postgresql://127.0.0.1/db?options=-c%20work_mem%3D8MB&application_name=x",
            Durability::Normal,
        )
        .unwrap();
        let options = c.get_options().unwrap();
        assert!(options.starts_with("-c work_mem=8MB "), "{options}");
        assert!(options.contains("synchronous_commit=off"), "{options}");
        assert_eq!(c.get_application_name(), Some("x"));
        let bad = connection_config("postgres://127.0.0.1:notaport/db", Durability::Full).unwrap_err();
        assert!(matches!(bad, StoreError::PostgresUrl(_)), "{bad:?}");
    }
}
