//! The requirement registry: the real spec parses cleanly, every id the code cites is defined
//! with the meaning the code gives it, and every example frame in the spec is valid.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use chatwire_schema::requirements::{self, anchors, from_files, parse, Level, RegistryError, Requirement, SPEC_FILES};
use chatwire_schema::script::AgentScript;
use chatwire_schema::validate::direction_of;
use chatwire_schema::{reduce, ClientFrame, Direction, ErrorCode, FrameError, FrameValidator, ServerFrame, UiState};
use serde_json::Value;

fn registry() -> Vec<Requirement> {
    match requirements::all() {
        Ok(reqs) => reqs,
        Err(e) => panic!("the spec does not parse: {e}"),
    }
}

fn by_id(reqs: &[Requirement]) -> HashMap<&str, &Requirement> {
    reqs.iter().map(|r| (r.id.as_str(), r)).collect()
}

fn spec_file(name: &str) -> &'static str {
    SPEC_FILES.iter().find(|(f, _)| *f == name).map(|(_, md)| *md).unwrap_or_else(|| panic!("{name} is not embedded"))
}

// ---------------------------------------------------------------------------------------------
// The real spec

#[test]
fn real_spec_parses_with_unique_ids_and_every_level() {
    let reqs = registry();
    let mut seen = HashSet::new();
    for r in &reqs {
        assert!(seen.insert(&r.id), "{} defined twice", r.id);
        assert!(!r.text.is_empty(), "{} has no text", r.id);
        assert!(!r.text.contains("**["), "{} swallowed another marker: {}", r.id, r.text);
        assert!(!r.section.is_empty(), "{} is outside any section", r.id);
        assert!(anchors(spec_file(&r.file)).contains(&r.section), "{}: section {} is not an anchor", r.id, r.section);
    }
    for level in [Level::Must, Level::Should, Level::May] {
        assert!(reqs.iter().any(|r| r.level == level), "no {level} requirement");
    }
    assert!(reqs.len() >= 80, "only {} requirements", reqs.len());
}

#[test]
fn every_spec_file_on_disk_is_embedded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec");
    let embedded: HashSet<&str> = SPEC_FILES.iter().map(|(f, _)| *f).collect();
    for entry in std::fs::read_dir(&dir).expect("spec/ exists") {
        let name = entry.expect("readable dir entry").file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            assert!(embedded.contains(name.as_str()), "spec/{name} is not in SPEC_FILES");
        }
    }
}

#[test]
fn untestable_requirements_carry_a_reason_outside_the_text() {
    let reqs = registry();
    let untestable: Vec<&Requirement> = reqs.iter().filter(|r| r.untestable.is_some()).collect();
    assert!(!untestable.is_empty());
    for r in untestable {
        assert!(!r.text.contains("untestable"), "{}: note left in text", r.id);
        assert!(r.untestable.as_deref().is_some_and(|why| why.len() > 10), "{}: reason too short", r.id);
    }
    let random = by_id(&reqs)["SESSION-007"].clone();
    assert!(random.untestable.as_deref().is_some_and(|why| why.contains("randomness")));
}

#[test]
fn requirement_links_point_at_their_section() {
    let reqs = registry();
    let seq = by_id(&reqs)["SEQ-001"];
    assert_eq!(seq.file, "session.md");
    assert_eq!(seq.section, "seq");
    assert_eq!(seq.link(), "spec/session.md#seq");
    assert_eq!(seq.level, Level::Must);
}

// ---------------------------------------------------------------------------------------------
// The parser on synthetic input

#[test]
fn parses_paragraphs_lists_tables_and_levels() {
    let md = "# Top\n\n## Sub `chat.x` (v2)\n\n\
        **[AB-001]** A server MUST do one thing\nacross two lines.\n\n\
        - **[AB-002]** A client SHOULD do another.\n- **[AB-003]** A peer MAY skip it.\n  Continued here.\n\n\
        | code | rule |\n| --- | --- |\n| x | **[AB-004]** A server MUST NOT send x. | trailing |\n\n\
        **[AB-005]** First MAY. **[AB-006]** Second MUST, and MAY too.\n";
    let reqs = parse("f.md", md).expect("parses");
    let got: Vec<(&str, Level, &str)> = reqs.iter().map(|r| (r.id.as_str(), r.level, r.text.as_str())).collect();
    assert_eq!(
        got,
        vec![
            ("AB-001", Level::Must, "A server MUST do one thing across two lines."),
            ("AB-002", Level::Should, "A client SHOULD do another."),
            ("AB-003", Level::May, "A peer MAY skip it. Continued here."),
            ("AB-004", Level::Must, "A server MUST NOT send x."),
            ("AB-005", Level::May, "First MAY."),
            ("AB-006", Level::Must, "Second MUST, and MAY too."),
        ]
    );
    assert!(reqs.iter().all(|r| r.section == "sub-chatx-v2" && r.file == "f.md"));
    assert_eq!(reqs[0].line, 5);
}

#[test]
fn ignores_markers_in_code_and_bold_links() {
    let md = "# A\n\nWrite `**[X-001]**` like this, see **[the spec](x.md)**.\n\n\
        ```text\n**[Bad-1]** inside a fence\n```\n\n**[CD-001]** Then a server MUST act.\n";
    let reqs = parse("f.md", md).expect("parses");
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].id, "CD-001");
}

#[test]
fn splits_off_untestable_note() {
    let md = "# A\n\n**[UT-001]** A server MUST be random. (untestable: randomness cannot be observed)\n";
    let r = &parse("f.md", md).expect("parses")[0];
    assert_eq!(r.text, "A server MUST be random.");
    assert_eq!(r.untestable.as_deref(), Some("randomness cannot be observed"));
}

#[test]
fn malformed_ids_are_refused() {
    for bad in ["Resume-3", "RESUME-03", "RESUME-0003", "RESUME003", "RE5UME-003", "-003", "RESUME-0x3"] {
        let md = format!("# A\n\ntext\n\n**[{bad}]** A server MUST x.\n");
        match parse("f.md", &md) {
            Err(RegistryError::MalformedId { at, found }) => {
                assert_eq!(found, bad);
                assert_eq!((at.file.as_str(), at.line), ("f.md", 5));
            }
            other => panic!("{bad}: expected MalformedId, got {other:?}"),
        }
    }
}

#[test]
fn duplicate_ids_name_both_places() {
    let md = "# A\n\n**[DU-001]** A server MUST x.\n\n**[DU-001]** A server MUST y.\n";
    match parse("f.md", md) {
        Err(e @ RegistryError::DuplicateId { .. }) => {
            assert_eq!(e.to_string(), "duplicate requirement id DU-001: defined at f.md:3 and again at f.md:5");
        }
        other => panic!("expected DuplicateId, got {other:?}"),
    }
    let across =
        from_files(&[("a.md", "# A\n\n**[DU-002]** A MUST.\n"), ("b.md", "# B\n\nx\n\n**[DU-002]** B MAY.\n")]);
    match across {
        Err(RegistryError::DuplicateId { id, first, second }) => {
            assert_eq!(id, "DU-002");
            assert_eq!((first.file.as_str(), first.line, second.file.as_str(), second.line), ("a.md", 3, "b.md", 5));
        }
        other => panic!("expected DuplicateId across files, got {other:?}"),
    }
}

#[test]
fn statements_without_a_keyword_are_refused() {
    // Lowercase "must" is prose, not a keyword.
    let md = "# A\n\n**[NK-001]** A server must do x.\n";
    match parse("f.md", md) {
        Err(RegistryError::MissingLevel { at, id }) => assert_eq!((id.as_str(), at.line), ("NK-001", 3)),
        other => panic!("expected MissingLevel, got {other:?}"),
    }
}

#[test]
fn untestable_without_reason_is_refused() {
    let md = "# A\n\n**[UR-001]** A server MUST x. (untestable: )\n";
    assert!(matches!(parse("f.md", md), Err(RegistryError::EmptyUntestableReason { .. })));
}

#[test]
fn anchors_follow_github_rules() {
    let md = "# Chatwire v1\n## `chat.tool_call`\n## Run slices and completion\n## Notes\n## Notes\n```\n# not a heading\n```\n";
    assert_eq!(anchors(md), vec!["chatwire-v1", "chattool_call", "run-slices-and-completion", "notes", "notes-1"]);
}

// ---------------------------------------------------------------------------------------------
// Cross-references between code and spec

/// Every `PREFIX-NNN` token in a text: uppercase ASCII letters, a hyphen, exactly three digits.
fn requirement_refs(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if starts_word && bytes[i].is_ascii_uppercase() {
            let letters = bytes[i..].iter().take_while(|b| b.is_ascii_uppercase()).count();
            let dash = i + letters;
            let digits_end = dash + 4;
            let is_ref = letters >= 2
                && bytes.get(dash) == Some(&b'-')
                && digits_end <= bytes.len()
                && bytes[dash + 1..digits_end].iter().all(u8::is_ascii_digit)
                && bytes.get(digits_end).is_none_or(|b| !b.is_ascii_alphanumeric());
            if is_ref {
                out.push(text[i..digits_end].to_owned());
                i = digits_end;
                continue;
            }
            i += letters;
            continue;
        }
        i += 1;
    }
    out
}

fn rust_sources() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).expect("readable source dir") {
            let path = entry.expect("readable dir entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("readable source file");
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    assert!(out.len() > 10, "found only {} source files", out.len());
    out
}

#[test]
fn every_id_cited_in_the_code_is_defined() {
    let reqs = registry();
    let ids = by_id(&reqs);
    let mut cited = BTreeSet::new();
    for (path, text) in rust_sources() {
        for r in requirement_refs(&text) {
            assert!(ids.contains_key(r.as_str()), "{} cites {r}, which the spec does not define", path.display());
            cited.insert(r);
        }
    }
    for must in ["SEQ-001", "SESSION-003", "SESSION-008", "TURN-002", "TOOL-004", "TOOL-012", "RUN-006", "MULTI-001"] {
        assert!(cited.contains(must), "the code no longer cites {must}; the scan is broken");
    }
}

#[test]
fn every_id_cited_in_the_spec_is_defined() {
    let reqs = registry();
    let ids = by_id(&reqs);
    for (file, markdown) in SPEC_FILES {
        for r in requirement_refs(markdown) {
            // The README shows the format with made-up ids.
            if *file == "README.md" && (r == "RESUME-003" || r == "PREFIX-NNN") {
                continue;
            }
            assert!(ids.contains_key(r.as_str()), "{file} cites {r}, which the spec does not define");
        }
    }
}

#[test]
fn every_spec_anchor_cited_in_the_code_exists() {
    let files: HashMap<&str, Vec<String>> = SPEC_FILES.iter().map(|(f, md)| (*f, anchors(md))).collect();
    let mut checked = 0;
    for (path, text) in rust_sources() {
        for (at, _) in text.match_indices("spec/") {
            let link: String = text[at + 5..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '#'))
                .collect();
            let Some((file, anchor)) = link.split_once('#') else { continue };
            let known = files.get(file).unwrap_or_else(|| panic!("{} cites spec/{file}", path.display()));
            assert!(
                known.iter().any(|a| a == anchor),
                "{} cites spec/{file}#{anchor}: no such heading",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} anchors found; the scan is broken");
}

#[test]
fn every_link_between_spec_files_resolves() {
    let files: HashMap<&str, Vec<String>> = SPEC_FILES.iter().map(|(f, md)| (*f, anchors(md))).collect();
    for (file, markdown) in SPEC_FILES {
        for (at, _) in markdown.match_indices("](") {
            let target: String = markdown[at + 2..].chars().take_while(|&c| c != ')').collect();
            let (target_file, anchor) = target.split_once('#').unwrap_or((target.as_str(), ""));
            let target_file = if target_file.is_empty() { *file } else { target_file };
            let known = files.get(target_file).unwrap_or_else(|| panic!("{file} links to missing {target}"));
            assert!(
                anchor.is_empty() || known.iter().any(|a| a == anchor),
                "{file} links to {target}: no such heading"
            );
        }
    }
}

/// The rows of the codes table in errors.md: `(code, fatal column, close code column)`.
fn error_table() -> Vec<(String, String, String)> {
    spec_file("errors.md")
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            let code = cells.first()?.strip_prefix('`')?.strip_suffix('`')?;
            Some((code.to_owned(), cells.get(2)?.to_string(), cells.get(3)?.to_string()))
        })
        .filter(|(code, _, _)| code.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .collect()
}

#[test]
fn errors_md_lists_every_code_with_its_fatality() {
    let table = error_table();
    let rows: HashMap<&str, (&str, &str)> =
        table.iter().map(|(c, f, close)| (c.as_str(), (f.as_str(), close.as_str()))).collect();
    assert_eq!(rows.len(), table.len(), "a code is listed twice");
    for code in ErrorCode::ALL {
        let (fatal, close) = rows.get(code.as_str()).unwrap_or_else(|| panic!("errors.md does not list {code}"));
        let expected = if code.is_fatal() { "**yes**" } else { "no" };
        assert_eq!(*fatal, expected, "fatal column of {code}");
        let expected_close = code.close_code().map_or("—".to_owned(), |c| c.code().to_string());
        assert_eq!(*close, expected_close, "close code column of {code}");
    }
    let known: HashSet<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    for (code, _, _) in &table {
        if code != "code" {
            assert!(known.contains(code.as_str()), "errors.md lists {code}, which ErrorCode does not have");
        }
    }
}

/// The close-code table of transport.md lists exactly `CloseCode::ALL`, in order.
#[test]
fn transport_md_lists_every_close_code() {
    let md = spec_file("transport.md");
    let start = md.find("## Close codes").expect("transport.md has a close codes section");
    let listed: Vec<u16> = md[start..]
        .lines()
        .filter_map(|line| line.trim().strip_prefix("| ")?.split(' ').next()?.parse().ok())
        .collect();
    let known: Vec<u16> = chatwire_schema::CloseCode::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(listed, known);
}

/// `(id, variant)` pairs from the `ReduceError` docs: a doc line citing `STATE-NNN` followed by the variant.
fn reduce_error_rules() -> Vec<(String, String)> {
    let source = include_str!("../src/reducer/refusals.rs");
    let start = source.find("pub enum ReduceError {").expect("ReduceError is in reducer/refusals.rs");
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in source[start..].lines().skip(1) {
        let line = line.trim();
        if line == "}" {
            break;
        }
        if line.starts_with("///") {
            if let Some(id) = requirement_refs(line).into_iter().next() {
                pending = Some(id);
            }
        } else if line.chars().next().is_some_and(char::is_uppercase) {
            // A variant line; attributes and fields in between keep the doc's id pending.
            if let Some(id) = pending.take() {
                let variant: String = line.chars().take_while(char::is_ascii_alphanumeric).collect();
                out.push((id, variant));
            }
        }
    }
    out
}

#[test]
fn every_reduce_error_is_a_refusal_of_the_spec() {
    let reqs = registry();
    let ids = by_id(&reqs);
    let rules = reduce_error_rules();
    assert!(rules.len() >= 15, "{rules:?}");
    for (id, variant) in &rules {
        let req = ids.get(id.as_str()).unwrap_or_else(|| panic!("{variant} cites {id}, undefined"));
        assert!(req.text.contains(&format!("`{variant}`")), "{id} does not name `{variant}`: {}", req.text);
        assert_eq!(req.level, Level::Must);
        assert_eq!(req.file, "ui-state.md");
    }
    // Every refusal of the first release keeps its id; later ones only add to the list.
    let cited: HashSet<&str> = rules.iter().map(|(id, _)| id.as_str()).collect();
    for n in 20..=33 {
        let id = format!("STATE-{n:03}");
        assert!(cited.contains(id.as_str()), "no ReduceError variant cites {id}");
    }
    let variants: HashSet<&str> = rules.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(variants.len(), rules.len(), "two variants share a doc line");
}

#[test]
fn every_reducer_rule_names_its_event() {
    let reducer = include_str!("../src/reducer/mod.rs");
    let events = include_str!("../src/ui_event.rs");
    // UiEvent variant -> wire type, from the list that declares UiEvent in ui_event.rs
    // (`"chat.run_started" => RunStarted(RunStarted),`).
    let mut wire_of = HashMap::new();
    for line in events[events.find("ui_events! {").expect("the ui_events! list")..].lines().skip(1) {
        let Some((wire, rest)) = line.trim().split_once(" => ") else { break };
        let Some((variant, _)) = rest.split_once('(') else { break };
        wire_of.insert(variant.to_owned(), wire.trim_matches('"').to_owned());
    }
    assert_eq!(wire_of.len(), chatwire_schema::UiEvent::TYPES.len(), "every event of the list is read");
    let reqs = registry();
    let ids = by_id(&reqs);
    let mut rules = 0;
    let lines: Vec<&str> = reducer.lines().map(str::trim).collect();
    for pair in lines.windows(2) {
        let Some(id) = pair[0].strip_prefix("// ").filter(|c| requirement_refs(c).len() == 1) else { continue };
        let Some(variant) = pair[1].strip_prefix("UiEvent::").and_then(|v| v.split_once('(')).map(|(v, _)| v) else {
            continue;
        };
        let wire = &wire_of[variant];
        let req = ids[id];
        assert!(req.text.starts_with(&format!("Applying `{wire}`")), "{id} is not the rule for {wire}: {}", req.text);
        assert_eq!(req.section, wire.replace('.', ""), "{id} sits under the wrong heading");
        rules += 1;
    }
    assert_eq!(rules, 16);
}

// ---------------------------------------------------------------------------------------------
// Examples

/// Fenced code blocks as `(info string, body, line of the fence)`.
fn code_blocks(markdown: &str) -> Vec<(String, String, usize)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String, usize)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            Some(_) if trimmed.starts_with("```") => out.extend(open.take()),
            Some((_, body, _)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((info.trim().to_owned(), String::new(), i + 1));
                }
            }
        }
    }
    out
}

fn check_frame(validator: &FrameValidator, frame: &Value, at: &str) -> Result<Option<ServerFrame>, String> {
    let wire = frame.get("type").and_then(Value::as_str).ok_or_else(|| format!("{at}: frame without type"))?;
    let direction = direction_of(wire).ok_or_else(|| format!("{at}: unknown type {wire}"))?;
    let invalid = |e: FrameError| format!("{at}: invalid {wire}: {e}");
    match direction {
        Direction::ServerToClient => validator.from_value(direction, frame.clone()).map(Some).map_err(invalid),
        Direction::ClientToServer => {
            validator.from_value::<ClientFrame>(direction, frame.clone()).map(|_| None).map_err(invalid)
        }
    }
}

/// Checks a sequence of frames the way the conformance runner does: `seq` grows, every event
/// is accepted by the reducer, every `ui_state_updated` equals the fold since the last state frame.
/// Returns how many states it compared.
fn check_transcript(validator: &FrameValidator, body: &str, at: &str) -> Result<usize, String> {
    let mut last_seq = 0;
    let mut model: Option<UiState> = None;
    let mut compared = 0;
    for (n, line) in body.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let at = format!("{at} frame {}", n + 1);
        let value: Value = serde_json::from_str(line).map_err(|e| format!("{at}: not JSON: {e}"))?;
        let Some(frame) = check_frame(validator, &value, &at)? else { continue };
        if let Some(seq) = frame.seq() {
            if seq <= last_seq {
                return Err(format!("{at}: seq {seq} after {last_seq}"));
            }
            last_seq = seq;
        }
        match &frame {
            ServerFrame::UiStateSnapshot(s) => model = Some(s.state.clone()),
            ServerFrame::UiStateUpdated(u) => {
                if let Some(expected) = &model {
                    if &u.state != expected {
                        return Err(format!("{at}: ui_state_updated differs from the reducer's fold"));
                    }
                    compared += 1;
                }
                model = Some(u.state.clone());
            }
            _ => {
                if let (Some(state), Some(event)) = (&model, frame.ui_event()) {
                    model = Some(reduce(state, event).map_err(|e| format!("{at}: reducer refuses: {e}"))?);
                }
            }
        }
    }
    Ok(compared)
}

#[test]
fn every_example_in_the_spec_is_valid() {
    let validator = FrameValidator::new();
    let mut frames = 0;
    let mut compared = 0;
    for (file, markdown) in SPEC_FILES {
        for (info, body, line) in code_blocks(markdown) {
            let at = format!("{file}:{line}");
            match info.split_whitespace().next() {
                Some("json") => {
                    let value: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{at}: not JSON: {e}"));
                    if value.get("turns").is_some() {
                        let script: AgentScript =
                            serde_json::from_value(value).unwrap_or_else(|e| panic!("{at}: not an AgentScript: {e}"));
                        script.validate().unwrap_or_else(|e| panic!("{at}: invalid script: {e}"));
                    } else {
                        check_frame(&validator, &value, &at).unwrap_or_else(|e| panic!("{e}"));
                    }
                    frames += 1;
                }
                Some("jsonl") => {
                    compared += check_transcript(&validator, &body, &at).unwrap_or_else(|e| panic!("{e}"));
                    frames += body.lines().filter(|l| !l.trim().is_empty()).count();
                }
                _ => {}
            }
        }
    }
    assert!(frames > 50, "only {frames} example frames");
    assert!(compared >= 15, "only {compared} states compared with the reducer");
}

#[test]
fn transcript_check_catches_a_wrong_state() {
    let validator = FrameValidator::new();
    let body = concat!(
        r#"{"type": "ui_state_snapshot", "seq": 2, "v": "ui_state_v1", "state": {"items": [], "run": {"status": "idle"}}}"#,
        "\n",
        r#"{"type": "chat.user_message_accepted", "seq": 3, "in_reply_to": "m-1", "invocation_id": "inv-1", "item_id": "item-1", "text": "Hi", "ts": "2026-01-15T10:00:00Z"}"#,
        "\n",
        r#"{"type": "ui_state_updated", "seq": 4, "v": "ui_state_v1", "state": {"items": [], "run": {"status": "idle"}}}"#,
        "\n",
    );
    let error = check_transcript(&validator, body, "synthetic").expect_err("an update that ignores the event");
    assert!(error.contains("frame 3") && error.contains("differs"), "{error}");
    let reordered = body.replace("\"seq\": 4", "\"seq\": 3");
    let error = check_transcript(&validator, &reordered, "synthetic").expect_err("a repeated seq");
    assert!(error.contains("seq 3 after 3"), "{error}");
}

proptest::proptest! {
    /// Any text, however broken its Markdown, yields requirements or a typed error, never a panic.
    #[test]
    fn parse_never_panics(text in "([#*`|\\[\\]()\\- \n]|MUST|SHOULD|MAY|AB-001|untestable:|é|x){0,80}") {
        if let Ok(reqs) = parse("p.md", &text) {
            for r in reqs {
                proptest::prop_assert!(r.line >= 1);
                let (prefix, number) = r.id.split_once('-').expect("a parsed id has a hyphen");
                proptest::prop_assert!(prefix.bytes().all(|b| b.is_ascii_uppercase()) && number.len() == 3);
                proptest::prop_assert!(!r.text.is_empty());
            }
        }
    }
}
