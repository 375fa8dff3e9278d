//! Running the server's programs: as the right user, with a deadline, output captured.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::env::BINDIR_ENV;
use crate::error::PgUnavailable;

/// The most output of one program kept for an error message.
const MAX_OUTPUT: usize = 8 * 1024;

/// How often a running program is checked for having exited.
const POLL: Duration = Duration::from_millis(20);

/// Who runs the server's programs. PostgreSQL refuses to run as root, so a root process runs
/// them as an unprivileged system user through `runuser`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RunAs {
    /// This process's own user (not root).
    Me,
    /// `runuser -u NAME --`, with the user's ids to hand the temporary directory over.
    User {
        /// The user name.
        name: String,
        /// Its uid.
        uid: u32,
        /// Its primary gid.
        gid: u32,
    },
}

impl RunAs {
    /// The user to run as: this one, or when root `postgres` (else `nobody`).
    pub fn detect() -> Result<RunAs, PgUnavailable> {
        if effective_uid() != Some(0) {
            return Ok(RunAs::Me);
        }
        let passwd = std::fs::read_to_string("/etc/passwd")
            .map_err(|source| PgUnavailable::Io { what: "read /etc/passwd".into(), source })?;
        ["postgres", "nobody"]
            .iter()
            .find_map(|name| passwd_entry(&passwd, name))
            .map(|(name, uid, gid)| RunAs::User { name, uid, gid })
            .ok_or(PgUnavailable::NoUser)
    }

    /// A command for `program` run as this user, in `cwd` (a directory the user can enter).
    pub fn command(&self, program: &Path, cwd: &Path) -> Command {
        let mut cmd = match self {
            RunAs::Me => Command::new(program),
            RunAs::User { name, .. } => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", name, "--"]).arg(program);
                cmd
            }
        };
        cmd.current_dir(cwd);
        cmd
    }

    /// Makes `dir` this user's (a no-op for [`RunAs::Me`]).
    pub fn hand_over(&self, dir: &Path) -> Result<(), PgUnavailable> {
        if let RunAs::User { uid, gid, .. } = self {
            std::os::unix::fs::chown(dir, Some(*uid), Some(*gid))
                .map_err(|source| PgUnavailable::Io { what: format!("chown {}", dir.display()), source })?;
        }
        Ok(())
    }

    /// The prefix that runs a program as this user, for a shell script.
    pub fn prefix(&self) -> Vec<String> {
        match self {
            RunAs::Me => Vec::new(),
            RunAs::User { name, .. } => vec!["runuser".into(), "-u".into(), name.clone(), "--".into()],
        }
    }
}

/// The effective uid of this process (`/proc/self/status`), `None` where it cannot be read.
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// `(name, uid, gid)` of `name` in the text of `/etc/passwd`.
fn passwd_entry(passwd: &str, name: &str) -> Option<(String, u32, u32)> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        let _password = fields.next()?;
        let uid = fields.next()?.parse().ok()?;
        let gid = fields.next()?.parse().ok()?;
        Some((name.to_owned(), uid, gid))
    })
}

/// Runs `cmd` to completion within `deadline`, killing it past that; `what` names it in errors.
/// Succeeds with its standard output when it exits with status 0.
pub(crate) fn run(mut cmd: Command, what: &str, deadline: Duration) -> Result<String, PgUnavailable> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|source| PgUnavailable::Io { what: format!("run {what}"), source })?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = wait(&mut child, deadline);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    match status {
        Some(status) if status.success() => Ok(stdout),
        Some(status) => Err(PgUnavailable::Failed {
            what: what.to_owned(),
            output: format!("{status}: {}{}", stderr.trim(), stdout.trim()),
        }),
        None => Err(PgUnavailable::Timeout { what: what.to_owned(), after: deadline }),
    }
}

/// Waits at most `deadline` for `child` to exit; kills and reaps it past that (`None`).
fn wait(child: &mut Child, deadline: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + deadline;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(POLL),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Reads a pipe to its end on a thread, keeping at most [`MAX_OUTPUT`] bytes.
fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let Some(mut pipe) = pipe else { return String::new() };
        let mut kept = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = MAX_OUTPUT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// The directory of the server's programs: `$CHATWIRE_PG_BINDIR`, else `pg_config --bindir`,
/// else the newest `/usr/lib/postgresql/*/bin` (Debian's layout), else the directory of a
/// `pg_ctl` on `PATH`. Each candidate must hold `initdb`, `pg_ctl`, `postgres` and `createdb`.
pub(crate) fn find_bindir() -> Result<PathBuf, PgUnavailable> {
    let mut searched = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os(BINDIR_ENV).filter(|v| !v.is_empty()) {
        candidates.push(dir.into());
    }
    let mut pg_config = Command::new("pg_config");
    pg_config.arg("--bindir");
    if let Ok(out) = run(pg_config, "pg_config --bindir", Duration::from_secs(10)) {
        candidates.push(PathBuf::from(out.trim()));
    }
    candidates.extend(debian_bindirs());
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).filter(|d| d.join("pg_ctl").is_file()));
    }
    for dir in candidates {
        if ["initdb", "pg_ctl", "postgres", "createdb"].iter().all(|p| dir.join(p).is_file()) {
            return Ok(dir);
        }
        searched.push(dir.display().to_string());
    }
    searched.push("/usr/lib/postgresql/*/bin".into());
    Err(PgUnavailable::NoBinaries { searched: searched.join(", ") })
}

/// `/usr/lib/postgresql/*/bin`, newest major version first.
fn debian_bindirs() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") else { return Vec::new() };
    let mut versions: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let major = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            Some((major, e.path().join("bin")))
        })
        .collect();
    versions.sort_by_key(|v| std::cmp::Reverse(v.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwd_entries_are_found_by_name() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\npostgres:x:101:104::/var/lib/postgresql:/bin/bash\n";
        assert_eq!(passwd_entry(passwd, "postgres"), Some(("postgres".into(), 101, 104)));
        assert_eq!(passwd_entry(passwd, "nobody"), None);
        assert_eq!(passwd_entry("broken:x:notanumber:1::/:/bin/sh", "broken"), None);
    }

    #[test]
    fn a_program_past_its_deadline_is_killed_and_failures_keep_their_output() {
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let started = Instant::now();
        let e = run(sleep, "sleep", Duration::from_millis(100)).unwrap_err();
        assert!(matches!(e, PgUnavailable::Timeout { .. }), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10));
        let mut fail = Command::new("sh");
        fail.args(["-c", "echo oops >&2; exit 3"]);
        let e = run(fail, "sh", Duration::from_secs(10)).unwrap_err().to_string();
        assert!(e.contains("oops") && e.starts_with("sh failed"), "{e}");
        let mut ok = Command::new("echo");
        ok.arg("hi");
        assert_eq!(run(ok, "echo", Duration::from_secs(10)).unwrap(), "hi\n");
    }
}
