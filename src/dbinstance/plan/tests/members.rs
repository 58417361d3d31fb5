//! A DBInstance that is a member of a DBCluster: every field the cluster owns is left out of its
//! Create and Modify and never drifts, whatever the object says; it waits for its cluster, has
//! no password of its own, and is deleted without a final snapshot.

use super::*;
use crate::dbinstance::StorageType;

/// A member of the DBCluster whose RDS identifier is `coffee-aurora`, with every field its cluster
/// owns set on it (as an object stored before the CEL rules could be), each to a value the
/// observed member does not have.
fn member_with_every_cluster_field() -> Facts {
    with(facts(), |f| {
        let s = &mut f.db.spec;
        s.engine = "aurora-mysql".into();
        s.db_instance_class = "db.r6g.large".into();
        s.db_cluster_ref = Some(crate::crd::LocalRef {
            name: "coffee-aurora".into(),
        });
        s.allocated_storage = Some(100);
        s.max_allocated_storage = Some(200);
        s.storage_type = Some(StorageType::Io1);
        s.iops = Some(3000);
        s.storage_throughput = Some(500);
        s.master_username = Some("other".into());
        s.password.manage_master_user_password = None;
        s.db_name = Some("OTHER".into());
        s.backup_retention_period = Some(30);
        s.backups.preferred_backup_window = Some("01:00-02:00".into());
        s.engine_version = Some("8.0.mysql_aurora.3.09.0".into());
        s.security.storage_encrypted = Some(true);
        s.security.kms_key_id = Some("alias/other".into());
        s.network.port = Some(3307);
        s.multi_az = Some(true);
        s.network.vpc_security_group_ids = Some(vec!["sg-other".into()]);
        s.network.db_subnet_group_name = Some("other".into());
        s.deletion.deletion_protection = Some(true);
        s.backups.copy_tags_to_snapshot = Some(false);
        s.security.enable_iam_database_authentication = Some(true);
        s.security.enable_cloudwatch_logs_exports = Some(vec!["audit".into()]);
        s.character_set_name = Some("utf8".into());
        s.insights.database_insights_mode =
            Some(crate::database::choices::DatabaseInsightsMode::Advanced);
        f.password = PasswordFacts::NotRead;
        f.cluster = Some(Ok("coffee-aurora".into()));
    })
}

/// The member as RDS shows it: what its cluster has, none of the spec's values above.
fn member_in_rds() -> ObservedInstance {
    ObservedInstance {
        engine: Some("aurora-mysql".into()),
        engine_version: Some("8.0.mysql_aurora.3.08.0".into()),
        db_instance_class: Some("db.r6g.large".into()),
        allocated_storage: Some(1),
        storage_type: Some("aurora".into()),
        backup_retention_period: Some(1),
        ..ours()
    }
}

#[test]
fn a_member_sends_none_of_the_fields_its_cluster_owns() {
    let spec_of = |p: &Plan| {
        (p.steps.iter())
            .find_map(|s| match s {
                Step::Own(InstanceStep::CreateInstance { spec, password, .. }) => {
                    Some((spec.clone(), password.clone()))
                }
                _ => None,
            })
            .expect("a CreateDBInstance")
    };
    let (sent, password) = spec_of(&plan(&member_with_every_cluster_field()));
    assert_eq!(password, None, "a member sends no password");
    assert_eq!(sent.db_cluster_identifier.as_deref(), Some("coffee-aurora"));
    let named: Vec<(&str, bool)> = vec![
        ("allocatedStorage", sent.allocated_storage.is_none()),
        ("maxAllocatedStorage", sent.max_allocated_storage.is_none()),
        ("storageType", sent.storage_type.is_none()),
        ("iops", sent.iops.is_none()),
        ("storageThroughput", sent.storage_throughput.is_none()),
        ("masterUsername", sent.master_username.is_none()),
        (
            "masterUserPassword",
            sent.password.master_user_password.is_none(),
        ),
        (
            "manageMasterUserPassword",
            sent.password.manage_master_user_password.is_none(),
        ),
        ("dbName", sent.db_name.is_none()),
        (
            "backupRetentionPeriod",
            sent.backup_retention_period.is_none(),
        ),
        (
            "preferredBackupWindow",
            sent.backups.preferred_backup_window.is_none(),
        ),
        ("engineVersion", sent.engine_version.is_none()),
        (
            "storageEncrypted",
            sent.security.storage_encrypted.is_none(),
        ),
        ("kmsKeyID", sent.security.kms_key_id.is_none()),
        ("port", sent.network.port.is_none()),
        ("multiAZ", sent.multi_az.is_none()),
        (
            "vpcSecurityGroupIDs",
            sent.network.vpc_security_group_ids.is_none(),
        ),
        (
            "dbSubnetGroupName",
            sent.network.db_subnet_group_name.is_none(),
        ),
        (
            "deletionProtection",
            sent.deletion.deletion_protection.is_none(),
        ),
        (
            "copyTagsToSnapshot",
            sent.backups.copy_tags_to_snapshot.is_none(),
        ),
        (
            "enableIAMDatabaseAuthentication",
            sent.security.enable_iam_database_authentication.is_none(),
        ),
        (
            "enableCloudwatchLogsExports",
            sent.security.enable_cloudwatch_logs_exports.is_none(),
        ),
        ("characterSetName", sent.character_set_name.is_none()),
        (
            "databaseInsightsMode",
            sent.insights.database_insights_mode.is_none(),
        ),
    ];
    let names: Vec<&str> = named.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        spec::CLUSTER_OWNED,
        "every cluster-owned field is named here"
    );
    for (field, left_out) in named {
        assert!(left_out, "a member's CreateDBInstance carries {field}");
    }
}

#[test]
fn a_member_never_drifts_on_a_field_its_cluster_owns() {
    let mut f = member_with_every_cluster_field();
    f.observed = Some(member_in_rds());
    f.db.status = Some(observed_status("coffee", &member_in_rds()));
    f.db.status.as_mut().unwrap().reported.observed_generation = Some(1);
    f.db.status.as_mut().unwrap().common.owned = Some(true);
    let p = plan(&f);
    let modify = p.steps.iter().find(|s| matches!(s, Step::Modify { .. }));
    assert!(modify.is_none(), "{:?}", p.steps);
    let drift = p.status.as_ref().and_then(|s| s.fields.last_drift.clone());
    assert!(drift.is_none(), "{drift:?}");
    // Its own fields still drift: the class.
    let other_class = with(f, |f| f.db.spec.db_instance_class = "db.r6g.xlarge".into());
    let p = plan(&other_class.edited(|_| {}));
    let sent = (p.steps.iter()).find_map(|s| match s {
        Step::Modify { modification, .. } => Some(modification.clone()),
        _ => None,
    });
    assert_eq!(
        sent.and_then(|m| m.db_instance_class.clone()).as_deref(),
        Some("db.r6g.xlarge")
    );
}

#[test]
fn a_member_waits_for_its_cluster_and_is_deleted_without_a_final_snapshot() {
    let waiting = with(member_with_every_cluster_field(), |f| {
        f.cluster = Some(Err("DBCluster coffee-aurora is not Ready yet".into()))
    });
    let p = plan(&waiting);
    assert!(
        p.steps.iter().all(|s| matches!(s, Step::AddFinalizer)),
        "{:?}",
        p.steps
    );
    assert_eq!(p.status.unwrap().synced.reason, "ReferencesUnresolved");
    assert_eq!(
        reads(&waiting.db, None).password,
        PasswordRead::None,
        "a member reads no password"
    );

    let deleting = with(member_with_every_cluster_field(), |f| {
        f.db.metadata.deletion_timestamp = Some(at("1970-01-01T00:00:00Z"));
        f.observed = Some(member_in_rds());
        f.observed_directly = true;
    });
    assert_eq!(
        spec::deletion_policy(&deleting.db),
        DeletionPolicy::Snapshot
    );
    let p = plan(&deleting);
    match p.steps.first() {
        Some(Step::Own(InstanceStep::DeleteInstance { final_snapshot, .. })) => {
            assert_eq!(*final_snapshot, None)
        }
        other => panic!("expected the delete, got {other:?}"),
    }
}
