//! HTML building blocks shared by the run page and the matrix: escaping, the page frame with its
//! inline style sheet, and verdict marks. Every report string goes through [`esc`].

use std::fmt::Write as _;

use crate::report::Verdict;

/// Escapes text for HTML element content and double- or single-quoted attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Controls other than tab and newline have no place in a page (and `\0` none in HTML).
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A file name made of `text`: lowercase ASCII letters, digits, `-` and `.`, never empty, never
/// starting with a dot (a label from the command line names a directory of the output).
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        match ch {
            c if c.is_ascii_alphanumeric() => out.push(c.to_ascii_lowercase()),
            '.' if !out.is_empty() => out.push('.'),
            _ if !out.ends_with('-') && !out.is_empty() => out.push('-'),
            _ => {}
        }
    }
    let out = out.trim_end_matches(['-', '.']).to_owned();
    if out.is_empty() {
        "run".to_owned()
    } else {
        out
    }
}

/// The CSS class and the word shown for a verdict.
pub fn verdict_mark(verdict: Verdict) -> (&'static str, &'static str) {
    match verdict {
        Verdict::Pass => ("pass", "pass"),
        Verdict::Warn => ("warn", "warn"),
        Verdict::NotApplicable => ("na", "n/a"),
        Verdict::Timeout => ("fail", "timeout"),
        Verdict::Fail => ("fail", "fail"),
        Verdict::HarnessError => ("harness", "harness error"),
    }
}

/// A verdict as a small labelled cell content.
pub fn verdict_html(verdict: Verdict) -> String {
    let (class, word) = verdict_mark(verdict);
    format!("<span class=\"v {class}\">{word}</span>")
}

const STYLE: &str = "\
:root{color-scheme:light;font:15px/1.45 system-ui,sans-serif;color:#1d2329;background:#f4f5f7}\
body{margin:0 auto;max-width:80rem;padding:1rem 1.2rem 3rem}\
h1{font-size:1.5rem;margin:.4rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .3rem}\
table{border-collapse:collapse;background:#fff;margin:.4rem 0;display:block;max-width:100%;overflow-x:auto}td code{overflow-wrap:anywhere}th,td{border:1px solid #d5d9de;padding:.25rem .5rem;text-align:left;vertical-align:top}\
th{background:#eef1f4;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.v{display:inline-block;min-width:3.2em;text-align:center;border-radius:.3rem;padding:0 .35rem;font-size:.85rem;font-weight:600}\
.v.pass{background:#c6f6d5;color:#22543d}.v.fail{background:#fed7d7;color:#822727}.v.warn{background:#fefcbf;color:#744210}\
.v.na{background:#e2e8f0;color:#4a5561}.v.harness{background:#e9d8fd;color:#44337a}.v.none{background:transparent;color:#a0aec0}\
.verdict{font-size:1.1rem;font-weight:700;padding:.4rem .8rem;border-radius:.4rem;display:inline-block}\
.verdict.pass{background:#c6f6d5;color:#22543d}.verdict.fail{background:#fed7d7;color:#822727}\
dl.facts{display:grid;grid-template-columns:minmax(0,max-content) minmax(0,1fr);gap:.2rem 1rem;background:#fff;padding:.6rem .8rem;border:1px solid #d5d9de;border-radius:.4rem}\
dl.facts dt{font-weight:600}dl.facts dd{margin:0;overflow-wrap:anywhere}\
code,pre{font:13px/1.4 ui-monospace,monospace}pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#1d2329;color:#e2e8f0;padding:.5rem .7rem;border-radius:.4rem}\
details{background:#fff;border:1px solid #d5d9de;border-radius:.4rem;margin:.4rem 0;padding:.3rem .7rem}summary{cursor:pointer;font-weight:600}\
.badges img{margin:0 .4rem .3rem 0;vertical-align:middle}.muted{color:#718096}.text{max-width:48rem}\
.matrix{overflow-x:auto}.matrix td.v-cell{text-align:center}.matrix th.impl{writing-mode:horizontal-tb;min-width:7rem}\
a{color:#1f5fbf}@media (max-width:600px){body{padding:.6rem}dl.facts{grid-template-columns:minmax(0,1fr)}dl.facts dd{margin-bottom:.3rem}}";

/// A whole page: doctype, a Content-Security-Policy that allows nothing but the inline style, the
/// title, the style sheet, then `body` (already HTML).
pub fn page(title: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 512);
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src 'self'\">\n",
    );
    let _ = writeln!(out, "<title>{}</title>", esc(title));
    let _ = writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>");
    out.push_str(body);
    out.push_str("\n</body>\n</html>\n");
    out
}

/// A link to a requirement's text: `base` (the spec's location, ending in `/`) followed by the
/// registry's `spec/<file>#<section>`.
pub fn spec_href(base: &str, link: &str) -> String {
    format!("{base}{link}")
}
