//! The protocol-change gate, end to end through the `chatwire-schema diff` binary: every schema-pair
//! fixture under `fixtures/schema-diff/` classifies exactly as its `expected.json` says, every rule
//! has a fixture and a row in `spec/versioning.md` with the same levels, `--base` reads git, and
//! bad input exits 2.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixtures_dir() -> PathBuf {
    workspace().join("fixtures/schema-diff")
}

fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chatwire-schema"))
}

fn run(args: &[&str], cwd: Option<&Path>) -> Output {
    let mut cmd = tool();
    cmd.arg("diff").args(args);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    cmd.output().expect("the chatwire-schema binary runs")
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("stdout is not JSON ({e}): {}\nstderr: {}", String::from_utf8_lossy(&output.stdout), stderr(output))
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `(message, path, rule, level)` of every change, sorted: the order of the walk is not part of the contract.
fn classification(changes: &Value) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = changes
        .as_array()
        .expect("changes is an array")
        .iter()
        .map(|c| {
            let field =
                |k: &str| c[k].as_str().unwrap_or_else(|| panic!("change without string {k:?}: {c}")).to_owned();
            (field("message"), field("path"), field("rule"), field("level"))
        })
        .collect();
    out.sort();
    out
}

fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures/schema-diff exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("expected.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn expected(name: &str) -> Value {
    let path = fixtures_dir().join(name).join("expected.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rule_table() -> Vec<Value> {
    let output = tool().args(["diff", "--rules", "--json"]).output().expect("binary runs");
    assert!(output.status.success(), "diff --rules failed: {}", stderr(&output));
    json_of(&output).as_array().expect("rule table is an array").clone()
}

#[test]
fn every_fixture_classifies_as_expected() {
    let names = fixture_names();
    assert!(names.len() >= 25, "expected at least 25 schema-pair fixtures, found {}", names.len());
    let mut failures = Vec::new();
    for name in &names {
        let dir = fixtures_dir().join(name);
        let (old, new) = (dir.join("old"), dir.join("new"));
        let output = run(&[old.to_str().unwrap(), new.to_str().unwrap(), "--json"], None);
        let want = expected(name);
        let want_verdict = want["verdict"].as_str().expect("expected.json has a verdict");
        let want_exit = if want_verdict == "fail" { 1 } else { 0 };
        if output.status.code() != Some(want_exit) {
            failures.push(format!(
                "{name}: exit {:?}, want {want_exit}; stderr: {}",
                output.status.code(),
                stderr(&output)
            ));
            continue;
        }
        let got = json_of(&output);
        if got["verdict"] != want["verdict"] {
            failures.push(format!("{name}: verdict {}, want {}", got["verdict"], want["verdict"]));
        }
        let (got_changes, want_changes) = (classification(&got["changes"]), classification(&want["changes"]));
        if got_changes != want_changes {
            let extra: Vec<_> = got_changes.iter().filter(|c| !want_changes.contains(c)).collect();
            let missing: Vec<_> = want_changes.iter().filter(|c| !got_changes.contains(c)).collect();
            failures.push(format!("{name}: unexpected {extra:?}; missing {missing:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} fixtures differ:\n{}", failures.len(), names.len(), failures.join("\n"));
}

#[test]
fn every_rule_has_its_own_fixture_that_exercises_it() {
    let names: BTreeSet<String> = fixture_names().into_iter().collect();
    let mut missing = Vec::new();
    for row in rule_table() {
        let id = row["rule"].as_str().expect("rule id");
        if !names.contains(id) {
            missing.push(format!("{id}: no fixtures/schema-diff/{id}/"));
            continue;
        }
        let exercised = classification(&expected(id)["changes"]).iter().any(|(_, _, rule, _)| rule == id);
        if !exercised {
            missing.push(format!("{id}: its fixture does not expect a {id} change"));
        }
    }
    assert!(missing.is_empty(), "rules without a fixture:\n{}", missing.join("\n"));
}

#[test]
fn spec_rule_table_matches_the_tool() {
    let spec_path = workspace().join("spec/versioning.md");
    let spec = std::fs::read_to_string(&spec_path).expect("spec/versioning.md exists");
    // Rows look like: | `enum-value-added` | INFO | ERR | why… |
    let rows: Vec<Vec<String>> = spec
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().trim_matches('`').to_owned()).collect())
        .collect();
    let table = rule_table();
    let mut problems = Vec::new();
    for row in &table {
        let id = row["rule"].as_str().unwrap();
        let (c2s, s2c) = (row["client-to-server"].as_str().unwrap(), row["server-to-client"].as_str().unwrap());
        match rows.iter().find(|r| r[0] == id) {
            None => problems.push(format!("{id}: no row in spec/versioning.md")),
            Some(r) if r.len() < 3 || r[1] != c2s || r[2] != s2c => {
                problems.push(format!("{id}: spec says {:?}, the tool says [{c2s}, {s2c}]", &r[1..r.len().min(3)]))
            }
            Some(_) => {}
        }
    }
    let ids: BTreeSet<&str> = table.iter().filter_map(|r| r["rule"].as_str()).collect();
    for r in &rows {
        if !ids.contains(r[0].as_str()) && r.len() >= 3 && ["ERR", "WARN", "INFO"].contains(&r[1].as_str()) {
            problems.push(format!("{}: in the spec's rule table but unknown to the tool", r[0]));
        }
    }
    assert!(problems.is_empty(), "spec/versioning.md and the rule table disagree:\n{}", problems.join("\n"));
}

#[test]
fn text_report_names_level_message_path_and_reason() {
    let dir = fixtures_dir().join("enum-value-added");
    let output = run(&[dir.join("old").to_str().unwrap(), dir.join("new").to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1), "an unacknowledged ERR exits 1");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = "ERR  chat.tool_call  /properties/display/enum: value \"popup\" added \
                (server→client: clients may not handle it) [$defs/DisplayMode]";
    assert!(text.lines().any(|l| l == line), "no line {line:?} in:\n{text}");
    assert!(text
        .lines()
        .any(|l| l.starts_with("INFO chat.user_message  /properties/mode/enum: value \"image\" added")));
    assert!(text.contains("1 ERR, 0 WARN, 1 INFO"), "summary missing in:\n{text}");
}

#[test]
fn version_flags_acknowledge_only_a_major_bump() {
    let dir = fixtures_dir().join("enum-value-added");
    let (old, new) = (dir.join("old"), dir.join("new"));
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let major = run(&[old, new, "--old-version", "1.3", "--new-version", "2.0", "--json"], None);
    assert_eq!(major.status.code(), Some(0), "{}", stderr(&major));
    assert_eq!(json_of(&major)["verdict"], "acknowledged");
    let minor = run(&[old, new, "--old-version", "1.0", "--new-version", "1.9", "--json"], None);
    assert_eq!(minor.status.code(), Some(1));
    assert_eq!(json_of(&minor)["verdict"], "fail");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let fixture = fixtures_dir().join("identical");
    let old = fixture.join("old");
    let old = old.to_str().unwrap();
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-bad-input");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("broken")).unwrap();
    std::fs::write(scratch.join("broken/chat.rewind.json"), "{ not json").unwrap();
    std::fs::create_dir_all(scratch.join("empty")).unwrap();
    let broken = scratch.join("broken");
    let empty = scratch.join("empty");
    let missing = scratch.join("missing");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![old], "usage"),
        (vec![old, missing.to_str().unwrap()], "cannot read"),
        (vec![old, broken.to_str().unwrap()], "is not JSON"),
        (vec![old, empty.to_str().unwrap()], "no schema files"),
        (vec![old, old, "--old-version", "one"], "bad protocol version"),
        (vec![old, old, "--old-version", "2.0", "--new-version", "1.4"], "goes backwards"),
        (vec!["--base=--upload-pack=x"], "not a plain git revision"),
    ];
    for (args, needle) in cases {
        let output = run(&args, Some(&workspace()));
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(needle), "{args:?}: stderr {:?} lacks {needle:?}", stderr(&output));
    }
}

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(repo)
        .args(["-c", "user.name=gate-test", "-c", "user.email=gate-test@localhost", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(status.status.success(), "git {args:?}: {}", stderr(&status));
}

fn copy_json(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn base_compares_the_schemas_committed_at_a_git_ref_with_the_work_tree() {
    let fixture = fixtures_dir().join("variant-removed");
    let repo = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-base-repo");
    let _ = std::fs::remove_dir_all(&repo);
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    copy_json(&fixture.join("old"), &repo.join("schema/json"));
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "baseline"]);
    copy_json(&fixture.join("new"), &repo.join("schema/json"));

    let output = run(&["--base", "HEAD", "--json"], Some(&repo));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let got = json_of(&output);
    assert_eq!(got["old"], "HEAD:schema/json");
    assert_eq!(classification(&got["changes"]), classification(&expected("variant-removed")["changes"]));

    // The same revision on both sides: nothing changed.
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "candidate"]);
    let same = run(&["--base", "HEAD", "--json"], Some(&repo));
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert_eq!(json_of(&same)["changes"], Value::Array(vec![]));

    let unknown = run(&["--base", "no-such-ref"], Some(&repo));
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("git ls-tree"), "{}", stderr(&unknown));
}
