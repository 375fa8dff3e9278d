//! The version metadata of the real spec: consistent with the releases, groups that name a
//! capability or feature, and the errata the issue that introduced frozen sets names
//! (`spec/versioning.md#frozen-requirement-sets`).

use chatwire_schema::requirement_sets::{check_metadata, errata, released_set, RELEASES};
use chatwire_schema::requirements::{self, Requirement, CLUSTER_GROUP, CORE_GROUP};
use chatwire_schema::session::welcome::Capability;
use chatwire_schema::ProtocolVersion;

const V10: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };
const V11: ProtocolVersion = ProtocolVersion { major: 1, minor: 1 };

fn registry() -> Vec<Requirement> {
    requirements::all().expect("the spec parses")
}

fn ids(set: Option<chatwire_schema::requirement_sets::FrozenSet>) -> Vec<String> {
    set.expect("a released minor").requirements.into_iter().map(|r| r.id).collect()
}

#[test]
fn metadata_of_the_spec_is_consistent_with_the_releases() {
    assert_eq!(check_metadata(&registry()), Vec::new());
}

#[test]
fn every_group_is_core_cluster_or_a_capability() {
    for r in registry() {
        let capability: Capability = serde_json::from_value(serde_json::Value::String(r.group.clone()))
            .expect("any name deserializes as a capability");
        let known = r.group == CORE_GROUP || r.group == CLUSTER_GROUP || !matches!(capability, Capability::Other(_));
        assert!(known, "{}: group {:?} names no capability or feature", r.id, r.group);
    }
}

#[test]
fn the_bounds_added_after_1_0_are_its_errata_and_part_of_1_1() {
    let reqs = registry();
    for id in ["INT-002", "TRANSPORT-016"] {
        let r = reqs.iter().find(|r| r.id == id).expect("defined");
        assert_eq!(r.errata_of(), [V10], "{id}");
        assert!(ids(errata(&reqs, V10)).contains(&id.to_owned()), "{id}");
        assert!(!ids(released_set(&reqs, V10)).contains(&id.to_owned()), "{id}");
        assert!(ids(released_set(&reqs, V11)).contains(&id.to_owned()), "{id}");
    }
    // A 1.1 feature is in no 1.0 set, as a requirement or an erratum.
    let retry = reqs.iter().find(|r| r.id == "RETRY-001").expect("defined");
    assert!(!retry.applies_to(V10) && retry.errata_of().is_empty());
    assert!(ids(released_set(&reqs, V11)).contains(&"RETRY-001".to_owned()));
}

#[test]
fn every_requirement_of_an_unreleased_minor_is_in_no_frozen_set() {
    let reqs = registry();
    let newest = RELEASES.last().expect("a release").0;
    for r in reqs.iter().filter(|r| r.since > newest) {
        for (v, _) in RELEASES {
            assert!(!ids(released_set(&reqs, *v)).contains(&r.id), "{} is since {}", r.id, r.since);
        }
    }
}

#[test]
fn release_1_2_holds_its_rules_and_the_errata_of_the_older_minors() {
    let reqs = registry();
    let v12 = ProtocolVersion { major: 1, minor: 2 };
    let set = ids(released_set(&reqs, v12));
    // A 1.2 rule, and errata to 1.0 and 1.1 added before 1.2's release, are part of its set.
    for id in ["CANCEL-001", "ATTACH-001", "WINDOW-001", "INT-002", "RETRY-001"] {
        assert!(set.contains(&id.to_owned()), "{id} is in 1.2's released set");
        let r = reqs.iter().find(|r| r.id == id).expect("defined");
        assert!(!r.errata_of().contains(&v12), "{id} is no erratum to 1.2");
    }
    // Every rule that binds 1.2 connections is in its set or one of its errata, never both.
    let errata = ids(errata(&reqs, v12));
    for r in reqs.iter().filter(|r| r.applies_to(v12)) {
        assert!(set.contains(&r.id) != errata.contains(&r.id), "{}: in exactly one of set and errata", r.id);
    }
}
