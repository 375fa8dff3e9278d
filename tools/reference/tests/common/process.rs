//! The real binary as a child process, for tests that need the process itself (restarts, crash
//! points, its resident memory).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The binary under test (only test targets of this package see it).
pub const BIN: &str = env!("CARGO_BIN_EXE_chatwire-reference");

/// The real binary serving `db`; killed on drop.
pub struct Proc {
    pub child: Child,
    pub url: String,
}

impl Proc {
    pub fn spawn(db: &Path, crash_at: Option<&str>) -> Proc {
        Self::spawn_with(db, crash_at, &[])
    }

    pub fn spawn_with(db: &Path, crash_at: Option<&str>, extra: &[&str]) -> Proc {
        let mut cmd = Command::new(BIN);
        cmd.args(["serve", "--addr", "127.0.0.1:0", "--conformance", "--db"])
            .arg(db)
            .args(extra)
            .stdout(Stdio::piped())
            // CHATWIRE_TEST_SERVER_STDERR=1 shows the server's log when debugging a test.
            .stderr(if std::env::var_os("CHATWIRE_TEST_SERVER_STDERR").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        match crash_at {
            Some(point) => cmd.env(chatwire_reference::CRASH_AT_ENV, point),
            None => cmd.env_remove(chatwire_reference::CRASH_AT_ENV),
        };
        let mut child = cmd.spawn().expect("spawn chatwire-reference");
        let stdout = child.stdout.take().unwrap();
        // The URL is the first line; read it on a thread so a hung child cannot block the test forever.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(20)).expect("server printed its url");
        let url = line.trim().to_owned();
        assert!(url.starts_with("ws://127.0.0.1:") && url.ends_with("/ws"), "{url}");
        Proc { child, url }
    }

    /// SIGKILL (std's `Child::kill` on Unix) and reap.
    pub fn sigkill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to die by itself (a crash point), bounded.
    pub fn wait_crash(mut self) {
        for _ in 0..200 {
            if let Ok(Some(status)) = self.child.try_wait() {
                assert!(!status.success(), "a crash point aborts");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not crash at the crash point");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The resident set of process `pid` in bytes (`VmRSS` of /proc/PID/status).
pub fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS in /proc/PID/status");
    let kb: u64 = line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).expect("VmRSS in kB");
    kb * 1024
}
