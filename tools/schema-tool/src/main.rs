//! `chatwire-schema`: export the JSON Schemas generated from the Rust types, check the committed
//! copies for drift, and validate frames.
//!
//! Exit codes: 0 success; 1 drift (check), an invalid frame (validate) or an unacknowledged
//! breaking change (diff); 2 usage error, an unreadable file, a file that is not JSON, or a frame
//! of unknown type.

mod diff;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chatwire_schema::schema_gen::{all_schemas, to_pretty};
use chatwire_schema::validate::direction_of;
use chatwire_schema::{FrameError, FrameValidator};
use clap::{Parser, Subcommand};
use serde_json::Value;

#[derive(Parser)]
#[command(name = "chatwire-schema", version, about = "Export, check and validate the Chatwire JSON Schemas")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write every schema generated from the types into DIR (default: the workspace's schema/json).
    Export {
        /// Target directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Exit 1 naming every file in DIR that differs from what the types generate now.
    Check {
        /// Directory holding the committed schemas.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Validate JSON frames, dispatching on `type` to the message's schema.
    Validate {
        /// Frame files (one JSON object each).
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

fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/json")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Export { dir } => export(&dir.unwrap_or_else(default_dir)),
        Command::Check { dir } => check(&dir.unwrap_or_else(default_dir)),
        Command::Validate { files } => validate(&files),
        Command::Diff { dirs, base, json, old_version, new_version, rules } => {
            diff::run(&diff::DiffArgs { dirs, base, json, old_version, new_version, rules })
        }
    }
}

fn export(dir: &Path) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let docs = published_schemas();
    let keep: Vec<String> = docs.iter().map(|d| d.file.clone()).collect();
    for doc in &docs {
        let path = dir.join(&doc.file);
        if let Err(e) = std::fs::write(&path, to_pretty(&doc.schema)) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    // Files no type generates any more would be stale documentation: remove them.
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !keep.contains(&name) {
                let _ = std::fs::remove_file(entry.path());
                println!("removed {name}");
            }
        }
    }
    println!("wrote {} schemas to {}", docs.len(), dir.display());
    ExitCode::SUCCESS
}

fn check(dir: &Path) -> ExitCode {
    let docs = published_schemas();
    let mut drift = Vec::new();
    for doc in &docs {
        let path = dir.join(&doc.file);
        match std::fs::read_to_string(&path) {
            Ok(committed) if committed == to_pretty(&doc.schema) => {}
            Ok(_) => drift.push(format!("{}: differs from what the types generate", path.display())),
            Err(_) => drift.push(format!("{}: missing", path.display())),
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".json") && !docs.iter().any(|d| d.file == name) {
                drift.push(format!("{}: no type generates this file", entry.path().display()));
            }
        }
    }
    if drift.is_empty() {
        println!("{} schemas up to date in {}", docs.len(), dir.display());
        ExitCode::SUCCESS
    } else {
        for line in &drift {
            eprintln!("drift: {line}");
        }
        eprintln!("{} file(s) out of date; run `cargo run -p chatwire-schema-tool -- export`", drift.len());
        ExitCode::from(1)
    }
}

fn validate(files: &[PathBuf]) -> ExitCode {
    let validator = FrameValidator::new();
    let mut worst = 0u8;
    for file in files {
        let name = file.display();
        let text = match std::fs::read_to_string(file) {
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
