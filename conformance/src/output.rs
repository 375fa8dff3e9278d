//! Human and CI renderings of a run: terminal lines (with colour when wanted), JUnit XML.

use std::fmt::Write as _;

use crate::report::{CheckReport, RunReport, ScenarioReport, Verdict, RELOAD_SUFFIX};

/// Terminal styling: colour only when asked for (a TTY and no `NO_COLOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Whether to use ANSI colours.
    pub colour: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Style {
        use std::io::IsTerminal;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style { colour: !no_color && std::io::stdout().is_terminal() }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// The verdict as a fixed-width, possibly coloured tag.
    pub fn verdict(self, v: Verdict) -> String {
        let (code, tag) = match v {
            Verdict::Pass => ("32", "PASS "),
            Verdict::Warn => ("33", "WARN "),
            Verdict::NotApplicable => ("2", "N/A  "),
            Verdict::Timeout => ("31", "TIME "),
            Verdict::Fail => ("31;1", "FAIL "),
            Verdict::HarnessError => ("35", "HARN "),
        };
        self.paint(code, tag)
    }

    fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

/// The line printed when a scenario finishes, plus the details of whatever did not pass.
pub fn scenario_block(style: Style, report: &ScenarioReport, done: usize, total: usize) -> String {
    let width = total.to_string().len();
    let mut out = format!(
        "[{done:>width$}/{total}] {} {}  {}  {}",
        style.verdict(report.verdict),
        report.id,
        style.dim(&format!("{} ms", report.duration_ms)),
        style.dim(&report.title),
    );
    for check in report.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
        if report.verdict == Verdict::NotApplicable && check.verdict == Verdict::NotApplicable {
            if let Some(f) = check.findings.first() {
                let _ = write!(out, "\n      {}", style.dim(&f.message));
            }
            continue;
        }
        out.push_str(&check_block(style, &report.id, check));
    }
    if let Some(stderr) = &report.backend_stderr {
        let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
        let _ = write!(out, "\n      backend stderr (last lines):");
        for line in tail.into_iter().rev() {
            let _ = write!(out, "\n        {}", style.dim(line));
        }
    }
    out
}

/// The line printed when a sweep variant finishes, plus the details of whatever did not pass.
pub fn variant_block(style: Style, report: &ScenarioReport) -> String {
    let mut out = format!(
        "      {} {}  {}",
        style.verdict(report.verdict),
        report.id,
        style.dim(&format!("{} ms", report.duration_ms))
    );
    for check in report.checks.iter().filter(|c| c.verdict != Verdict::Pass) {
        out.push_str(&check_block(style, &report.id, check));
    }
    out
}

fn check_block(style: Style, scenario: &str, check: &CheckReport) -> String {
    let mut out = String::new();
    let baselined = check.baselined.as_ref().map(|r| format!(" (baselined: {r})")).unwrap_or_default();
    let errata = errata_note(check);
    let _ = write!(
        out,
        "\n      {} {scenario} / {} [{}]{baselined}{errata}",
        style.verdict(check.verdict).trim_end(),
        check.id,
        check.charged_requirements().join(", ")
    );
    for f in &check.findings {
        let step = f.step.map(|s| format!("step {s}: ")).unwrap_or_default();
        let req = f.requirement.as_ref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let mut lines = f.message.lines();
        let first = lines.next().unwrap_or_default();
        let _ = write!(out, "\n        {step}{first}{req}");
        for line in lines {
            let _ = write!(out, "\n          {line}");
        }
        if let Some(frame) = &f.frame {
            let _ = write!(out, "\n          frame: {}", style.dim(frame));
        }
    }
    if check.findings_dropped > 0 {
        let _ = write!(out, "\n        … and {} more", check.findings_dropped);
    }
    out
}

/// What a check failed on errata only says about it: ` (errata only: INT-002: erratum to 1.0 of
/// 2026-11-23; fails with --strict)`, empty for any other check.
fn errata_note(check: &CheckReport) -> String {
    if check.errata.is_empty() {
        return String::new();
    }
    let effect = if check.verdict == Verdict::Warn { "fails with --strict" } else { "failed: --strict" };
    format!(" (errata only: {}; {effect})", check.errata.join(", "))
}

/// The closing summary.
pub fn summary_block(style: Style, report: &RunReport) -> String {
    let s = &report.summary;
    let mut parts = vec![format!("{} pass", s.pass)];
    for (n, label) in [
        (s.fail, "fail"),
        (s.timeout, "timeout"),
        (s.warn, "warn"),
        (s.not_applicable, "n/a"),
        (s.harness_error, "harness-error"),
        (s.baselined, "baselined check(s)"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    let mut out = format!(
        "\n{} against {}: {} in {:.1} s",
        run_count(s.scenarios, s.reload_variants),
        report.target,
        parts.join(", "),
        report.duration_ms as f64 / 1000.0
    );
    if let Some(sweep) = &report.sweep {
        let _ = write!(
            out,
            "\nsweep: {} scenarios, {} variants, {} failed{}",
            sweep.scenarios,
            sweep.variants,
            sweep.failed,
            if sweep.not_sweepable > 0 {
                format!(" ({} selected scenario(s) not sweepable, n/a)", sweep.not_sweepable)
            } else {
                String::new()
            }
        );
    }
    for levels in &report.levels {
        let _ = write!(out, "\n{}: {}", crate::errata::heading(levels), crate::errata::line(levels));
    }
    for stale in &report.stale_baseline {
        let _ = write!(
            out,
            "\n{} stale baseline entry {}/{}: now {} (reason was: {}) — remove it",
            style.verdict(Verdict::Fail).trim_end(),
            stale.scenario,
            stale.check,
            stale.now,
            stale.reason
        );
    }
    out.push_str(&recap_block(style, report));
    let verdict = match report.exit_code {
        0 => style.paint("32", "conformant"),
        1 => style.paint("31;1", "NOT conformant"),
        _ => style.paint("35", "harness error: results incomplete"),
    };
    let _ = write!(out, "\nresult: {verdict} (exit {})", report.exit_code);
    out
}

/// What a run ran: `150 scenario(s)`, or `196 runs (150 scenarios and 46 @reload variants)` when
/// `reload_variants` of the `runs` are `<id>@reload` variants of the others (the docs' wording).
pub fn run_count(runs: usize, reload_variants: usize) -> String {
    match reload_variants {
        0 => format!("{runs} scenario(s)"),
        n => format!("{runs} runs ({} scenarios and {n} {RELOAD_SUFFIX} variants)", runs.saturating_sub(n)),
    }
}

/// The longest message a recap line quotes, in characters.
const RECAP_MESSAGE_CHARS: usize = 160;

/// The recap that ends the terminal report: every check that failed, timed out, could not run or
/// warned (baselined ones apart), one line each, in report order: `FAIL scenario / check [ids]:
/// step 4: its first finding's first line`. Empty when there is none.
pub fn recap_block(style: Style, report: &RunReport) -> String {
    let mut lines = Vec::new();
    let mut counts: Vec<(Verdict, usize)> =
        [Verdict::Fail, Verdict::Timeout, Verdict::HarnessError, Verdict::Warn].map(|v| (v, 0)).to_vec();
    for scenario in &report.scenarios {
        for check in scenario.checks.iter().filter(|c| recapped(c)) {
            if let Some((_, n)) = counts.iter_mut().find(|(v, _)| *v == check.verdict) {
                *n += 1;
            }
            let ids = check.charged_requirements();
            let ids = if ids.is_empty() { "no requirement".to_owned() } else { ids.join(", ") };
            let what = check.findings.first().map_or_else(
                || check.summary.clone(),
                |f| {
                    let step = f.step.map(|s| format!("step {s}: ")).unwrap_or_default();
                    format!("{step}{}", f.message.lines().next().unwrap_or_default())
                },
            );
            lines.push(format!(
                "\n  {} {} / {} [{ids}]: {}",
                style.verdict(check.verdict).trim_end(),
                scenario.id,
                check.id,
                shorten(&what, RECAP_MESSAGE_CHARS)
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let counts: Vec<String> =
        counts.iter().filter(|(_, n)| *n > 0).map(|(v, n)| format!("{n} {}", v.as_str())).collect();
    format!("\nrecap, one line per check that did not pass ({}):{}", counts.join(", "), lines.concat())
}

/// Whether a check belongs in the recap: not passing, not n/a, and not excused by the baseline.
fn recapped(check: &CheckReport) -> bool {
    match check.verdict {
        Verdict::Pass | Verdict::NotApplicable => false,
        Verdict::Fail | Verdict::Timeout => check.baselined.is_none(),
        Verdict::Warn | Verdict::HarnessError => true,
    }
}

/// `text` cut to `max` characters, ending in `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The run as JUnit XML: one testsuite per scenario, one testcase per check.
pub fn junit(report: &RunReport) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let count = |pred: &dyn Fn(&CheckReport) -> bool| -> usize {
        report.scenarios.iter().flat_map(|s| s.checks.iter()).filter(|c| pred(c)).count()
    };
    let tests = count(&|_| true);
    let failures = count(&|c| c.verdict.is_failure() && c.baselined.is_none());
    let errors = count(&|c| c.verdict == Verdict::HarnessError);
    let skipped = count(&|c| c.verdict == Verdict::NotApplicable || (c.verdict.is_failure() && c.baselined.is_some()));
    let _ = writeln!(
        out,
        "<testsuites name=\"chatwire-conformance\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{:.3}\">",
        report.duration_ms as f64 / 1000.0
    );
    for s in &report.scenarios {
        let n = |pred: &dyn Fn(&CheckReport) -> bool| s.checks.iter().filter(|c| pred(c)).count();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            xml(&s.id),
            s.checks.len(),
            n(&|c| c.verdict.is_failure() && c.baselined.is_none()),
            n(&|c| c.verdict == Verdict::HarnessError),
            n(&|c| c.verdict == Verdict::NotApplicable || (c.verdict.is_failure() && c.baselined.is_some())),
            s.duration_ms as f64 / 1000.0
        );
        let _ = writeln!(out, "    <properties>");
        let _ = writeln!(out, "      <property name=\"title\" value=\"{}\"/>", xml(&s.title));
        let _ = writeln!(out, "      <property name=\"level\" value=\"{}\"/>", crate::level::name(s.level));
        let _ = writeln!(out, "      <property name=\"requirements\" value=\"{}\"/>", xml(&s.requirements.join(" ")));
        let _ = writeln!(out, "      <property name=\"verdict\" value=\"{}\"/>", s.verdict.as_str());
        let _ = writeln!(out, "    </properties>");
        for c in &s.checks {
            let _ = write!(out, "    <testcase classname=\"{}\" name=\"{}\"", xml(&s.id), xml(&c.id));
            let body = details(c);
            let message = c
                .findings
                .first()
                .map_or_else(|| c.summary.clone(), |f| f.message.lines().next().unwrap_or("").to_owned());
            match (c.verdict, &c.baselined) {
                (Verdict::Pass, _) => {
                    let _ = writeln!(out, "/>");
                }
                (Verdict::Fail | Verdict::Timeout, Some(reason)) => {
                    let _ = writeln!(
                        out,
                        ">\n      <skipped message=\"expected failure (baseline): {}\"/>\n    </testcase>",
                        xml(reason)
                    );
                }
                (Verdict::Fail | Verdict::Timeout, None) => {
                    let _ = writeln!(
                        out,
                        ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                        c.verdict.as_str(),
                        xml(&message),
                        xml(&body)
                    );
                }
                (Verdict::HarnessError, _) => {
                    let _ = writeln!(
                        out,
                        ">\n      <error type=\"harness-error\" message=\"{}\">{}</error>\n    </testcase>",
                        xml(&message),
                        xml(&body)
                    );
                }
                (Verdict::NotApplicable, _) => {
                    let _ = writeln!(out, ">\n      <skipped message=\"n/a: {}\"/>\n    </testcase>", xml(&message));
                }
                (Verdict::Warn, _) => {
                    let _ = writeln!(out, ">\n      <system-out>warning: {}</system-out>\n    </testcase>", xml(&body));
                }
            }
        }
        if let Some(stderr) = &s.backend_stderr {
            let _ = writeln!(out, "    <system-err>{}</system-err>", xml(stderr));
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    if !report.levels.is_empty() {
        // The result per level: properties of a suite with no test case of its own.
        let _ = writeln!(
            out,
            "  <testsuite name=\"requirement-levels\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\">"
        );
        let _ = writeln!(out, "    <properties>");
        let _ = writeln!(out, "      <property name=\"strict\" value=\"{}\"/>", report.strict);
        for levels in &report.levels {
            let line = crate::errata::line(levels);
            let _ = writeln!(out, "      <property name=\"{}\" value=\"{}\"/>", xml(&levels.version), xml(&line));
        }
        let _ = writeln!(out, "    </properties>");
        let _ = writeln!(out, "  </testsuite>");
    }
    let _ = writeln!(out, "</testsuites>");
    out
}

fn details(c: &CheckReport) -> String {
    let mut s = format!("{}\nrequirements: {}\n", c.summary, c.requirements.join(", "));
    if !c.errata.is_empty() {
        let _ = writeln!(s, "errata only: {}", c.errata.join(", "));
    }
    for f in &c.findings {
        if let Some(step) = f.step {
            let _ = write!(s, "step {step}: ");
        }
        let _ = writeln!(s, "{}", f.message);
        if let Some(r) = &f.requirement {
            let _ = writeln!(s, "  requirement: {r}");
        }
        if let Some(frame) = &f.frame {
            let _ = writeln!(s, "  frame: {frame}");
        }
    }
    s
}

/// Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || matches!(c as u32, 0xFFFE | 0xFFFF) || c == '\u{1b}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
