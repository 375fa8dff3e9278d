//! The exclusive lock of a SQLite database file: SQLite serves one process, so a second process
//! (or a second store in the same process) on the same file is refused at start instead of
//! silently splitting the sessions between two servers that each believe they own them.
//!
//! The lock is an advisory `flock` on `<db>.lock` (std's [`File::try_lock`]), held as long as the
//! [`Store`](super::Store) lives and released by the kernel when the process dies, so a restart
//! after `kill -9` finds it free.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::error::StoreError;

/// How long opening waits for a lock held by someone else before refusing: long enough for a
/// server stopped in the same process to finish dropping its store (its writer thread ends by
/// itself), short enough that a second server fails fast.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How often a held lock is tried again while waiting.
const LOCK_POLL: Duration = Duration::from_millis(20);

/// The lock file of the database at `db`: `<db>.lock` beside it.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "db".into());
    name.push(".lock");
    db.with_file_name(name)
}

/// Takes the exclusive lock of the database at `db`, waiting at most `wait` for a holder to let go.
pub(crate) fn lock_database(db: &Path, wait: Duration) -> Result<File, StoreError> {
    let path = lock_path(db);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| StoreError::LockFile { path: path.clone(), source })?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => std::thread::sleep(LOCK_POLL),
            Err(TryLockError::WouldBlock) => return Err(StoreError::InUse { path: db.to_path_buf() }),
            Err(TryLockError::Error(source)) => return Err(StoreError::LockFile { path, source }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_file_sits_beside_the_database() {
        assert_eq!(lock_path(Path::new("/d/x.db")), PathBuf::from("/d/x.db.lock"));
        assert_eq!(lock_path(Path::new("x")), PathBuf::from("x.lock"));
    }

    #[test]
    fn a_held_lock_refuses_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("l.db");
        let held = lock_database(&db, Duration::ZERO).unwrap();
        let refused = lock_database(&db, Duration::from_millis(60)).unwrap_err();
        assert!(matches!(&refused, StoreError::InUse { path } if *path == db), "{refused:?}");
        let message = refused.to_string();
        assert!(message.starts_with("another chatwire-reference process serves this database: "), "{message}");
        assert!(message.contains("--store postgres://"), "{message}");
        // A holder that lets go while the second waits: the second gets it.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        lock_database(&db, Duration::from_secs(10)).unwrap();
        release.join().unwrap();
    }
}
