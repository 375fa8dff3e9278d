//! The frozen requirement set of each released minor and its errata
//! (`spec/versioning.md#frozen-requirement-sets`, `COMPAT-016`):
//! `schema/releases/v1/<MAJOR.MINOR>/requirements/released.json`, written once by `export` and
//! compared with the registry by `check`, and `…/requirements/errata.json`, rewritten by `export`
//! from the registry and compared like any generated file.

use std::path::{Path, PathBuf};

use chatwire_schema::requirement_sets::{self, FrozenSet};
use chatwire_schema::requirements::Requirement;
use chatwire_schema::ProtocolVersion;

use crate::generated::GenerateError;

/// The directory, inside a released minor's directory, holding its requirement files.
pub const REQUIREMENTS_DIR: &str = "requirements";
/// The released set's file name.
pub const RELEASED_FILE: &str = "released.json";
/// The errata file's name.
pub const ERRATA_FILE: &str = "errata.json";

/// The requirement files of one released minor, as the registry defines them now.
#[derive(Clone, Debug)]
pub struct FrozenRequirements {
    /// `schema/releases/v1/<version>/requirements`.
    pub dir: PathBuf,
    /// The set the registry assigns to the minor: what `export` freezes when none is committed.
    pub released: FrozenSet,
    /// Its errata now.
    pub errata: FrozenSet,
    /// The registry, which `check` compares the committed set with.
    registry: Vec<Requirement>,
}

impl FrozenRequirements {
    /// The files of `version` under the release directory `release_dir`; `None` when `version` is
    /// not released.
    pub fn new(release_dir: &Path, version: ProtocolVersion, registry: &[Requirement]) -> Option<Self> {
        Some(FrozenRequirements {
            dir: release_dir.join(REQUIREMENTS_DIR),
            released: requirement_sets::released_set(registry, version)?,
            errata: requirement_sets::errata(registry, version)?,
            registry: registry.to_vec(),
        })
    }

    fn released_path(&self) -> PathBuf {
        self.dir.join(RELEASED_FILE)
    }

    fn errata_path(&self) -> PathBuf {
        self.dir.join(ERRATA_FILE)
    }

    /// Writes the released set if none is committed (it is never rewritten) and the errata file
    /// always. Returns whether the released set was written.
    pub fn write(&self) -> Result<bool, GenerateError> {
        let write_err = |path: PathBuf| move |source| GenerateError::Write { path, source };
        std::fs::create_dir_all(&self.dir).map_err(write_err(self.dir.clone()))?;
        let released = self.released_path();
        let wrote = !released.exists();
        if wrote {
            std::fs::write(&released, pretty(&self.released)).map_err(write_err(released))?;
        }
        let errata = self.errata_path();
        std::fs::write(&errata, pretty(&self.errata)).map_err(write_err(errata))?;
        Ok(wrote)
    }

    /// One line per departure of the registry from the committed released set (a changed text,
    /// level or metadata, a removed requirement, one added without erratum metadata), and for an
    /// errata file that is missing or differs from what `export` writes.
    pub fn drift(&self) -> Vec<String> {
        let mut out = Vec::new();
        let released = self.released_path();
        match read_set(&released) {
            Err(why) => out.push(format!("{}: {why}", released.display())),
            Ok(frozen) if frozen.version != self.released.version => out.push(format!(
                "{}: holds the set of {}, not of {}",
                released.display(),
                frozen.version,
                self.released.version
            )),
            Ok(frozen) => out.extend(
                requirement_sets::drift(&frozen, &self.registry).iter().map(|d| format!("{}: {d}", released.display())),
            ),
        }
        let errata = self.errata_path();
        match std::fs::read_to_string(&errata) {
            Ok(text) if text == pretty(&self.errata) => {}
            Ok(_) => out.push(format!(
                "{}: differs from the errata the spec marks for {} (run export)",
                errata.display(),
                self.errata.version
            )),
            Err(e) => out.push(format!("{}: cannot read: {e}; export writes it", errata.display())),
        }
        out
    }
}

/// A set as its file holds it, pretty-printed with a final newline.
fn pretty(set: &FrozenSet) -> String {
    // A FrozenSet holds strings and a level only: it always serializes.
    serde_json::to_string_pretty(set).map(|s| s + "\n").unwrap_or_default()
}

fn read_set(path: &Path) -> Result<FrozenSet, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}; export writes it once"))?;
    serde_json::from_str(&text).map_err(|e| format!("not a frozen requirement set: {e}"))
}

#[cfg(test)]
mod tests {
    use chatwire_schema::requirements::{from_files, parse, SPEC_FILES};

    use super::*;

    const V10: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

    fn temp(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("chatwire-frozen-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_released_set_is_written_once_and_its_changes_are_drift() {
        let root = temp("once");
        let spec =
            "**[A-001]** A server MUST do a.\n\n**[A-002]** *(since 1.0, erratum 2026-11-23)* A server MUST do b.\n";
        let registry = parse("t.md", spec).expect("parses");
        let files = FrozenRequirements::new(&root, V10, &registry).expect("1.0 is released");
        assert_eq!(files.drift().len(), 2, "nothing committed yet: both files missing");
        assert!(files.write().expect("writes"));
        assert_eq!(files.drift(), Vec::<String>::new());

        // The spec weakens A-001 and rewords it: export does not rewrite the frozen set, check names both.
        let edited = parse("t.md", &spec.replace("MUST do a", "SHOULD do a")).expect("parses");
        let files = FrozenRequirements::new(&root, V10, &edited).expect("released");
        assert!(!files.write().expect("writes the errata only"));
        let drift = files.drift();
        assert!(drift.iter().any(|d| d.contains("A-001 changed its level from MUST to SHOULD")), "{drift:?}");
        assert!(drift.iter().any(|d| d.contains("A-001 changed its text")), "{drift:?}");

        // A new erratum is listed in errata.json, which export rewrites.
        let grown = format!("{spec}\n**[A-003]** *(since 1.0, erratum 2026-11-24)* A server MUST do c.\n");
        let files = FrozenRequirements::new(&root, V10, &parse("t.md", &grown).expect("parses")).expect("released");
        assert!(files.drift().iter().any(|d| d.contains("errata.json")), "a new erratum is errata drift until export");
        files.write().expect("writes");
        assert_eq!(files.drift(), Vec::<String>::new());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn editing_a_released_requirement_of_the_real_spec_fails_the_check() {
        let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/releases/v1/1.0");
        let real = from_files(SPEC_FILES).expect("the spec parses");
        let committed = FrozenRequirements::new(&release, V10, &real).expect("released");
        assert_eq!(committed.drift(), Vec::<String>::new(), "the committed 1.0 set matches the spec");

        let target = real.iter().find(|r| r.id == "SESSION-003").expect("defined");
        let (file, markdown) = SPEC_FILES.iter().find(|(f, _)| *f == target.file).expect("its file");
        assert!(markdown.contains("MUST"), "SESSION-003 is a MUST");
        let at = markdown.find("**[SESSION-003]**").expect("marker");
        let end = at + markdown[at..].find("\n\n").expect("paragraph end");
        let weakened =
            format!("{}{}{}", &markdown[..at], markdown[at..end].replace("MUST", "SHOULD"), &markdown[end..]);
        let files: Vec<(&str, &str)> =
            SPEC_FILES.iter().map(|(f, m)| if f == file { (*f, weakened.as_str()) } else { (*f, *m) }).collect();
        let edited = from_files(&files).expect("the edited spec parses");
        let drift = FrozenRequirements::new(&release, V10, &edited).expect("released").drift();
        assert!(drift.iter().any(|d| d.contains("SESSION-003 changed its level from MUST to SHOULD")), "{drift:?}");
        assert!(drift.iter().any(|d| d.contains("SESSION-003 changed its text")), "{drift:?}");
    }
}
