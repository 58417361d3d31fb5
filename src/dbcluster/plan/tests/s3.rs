//! A restore from a backup in S3 (restoreFrom.s3, RestoreDBClusterFromS3), a rule a row: made only
//! with an ingestion role of the namespace (managed::roles), the spec's password sent in the call.

use super::*;
use crate::database::spec::S3Source;

fn from_s3(role: &str, granted: &[&str]) -> Facts {
    with(facts(), |f| {
        f.cluster.spec.restore_from = Some(ClusterRestoreFrom {
            s3: Some(S3Source {
                bucket: "backups".into(),
                prefix: Some("coffee/".into()),
                ingestion_role: role.into(),
                source_engine: "mysql".into(),
                source_engine_version: "8.0.42".into(),
            }),
            ..Default::default()
        });
        f.grants.roles = granted.iter().map(|n| n.to_string()).collect();
        // Nothing is read of a backup in S3: the role is the reach.
        f.restore_source = Some(crate::database::tenancy::RestoreSource::NotFound);
    })
}

fn restores(p: &Plan) -> usize {
    (p.steps.iter())
        .filter(|s| matches!(s, Step::Own(ClusterStep::RestoreFromS3 { .. })))
        .count()
}

#[test]
fn a_restore_from_s3_is_made_only_with_an_ingestion_role_of_this_namespace() {
    let own = "arn:aws:iam::123456789012:role/rds-operator/shop/s3-import";
    let theirs = "arn:aws:iam::123456789012:role/rds-operator/team-b/s3-import";
    let root = "arn:aws:iam::123456789012:role/s3-import";
    let rows: Vec<(&str, Facts, usize, &str)> = vec![
        (
            "a role under /rds-operator/shop/",
            from_s3(own, &[]),
            1,
            "Synced",
        ),
        (
            "another namespace's role",
            from_s3(theirs, &[]),
            0,
            "RoleNotGranted",
        ),
        (
            "a role outside the path",
            from_s3(root, &[]),
            0,
            "RoleNotGranted",
        ),
        (
            "--grant-roles lists the namespace",
            from_s3(root, &["shop"]),
            1,
            "Synced",
        ),
        (
            "--grant-roles lists another",
            from_s3(root, &["team-b"]),
            0,
            "RoleNotGranted",
        ),
    ];
    for (what, f, made, reason) in rows {
        let p = plan(&f);
        assert_eq!(restores(&p), made, "{what}: {:?}", p.steps);
        assert_eq!(synced_reason(&p), reason, "{what}");
    }
    let p = plan(&from_s3(own, &[]));
    let restore = (p.steps.iter()).find_map(|s| match s {
        Step::Own(ClusterStep::RestoreFromS3 { s3, password, .. }) => Some((s3, password)),
        _ => None,
    });
    let (s3, password) = restore.expect("a RestoreDBClusterFromS3");
    assert_eq!((s3.bucket.as_str(), password.is_some()), ("backups", true));
    let fields = p.status.expect("status").fields;
    assert_eq!(
        fields.restored_from.as_deref(),
        Some("s3://backups/coffee/")
    );
    assert_ne!(
        fields.common.master_user_password_hash.as_deref(),
        Some(super::super::create::RESTORED_PASSWORD),
        "the spec's password is sent in the call"
    );
}
