//! `chatwire-conformance report --html DIR REPORT.json` and `chatwire-conformance matrix --html
//! DIR [LABEL=]REPORT.json…`: read JSON reports, write the pages and badges.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::Args;

use super::badge::{badges, svg};
use super::html::slug;
use super::matrix::{matrix_page, Column};
use super::page::{run_page, Links};
use super::{registry_by_id, Certified};
use crate::report::RunReport;

/// Where links to a requirement's text point by default: the repository's spec on GitHub.
pub const DEFAULT_SPEC_BASE: &str = "https://github.com/chatwire/chatwire/blob/main/";

/// The largest report read (CI's reports of the whole suite are a few MB).
const MAX_REPORT_BYTES: u64 = 256 << 20;

/// `report`: one run's page.
#[derive(Args)]
pub struct ReportArgs {
    /// Write the run's page (`DIR/index.html`) and its badges (`DIR/badges/*.svg`) here.
    #[arg(long, value_name = "DIR")]
    pub html: PathBuf,
    /// What the run is called on its page (default: the report's file name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Where links to the spec point: a requirement's text is `{spec_base}spec/<file>#<section>`.
    #[arg(long, value_name = "URL", default_value = DEFAULT_SPEC_BASE)]
    pub spec_base: String,
    /// The JSON report (`run --report-json`, schema/json/conformance-report.json).
    #[arg(value_name = "REPORT.json")]
    pub report: PathBuf,
}

/// `matrix`: the matrix over several runs, with each run's page and badges.
#[derive(Args)]
pub struct MatrixArgs {
    /// Write the matrix (`DIR/index.html`), each run's page (`DIR/<label>/index.html`) and its
    /// badges (`DIR/<label>/badges/*.svg`) here.
    #[arg(long, value_name = "DIR")]
    pub html: PathBuf,
    /// Where links to the spec point: a requirement's text is `{spec_base}spec/<file>#<section>`.
    #[arg(long, value_name = "URL", default_value = DEFAULT_SPEC_BASE)]
    pub spec_base: String,
    /// The JSON reports, each `LABEL=REPORT.json` or `REPORT.json` (labelled by its file name).
    #[arg(value_name = "[LABEL=]REPORT.json", required = true)]
    pub reports: Vec<String>,
}

/// Why a page could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CertifyError {
    /// A report could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The report's path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A report is larger than the runner reads.
    #[error("{path} is {bytes} bytes, more than the {MAX_REPORT_BYTES} a report may have")]
    TooLarge {
        /// The report's path.
        path: String,
        /// Its size.
        bytes: u64,
    },
    /// A report is not a conformance report.
    #[error("{path} is not a conformance report (schema/json/conformance-report.json): {source}")]
    Parse {
        /// The report's path.
        path: String,
        /// Why.
        source: serde_json::Error,
    },
    /// The output could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// What could not be written.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The embedded spec or scenarios do not load (a broken build).
    #[error("{0}")]
    Embedded(String),
}

/// Reads one JSON report.
pub fn read_report(path: &Path) -> Result<RunReport, CertifyError> {
    let shown = path.display().to_string();
    let bytes = std::fs::metadata(path).map_err(|source| CertifyError::Read { path: shown.clone(), source })?.len();
    if bytes > MAX_REPORT_BYTES {
        return Err(CertifyError::TooLarge { path: shown, bytes });
    }
    let text = std::fs::read_to_string(path).map_err(|source| CertifyError::Read { path: shown.clone(), source })?;
    serde_json::from_str(&text).map_err(|source| CertifyError::Parse { path: shown, source })
}

fn write(path: &Path, text: &str) -> Result<(), CertifyError> {
    let failed = |source| CertifyError::Write { path: path.display().to_string(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    std::fs::write(path, text).map_err(failed)
}

fn embedded() -> Result<(Vec<chatwire_schema::requirements::Requirement>, Vec<crate::scenario::Scenario>), CertifyError>
{
    let registry =
        chatwire_schema::requirements::all().map_err(|e| CertifyError::Embedded(format!("the embedded spec: {e}")))?;
    let scenarios = crate::catalog::embedded_scenarios()
        .map_err(|e| CertifyError::Embedded(format!("the embedded scenarios: {e}")))?;
    Ok((registry, scenarios))
}

/// Writes one run's page and badges into `dir`; `links.badges` is where the page finds them.
fn write_run(
    dir: &Path,
    run: &Certified,
    registry: &[chatwire_schema::requirements::Requirement],
    spec_base: &str,
) -> Result<Vec<super::badge::Badge>, CertifyError> {
    let made = badges(run);
    for badge in &made {
        write(&dir.join("badges").join(&badge.file), &svg(badge))?;
    }
    let links = Links { spec_base, badges: "badges/" };
    write(&dir.join("index.html"), &run_page(run, &registry_by_id(registry), &made, &links))?;
    Ok(made)
}

fn label_of(path: &Path) -> String {
    path.file_stem().and_then(|s| s.to_str()).unwrap_or("run").to_owned()
}

/// `report --html DIR REPORT.json`.
pub fn report(args: &ReportArgs) -> Result<PathBuf, CertifyError> {
    let (registry, scenarios) = embedded()?;
    let run = Certified::new(
        args.name.clone().unwrap_or_else(|| label_of(&args.report)),
        read_report(&args.report)?,
        &scenarios,
    );
    write_run(&args.html, &run, &registry, &args.spec_base)?;
    Ok(args.html.join("index.html"))
}

/// `matrix --html DIR [LABEL=]REPORT.json…`.
pub fn matrix(args: &MatrixArgs) -> Result<PathBuf, CertifyError> {
    let (registry, scenarios) = embedded()?;
    let mut runs = Vec::new();
    for spec in &args.reports {
        let (label, path) = match spec.split_once('=') {
            Some((label, path)) if !label.is_empty() && !Path::new(spec).exists() => {
                (label.to_owned(), PathBuf::from(path))
            }
            _ => (label_of(Path::new(spec)), PathBuf::from(spec)),
        };
        runs.push(Certified::new(label, read_report(&path)?, &scenarios));
    }
    let mut taken = BTreeSet::new();
    let mut columns = Vec::new();
    for run in &runs {
        let base = slug(&run.label);
        let mut dir = base.clone();
        let mut n = 2;
        while !taken.insert(dir.clone()) {
            dir = format!("{base}-{n}");
            n += 1;
        }
        let made = write_run(&args.html.join(&dir), run, &registry, &args.spec_base)?;
        columns.push(Column { run, dir: format!("{dir}/"), badges: made });
    }
    let page = matrix_page(&columns, &registry_by_id(&registry), &args.spec_base);
    write(&args.html.join("index.html"), &page)?;
    Ok(args.html.join("index.html"))
}

/// The exit code of `report` or `matrix`: 0 with the page's path on stdout, 2 with the error on
/// stderr (as every usage or input error of the runner).
pub fn finish(result: Result<PathBuf, CertifyError>) -> u8 {
    use std::io::Write as _;
    match result {
        Ok(page) => {
            let _ = writeln!(std::io::stdout(), "wrote {}", page.display());
            0
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "chatwire-conformance: {e}");
            2
        }
    }
}
