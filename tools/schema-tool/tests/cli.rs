//! The `chatwire-schema` binary as CI and users run it: exit codes, which files it names, and
//! that no input makes it panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use chatwire_schema::{ClientFrame, ServerFrame};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> PathBuf {
    repo().join("fixtures/messages")
}

/// A finished run of the binary.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// Runs `chatwire-schema ARGS`; every run is also checked for a panic.
fn run<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let Output { status, stdout, stderr } =
        Command::new(env!("CARGO_BIN_EXE_chatwire-schema")).args(args).output().expect("the binary starts");
    let run = Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(!run.stderr.contains("panicked"), "the tool panicked:\n{}", run.stderr);
    run
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("chatwire-schema-cli-{}-{label}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    /// A fresh export of the schemas: up to date by construction, whatever the repository holds.
    fn with_exported_schemas(label: &str) -> Self {
        let dir = TempDir::new(label);
        run(["export".as_ref(), "--dir".as_ref(), dir.path().as_os_str()]).expect_code(0);
        dir
    }

    fn file_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("list temp dir")
            .map(|e| e.expect("directory entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write temp file");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn check_dir(dir: &Path) -> Run {
    run(["check".as_ref(), "--dir".as_ref(), dir.as_os_str()])
}

/// The drift lines of a failed check.
fn drift_lines(run: &Run) -> Vec<&str> {
    run.stderr.lines().filter(|l| l.starts_with("drift: ")).collect()
}

#[test]
fn check_passes_on_the_committed_schemas() {
    let run = run(["check"]);
    run.expect_code(0);
    assert!(run.stdout.contains("up to date"), "{}", run.stdout);
}

#[test]
fn check_names_an_edited_file() {
    let dir = TempDir::with_exported_schemas("edited");
    let edited = dir.path().join("chat.tool_call.json");
    let text = std::fs::read_to_string(&edited).expect("read schema");
    std::fs::write(&edited, text.replacen("\"inline\"", "\"popup\"", 1)).expect("edit schema");

    let run = check_dir(dir.path());
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), 1, "only the edited file drifts: {drift:?}");
    assert!(drift[0].contains("chat.tool_call.json") && drift[0].contains("differs"), "{drift:?}");
}

#[test]
fn check_names_a_missing_file() {
    let dir = TempDir::with_exported_schemas("missing");
    std::fs::remove_file(dir.path().join("session.welcome.json")).expect("remove schema");

    let run = check_dir(dir.path());
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert!(drift[0].contains("session.welcome.json") && drift[0].contains("missing"), "{drift:?}");
}

#[test]
fn check_names_an_extra_file() {
    let dir = TempDir::with_exported_schemas("extra");
    dir.write("chat.typing.json", "{}\n");

    let run = check_dir(dir.path());
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), 1, "{drift:?}");
    assert!(drift[0].contains("chat.typing.json"), "{drift:?}");
}

#[test]
fn check_names_every_drifting_file_at_once() {
    let dir = TempDir::with_exported_schemas("several");
    dir.write("ui-state.json", "{}\n");
    std::fs::remove_file(dir.path().join("error.json")).expect("remove schema");
    dir.write("legacy.json", "{}\n");

    let run = check_dir(dir.path());
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), 3, "{drift:?}");
    for name in ["ui-state.json", "error.json", "legacy.json"] {
        assert!(drift.iter().any(|l| l.contains(name)), "{name} not named in {drift:?}");
    }
}

#[test]
fn check_of_a_directory_that_does_not_exist_names_every_file_missing() {
    let exported = TempDir::with_exported_schemas("reference").file_names();
    let dir = TempDir::new("absent");
    let run = check_dir(&dir.path().join("nowhere"));
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), exported.len(), "{drift:?}");
    for name in &exported {
        assert!(drift.iter().any(|l| l.contains(name.as_str()) && l.contains("missing")), "{name}: {drift:?}");
    }
}

#[test]
fn export_then_check_passes_and_export_removes_stale_files() {
    let dir = TempDir::new("export");
    let stale = dir.write("chat.typing.json", "{}\n");
    run(["export".as_ref(), "--dir".as_ref(), dir.path().as_os_str()]).expect_code(0);
    assert!(!stale.exists(), "export leaves a file no type generates");
    let names = dir.file_names();
    let messages = ClientFrame::TYPES.iter().chain(ServerFrame::TYPES).map(|wire| format!("{wire}.json"));
    for file in messages
        .chain(["client-frame.json", "server-frame.json", "ui-state.json", "agent-script.json"].map(String::from))
    {
        assert!(names.contains(&file), "{file} not exported: {names:?}");
    }
    check_dir(dir.path()).expect_code(0);
}

/// A repository root holding only the sources the packaged copies are made from.
fn fake_repository(label: &str) -> TempDir {
    let root = TempDir::new(label);
    for (file, text) in [
        ("spec/README.md", "# Spec\n"),
        ("spec/transport.md", "**[TRANSPORT-001]** A server MUST send text.\n"),
        ("fixtures/scenarios/hello.json", "{\"id\": \"hello\"}\n"),
        ("fixtures/scenarios/notes.txt", "not a scenario\n"),
        ("fixtures/snapshots/hello__final.snap", "---\nsource: x\n---\n{}\n"),
    ] {
        let path = root.path().join(file);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create source dir");
        std::fs::write(path, text).expect("write source");
    }
    root
}

fn with_root(command: &str, root: &Path) -> Run {
    run([command.as_ref(), "--root".as_ref(), root.as_os_str()])
}

#[test]
fn export_writes_the_asyncapi_document_and_the_packaged_copies() {
    let root = fake_repository("copies");
    with_root("export", root.path()).expect_code(0);
    let read = |file: &str| std::fs::read_to_string(root.path().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(read("schema/spec/transport.md"), read("spec/transport.md"));
    assert_eq!(read("conformance/scenarios/hello.json"), read("fixtures/scenarios/hello.json"));
    assert_eq!(read("conformance/snapshots/hello__final.snap"), read("fixtures/snapshots/hello__final.snap"));
    assert!(!root.path().join("conformance/scenarios/notes.txt").exists(), "only scenario files are copied");
    let asyncapi: Value = serde_json::from_str(&read("schema/asyncapi.json")).expect("asyncapi.json is JSON");
    assert_eq!(asyncapi["asyncapi"], "3.0.0");
    assert!(root.path().join("schema/json/session.hello.json").is_file());
    with_root("check", root.path()).expect_code(0);
}

#[test]
fn check_names_every_drifting_copy_and_export_repairs_them() {
    let root = fake_repository("copy-drift");
    with_root("export", root.path()).expect_code(0);
    let path = |file: &str| root.path().join(file);
    std::fs::write(path("schema/spec/README.md"), "# Edited by hand\n").expect("edit copy");
    std::fs::write(path("spec/transport.md"), "**[TRANSPORT-001]** A server MUST send UTF-8 text.\n")
        .expect("edit source");
    std::fs::write(path("conformance/scenarios/extra.json"), "{}\n").expect("add stray copy");
    std::fs::remove_file(path("conformance/snapshots/hello__final.snap")).expect("remove copy");
    std::fs::remove_file(path("schema/asyncapi.json")).expect("remove asyncapi");

    let run = with_root("check", root.path());
    run.expect_code(1);
    let drift = drift_lines(&run);
    assert_eq!(drift.len(), 5, "{drift:?}");
    for (file, says) in [
        ("schema/spec/README.md", "differs"),
        ("schema/spec/transport.md", "differs"),
        ("conformance/scenarios/extra.json", "not generated"),
        ("conformance/snapshots/hello__final.snap", "missing"),
        ("schema/asyncapi.json", "missing"),
    ] {
        assert!(drift.iter().any(|l| l.contains(file) && l.contains(says)), "{file} ({says}) not named in {drift:?}");
    }

    with_root("export", root.path()).expect_code(0);
    assert!(!path("conformance/scenarios/extra.json").exists(), "export leaves a stray copy");
    with_root("check", root.path()).expect_code(0);
}

#[test]
fn export_without_a_source_to_copy_is_an_error_that_names_it() {
    let root = fake_repository("no-snapshots");
    std::fs::remove_file(root.path().join("fixtures/snapshots/hello__final.snap")).expect("remove source");
    for command in ["export", "check"] {
        let run = with_root(command, root.path());
        run.expect_code(2);
        assert!(run.stderr.contains("fixtures/snapshots") && run.stderr.contains(".snap"), "{}", run.stderr);
    }
    assert!(!root.path().join("schema").exists(), "a failed export writes nothing");
}

/// Every `*.json` file under `dir`, recursively, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            out.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn validate_accepts_every_valid_fixture() {
    let files = json_files(&corpus().join("valid"));
    assert!(files.len() >= 45, "{} valid fixtures", files.len());
    let run = run(std::iter::once(PathBuf::from("validate")).chain(files.iter().cloned()));
    run.expect_code(0);
    for file in &files {
        let wire = file.parent().and_then(Path::file_name).and_then(|n| n.to_str()).expect("wire type dir");
        let line = format!("{}: valid {wire}", file.display());
        assert!(run.stdout.lines().any(|l| l == line), "missing {line:?} in\n{}", run.stdout);
    }
}

/// The invalid corpus cases whose frame breaks its schema: `(frame file written to dir, expect_path)`.
fn schema_violations(dir: &TempDir) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for case_file in json_files(&corpus().join("invalid")) {
        let case: Value = serde_json::from_str(&std::fs::read_to_string(&case_file).expect("read case")).expect("JSON");
        if case["expect"] != "invalid" {
            continue;
        }
        let wire = case["frame"]["type"].as_str().expect("an invalid case keeps its type");
        let stem = case_file.file_stem().and_then(|s| s.to_str()).expect("file name");
        let frame = dir.write(&format!("{wire}--{stem}.json"), &case["frame"].to_string());
        out.push((frame, case["expect_path"].as_str().expect("expect_path").to_owned()));
    }
    out
}

#[test]
fn validate_reports_each_violation_as_path_and_message() {
    let dir = TempDir::new("violations");
    let cases = schema_violations(&dir);
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let run = run(std::iter::once(PathBuf::from("validate")).chain(cases.iter().map(|(f, _)| f.clone())));
    run.expect_code(1);

    // Output: "<file>: invalid <type>" then one indented "<instance path>: <message>" line per violation.
    let mut blocks: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in run.stdout.lines() {
        match line.strip_prefix("  ") {
            Some(violation) => blocks.last_mut().expect("a violation follows its file line").1.push(violation),
            None => blocks.push((line, Vec::new())),
        }
    }
    assert_eq!(blocks.len(), cases.len(), "one block per file:\n{}", run.stdout);
    for ((file, expect_path), (head, violations)) in cases.iter().zip(&blocks) {
        let wire = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.split("--").next()).expect("name");
        assert_eq!(*head, format!("{}: invalid {wire}", file.display()));
        assert!(!violations.is_empty(), "{head}: no violation lines");
        for v in violations {
            let (path, message) = v.split_once(": ").unwrap_or_else(|| panic!("{head}: {v:?} is not `path: message`"));
            assert!(path.starts_with('/') && !message.is_empty(), "{head}: {v:?}");
        }
        let shown = if expect_path.is_empty() { "/" } else { expect_path.as_str() };
        assert!(
            violations.iter().any(|v| v.split_once(": ").is_some_and(|(p, _)| p == shown)),
            "{head}: no violation at {shown}: {violations:?}"
        );
    }
}

#[test]
fn validate_exits_1_on_one_invalid_frame_among_valid_ones() {
    let dir = TempDir::new("one-invalid");
    let bad = dir.write("hello.json", r#"{"type": "session.hello", "id": "hello-1", "versions": ["01.0"]}"#);
    let good = corpus().join("valid/session.hello/new-session.json");
    let run = run(["validate".as_ref(), good.as_os_str(), bad.as_os_str()]);
    run.expect_code(1);
    assert!(run.stdout.contains(&format!("{}: valid session.hello", good.display())), "{}", run.stdout);
    assert!(run.stdout.contains(&format!("{}: invalid session.hello", bad.display())), "{}", run.stdout);
    assert!(run.stdout.lines().any(|l| l.trim_start().starts_with("/versions/0: ")), "{}", run.stdout);
}

/// Runs `validate` on one file that cannot be checked at all; exit 2 with one stderr line naming it.
fn unusable(file: &Path, says: &str) {
    let run = run(["validate".as_ref(), file.as_os_str()]);
    run.expect_code(2);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {lines:?}");
    assert!(lines[0].starts_with(&format!("{}: ", file.display())), "{lines:?}");
    assert!(lines[0].contains(says), "{lines:?} should say {says:?}");
}

#[test]
fn validate_exits_2_on_an_unreadable_file() {
    let dir = TempDir::new("unreadable");
    unusable(&dir.path().join("absent.json"), "cannot read");
    unusable(dir.path(), "cannot read");
}

#[test]
fn validate_exits_2_on_a_file_that_is_not_json() {
    let dir = TempDir::new("not-json");
    unusable(&dir.write("truncated.json", r#"{"type": "session.hello", "id": "#), "not JSON");
    unusable(&dir.write("empty.json", ""), "not JSON");
    unusable(&dir.write("binary.json", "\u{0}\u{1}\u{2}"), "not JSON");
}

#[test]
fn validate_exits_2_on_an_unknown_or_missing_type() {
    let dir = TempDir::new("unknown-type");
    unusable(&dir.write("typing.json", r#"{"type": "chat.typing", "id": "t-1"}"#), "unknown frame type");
    unusable(&dir.write("no-type.json", r#"{"id": "hello-1", "versions": ["1.0"]}"#), "type");
    unusable(&dir.write("array.json", r#"[{"type": "session.hello"}]"#), "type");
}

#[test]
fn validate_reports_every_file_and_exits_with_the_worst_code() {
    let dir = TempDir::new("mixed");
    let bad = dir.write("bad.json", r#"{"type": "chat.rewind", "id": "rw-1"}"#);
    let absent = dir.path().join("absent.json");
    let good = corpus().join("valid/chat.rewind/before-second-turn.json");
    let run = run(["validate".as_ref(), absent.as_os_str(), bad.as_os_str(), good.as_os_str()]);
    run.expect_code(2);
    assert!(run.stderr.contains(&format!("{}: cannot read", absent.display())), "{}", run.stderr);
    assert!(run.stdout.contains(&format!("{}: invalid chat.rewind", bad.display())), "{}", run.stdout);
    assert!(run.stdout.contains(&format!("{}: valid chat.rewind", good.display())), "{}", run.stdout);
}

#[test]
fn validate_without_files_is_a_usage_error() {
    run(["validate"]).expect_code(2);
    run(["no-such-command"]).expect_code(2);
}

/// Runs `chatwire-schema ARGS` with `input` on its standard input.
fn run_with_stdin(args: &[&str], input: &[u8]) -> Run {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_chatwire-schema"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stdin = child.stdin.take().expect("piped stdin");
    // The tool may stop reading early (a usage error); a broken pipe is not this test's concern.
    let _ = stdin.write_all(input);
    drop(stdin);
    let Output { status, stdout, stderr } = child.wait_with_output().expect("the binary exits");
    let run = Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(!run.stderr.contains("panicked"), "the tool panicked:\n{}", run.stderr);
    run
}

#[test]
fn validate_dash_reads_one_frame_from_stdin() {
    let good = std::fs::read(corpus().join("valid/chat.rewind/before-second-turn.json")).expect("fixture");
    let run = run_with_stdin(&["validate", "-"], &good);
    run.expect_code(0);
    assert_eq!(run.stdout.trim(), "<stdin>: valid chat.rewind", "{}", run.stdout);

    let run = run_with_stdin(&["validate", "-"], br#"{"type": "chat.rewind", "id": "rw-1"}"#);
    run.expect_code(1);
    assert!(run.stdout.starts_with("<stdin>: invalid chat.rewind"), "{}", run.stdout);

    let run = run_with_stdin(&["validate", "-"], b"{not json");
    run.expect_code(2);
    assert!(run.stderr.starts_with("<stdin>: not JSON"), "{}", run.stderr);

    // Beside files, and at most once: a second `-` would read an empty stream.
    let file = corpus().join("valid/chat.rewind/before-second-turn.json");
    let file = file.to_str().expect("utf-8 path");
    let run = run_with_stdin(&["validate", file, "-", "-"], &good);
    run.expect_code(2);
    assert!(run.stdout.contains(&format!("{file}: valid chat.rewind")), "{}", run.stdout);
    assert!(run.stdout.contains("<stdin>: valid chat.rewind"), "{}", run.stdout);
    assert!(run.stderr.contains("`-` is given more than once"), "{}", run.stderr);
}

#[test]
fn diff_names_who_writes_and_reads_the_runners_documents() {
    let old = TempDir::with_exported_schemas("diff-label-old");
    let new = TempDir::with_exported_schemas("diff-label-new");
    // One optional member more in a scenario file and in the run report.
    for (file, member) in [("scenario.json", "x_note"), ("conformance-report.json", "x_extra")] {
        let path = new.path().join(file);
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("exported")).expect("JSON");
        doc["properties"]
            .as_object_mut()
            .unwrap_or_else(|| panic!("{file} has root properties"))
            .insert(member.to_owned(), serde_json::json!({"type": "string"}));
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("serializes")).expect("writes");
    }
    let run = run(["diff".as_ref(), old.path().as_os_str(), new.path().as_os_str()]);
    let line = |member: &str| {
        run.stdout
            .lines()
            .find(|l| l.contains(member))
            .unwrap_or_else(|| panic!("no line for {member}:\n{}\n{}", run.stdout, run.stderr))
            .to_owned()
    };
    let scenario = line("x_note");
    assert!(
        scenario.contains("written by scenario authors, read by the runner; graded like client→server"),
        "{scenario}"
    );
    let report = line("x_extra");
    assert!(report.contains("written by the runner, read by CI tooling; graded like server→client"), "{report}");
    // Frames keep their direction.
    assert!(!scenario.starts_with("ERR"), "{scenario}");
}

/// Copies the committed released sets, and the sources `check --root` reads, under `root`.
fn copy_releases(root: &Path) {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("create dir");
        for entry in std::fs::read_dir(from).expect("list dir").flatten() {
            let target = to.join(entry.file_name());
            if entry.path().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).expect("copy file");
            }
        }
    }
    for dir in ["schema/releases", "spec", "fixtures/scenarios", "fixtures/snapshots"] {
        copy(&repo().join(dir), &root.join(dir));
    }
}

#[test]
fn check_fails_when_a_released_requirement_changes_its_text_or_level() {
    // The frozen 1.0 set says SESSION-003 is a SHOULD with other words: the spec (a MUST) no longer
    // defines the released set, which is what an edit of the spec's SESSION-003 looks like. (The
    // copy holds no generated files, so they drift too; only the requirement lines matter here.)
    let root = TempDir::new("frozen-requirements");
    copy_releases(root.path());
    let released = root.path().join("schema/releases/v1/1.0/requirements/released.json");
    let mut set: Value = serde_json::from_str(&std::fs::read_to_string(&released).expect("committed")).expect("JSON");
    let entry = set["requirements"]
        .as_array_mut()
        .expect("a list")
        .iter_mut()
        .find(|r| r["id"] == "SESSION-003")
        .expect("SESSION-003 is in the 1.0 set");
    assert_eq!(entry["level"], "MUST");
    entry["level"] = Value::from("SHOULD");
    entry["text"] = Value::from("A server SHOULD choose some version.");
    std::fs::write(&released, serde_json::to_string_pretty(&set).expect("serializes")).expect("write");
    let run = run(["check".as_ref(), "--root".as_ref(), root.path().as_os_str()]);
    run.expect_code(1);
    let lines = drift_lines(&run);
    assert!(
        lines.iter().any(|l| l.contains("1.0: released requirement SESSION-003 changed its level from SHOULD to MUST")),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l.contains("1.0: released requirement SESSION-003 changed its text")), "{lines:#?}");
    assert!(!lines.iter().any(|l| l.contains("1.1/requirements")), "the 1.1 set is untouched: {lines:#?}");
}
