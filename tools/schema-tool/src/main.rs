//! `chatwire-schema`: export the JSON Schemas generated from the Rust types (with the AsyncAPI
//! document and the packaged copies of the spec and scenarios, see [`generated`]), check the
//! committed files for drift, and validate frames.
//!
//! Exit codes: 0 success; 1 drift (check), an invalid frame (validate) or an unacknowledged
//! breaking change (diff); 2 usage error, an unreadable file, a file that is not JSON, or a frame
//! of unknown type.

mod asyncapi;
mod diff;
mod frozen;
mod generated;
mod releases;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chatwire_schema::schema_gen::all_schemas;
use chatwire_schema::validate::direction_of;
use chatwire_schema::{FrameError, FrameValidator};
use clap::{Parser, Subcommand};
use generated::{GenerateError, GeneratedSet};
use releases::ReleaseSet;
use serde_json::Value;

#[derive(Parser)]
#[command(name = "chatwire-schema", version, about = "Export, check and validate the Chatwire JSON Schemas")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write every generated file of the repository: schema/json, schema/asyncapi.json, the
    /// packaged copies schema/spec, conformance/scenarios, conformance/snapshots, and the released
    /// set of a released minor that has none yet (schema/releases/v1/MAJOR.MINOR, its schemas and
    /// requirements/released.json; an existing one is never rewritten) with its errata
    /// (requirements/errata.json, rewritten from the spec). With --dir, write only the schemas, into DIR.
    Export {
        /// Write only the schemas, into this directory.
        #[arg(long, conflicts_with = "root")]
        dir: Option<PathBuf>,
        /// Repository root (default: the checkout this tool was built from).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Exit 1 naming every generated file that differs from what export would write now, and
    /// every released set whose shape the types, cut down to its minor, no longer define, or whose
    /// frozen requirements the spec no longer defines exactly (a text or level changed). With
    /// --dir, check only the schemas in DIR.
    Check {
        /// Check only the schemas in this directory.
        #[arg(long, conflicts_with = "root")]
        dir: Option<PathBuf>,
        /// Repository root (default: the checkout this tool was built from).
        #[arg(long)]
        root: Option<PathBuf>,
    },
    /// Validate JSON frames, dispatching on `type` to the message's schema.
    Validate {
        /// Frame files (one JSON object each); `-` reads one frame from standard input.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Classify every change between two schema sets (spec/versioning.md). Exit 0: no breaking
    /// change, or breaking changes with a major version bump; 1: an unacknowledged breaking change.
    Diff {
        /// OLD_DIR NEW_DIR; with --base only the optional NEW_DIR (default: the repository's schema/json).
        #[arg(value_name = "DIR", num_args = 0..=2)]
        dirs: Vec<PathBuf>,
        /// Compare schema/json as committed at this git revision instead of OLD_DIR.
        #[arg(long, value_name = "GIT_REF")]
        base: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Protocol version of the old set (default: its VERSION file, else the new version).
        #[arg(long, value_name = "MAJOR.MINOR")]
        old_version: Option<String>,
        /// Protocol version of the new set (default: its VERSION file, else this build's PROTOCOL_VERSION).
        #[arg(long, value_name = "MAJOR.MINOR")]
        new_version: Option<String>,
        /// Print the rule table (levels per direction) and exit.
        #[arg(long, conflicts_with_all = ["dirs", "base"])]
        rules: bool,
    },
}

/// Every published schema: the protocol's, plus the conformance runner's scenario, report and
/// baseline formats.
fn published_schemas() -> Vec<chatwire_schema::schema_gen::SchemaDoc> {
    let mut docs = all_schemas();
    docs.extend(chatwire_conformance::schemas::all());
    docs
}

fn default_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Export { dir, root } => match generated_sets(dir, root) {
            Ok((sets, releases)) => export(&sets, &releases),
            Err(e) => usage_error(&e),
        },
        Command::Check { dir, root } => match generated_sets(dir, root) {
            Ok((sets, releases)) => check(&sets, &releases),
            Err(e) => usage_error(&e),
        },
        Command::Validate { files } => validate(&files),
        Command::Diff { dirs, base, json, old_version, new_version, rules } => {
            diff::run(&diff::DiffArgs { dirs, base, json, old_version, new_version, rules })
        }
    }
}

/// The schemas alone when `dir` is given, else everything generated in the repository and its
/// released sets.
fn generated_sets(
    dir: Option<PathBuf>,
    root: Option<PathBuf>,
) -> Result<(Vec<GeneratedSet>, Vec<ReleaseSet>), GenerateError> {
    let docs = published_schemas();
    match dir {
        Some(dir) => Ok((vec![generated::schema_set(dir, &docs)], Vec::new())),
        None => {
            let root = root.unwrap_or_else(default_root);
            let registry = chatwire_schema::requirements::all().map_err(GenerateError::Registry)?;
            let releases =
                releases::release_sets(&root, &all_schemas(), &chatwire_conformance::schemas::all(), &registry);
            Ok((generated::repository_sets(&root, &docs)?, releases))
        }
    }
}

fn usage_error(e: &GenerateError) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

fn export(sets: &[GeneratedSet], releases: &[ReleaseSet]) -> ExitCode {
    for release in releases {
        match release.write_if_missing() {
            Ok(true) => println!("wrote the released set of {} to {}", release.version, release.dir.display()),
            Ok(false) => {}
            Err(e) => return usage_error(&e),
        }
    }
    for set in sets {
        match set.write() {
            Ok(removed) => {
                for name in removed {
                    println!("removed {name}");
                }
                println!("wrote {} file(s) to {}", set.files.len(), set.dir.display());
            }
            Err(e) => return usage_error(&e),
        }
    }
    ExitCode::SUCCESS
}

fn check(sets: &[GeneratedSet], releases: &[ReleaseSet]) -> ExitCode {
    let drift: Vec<String> =
        sets.iter().flat_map(GeneratedSet::drift).chain(releases.iter().flat_map(ReleaseSet::drift)).collect();
    if drift.is_empty() {
        for set in sets {
            println!("{} file(s) up to date in {}", set.files.len(), set.dir.display());
        }
        for release in releases {
            println!("released set {} still defined by the types: {}", release.version, release.dir.display());
        }
        ExitCode::SUCCESS
    } else {
        for line in &drift {
            eprintln!("drift: {line}");
        }
        eprintln!("{} file(s) out of date; run `cargo run -p chatwire-schema-tool -- export`", drift.len());
        ExitCode::from(1)
    }
}

/// Most bytes `validate -` reads from standard input: far above any frame a limit allows.
const STDIN_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// Standard input as text, bounded by [`STDIN_MAX_BYTES`].
fn read_stdin() -> std::io::Result<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::io::stdin().lock().take(STDIN_MAX_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > STDIN_MAX_BYTES {
        return Err(std::io::Error::other(format!("more than {STDIN_MAX_BYTES} bytes")));
    }
    Ok(text)
}

fn validate(files: &[PathBuf]) -> ExitCode {
    let validator = FrameValidator::new();
    let mut worst = 0u8;
    let mut stdin_read = false;
    for file in files {
        let from_stdin = file.as_os_str() == "-";
        let name = if from_stdin { "<stdin>".to_owned() } else { file.display().to_string() };
        if from_stdin && std::mem::replace(&mut stdin_read, true) {
            eprintln!("{name}: `-` is given more than once; standard input holds one frame");
            worst = 2;
            continue;
        }
        let read = if from_stdin { read_stdin() } else { std::fs::read_to_string(file) };
        let text = match read {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{name}: cannot read: {e}");
                worst = 2;
                continue;
            }
        };
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("{name}: not JSON: {e}");
                worst = 2;
                continue;
            }
        };
        let Some(wire) = value.get("type").and_then(Value::as_str) else {
            eprintln!("{name}: no string \"type\" field");
            worst = 2;
            continue;
        };
        let Some(direction) = direction_of(wire) else {
            eprintln!("{name}: unknown frame type {wire:?}");
            worst = 2;
            continue;
        };
        match validator.check(direction, &value) {
            Ok(_) => println!("{name}: valid {wire}"),
            Err(FrameError::Invalid(violations)) => {
                println!("{name}: invalid {wire}");
                for v in violations {
                    println!("  {v}");
                }
                worst = worst.max(1);
            }
            Err(e) => {
                eprintln!("{name}: {e}");
                worst = 2;
            }
        }
    }
    ExitCode::from(worst)
}
