//! The DBSnapshot plan's table tests: the facts in, the steps and conditions out.

use std::collections::BTreeMap;

use crate::context::Grants;
use crate::crd::{ADOPTED_TAG, RESTORABLE_BY_TAG, RETAINED_TAG};
use crate::database::choices::AdoptionPolicy;
use crate::dbsnapshot::{DBSnapshot, DBSnapshotSpec, DBSnapshotStatus, SnapshotSource};
use crate::managed::named::fixtures::{self, deleting, owner_tags, with};
use crate::managed::plan::Requeue;
use crate::snapshot::plan::{Own, Step};
use crate::snapshot::{
    Extra, ObservedSnapshot, Shares, SnapshotDeletionPolicy, SnapshotReport, Source,
};

pub(super) type Facts = crate::snapshot::plan::Facts<DBSnapshot>;
pub(super) type Plan = crate::snapshot::plan::Plan<DBSnapshot>;

pub(super) fn plan(f: &Facts) -> Plan {
    crate::snapshot::plan::plan(f)
}

pub(super) const ARN: &str = "arn:aws:rds:us-east-1:123456789012:snapshot:coffee";

/// The DBSnapshot shop/coffee of the DBInstance coffee, never taken.
pub(super) fn facts(source: Source) -> Facts {
    let spec = DBSnapshotSpec {
        source: Some(SnapshotSource {
            name: Some("coffee".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut snapshot = DBSnapshot::new("coffee", spec);
    snapshot.metadata.generation = Some(1);
    fixtures::facts(
        snapshot,
        Extra {
            source,
            ..Default::default()
        },
    )
}

/// The source instance as RDS has it, with these tags.
fn instance(status: &str, tags: BTreeMap<String, String>) -> Source {
    Source::Found {
        identifier: "coffee-db".into(),
        status: status.into(),
        tags,
        instance_tags: None,
        grants: Grants::default(),
    }
}

/// Tags of an instance this namespace (shop) owns.
fn shop_instance() -> BTreeMap<String, String> {
    [
        (crate::crd::OWNER_TAG.to_owned(), "uid-db".to_owned()),
        (
            crate::crd::OWNER_NAME_TAG.to_owned(),
            "shop/coffee".to_owned(),
        ),
    ]
    .into()
}

pub(super) fn snapshot(status: &str, tags: BTreeMap<String, String>) -> ObservedSnapshot {
    ObservedSnapshot {
        name: "coffee".into(),
        arn: Some(ARN.into()),
        instance: "coffee-db".into(),
        kind: "manual".into(),
        status: status.into(),
        percent_progress: Some(if status == "available" { 100 } else { 40 }),
        tags,
        ..Default::default()
    }
}

pub(super) fn taken(f: Facts) -> Facts {
    with(f, |f| {
        f.object.status = Some(DBSnapshotStatus {
            report: SnapshotReport {
                arn: Some(ARN.into()),
                ..Default::default()
            },
            ..Default::default()
        })
    })
}

pub(super) fn reason(plan: &Plan) -> (bool, String, bool, String) {
    let s = plan.status.as_ref().expect("a status");
    (
        s.ready.ok,
        s.ready.reason.clone(),
        s.synced.ok,
        s.synced.reason.clone(),
    )
}

fn creates(plan: &Plan) -> bool {
    (plan.steps.iter()).any(|s| matches!(s, Step::Own(Own::Create { .. })))
}

#[test]
fn a_snapshot_of_an_available_instance_of_the_namespace_is_taken_once_tagged_as_ours() {
    let plan = plan(&facts(instance("available", shop_instance())));
    let Some(Step::Own(Own::Create {
        name,
        instance,
        tags,
    })) = plan.steps.first()
    else {
        panic!("a create first: {:?}", plan.steps)
    };
    assert_eq!((name.as_str(), instance.as_str()), ("coffee", "coffee-db"));
    assert_eq!(
        tags,
        &owner_tags(),
        "the ownership tags, from the first moment"
    );
    assert_eq!(plan.steps.len(), 1);
    assert_eq!(
        reason(&plan),
        (false, "Creating".into(), true, "Creating".into())
    );
    assert_eq!(
        plan.requeue,
        Requeue::After(std::time::Duration::from_secs(5))
    );
}

#[test]
fn what_is_refused_or_awaited_makes_no_call() {
    let other_namespace: BTreeMap<String, String> = [
        (crate::crd::OWNER_TAG.to_owned(), "uid-tea".to_owned()),
        (crate::crd::OWNER_NAME_TAG.to_owned(), "tea/db".to_owned()),
    ]
    .into();
    let granted: BTreeMap<String, String> = [
        (crate::crd::OWNER_TAG.to_owned(), "uid-tea".to_owned()),
        (crate::crd::OWNER_NAME_TAG.to_owned(), "tea/db".to_owned()),
        (RESTORABLE_BY_TAG.to_owned(), "bar shop".to_owned()),
    ]
    .into();
    let by_setting = Source::Found {
        identifier: "coffee-db".into(),
        status: "available".into(),
        tags: other_namespace.clone(),
        instance_tags: None,
        grants: Grants {
            restore: vec!["shop".into()],
            ..Default::default()
        },
    };
    let cases: Vec<(&str, Source, Option<&str>)> = vec![
        (
            "a DBInstance not Ready yet",
            Source::Unresolved("DBInstance coffee is not Ready yet".into()),
            Some("ReferencesUnresolved"),
        ),
        (
            "no such instance",
            Source::NotFound("coffee-db".into()),
            Some("SourceNotFound"),
        ),
        (
            "another namespace's instance",
            instance("available", other_namespace),
            Some("SourceNotOwned"),
        ),
        (
            "an untagged instance",
            instance("available", BTreeMap::new()),
            Some("SourceNotOwned"),
        ),
        (
            "ours, being modified",
            instance("modifying", shop_instance()),
            Some("SourceNotAvailable"),
        ),
        ("granted by its tag", instance("available", granted), None),
        ("granted by the operator's setting", by_setting, None),
    ];
    for (case, source, refused) in cases {
        let planned = plan(&facts(source));
        match refused {
            Some(expected) => {
                assert!(planned.steps.is_empty(), "{case}: {:?}", planned.steps);
                let (ready, _, synced, why) = reason(&planned);
                assert_eq!(
                    (ready, synced, why.as_str()),
                    (false, false, expected),
                    "{case}"
                );
            }
            None => assert!(creates(&planned), "{case}: {:?}", planned.steps),
        }
    }
}

#[test]
fn a_snapshot_deleted_outside_the_operator_is_reported_and_never_taken_again() {
    let f = taken(facts(instance("available", shop_instance())));
    let plan = plan(&f);
    assert!(plan.steps.is_empty(), "{:?}", plan.steps);
    assert_eq!(reason(&plan).3, "NotFound");
}

#[test]
fn a_snapshot_found_after_a_crash_is_ours_by_its_tags_and_not_taken_twice() {
    // The create was sent, the status never written: the snapshot is found by its name, with
    // this object's ownership tag.
    let f = with(facts(Source::NotRead), |f| {
        f.observed = Some(snapshot("creating", owner_tags()).into())
    });
    let plan = plan(&f);
    assert!(!creates(&plan), "{:?}", plan.steps);
    let status = plan.status.as_ref().expect("a status");
    assert_eq!(status.fields.report.arn.as_deref(), Some(ARN));
    assert_eq!(status.fields.report.percent_progress, Some(40));
    assert_eq!(
        reason(&plan),
        (false, "Creating".into(), true, "Synced".into())
    );
    assert!(status.busy);
    assert_eq!(
        plan.requeue,
        Requeue::After(std::time::Duration::from_secs(5))
    );
}

#[test]
fn an_available_snapshot_is_ready_and_its_tags_follow_the_spec() {
    let f = with(facts(Source::NotRead), |f| {
        f.observed = Some(snapshot("available", owner_tags()).into())
    });
    let planned = plan(&f);
    assert!(planned.steps.is_empty(), "{:?}", planned.steps);
    assert_eq!(
        reason(&planned),
        (true, "Synced".into(), true, "Synced".into())
    );
    assert_eq!(
        planned.requeue,
        Requeue::After(std::time::Duration::from_secs(60))
    );
    let tagged = with(f, |f| {
        f.object.spec.tags = vec![crate::crd::Tag {
            key: "team".into(),
            value: "coffee".into(),
        }]
    });
    let planned = plan(&tagged);
    assert_eq!(
        planned.steps,
        vec![Step::AddTags {
            arn: ARN.into(),
            tags: [("team".to_owned(), "coffee".to_owned())].into()
        }]
    );
    assert_eq!(
        reason(&planned),
        (true, "Available".into(), false, "Updating".into())
    );
}

#[test]
fn a_snapshot_of_the_name_that_is_not_ours_is_left_alone() {
    let foreign = BTreeMap::from([(crate::crd::OWNER_TAG.to_owned(), "uid-9".to_owned())]);
    let f = with(facts(Source::NotRead), |f| {
        f.observed = Some(snapshot("available", foreign).into())
    });
    let plan = plan(&f);
    assert!(plan.steps.is_empty(), "{:?}", plan.steps);
    assert_eq!(reason(&plan).3, "NameInUse");
    assert_eq!(
        plan.status.as_ref().map(|s| s.fields.report.arn.clone()),
        Some(None)
    );
}

#[test]
fn an_existing_snapshot_is_adopted_only_as_the_claim_rule_says_and_then_kept_at_deletion() {
    let asked = |policy: Option<AdoptionPolicy>, tags: BTreeMap<String, String>| {
        with(facts(Source::NotRead), |f| {
            f.object.spec.options.adoption_policy = policy;
            f.observed = Some(snapshot("available", tags).into());
        })
    };
    let granted = BTreeMap::from([(crate::crd::ADOPTABLE_BY_TAG.to_owned(), "shop".to_owned())]);
    let mut retained = owner_tags();
    retained.insert(crate::crd::OWNER_TAG.into(), "uid-0".into());
    retained.insert(RETAINED_TAG.into(), "2026-01-01T00:00:00Z".into());
    let adopt = Some(AdoptionPolicy::Adopt);
    let table = [
        (
            "untagged, not asked",
            asked(None, BTreeMap::new()),
            "NameInUse",
        ),
        (
            "untagged, asked, not granted",
            asked(adopt, BTreeMap::new()),
            "NotGranted",
        ),
        (
            "untagged, asked, granted by its tag",
            asked(adopt, granted.clone()),
            "Adopting",
        ),
        (
            "untagged, asked, granted by the operator",
            with(asked(adopt, BTreeMap::new()), |f| {
                f.extra.adoption = vec!["shop".into()]
            }),
            "Adopting",
        ),
        (
            "Never, granted",
            asked(Some(AdoptionPolicy::Never), granted.clone()),
            "NameInUse",
        ),
        (
            "the tags of its instance, of this namespace (RDS copied them), asked: no grant needed",
            with(asked(adopt, shop_instance()), |f| {
                f.extra.instance_tags = Some(shop_instance())
            }),
            "Adopting",
        ),
        (
            "the tags of its instance, not asked",
            with(asked(None, shop_instance()), |f| {
                f.extra.instance_tags = Some(shop_instance())
            }),
            "NameInUse",
        ),
        (
            "another object's tags, its instance's unknown, asked",
            asked(adopt, shop_instance()),
            "NameInUse",
        ),
        (
            "retained by a DBSnapshot shop/coffee: taken back unasked",
            asked(None, retained.clone()),
            "Adopting",
        ),
    ];
    for (name, f, want) in table {
        let p = plan(&f);
        assert_eq!(reason(&p).3, want, "{name}");
        let tags_added = p.steps.iter().any(|s| matches!(s, Step::AddTags { .. }));
        assert_eq!(tags_added, want == "Adopting", "{name}: {:?}", p.steps);
        assert!(!creates(&p), "{name}");
    }
    // The adoption: the ownership tags and the adopted tag in one call; the retained tag goes.
    let p = plan(&asked(None, retained));
    let Some(Step::AddTags { arn, tags }) = p.steps.first() else {
        panic!("{:?}", p.steps)
    };
    assert_eq!(arn, ARN);
    assert_eq!(tags.get(crate::crd::OWNER_TAG).unwrap(), fixtures::UID);
    assert!(tags.contains_key(ADOPTED_TAG));
    let removed = Step::RemoveTags {
        arn: ARN.into(),
        keys: vec![RETAINED_TAG.into()],
    };
    assert_eq!(p.steps.get(1), Some(&removed));
    // Adopt with nothing to adopt takes nothing, even of an available source of its own.
    let nothing = with(facts(instance("available", shop_instance())), |f| {
        f.object.spec.options.adoption_policy = adopt
    });
    let p = plan(&nothing);
    assert!(p.steps.is_empty() && reason(&p).3 == "NotFound", "{p:?}");
    let or_create = with(nothing, |f| {
        f.object.spec.options.adoption_policy = Some(AdoptionPolicy::AdoptOrCreate)
    });
    assert!(creates(&plan(&or_create)));
    // An adopted snapshot is kept at deletion unless deletionPolicy says Delete.
    let mut adopted = owner_tags();
    adopted.insert(ADOPTED_TAG.into(), "2026-01-01T00:00:00Z".into());
    let ours = asked(adopt, adopted);
    let kept = plan(&deleting(ours.clone()));
    assert!(
        !kept.steps.iter().any(|s| matches!(s, Step::Delete { .. })),
        "{:?}",
        kept.steps
    );
    assert!(kept.events.iter().any(|e| e.reason == "Retained"));
    let delete = with(ours, |f| {
        f.object.spec.options.deletion_policy = Some(SnapshotDeletionPolicy::Delete)
    });
    let deleted = plan(&deleting(delete));
    assert!(
        deleted
            .steps
            .iter()
            .any(|s| matches!(s, Step::Delete { .. }))
    );
}

#[test]
fn deletion_follows_the_deletion_policy_and_never_deletes_what_is_not_ours() {
    let ours = with(facts(Source::NotRead), |f| {
        f.observed = Some(snapshot("available", owner_tags()).into())
    });
    let delete = plan(&deleting(ours.clone()));
    assert_eq!(
        delete.steps,
        vec![
            Step::Delete {
                name: "coffee".into()
            },
            Step::RemoveFinalizer
        ]
    );
    let retain = with(ours, |f| {
        f.object.spec.options.deletion_policy = Some(SnapshotDeletionPolicy::Retain)
    });
    let retained = plan(&deleting(retain.clone()));
    // Retained, it is tagged so: a DBSnapshot of the name later takes it back.
    let tagged = Step::AddTags {
        arn: ARN.into(),
        tags: [(RETAINED_TAG.to_owned(), "2026-01-01T00:00:00Z".to_owned())].into(),
    };
    assert_eq!(retained.steps, vec![tagged, Step::RemoveFinalizer]);
    assert!(retained.events.iter().any(|e| e.reason == "Retained"));
    let again = with(retain, |f| {
        let o = f.observed.as_mut().unwrap();
        o.tags
            .insert(RETAINED_TAG.into(), "2025-01-01T00:00:00Z".into());
    });
    assert_eq!(plan(&deleting(again)).steps, vec![Step::RemoveFinalizer]);
    let foreign = BTreeMap::from([(crate::crd::OWNER_TAG.to_owned(), "uid-9".to_owned())]);
    let not_ours = with(facts(Source::NotRead), |f| {
        f.observed = Some(snapshot("available", foreign).into())
    });
    assert_eq!(plan(&deleting(not_ours)).steps, vec![Step::RemoveFinalizer]);
}

/// The available snapshot shop/coffee, its restore attribute `current`, shared with `wanted`,
/// the namespace granted AWSAccount 222222222222, the operator's settings `grants`.
fn sharing(current: &[&str], wanted: &[&str], encrypted: bool, grants: Grants) -> Facts {
    with(facts(Source::NotRead), |f| {
        let mut o = snapshot("available", owner_tags());
        o.encrypted = Some(encrypted);
        f.observed = Some(o.into());
        f.object.spec.options.shared_with = wanted.iter().map(|a| a.to_string()).collect();
        f.extra.shares = Some(Shares {
            current: [(
                "coffee".to_owned(),
                current.iter().map(|a| a.to_string()).collect(),
            )]
            .into(),
            accounts: vec!["222222222222".into()],
            grants,
        });
    })
}

#[test]
fn a_share_goes_only_to_granted_accounts_and_public_only_when_allowed() {
    let by_setting = Grants {
        share_to: vec!["333333333333".into()],
        ..Default::default()
    };
    let public = Grants {
        public_snapshots: vec!["shop".into()],
        ..Default::default()
    };
    let share = |add: &[&str], remove: &[&str]| {
        Some(Step::Own(Own::Share {
            name: "coffee".into(),
            add: add.iter().map(|a| a.to_string()).collect(),
            remove: remove.iter().map(|a| a.to_string()).collect(),
        }))
    };
    type Case<'a> = (&'a str, Facts, Option<Step>, &'a str, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "an account an AWSAccount granted to the namespace names",
            sharing(&[], &["222222222222"], false, Grants::default()),
            share(&["222222222222"], &[]),
            "Updating",
            vec!["222222222222"],
        ),
        (
            "an account the operator's setting lists",
            sharing(&[], &["333333333333"], false, by_setting),
            share(&["333333333333"], &[]),
            "Updating",
            vec!["333333333333"],
        ),
        (
            "as the spec says already",
            sharing(
                &["222222222222"],
                &["222222222222"],
                false,
                Grants::default(),
            ),
            None,
            "Synced",
            vec!["222222222222"],
        ),
        (
            "a share made outside the spec is taken back",
            sharing(
                &["222222222222", "444444444444"],
                &["222222222222"],
                false,
                Grants::default(),
            ),
            share(&[], &["444444444444"]),
            "Updating",
            vec!["222222222222"],
        ),
        (
            "an account nothing grants: nothing is shared, not even the granted one",
            sharing(
                &[],
                &["222222222222", "999999999999"],
                false,
                Grants::default(),
            ),
            None,
            "ShareNotGranted",
            vec![],
        ),
        (
            "public without the setting",
            sharing(&[], &["all"], false, Grants::default()),
            None,
            "ShareNotGranted",
            vec![],
        ),
        (
            "public, encrypted",
            sharing(&[], &["all"], true, public.clone()),
            None,
            "ShareNotGranted",
            vec![],
        ),
        (
            "public, unencrypted, allowed",
            sharing(&[], &["all"], false, public),
            share(&["all"], &[]),
            "Updating",
            vec!["all"],
        ),
    ];
    for (case, f, step, synced, reported) in cases {
        let p = plan(&f);
        let shares: Vec<_> = (p.steps.iter())
            .filter(|s| matches!(s, Step::Own(Own::Share { .. })))
            .cloned()
            .collect();
        assert_eq!(shares, step.into_iter().collect::<Vec<_>>(), "{case}");
        let status = p.status.as_ref().expect("a status");
        assert_eq!(status.synced.reason, synced, "{case}");
        assert_eq!(status.fields.report.shared_with, reported, "{case}");
        assert!(
            status.ready.ok,
            "{case}: the snapshot is there, shared or not"
        );
    }
}

#[test]
fn a_copy_is_made_once_of_a_snapshot_this_namespace_may_copy_once_it_is_available() {
    let copy = |status: &str, tags: BTreeMap<String, String>, instance_tags| {
        with(facts(Source::NotRead), |f| {
            f.object.spec.source = None;
            f.object.spec.copy_from = Some(crate::dbsnapshot::CopyFrom {
                name: Some("original".into()),
                ..Default::default()
            });
            f.object.spec.options.kms_key_id = Some("alias/west".into());
            f.extra.source = Source::Found {
                identifier: "arn:aws:rds:us-east-1:123456789012:snapshot:original".into(),
                status: status.into(),
                tags,
                instance_tags,
                grants: Grants::default(),
            };
        })
    };
    let p = plan(&copy("available", shop_instance(), None));
    assert_eq!(
        p.steps,
        vec![Step::Own(Own::Copy {
            name: "coffee".into(),
            source: "arn:aws:rds:us-east-1:123456789012:snapshot:original".into(),
            kms_key_id: Some("alias/west".into()),
            copy_tags: false,
            tags: owner_tags(),
        })]
    );
    let status = p.status.expect("a status");
    assert_eq!(
        status.fields.db_instance_identifier, None,
        "RDS says, once copied"
    );
    // An automated snapshot, untagged, of an instance this namespace owns: its own.
    let automated = plan(&copy("available", BTreeMap::new(), Some(shop_instance())));
    assert!(matches!(
        automated.steps.first(),
        Some(Step::Own(Own::Copy { .. }))
    ));
    // Untagged, of an instance gone or another namespace's: refused, no call.
    let refused = plan(&copy("available", BTreeMap::new(), None));
    assert!(refused.steps.is_empty());
    assert_eq!(reason(&refused).3, "SourceNotOwned");
    // Still being taken: it waits.
    let waiting = plan(&copy("creating", shop_instance(), None));
    assert!(waiting.steps.is_empty());
    assert_eq!(reason(&waiting).3, "SourceNotAvailable");
}
