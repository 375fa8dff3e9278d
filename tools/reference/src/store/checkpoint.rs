//! State checkpoints (issue #22): a session's state and turn history as they stood before a
//! given seq, kept beside its log so that loading the session after a restart reads the latest
//! checkpoint and folds only the events after it, not the whole thread; and the same state by
//! item position, so that a windowed open reads its window (`WindowCheckpoint`).
//!
//! A checkpoint is a cache of the log's fold and nothing else: the log stays the truth, a
//! checkpoint that cannot be read is ignored (the whole log is folded instead), and a newer one
//! replaces an older one only.

use super::db::{values, Db, Param, ROWS_PER_STATEMENT};
use super::error::StoreError;
use super::types::{Checkpoint, StoredWindow, WindowCheckpoint};

/// Stores `c` as the session's latest checkpoint unless one of a later seq is already there.
pub(crate) async fn save_checkpoint(db: &Db<'_>, id: &str, c: &Checkpoint) -> Result<(), StoreError> {
    db.exec(
        "INSERT INTO checkpoints (session_id, seq, state, history) VALUES ($1, $2, $3, $4)
         ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, history = excluded.history
         WHERE excluded.seq > checkpoints.seq",
        &[id.into(), c.seq.into(), (&c.state).into(), (&c.history).into()],
    )
    .await?;
    if let Some(w) = &c.window {
        save_window(db, id, c.seq, w).await?;
    }
    Ok(())
}

/// Stores `w` as the session's window checkpoint at `seq` unless one of a later seq is there:
/// the upsert says whether it wrote, and only then are the rows replaced.
async fn save_window(db: &Db<'_>, id: &str, seq: u64, w: &WindowCheckpoint) -> Result<(), StoreError> {
    let written = db
        .exec(
            "INSERT INTO window_checkpoints (session_id, seq, total, tail_from, run) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, total = excluded.total,
             tail_from = excluded.tail_from, run = excluded.run
             WHERE excluded.seq > window_checkpoints.seq",
            &[id.into(), seq.into(), w.total.into(), w.tail_from.into(), (&w.run).into()],
        )
        .await?;
    if written == 0 {
        return Ok(());
    }
    db.exec("DELETE FROM window_checkpoint_items WHERE session_id = $1", &[id.into()]).await?;
    for items in w.items.chunks(ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO window_checkpoint_items (session_id, pos, held, item) VALUES {}",
            values(&[1], 2, 3, items.len())
        );
        let mut params: Vec<Param<'_>> = vec![id.into()];
        for (pos, held, item) in items {
            params.extend([Param::from(*pos), (*held).into(), item.into()]);
        }
        db.exec(&sql, &params).await?;
    }
    Ok(())
}

/// The session's window checkpoint, reading the rows of its `newest` newest items (no further back
/// than its tail) and the older ones every window holds; `None` when it has none.
pub(crate) async fn read_window(db: &Db<'_>, id: &str, newest: u64) -> Result<Option<StoredWindow>, StoreError> {
    let head = db
        .query_opt("SELECT seq, total, tail_from, run FROM window_checkpoints WHERE session_id = $1", &[id.into()])
        .await?;
    let Some(mut head) = head else { return Ok(None) };
    let (seq, total, tail_from) = (head.seq(0), head.seq(1), head.seq(2));
    let start = total.saturating_sub(newest).max(tail_from);
    let items = db
        .query(
            "SELECT pos, item FROM window_checkpoint_items
             WHERE session_id = $1 AND (held = $2 OR pos >= $3) ORDER BY pos",
            &[id.into(), true.into(), start.into()],
        )
        .await?
        .into_iter()
        .map(|mut r| (r.seq(0), r.text(1)))
        .collect();
    Ok(Some(StoredWindow { seq, total, start, run: head.text(3), items }))
}

/// The session's latest checkpoint, if it has one.
pub(crate) async fn read_checkpoint(db: &Db<'_>, id: &str) -> Result<Option<Checkpoint>, StoreError> {
    let row = db.query_opt("SELECT seq, state, history FROM checkpoints WHERE session_id = $1", &[id.into()]).await?;
    Ok(row.map(|mut r| Checkpoint { seq: r.seq(0), state: r.text(1), history: r.text(2), window: None }))
}

/// The session's events of seq `from` on, in log order (`from` 0: every event). From a
/// checkpoint on they are found by the seq index: the rows before it are not read.
pub(crate) async fn events_from(db: &Db<'_>, id: &str, from: u64) -> Result<Vec<String>, StoreError> {
    let rows = match from {
        0 => {
            db.query("SELECT frame FROM log WHERE session_id = $1 AND kind = 'event' ORDER BY pos", &[id.into()])
                .await?
        }
        _ => {
            let sql = format!(
                "SELECT frame FROM log {} WHERE session_id = $1 AND seq >= $2 AND kind = 'event' ORDER BY pos",
                db.indexed_by("log_by_seq")
            );
            db.query(&sql, &[id.into(), from.into()]).await?
        }
    };
    Ok(rows.into_iter().map(|mut r| r.text(0)).collect())
}
