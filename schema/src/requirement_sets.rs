//! The requirement set of each protocol version, frozen at its release, and the errata added since.
//!
//! Spec: `spec/versioning.md#frozen-requirement-sets` (`COMPAT-016`). Every requirement says which
//! version it applies from ([`Requirement::since`]) and, when it was added after that version was
//! released, the date it was added ([`Requirement::erratum`]). From that and the release dates
//! ([`RELEASES`]) follow:
//! - the **released set** of a minor ([`released_set`]): every requirement that applies from that
//!   minor or an older one and is not an erratum to it — what a backend negotiating that minor was
//!   promised it would be judged by. It is committed under
//!   `schema/releases/v1/<MAJOR.MINOR>/requirements/released.json` and `chatwire-schema check`
//!   fails when the registry no longer defines exactly it (a text, level, `since` or group
//!   changed, a requirement removed, or one added without erratum metadata);
//! - its **errata** ([`errata`]): rules added after the release that apply to its connections. A
//!   failure of an erratum only is a warning for that minor (`--strict` fails it).

use serde::{Deserialize, Serialize};

use crate::requirements::{Level, Requirement};
use crate::since::RELEASED_VERSIONS;
use crate::ProtocolVersion;

/// Every released minor with its release date (`YYYY-MM-DD`, UTC), oldest first: the day its
/// schemas were frozen under `schema/releases/v1/` (1.0: commit 77422b5, "first release baseline";
/// 1.1: commit f1061d5, which froze `schema/releases/v1/1.1`; 1.2: the commit that froze
/// `schema/releases/v1/1.2`). Holds exactly [`RELEASED_VERSIONS`] (a test says so).
pub const RELEASES: &[(ProtocolVersion, &str)] = &[
    (ProtocolVersion { major: 1, minor: 0 }, "2026-11-22"),
    (ProtocolVersion { major: 1, minor: 1 }, "2026-11-26"),
    (ProtocolVersion { major: 1, minor: 2 }, "2026-11-28"),
];

/// The release date of `version`, when it is released.
pub fn release_date(version: ProtocolVersion) -> Option<&'static str> {
    RELEASES.iter().find(|(v, _)| *v == version).map(|(_, date)| *date)
}

/// Whether `version` is a released minor (its requirement set is frozen).
pub fn is_released(version: ProtocolVersion) -> bool {
    RELEASED_VERSIONS.contains(&version)
}

impl Requirement {
    /// Whether the requirement binds a connection that negotiated `version`: it applies from
    /// that minor or an older one.
    pub fn applies_to(&self, version: ProtocolVersion) -> bool {
        self.since <= version
    }

    /// Whether the requirement is an erratum to the released minor `version`: it applies to its
    /// connections but was added on or after its release date, so the set `version` was released
    /// with lacks it. False for an unreleased minor, whose set is not frozen yet.
    pub fn is_erratum_to(&self, version: ProtocolVersion) -> bool {
        match (&self.erratum, release_date(version)) {
            (Some(added), Some(released)) => self.applies_to(version) && added.as_str() >= released,
            _ => false,
        }
    }

    /// The released minors this requirement is an erratum to, oldest first.
    pub fn errata_of(&self) -> Vec<ProtocolVersion> {
        RELEASES.iter().map(|(v, _)| *v).filter(|v| self.is_erratum_to(*v)).collect()
    }

    /// A short note naming the erratum for `version`, e.g. `INT-002: erratum to 1.0 of
    /// 2026-11-23`; `None` when it is none.
    pub fn erratum_note(&self, version: ProtocolVersion) -> Option<String> {
        let date = self.erratum.as_deref().filter(|_| self.is_erratum_to(version))?;
        Some(format!("{}: erratum to {version} of {date}", self.id))
    }
}

/// One requirement as a frozen set records it: what may never change once released. Its file,
/// line and section may (ids move between files), and so may its untestable note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrozenRequirement {
    /// The stable id.
    pub id: String,
    /// Its level.
    pub level: Level,
    /// The version it applies from.
    pub since: ProtocolVersion,
    /// Its capability or feature, or `core`.
    pub group: String,
    /// The date it was added, for an erratum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erratum: Option<String>,
    /// The statement, on one line, without its marker, metadata or untestable note.
    pub text: String,
}

impl From<&Requirement> for FrozenRequirement {
    fn from(r: &Requirement) -> Self {
        FrozenRequirement {
            id: r.id.clone(),
            level: r.level,
            since: r.since,
            group: r.group.clone(),
            erratum: r.erratum.clone(),
            text: r.text.clone(),
        }
    }
}

/// The file of a released minor's requirement set, or of its errata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrozenSet {
    /// The minor.
    pub version: ProtocolVersion,
    /// Its release date.
    pub released: String,
    /// The requirements, sorted by id.
    pub requirements: Vec<FrozenRequirement>,
}

/// The requirement set `version` was released with, as the registry defines it now; `None` when
/// `version` is not released.
pub fn released_set(registry: &[Requirement], version: ProtocolVersion) -> Option<FrozenSet> {
    let released = release_date(version)?;
    Some(collect(registry, version, released, |r| r.applies_to(version) && !r.is_erratum_to(version)))
}

/// The errata to the released minor `version`: requirements that apply to its connections and were
/// added after its release; `None` when `version` is not released.
pub fn errata(registry: &[Requirement], version: ProtocolVersion) -> Option<FrozenSet> {
    let released = release_date(version)?;
    Some(collect(registry, version, released, |r| r.is_erratum_to(version)))
}

fn collect(
    registry: &[Requirement],
    version: ProtocolVersion,
    released: &str,
    keep: impl Fn(&Requirement) -> bool,
) -> FrozenSet {
    let mut requirements: Vec<FrozenRequirement> = registry.iter().filter(|r| keep(r)).map(Into::into).collect();
    requirements.sort_by(|a, b| a.id.cmp(&b.id));
    FrozenSet { version, released: released.to_owned(), requirements }
}

/// How the registry departs from a frozen set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetDrift {
    /// A released requirement the spec no longer defines (or no longer applies to the minor).
    #[error("{version}: released requirement {id} is gone from the set (ids are never withdrawn from a released set)")]
    Removed {
        /// The minor.
        version: ProtocolVersion,
        /// The id.
        id: String,
    },
    /// A released requirement whose level changed.
    #[error("{version}: released requirement {id} changed its level from {released} to {now}; a change of meaning is a new id, marked as an erratum")]
    LevelChanged {
        /// The minor.
        version: ProtocolVersion,
        /// The id.
        id: String,
        /// The released level.
        released: Level,
        /// The level now.
        now: Level,
    },
    /// A released requirement whose text changed.
    #[error("{version}: released requirement {id} changed its text; a released statement never changes: add the correction as a new requirement marked `erratum YYYY-MM-DD`\n  released: {released}\n  now:      {now}")]
    TextChanged {
        /// The minor.
        version: ProtocolVersion,
        /// The id.
        id: String,
        /// The released text.
        released: String,
        /// The text now.
        now: String,
    },
    /// A released requirement whose `since`, group or erratum date changed.
    #[error("{version}: released requirement {id} changed its version metadata ({field}: {released} -> {now})")]
    MetadataChanged {
        /// The minor.
        version: ProtocolVersion,
        /// The id.
        id: String,
        /// `since`, `group` or `erratum`.
        field: &'static str,
        /// The released value.
        released: String,
        /// The value now.
        now: String,
    },
    /// A requirement the registry puts in the released set that the release does not hold.
    #[error("{version}: {id} applies to {version} connections but {version} was released without it; mark it `*(since {version}, erratum YYYY-MM-DD)*` (the date it is added) or give it a later `since`")]
    Added {
        /// The minor.
        version: ProtocolVersion,
        /// The id.
        id: String,
    },
}

/// Every way the registry's set for the frozen set's minor departs from it, in id order.
pub fn drift(frozen: &FrozenSet, registry: &[Requirement]) -> Vec<SetDrift> {
    let version = frozen.version;
    let now = released_set(registry, version)
        .map(|s| s.requirements)
        .unwrap_or_else(|| registry.iter().filter(|r| r.applies_to(version)).map(Into::into).collect());
    let mut out = Vec::new();
    for old in &frozen.requirements {
        let id = old.id.clone();
        let Some(new) = now.iter().find(|r| r.id == old.id) else {
            out.push(SetDrift::Removed { version, id });
            continue;
        };
        if old.level != new.level {
            out.push(SetDrift::LevelChanged { version, id: id.clone(), released: old.level, now: new.level });
        }
        if old.text != new.text {
            out.push(SetDrift::TextChanged {
                version,
                id: id.clone(),
                released: old.text.clone(),
                now: new.text.clone(),
            });
        }
        let show = |e: &Option<String>| e.clone().unwrap_or_else(|| "none".into());
        for (field, released, current) in [
            ("since", old.since.to_string(), new.since.to_string()),
            ("group", old.group.clone(), new.group.clone()),
            ("erratum", show(&old.erratum), show(&new.erratum)),
        ] {
            if released != current {
                out.push(SetDrift::MetadataChanged { version, id: id.clone(), field, released, now: current });
            }
        }
    }
    for new in now.iter().filter(|r| !frozen.requirements.iter().any(|o| o.id == r.id)) {
        out.push(SetDrift::Added { version, id: new.id.clone() });
    }
    out
}

/// Why the registry's version metadata is inconsistent with the releases.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// An erratum of a minor that is not released: a rule of an unreleased minor is simply part of it.
    #[error("{id}: marked erratum {date} but {since} is not released; drop the erratum (the rule is part of {since})")]
    ErratumOfUnreleased {
        /// The id.
        id: String,
        /// Its `since`.
        since: ProtocolVersion,
        /// Its erratum date.
        date: String,
    },
    /// An erratum dated before the release of its `since`: it was part of that release.
    #[error("{id}: marked erratum {date}, before {since} was released ({released}), so {since} was released with it")]
    ErratumBeforeRelease {
        /// The id.
        id: String,
        /// Its `since`.
        since: ProtocolVersion,
        /// Its erratum date.
        date: String,
        /// The release date of `since`.
        released: String,
    },
    /// A requirement of a version newer than the protocol this build defines.
    #[error("{id}: since {since}, newer than the protocol version this build defines ({current})")]
    SinceTooNew {
        /// The id.
        id: String,
        /// Its `since`.
        since: ProtocolVersion,
        /// `PROTOCOL_VERSION`.
        current: ProtocolVersion,
    },
}

/// Checks every requirement's metadata against [`RELEASES`] and `PROTOCOL_VERSION`.
pub fn check_metadata(registry: &[Requirement]) -> Vec<MetadataError> {
    let mut out = Vec::new();
    for r in registry {
        if r.since > crate::PROTOCOL_VERSION {
            out.push(MetadataError::SinceTooNew { id: r.id.clone(), since: r.since, current: crate::PROTOCOL_VERSION });
        }
        let Some(date) = &r.erratum else { continue };
        match release_date(r.since) {
            None => {
                out.push(MetadataError::ErratumOfUnreleased { id: r.id.clone(), since: r.since, date: date.clone() })
            }
            Some(released) if date.as_str() < released => out.push(MetadataError::ErratumBeforeRelease {
                id: r.id.clone(),
                since: r.since,
                date: date.clone(),
                released: released.to_owned(),
            }),
            Some(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requirements::{parse, RegistryError};

    const V10: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };
    const V11: ProtocolVersion = ProtocolVersion { major: 1, minor: 1 };
    const V12: ProtocolVersion = ProtocolVersion { major: 1, minor: 2 };
    const V13: ProtocolVersion = ProtocolVersion { major: 1, minor: 3 };

    fn registry(markdown: &str) -> Vec<Requirement> {
        parse("t.md", markdown).expect("the test spec parses")
    }

    const SPEC: &str = "# T\n\n\
        **[A-001]** A server MUST do a.\n\n\
        **[A-002]** *(since 1.0, erratum 2026-11-23)* A server MUST bound b.\n\n\
        **[A-003]** *(since 1.1, retry)* A server SHOULD retry c. (untestable: a reason)\n\n\
        **[A-004]** *(since 1.0, erratum 2026-11-27)* A server MUST do d.\n\n\
        **[A-005]** *(since 1.2, cancel)* A server MAY cancel e.\n\n\
        **[A-006]** *(since 1.2, cancel, erratum 2026-11-29)* A server MUST cancel f.\n";

    #[test]
    fn metadata_is_parsed_and_kept_out_of_the_text() {
        let reqs = registry(SPEC);
        assert_eq!((reqs[0].since, reqs[0].group.as_str(), reqs[0].erratum.as_deref()), (V10, "core", None));
        assert_eq!((reqs[1].since, reqs[1].erratum.as_deref()), (V10, Some("2026-11-23")));
        assert_eq!(reqs[1].text, "A server MUST bound b.");
        assert_eq!((reqs[2].since, reqs[2].group.as_str()), (V11, "retry"));
        assert_eq!(reqs[2].text, "A server SHOULD retry c.");
        assert_eq!(reqs[2].untestable.as_deref(), Some("a reason"));
        assert_eq!(reqs[2].level, Level::Should);
    }

    #[test]
    fn malformed_metadata_is_refused_naming_the_requirement() {
        for bad in [
            "*(1.1)*",
            "*(since 1.x)*",
            "*(since 1.0, erratum 2026-13-01)*",
            "*(since 1.0, erratum 23.11.2026)*",
            "*(since 1.1, Retry)*",
            "*(since 1.0, erratum 2026-11-23, retry)*",
            "*(since 1.0, erratum 2026-11-23, erratum 2026-11-24)*",
        ] {
            let err = parse("t.md", &format!("**[A-001]** {bad} A server MUST do a.\n")).unwrap_err();
            assert!(matches!(&err, RegistryError::MalformedMetadata { id, .. } if id == "A-001"), "{bad}: {err}");
        }
    }

    #[test]
    fn an_erratum_belongs_to_the_releases_after_it_and_not_to_those_before() {
        let reqs = registry(SPEC);
        let ids = |set: Option<FrozenSet>| -> Vec<String> {
            set.expect("released").requirements.into_iter().map(|r| r.id).collect()
        };
        // Added 2026-11-23, after 1.0 (2026-11-22), before 1.1 (2026-11-26).
        assert_eq!(ids(released_set(&reqs, V10)), ["A-001"]);
        assert_eq!(ids(errata(&reqs, V10)), ["A-002", "A-004"]);
        assert_eq!(ids(released_set(&reqs, V11)), ["A-001", "A-002", "A-003"]);
        assert_eq!(ids(errata(&reqs, V11)), ["A-004"]);
        // 1.2 (2026-11-28) was released with A-004 (2026-11-27); A-006, added the day after, is
        // its erratum and binds no older minor.
        assert_eq!(ids(released_set(&reqs, V12)), ["A-001", "A-002", "A-003", "A-004", "A-005"]);
        assert_eq!(ids(errata(&reqs, V12)), ["A-006"]);
        assert!(released_set(&reqs, V13).is_none(), "1.3 is not released: nothing is frozen");
        assert!(!reqs[1].is_erratum_to(V12));
        assert_eq!(reqs[1].errata_of(), [V10]);
        assert_eq!(reqs[3].errata_of(), [V10, V11]);
        assert_eq!(reqs[5].errata_of(), [V12]);
        assert_eq!(reqs[1].erratum_note(V10).as_deref(), Some("A-002: erratum to 1.0 of 2026-11-23"));
        assert_eq!(reqs[1].erratum_note(V11), None);
        assert_eq!(reqs[5].erratum_note(V12).as_deref(), Some("A-006: erratum to 1.2 of 2026-11-29"));
        assert!(!reqs[2].applies_to(V10) && reqs[2].applies_to(V12));
    }

    #[test]
    fn a_released_text_or_level_that_changes_is_drift() {
        let frozen = released_set(&registry(SPEC), V11).expect("released");
        assert_eq!(drift(&frozen, &registry(SPEC)), Vec::new());
        // Rewording a released statement.
        let reworded = registry(&SPEC.replace("A server MUST do a.", "A server MUST do a, quickly."));
        let found = drift(&frozen, &reworded);
        assert!(matches!(found.as_slice(), [SetDrift::TextChanged { id, .. }] if id == "A-001"), "{found:?}");
        // MUST -> SHOULD.
        let weakened = registry(&SPEC.replace("MUST bound b", "SHOULD bound b"));
        let found = drift(&frozen, &weakened);
        assert!(
            matches!(found.as_slice(), [SetDrift::LevelChanged { id, released: Level::Must, now: Level::Should, .. }, SetDrift::TextChanged { .. }] if id == "A-002"),
            "{found:?}"
        );
        // A new rule without metadata lands in 1.0's set, which was released without it.
        let added = registry(&format!("{SPEC}\n**[A-007]** A server MUST do g.\n"));
        let found = drift(&frozen, &added);
        assert!(matches!(found.as_slice(), [SetDrift::Added { id, .. }] if id == "A-007"), "{found:?}");
        // Moved to a later minor: gone from the released set.
        let moved = registry(&SPEC.replace("**[A-001]** A server", "**[A-001]** *(since 1.2)* A server"));
        let found = drift(&frozen, &moved);
        assert!(matches!(found.as_slice(), [SetDrift::Removed { id, .. }] if id == "A-001"), "{found:?}");
        // The frozen record round-trips through its JSON file.
        let json = serde_json::to_string(&frozen).expect("serializes");
        assert_eq!(serde_json::from_str::<FrozenSet>(&json).expect("parses"), frozen);
    }

    #[test]
    fn erratum_metadata_is_checked_against_the_releases() {
        assert_eq!(check_metadata(&registry(SPEC)), Vec::new());
        let early = registry("**[A-001]** *(since 1.0, erratum 2026-11-01)* A server MUST do a.\n");
        assert!(matches!(check_metadata(&early).as_slice(), [MetadataError::ErratumBeforeRelease { .. }]));
        // Dated before 1.2 was released: 1.2 was released with it.
        let early_12 = registry("**[A-001]** *(since 1.2, erratum 2026-11-27)* A server MUST do a.\n");
        assert!(matches!(check_metadata(&early_12).as_slice(), [MetadataError::ErratumBeforeRelease { .. }]));
        // 1.3 is the protocol this build defines, not yet released: an erratum of it is meaningless.
        let unreleased = registry("**[A-001]** *(since 1.3, erratum 2026-11-29)* A server MUST do a.\n");
        assert!(matches!(check_metadata(&unreleased).as_slice(), [MetadataError::ErratumOfUnreleased { .. }]));
        let unreleased_too_new = registry("**[A-001]** *(since 1.4, erratum 2026-11-29)* A server MUST do a.\n");
        assert!(matches!(
            check_metadata(&unreleased_too_new).as_slice(),
            [MetadataError::SinceTooNew { .. }, MetadataError::ErratumOfUnreleased { .. }]
        ));
        let future = registry("**[A-001]** *(since 9.0)* A server MUST do a.\n");
        assert!(matches!(check_metadata(&future).as_slice(), [MetadataError::SinceTooNew { .. }]));
    }

    #[test]
    fn releases_name_exactly_the_released_versions_in_order() {
        let versions: Vec<ProtocolVersion> = RELEASES.iter().map(|(v, _)| *v).collect();
        assert_eq!(versions, RELEASED_VERSIONS);
        assert!(RELEASES.windows(2).all(|w| w[0].1 <= w[1].1), "release dates ascend");
        assert!(RELEASES.iter().all(|(v, _)| is_released(*v)) && !is_released(V13));
    }
}
