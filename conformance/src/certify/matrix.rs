//! The matrix over several runs, in the style of toml-test's and Bowtie's result tables: one
//! column per run (an implementation at an offer), one row per requirement a check named, each
//! cell that run's result; above it, each run's verdict, levels and badges, linked to its page.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use chatwire_schema::requirements::Requirement;

use super::badge::Badge;
use super::html::{esc, page, spec_href, verdict_html};
use super::Certified;

/// One column of the matrix: a run, where its page is (relative to the matrix), and its badges.
pub struct Column<'a> {
    /// The run.
    pub run: &'a Certified,
    /// Its directory, relative to the matrix page (`python-template/`).
    pub dir: String,
    /// Its badges, in `{dir}badges/`.
    pub badges: Vec<Badge>,
}

/// The matrix page.
pub fn matrix_page(columns: &[Column<'_>], registry: &BTreeMap<&str, &Requirement>, spec_base: &str) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<h1>Chatwire conformance matrix</h1>\n<p>{} runs. Each column is one run of the conformance suite; each row a requirement of the spec that some check named, linked to its text.</p>", columns.len());
    body.push_str("<table class=\"runs\"><tr><th>run</th><th>implementation</th><th>versions</th><th>result</th><th>scenarios</th><th>badges</th></tr>\n");
    for c in columns {
        let r = &c.run.report;
        let (class, word) = if c.run.conformant() { ("pass", "conformant") } else { ("fail", "not conformant") };
        let badges: String = c
            .badges
            .iter()
            .map(|b| {
                format!(
                    "<img src=\"{}badges/{}\" alt=\"{}: {}\">",
                    esc(&c.dir),
                    esc(&b.file),
                    esc(&b.label),
                    esc(&b.value)
                )
            })
            .collect();
        let _ = writeln!(
            body,
            "<tr><td><a href=\"{}index.html\">{}</a></td><td><code>{}</code></td><td>{}</td><td><span class=\"v {class}\">{word}</span></td><td>{} pass, {} n/a, {} failed or timed out</td><td class=\"badges\">{badges}</td></tr>",
            esc(&c.dir),
            esc(&c.run.label),
            esc(&r.target),
            esc(&c.run.versions().join(", ")),
            r.summary.pass,
            r.summary.not_applicable,
            r.summary.fail + r.summary.timeout + r.summary.harness_error,
        );
    }
    body.push_str("</table>\n");
    requirement_rows(&mut body, columns, registry, spec_base);
    page("Chatwire conformance matrix", &body)
}

fn requirement_rows(
    body: &mut String,
    columns: &[Column<'_>],
    registry: &BTreeMap<&str, &Requirement>,
    spec_base: &str,
) {
    let ids: BTreeSet<&str> = columns.iter().flat_map(|c| c.run.requirements.keys().map(String::as_str)).collect();
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_by_key(|id| registry.get(id).map(|r| (0, r.file.clone(), r.line)).unwrap_or((1, String::new(), 0)));
    let _ = writeln!(body, "<h2 id=\"requirements\">Requirements ({})</h2>\n<div class=\"matrix\"><table><tr><th>requirement</th><th>level</th>", ids.len());
    for c in columns {
        let _ = write!(body, "<th class=\"impl\">{}</th>", esc(&c.run.label));
    }
    body.push_str("</tr>\n");
    for id in ids {
        let (link, level) = match registry.get(id) {
            Some(r) => (
                format!(
                    "<a href=\"{}\" title=\"{}\">{}</a>",
                    esc(&spec_href(spec_base, &r.link())),
                    esc(&r.text),
                    esc(id)
                ),
                r.level.as_str(),
            ),
            None => (esc(id), ""),
        };
        let _ = write!(body, "<tr><td>{link}</td><td>{level}</td>");
        for c in columns {
            match c.run.requirements.get(id) {
                Some(result) => {
                    let _ = write!(body, "<td class=\"v-cell\">{}</td>", verdict_html(result.verdict));
                }
                None => body.push_str("<td class=\"v-cell\"><span class=\"v none\">&ndash;</span></td>"),
            }
        }
        body.push_str("</tr>\n");
    }
    body.push_str("</table></div>\n");
}
