//! The store on SQLite: durability, migrations (a database of an older build opens), atomic
//! commits, group commit, checkpoints, seq reservations. PostgreSQL runs the same operations in
//! `tests/postgres_store.rs`, which compares every answer with SQLite's.

use super::sqlite;
use super::*;

fn row(id: &str) -> NewSessionRow {
    NewSessionRow {
        id: id.into(),
        token_hash: "h".into(),
        agent: "{}".into(),
        cursor: "{}".into(),
        next_seq: 3,
        snapshot_seq: 2,
    }
}

fn event(seq: u64) -> LogRow {
    LogRow { seq: Some(seq), kind: LogKind::Event, frame_type: "x".into(), frame: format!("{{\"seq\":{seq}}}") }
}

#[test]
fn durability_sets_synchronous_and_defaults_to_full() {
    let dir = tempfile::tempdir().unwrap();
    // PRAGMA synchronous: 1 = NORMAL, 2 = FULL.
    for (durability, want) in [(Durability::Full, 2), (Durability::Normal, 1)] {
        let (conn, _lock) = sqlite::open(&DbLocation::File(dir.path().join(format!("{want}.db"))), durability).unwrap();
        let got: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
        assert_eq!(got, want, "{durability:?}");
    }
    assert_eq!(Durability::default(), Durability::Full);
    assert_eq!(Durability::parse("full"), Some(Durability::Full));
    assert_eq!(Durability::parse("normal"), Some(Durability::Normal));
    assert_eq!(Durability::parse("off"), None);
}

#[tokio::test]
async fn migrations_are_idempotent_and_commit_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let loc = DbLocation::File(dir.path().join("sub/db.sqlite"));
    let store = Store::open(&loc, Durability::Full).await.unwrap();
    store.create_session(row("s1")).await.unwrap();
    let commit = || Commit {
        next_seq: 5,
        log: vec![event(3)],
        add_timers: vec![("tc".into(), 42)],
        state_seqs: vec![4],
        ..Commit::default()
    };
    store.commit("s1", commit()).await.unwrap();
    // A commit of an unknown session writes nothing, and says why.
    let unknown = store.commit("nope", commit()).await.unwrap_err();
    assert!(matches!(&unknown, StoreError::UnknownSession(id) if id == "nope"), "{unknown:?}");
    // A commit that fails half way (a second response to one call) leaves nothing behind.
    let twice = Commit { add_pending: vec![("tc".into(), "{}".into()), ("tc".into(), "{}".into())], ..commit() };
    assert!(store.commit("s1", Commit { next_seq: 9, ..twice }).await.is_err());
    drop(store);
    let store = Store::open(&loc, Durability::Full).await.unwrap();
    let s = store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(s.next_seq, 5);
    assert_eq!(s.events, vec!["{\"seq\":3}".to_string()]);
    assert_eq!(s.timers, vec![("tc".to_string(), 42)]);
    assert!(s.pending_responses.is_empty());
    assert_eq!(store.state_frame("s1", 4).await.unwrap(), Some(false));
    assert_eq!(store.sessions_needing_recovery().await.unwrap(), vec!["s1".to_string()]);
    assert!(store.load_session("nope").await.unwrap().is_none());
    assert_eq!(store.count_log("nope", "x").await.unwrap(), 0);
}

#[tokio::test]
async fn a_database_of_migration_3_keeps_its_agents_and_plans() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for (index, sql) in sqlite::MIGRATIONS[..3].iter().enumerate() {
            conn.execute_batch(&format!("BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;", index + 1)).unwrap();
        }
        conn.execute(
            "INSERT INTO sessions (id, token_hash, agent, next_seq, cursor, turn_plan, created_ms)
             VALUES ('s1', 'h', '{\"kind\":\"script\"}', 7, '{}', '{\"steps\":[]}', 0)",
            [],
        )
        .unwrap();
    }
    let store = Store::open(&DbLocation::File(path.clone()), Durability::Full).await.unwrap();
    let s = store.load_session("s1").await.unwrap().unwrap();
    let agent = s.agent.unwrap();
    assert_eq!(
        (agent.agent.as_str(), agent.turn_plan.as_deref(), s.next_seq),
        ("{\"kind\":\"script\"}", Some("{\"steps\":[]}"), 7)
    );
    store.commit("s1", Commit { next_seq: 9, turn_plan: Some("{}".into()), ..Commit::default() }).await.unwrap();
    assert_eq!(store.load_agent("s1").await.unwrap().unwrap().turn_plan.as_deref(), Some("{}"));
    drop(store);
    // The session row no longer holds them: a commit's update of it stays small.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('sessions')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!columns.iter().any(|c| c == "agent" || c == "turn_plan"), "{columns:?}");
}

#[tokio::test]
async fn a_database_of_the_previous_build_opens_and_continues_its_seqs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.sqlite");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        for (index, sql) in sqlite::MIGRATIONS[..6].iter().enumerate() {
            conn.execute_batch(&format!("BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;", index + 1)).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, token_hash, next_seq, cursor, run_active, created_ms)
                 VALUES ('s1', 'h', 12, '{}', 1, 0);
             INSERT INTO session_agents (session_id, agent) VALUES ('s1', '{\"kind\":\"server\"}');
             INSERT INTO log (session_id, seq, kind, type, frame) VALUES ('s1', 3, 'event', 'x', '{}');",
        )
        .unwrap();
    }
    let store = Store::open(&DbLocation::File(path), Durability::Full).await.unwrap();
    let s = store.load_session("s1").await.unwrap().unwrap();
    assert_eq!((s.next_seq, s.events.len()), (12, 1));
    assert_eq!(store.sessions_needing_recovery().await.unwrap(), vec!["s1".to_string()]);
    store.commit("s1", Commit { next_seq: 13, run_active: Some(false), ..Commit::default() }).await.unwrap();
    assert!(store.sessions_needing_recovery().await.unwrap().is_empty());
}

#[tokio::test]
async fn reserved_seqs_outlive_the_commits_after_them_until_released() {
    let store = Store::open(&DbLocation::Memory, Durability::Full).await.unwrap();
    store.create_session(row("s1")).await.unwrap();
    // Errors took seqs 3 and 4 from a reservation up to 100, then a change committed 5 and 6.
    store.reserve_seqs("s1", 100).await.unwrap();
    store.commit("s1", Commit { next_seq: 7, log: vec![event(5)], ..Commit::default() }).await.unwrap();
    assert_eq!(store.load_session("s1").await.unwrap().unwrap().next_seq, 100, "a restart resumes above them");
    assert_eq!(store.session_next_seq("s1").await.unwrap(), Some(100));
    // Leaving memory, the session gives back what it did not use; the next load sees that.
    store.release_seqs_later("s1", 7);
    assert_eq!(store.load_session("s1").await.unwrap().unwrap().next_seq, 7);
    assert!(matches!(store.reserve_seqs("nope", 9).await, Err(StoreError::UnknownSession(_))));
}

#[tokio::test]
async fn a_load_reads_the_latest_checkpoint_and_the_events_from_its_seq() {
    let store = Store::open(&DbLocation::Memory, Durability::Normal).await.unwrap();
    store.create_session(row("s1")).await.unwrap();
    let request = LogRow { seq: None, kind: LogKind::Request, frame_type: "r".into(), frame: "{}".into() };
    let log = vec![event(3), event(4), request, event(6), event(7)];
    store.commit("s1", Commit { next_seq: 9, log, ..Commit::default() }).await.unwrap();
    let checkpoint = |seq: u64| Checkpoint { seq, state: format!("state {seq}"), history: "{}".into(), window: None };
    store.save_checkpoint("s1", checkpoint(6)).await.unwrap();
    // An older one (a slower writer) does not replace it.
    store.save_checkpoint("s1", checkpoint(5)).await.unwrap();
    let loaded = store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(loaded.checkpoint, Some(checkpoint(6)));
    assert_eq!(loaded.events, vec!["{\"seq\":6}".to_string(), "{\"seq\":7}".to_string()]);
    let whole = store.load_session_from_start("s1").await.unwrap().unwrap();
    assert_eq!((whole.checkpoint, whole.events.len()), (None, 4));
    store.save_checkpoint("s1", checkpoint(9)).await.unwrap();
    let loaded = store.load_session("s1").await.unwrap().unwrap();
    assert_eq!((loaded.checkpoint, loaded.events.len()), (Some(checkpoint(9)), 0));
    // A windowed load reads neither the whole state nor the agent.
    let windowed = store.load("s1", LoadFrom::Window { newest: 10 }).await.unwrap().unwrap();
    assert_eq!((windowed.checkpoint, windowed.agent, windowed.window), (None, None, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_commit_alone_or_fail_alone_and_reads_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let loc = DbLocation::File(dir.path().join("w.db"));
    let store = std::sync::Arc::new(Store::open(&loc, Durability::Full).await.unwrap());
    store.create_session(row("s1")).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..64u64 {
        let s = store.clone();
        tasks.push(tokio::spawn(async move {
            // Every 8th write names a session that does not exist.
            let session = if i % 8 == 7 { "nope" } else { "s1" };
            s.commit(session, Commit { next_seq: i, log: vec![event(i)], ..Commit::default() }).await
        }));
    }
    let mut ok = 0;
    for (i, t) in tasks.into_iter().enumerate() {
        let result = t.await.unwrap();
        assert_eq!(result.is_ok(), i % 8 != 7, "write {i}: {result:?}");
        ok += usize::from(result.is_ok());
    }
    let stored = store.load_session("s1").await.unwrap().unwrap();
    assert_eq!(stored.events.len(), ok, "exactly the successful writes are in the log");
    assert_eq!(store.token_hash("s1").await.unwrap().as_deref(), Some("h"));
    assert_eq!(store.token_hash("nope").await.unwrap(), None);
    drop(store);
    let reopened = Store::open(&loc, Durability::Full).await.unwrap();
    assert_eq!(reopened.load_session("s1").await.unwrap().unwrap().events.len(), ok);
}

#[tokio::test]
async fn sqlite_ignores_the_cluster_fields_and_refuses_the_cluster_calls() {
    let mut store = Store::open(&DbLocation::Memory, Durability::Full).await.unwrap();
    assert!(!store.is_shared());
    assert!(store.replica().starts_with('r'), "{}", store.replica());
    store.set_replica("alpha");
    assert_eq!(store.replica(), "alpha");
    assert!(Commit::default().notify, "commits notify by default");
    assert_eq!(Commit::default().lease, LeaseOp::Keep);
    store.create_session(row("s1")).await.unwrap();
    assert_eq!(store.session_next_seq("s1").await.unwrap(), Some(3));
    assert_eq!(store.session_next_seq("nope").await.unwrap(), None);
    // A stale base, a lease nobody holds, no notice: all ignored, the commit lands.
    let commit = Commit {
        next_seq: 7,
        base_seq: Some(1),
        lease: LeaseOp::Hold(99),
        units: Some("[]".into()),
        notify: false,
        ..Commit::default()
    };
    assert_eq!(store.commit("s1", commit).await.unwrap(), None);
    let acquire = Commit { next_seq: 8, lease: LeaseOp::Acquire, ..Commit::default() };
    assert_eq!(store.commit("s1", acquire).await.unwrap(), None, "no lease, no token");
    assert_eq!(store.session_next_seq("s1").await.unwrap(), Some(8));
    assert!(store.notices().is_none());
    assert!(matches!(store.changes_since("s1", 0).await, Err(StoreError::NotShared)));
    assert!(matches!(store.renew_leases(&[("s1".into(), 1)]).await, Err(StoreError::NotShared)));
    assert!(matches!(store.claim_expired_leases(10).await, Err(StoreError::NotShared)));
}
