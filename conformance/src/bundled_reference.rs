//! The reference backend built into the runner, behind the cargo feature `bundled-reference` (on by
//! default): `run`, `soak`, `cluster-load` and `requirements --measure` test it when no backend is
//! named, the runner spawning itself with the hidden `__reference` subcommand. Built without it
//! (the runner's Python wheel), the runner depends on no implementation: a command that names no
//! backend is a usage error.

#[cfg(feature = "bundled-reference")]
use std::ffi::OsString;
#[cfg(feature = "bundled-reference")]
use std::process::ExitCode;

use crate::backend::Target;

/// Whether this runner carries the bundled reference backend.
pub const AVAILABLE: bool = cfg!(feature = "bundled-reference");

/// What a command that names no backend is told when the runner carries none.
pub const MISSING: &str = "no backend to test: name one with --url or --exec (this runner was built without the \
     bundled reference backend, cargo feature `bundled-reference`)";

/// The bundled reference backend with the planted fault `fault`, where the runner carries it.
pub fn target(fault: Option<String>) -> Result<Target, String> {
    if AVAILABLE {
        Ok(Target::Bundled { fault })
    } else {
        Err(MISSING.to_owned())
    }
}

/// `--reference-fault`: a fault the bundled reference backend knows. Refused here, as a usage
/// error, rather than by the backend at its start (which would be a backend error, exit 3, and
/// would point to `--list-faults`, a flag of `chatwire-reference`, not of this binary).
#[cfg(feature = "bundled-reference")]
pub fn parse_fault(name: &str) -> Result<String, String> {
    use std::str::FromStr as _;
    match chatwire_reference::fault::Fault::from_str(name) {
        Ok(fault) => Ok(fault.name().to_owned()),
        Err(_) => {
            let names: Vec<&str> = chatwire_reference::fault::Fault::ALL.iter().map(|f| f.name()).collect();
            Err(format!("unknown fault {name:?}; the bundled reference backend's faults are: {}", names.join(", ")))
        }
    }
}

/// `--reference-fault` on a runner without the bundled reference backend: refused.
#[cfg(not(feature = "bundled-reference"))]
pub fn parse_fault(_name: &str) -> Result<String, String> {
    Err(MISSING.to_owned())
}

/// Runs the bundled reference backend's command line (`args` without the program name).
#[cfg(feature = "bundled-reference")]
pub fn run(args: Vec<OsString>) -> ExitCode {
    exit_with_parent();
    let mut full = vec![OsString::from("chatwire-reference")];
    full.extend(args);
    chatwire_reference::run_cli(full)
}

/// How often the bundled backend looks whether the runner that started it is still there.
#[cfg(all(feature = "bundled-reference", unix))]
const PARENT_WATCH: std::time::Duration = std::time::Duration::from_millis(500);

/// Only the runner spawns `__reference`, in a process group of its own (so that it can kill and
/// restart it): a runner killed by a signal cannot stop it, and it would serve nobody and hold a
/// core for the rest of the machine's life. So the backend exits once its parent is gone (it is
/// then re-parented, and `getppid` changes).
#[cfg(all(feature = "bundled-reference", unix))]
fn exit_with_parent() {
    // SAFETY: getppid has no preconditions and cannot fail.
    let parent = unsafe { libc::getppid() };
    let watch = std::thread::Builder::new().name("parent-watch".into()).spawn(move || loop {
        std::thread::sleep(PARENT_WATCH);
        // SAFETY: as above.
        if unsafe { libc::getppid() } != parent {
            std::process::exit(1);
        }
    });
    // Without the watch the backend still serves; it only outlives a killed runner.
    drop(watch);
}

#[cfg(all(feature = "bundled-reference", not(unix)))]
fn exit_with_parent() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_backend_is_the_default_target_only_where_it_is_built_in() {
        match target(None) {
            Ok(t) => assert!(AVAILABLE && t == Target::Bundled { fault: None }),
            Err(e) => assert!(!AVAILABLE && e.contains("--url or --exec") && e.contains("bundled-reference"), "{e}"),
        }
        if !AVAILABLE {
            assert_eq!(parse_fault("no_welcome"), Err(MISSING.to_owned()));
        }
    }
}
