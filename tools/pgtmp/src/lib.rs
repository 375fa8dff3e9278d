//! # chatwire-pgtmp
//!
//! A throwaway PostgreSQL server for Chatwire's tests: [`TempPostgres::start`] runs `initdb` in a
//! fresh temporary directory, starts the server on a free loopback port (socket in that
//! directory, `fsync` off: nothing here needs to survive a crash of the machine), creates a
//! database for the caller ([`TempPostgres::url`]) and, on drop, stops the server
//! (`pg_ctl stop -m immediate`) and removes the directory.
//!
//! PostgreSQL refuses to run as root: a root process hands the directory to the `postgres`
//! system user (`nobody` where there is none) and runs every program through `runuser`.
//!
//! Tests call [`for_test`]: where no PostgreSQL binaries are installed it prints why and returns
//! `None` (the test skips), unless `CHATWIRE_REQUIRE_POSTGRES=1` (CI sets it) makes that a
//! panic, so CI never skips. A watchdog process stops the server should the test process die
//! without dropping it (`kill -9`, an abort).

#![warn(missing_docs)]

mod cmd;
mod env;
mod error;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use cmd::{find_bindir, run, RunAs};
pub use env::{BINDIR_ENV, REQUIRE_ENV};
pub use error::PgUnavailable;

/// The database superuser of every throwaway server (trust authentication, loopback only).
pub const SUPERUSER: &str = "postgres";

/// The database created for the caller at start.
pub const DATABASE: &str = "chatwire";

/// The most connections the server accepts: several reference replicas with their pools, the
/// tests' own connections, and room to spare.
const MAX_CONNECTIONS: u32 = 300;

/// Deadlines of the server's programs.
const INITDB_DEADLINE: Duration = Duration::from_secs(120);
const START_DEADLINE: Duration = Duration::from_secs(60);
const SHORT_DEADLINE: Duration = Duration::from_secs(30);

/// The watchdog (`sh -c WATCHDOG sh PID DIR STOP-COMMAND…`): waits while process PID lives and
/// DIR holds a data directory, then, if it still does, runs the stop command and removes DIR.
const WATCHDOG: &str = r#"p=$1; d=$2; shift 2
while kill -0 "$p" 2>/dev/null && [ -d "$d/data" ]; do sleep 1; done
if [ -d "$d/data" ]; then "$@" >/dev/null 2>&1; rm -rf "$d"; fi"#;

/// Tries with a new port when the server cannot start (another process took the free port).
const START_TRIES: usize = 3;

/// A running throwaway PostgreSQL server; stopped and deleted on drop.
#[derive(Debug)]
pub struct TempPostgres {
    dir: PathBuf,
    bindir: PathBuf,
    run_as: RunAs,
    port: u16,
    url: String,
    watchdog: Option<Child>,
}

impl TempPostgres {
    /// Creates, starts and readies a server with a database [`DATABASE`] for the caller.
    pub fn start() -> Result<TempPostgres, PgUnavailable> {
        let bindir = find_bindir()?;
        let run_as = RunAs::detect()?;
        let dir = fresh_dir()?;
        // From here on, drop cleans up whatever was made.
        let mut pg = TempPostgres { dir, bindir, run_as, port: 0, url: String::new(), watchdog: None };
        pg.run_as.hand_over(&pg.dir)?;
        let mut initdb = pg.command("initdb");
        initdb.arg("-D").arg(pg.data()).args([
            "--username",
            SUPERUSER,
            "--auth",
            "trust",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync",
        ]);
        run(initdb, "initdb", INITDB_DEADLINE)?;
        let mut last = None;
        for _ in 0..START_TRIES {
            pg.port = free_port()?;
            pg.configure()?;
            let mut start = pg.command("pg_ctl");
            start.arg("-D").arg(pg.data()).arg("-l").arg(pg.dir.join("server.log")).args([
                "-w",
                "-t",
                &START_DEADLINE.as_secs().to_string(),
                "start",
            ]);
            match run(start, "pg_ctl start", START_DEADLINE + Duration::from_secs(10)) {
                Ok(_) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            let log = std::fs::read_to_string(pg.dir.join("server.log")).unwrap_or_default();
            let tail: String =
                log.lines().rev().take(10).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
            return Err(PgUnavailable::Failed { what: "the postgres server".into(), output: format!("{e}\n{tail}") });
        }
        pg.watchdog = pg.spawn_watchdog().ok();
        pg.url = pg.create_database(DATABASE)?;
        Ok(pg)
    }

    /// `postgres://postgres@127.0.0.1:PORT/chatwire`: the caller's database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory (data directory `data/`, the socket, `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The URL of a database on this server with the same user and address, `name` replacing
    /// the database (which need not exist).
    pub fn url_of(&self, name: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates another database and returns its URL.
    pub fn create_database(&self, name: &str) -> Result<String, PgUnavailable> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(PgUnavailable::BadName(name.to_owned()));
        }
        let mut createdb = self.command("createdb");
        createdb.arg("-h").arg(&self.dir).args(["-p", &self.port.to_string(), "-U", SUPERUSER, name]);
        run(createdb, "createdb", SHORT_DEADLINE)?;
        Ok(self.url_of(name))
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn command(&self, program: &str) -> Command {
        self.run_as.command(&self.bindir.join(program), &self.dir)
    }

    /// Appends this server's settings to its `postgresql.conf` (the last setting wins).
    fn configure(&self) -> Result<(), PgUnavailable> {
        use std::io::Write;
        let path = self.data().join("postgresql.conf");
        let settings = format!(
            "\n# chatwire-pgtmp\nlisten_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             max_connections = {MAX_CONNECTIONS}\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n",
            self.port,
            self.dir.display().to_string().replace('\'', "''"),
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(settings.as_bytes()))
            .map_err(|source| PgUnavailable::Io { what: format!("write {}", path.display()), source })
    }

    /// A process outside this one's process group that stops the server and removes the
    /// directory once this process is gone (or does nothing once the directory is).
    fn spawn_watchdog(&self) -> std::io::Result<Child> {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new("sh");
        cmd.args(["-c", WATCHDOG, "sh", &std::process::id().to_string()])
            .arg(&self.dir)
            .args(self.run_as.prefix())
            .arg(self.bindir.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["stop", "-m", "immediate"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        cmd.spawn()
    }
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let mut stop = self.command("pg_ctl");
            stop.arg("-D").arg(self.data()).args(["-w", "-t", "20", "stop", "-m", "immediate"]);
            if let Err(e) = run(stop, "pg_ctl stop", SHORT_DEADLINE) {
                eprintln!("chatwire-pgtmp: {e}");
            }
        }
        match std::fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                eprintln!("chatwire-pgtmp: cannot remove {}: {e}", self.dir.display())
            }
            _ => {}
        }
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
    }
}

/// A throwaway server for the test `name`, or `None` with the reason printed where PostgreSQL
/// is not installed.
///
/// # Panics
///
/// When PostgreSQL is installed but the server cannot start (a real failure), and when it is
/// missing while `CHATWIRE_REQUIRE_POSTGRES=1`.
pub fn for_test(name: &str) -> Option<TempPostgres> {
    match TempPostgres::start() {
        Ok(pg) => Some(pg),
        Err(e) if e.is_missing() && !required() => {
            eprintln!("skipping {name}: {e}");
            None
        }
        Err(e) if e.is_missing() => panic!("{name}: {REQUIRE_ENV}=1 and {e}"),
        Err(e) => panic!("{name}: cannot start a throwaway postgresql server: {e}"),
    }
}

/// Whether [`REQUIRE_ENV`] is set to `1`.
pub fn required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| v.trim() == "1")
}

/// A new empty directory under the system's temporary directory.
fn fresh_dir() -> Result<PathBuf, PgUnavailable> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("chatwire-pg-{}-{nanos}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                    .map_err(|source| PgUnavailable::Io { what: format!("chmod {}", dir.display()), source })?;
                return Ok(dir);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(PgUnavailable::Io { what: format!("create {}", dir.display()), source }),
        }
    }
    Err(PgUnavailable::Io {
        what: "create a temporary directory".into(),
        source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
    })
}

/// A TCP port free on 127.0.0.1 right now.
fn free_port() -> Result<u16, PgUnavailable> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|source| PgUnavailable::Io { what: "find a free port".into(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_starts_serves_a_second_database_and_is_gone_after_drop() {
        let Some(pg) = for_test("pgtmp::start") else { return };
        assert_eq!(pg.url(), format!("postgres://postgres@127.0.0.1:{}/chatwire", pg.port()));
        std::net::TcpStream::connect(("127.0.0.1", pg.port())).expect("the server listens on loopback");
        let other = pg.create_database("second_db").unwrap();
        assert!(other.ends_with("/second_db"), "{other}");
        // The database exists: creating it again fails, and says why.
        let again = pg.create_database("second_db").unwrap_err().to_string();
        assert!(again.contains("already exists"), "{again}");
        assert!(matches!(pg.create_database("Bad-Name"), Err(PgUnavailable::BadName(_))));
        let (dir, port) = (pg.dir().to_path_buf(), pg.port());
        drop(pg);
        assert!(!dir.exists(), "the directory is removed");
        assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "the server is stopped");
    }

    #[test]
    fn missing_binaries_are_a_skip_only_where_not_required() {
        let missing = PgUnavailable::NoBinaries { searched: "/nowhere".into() };
        assert!(missing.is_missing());
        assert!(missing.to_string().starts_with("no postgresql server binaries found (searched /nowhere)"));
        assert!(!PgUnavailable::NoUser.is_missing());
    }

    #[test]
    fn the_watchdog_cleans_up_after_a_process_that_died_without_dropping() {
        let Some(pg) = for_test("pgtmp::watchdog") else { return };
        // Pretend this process died: a watchdog watching a pid that has exited.
        let mut gone = Command::new("true").spawn().unwrap();
        let dead_pid = gone.id();
        gone.wait().unwrap();
        let status = Command::new("sh")
            .args(["-c", WATCHDOG, "sh", &dead_pid.to_string()])
            .arg(pg.dir())
            .args(pg.run_as.prefix())
            .arg(pg.bindir.join("pg_ctl"))
            .arg("-D")
            .arg(pg.data())
            .args(["stop", "-m", "immediate"])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(!pg.dir().exists(), "the watchdog removed the directory");
        assert!(std::net::TcpStream::connect(("127.0.0.1", pg.port())).is_err(), "and stopped the server");
        drop(pg); // nothing left to do, and no panic
    }
}
