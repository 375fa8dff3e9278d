//! The binary as users run it: subcommands, exit codes, report files, `--exec`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_chatwire-conformance"));
    c.env("NO_COLOR", "1");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatwire-conformance-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn list_shows_every_scenario_with_level_capabilities_and_requirements() {
    let o = run(&["list"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("rewind-basic"), "{out}");
    assert!(out.contains("rewind,conformance_script"), "{out}");
    assert!(out.contains("REWIND-003"), "{out}");
    let all = chatwire_conformance::catalog::embedded_scenarios().expect("embedded scenarios parse");
    assert!(out.contains(&format!("\n{} scenario(s)", all.len())), "{out}");
    let hitl = all.iter().filter(|s| s.id.starts_with("hitl-")).count();
    assert!(hitl >= 3);
    let o = run(&["list", "--scenario", "hitl-*"]);
    assert!(text(&o).contains(&format!("\n{hitl} scenario(s)")), "{}", text(&o));
}

#[test]
fn requirements_lists_coverage_and_uncovered_musts_last() {
    let o = run(&["requirements"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("REWIND-003"), "{out}");
    // Each requirement lists the checks that assert it: steps by scenario, and always-on checks.
    assert!(out.contains("rewind-basic / step-15-expect"), "{out}");
    assert!(out.contains("checks: always-on seq-increasing"), "{out}");
    assert!(out.contains("MUST claimed by a scenario but asserted by no check"), "{out}");
    let must_section = out.rfind("uncovered MUST").expect("an uncovered MUST section");
    assert!(must_section > out.find("SEQ-001").unwrap(), "uncovered MUSTs come last");
    assert!(!out.contains("scenarios name ids the spec does not define"), "{out}");
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    use std::io::Read as _;
    use std::process::Stdio;
    for args in [&["list"][..], &["requirements"][..], &["--help"][..]] {
        let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns");
        // Read one byte, then close the pipe, like `| head -c1`.
        let mut stdout = child.stdout.take().expect("piped");
        let mut one = [0u8; 1];
        let _ = stdout.read(&mut one);
        drop(stdout);
        let out = child.wait_with_output().expect("exits");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.status.code().is_none_or(|c| c == 0), "{args:?}: {:?} {stderr}", out.status);
    }
}

#[test]
fn check_log_checks_a_recorded_log_with_the_exit_codes_of_run() {
    let hello = r#"{"conn":0,"from":"client","frame":{"type":"session.hello","id":"h1","versions":["1.0"]}}"#;
    let welcome = r#"{"conn":0,"from":"server","frame":{"type":"session.welcome","seq":1,"in_reply_to":"h1","version":"1.0","session_id":"s-1","resume_token":"t-1","resumed":false,"capabilities":[],"limits":{"max_frame_bytes":1048576}}}"#;
    let snapshot = r#"{"conn":0,"from":"server","at_ms":2,"frame":{"type":"ui_state_snapshot","seq":2,"v":"ui_state_v1","state":{"items":[],"run":{"status":"idle"}}}}"#;
    let clean = [hello, welcome, snapshot, r#"{"conn":0,"from":"client","event":"close","code":1000}"#].join("\n");
    let good = temp("good.jsonl");
    std::fs::write(&good, clean + "\n").unwrap();
    let o = run(&["check-log", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // The same session, then an event whose seq goes back and a close after a non-fatal error.
    let bad_event = r#"{"conn":0,"from":"server","frame":{"type":"error","seq":2,"code":"invalid_frame","message":"bad","fatal":false}}"#;
    let broken =
        [hello, welcome, snapshot, bad_event, r#"{"conn":0,"from":"server","event":"close","code":1000}"#].join("\n");
    let bad = temp("bad.jsonl");
    std::fs::write(&bad, broken + "\n").unwrap();
    let report = temp("check-log.json");
    let o = run(&["check-log", bad.to_str().unwrap(), "--report-json", report.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("[SEQ-001]") && out.contains("[ERROR-003]"), "{out}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["exit_code"], 1);

    let junk = temp("junk.jsonl");
    std::fs::write(&junk, "{\"conn\":0}\n").unwrap();
    let o = run(&["check-log", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("line 1:"), "{}", text(&o));
    let o = run(&["check-log", "/nonexistent/log.jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["run", "--scenario", "no-such-*", "--url", "ws://127.0.0.1:9/ws"]).status.code(), Some(2));
    assert_eq!(run(&["run", "--jobs", "0"]).status.code(), Some(2));
    assert_eq!(run(&["run", "--timeout-scale", "-1"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let bad = temp("bad-baseline.json");
    std::fs::write(&bad, "{}").unwrap();
    let o = run(&["run", "--baseline", bad.to_str().unwrap(), "--url", "ws://127.0.0.1:9/ws"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert_eq!(run(&["run", "--scenarios-dir", "/nonexistent-dir"]).status.code(), Some(2));
}

#[test]
fn an_unreachable_backend_exits_3() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let o = run(&["run", "--url", &format!("ws://127.0.0.1:{port}/ws"), "--scenario", "turn-say-completed"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let o = run(&["run", "--exec", "exit 1", "--scenario", "turn-say-completed"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

#[test]
fn a_backend_that_is_not_a_websocket_server_is_a_backend_error_not_a_fail() {
    // Accepts TCP on {port} (so it looks ready) but answers the handshake with HTTP 404.
    let o = run(&[
        "run",
        "--exec",
        "exec python3 -m http.server {port} --bind 127.0.0.1",
        "--scenario",
        "turn-say-completed",
        "--scenario",
        "hitl-submit",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("the backend could not be reached"), "{out}");
    assert!(out.contains("is a Chatwire WebSocket server listening at that path?"), "{out}");
    assert!(!out.contains("FAIL"), "no scenario is charged with it: {out}");

    // An HTTP/1.1 server that refuses the upgrade, at --url: the status is named.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        use std::io::{Read as _, Write as _};
        let (mut stream, _) = listener.accept().expect("the runner connects");
        stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    let o = run(&["run", "--url", &format!("ws://127.0.0.1:{port}/ws"), "--scenario", "turn-say-completed"]);
    let out = text(&o);
    server.join().unwrap();
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("refused the websocket handshake") && out.contains("HTTP 404"), "{out}");
    assert!(!out.contains("FAIL"), "{out}");
}

#[test]
fn an_unknown_reference_fault_is_a_usage_error_that_lists_the_faults() {
    let o = run(&["run", "--reference-fault", "nope", "--scenario", "turn-say-completed"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("unknown fault \"nope\""), "{out}");
    for fault in chatwire_reference::fault::Fault::ALL {
        assert!(out.contains(fault.name()), "{} is not listed: {out}", fault.name());
    }
    assert!(!out.contains("--list-faults"), "a flag of the other binary: {out}");
    // A known fault gets as far as a run (and fails it): the check above refuses only unknown names.
    let o = run(&["run", "--reference-fault", "rewind-not-persisted", "--scenario", "rewind-survives-restart"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn exec_runs_the_backend_and_writes_json_and_junit_reports() {
    let json = temp("report.json");
    let junit = temp("junit.xml");
    let exec = format!(
        "{} __reference serve --addr 127.0.0.1:{{port}} --db {{db}} --conformance",
        env!("CARGO_BIN_EXE_chatwire-conformance")
    );
    let o = run(&[
        "run",
        "--exec",
        &exec,
        "--scenario",
        "restart-resume",
        "--scenario",
        "hitl-submit",
        "--jobs",
        "2",
        "--timeout-scale",
        "3",
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  restart-resume"), "{out}");
    assert!(out.contains("result: conformant (exit 0)"), "{out}");

    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema_doc =
        chatwire_conformance::schemas::all().into_iter().find(|d| d.file == "conformance-report.json").unwrap();
    let validator = jsonschema::draft202012::new(&schema_doc.schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&report).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    // restart-resume resumes with the default cursor, so it also runs as restart-resume@reload.
    assert_eq!(report["summary"]["pass"], 3);
    assert_eq!(report["exit_code"], 0);

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuite name=\"restart-resume\""), "{xml}");
    assert!(xml.contains("name=\"seq-increasing\""), "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
}

#[test]
fn scenarios_outside_conformance_mode_use_plain_exec_and_are_na_without_it() {
    let exe = env!("CARGO_BIN_EXE_chatwire-conformance");
    let exec = format!("{exe} __reference serve --addr 127.0.0.1:{{port}} --db {{db}} --conformance");
    let plain = format!("{exe} __reference serve --addr 127.0.0.1:{{port}} --db {{db}}");
    let scenarios = ["--scenario", "script-refused-outside-conformance", "--scenario", "script-capability-listed"];
    let mut args = vec!["run", "--exec", &exec, "--timeout-scale", "3"];
    args.extend(scenarios);
    let o = run(&args);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  script-capability-listed"), "{out}");
    assert!(out.contains("N/A   script-refused-outside-conformance"), "{out}");
    assert!(out.contains("--plain-url or --plain-exec"), "{out}");

    args.extend(["--plain-exec", &plain]);
    let o = run(&args);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("PASS  script-refused-outside-conformance"), "{out}");

    // Named the wrong way round (the conformance-mode instance as the plain one), it fails.
    let mut swapped = vec!["run", "--exec", &exec, "--plain-exec", &exec, "--timeout-scale", "3"];
    swapped.extend(scenarios);
    let o = run(&swapped);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  script-refused-outside-conformance"), "{out}");
    assert!(out.contains("SCRIPT-003"), "{out}");
}

#[test]
fn a_baseline_entry_for_a_passing_check_is_stale_and_fails_the_run() {
    let baseline = temp("stale-baseline.json");
    std::fs::write(
        &baseline,
        r#"[{"scenario": "turn-say-completed", "check": "seq-increasing", "reason": "was broken once"}]"#,
    )
    .unwrap();
    let o = run(&[
        "run",
        "--scenario",
        "turn-say-completed",
        "--timeout-scale",
        "3",
        "--baseline",
        baseline.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("stale baseline entry turn-say-completed/seq-increasing: now pass"), "{out}");
}

#[test]
fn snapshot_differences_print_a_line_diff() {
    // A copy of the golden snapshots with one changed line: the CLI reports a readable diff.
    let dir = temp("snapshots-changed");
    std::fs::create_dir_all(&dir).unwrap();
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/snapshots/turn-say-completed__final.snap");
    let original = std::fs::read_to_string(&golden).expect("the golden snapshot is committed");
    let changed = original.replace("Hello from the script.", "Hello from somewhere else.");
    assert_ne!(original, changed);
    std::fs::write(dir.join("turn-say-completed__final.snap"), changed).unwrap();
    let o = run(&[
        "run",
        "--scenario",
        "turn-say-completed",
        "--timeout-scale",
        "3",
        "--snapshots-dir",
        dir.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("snapshot-final"), "{out}");
    let removed =
        out.lines().position(|l| l.trim_start().starts_with('-') && l.contains("\"Hello from somewhere else.\""));
    let added = out.lines().position(|l| l.trim_start().starts_with('+') && l.contains("\"Hello from the script.\""));
    assert!(matches!((removed, added), (Some(r), Some(a)) if r + 1 == a), "golden line, then actual line: {out}");
}

#[test]
fn sweep_prints_a_summary_line_and_puts_the_variants_in_both_reports() {
    let json = temp("sweep.json");
    let junit = temp("sweep.xml");
    let o = run(&[
        "run",
        "--sweep",
        "--sweep-max",
        "2",
        "--scenario",
        "hitl-submit",
        "--scenario",
        "restart-resume",
        "--timeout-scale",
        "3",
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("sweep: 1 scenarios, 2 variants, 0 failed (1 selected scenario(s) not sweepable, n/a)"),
        "{out}"
    );
    assert!(out.contains("hitl-submit@cut-02"), "{out}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["sweep"]["variants"], 2);
    let ids: Vec<&str> = report["scenarios"].as_array().unwrap().iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids, vec!["hitl-submit", "hitl-submit@cut-01", "hitl-submit@cut-02", "restart-resume"]);
    assert_eq!(report["scenarios"][1]["sweep"]["cut_after_frame"], 1);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("testsuite name=\"hitl-submit@cut-01\""), "{xml}");
    // --sweep-max without --sweep is a usage error.
    assert_eq!(run(&["run", "--sweep-max", "3"]).status.code(), Some(2));
}

#[test]
fn features_beside_a_version_below_1_1_are_refused_before_anything_runs() {
    // SESSION-014 is a client rule, and the runner is the client: it refuses the combination itself.
    for offer in ["1.1,1.0", "1.0"] {
        let o = run(&["run", "--versions", offer, "--features", "ui_state_patch", "--url", "ws://127.0.0.1:9/ws"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let out = text(&o);
        assert!(out.contains("SESSION-014") && out.contains("--features"), "{out}");
    }
    let o = run(&["run", "--versions", "1.x", "--url", "ws://127.0.0.1:9/ws"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not a protocol version"), "{}", text(&o));
    // Accepted offers get as far as the (unreachable) backend: exit 3, and the offer is announced.
    let o =
        run(&["run", "--versions", "1.1", "--features", "", "--url", "ws://127.0.0.1:9/ws", "--scenario", "turn-*"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("offering [1.1], features []"), "{}", text(&o));
}

#[test]
fn the_readme_first_backend_path_names_real_scenarios() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).expect("README.md");
    let ids: Vec<String> = chatwire_conformance::catalog::embedded_scenarios()
        .expect("embedded scenarios")
        .into_iter()
        .map(|s| s.id)
        .collect();
    let named: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("suite --scenario "))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|name| !name.contains('*'))
        .collect();
    assert!(named.len() >= 5, "the README's first-backend path lists its scenarios: {named:?}");
    for name in named {
        assert!(ids.iter().any(|id| id == name), "README.md names {name}, which is no scenario");
    }
}

#[test]
fn a_feature_the_backend_does_not_offer_is_reported_not_offered_and_both_counts_agree() {
    let json = temp("not-offered.json");
    // No connection asks for state_window or multi_attach (the reference cannot withhold them):
    // neither is in force anywhere, as against a 1.2 backend implementing neither.
    let o = run(&[
        "run",
        "--versions",
        "1.2",
        "--features",
        "assistant_stream,cancel,resume_catch_up,retry,ui_state_patch",
        "--scenario",
        "window-not-in-force",
        "--scenario",
        "restart-resume",
        "--timeout-scale",
        "3",
        "--report-json",
        json.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    // restart-resume also runs as restart-resume@reload: the header and the result name both counts.
    assert!(out.contains("chatwire-conformance: 3 runs (2 scenarios and 1 @reload variants) against "), "{out}");
    assert!(out.contains("\n3 runs (2 scenarios and 1 @reload variants) against "), "{out}");
    // WINDOW-007 (refuse a history request) binds a server without state_window: counted, but
    // under a line that says the feature was not offered.
    assert!(out.contains("state_window: not offered (MUST "), "{out}");
    assert!(!out.contains("recap"), "a passing run has no recap: {out}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["summary"]["reload_variants"], 1);
    let groups = report["levels"].as_array().unwrap().iter().flat_map(|v| v["groups"].as_array().unwrap().iter());
    let window: Vec<&serde_json::Value> = groups.filter(|g| g["group"] == "state_window").collect();
    assert!(!window.is_empty() && window.iter().all(|g| g["in_force"] == false), "{window:?}");
}

#[test]
fn a_failing_run_ends_with_a_recap_naming_scenario_check_and_requirement() {
    let o = run(&[
        "run",
        "--reference-fault",
        "corr-mismatch",
        "--scenario",
        "multi-tool-progress-and-failure",
        "--timeout-scale",
        "3",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let recap = out.rfind("\nrecap, one line per check that did not pass (").expect("a recap");
    let result = out.rfind("\nresult: NOT conformant (exit 1)").expect("a result line");
    assert!(recap < result, "the recap comes right before the result: {out}");
    let lines: Vec<&str> = out[recap..result].lines().skip(2).collect();
    assert!(!lines.is_empty(), "{out}");
    for line in lines {
        assert!(line.starts_with("  FAIL multi-tool-progress-and-failure") && line.contains(" / "), "{line}");
    }
    assert!(out[recap..result].contains(" [TOOL-004]: "), "{out}");
}

/// The bundled backend (`__reference`) goes when the process that started it goes: a runner killed
/// by a signal leaves no server behind. Here its parent is a shell that starts it in the
/// background, waits until it serves (so that the shell is the parent it saw) and exits.
#[cfg(unix)]
#[test]
fn the_bundled_backend_exits_when_the_runner_that_started_it_is_gone() {
    let exe = env!("CARGO_BIN_EXE_chatwire-conformance");
    let log = temp("parent-watch.log");
    let log = log.display();
    // The shell waits (at most 30 s) for the backend's URL, printed once it has seen its parent.
    let script = format!(
        "'{exe}' __reference serve --addr 127.0.0.1:0 --db :memory: >'{log}' 2>&1 & pid=$!; \
         for _ in $(seq 300); do grep -q ws:// '{log}' && break; sleep 0.1; done; echo $pid"
    );
    let out = Command::new("sh").arg("-c").arg(script).output().expect("sh runs");
    let pid: i32 = text(&out).trim().parse().expect("the shell printed the backend's pid");
    let alive = || Command::new("kill").args(["-0", &pid.to_string()]).status().is_ok_and(|s| s.success());
    // Bounded: the backend looks for its parent twice a second.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let survived = alive();
    if survived {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(!survived, "the bundled backend {pid} outlived its parent by 30 s");
}
