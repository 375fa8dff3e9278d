//! What the commands share: the exit codes, and the offer and cluster options checked before
//! anything starts. A leaf below `cli/mod.rs` and the commands in files of their own (`load.rs`,
//! `soak.rs`), which name it and not each other.

use crate::backend::{ClusterSpec, StoreUrl};

/// Exit code: every mandatory check passed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a conformance failure or a stale baseline entry.
pub const EXIT_FAIL: u8 = 1;
/// Exit code: usage or harness error.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the implementation could not be reached or started.
pub const EXIT_UNREACHABLE: u8 = 3;

/// The offer and features of `run`, checked as the client rules require: versions the runner
/// knows, and no `features` beside a version below 1.1 (SESSION-014).
pub(super) fn offer(
    versions: Option<Vec<String>>,
    features: Option<Vec<String>>,
) -> Result<(Vec<String>, Option<Vec<String>>), String> {
    let versions = match versions {
        None => crate::driver::default_versions(),
        Some(v) => {
            let v: Vec<String> = v.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect();
            if v.is_empty() {
                return Err("--versions names no version".into());
            }
            for version in &v {
                chatwire_schema::ProtocolVersion::parse(version)
                    .map_err(|e| format!("--versions: {version:?} is not a protocol version: {e}"))?;
            }
            v
        }
    };
    let features = features.map(|f| f.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect());
    if features.is_some() && !crate::scenario::offers_only_1_1_or_later(&versions) {
        return Err(format!(
            "--features cannot be sent while offering a version below 1.1 ({}): a 1.0 server refuses the member, and a client must not send it (SESSION-014); offer only 1.1 or later with --versions",
            versions.join(", ")
        ));
    }
    Ok((versions, features))
}

/// The cluster `--replicas` and `--store` ask for, checked with the commands that will use it
/// before anything starts.
pub(super) fn cluster_spec(
    replicas: u16,
    store: Option<&str>,
    url: Option<&str>,
    commands: &[Option<&String>],
) -> Result<ClusterSpec, String> {
    let store = store.map(StoreUrl::parse).transpose().map_err(|e| e.to_string())?;
    let spec = ClusterSpec { replicas: usize::from(replicas), store };
    spec.check()?;
    if url.is_some() && spec.replicas > 1 {
        return Err(format!(
            "--replicas {} needs backends the runner starts (--exec or the bundled one); --url names one running backend",
            spec.replicas
        ));
    }
    for command in commands.iter().flatten() {
        match (command.contains("{store}"), &spec.store) {
            (true, None) => return Err("--exec uses {store} but no --store names the server".into()),
            (false, Some(_)) => {
                return Err("--store needs {store} in --exec: the runner creates a fresh database per cluster and passes its url there".into())
            }
            _ => {}
        }
    }
    Ok(spec)
}
