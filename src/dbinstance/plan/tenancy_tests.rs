//! Table tests of the tenancy rules (`tenancy.rs`): what one namespace may reach of another's.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::events::EventType::Warning;

use super::tenancy::{Grants, RestoreSource};
use super::tests::{
    BUSY, SETTLED, UID, adopting, check_outlines, connection_secret, deleting, facts,
    no_generated_secret, ours, outline, snapshot, stack_instance, synced, with,
};
use super::*;
use crate::dbinstance::{
    ADOPTABLE_BY_TAG, AdoptionPolicy, ConnectionSecretSpec, DeletionPolicy, ManagementPolicy,
    OWNER_NAME_TAG, OWNER_TAG, RESTORABLE_BY_TAG, RestoreFrom, SECRET_OWNER_ANNOTATION, Tag,
};
use crate::rds_state::SnapshotInfo;

fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    (pairs.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Ownership tags of an object of namespace `ns`.
fn owned_in(ns: &str) -> BTreeMap<String, String> {
    tags(&[
        (OWNER_TAG, "some-uid"),
        (OWNER_NAME_TAG, &format!("{ns}/source")),
    ])
}

fn found(tags: BTreeMap<String, String>) -> Option<RestoreSource> {
    Some(RestoreSource::Found {
        tags,
        instance_tags: None,
    })
}

/// shop/coffee restores from snapshot `their-final`, whose source is as given.
fn restoring(source: Option<RestoreSource>) -> Facts {
    with(facts(), |f| {
        f.db.spec.restore_from = Some(RestoreFrom {
            db_snapshot_identifier: Some("their-final".into()),
            ..Default::default()
        });
        f.restore_source = source;
    })
}

#[test]
fn a_restore_source_must_be_this_namespaces_own_or_granted() {
    let point_in_time = |source| {
        with(restoring(source), |f| {
            f.db.spec.restore_from = Some(RestoreFrom {
                source_db_instance_identifier: Some("team-b-db".into()),
                use_latest_restorable_time: Some(true),
                ..Default::default()
            });
        })
    };
    let grants = |restore: &[&str]| Grants {
        restore: restore.iter().map(|n| n.to_string()).collect(),
        ..Default::default()
    };
    check_outlines(vec![
        (
            "a snapshot carrying this namespace's ownership tags is restored",
            restoring(found(owned_in("shop"))),
            vec!["RestoreInstance"],
            "Synced",
        ),
        (
            "another namespace's snapshot is not",
            restoring(found(owned_in("team-b"))),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "an untagged snapshot is not",
            restoring(found(BTreeMap::new())),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a snapshot of an instance this namespace owns (by DbiResourceId) is",
            restoring(Some(RestoreSource::Found {
                tags: BTreeMap::new(),
                instance_tags: Some(owned_in("shop")),
            })),
            vec!["RestoreInstance"],
            "Synced",
        ),
        (
            "a snapshot of another namespace's living instance is not",
            restoring(Some(RestoreSource::Found {
                tags: BTreeMap::new(),
                instance_tags: Some(owned_in("team-b")),
            })),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a grant tag naming this namespace lets it restore",
            restoring(found(tags(&[
                (OWNER_TAG, "b-uid"),
                (OWNER_NAME_TAG, "team-b/db"),
                (RESTORABLE_BY_TAG, "team-c shop"),
            ]))),
            vec!["RestoreInstance"],
            "Synced",
        ),
        (
            "a grant tag naming other namespaces does not (whole names only)",
            restoring(found(tags(&[(RESTORABLE_BY_TAG, "shop-2 team-c")]))),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a source RDS does not have is not restored",
            restoring(Some(RestoreSource::NotFound)),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a source not read in this reconcile is not restored",
            restoring(None),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "the operator's --grant-restore for this namespace lets it restore anything",
            with(restoring(found(owned_in("team-b"))), |f| {
                f.grants = grants(&["shop"])
            }),
            vec!["RestoreInstance"],
            "Synced",
        ),
        (
            "--grant-restore '*' too",
            with(restoring(Some(RestoreSource::NotFound)), |f| {
                f.grants = grants(&["*"])
            }),
            vec!["RestoreInstance"],
            "Synced",
        ),
        (
            "--grant-restore for another namespace does not",
            with(restoring(found(owned_in("team-b"))), |f| {
                f.grants = grants(&["team-b"])
            }),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a point-in-time restore of another namespace's instance is not made",
            point_in_time(found(owned_in("team-b"))),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "a point-in-time restore of this namespace's instance is",
            point_in_time(found(owned_in("shop"))),
            vec!["RestoreToPointInTime"],
            "Synced",
        ),
    ]);
    // Refused, it says what to do and not whose the source is; it is Stalled and looks again at
    // the drift interval (a grant may come without a spec change).
    let refused = plan(&restoring(found(owned_in("team-b"))));
    let status = refused.status.expect("status");
    assert!(!status.synced.message.contains("team-b"), "{status:?}");
    assert!(
        status.synced.message.contains(RESTORABLE_BY_TAG),
        "{status:?}"
    );
    assert_eq!(refused.requeue, SETTLED);
    assert!(crate::managed::conditions::STALLED.contains(&"RestoreSourceNotOwned"));
    // The read step is asked for the source exactly when a restore may follow.
    let asked = reads(&restoring(None).db, None);
    assert_eq!(
        asked.restore_source,
        restoring(None).db.spec.restore_from.clone()
    );
    let existing = reads(&restoring(None).db, Some(&ours()));
    assert_eq!(existing.restore_source, None, "our instance exists");
}

#[test]
fn a_restore_from_s3_is_made_only_with_an_ingestion_role_of_this_namespace() {
    let from_s3 = |role: &str, grants: &[&str]| {
        with(facts(), |f| {
            f.db.spec.restore_from = Some(RestoreFrom {
                s3: Some(crate::database::spec::S3Source {
                    bucket: "backups".into(),
                    prefix: Some("coffee/".into()),
                    ingestion_role: role.into(),
                    source_engine: "mysql".into(),
                    source_engine_version: "8.0.42".into(),
                }),
                ..Default::default()
            });
            f.grants.roles = grants.iter().map(|n| n.to_string()).collect();
            // Nothing is read of a backup in S3: the role is the reach.
            f.restore_source = Some(RestoreSource::NotFound);
        })
    };
    let own = "arn:aws:iam::123456789012:role/rds-operator/shop/s3-import";
    let theirs = "arn:aws:iam::123456789012:role/rds-operator/team-b/s3-import";
    let root = "arn:aws:iam::123456789012:role/s3-import";
    check_outlines(vec![
        (
            "a role under /rds-operator/shop/ is restored from",
            from_s3(own, &[]),
            vec!["RestoreFromS3"],
            "Synced",
        ),
        (
            "another namespace's role is not",
            from_s3(theirs, &[]),
            vec![],
            "RoleNotGranted",
        ),
        (
            "a role outside the path is not",
            from_s3(root, &[]),
            vec![],
            "RoleNotGranted",
        ),
        (
            "unless --grant-roles lists the namespace",
            from_s3(root, &["shop"]),
            vec!["RestoreFromS3"],
            "Synced",
        ),
        (
            "--grant-roles for another namespace does not",
            from_s3(root, &["team-b"]),
            vec![],
            "RoleNotGranted",
        ),
    ]);
    let refused = plan(&from_s3(theirs, &[]));
    assert_eq!(
        refused.requeue, SETTLED,
        "looked at again at the drift interval"
    );
    let message = refused.status.expect("status").synced.message;
    assert!(message.contains("/rds-operator/shop/"), "{message}");
    assert!(crate::managed::conditions::STALLED.contains(&"RoleNotGranted"));
    // Made, the password is sent in the call (unlike a snapshot's restore): its hash is the
    // spec's, and status names the backup.
    let made = plan(&from_s3(own, &[]));
    let Step::Own(InstanceStep::RestoreFromS3 { s3, password, .. }) = &made.steps[0] else {
        panic!("{:?}", made.steps)
    };
    assert_eq!((s3.bucket.as_str(), password.is_some()), ("backups", true));
    let fields = made.status.expect("status").fields;
    assert_ne!(
        fields.common.master_user_password_hash.as_deref(),
        Some(super::password::RESTORED_PASSWORD)
    );
    let restore = fields.restore.expect("restore in status");
    assert_eq!(restore.source, "s3://backups/coffee/");
}

#[test]
fn an_instance_no_dbinstance_owns_is_claimed_only_where_granted() {
    let untagged = |policy| {
        with(adopting(policy), |f| {
            f.observed.as_mut().unwrap().tags.remove(ADOPTABLE_BY_TAG);
        })
    };
    let observe = |granted: bool| {
        with(facts(), |f| {
            f.db.spec.policies.management_policy = ManagementPolicy::ObserveOnly;
            let mut o = stack_instance();
            if !granted {
                o.tags.remove(ADOPTABLE_BY_TAG);
            }
            f.observed = Some(o);
        })
    };
    check_outlines(vec![
        (
            "granted by its tag: adopted",
            adopting(AdoptionPolicy::Adopt),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "no grant: not adopted",
            untagged(AdoptionPolicy::Adopt),
            vec![],
            "IdentifierInUse",
        ),
        (
            "no grant: AdoptOrCreate neither adopts nor creates",
            untagged(AdoptionPolicy::AdoptOrCreate),
            vec![],
            "IdentifierInUse",
        ),
        (
            "a grant tag for other namespaces only: not adopted",
            with(untagged(AdoptionPolicy::Adopt), |f| {
                let o = f.observed.as_mut().unwrap();
                o.tags.insert(ADOPTABLE_BY_TAG.into(), "team-b".into());
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "the operator's --grant-adoption: adopted",
            with(untagged(AdoptionPolicy::Adopt), |f| {
                f.grants.adoption = vec!["shop".into()]
            }),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "granted, but a DBInstance of another namespace observes it: not adopted",
            with(adopting(AdoptionPolicy::Adopt), |f| {
                f.observers = vec!["team-b".into()]
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "observed by another DBInstance of this namespace: adopted",
            with(adopting(AdoptionPolicy::Adopt), |f| {
                f.observers = vec!["shop".into()]
            }),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "seen only in the shared poll's snapshot: nothing yet, a direct read first",
            with(adopting(AdoptionPolicy::Adopt), |f| {
                f.observed_directly = false
            }),
            vec![],
            "",
        ),
        (
            "observing needs the grant too",
            observe(false),
            vec![],
            "NotGranted",
        ),
        ("observing, granted", observe(true), vec![], "Observed"),
    ]);
    let not_granted = plan(&untagged(AdoptionPolicy::Adopt));
    let message = not_granted.status.unwrap().synced.message;
    assert!(message.contains(ADOPTABLE_BY_TAG), "{message}");
    assert_eq!(
        plan(&with(adopting(AdoptionPolicy::Adopt), |f| {
            f.observed_directly = false
        }))
        .requeue,
        BUSY
    );
    // The read step reads an instance that is not ours directly before an adoption, and asks who
    // observes it; an observer reads the shared poll.
    let r = reads(&adopting(AdoptionPolicy::Adopt).db, Some(&stack_instance()));
    assert!(r.direct && r.observers, "{r:?}");
    let r = reads(&observe(true).db, Some(&stack_instance()));
    assert!(!r.direct, "{r:?}");
    // An observed instance RDS is busy with is looked at again at the busy interval: the shared
    // poll wakes only DBInstances whose instances are tagged as theirs.
    let creating = with(observe(true), |f| {
        f.observed.as_mut().unwrap().status = "creating".into()
    });
    assert_eq!(outline(&plan(&creating)), (vec![], "Observed".into()));
    assert_eq!(plan(&creating).requeue, BUSY);
    assert_eq!(
        plan(&observe(true)).requeue,
        Requeue::After(Duration::from_secs(600))
    );
}

#[test]
fn an_instance_never_ours_is_never_restored_or_created_when_it_goes() {
    // It was observed (status has its ARN), then managementPolicy became Full; now it is gone.
    let lost = with(synced(), |f| {
        f.db.status.as_mut().unwrap().common.owned = None;
        f.observed = None;
        f.observed_directly = true;
        f.absent_for = Some(Duration::from_secs(600));
        f.snapshots = vec![snapshot("its-final", "manual", "available", 100)];
    });
    let ours_gone = with(lost.clone(), |f| {
        f.db.status.as_mut().unwrap().common.owned = Some(true)
    });
    check_outlines(vec![
        (
            "never ours: nothing is created",
            lost.clone(),
            vec![],
            "NotFound",
        ),
        (
            "ours: restored from its own snapshot",
            ours_gone,
            vec!["RestoreInstance"],
            "Synced",
        ),
    ]);
    // Nor are its snapshots or the account read for it.
    let r = reads(&lost.db, None);
    assert_eq!((r.snapshots_of, r.identity), (None, false));
    // Observing records nothing as ours; managing does.
    let observed = with(synced(), |f| {
        f.db.spec.policies.management_policy = ManagementPolicy::ObserveOnly;
        f.db.status.as_mut().unwrap().common.owned = None;
    });
    assert_eq!(plan(&observed).status.unwrap().fields.common.owned, None);
    assert_eq!(
        plan(&synced()).status.unwrap().fields.common.owned,
        Some(true)
    );
}

#[test]
fn after_an_out_of_band_deletion_only_its_own_snapshots_are_restored() {
    let gone = |snapshots: Vec<SnapshotInfo>| {
        with(synced(), |f| {
            f.db.status.as_mut().unwrap().dbi_resource_id = Some("db-OURS".into());
            f.observed = None;
            f.observed_directly = true;
            f.absent_for = Some(Duration::from_secs(5));
            f.snapshots = snapshots;
        })
    };
    let theirs = |id: &str, epoch| {
        let mut s = snapshot(id, "manual", "available", epoch);
        s.tags = owned_in("team-b");
        s.dbi_resource_id = Some("db-THEIRS".into());
        s
    };
    let by_resource_id = |id: &str, epoch| {
        let mut s = snapshot(id, "automated", "available", epoch);
        s.tags.clear();
        s.dbi_resource_id = Some("db-OURS".into());
        s
    };
    let restored_from = |p: &Plan| match &p.steps[..] {
        [Step::Restore { snapshot, .. }] => snapshot.clone(),
        other => format!("{other:?}"),
    };
    // The newest snapshot of the identifier is another team's: it is not the one restored.
    let mixed = gone(vec![
        snapshot("ours-old", "manual", "available", 100),
        theirs("their-final", 900),
    ]);
    assert_eq!(restored_from(&plan(&mixed)), "ours-old");
    let only_theirs = gone(vec![theirs("their-final", 900)]);
    assert_eq!(
        outline(&plan(&only_theirs)),
        (vec![], "DeletedOutOfBand".into())
    );
    // An automated snapshot has no tags: it is matched by the DbiResourceId status recorded.
    let automated = gone(vec![by_resource_id("rds:coffee-1", 500), theirs("x", 900)]);
    assert_eq!(restored_from(&plan(&automated)), "rds:coffee-1");
}

#[test]
fn only_tags_the_operator_added_are_removed() {
    let backup = || Tag {
        key: "backup-plan".into(),
        value: "daily".into(),
    };
    // The platform's tag was on the instance before the spec listed it, with the same value.
    let listed = with(synced(), |f| {
        f.observed
            .as_mut()
            .unwrap()
            .tags
            .insert("backup-plan".into(), "daily".into());
        f.db.spec.tags = vec![backup()];
    });
    let p = plan(&listed);
    assert_eq!(outline(&p), (vec![], "Synced".into()));
    assert_eq!(
        p.status.unwrap().fields.common.applied_tag_keys,
        Vec::<String>::new()
    );
    // Removed from the spec later: it stays.
    let unlisted = with(listed.clone(), |f| f.db.spec.tags.clear());
    assert_eq!(outline(&plan(&unlisted)), (vec![], "Synced".into()));
    // A tag the operator adds (missing, or with another value) is its own, and removed with the
    // spec's word; it is decided on a direct read (the read step asks for one when tags change).
    let added = with(synced(), |f| {
        f.db.spec.tags = vec![backup()];
        f.observed_directly = true;
    });
    assert!(reads(&added.db, added.observed.as_ref()).direct);
    assert!(!reads(&listed.db, listed.observed.as_ref()).direct);
    // Seen only in the shared poll's snapshot, the same add counts nothing new as the operator's.
    let stale = with(added.clone(), |f| f.observed_directly = false);
    assert_eq!(
        plan(&stale).status.unwrap().fields.common.applied_tag_keys,
        Vec::<String>::new()
    );
    let p = plan(&added);
    assert_eq!(p.steps.len(), 1, "{:?}", p.steps);
    assert_eq!(
        p.status.unwrap().fields.common.applied_tag_keys,
        vec!["backup-plan"]
    );
    let changed = with(listed.clone(), |f| {
        f.observed
            .as_mut()
            .unwrap()
            .tags
            .insert("backup-plan".into(), "weekly".into());
        f.observed_directly = true;
    });
    assert_eq!(
        plan(&changed)
            .status
            .unwrap()
            .fields
            .common
            .applied_tag_keys,
        vec!["backup-plan"]
    );
    let ours_then_unlisted = with(unlisted, |f| {
        f.db.status.as_mut().unwrap().common.applied_tag_keys = vec!["backup-plan".into()]
    });
    assert_eq!(
        plan(&ours_then_unlisted).steps,
        vec![Step::RemoveTags {
            identifier: "coffee".into(),
            arn: ours().arn.unwrap(),
            keys: vec!["backup-plan".into()],
        }]
    );
    // A key applied before stays applied while the spec lists it.
    let kept = with(listed, |f| {
        f.db.status.as_mut().unwrap().common.applied_tag_keys = vec!["backup-plan".into()]
    });
    assert_eq!(
        plan(&kept).status.unwrap().fields.common.applied_tag_keys,
        vec!["backup-plan"]
    );
}

#[test]
fn a_group_another_namespace_manages_is_not_used() {
    let named = |group_tags: Option<BTreeMap<String, String>>| {
        with(facts(), |f| {
            f.db.spec.network.db_subnet_group_name = Some("team-b-subnets".into());
            f.groups = vec![("dbSubnetGroupName", group_tags)];
        })
    };
    check_outlines(vec![
        (
            "a subnet group of another namespace: refused before any call",
            named(Some(owned_in("team-b"))),
            vec![],
            "GroupNotOwned",
        ),
        (
            "one made outside the operator: used",
            named(Some(tags(&[("team", "net")]))),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "one of this namespace: used",
            named(Some(owned_in("shop"))),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "one RDS does not have: left to RDS's own error",
            named(None),
            vec!["CreateInstance"],
            "Synced",
        ),
        (
            "a parameter group of another namespace, on our instance: refused, nothing sent",
            with(synced(), |f| {
                f.db.spec.db_parameter_group_name = Some("team-b-params".into());
                f.groups = vec![("dbParameterGroupName", Some(owned_in("team-b")))];
            }),
            vec![],
            "GroupNotOwned",
        ),
    ]);
    let message = plan(&named(Some(owned_in("team-b")))).status.unwrap();
    assert!(!message.synced.message.contains("team-b"), "{message:?}");
    // Their tags are read only when the plan may send the name: at creation, or as a change.
    let spec_named = named(None).db;
    let r = reads(&spec_named, None);
    assert_eq!(
        r.groups,
        vec![GroupRead {
            field: "dbSubnetGroupName",
            resource: "subgrp",
            name: "team-b-subnets".into(),
        }]
    );
    let mut settled = ours();
    settled.db_subnet_group_name = Some("team-b-subnets".into());
    assert_eq!(reads(&spec_named, Some(&settled)).groups, vec![]);
    settled.db_subnet_group_name = Some("TEAM-B-SUBNETS".into());
    assert_eq!(
        reads(&spec_named, Some(&settled)).groups,
        vec![],
        "in any case"
    );
}

/// The connection Secret as written for this DBInstance: annotated, with its ownerReference when
/// `referenced`.
fn our_connection_secret(referenced: bool) -> Secret {
    let mut s = connection_secret(UID, "Sup3r-Secret");
    (s.metadata.annotations.get_or_insert_default())
        .insert(SECRET_OWNER_ANNOTATION.into(), UID.into());
    if !referenced {
        s.metadata.owner_references = None;
    }
    s
}

#[test]
fn under_retain_the_secrets_carry_no_owner_reference_the_garbage_collector_follows() {
    let generated = |policy| {
        with(facts(), |f| {
            f.db.spec.deletion.deletion_policy = policy;
            f.db.spec.password.master_user_password = None;
            f.password = no_generated_secret("Gen3rated");
        })
    };
    let written = |p: &Plan| match &p.steps[0] {
        Step::Secret(SecretStep::WritePassword {
            owner_reference, ..
        }) => *owner_reference,
        other => panic!("{other:?}"),
    };
    assert!(!written(&plan(&generated(DeletionPolicy::Retain))));
    assert!(written(&plan(&generated(DeletionPolicy::Snapshot))));
    // Retain with a generated password: a note in status and an Event at creation.
    let p = plan(&generated(DeletionPolicy::Retain));
    let advisories = &p.status.as_ref().unwrap().fields.advisories;
    assert!(
        advisories.len() == 1 && advisories[0].contains("manageMasterUserPassword"),
        "{advisories:?}"
    );
    assert!(
        (p.events.iter()).any(|e| e.type_ == Warning && e.reason == "PasswordOnlyInNamespace"),
        "{:?}",
        p.events
    );
    let p = plan(&generated(DeletionPolicy::Snapshot));
    assert!(p.status.unwrap().fields.advisories.is_empty());

    // Secrets written before the policy changed follow it.
    let with_secret = |policy, referenced| {
        with(synced(), |f| {
            f.db.spec.deletion.deletion_policy = policy;
            f.db.spec.connection.connection_secret = Some(ConnectionSecretSpec {
                name: "coffee-db".into(),
                ..Default::default()
            });
            f.connection_secret = Some(our_connection_secret(referenced));
        })
    };
    let set = |name: &str, owner_reference| {
        Step::Secret(SecretStep::SetOwner {
            name: name.into(),
            owner_reference,
        })
    };
    assert_eq!(
        plan(&with_secret(DeletionPolicy::Retain, true)).steps,
        vec![set("coffee-db", false)]
    );
    assert_eq!(
        plan(&with_secret(DeletionPolicy::Delete, false)).steps,
        vec![set("coffee-db", true)]
    );
    assert_eq!(
        plan(&with_secret(DeletionPolicy::Retain, false)).steps,
        vec![]
    );
    assert_eq!(
        plan(&with_secret(DeletionPolicy::Delete, true)).steps,
        vec![]
    );
    let generated_kept = with(with_secret(DeletionPolicy::Retain, false), |f| {
        f.db.spec.password.master_user_password = None;
        f.db.status
            .as_mut()
            .unwrap()
            .common
            .master_user_password_hash = Some(spec::password_hash(
            &super::tests::key(),
            UID,
            "Sup3r-Secret",
        ));
        f.password = PasswordFacts::Generated {
            existing: Some(Sensitive::new("Sup3r-Secret")),
            secret_exists: true,
            controlled: true,
            owner_referenced: true,
            candidate: Sensitive::new("unused"),
        };
    });
    assert_eq!(
        plan(&generated_kept).steps,
        vec![set("coffee-master-password", false)]
    );

    // Deleting under Retain keeps a Secret marked only by the annotation, as nobody's.
    let retained = with(deleting(DeletionPolicy::Retain, Some(ours())), |f| {
        f.release_candidates = vec![our_connection_secret(false)];
    });
    let p = plan(&retained);
    assert!(
        p.steps.contains(&Step::OrphanSecret {
            name: "coffee-db".into()
        }),
        "{:?}",
        p.steps
    );
}
