//! SVG badges in the usual two-part style: a grey label and a coloured value, e.g.
//! `chatwire 1.2 MUST | pass`. Self-contained (no font or image is loaded); text is escaped.

use super::html::esc;
use super::Certified;

/// The colour of a badge's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Every requirement of the level passed.
    Good,
    /// Some failed.
    Bad,
    /// Some passed and some only warned, or the level was not evaluated.
    Neutral,
}

impl Tone {
    fn colour(self) -> &'static str {
        match self {
            Tone::Good => "#2f855a",
            Tone::Bad => "#c53030",
            Tone::Neutral => "#718096",
        }
    }
}

/// One badge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Badge {
    /// The left part, e.g. `chatwire 1.2 MUST`.
    pub label: String,
    /// The right part, e.g. `pass` or `212/214`.
    pub value: String,
    /// The value's colour.
    pub tone: Tone,
    /// The file name it is written to, e.g. `1.2-must.svg`.
    pub file: String,
}

/// An estimate of the width of `text` in 11 px Verdana-like type: enough to size the boxes
/// without measuring fonts (a badge that is a few pixels wide is still read right).
fn text_width(text: &str) -> usize {
    text.chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c == 'M' || c == 'W' {
                8
            } else if c == ' ' || c == '.' || c == '/' {
                4
            } else {
                7
            }
        })
        .sum()
}

/// The SVG of a badge.
pub fn svg(badge: &Badge) -> String {
    let left = text_width(&badge.label) + 12;
    let right = text_width(&badge.value) + 12;
    let total = left + right;
    let (label, value) = (esc(&badge.label), esc(&badge.value));
    let colour = badge.tone.colour();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{total}\" height=\"20\" role=\"img\" aria-label=\"{label}: {value}\">\
<title>{label}: {value}</title>\
<rect width=\"{left}\" height=\"20\" fill=\"#555\"/><rect x=\"{left}\" width=\"{right}\" height=\"20\" fill=\"{colour}\"/>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,DejaVu Sans,sans-serif\" font-size=\"11\">\
<text x=\"{lx}\" y=\"14\">{label}</text><text x=\"{rx}\" y=\"14\">{value}</text></g></svg>\n",
        lx = left / 2,
        rx = left + right / 2,
    )
}

/// The badges of one run: for each version negotiated, its MUST level (`pass`, or how many of
/// those evaluated held) and its SHOULD level (`passed/evaluated`); and the run's overall verdict.
pub fn badges(run: &Certified) -> Vec<Badge> {
    let mut out = Vec::new();
    for version in run.versions() {
        for (level, file_level) in [("MUST", "must"), ("SHOULD", "should")] {
            let Some((passed, evaluated)) = run.level_count(version, level) else { continue };
            let (value, tone) = match (level, passed == evaluated) {
                (_, _) if evaluated == 0 => ("not evaluated".to_owned(), Tone::Neutral),
                ("MUST", true) => ("pass".to_owned(), Tone::Good),
                ("MUST", false) => (format!("fail {}/{evaluated}", evaluated - passed), Tone::Bad),
                (_, true) => (format!("{passed}/{evaluated}"), Tone::Good),
                (_, false) => (format!("{passed}/{evaluated}"), Tone::Neutral),
            };
            out.push(Badge {
                label: format!("chatwire {version} {level}"),
                value,
                tone,
                file: format!("{version}-{file_level}.svg"),
            });
        }
    }
    let (value, tone) = if run.conformant() { ("conformant", Tone::Good) } else { ("not conformant", Tone::Bad) };
    out.push(Badge { label: "chatwire".to_owned(), value: value.to_owned(), tone, file: "conformance.svg".to_owned() });
    out
}
