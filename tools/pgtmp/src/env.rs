//! The environment variables the crate reads: a leaf, so that the errors that name them and the
//! code that reads them need not name each other.

/// Set to `1` to make [`for_test`](crate::for_test) panic instead of skipping where PostgreSQL is missing.
pub const REQUIRE_ENV: &str = "CHATWIRE_REQUIRE_POSTGRES";

/// A directory holding the server's programs (`initdb`, `pg_ctl`, `postgres`, `createdb`),
/// searched first.
pub const BINDIR_ENV: &str = "CHATWIRE_PG_BINDIR";
