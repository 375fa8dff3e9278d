//! The page of one run: what was tested, the versions and features in force, the result per level
//! of each negotiated version with its release and errata, the failures with their frames, and
//! every requirement a check named, linked to its text in the spec.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chatwire_schema::requirement_sets::release_date;
use chatwire_schema::requirements::Requirement;
use chatwire_schema::ProtocolVersion;

use super::badge::Badge;
use super::html::{esc, page, spec_href, verdict_html};
use super::Certified;
use crate::errata::VersionLevels;
use crate::report::{CheckReport, ScenarioReport, Verdict};

/// Where the page's links to the spec point, and where its badges are, relative to the page.
pub struct Links<'a> {
    /// The spec's location: `{spec_base}spec/<file>#<section>` is a requirement's text.
    pub spec_base: &'a str,
    /// The directory of the badges, relative to the page (`badges/`).
    pub badges: &'a str,
}

/// The whole page of `run`.
pub fn run_page(
    run: &Certified,
    registry: &BTreeMap<&str, &Requirement>,
    badges: &[Badge],
    links: &Links<'_>,
) -> String {
    let mut body = String::new();
    let (class, word) = if run.conformant() { ("pass", "conformant") } else { ("fail", "not conformant") };
    let _ = writeln!(body, "<h1>Chatwire conformance: {}</h1>", esc(&run.label));
    let _ = writeln!(
        body,
        "<p><span class=\"verdict {class}\" id=\"verdict\">{word}</span> <span class=\"muted\">exit code {}</span></p>",
        run.report.exit_code
    );
    body.push_str("<p class=\"badges\">");
    for b in badges {
        let _ = write!(
            body,
            "<img src=\"{}{}\" alt=\"{}: {}\">",
            esc(links.badges),
            esc(&b.file),
            esc(&b.label),
            esc(&b.value)
        );
    }
    body.push_str("</p>\n");
    facts(&mut body, run);
    body.push_str("<h2 id=\"levels\">Results per level</h2>\n");
    for levels in &run.report.levels {
        level_table(&mut body, levels, registry, links);
    }
    if run.report.levels.is_empty() {
        body.push_str("<p class=\"muted\">No connection negotiated a version: no level was evaluated.</p>\n");
    }
    failures(&mut body, run, registry, links);
    requirement_table(&mut body, run, registry, links);
    scenario_table(&mut body, run);
    page(&format!("Chatwire conformance: {}", run.label), &body)
}

fn facts(body: &mut String, run: &Certified) {
    let r = &run.report;
    let s = &r.summary;
    let list = |items: &mut dyn Iterator<Item = &String>| {
        let joined: Vec<String> = items.map(|f| format!("<code>{}</code>", esc(f))).collect();
        if joined.is_empty() {
            "none".to_owned()
        } else {
            joined.join(", ")
        }
    };
    body.push_str("<dl class=\"facts\">\n");
    let _ = writeln!(body, "<dt>Implementation</dt><dd id=\"target\"><code>{}</code></dd>", esc(&r.target));
    let _ = writeln!(body, "<dt>Runner</dt><dd>{}</dd>", esc(&r.tool));
    let versions: Vec<String> = run.versions().iter().map(|v| esc(v)).collect();
    let _ = writeln!(
        body,
        "<dt>Versions negotiated</dt><dd id=\"versions\">{}</dd>",
        if versions.is_empty() { "none".to_owned() } else { versions.join(", ") }
    );
    let _ = writeln!(
        body,
        "<dt>Features in force</dt><dd id=\"features\">{}</dd>",
        list(&mut run.features_in_force.iter())
    );
    let _ = writeln!(body, "<dt>Features not in force</dt><dd>{}</dd>", list(&mut run.features_not_in_force.iter()));
    if r.replicas > 1 {
        let _ = writeln!(body, "<dt>Replicas</dt><dd>{}</dd>", r.replicas);
    }
    let _ = writeln!(
        body,
        "<dt>Scenarios</dt><dd id=\"summary\">{} run: {} pass, {} warn, {} n/a, {} timeout, {} fail, {} harness error</dd>",
        s.scenarios, s.pass, s.warn, s.not_applicable, s.timeout, s.fail, s.harness_error
    );
    if let Some(sweep) = &r.sweep {
        let _ = writeln!(
            body,
            "<dt>Reconnect sweep</dt><dd>{} variants of {} scenarios, {} failed</dd>",
            sweep.variants, sweep.scenarios, sweep.failed
        );
    }
    let _ = writeln!(
        body,
        "<dt>Errata</dt><dd>{}</dd>",
        if r.strict { "fail (--strict)" } else { "warn (a failure of errata only does not fail the run)" }
    );
    let _ = writeln!(
        body,
        "<dt>Timeout scale, wall time</dt><dd>{} &times;, {:.1} s</dd>",
        r.timeout_scale,
        r.duration_ms as f64 / 1000.0
    );
    body.push_str("</dl>\n");
}

fn release_note(levels: &VersionLevels) -> String {
    let date = ProtocolVersion::parse(&levels.version).ok().and_then(release_date);
    match (levels.released, date) {
        (true, Some(date)) => format!("requirement set released {date}, frozen"),
        (true, None) => "requirement set released, frozen".to_owned(),
        (false, _) => "in progress: the requirement set is not frozen yet".to_owned(),
    }
}

fn level_table(body: &mut String, levels: &VersionLevels, registry: &BTreeMap<&str, &Requirement>, links: &Links<'_>) {
    let _ = writeln!(
        body,
        "<h3>Connections that negotiated {} <span class=\"muted\">({})</span></h3>",
        esc(&levels.version),
        esc(&release_note(levels))
    );
    body.push_str("<table class=\"levels\"><tr><th>since</th><th>group</th><th>level</th><th>passed</th><th>evaluated</th><th></th></tr>\n");
    for group in &levels.groups {
        // Counted where the feature was in force nowhere: the rules that bind a server without it.
        let name = match group.in_force {
            true => group.group.clone(),
            false => format!("{} (not offered)", group.group),
        };
        for count in &group.levels {
            let verdict = if count.passed == count.evaluated {
                Verdict::Pass
            } else if count.level == "MUST" {
                Verdict::Fail
            } else {
                Verdict::Warn
            };
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&group.since),
                esc(&name),
                esc(&count.level),
                count.passed,
                count.evaluated,
                verdict_html(verdict)
            );
        }
    }
    body.push_str("</table>\n");
    let e = &levels.errata;
    let _ = write!(body, "<p>Errata to {}: {} pass, {} warn, {} fail", esc(&levels.version), e.pass, e.warn, e.fail);
    if e.charged.is_empty() {
        body.push_str(".</p>\n");
        return;
    }
    body.push_str("; charged:</p>\n<ul>");
    for charged in &e.charged {
        let id = charged.split(':').next().unwrap_or(charged);
        let _ = write!(body, "<li>{}</li>", requirement_link(id, charged, registry, links));
    }
    body.push_str("</ul>\n");
}

/// `shown` linked to the text of requirement `id` where the registry knows it, else as text.
fn requirement_link(id: &str, shown: &str, registry: &BTreeMap<&str, &Requirement>, links: &Links<'_>) -> String {
    match registry.get(id) {
        Some(r) => format!("<a href=\"{}\">{}</a>", esc(&spec_href(links.spec_base, &r.link())), esc(shown)),
        None => esc(shown),
    }
}

fn failed(verdict: Verdict) -> bool {
    !matches!(verdict, Verdict::Pass | Verdict::NotApplicable)
}

fn failures(body: &mut String, run: &Certified, registry: &BTreeMap<&str, &Requirement>, links: &Links<'_>) {
    let failing: Vec<&ScenarioReport> = run.report.scenarios.iter().filter(|s| failed(s.verdict)).collect();
    let _ = writeln!(body, "<h2 id=\"failures\">Failures and warnings ({})</h2>", failing.len());
    if failing.is_empty() {
        body.push_str("<p>None: every scenario passed or was not applicable.</p>\n");
        return;
    }
    for scenario in failing {
        let _ = writeln!(
            body,
            "<details class=\"failure\"><summary>{} <code>{}</code> {}</summary>",
            verdict_html(scenario.verdict),
            esc(&scenario.id),
            esc(&scenario.title)
        );
        for check in scenario.checks.iter().filter(|c| failed(c.verdict)) {
            check_block(body, check, registry, links);
        }
        if !scenario.wire_log.is_empty() {
            let _ =
                writeln!(body, "<p>The last frames exchanged:</p><pre>{}</pre>", esc(&scenario.wire_log.join("\n")));
        }
        body.push_str("</details>\n");
    }
}

fn check_block(body: &mut String, check: &CheckReport, registry: &BTreeMap<&str, &Requirement>, links: &Links<'_>) {
    let ids: Vec<String> = check.requirements.iter().map(|id| requirement_link(id, id, registry, links)).collect();
    let _ = writeln!(
        body,
        "<h3>{} <code>{}</code> [{}]</h3><p class=\"text\">{}</p>",
        verdict_html(check.verdict),
        esc(&check.id),
        ids.join(", "),
        esc(&check.summary)
    );
    if let Some(reason) = &check.baselined {
        let _ = writeln!(body, "<p class=\"muted\">Expected to fail by the baseline: {}</p>", esc(reason));
    }
    if !check.errata.is_empty() {
        let _ = writeln!(body, "<p class=\"muted\">Errata only: {}</p>", esc(&check.errata.join("; ")));
    }
    body.push_str("<ul>");
    for finding in &check.findings {
        let mut at = Vec::new();
        if let Some(step) = finding.step {
            at.push(format!("step {step}"));
        }
        if let Some(version) = &finding.version {
            at.push(format!("on {}", esc(version)));
        }
        if let Some(id) = &finding.requirement {
            at.push(requirement_link(id, id, registry, links));
        }
        let _ = write!(
            body,
            "<li>{}{}",
            if at.is_empty() { String::new() } else { format!("{}: ", at.join(", ")) },
            esc(&finding.message)
        );
        if let Some(frame) = &finding.frame {
            let _ = write!(body, "<pre>{}</pre>", esc(frame));
        }
        body.push_str("</li>");
    }
    if check.findings_dropped > 0 {
        let _ = write!(body, "<li class=\"muted\">and {} more</li>", check.findings_dropped);
    }
    body.push_str("</ul>\n");
}

fn requirement_table(body: &mut String, run: &Certified, registry: &BTreeMap<&str, &Requirement>, links: &Links<'_>) {
    let _ = writeln!(body, "<h2 id=\"requirements\">Requirements ({} named by a check)</h2>", run.requirements.len());
    body.push_str("<table class=\"requirements\"><tr><th>id</th><th>level</th><th>since, group</th><th>result</th><th>checks</th><th>text</th></tr>\n");
    let mut rows: Vec<(&String, &super::RequirementResult)> = run.requirements.iter().collect();
    // The spec's order (file, then line); ids the registry does not know go last.
    rows.sort_by_key(|(id, _)| {
        registry.get(id.as_str()).map(|r| (0, r.file.clone(), r.line)).unwrap_or((1, String::new(), 0))
    });
    for (id, result) in rows {
        let known = registry.get(id.as_str());
        let (level, origin, text) = match known {
            Some(r) => (r.level.as_str(), format!("{}, {}", r.since, r.group), r.text.as_str()),
            None => ("", String::new(), "(not in this runner's spec)"),
        };
        let _ = writeln!(
            body,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"text\">{}</td></tr>",
            esc(id),
            requirement_link(id, id, registry, links),
            level,
            esc(&origin),
            verdict_html(result.verdict),
            result.checks,
            esc(text)
        );
    }
    body.push_str("</table>\n");
}

fn scenario_table(body: &mut String, run: &Certified) {
    let _ = writeln!(body, "<h2 id=\"scenarios\">Scenarios ({})</h2>", run.report.scenarios.len());
    body.push_str(
        "<table class=\"scenarios\"><tr><th>scenario</th><th>level</th><th>result</th><th>ms</th><th>title</th></tr>\n",
    );
    for s in &run.report.scenarios {
        let _ = writeln!(
            body,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&s.id),
            s.level.as_str().to_uppercase(),
            verdict_html(s.verdict),
            s.duration_ms,
            esc(&s.title)
        );
    }
    body.push_str("</table>\n");
}
