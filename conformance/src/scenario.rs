//! Scenarios as data: the types of a scenario file (one scenario per JSON file under
//! `fixtures/scenarios/`), the meta-schema generated from them (`schema/json/scenario.json`) and the
//! checks a file must pass before it runs.

use std::collections::HashSet;
use std::fmt;

use chatwire_schema::script::AgentScript;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One conformance scenario: a script for the agent and the steps the runner drives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Path of the meta-schema, for editors; ignored by the runner.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Stable id, equal to the file name without `.json`; baselines and reports name it.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]{0,63}$"))]
    pub id: String,
    /// One line saying what behaviour is checked.
    pub title: String,
    /// Longer explanation: why the behaviour matters, which field failure it guards against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How binding the behaviour is: failures of a `should` or `may` scenario are warnings.
    #[serde(with = "crate::level::lowercase")]
    #[schemars(with = "crate::level::Lowercase")]
    pub level: Level,
    /// The spec requirement ids this scenario covers (e.g. `TOOL-012`).
    #[schemars(length(min = 1))]
    pub requirements: Vec<RequirementId>,
    /// Capabilities the server must offer in its welcome; without them the scenario is not applicable.
    /// A scenario with a `script` needs `conformance_script` implicitly.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
    /// Features (since 1.1, `spec/session.md#features`) that must be in force on the scenario's
    /// first connection; without them (a server or an offer that negotiates 1.0, or a server that
    /// does not implement them) the scenario is not applicable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// The scripted agent sent in `session.hello.script` by `connect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<AgentScript>,
    /// Whether the scenario runs against the backend in conformance mode (default true). A scenario
    /// with `false` checks what a backend does outside conformance mode (SCRIPT-001, SCRIPT-003): it
    /// gets its own instance of the bundled backend started without `--conformance`, or the one named
    /// by `--plain-url` / `--plain-exec`, and is not applicable without one. It has no `script`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub conformance_mode: bool,
    /// Whether the scenario runs alone (default false): no other scenario runs while it does, and a
    /// spawned backend gives it an instance of its own. For a scenario whose load (tens of megabytes
    /// of frames) could otherwise slow an innocent scenario sharing the backend or the runner into a
    /// timeout charged to a requirement it does not break.
    #[serde(default, skip_serializing_if = "is_false")]
    pub isolated: bool,
    /// The window every hello of the scenario asks for (since 1.2, `spec/window.md`), unless a
    /// step names its own; such hellos offer only the runner's versions from 1.2 on, and the
    /// scenario needs `state_window` in its `features`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub window: Option<u32>,
    /// The fewest replicas the scenario needs (1 to 8, default 1): a run with fewer (`run
    /// --replicas N`, 1 without it) reports the scenario not applicable. Steps name replicas
    /// 0-based below this number. Whatever the run's count, connections whose step names no
    /// `replica` are spread round-robin over the replicas in the order they are opened, and a
    /// connection that reconnects (a `resume` under a name used before) goes to the replica after
    /// the one it was on; replicas the scenario killed or paused are passed over. With one replica
    /// every connection goes to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 8))]
    pub replicas: Option<u32>,
    /// What the runner does, in order. The scenario stops at the first step that fails.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
}

pub use crate::level::Level;
use crate::step::{is_false, is_true, yes};
pub use crate::step::{
    ConnName, RequirementId, ResumeAnswer, ResumeCursor, Step, WsViolation, DEFAULT_CONN, SWEEP_WATCH,
};

/// Why a scenario file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// Not JSON.
    #[error("{file}: not valid JSON: {message}")]
    NotJson {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// Breaks the meta-schema (`schema/json/scenario.json`).
    #[error("{file}: breaks the scenario schema: {}", .violations.join("; "))]
    Schema {
        /// The file.
        file: String,
        /// `path: message` per violation.
        violations: Vec<String>,
    },
    /// Well-formed, but inconsistent.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Two files declare the same id.
    #[error("scenario id {0} is declared twice")]
    DuplicateId(String),
}

/// Validates scenario files against the meta-schema; build once.
pub struct ScenarioLoader {
    meta: jsonschema::Validator,
}

impl fmt::Debug for ScenarioLoader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ScenarioLoader")
    }
}

impl ScenarioLoader {
    /// Compiles the meta-schema generated from [`Scenario`].
    pub fn new() -> Self {
        let schema = schemars::schema_for!(Scenario).to_value();
        let meta = jsonschema::draft202012::new(&schema)
            .unwrap_or_else(|e| panic!("the generated scenario schema does not compile: {e}"));
        ScenarioLoader { meta }
    }

    /// Parses and checks one scenario file. `file` is its name (`<id>.json`).
    pub fn parse(&self, file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ScenarioError::NotJson { file: file.to_owned(), message: e.to_string() })?;
        let violations: Vec<String> = self
            .meta
            .iter_errors(&value)
            .map(|e| {
                let path = e.instance_path().to_string();
                format!("{}: {e}", if path.is_empty() { "/" } else { &path })
            })
            .collect();
        if !violations.is_empty() {
            return Err(ScenarioError::Schema { file: file.to_owned(), violations });
        }
        let scenario: Scenario = serde_json::from_value(value)
            .map_err(|e| ScenarioError::Schema { file: file.to_owned(), violations: vec![e.to_string()] })?;
        scenario.check_consistency().map_err(|message| ScenarioError::Invalid { file: file.to_owned(), message })?;
        let stem = file.strip_suffix(".json").unwrap_or(file);
        if stem != scenario.id {
            return Err(ScenarioError::Invalid {
                file: file.to_owned(),
                message: format!("id {:?} differs from the file name", scenario.id),
            });
        }
        Ok(scenario)
    }

    /// Parses many files; ids must be unique. Sorted by id.
    pub fn parse_all<'a>(
        &self,
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Vec<Scenario>, Vec<ScenarioError>> {
        let mut scenarios = Vec::new();
        let mut errors = Vec::new();
        let mut ids = HashSet::new();
        for (file, text) in files {
            match self.parse(file, text) {
                Ok(s) if !ids.insert(s.id.clone()) => errors.push(ScenarioError::DuplicateId(s.id)),
                Ok(s) => scenarios.push(s),
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            scenarios.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(scenarios)
        } else {
            Err(errors)
        }
    }
}

impl Default for ScenarioLoader {
    fn default() -> Self {
        Self::new()
    }
}

impl Scenario {
    /// Every capability the scenario needs, the implicit `conformance_script` included.
    pub fn needed_capabilities(&self) -> Vec<String> {
        let mut caps = self.capabilities.clone();
        if self.script.is_some() && !caps.iter().any(|c| c == "conformance_script") {
            caps.push("conformance_script".to_owned());
        }
        caps
    }

    /// The oldest version a server must negotiate for the scenario to apply: the newest of what
    /// its script's members need ([`AgentScript::since`](chatwire_schema::script::AgentScript::since)),
    /// what its features need ([`features_since`](Self::features_since); any feature needs 1.1),
    /// 1.2 where it sends `chat.cancel`, pages or asks for a window, 1.1 where it sends
    /// `chat.retry`, and the oldest version a connection of it offers at the least. Where the
    /// offer negotiates an older version the scenario is not applicable (the runner asks on a
    /// connection of its own first).
    pub fn needs_version(&self) -> chatwire_schema::ProtocolVersion {
        let v = |minor| chatwire_schema::ProtocolVersion { major: 1, minor };
        let script = self.script.as_ref().map(|s| s.since());
        let windowed = self.window.is_some() || self.steps.iter().any(|s| {
            matches!(s, Step::Cancel { .. } | Step::PageThrough { .. })
                || matches!(s, Step::Connect { window: Some(n), .. } | Step::Resume { window: Some(n), .. } if *n > 0)
        });
        let features = self.features_since().map(|since| since.max(v(1))).or((!self.features.is_empty()).then(|| v(1)));
        let retry = self.steps.iter().any(|s| matches!(s, Step::Retry { .. }));
        // A connection that offers only later versions needs a server that speaks one of them.
        let offered = self.steps.iter().filter_map(|s| match s {
            Step::Connect { versions: Some(versions), .. } => {
                versions.iter().filter_map(|v| chatwire_schema::ProtocolVersion::parse(v).ok()).min()
            }
            _ => None,
        });
        [script, windowed.then(|| v(2)), features, retry.then(|| v(1))]
            .into_iter()
            .flatten()
            .chain(offered)
            .max()
            .unwrap_or(v(0))
    }

    /// The newest minor among those that define the scenario's features, if it names any.
    pub fn features_since(&self) -> Option<chatwire_schema::ProtocolVersion> {
        use chatwire_schema::session::welcome::Capability;
        self.features.iter().filter_map(|f| Capability::from_wire(f).feature_since()).max()
    }

    /// Whether the scenario restarts the backend (needs a runner-started backend).
    pub fn restarts(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Restart { .. }))
    }

    /// Whether the scenario restarts, kills, starts, pauses or continues the backend or one of its
    /// replicas: it needs processes the runner started, of its own.
    pub fn controls_processes(&self) -> bool {
        self.steps.iter().any(Step::controls_processes)
    }

    /// The fewest replicas the scenario needs (`replicas`, default 1).
    pub fn min_replicas(&self) -> usize {
        self.replicas.map_or(1, |n| n as usize)
    }

    /// Whether a step resumes with the runner's default cursor: the steps a reload variant
    /// (`<id>@reload`) turns into reloads, so the snapshot path is proven where the default run
    /// resumes by catch-up. A resume that names its cursor, `last_seq`, answer or a comparison
    /// tests one path on purpose and is left alone.
    pub fn resumes_by_default(&self) -> bool {
        self.steps.iter().any(Step::is_default_resume)
    }

    /// Names of the snapshots the scenario takes, in step order.
    pub fn snapshot_names(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Snapshot { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// What the schema cannot say: the script runs, connections are opened before use, snapshot
    /// names are unique.
    fn check_consistency(&self) -> Result<(), String> {
        if let Some(script) = &self.script {
            script.validate().map_err(|e| format!("script: {e}"))?;
            if !self.conformance_mode {
                return Err("a scenario outside conformance mode has no script to give".into());
            }
        }
        let mut open: HashSet<String> = HashSet::new();
        let mut snapshots = HashSet::new();
        let mut replicas = ReplicaStates::new(self.min_replicas());
        for (index, step) in self.steps.iter().enumerate() {
            let at = format!("step {} ({})", index + 1, step.kind());
            replicas.check(step, &mut open).map_err(|e| format!("{at}: {e}"))?;
            match step {
                Step::Connect { .. } | Step::Resume { .. } => {
                    open.insert(step.conn().unwrap_or(DEFAULT_CONN).to_owned());
                }
                Step::Restart { graceful: true, down_ms: Some(_) } => {
                    return Err(format!("{at}: down_ms is for a kill restart, not a graceful one"));
                }
                Step::Restart { .. } => open.clear(),
                // What a step on a replica does to the connections is `ReplicaStates::check`'s.
                Step::KillReplica { .. }
                | Step::StartReplica { .. }
                | Step::PauseReplica { .. }
                | Step::ContinueReplica { .. } => {}
                Step::Disconnect { .. } | Step::Drain { .. } => {
                    let name = step.conn().unwrap_or(DEFAULT_CONN);
                    if !open.remove(name) {
                        return Err(format!("{at}: connection {name:?} is not open"));
                    }
                }
                Step::Snapshot { name, .. } => {
                    if !snapshots.insert(name.as_str()) {
                        return Err(format!("{at}: snapshot name {name:?} is used twice"));
                    }
                }
                Step::Sleep { .. } => {}
                Step::AttachToBound { prefix, .. } => {
                    // At least one is attached (the bound is at least 8, two or more connections
                    // are open): the first may be named by later steps.
                    open.insert(format!("{prefix}-1"));
                }
                _ => {
                    let name = step.conn().unwrap_or(DEFAULT_CONN);
                    if !open.contains(name) {
                        return Err(format!("{at}: connection {name:?} is not open"));
                    }
                }
            }
            if let Step::Connect { versions: Some(versions), .. } = step {
                if versions.is_empty() {
                    return Err(format!("{at}: versions must not be empty"));
                }
            }
            if let Step::Connect { versions, features: Some(_), .. } = step {
                // SESSION-014: the runner keeps the client's rule itself.
                match versions {
                    None => return Err(format!("{at}: features need versions (all 1.1 or later, SESSION-014)")),
                    Some(v) if !offers_only_1_1_or_later(v) => {
                        return Err(format!(
                            "{at}: features are not sent with a version below 1.1 offered (SESSION-014): {}",
                            v.join(", ")
                        ))
                    }
                    Some(_) => {}
                }
            }
            if let Step::Resume { last_seq: Some(_), cursor: Some(_), .. } = step {
                return Err(format!("{at}: last_seq and cursor exclude each other"));
            }
            if let Step::Ping { payload, .. } = step {
                // The schema counts characters; the wire limit is in bytes.
                if payload.len() > 125 {
                    return Err(format!("{at}: a ping payload holds at most 125 bytes, this one {}", payload.len()));
                }
            }
        }
        Ok(())
    }
}

/// What a scenario's steps do to its replicas, followed at load time: a step may name only
/// replicas below the scenario's `replicas`, start only a killed one, pause only a running one,
/// continue only a paused one. After a kill, the connections it may have ended are closed: those
/// placed on it, and those whose replica the scenario left to the runner.
struct ReplicaStates {
    count: usize,
    down: HashSet<u32>,
    paused: HashSet<u32>,
    /// The replica each connection opened with an explicit `replica` is on.
    placed: std::collections::HashMap<String, u32>,
}

impl ReplicaStates {
    fn new(count: usize) -> Self {
        ReplicaStates { count, down: HashSet::new(), paused: HashSet::new(), placed: std::collections::HashMap::new() }
    }

    fn check(&mut self, step: &Step, open: &mut HashSet<String>) -> Result<(), String> {
        let named = step.opens_on().or(step.acts_on_replica());
        if let Some(k) = named.filter(|k| *k as usize >= self.count) {
            return Err(format!(
                "replica {k} does not exist unless the scenario declares \"replicas\": {} or more (it needs {})",
                k + 1,
                self.count
            ));
        }
        if let Some(k) = step.opens_on() {
            if self.down.contains(&k) {
                return Err(format!("replica {k} is down (killed and not started again)"));
            }
        }
        match step {
            Step::Connect { replica, .. } | Step::Resume { replica, .. } => {
                let conn = step.conn().unwrap_or(DEFAULT_CONN).to_owned();
                match replica {
                    Some(k) => self.placed.insert(conn, *k),
                    None => self.placed.remove(&conn),
                };
            }
            Step::AttachToBound { .. } => {}
            Step::KillReplica { replica, down_ms } => {
                if self.down.contains(replica) {
                    return Err(format!("replica {replica} is already down"));
                }
                self.paused.remove(replica);
                if down_ms.is_none() {
                    self.down.insert(*replica);
                }
                // Gone: the connections on it, and those the runner may have put there.
                open.retain(|c| self.placed.get(c).is_some_and(|k| k != replica));
            }
            Step::StartReplica { replica } => {
                if !self.down.remove(replica) {
                    return Err(format!("replica {replica} is not down: only a killed replica can be started"));
                }
            }
            Step::PauseReplica { replica } => {
                if self.down.contains(replica) || !self.paused.insert(*replica) {
                    return Err(format!("replica {replica} is not running: it is down or already paused"));
                }
            }
            Step::ContinueReplica { replica } => {
                if !self.paused.remove(replica) {
                    return Err(format!("replica {replica} is not paused"));
                }
            }
            Step::Restart { .. } => {
                self.down.clear();
                self.paused.clear();
            }
            Step::Disconnect { .. }
            | Step::UserMessage { .. }
            | Step::Respond { .. }
            | Step::Rewind { .. }
            | Step::Retry { .. }
            | Step::Cancel { .. }
            | Step::Send { .. }
            | Step::SendText { .. }
            | Step::SendBinary { .. }
            | Step::SendViolation { .. }
            | Step::Ping { .. }
            | Step::Expect { .. }
            | Step::ExpectUnordered { .. }
            | Step::ExpectError { .. }
            | Step::ExpectClose { .. }
            | Step::ExpectSilence { .. }
            | Step::PauseReading { .. }
            | Step::ExpectState { .. }
            | Step::WaitIdle { .. }
            | Step::Drain { .. }
            | Step::PageThrough { .. }
            | Step::Sleep { .. }
            | Step::Snapshot { .. } => {}
        }
        Ok(())
    }
}

/// Whether every version in `versions` parses and is 1.1 or later, so that `features` may be sent
/// with them (SESSION-014).
pub fn offers_only_1_1_or_later(versions: &[String]) -> bool {
    let v1_1 = chatwire_schema::ProtocolVersion { major: 1, minor: 1 };
    versions.iter().all(|v| chatwire_schema::ProtocolVersion::parse(v).is_ok_and(|v| v >= v1_1))
}

/// Matches `text` against a glob of `*` (any run of characters) and `?` (one character).
pub fn glob_match(glob: &str, text: &str) -> bool {
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    // Classic two-pointer wildcard match with backtracking to the last `*`: linear in practice.
    let (mut gi, mut ti, mut star, mut mark) = (0usize, 0usize, None::<usize>, 0usize);
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_like_a_shell() {
        assert!(glob_match("resume-*", "resume-basic"));
        assert!(glob_match("*tool*", "multi-tool-order"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(!glob_match("resume-*", "rewind-basic"));
        assert!(glob_match("*", ""));
        assert!(glob_match("exact", "exact"));
        assert!(!glob_match("exact", "exactly"));
    }

    fn minimal(steps: &str) -> String {
        format!(r#"{{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],"steps":{steps}}}"#)
    }

    #[test]
    fn parses_a_minimal_scenario() {
        let loader = ScenarioLoader::new();
        let s = loader.parse("x.json", &minimal(r#"[{"do":"connect"},{"do":"wait_idle"}]"#)).unwrap();
        assert_eq!(s.steps.len(), 2);
        assert_eq!(s.steps[0].conn(), Some("main"));
        assert!(matches!(s.steps[0], Step::Connect { with_script: true, hello: true, .. }));
    }

    #[test]
    fn refuses_unknown_steps_fields_and_bad_ids() {
        let loader = ScenarioLoader::new();
        let err = loader.parse("x.json", &minimal(r#"[{"do":"teleport"}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
        let err = loader.parse("x.json", &minimal(r#"[{"do":"connect","colour":"red"}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
        let err = loader.parse("y.json", &minimal(r#"[{"do":"connect"}]"#)).unwrap_err();
        assert!(err.to_string().contains("differs from the file name"), "{err}");
        let bad_req = r#"{"id":"x","title":"t","level":"must","requirements":["seq1"],"steps":[{"do":"connect"}]}"#;
        assert!(matches!(loader.parse("x.json", bad_req), Err(ScenarioError::Schema { .. })));
        assert!(matches!(loader.parse("x.json", "{"), Err(ScenarioError::NotJson { .. })));
    }

    #[test]
    fn refuses_steps_on_connections_never_opened() {
        let loader = ScenarioLoader::new();
        let err = loader.parse("x.json", &minimal(r#"[{"do":"user_message","text":"hi"}]"#)).unwrap_err();
        assert!(err.to_string().contains("is not open"), "{err}");
        let err = loader
            .parse("x.json", &minimal(r#"[{"do":"connect"},{"do":"restart"},{"do":"expect","frame":{}}]"#))
            .unwrap_err();
        assert!(err.to_string().contains("is not open"), "{err}");
        let dup = r#"[{"do":"connect"},{"do":"snapshot","name":"a"},{"do":"snapshot","name":"a"}]"#;
        assert!(loader.parse("x.json", &minimal(dup)).unwrap_err().to_string().contains("used twice"));
    }

    #[test]
    fn ping_payloads_and_plain_mode_are_checked() {
        let loader = ScenarioLoader::new();
        let ok =
            loader.parse("x.json", &minimal(r#"[{"do":"connect","subprotocol":false},{"do":"ping","payload":"hi"}]"#));
        assert!(matches!(ok.unwrap().steps[0], Step::Connect { subprotocol: false, .. }));
        // 42 three-byte characters: 42 characters fit the schema, 126 bytes do not fit a control frame.
        let long = format!(r#"[{{"do":"connect"}},{{"do":"ping","payload":"{}"}}]"#, "€".repeat(42));
        assert!(loader.parse("x.json", &minimal(&long)).unwrap_err().to_string().contains("125 bytes"));
        let script = r#"{"turns":[{"steps":[{"op":"say","markdown":"x"}]}]}"#;
        let plain = format!(
            r#"{{"id":"x","title":"t","level":"must","requirements":["SCRIPT-003"],"conformance_mode":false,"script":{script},"steps":[{{"do":"connect"}}]}}"#
        );
        assert!(loader.parse("x.json", &plain).unwrap_err().to_string().contains("no script"));
    }

    fn with_replicas(replicas: u32, steps: &str) -> String {
        format!(
            r#"{{"id":"x","title":"t","level":"must","requirements":["SEQ-001"],"replicas":{replicas},"steps":{steps}}}"#
        )
    }

    #[test]
    fn replicas_named_by_steps_are_checked_at_load() {
        let loader = ScenarioLoader::new();
        let ok = with_replicas(
            3,
            r#"[{"do":"connect","replica":0},{"do":"resume","conn":"tab2","replica":2},
                {"do":"pause_replica","replica":1},{"do":"continue_replica","replica":1},
                {"do":"kill_replica","replica":0},{"do":"expect_silence","conn":"tab2","ms":10},
                {"do":"resume","replica":1},{"do":"start_replica","replica":0},
                {"do":"kill_replica","replica":2,"down_ms":100},{"do":"attach_to_bound","prefix":"t","replica":2}]"#,
        );
        let s = loader.parse("x.json", &ok).unwrap();
        assert_eq!(s.min_replicas(), 3);
        assert!(s.controls_processes() && !s.restarts());
        // A replica at or past the scenario's count, or without `replicas`: an error, not a panic.
        let err = loader.parse("x.json", &minimal(r#"[{"do":"connect","replica":1}]"#)).unwrap_err();
        assert!(err.to_string().contains(r#"declares "replicas": 2"#), "{err}");
        let err = loader.parse("x.json", &with_replicas(2, r#"[{"do":"kill_replica","replica":2}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Invalid { .. }), "{err}");
        // The schema bounds them too.
        let err = loader.parse("x.json", &with_replicas(9, r#"[{"do":"connect"}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
        let err = loader.parse("x.json", &minimal(r#"[{"do":"connect","replica":8}]"#)).unwrap_err();
        assert!(matches!(err, ScenarioError::Schema { .. }), "{err}");
    }

    #[test]
    fn replica_states_are_followed() {
        let loader = ScenarioLoader::new();
        let bad = [
            (r#"[{"do":"start_replica","replica":1}]"#, "not down"),
            (r#"[{"do":"kill_replica","replica":1},{"do":"kill_replica","replica":1}]"#, "already down"),
            (r#"[{"do":"continue_replica","replica":0}]"#, "not paused"),
            (r#"[{"do":"pause_replica","replica":0},{"do":"pause_replica","replica":0}]"#, "not running"),
            (r#"[{"do":"kill_replica","replica":1},{"do":"connect","replica":1}]"#, "is down"),
            // A connection the runner placed may have been on the killed replica.
            (r#"[{"do":"connect"},{"do":"kill_replica","replica":1},{"do":"user_message","text":"x"}]"#, "not open"),
            (r#"[{"do":"connect","replica":1},{"do":"kill_replica","replica":1},{"do":"wait_idle"}]"#, "not open"),
        ];
        for (steps, want) in bad {
            let err = loader.parse("x.json", &with_replicas(2, steps)).unwrap_err();
            assert!(err.to_string().contains(want), "{steps}: {err}");
        }
        let good = [
            r#"[{"do":"connect","replica":0},{"do":"kill_replica","replica":1},{"do":"wait_idle"}]"#,
            r#"[{"do":"kill_replica","replica":1},{"do":"restart"},{"do":"connect","replica":1}]"#,
            r#"[{"do":"kill_replica","replica":1,"down_ms":10},{"do":"connect","replica":1}]"#,
            r#"[{"do":"pause_replica","replica":1},{"do":"kill_replica","replica":1},{"do":"start_replica","replica":1}]"#,
        ];
        for steps in good {
            loader.parse("x.json", &with_replicas(2, steps)).unwrap_or_else(|e| panic!("{steps}: {e}"));
        }
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let loader = ScenarioLoader::new();
        let text = minimal(r#"[{"do":"connect"}]"#);
        let errors = loader.parse_all([("x.json", text.as_str()), ("x.json", text.as_str())]).unwrap_err();
        assert_eq!(errors, vec![ScenarioError::DuplicateId("x".into())]);
    }
}
