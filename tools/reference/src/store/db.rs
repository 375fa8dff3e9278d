//! The one interface the store's logic is written against: a database connection that runs a
//! statement with parameters and returns rows, SQLite's or PostgreSQL's.
//!
//! The SQL is the same on both: parameters are written `$1`, `$2`, … and each first appears after
//! the ones numbered below it (PostgreSQL numbers them by their digits; SQLite takes each `$N` as
//! a named parameter and numbers them in the order they first appear, so both agree; debug builds
//! check every statement), upserts are `INSERT … ON CONFLICT … DO UPDATE`, booleans are bound
//! as parameters, and lists are spelled out (`IN ($2, $3)`, multi-row `VALUES`). What differs
//! is here alone: how a statement is prepared and run, how a row is read, and the few words only
//! one of them knows ([`Db::indexed_by`]).
//!
//! Every method is `async`: on PostgreSQL it waits for the server; on SQLite it does the work
//! and is ready at once, so the store's thread runs it without an executor ([`run_ready`]).

use std::future::Future;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::error::StoreError;

/// Rows one multi-row statement carries at most (its parameters stay far below both databases'
/// limits).
pub(crate) const ROWS_PER_STATEMENT: usize = 200;

/// The future of one operation of the store's logic on a [`Db`].
pub(crate) type DbFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A connection the store's logic runs on.
pub(crate) enum Db<'a> {
    /// The SQLite database (on the store's own thread; the mutex is never contended).
    Sqlite(&'a Mutex<rusqlite::Connection>),
    /// A PostgreSQL transaction.
    Postgres(&'a deadpool_postgres::Transaction<'a>),
    /// A PostgreSQL connection outside a transaction (a single statement).
    PostgresClient(&'a deadpool_postgres::Client),
}

/// A statement parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Param<'a> {
    Null,
    Int(i64),
    Text(&'a str),
    Bool(bool),
}

impl From<u64> for Param<'_> {
    fn from(n: u64) -> Self {
        Param::Int(to_db(n))
    }
}

impl From<i64> for Param<'_> {
    fn from(n: i64) -> Self {
        Param::Int(n)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(s: &'a str) -> Self {
        Param::Text(s)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(s: &'a String) -> Self {
        Param::Text(s)
    }
}

impl From<bool> for Param<'_> {
    fn from(b: bool) -> Self {
        Param::Bool(b)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Param::Null, Into::into)
    }
}

/// A seq or count for an integer column.
pub(crate) fn to_db(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An integer column as a seq or count.
pub(crate) fn from_db(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match *self {
            Param::Null => ToSqlOutput::Owned(Value::Null),
            Param::Int(n) => ToSqlOutput::Owned(Value::Integer(n)),
            Param::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Param::Bool(b) => ToSqlOutput::Owned(Value::Integer(i64::from(b))),
        })
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Param::Null => Ok(IsNull::Yes),
            Param::Int(n) => n.to_sql(ty, out),
            Param::Text(s) => s.to_sql(ty, out),
            Param::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// One value of a row.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Null,
    Int(i64),
    Text(String),
}

/// One row of a query's answer.
#[derive(Debug)]
pub(crate) struct Row(Vec<Cell>);

impl Row {
    /// Column `i` as an integer (0 where it is NULL).
    pub fn int(&self, i: usize) -> i64 {
        match self.0.get(i) {
            Some(Cell::Int(n)) => *n,
            _ => 0,
        }
    }

    /// Column `i` as a seq or count.
    pub fn seq(&self, i: usize) -> u64 {
        from_db(self.int(i))
    }

    /// Column `i` as an integer, `None` where it is NULL.
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match self.0.get(i) {
            Some(Cell::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// Column `i` as a boolean (SQLite keeps them as 0 and 1).
    pub fn bool(&self, i: usize) -> bool {
        self.int(i) != 0
    }

    /// Column `i` as text, taken out of the row (empty where it is NULL).
    pub fn text(&mut self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }

    /// Column `i` as text, taken out of the row; `None` where it is NULL.
    pub fn opt_text(&mut self, i: usize) -> Option<String> {
        match self.0.get_mut(i).map(|cell| std::mem::replace(cell, Cell::Null)) {
            Some(Cell::Text(s)) => Some(s),
            _ => None,
        }
    }
}

impl Db<'_> {
    /// Whether this is the shared store of a cluster (PostgreSQL).
    pub fn shared(&self) -> bool {
        !matches!(self, Db::Sqlite(_))
    }

    /// `INDEXED BY index` where SQLite needs the hint to pick the index, else nothing.
    pub fn indexed_by(&self, index: &str) -> String {
        match self {
            Db::Sqlite(_) => format!("INDEXED BY {index}"),
            Db::Postgres(_) | Db::PostgresClient(_) => String::new(),
        }
    }

    /// The column that orders a table's rows as they were inserted, where the table has no
    /// `pos` of its own on SQLite (`pending_responses`).
    pub fn insertion_order(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "rowid",
            Db::Postgres(_) | Db::PostgresClient(_) => "pos",
        }
    }

    /// Runs a statement; returns the rows it changed.
    pub async fn exec(&self, sql: &str, params: &[Param<'_>]) -> Result<u64, StoreError> {
        debug_assert!(numbered_in_order(sql), "parameters out of order: {sql}");
        match self {
            Db::Sqlite(conn) => {
                let conn = conn.lock().map_err(|_| StoreError::Poisoned)?;
                let changed = conn.prepare_cached(sql)?.execute(rusqlite::params_from_iter(params))?;
                Ok(changed as u64)
            }
            Db::Postgres(tx) => {
                let stmt = tx.prepare_cached(sql).await?;
                Ok(tx.execute(&stmt, &pg_params(params)).await?)
            }
            Db::PostgresClient(client) => {
                let stmt = client.prepare_cached(sql).await?;
                Ok(client.execute(&stmt, &pg_params(params)).await?)
            }
        }
    }

    /// Runs a query; returns its rows.
    pub async fn query(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>, StoreError> {
        debug_assert!(numbered_in_order(sql), "parameters out of order: {sql}");
        match self {
            Db::Sqlite(conn) => {
                let conn = conn.lock().map_err(|_| StoreError::Poisoned)?;
                let mut stmt = conn.prepare_cached(sql)?;
                let columns = stmt.column_count();
                let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
                    let mut cells = Vec::with_capacity(columns);
                    for i in 0..columns {
                        cells.push(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Integer(n) => Cell::Int(n),
                            rusqlite::types::ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
                            _ => Cell::Null,
                        });
                    }
                    Ok(Row(cells))
                })?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }
            Db::Postgres(tx) => {
                let stmt = tx.prepare_cached(sql).await?;
                tx.query(&stmt, &pg_params(params)).await?.iter().map(pg_row).collect()
            }
            Db::PostgresClient(client) => {
                let stmt = client.prepare_cached(sql).await?;
                client.query(&stmt, &pg_params(params)).await?.iter().map(pg_row).collect()
            }
        }
    }

    /// Runs a query whose answer is at most one row.
    pub async fn query_opt(&self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, params).await?.into_iter().next())
    }
}

fn pg_params<'p>(params: &'p [Param<'_>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

/// A PostgreSQL row as cells: integers, booleans (as 0 and 1) and text.
fn pg_row(row: &tokio_postgres::Row) -> Result<Row, StoreError> {
    let mut cells = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map_or(Cell::Null, Cell::Int),
            Type::INT4 => row.try_get::<_, Option<i32>>(i)?.map_or(Cell::Null, |n| Cell::Int(i64::from(n))),
            Type::BOOL => row.try_get::<_, Option<bool>>(i)?.map_or(Cell::Null, |b| Cell::Int(i64::from(b))),
            _ => row.try_get::<_, Option<String>>(i)?.map_or(Cell::Null, Cell::Text),
        };
        cells.push(cell);
    }
    Ok(Row(cells))
}

/// Whether every `$N` of `sql` first appears after `$1` … `$N-1` (see the module docs).
fn numbered_in_order(sql: &str) -> bool {
    let mut highest = 0;
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if let Ok(n) = rest[..digits].parse::<usize>() {
            if n > highest + 1 {
                return false;
            }
            highest = highest.max(n);
        }
    }
    true
}

/// `$from, $from+1, …` for `count` parameters: the list of an `IN (…)`.
pub(crate) fn placeholders(from: usize, count: usize) -> String {
    (from..from + count).map(|n| format!("${n}")).collect::<Vec<_>>().join(", ")
}

/// `($f, $f+1, …), (…)`: `rows` rows of `width` parameters from `$from` on, each row starting
/// with the shared parameters `shared` (such as `$1` for the session id) when given.
pub(crate) fn values(shared: &[usize], from: usize, width: usize, rows: usize) -> String {
    let mut sql = String::new();
    let mut next = from;
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push('(');
        let mut cols: Vec<String> = shared.iter().map(|n| format!("${n}")).collect();
        cols.extend((next..next + width).map(|n| format!("${n}")));
        next += width;
        sql.push_str(&cols.join(", "));
        sql.push(')');
    }
    sql
}

/// Runs a future that is ready at once (the store's logic on SQLite, whose every step is
/// synchronous), on the calling thread; `Err` where it was not ready.
pub(crate) fn run_ready<T>(future: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(StoreError::Pending),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_must_first_appear_in_order() {
        assert!(numbered_in_order("SELECT $1, $2, $1, $3"));
        assert!(!numbered_in_order("UPDATE t SET a = $2 WHERE id = $1"));
        assert!(numbered_in_order("SELECT '$' || $1"));
    }

    #[test]
    fn lists_number_their_parameters_in_order() {
        assert_eq!(placeholders(3, 2), "$3, $4");
        assert_eq!(values(&[1], 2, 2, 2), "($1, $2, $3), ($1, $4, $5)");
        assert_eq!(values(&[], 1, 1, 3), "($1), ($2), ($3)");
    }

    #[test]
    fn sqlite_numbers_dollar_parameters_by_first_appearance() {
        let conn = Mutex::new(rusqlite::Connection::open_in_memory().unwrap());
        let db = Db::Sqlite(&conn);
        let rows = run_ready(db.query("SELECT $1, $2, $1 || $2, $3", &["a".into(), "b".into(), true.into()])).unwrap();
        let mut row = rows.into_iter().next().unwrap();
        assert_eq!((row.text(0), row.text(1), row.text(2), row.bool(3)), ("a".into(), "b".into(), "ab".into(), true));
    }
}
