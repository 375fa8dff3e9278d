//! The PostgreSQL store on a throwaway server (chatwire-pgtmp; skipped with a printed reason
//! only where PostgreSQL is not installed, never in CI): every operation agrees with SQLite on the
//! same commits, optimistic commits, run leases with fencing and expiry, notices, migrations.
//! The reference served on PostgreSQL end to end is in `postgres_serve.rs`.

use std::time::{Duration, Instant};

use chatwire_pgtmp::{for_test, TempPostgres};
use chatwire_reference::store::{
    CatchUpLog, Checkpoint, Commit, LeaseOp, LoadFrom, LogKind, LogRow, NewSessionRow, Notice, Store, StoredChange,
    WindowCheckpoint,
};
use chatwire_reference::{DbLocation, Durability, StoreError};
use tokio::sync::broadcast;

/// A generous deadline for anything that should happen soon.
const SOON: Duration = Duration::from_secs(10);

async fn open(url: &str, replica: &str) -> Store {
    let mut store = Store::open(&DbLocation::Postgres(url.to_owned()), Durability::Full).await.expect("open");
    store.set_replica(replica);
    store
}

fn row(id: &str) -> NewSessionRow {
    NewSessionRow {
        id: id.into(),
        token_hash: format!("hash-{id}"),
        agent: "{\"kind\":\"script\"}".into(),
        cursor: "{\"turn\":0}".into(),
        next_seq: 3,
        snapshot_seq: 2,
    }
}

fn event(seq: u64, frame_type: &str) -> LogRow {
    LogRow { seq: Some(seq), kind: LogKind::Event, frame_type: frame_type.into(), frame: format!("{{\"seq\":{seq}}}") }
}

/// A sequence of commits touching every column, as the server makes them.
fn commits() -> Vec<(&'static str, Commit)> {
    vec![
        (
            "s1",
            Commit {
                next_seq: 5,
                log: vec![event(3, "chat.run_started"), event(4, "ui_state_updated")],
                cursor: Some("{\"turn\":1}".into()),
                turn_plan: Some("{\"steps\":[1]}".into()),
                run_active: Some(true),
                add_timers: vec![("tc1".into(), 1000), ("tc2".into(), 2000)],
                state_seqs: vec![4],
                streamed_state_seqs: vec![4],
                ..Commit::default()
            },
        ),
        (
            "s1",
            Commit {
                next_seq: 5,
                log: vec![LogRow {
                    seq: None,
                    kind: LogKind::Request,
                    frame_type: "chat.tool_call_response".into(),
                    frame: "{\"r\":1}".into(),
                }],
                add_pending: vec![("tc1".into(), "{\"answer\":1}".into()), ("tc0".into(), "{\"answer\":0}".into())],
                ..Commit::default()
            },
        ),
        (
            "s2",
            Commit {
                next_seq: 4,
                log: vec![event(3, "chat.assistant_message")],
                state_seqs: vec![3],
                ..Commit::default()
            },
        ),
        (
            "s1",
            Commit {
                next_seq: 8,
                log: vec![
                    event(5, "chat.tool_call_complete"),
                    event(6, "ui_state_patch"),
                    event(7, "chat.run_complete"),
                ],
                run_active: Some(false),
                remove_timers: vec!["tc1".into()],
                add_timers: vec![("tc2".into(), 2500)],
                remove_pending: vec!["tc1".into()],
                state_seqs: vec![6, 7],
                ..Commit::default()
            },
        ),
        ("s2", Commit { next_seq: 6, clear_timers: true, ..Commit::default() }),
    ]
}

/// Everything a store answers about `ids`, to compare two stores.
async fn observe(store: &Store, ids: &[&str]) -> String {
    let mut out = String::new();
    for id in ids {
        out += &format!("{:?}\n", store.load_session(id).await.unwrap());
        out += &format!("{:?}\n", store.token_hash(id).await.unwrap());
        out += &format!("{:?}\n", store.session_next_seq(id).await.unwrap());
        out += &format!("{:?}\n", store.load_agent(id).await.unwrap());
        for seq in 0..9 {
            out += &format!("{seq}: {:?}\n", store.state_frame(id, seq).await.unwrap());
            for retention in [0, 1, 100] {
                out += &format!("{seq}/{retention}: {:?}\n", store.catch_up_log(id, seq, retention).await.unwrap());
            }
        }
        for t in ["chat.run_started", "chat.tool_call_response", "ui_state_patch", "nope"] {
            out += &format!("{t}: {}\n", store.count_log(id, t).await.unwrap());
        }
    }
    let mut recovering = store.sessions_needing_recovery().await.unwrap();
    recovering.sort();
    out + &format!("{recovering:?}\n")
}

async fn recv_notice(rx: &mut broadcast::Receiver<Notice>) -> Notice {
    tokio::time::timeout(SOON, rx.recv()).await.expect("a notice in time").expect("notice channel open")
}

#[tokio::test]
async fn every_operation_round_trips_and_agrees_with_sqlite() {
    let Some(pg) = for_test("every_operation_round_trips_and_agrees_with_sqlite") else { return };
    let postgres = open(pg.url(), "a").await;
    assert!(postgres.is_shared());
    assert_eq!(postgres.replica(), "a");
    let sqlite = Store::open(&DbLocation::Memory, Durability::Full).await.unwrap();
    for store in [&postgres, &sqlite] {
        store.create_session(row("s1")).await.unwrap();
        store.create_session(row("s2")).await.unwrap();
        // A session id twice: refused by both.
        assert!(store.create_session(row("s1")).await.is_err());
        for (id, commit) in commits() {
            store.commit(id, commit).await.unwrap();
        }
        // A failing commit (a response recorded twice) leaves nothing behind on either.
        let twice = Commit {
            next_seq: 99,
            log: vec![event(98, "x")],
            add_pending: vec![("tc0".into(), "{}".into())],
            ..Commit::default()
        };
        assert!(store.commit("s1", twice).await.is_err());
        // Seqs reserved for refusals count in the next seq a load resumes at, on both.
        store.reserve_seqs("s2", 50).await.unwrap();
    }
    let ids = ["s1", "s2", "unknown"];
    let (on_pg, on_sqlite) = (observe(&postgres, &ids).await, observe(&sqlite, &ids).await);
    assert_eq!(on_pg, on_sqlite);
    let s1 = postgres.load_session("s1").await.unwrap().unwrap();
    assert_eq!(s1.next_seq, 8);
    assert_eq!(s1.events.len(), 5);
    assert_eq!(s1.pending_responses, vec![("tc0".to_string(), "{\"answer\":0}".to_string())]);
    assert_eq!(s1.timers, vec![("tc2".to_string(), 2500)]);
    assert_eq!(s1.agent.and_then(|a| a.turn_plan).as_deref(), Some("{\"steps\":[1]}"));
    assert!(matches!(
        postgres.catch_up_log("s1", 6, 100).await.unwrap(),
        CatchUpLog::Events { ref before, ref after, streamed: false } if before.len() == 4 && after.len() == 1
    ));
    // Every commit is a change to replay, in order, except one that took no seq and carries
    // nothing to replay (here: a response recorded for execution).
    let changes = postgres.changes_since("s1", 0).await.unwrap();
    let spans: Vec<(u64, u64)> = changes.iter().map(|c| (c.first_seq, c.next_seq)).collect();
    assert_eq!(spans, vec![(3, 5), (5, 8)]);
    assert_eq!(changes[0].cursor.as_deref(), Some("{\"turn\":1}"));
    assert_eq!(changes[0].turn_plan.as_deref(), Some("{\"steps\":[1]}"));
    assert_eq!(postgres.changes_since("s1", 6).await.unwrap(), Vec::<StoredChange>::new());
    assert_eq!(postgres.changes_since("s1", 5).await.unwrap().len(), 1);
    // Checkpoints: the latest stays, and a load reads the events from its seq on; as SQLite does.
    for store in [&postgres, &sqlite] {
        for seq in [6, 4] {
            // Ten items: rows for the tail from 6 on and for the held ones below it.
            let rows = [(1, true), (6, false), (7, false), (8, true), (9, false)];
            let window = WindowCheckpoint {
                total: 10,
                tail_from: 6,
                run: format!("run {seq}"),
                items: rows.iter().map(|(pos, held)| (*pos, *held, format!("item {pos} at {seq}"))).collect(),
            };
            let checkpoint =
                Checkpoint { seq, state: format!("state {seq}"), history: "{}".into(), window: Some(window) };
            store.save_checkpoint("s1", checkpoint).await.unwrap();
        }
    }
    // A windowed load reads the held rows and the newest ones asked for (no further back than
    // the tail), of the latest window checkpoint, and the events after it; as SQLite does.
    for (newest, start, positions) in [(2, 8, vec![1, 8, 9]), (100, 6, vec![1, 6, 7, 8, 9])] {
        let mut loaded = Vec::new();
        for store in [&postgres, &sqlite] {
            let s1 = store.load("s1", LoadFrom::Window { newest }).await.unwrap().unwrap();
            assert!(s1.checkpoint.is_none(), "no whole state is read");
            let window = s1.window.clone().expect("the window checkpoint");
            assert_eq!((window.seq, window.total, window.start, window.run.as_str()), (6, 10, start, "run 6"));
            let read: Vec<u64> = window.items.iter().map(|(pos, _)| *pos).collect();
            assert_eq!(read, positions, "newest {newest}");
            assert!(window.items.iter().all(|(pos, item)| *item == format!("item {pos} at 6")));
            loaded.push((window, s1.events));
        }
        assert_eq!(loaded[0], loaded[1], "newest {newest}: PostgreSQL and SQLite agree");
    }
    assert_eq!(observe(&postgres, &ids).await, observe(&sqlite, &ids).await);
    let s1 = postgres.load_session("s1").await.unwrap().unwrap();
    assert_eq!(s1.checkpoint.map(|c| c.seq), Some(6));
    assert!((1..5).contains(&s1.events.len()), "{:?}", s1.events);
    let whole = postgres.load_session_from_start("s1").await.unwrap().unwrap();
    assert_eq!((whole.checkpoint, whole.events.len()), (None, 5));
    // A commit of an unknown session is refused with its name.
    let unknown = postgres.commit("ghost", Commit { next_seq: 1, ..Commit::default() }).await.unwrap_err();
    assert!(matches!(&unknown, StoreError::UnknownSession(id) if id == "ghost"), "{unknown:?}");
}

#[tokio::test]
async fn a_stale_base_seq_is_a_conflict_that_writes_and_tells_nothing() {
    let Some(pg) = for_test("a_stale_base_seq_is_a_conflict_that_writes_and_tells_nothing") else { return };
    let (a, b) = (open(pg.url(), "a").await, open(pg.url(), "b").await);
    let mut notices = b.notices().expect("a shared store has notices");
    a.create_session(row("s")).await.unwrap();
    let first = Commit { next_seq: 4, base_seq: Some(3), log: vec![event(3, "x")], ..Commit::default() };
    a.commit("s", first).await.unwrap();
    assert_eq!(recv_notice(&mut notices).await, Notice::Committed { session_id: "s".into(), next_seq: 4 });
    let before = a.load_session("s").await.unwrap();
    // b staged from 3 too: refused, whoever commits.
    let stale = Commit {
        next_seq: 4,
        base_seq: Some(3),
        log: vec![event(3, "y")],
        cursor: Some("{}".into()),
        add_timers: vec![("t".into(), 1)],
        units: Some("[1]".into()),
        ..Commit::default()
    };
    let e = b.commit("s", stale).await.unwrap_err();
    assert!(matches!(e, StoreError::Conflict { expected: 3, found: 4 }), "{e:?}");
    assert!(e.to_string().starts_with("the session moved on"), "{e}");
    assert_eq!(a.load_session("s").await.unwrap(), before);
    assert_eq!(a.changes_since("s", 0).await.unwrap().len(), 1);
    // `None` skips the check (a planted fault); the right base goes through.
    let units = Some("[{\"op\":\"say\"}]".to_string());
    b.commit("s", Commit { next_seq: 5, base_seq: Some(4), units: units.clone(), ..Commit::default() }).await.unwrap();
    b.commit("s", Commit { next_seq: 6, base_seq: None, ..Commit::default() }).await.unwrap();
    assert_eq!(recv_notice(&mut notices).await, Notice::Committed { session_id: "s".into(), next_seq: 5 });
    assert_eq!(recv_notice(&mut notices).await, Notice::Committed { session_id: "s".into(), next_seq: 6 });
    let changes = a.changes_since("s", 4).await.unwrap();
    assert_eq!(changes[0], StoredChange { first_seq: 4, next_seq: 5, units, cursor: None, turn_plan: None });
    assert_eq!(a.session_next_seq("s").await.unwrap(), Some(6));
}

fn step(next_seq: u64, lease: LeaseOp) -> Commit {
    Commit { next_seq, lease, ..Commit::default() }
}

#[tokio::test]
async fn leases_are_acquired_held_released_and_fenced() {
    let Some(pg) = for_test("leases_are_acquired_held_released_and_fenced") else { return };
    let (a, b) = (open(pg.url(), "a").await, open(pg.url(), "b").await);
    a.create_session(row("s")).await.unwrap();
    assert_eq!(a.commit("s", step(4, LeaseOp::Acquire)).await.unwrap(), Some(1));
    assert!(matches!(b.commit("s", step(5, LeaseOp::Acquire)).await, Err(StoreError::LeaseHeld)));
    assert_eq!(a.commit("s", step(5, LeaseOp::Hold(1))).await.unwrap(), None);
    assert!(matches!(a.commit("s", step(6, LeaseOp::Hold(2))).await, Err(StoreError::Fenced)), "wrong token");
    assert!(matches!(b.commit("s", step(6, LeaseOp::Hold(1))).await, Err(StoreError::Fenced)), "not the owner");
    assert!(matches!(b.commit("s", step(6, LeaseOp::Release(Some(1)))).await, Err(StoreError::Fenced)));
    assert_eq!(a.renew_leases(&[("s".into(), 1), ("other".into(), 1)]).await.unwrap(), vec!["other".to_string()]);
    assert_eq!(b.renew_leases(&[("s".into(), 1)]).await.unwrap(), vec!["s".to_string()]);
    assert_eq!(a.renew_leases(&[]).await.unwrap(), Vec::<String>::new());
    // The refused commits wrote nothing.
    assert_eq!(a.session_next_seq("s").await.unwrap(), Some(5));
    assert_eq!(a.changes_since("s", 0).await.unwrap().len(), 2);
    // Keep: no lease check at all.
    b.commit("s", step(6, LeaseOp::Keep)).await.unwrap();
    a.commit("s", step(7, LeaseOp::Release(Some(1)))).await.unwrap();
    // Released: anyone may take it, and the token keeps growing.
    assert_eq!(b.commit("s", step(8, LeaseOp::Acquire)).await.unwrap(), Some(2));
    assert!(matches!(a.commit("s", step(9, LeaseOp::Hold(1))).await, Err(StoreError::Fenced)));
    // Release(None) ends whoever's lease; the next acquire still gets a new token.
    a.commit("s", step(9, LeaseOp::Release(None))).await.unwrap();
    assert_eq!(a.commit("s", step(10, LeaseOp::Acquire)).await.unwrap(), Some(3));
    // The owner taking its own live lease again gets a new token, fencing its older driver.
    assert_eq!(a.commit("s", step(11, LeaseOp::Acquire)).await.unwrap(), Some(4));
    assert!(matches!(a.commit("s", step(12, LeaseOp::Hold(3))).await, Err(StoreError::Fenced)));
    assert_eq!(a.session_next_seq("s").await.unwrap(), Some(11));
    // Nothing expired: nothing to claim.
    assert_eq!(b.claim_expired_leases(10).await.unwrap(), Vec::new());
}

#[tokio::test]
async fn an_expired_lease_is_claimed_once_and_its_old_holder_is_fenced() {
    let Some(pg) = for_test("an_expired_lease_is_claimed_once_and_its_old_holder_is_fenced") else { return };
    let mut a = open(pg.url(), "a").await;
    a.set_lease_ttl(Duration::from_millis(150));
    let (b, c) = (open(pg.url(), "b").await, open(pg.url(), "c").await);
    for id in ["s1", "s2", "s3"] {
        a.create_session(row(id)).await.unwrap();
        a.commit(id, Commit { next_seq: 4, lease: LeaseOp::Acquire, ..Commit::default() }).await.unwrap();
    }
    // Two reapers race for the expired leases: each lease is claimed exactly once, with the next token.
    let deadline = Instant::now() + SOON;
    let mut claimed = Vec::new();
    while claimed.len() < 3 {
        assert!(Instant::now() < deadline, "the leases expire (claimed so far: {claimed:?})");
        let (by_b, by_c) = tokio::join!(b.claim_expired_leases(2), c.claim_expired_leases(2));
        claimed.extend(by_b.unwrap().into_iter().map(|(id, token)| (id, token, "b")));
        claimed.extend(by_c.unwrap().into_iter().map(|(id, token)| (id, token, "c")));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    claimed.sort();
    assert_eq!(
        claimed.iter().map(|(id, token, _)| (id.as_str(), *token)).collect::<Vec<_>>(),
        [("s1", 2), ("s2", 2), ("s3", 2)]
    );
    // The old holder can neither commit, renew nor release.
    assert!(matches!(
        a.commit("s1", Commit { next_seq: 5, lease: LeaseOp::Hold(1), ..Commit::default() }).await,
        Err(StoreError::Fenced)
    ));
    assert!(matches!(
        a.commit("s1", Commit { next_seq: 5, lease: LeaseOp::Release(Some(1)), ..Commit::default() }).await,
        Err(StoreError::Fenced)
    ));
    assert_eq!(a.renew_leases(&[("s1".into(), 1)]).await.unwrap(), vec!["s1".to_string()]);
    assert_eq!(a.session_next_seq("s1").await.unwrap(), Some(4));
    // The new holder can; its lease (the default TTL) is not claimed again.
    let (id, token, owner) = &claimed[0];
    let holder = if *owner == "b" { &b } else { &c };
    holder.commit(id, Commit { next_seq: 5, lease: LeaseOp::Hold(*token), ..Commit::default() }).await.unwrap();
    assert!(holder.renew_leases(&[(id.clone(), *token)]).await.unwrap().is_empty());
    assert_eq!(b.claim_expired_leases(10).await.unwrap(), Vec::new());
    assert_eq!(c.claim_expired_leases(0).await.unwrap(), Vec::new());
}

#[tokio::test]
async fn an_expired_but_unclaimed_lease_fences_its_holder_and_can_be_acquired() {
    let Some(pg) = for_test("an_expired_but_unclaimed_lease_fences_its_holder_and_can_be_acquired") else { return };
    let mut a = open(pg.url(), "a").await;
    a.set_lease_ttl(Duration::from_millis(100));
    let b = open(pg.url(), "b").await;
    a.create_session(row("s")).await.unwrap();
    assert_eq!(
        a.commit("s", Commit { next_seq: 4, lease: LeaseOp::Acquire, ..Commit::default() }).await.unwrap(),
        Some(1)
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(matches!(
        a.commit("s", Commit { next_seq: 5, lease: LeaseOp::Hold(1), ..Commit::default() }).await,
        Err(StoreError::Fenced)
    ));
    assert_eq!(
        b.commit("s", Commit { next_seq: 5, lease: LeaseOp::Acquire, ..Commit::default() }).await.unwrap(),
        Some(2)
    );
}

#[tokio::test]
async fn notices_come_for_commits_that_notify_and_lost_after_the_connection_drops() {
    let Some(pg) = for_test("notices_come_for_commits_that_notify_and_lost_after_the_connection_drops") else { return };
    let (a, b) = (open(pg.url(), "a").await, open(pg.url(), "b").await);
    let mut on_b = b.notices().unwrap();
    let mut on_a = a.notices().unwrap();
    a.create_session(row("s:with:colons")).await.unwrap();
    a.commit("s:with:colons", Commit { next_seq: 4, notify: false, ..Commit::default() }).await.unwrap();
    a.commit("s:with:colons", Commit { next_seq: 5, ..Commit::default() }).await.unwrap();
    // The unnotified commit is not announced; the next one is, to every replica (the committer too).
    let five = Notice::Committed { session_id: "s:with:colons".into(), next_seq: 5 };
    assert_eq!(recv_notice(&mut on_b).await, five);
    assert_eq!(recv_notice(&mut on_a).await, five);
    // A refused commit is not announced either.
    let refused = b.commit("s:with:colons", Commit { next_seq: 6, base_seq: Some(3), ..Commit::default() }).await;
    assert!(matches!(refused, Err(StoreError::Conflict { expected: 3, found: 5 })));
    // The server drops b's notification connection: b reconnects and says Lost, then notices flow again.
    let (client, connection) = tokio_postgres::connect(pg.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let killed = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'chatwire-reference-listen'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(killed.len(), 2, "a and b each listen on one connection");
    assert_eq!(recv_notice(&mut on_b).await, Notice::Lost);
    assert_eq!(recv_notice(&mut on_a).await, Notice::Lost);
    a.commit("s:with:colons", Commit { next_seq: 7, ..Commit::default() }).await.unwrap();
    assert_eq!(recv_notice(&mut on_b).await, Notice::Committed { session_id: "s:with:colons".into(), next_seq: 7 });
}

#[tokio::test]
async fn migrations_are_idempotent_and_replicas_may_start_at_once() {
    let Some(pg) = for_test("migrations_are_idempotent_and_replicas_may_start_at_once") else { return };
    let url = pg.url().to_owned();
    let opens: Vec<_> = (0..4)
        .map(|i| {
            let url = url.clone();
            tokio::spawn(async move { open(&url, &format!("r{i}")).await })
        })
        .collect();
    let mut stores = Vec::new();
    for o in opens {
        stores.push(o.await.unwrap());
    }
    stores[0].create_session(row("s")).await.unwrap();
    drop(stores);
    let again = open(&url, "again").await;
    assert!(again.load_session("s").await.unwrap().is_some(), "reopening keeps the data");
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let versions: Vec<i32> =
        client.query("SELECT version FROM chatwire_migrations", &[]).await.unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(versions, vec![1, 2, 3, 4]);
    // A database migrated by a newer program is refused, not misread.
    client.execute("INSERT INTO chatwire_migrations (version) VALUES (99)", &[]).await.unwrap();
    let e = Store::open(&DbLocation::Postgres(url.clone()), Durability::Full).await.unwrap_err();
    assert!(matches!(e, StoreError::TooNew { found: 99, supported: 4 }), "{e:?}");
}

#[tokio::test]
async fn bad_urls_and_absent_servers_fail_in_time_with_a_typed_error() {
    let e = Store::open(&DbLocation::Postgres("postgres://127.0.0.1:notaport/x".into()), Durability::Full)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::PostgresUrl(_)), "{e:?}");
    // Nothing listens on this port (bound, then closed): refused quickly, not hung.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = Instant::now();
    let e = Store::open(&DbLocation::Postgres(format!("postgres://postgres@127.0.0.1:{port}/x")), Durability::Full)
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Pool(_) | StoreError::Postgres(_)), "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    // A server without that database: a clear error from the server.
    let Some(pg) = for_test("bad_urls_and_absent_servers_fail_in_time_with_a_typed_error") else { return };
    let e = Store::open(&DbLocation::Postgres(pg.url_of("missing")), Durability::Full).await.unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    let _: &TempPostgres = &pg;
}
