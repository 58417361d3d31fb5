//! A Multi-AZ DB cluster (engine mysql or postgres): RDS's own instances, and the class, storage
//! and IOPS rows of the field table, a rule a row.

use super::*;
use crate::database::choices::ClusterStorageType;

fn multi_az(f: Facts) -> Facts {
    with(f, |f| {
        let spec = &mut f.cluster.spec;
        spec.engine = ClusterEngine::Mysql;
        spec.db_cluster_instance_class = Some("db.m6gd.large".into());
        spec.allocated_storage = Some(100);
        spec.storage_type = Some(ClusterStorageType::Io1);
        spec.iops = Some(1000);
        let o = f.observed.as_mut().unwrap();
        o.engine = Some("mysql".into());
        o.db_cluster_instance_class = Some("db.m6gd.large".into());
        o.allocated_storage = Some(100);
        o.storage_type = Some("io1".into());
        o.iops = Some(1000);
        o.members = (1..=3)
            .map(|n| member(&format!("coffee-instance-{n}"), n == 1, "in-sync"))
            .collect();
    })
}

#[test]
fn a_multi_az_db_cluster_is_deleted_with_the_instances_rds_made_for_it() {
    let rows: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
        (
            "Multi-AZ: RDS lists its own three instances: delete the cluster, which takes them",
            multi_az(deleting(synced())),
            vec!["Delete"],
            "Deleting",
        ),
        (
            "Aurora: RDS lists a member: wait (InUse)",
            with(deleting(synced()), |f| {
                f.observed.as_mut().unwrap().members = vec![member("coffee-1", true, "in-sync")];
            }),
            vec![],
            "InUse",
        ),
        (
            "Multi-AZ: a DBInstance of the namespace still names it: wait (InUse)",
            with(multi_az(deleting(synced())), |f| {
                f.referrers = vec!["DBInstance coffee-1".into()]
            }),
            vec![],
            "InUse",
        ),
    ];
    for (name, f, steps, reason) in rows {
        let p = plan(&f);
        assert_eq!(names(&p), steps, "{name}");
        assert_eq!(synced_reason(&p), reason, "{name}");
    }
}

#[test]
fn class_storage_and_iops_are_kept_as_the_spec_says_and_storage_never_shrinks() {
    type Check = fn(&ClusterModification) -> bool;
    let rows: Vec<(&str, Facts, Option<Check>)> = vec![
        ("in sync: nothing sent", multi_az(synced()), None),
        (
            "a new class: one ModifyDBCluster with it",
            with(multi_az(synced()), |f| {
                f.cluster.spec.db_cluster_instance_class = Some("db.r6gd.large".into())
            }),
            Some(|m| m.db_cluster_instance_class.as_deref() == Some("db.r6gd.large")),
        ),
        (
            "more storage and IOPS: both in one ModifyDBCluster",
            with(multi_az(synced()), |f| {
                f.cluster.spec.allocated_storage = Some(200);
                f.cluster.spec.iops = Some(3000);
            }),
            Some(|m| m.allocated_storage == Some(200) && m.iops == Some(3000)),
        ),
        (
            "less storage than RDS has: refused, nothing sent",
            with(multi_az(synced()), |f| {
                f.cluster.spec.allocated_storage = Some(50)
            }),
            None,
        ),
        (
            "to gp3: one ModifyDBCluster",
            with(multi_az(synced()), |f| {
                f.cluster.spec.storage_type = Some(ClusterStorageType::Gp3)
            }),
            Some(|m| m.storage_type.as_deref() == Some("gp3")),
        ),
    ];
    for (name, f, check) in rows {
        let p = plan(&f);
        match (check, modification(&p)) {
            (None, None) => {}
            (Some(check), Some(m)) => assert!(check(m), "{name}: {m:?}"),
            (check, m) => panic!("{name}: expected {}, got {m:?}", check.is_some()),
        }
    }
    let refused = plan(&with(multi_az(synced()), |f| {
        f.cluster.spec.allocated_storage = Some(50)
    }));
    assert!(
        format!("{:?}", refused.status).contains("cannot shrink from 100 to 50 GiB"),
        "the refusal is reported: {:?}",
        refused.status
    );
}

#[test]
fn a_multi_az_db_cluster_waiting_for_a_reboot_is_reported_and_no_instance_rebooted() {
    let p = plan(&with(multi_az(synced()), |f| {
        f.cluster.spec.maintenance.pending_reboot_policy =
            crate::database::choices::PendingRebootPolicy::Reboot;
        let o = f.observed.as_mut().unwrap();
        o.members[1].parameter_status = Some("pending-reboot".into());
        f.member_states = (o.members.iter())
            .map(|m| (m.identifier.clone(), "available".to_owned()))
            .collect();
    }));
    assert_eq!(names(&p), Vec::<&str>::new());
    assert_eq!(synced_reason(&p), "PendingReboot");
}
