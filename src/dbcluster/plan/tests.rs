//! The DBCluster's rules, a row each.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::dbcluster::observed::{ObservedCluster, ObservedMember};
use crate::dbcluster::{ClusterEngine, DBCluster, DBClusterSpec, DBClusterStatus};
use crate::dbinstance::plan::spec as instance_spec;
use std::time::Duration;

use crate::crd::{FINALIZER, OWNER_NAME_TAG, OWNER_TAG};
use crate::dbcluster::ClusterRestoreFrom;
use crate::dbinstance::plan::tenancy::RestoreSource;
use crate::dbinstance::{
    ADOPTABLE_BY_TAG, ADOPTED_TAG, AdoptionPolicy, ConnectionSecretSpec, DRY_RUN_ANNOTATION,
    DeletionPolicy, DriftPolicy, ManagementPolicy, OutOfBandDeletionPolicy, PAUSED_ANNOTATION,
    PendingRebootPolicy, SecretKeyReference,
};
use crate::rds_state::{AwsIdentity, SnapshotInfo};

const UID: &str = "uid-1";

fn spec() -> DBClusterSpec {
    DBClusterSpec {
        engine: ClusterEngine::AuroraMysql,
        engine_version: Some("8.0.mysql_aurora.3.08.0".into()),
        master_username: Some("admin".into()),
        database_name: Some("COFFEE".into()),
        ..Default::default()
    }
}

fn facts() -> Facts {
    let mut cluster = DBCluster::new("coffee", spec());
    cluster.metadata.namespace = Some("shop".into());
    cluster.metadata.uid = Some(UID.into());
    cluster.metadata.generation = Some(1);
    cluster.metadata.finalizers = Some(vec![FINALIZER.into()]);
    Facts {
        cluster,
        observed: None,
        observed_directly: true,
        password: PasswordFacts::Generated {
            existing: None,
            secret_exists: false,
            controlled: false,
            owner_referenced: false,
            candidate: Sensitive::new("candidate-password-1"),
        },
        connection_secret: None,
        readers: None,
        secret_rotation: None,
        subnet_group: None,
        parameter_group: None,
        referrers: vec![],
        declared_members: vec![],
        absent_for: None,
        identity: None,
        snapshots: vec![],
        snapshot_ref: None,
        restore_source: None,
        global: None,
        global_members: None,
        global_endpoint: None,
        shard_group_endpoint: None,
        maintenance: None,
        blue_green: None,
        grants: Default::default(),
        member_states: Default::default(),
        alarms: None,
        health: None,
        owner_alive: None,
        observers: vec![],
        hash_key: Sensitive::new("key"),
        ca_bundle: None,
        intervals: PollIntervals::default(),
        placement: Default::default(),
        now: "2026-12-01T00:00:00Z".into(),
    }
}

fn owner_tags() -> BTreeMap<String, String> {
    [
        (OWNER_TAG.to_owned(), UID.to_owned()),
        (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
    ]
    .into()
}

/// Ours, available, as the spec says.
fn ours() -> ObservedCluster {
    ObservedCluster {
        identifier: "coffee".into(),
        status: "available".into(),
        arn: Some("arn:aws:rds:us-east-1:123456789012:cluster:coffee".into()),
        engine: Some("aurora-mysql".into()),
        engine_version: Some("8.0.mysql_aurora.3.08.0".into()),
        port: Some(3306),
        endpoint: Some("coffee.cluster-x.rds.amazonaws.com".into()),
        reader_endpoint: Some("coffee.cluster-ro-x.rds.amazonaws.com".into()),
        master_username: Some("admin".into()),
        database_name: Some("COFFEE".into()),
        tags: owner_tags(),
        ..Default::default()
    }
}

/// Our cluster, settled: its status recorded, the password known and sent.
fn synced() -> Facts {
    let mut f = facts();
    let hash = instance_spec::password_hash(&f.hash_key, UID, "the-password-1");
    f.cluster.status = Some(DBClusterStatus {
        common: DatabaseStatus {
            arn: ours().arn,
            owned: Some(true),
            master_user_password_hash: Some(hash),
            ..Default::default()
        },
        reported: crate::crd::Reported {
            observed_generation: Some(1),
            ..Default::default()
        },
        ..Default::default()
    });
    f.password = PasswordFacts::Generated {
        existing: Some(Sensitive::new("the-password-1")),
        secret_exists: true,
        controlled: true,
        owner_referenced: true,
        candidate: Sensitive::new("unused"),
    };
    f.observed = Some(ours());
    f.observed_directly = false;
    f
}

/// Ours, recorded in status, confirmed gone by direct reads in the account and region it was in;
/// RDS has another tenant's snapshot of the identifier.
fn gone() -> Facts {
    with(synced(), |f| {
        f.observed = None;
        f.observed_directly = true;
        f.absent_for = Some(Duration::from_secs(30));
        f.identity = Some(AwsIdentity {
            account: "123456789012".into(),
            region: "us-east-1".into(),
            caller_arn: String::new(),
        });
        f.snapshots = vec![snapshot("theirs", 9, "someone-else")];
    })
}

fn member(identifier: &str, writer: bool, parameter_status: &str) -> ObservedMember {
    ObservedMember {
        identifier: identifier.into(),
        writer,
        parameter_status: Some(parameter_status.into()),
    }
}

fn snapshot(name: &str, created: i64, owner: &str) -> SnapshotInfo {
    SnapshotInfo {
        identifier: name.into(),
        kind: "manual".into(),
        status: "available".into(),
        created_epoch: created,
        tags: [(OWNER_TAG.to_owned(), owner.to_owned())].into(),
        ..Default::default()
    }
}

/// A new DBCluster restoring from a cluster snapshot.
fn restoring() -> Facts {
    with(facts(), |f| {
        f.cluster.spec.restore_from = Some(ClusterRestoreFrom {
            db_cluster_snapshot_identifier: Some("coffee-final".into()),
            ..Default::default()
        })
    })
}

/// restoreFrom.dbClusterSnapshotRef to the DBClusterSnapshot "before".
fn by_ref() -> ClusterRestoreFrom {
    ClusterRestoreFrom {
        db_cluster_snapshot_ref: Some(crate::crd::LocalRef {
            name: "before".into(),
        }),
        ..Default::default()
    }
}

#[test]
fn a_restore_by_reference_restores_the_snapshot_the_reference_resolves_to() {
    let f = with(restoring(), |f| {
        f.cluster.spec.restore_from = Some(by_ref());
        f.snapshot_ref = Some(Ok("coffee-before".into()));
        f.restore_source = Some(source(&owner_tags()));
    });
    let p = plan(&f);
    let restored = (p.steps.iter()).find_map(|s| match s {
        Step::Restore { snapshot, .. } => Some(snapshot.as_str()),
        _ => None,
    });
    assert_eq!(restored, Some("coffee-before"));
}

fn source(tags: &BTreeMap<String, String>) -> RestoreSource {
    RestoreSource::Found {
        tags: tags.clone(),
        instance_tags: None,
    }
}

/// The ownership tags of a DBCluster of another namespace.
fn other_tags() -> BTreeMap<String, String> {
    [
        (OWNER_TAG.to_owned(), "uid-2".to_owned()),
        (OWNER_NAME_TAG.to_owned(), "tea/coffee".to_owned()),
    ]
    .into()
}

fn deleting(mut f: Facts) -> Facts {
    let epoch = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
    f.cluster.metadata.deletion_timestamp = Some(Time(epoch));
    f.observed_directly = true;
    f
}

fn with(mut f: Facts, change: impl FnOnce(&mut Facts)) -> Facts {
    change(&mut f);
    f
}

fn names(p: &Plan) -> Vec<&'static str> {
    p.steps.iter().map(Step::name).collect()
}

fn synced_reason(p: &Plan) -> &str {
    p.status.as_ref().map_or("", |s| s.synced.reason.as_str())
}

#[test]
fn each_rule_decides_its_steps_and_reason() {
    let mut not_ours = ours();
    not_ours.tags = BTreeMap::new();
    let mut other_tenant = ours();
    other_tenant
        .tags
        .insert(OWNER_TAG.into(), "someone-else".into());
    let with_members = with(deleting(synced()), |f| {
        f.observed.as_mut().unwrap().members = vec![member("coffee-1", true, "in-sync")];
    });
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "none ever observed: create, with a generated password written first",
            facts(),
            vec!["WritePasswordSecret", "Create"],
            "Synced",
        ),
        (
            "no finalizer yet: it comes first",
            with(facts(), |f| f.cluster.metadata.finalizers = None),
            vec!["AddFinalizer", "WritePasswordSecret", "Create"],
            "Synced",
        ),
        (
            "a subnet group reference not Ready: wait, create nothing",
            with(facts(), |f| f.subnet_group = Some(Err("not Ready".into()))),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "a cluster parameter group reference not Ready: wait, create nothing",
            with(facts(), |f| {
                f.parameter_group = Some(Err("not Ready".into()))
            }),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "a cluster of the name without our tags: never touched",
            with(facts(), |f| f.observed = Some(not_ours.clone())),
            vec![],
            "IdentifierInUse",
        ),
        (
            "another tenant's cluster: never touched",
            with(facts(), |f| f.observed = Some(other_tenant.clone())),
            vec![],
            "IdentifierInUse",
        ),
        (
            "ours gone, on the shared listing only: confirm first",
            with(gone(), |f| f.observed_directly = false),
            vec![],
            "ConfirmingAbsence",
        ),
        (
            "ours gone, found absent only once: confirm first",
            with(gone(), |f| f.absent_for = Some(Duration::ZERO)),
            vec![],
            "ConfirmingAbsence",
        ),
        (
            "ours gone, no snapshot of its own (another tenant's of the name is not): wait",
            gone(),
            vec![],
            "DeletedOutOfBand",
        ),
        (
            "ours gone, confirmed: restored from its own newest snapshot",
            with(gone(), |f| {
                f.snapshots
                    .extend([snapshot("old", 1, UID), snapshot("new", 2, UID)])
            }),
            vec!["Restore"],
            "Synced",
        ),
        (
            "ours gone, its final snapshot still being taken: wait, not an older snapshot",
            with(gone(), |f| {
                let taking = SnapshotInfo {
                    status: "creating".into(),
                    ..snapshot("final", 3, UID)
                };
                f.snapshots
                    .extend([snapshot("old", 1, UID), snapshot("new", 2, UID), taking])
            }),
            vec![],
            "SnapshotInProgress",
        ),
        (
            "ours gone, only its final snapshot, still being taken, RestoreOrCreateEmpty: wait",
            with(gone(), |f| {
                f.cluster.spec.deletion.out_of_band_deletion_policy =
                    OutOfBandDeletionPolicy::RestoreOrCreateEmpty;
                let taking = SnapshotInfo {
                    status: "creating".into(),
                    ..snapshot("final", 3, UID)
                };
                f.snapshots.push(taking)
            }),
            vec![],
            "SnapshotInProgress",
        ),
        (
            "ours gone, no own snapshot, RestoreOrCreateEmpty: an empty cluster",
            with(gone(), |f| {
                f.cluster.spec.deletion.out_of_band_deletion_policy =
                    OutOfBandDeletionPolicy::RestoreOrCreateEmpty
            }),
            vec!["Create"],
            "Synced",
        ),
        (
            "ours gone, but the operator now looks at another account: nothing created",
            with(gone(), |f| {
                f.identity.as_mut().unwrap().account = "210987654321".into()
            }),
            vec![],
            "AccountOrRegionMismatch",
        ),
        (
            "ours gone, driftPolicy Report: only reported",
            with(gone(), |f| {
                f.cluster.spec.policies.drift_policy = DriftPolicy::Report
            }),
            vec![],
            "DeletedOutOfBand",
        ),
        (
            "restoreFrom a snapshot of this namespace's: restored",
            with(restoring(), |f| {
                f.restore_source = Some(source(&owner_tags()))
            }),
            vec!["WritePasswordSecret", "Restore"],
            "Synced",
        ),
        (
            "restoreFrom another tenant's snapshot: nothing restored",
            with(restoring(), |f| {
                f.restore_source = Some(source(&other_tags()))
            }),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "restoreFrom a snapshot not found: nothing restored",
            with(restoring(), |f| {
                f.restore_source = Some(RestoreSource::NotFound)
            }),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "restoreFrom a DBClusterSnapshot not Ready yet: wait, nothing restored",
            with(restoring(), |f| {
                f.cluster.spec.restore_from = Some(by_ref());
                f.snapshot_ref = Some(Err("DBClusterSnapshot before is not Ready".into()));
            }),
            vec![],
            "ReferencesUnresolved",
        ),
        (
            "restoreFrom a Ready DBClusterSnapshot of this namespace's: restored",
            with(restoring(), |f| {
                f.cluster.spec.restore_from = Some(by_ref());
                f.snapshot_ref = Some(Ok("coffee-before".into()));
                f.restore_source = Some(source(&owner_tags()));
            }),
            vec!["WritePasswordSecret", "Restore"],
            "Synced",
        ),
        (
            "restoreFrom a Ready DBClusterSnapshot of another tenant's data: nothing restored",
            with(restoring(), |f| {
                f.cluster.spec.restore_from = Some(by_ref());
                f.snapshot_ref = Some(Ok("coffee-before".into()));
                f.restore_source = Some(source(&other_tags()));
            }),
            vec![],
            "RestoreSourceNotOwned",
        ),
        (
            "restoreFrom a point in time of this namespace's cluster",
            with(restoring(), |f| {
                f.cluster.spec.restore_from = Some(ClusterRestoreFrom {
                    source_db_cluster_identifier: Some("coffee-old".into()),
                    use_latest_restorable_time: Some(true),
                    ..Default::default()
                });
                f.restore_source = Some(source(&owner_tags()));
            }),
            vec!["WritePasswordSecret", "RestoreToPointInTime"],
            "Synced",
        ),
        (
            "ours, as the spec says: nothing to do",
            synced(),
            vec![],
            "Synced",
        ),
        (
            "ours, busy: report, send nothing",
            with(synced(), |f| {
                let o = f.observed.as_mut().unwrap();
                o.status = "modifying".into();
                o.port = Some(3307);
            }),
            vec![],
            "Synced",
        ),
        (
            "the referenced password Secret is missing: wait with backoff",
            with(synced(), |f| {
                f.password = PasswordFacts::Referenced(Err("Secret shop/pw not found".into()))
            }),
            vec![],
            "PasswordSecretUnavailable",
        ),
        (
            "deleted under Retain: let go at once, no AWS call",
            with(deleting(synced()), |f| {
                f.cluster.spec.deletion.deletion_policy = DeletionPolicy::Retain;
                f.observed_directly = false;
            }),
            vec!["RemoveFinalizer"],
            "",
        ),
        (
            "deleted, not yet read directly: nothing decided",
            with(deleting(synced()), |f| f.observed_directly = false),
            vec![],
            "",
        ),
        (
            "deleted while RDS lists members: wait (InUse)",
            with_members,
            vec![],
            "InUse",
        ),
        (
            "deleted while member DBInstances exist: wait (InUse)",
            with(deleting(synced()), |f| {
                f.referrers = vec!["DBInstance coffee-1".into()]
            }),
            vec![],
            "InUse",
        ),
        (
            "deleted with deletion protection on: wait",
            with(deleting(synced()), |f| {
                f.observed.as_mut().unwrap().deletion_protection = Some(true)
            }),
            vec![],
            "DeletionProtected",
        ),
        (
            "deleted, protected, the spec turns protection off: one modification, then delete",
            with(deleting(synced()), |f| {
                f.observed.as_mut().unwrap().deletion_protection = Some(true);
                f.cluster.spec.deletion.deletion_protection = Some(false);
            }),
            vec!["Modify"],
            "Deleting",
        ),
        (
            "deleted, no members: delete with a final snapshot",
            deleting(synced()),
            vec!["Delete"],
            "Deleting",
        ),
        (
            "deleted, RDS deleting it: wait",
            with(deleting(synced()), |f| {
                f.observed.as_mut().unwrap().status = "deleting".into()
            }),
            vec![],
            "Deleting",
        ),
        (
            "deleted, gone from RDS: let go",
            with(deleting(synced()), |f| f.observed = None),
            vec!["RemoveFinalizer"],
            "",
        ),
        (
            "deleted, the cluster is not ours: never deleted",
            with(deleting(synced()), |f| f.observed = Some(not_ours.clone())),
            vec!["RemoveFinalizer"],
            "",
        ),
    ];
    for (name, f, steps, reason) in rows {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{name}");
        assert_eq!(synced_reason(&p), reason, "{name}");
    }
}

#[test]
fn the_final_snapshot_is_unique_per_deletion_and_absent_under_delete() {
    let snapshot_of = |f: &Facts| match plan(f).steps.first() {
        Some(Step::Own(ClusterStep::Delete { final_snapshot, .. })) => final_snapshot.clone(),
        other => panic!("expected a Delete, got {other:?}"),
    };
    let first = snapshot_of(&deleting(synced()));
    assert_eq!(first.as_deref(), Some("coffee-final-uid1-19700101000000"));
    let later = with(deleting(synced()), |f| {
        let later = k8s_openapi::jiff::Timestamp::from_second(86_400).unwrap();
        f.cluster.metadata.deletion_timestamp = Some(Time(later));
    });
    assert_ne!(
        snapshot_of(&later),
        first,
        "another deletion, another snapshot"
    );
    let delete = with(deleting(synced()), |f| {
        f.cluster.spec.deletion.deletion_policy = DeletionPolicy::Delete
    });
    assert_eq!(snapshot_of(&delete), None);
}

fn modification(p: &Plan) -> Option<&ClusterModification> {
    p.steps.iter().find_map(|s| match s {
        Step::Modify { modification, .. } => Some(&**modification),
        _ => None,
    })
}

#[test]
fn drift_sends_exactly_the_fields_that_differ() {
    let upgrade = with(synced(), |f| {
        f.cluster.spec.engine_version = Some("8.0.mysql_aurora.3.09.0".into());
        f.cluster.metadata.generation = Some(2);
    });
    let m = modification(&plan(&upgrade))
        .cloned()
        .expect("a modification");
    assert_eq!(m.engine_version.as_deref(), Some("8.0.mysql_aurora.3.09.0"));
    assert_eq!(m.fields(), vec!["engineVersion"]);

    let prefix = with(synced(), |f| {
        f.cluster.spec.engine_version = Some("8.0".into())
    });
    assert!(modification(&plan(&prefix)).is_none(), "a prefix matches");

    let downgrade = with(synced(), |f| {
        f.cluster.spec.engine_version = Some("8.0.mysql_aurora.3.07.0".into());
        f.cluster.spec.maintenance.allow_major_version_upgrade = Some(true);
        f.observed.as_mut().unwrap().engine_version = Some("16.4".into());
        f.cluster.spec.engine = ClusterEngine::AuroraPostgresql;
    });
    assert_eq!(synced_reason(&plan(&downgrade)), "UnsupportedChange");

    let pending = with(upgrade.clone(), |f| {
        let o = f.observed.as_mut().unwrap();
        o.pending_modified_values
            .insert("engineVersion".into(), "8.0.mysql_aurora.3.09.0".into());
    });
    assert!(modification(&plan(&pending)).is_none(), "already asked for");

    let port = with(synced(), |f| f.cluster.spec.network.port = Some(3307));
    assert_eq!(modification(&plan(&port)).unwrap().fields(), vec!["port"]);
}

#[test]
fn protective_drift_is_kept_until_the_spec_is_edited() {
    let protected = with(synced(), |f| {
        let o = f.observed.as_mut().unwrap();
        o.deletion_protection = Some(true);
        o.backup_retention_period = Some(14);
        f.cluster.spec.backup_retention_period = Some(7);
    });
    let p = plan(&protected);
    assert!(modification(&p).is_none(), "{:?}", p.steps);
    assert_eq!(synced_reason(&p), "ProtectionKept");
    let edited = with(protected, |f| {
        f.cluster.spec.deletion.deletion_protection = Some(false);
        f.cluster.metadata.generation = Some(2);
    });
    let m = modification(&plan(&edited))
        .cloned()
        .expect("an edit is applied");
    assert_eq!(m.deletion_protection, Some(false));
    assert_eq!(m.backup_retention_period, Some(7));
}

#[test]
fn report_only_reports_drift_and_a_rotation_sends_the_password() {
    let drifted = with(synced(), |f| {
        f.cluster.spec.policies.drift_policy = DriftPolicy::Report;
        f.observed.as_mut().unwrap().port = Some(3307);
        f.cluster.spec.network.port = Some(3306);
    });
    let p = plan(&drifted);
    assert!(modification(&p).is_none());
    assert_eq!(synced_reason(&p), "Drifted");

    let rotated = with(synced(), |f| {
        f.password = PasswordFacts::Referenced(Ok(Sensitive::new("a-new-password-2")));
    });
    let p = plan(&rotated);
    match p.steps.first() {
        Some(Step::Modify {
            modification,
            password,
            ..
        }) => {
            assert_eq!(modification.fields(), vec!["masterUserPassword"]);
            assert_eq!(
                password.as_ref().map(Sensitive::expose),
                Some("a-new-password-2")
            );
        }
        other => panic!("expected the rotation, got {other:?}"),
    }
}

#[test]
fn tags_added_and_removed_keep_to_the_keys_the_operator_applied() {
    let f = with(synced(), |f| {
        f.cluster.spec.tags = vec![crate::crd::Tag {
            key: "team".into(),
            value: "coffee".into(),
        }];
        let o = f.observed.as_mut().unwrap();
        o.tags.insert("aws:backup".into(), "plan".into());
        o.tags.insert("old".into(), "x".into());
        f.cluster.status.as_mut().unwrap().common.applied_tag_keys = vec!["old".into()];
    });
    let p = plan(&f);
    assert_eq!(names(&p), vec!["AddTags", "RemoveTags"]);
    match &p.steps[1] {
        Step::RemoveTags { keys, .. } => assert_eq!(keys, &vec!["old".to_owned()]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_connection_secret_has_the_writer_and_reader_and_is_written_only_when_it_differs() {
    let f = with(synced(), |f| {
        f.cluster.spec.connection.connection_secret = Some(ConnectionSecretSpec {
            name: "coffee-db".into(),
            extra_keys: [("APP_DB_READER".to_owned(), "{{ readerHost }}".to_owned())].into(),
        });
    });
    let p = plan(&f);
    let Some(Step::Secret(SecretStep::WriteConnection { data, create, .. })) = p.steps.first()
    else {
        panic!("expected the Secret, got {:?}", p.steps);
    };
    assert!(create);
    let value = |k: &str| data.get(k).map(|v| v.expose().to_owned());
    assert_eq!(value("host").as_deref(), ours().endpoint.as_deref());
    assert_eq!(
        value("readerHost").as_deref(),
        ours().reader_endpoint.as_deref()
    );
    assert_eq!(value("APP_DB_READER"), value("readerHost"));
    assert_eq!(value("password").as_deref(), Some("the-password-1"));
    assert_eq!(value("dbname").as_deref(), Some("COFFEE"));

    // The Secret as written: nothing to do.
    let secret = crate::secrets::owned_secret(&f.cluster, "coffee-db", data, true);
    let settled = with(f.clone(), |f| f.connection_secret = Some(secret.clone()));
    assert_eq!(names(&plan(&settled)), Vec::<&str>::new());

    // Its version raised (the password changed), with a reader listed: the reader is rolled.
    let mut changed = secret.clone();
    let version = (
        crate::database::readers::SECRET_VERSION.to_owned(),
        "2".to_owned(),
    );
    changed
        .metadata
        .annotations
        .get_or_insert_default()
        .extend([version]);
    let reader = crate::database::readers::Workload {
        kind: crate::database::readers::WorkloadKind::DaemonSet,
        name: "agent".into(),
        reads: ["coffee-db".to_owned()].into(),
        opted_out: false,
        template: Default::default(),
        rolled_out: true,
    };
    let rolling = with(f.clone(), |f| {
        f.connection_secret = Some(changed);
        f.readers = Some(vec![reader]);
    });
    let p = plan(&rolling);
    match p.steps.as_slice() {
        [Step::Secret(SecretStep::RollReader(r))] => {
            assert_eq!((r.name.as_str(), r.version), ("agent", 2))
        }
        other => panic!("expected the roll, got {other:?}"),
    }
    let busy = crate::managed::plan::Requeue::After(f.intervals.busy);
    assert_eq!(p.requeue, busy, "the rollout is followed");
    let readers = p.status.unwrap().fields.common.secret_readers;
    assert_eq!(readers.map(|r| r.version), Some(2));

    // Someone else's Secret of that name: never written.
    let mut foreign = secret.clone();
    foreign.metadata.owner_references = None;
    foreign.metadata.annotations = None;
    let foreign = with(f, |f| f.connection_secret = Some(foreign));
    assert_eq!(synced_reason(&plan(&foreign)), "ConnectionSecretConflict");
}

#[test]
fn the_newest_own_snapshot_is_restored_and_a_restore_sends_the_spec_password_once_available() {
    let f = with(gone(), |f| {
        f.snapshots
            .extend([snapshot("old", 1, UID), snapshot("new", 2, UID)])
    });
    match plan(&f).steps.first() {
        Some(Step::Restore { snapshot, .. }) => assert_eq!(snapshot, "new"),
        other => panic!("expected a restore, got {other:?}"),
    }
    // Restored from spec.restoreFrom: the first sync sends the spec's password.
    let p = plan(&with(restoring(), |f| {
        f.restore_source = Some(source(&owner_tags()))
    }));
    let status = p.status.unwrap().fields;
    assert_eq!(
        status.common.master_user_password_hash.as_deref(),
        Some(RESTORED_PASSWORD)
    );
    let restored = with(synced(), |f| {
        f.cluster
            .status
            .as_mut()
            .unwrap()
            .common
            .master_user_password_hash = Some(RESTORED_PASSWORD.into());
    });
    let p = plan(&restored);
    match p.steps.first() {
        Some(Step::Modify {
            modification,
            password,
            ..
        }) => {
            assert_eq!(modification.fields(), vec!["masterUserPassword"]);
            assert_eq!(
                password.as_ref().map(Sensitive::expose),
                Some("the-password-1")
            );
        }
        other => panic!("expected the password sent, got {other:?}"),
    }
}

#[test]
fn members_pending_a_reboot_are_rebooted_one_at_a_time_readers_first_the_writer_last() {
    let pending = |policy| {
        with(synced(), |f| {
            f.cluster.spec.maintenance.pending_reboot_policy = policy;
            f.observed.as_mut().unwrap().members = vec![
                member("w", true, "pending-reboot"),
                member("r", false, "pending-reboot"),
            ];
            f.member_states = [
                ("w".into(), "available".into()),
                ("r".into(), "available".into()),
            ]
            .into();
        })
    };
    let rebooted = |f: &Facts| -> Vec<String> {
        (plan(f).steps.iter())
            .filter_map(|s| match s {
                Step::Own(ClusterStep::RebootMember { identifier, .. }) => Some(identifier.clone()),
                _ => None,
            })
            .collect()
    };
    let report = pending(PendingRebootPolicy::Report);
    assert!(rebooted(&report).is_empty());
    assert_eq!(synced_reason(&plan(&report)), "PendingReboot");
    let now = pending(PendingRebootPolicy::Reboot);
    assert_eq!(rebooted(&now), vec!["r"], "a reader first");
    let writer_left = with(now.clone(), |f| {
        f.observed.as_mut().unwrap().members[1].parameter_status = Some("in-sync".into())
    });
    assert_eq!(rebooted(&writer_left), vec!["w"], "the writer last");
    let reader_rebooting = with(writer_left, |f| {
        f.member_states.insert("r".into(), "rebooting".into());
    });
    assert!(
        rebooted(&reader_rebooting).is_empty(),
        "not while another member is not available"
    );
    let unknown = with(now.clone(), |f| {
        f.member_states.remove("r").map(|_| ()).unwrap_or(())
    });
    assert!(
        rebooted(&unknown).is_empty(),
        "not while a member's state is unknown"
    );
    let outside = with(pending(PendingRebootPolicy::MaintenanceWindow), |f| {
        f.observed.as_mut().unwrap().preferred_maintenance_window =
            Some("sun:05:00-sun:06:00".into());
    });
    assert!(rebooted(&outside).is_empty(), "2026-12-01 is a Tuesday");
    let inside = with(outside, |f| {
        f.observed.as_mut().unwrap().preferred_maintenance_window =
            Some("tue:00:00-tue:01:00".into());
    });
    assert_eq!(rebooted(&inside), vec!["r"]);
}

#[test]
fn pending_maintenance_is_listed_and_applied_as_the_policy_says_once() {
    use crate::maintenance::{MaintenancePolicy, PendingAction};
    let pending = |policy, opt_in: Option<&str>| {
        with(synced(), |f| {
            f.cluster.spec.maintenance.maintenance_policy = policy;
            f.observed.as_mut().unwrap().arn = Some("arn:aws:rds:us-east-1:1:cluster:c".into());
            f.maintenance = Some(vec![PendingAction {
                action: "system-update".into(),
                opt_in_status: opt_in.map(str::to_owned),
                ..Default::default()
            }]);
        })
    };
    let applied = |f: &Facts| -> Vec<&'static str> {
        (plan(f).steps.iter())
            .filter_map(|s| match s {
                Step::ApplyMaintenance(m) => Some(m.apply.opt_in),
                _ => None,
            })
            .collect()
    };
    let report = pending(MaintenancePolicy::Report, None);
    assert!(applied(&report).is_empty());
    let listed = plan(&report)
        .status
        .unwrap()
        .fields
        .common
        .pending_maintenance_actions;
    assert_eq!(listed.len(), 1, "listed in status");
    let window = pending(MaintenancePolicy::NextWindow, None);
    assert_eq!(applied(&window), vec!["next-maintenance"]);
    let sent = pending(MaintenancePolicy::NextWindow, Some("next-maintenance"));
    assert!(
        applied(&sent).is_empty(),
        "opted in already: not sent again"
    );
    let busy = with(pending(MaintenancePolicy::Immediate, None), |f| {
        f.observed.as_mut().unwrap().status = "modifying".into();
    });
    assert!(applied(&busy).is_empty(), "not at once while RDS is busy");
    let stale = with(pending(MaintenancePolicy::Immediate, None), |f| {
        f.maintenance = None
    });
    assert!(
        applied(&stale).is_empty(),
        "nothing decided on a listing that is not fresh"
    );
}

/// A cluster of the identifier no DBCluster owns (made by the console, say).
fn untagged() -> ObservedCluster {
    ObservedCluster {
        tags: BTreeMap::new(),
        ..ours()
    }
}

fn claiming(policy: Option<AdoptionPolicy>, observe: bool, o: ObservedCluster) -> Facts {
    with(facts(), |f| {
        f.cluster.spec.policies.adoption_policy = policy;
        if observe {
            f.cluster.spec.policies.management_policy = ManagementPolicy::ObserveOnly;
        }
        f.cluster.spec.password.master_user_password = Some(SecretKeyReference {
            name: "pw".into(),
            key: "password".into(),
            namespace: None,
        });
        f.password = PasswordFacts::Referenced(Ok(Sensitive::new("the-password-1")));
        f.observed = Some(o);
    })
}

#[test]
fn a_cluster_not_ours_is_observed_or_adopted_only_where_granted() {
    let adopt = Some(AdoptionPolicy::Adopt);
    let granted = |mut o: ObservedCluster| {
        o.tags.insert(ADOPTABLE_BY_TAG.into(), "tea shop".into());
        o
    };
    let mut dead_owner = ours();
    dead_owner.tags.insert(OWNER_TAG.into(), "uid-old".into());
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "untagged, nothing asked: refused",
            claiming(None, false, untagged()),
            vec![],
            "IdentifierInUse",
        ),
        (
            "untagged, adoption asked, not granted: refused",
            claiming(adopt, false, untagged()),
            vec![],
            "NotGranted",
        ),
        (
            "untagged, adoption asked, granted by its tag: the ownership tags only",
            claiming(adopt, false, granted(untagged())),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "untagged and granted, but read from the shared listing: nothing yet",
            with(claiming(adopt, false, granted(untagged())), |f| {
                f.observed_directly = false
            }),
            vec![],
            "",
        ),
        (
            "untagged and granted, but observed by a DBCluster of another namespace: never",
            with(claiming(adopt, false, granted(untagged())), |f| {
                f.observers = vec!["tea".into()]
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "untagged, granted by the operator's settings: adopted",
            with(claiming(adopt, false, untagged()), |f| {
                f.grants.adoption = vec!["shop".into()]
            }),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "another namespace's, adoption asked and even granted: never",
            claiming(adopt, false, granted(with_tags(other_tags()))),
            vec![],
            "IdentifierInUse",
        ),
        (
            "of a DBCluster of this namespace that still exists: never",
            with(claiming(adopt, false, dead_owner.clone()), |f| {
                f.owner_alive = Some(true)
            }),
            vec![],
            "IdentifierInUse",
        ),
        (
            "of a DBCluster of this namespace that is gone: adopted",
            with(claiming(adopt, false, dead_owner.clone()), |f| {
                f.owner_alive = Some(false)
            }),
            vec!["AddTags"],
            "Adopted",
        ),
        (
            "observe only, untagged, not granted: refused",
            claiming(None, true, untagged()),
            vec![],
            "NotGranted",
        ),
        (
            "observe only, granted: observed, nothing changed",
            with(claiming(None, true, granted(untagged())), |f| {
                f.cluster.spec.network.port = Some(3307)
            }),
            vec![],
            "Observed",
        ),
        (
            "observe only, another namespace's: refused",
            claiming(None, true, with_tags(other_tags())),
            vec![],
            "IdentifierInUse",
        ),
        (
            "adoption asked, nothing to adopt: nothing created",
            with(claiming(adopt, false, untagged()), |f| f.observed = None),
            vec![],
            "NothingToAdopt",
        ),
        (
            "AdoptOrCreate, nothing to adopt: created",
            with(
                claiming(Some(AdoptionPolicy::AdoptOrCreate), false, untagged()),
                |f| f.observed = None,
            ),
            vec!["Create"],
            "Synced",
        ),
        (
            "observe only, absent: nothing created",
            with(claiming(None, true, untagged()), |f| f.observed = None),
            vec![],
            "NotFound",
        ),
    ];
    for (name, f, steps, reason) in rows {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{name}");
        assert_eq!(synced_reason(&p), reason, "{name}");
    }
    let only_observed = plan(&claiming(None, true, granted(untagged())));
    assert_eq!(
        only_observed.status.unwrap().fields.common.owned,
        Some(false),
        "never ours"
    );
    let ours_observed = with(synced(), |f| {
        f.cluster.spec.policies.management_policy = ManagementPolicy::ObserveOnly
    });
    let p = plan(&ours_observed);
    assert!(p.steps.is_empty());
    assert_eq!(
        p.status.unwrap().fields.common.owned,
        Some(true),
        "ours stays ours"
    );
    let p = plan(&claiming(adopt, false, granted(untagged())));
    match p.steps.first() {
        Some(Step::AddTags { tags, .. }) => {
            assert_eq!(tags.get(OWNER_TAG).map(String::as_str), Some(UID));
            assert!(tags.contains_key(ADOPTED_TAG));
        }
        other => panic!("{other:?}"),
    }
}

fn with_tags(tags: BTreeMap<String, String>) -> ObservedCluster {
    ObservedCluster { tags, ..ours() }
}

#[test]
fn an_adopted_cluster_reports_its_differences_until_the_spec_changes() {
    let adopted = with(synced(), |f| {
        f.cluster.status.as_mut().unwrap().common.adopted_generation = Some(1);
        f.cluster.spec.network.port = Some(3307);
    });
    let p = plan(&adopted);
    assert!(modification(&p).is_none());
    assert_eq!(synced_reason(&p), "Drifted");
    let edited = with(adopted, |f| f.cluster.metadata.generation = Some(2));
    assert_eq!(modification(&plan(&edited)).unwrap().fields(), vec!["port"]);
}

#[test]
fn paused_calls_nothing_and_dry_run_shows_what_it_would_do() {
    let paused = with(facts(), |f| {
        f.cluster.metadata.annotations = Some([(PAUSED_ANNOTATION.into(), "true".into())].into())
    });
    assert_eq!(reads(&paused.cluster, None), Reads::default());
    let p = plan(&with(paused, |f| {
        f.cluster.status = synced().cluster.status
    }));
    assert!(p.steps.is_empty());
    assert_eq!(synced_reason(&p), "ReconcilePaused");
    assert!(!direct_read(
        &with(deleting(synced()), |f| {
            f.cluster.metadata.annotations =
                Some([(PAUSED_ANNOTATION.into(), "true".into())].into())
        })
        .cluster
    ));

    let dry = with(facts(), |f| {
        f.cluster.metadata.annotations = Some([(DRY_RUN_ANNOTATION.into(), "true".into())].into())
    });
    let p = plan(&dry);
    assert!(p.steps.is_empty(), "{:?}", p.steps);
    assert_eq!(synced_reason(&p), "DryRun");
    let fields = p.status.unwrap().fields;
    let shown: Vec<String> = (fields.common.dry_run.unwrap().steps.iter())
        .map(|s| format!("{} {}", s.action, s.disruption))
        .collect();
    assert_eq!(
        shown,
        vec!["WriteSecret None", "CreateDBCluster NewInstance"]
    );
    let deleting_dry = with(deleting(synced()), |f| {
        f.cluster.metadata.annotations = Some([(DRY_RUN_ANNOTATION.into(), "true".into())].into())
    });
    let p = plan(&deleting_dry);
    assert!(p.steps.is_empty(), "a dry run deletes nothing");

    let observed = with(deleting(synced()), |f| {
        f.cluster.spec.policies.management_policy = ManagementPolicy::ObserveOnly;
        f.observed_directly = false;
    });
    assert!(!direct_read(&observed.cluster));
    assert_eq!(
        names(&plan(&observed)),
        vec!["RemoveFinalizer"],
        "an observed cluster is never deleted"
    );
}

#[test]
fn a_field_changed_back_three_times_within_the_hour_is_no_longer_corrected() {
    let drifted = |f: &mut Facts| {
        f.cluster.spec.network.port = Some(3306);
        f.observed.as_mut().unwrap().port = Some(3307);
    };
    let mut f = with(synced(), drifted);
    for round in 0..3 {
        let p = plan(&f);
        assert_eq!(
            modification(&p).unwrap().fields(),
            vec!["port"],
            "correction {round}"
        );
        f.cluster.status = Some(p.status.unwrap().fields);
        f.cluster
            .status
            .as_mut()
            .unwrap()
            .reported
            .observed_generation = Some(1);
    }
    let p = plan(&f);
    assert!(
        modification(&p).is_none(),
        "the fourth time within the hour: left"
    );
    assert_eq!(synced_reason(&p), "Fighting");
    let edited = with(f, |f| f.cluster.metadata.generation = Some(2));
    assert_eq!(
        modification(&plan(&edited)).unwrap().fields(),
        vec!["port"],
        "an edit applies it"
    );
}

mod activation;
mod alarms;
mod blue_green;
mod clones;
mod data_api;
mod global;
mod multi_az;
mod s3;
mod serving;
mod storage;

/// rds.operator.rs/rotate-now on a cluster whose password RDS manages: RDS rotates it once per
/// value, and status records the value.
#[test]
fn rotate_now_has_rds_rotate_the_clusters_managed_password_once_per_value() {
    let managed = |last: Option<&str>| {
        with(synced(), |f| {
            f.cluster.spec.password.master_user_password = None;
            f.cluster.spec.password.manage_master_user_password = Some(true);
            f.password = PasswordFacts::Managed(Some(Sensitive::new("managed-1")));
            let mut o = ours();
            o.master_user_secret_arn =
                Some("arn:aws:secretsmanager:us-east-1:1:secret:rds!cluster-1".into());
            f.observed = Some(o);
            let annotation = (crate::crd::ROTATE_NOW_ANNOTATION.to_owned(), "1".to_owned());
            f.cluster.metadata.annotations = Some([annotation].into());
            let status = f.cluster.status.get_or_insert_default();
            status.common.last_rotate_request = last.map(str::to_owned);
        })
    };
    let p = plan(&managed(None));
    assert!(
        names(&p).contains(&"RotateManagedPassword"),
        "{:?}",
        names(&p)
    );
    let fields = p.status.unwrap().fields;
    assert_eq!(fields.common.last_rotate_request.as_deref(), Some("1"));
    assert!(fields.common.master_user_secret.is_some());
    let p = plan(&managed(Some("1")));
    assert!(
        !names(&p).contains(&"RotateManagedPassword"),
        "once per value"
    );
}
