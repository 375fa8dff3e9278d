//! The PostgreSQL schema: the SQLite store's tables (sessions, session_agents, log,
//! pending_responses, timers, state_frames) plus what a cluster needs (`changes`, `leases`),
//! brought up to date at start by versioned migrations.
//!
//! Several replicas may start at once on an empty database: the migrations run in one
//! transaction that first takes a transaction-level advisory lock ([`MIGRATION_LOCK`]), so one
//! replica migrates while the others wait (bounded by the statement timeout), then find the
//! versions applied and do nothing.

use deadpool_postgres::GenericClient;

use crate::store::error::StoreError;

/// The advisory lock key the migrations hold (an arbitrary constant: "chatwire" in ASCII).
pub(super) const MIGRATION_LOCK: i64 = 0x0063_6861_7477_6972;

/// Schema migrations, in order; `chatwire_migrations` records which have run.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: everything. `sessions.lease_token` keeps the highest run-lease token ever handed out, so
    // tokens keep growing after a lease is released (deleted) and taken again: a driver holding
    // an old token can never match a new lease. `pos` columns keep insertion order where SQLite
    // uses its rowid.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL,
        next_seq BIGINT NOT NULL,
        cursor TEXT NOT NULL,
        run_active BOOLEAN NOT NULL DEFAULT false,
        lease_token BIGINT NOT NULL DEFAULT 0,
        created_ms BIGINT NOT NULL
    );
    CREATE TABLE session_agents (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        agent TEXT NOT NULL,
        turn_plan TEXT
    );
    CREATE TABLE log (
        pos BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq BIGINT,
        kind TEXT NOT NULL CHECK (kind IN ('event', 'request')),
        type TEXT NOT NULL,
        frame TEXT NOT NULL
    );
    CREATE INDEX log_by_session ON log (session_id, pos);
    CREATE TABLE pending_responses (
        pos BIGINT GENERATED ALWAYS AS IDENTITY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool_call_id TEXT NOT NULL,
        frame TEXT NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    );
    CREATE TABLE timers (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool_call_id TEXT NOT NULL,
        deadline_ms BIGINT NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    );
    CREATE TABLE state_frames (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq BIGINT NOT NULL,
        streams BOOLEAN NOT NULL DEFAULT false,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE changes (
        pos BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        first_seq BIGINT NOT NULL,
        next_seq BIGINT NOT NULL,
        units TEXT,
        cursor TEXT,
        turn_plan TEXT
    );
    CREATE INDEX changes_by_session ON changes (session_id, first_seq, pos);
    CREATE TABLE leases (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        owner TEXT NOT NULL,
        token BIGINT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
    );
    CREATE INDEX leases_by_expiry ON leases (expires_at);",
    // 2: each session's latest state checkpoint, and the log by seq: a load reads the checkpoint
    // and the events after it, not the whole thread (issue #22).
    "CREATE TABLE checkpoints (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq BIGINT NOT NULL,
        state TEXT NOT NULL,
        history TEXT NOT NULL
    );
    CREATE INDEX log_by_seq ON log (session_id, seq);",
    // 3: window checkpoints: a windowed open reads its window's rows, not the whole state (issue #22).
    "CREATE TABLE window_checkpoints (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq BIGINT NOT NULL,
        total BIGINT NOT NULL,
        tail_from BIGINT NOT NULL,
        run TEXT NOT NULL
    );
    CREATE TABLE window_checkpoint_items (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        pos BIGINT NOT NULL,
        held BOOLEAN NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (session_id, pos)
    );",
    // 4: the seqs reserved for frames that change no state, as on SQLite: both hold the same
    // session row, so one commit statement serves both.
    "ALTER TABLE sessions ADD COLUMN seq_reserved BIGINT NOT NULL DEFAULT 0;",
];

/// Applies the migrations not yet applied, under the advisory lock, in one transaction.
pub(super) async fn migrate(client: &mut deadpool_postgres::Client) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS chatwire_migrations (
            version INTEGER PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )",
    )
    .await?;
    let current: i32 = tx.query_one("SELECT COALESCE(MAX(version), 0) FROM chatwire_migrations", &[]).await?.get(0);
    let supported = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
    if current > supported {
        return Err(StoreError::TooNew { found: i64::from(current), supported: i64::from(supported) });
    }
    for (version, sql) in (1..).zip(MIGRATIONS.iter()).skip(usize::try_from(current).unwrap_or(0)) {
        tx.batch_execute(sql).await?;
        tx.execute("INSERT INTO chatwire_migrations (version) VALUES ($1)", &[&version]).await?;
    }
    tx.commit().await?;
    Ok(())
}
