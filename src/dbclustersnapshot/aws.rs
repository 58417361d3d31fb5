//! The RDS calls of the DBClusterSnapshot kind: the snapshot kinds' calls (`snapshot_calls!`)
//! with the DB cluster snapshot operations' names, and the observer's listing of the location's
//! manual cluster snapshots.

use super::DBClusterSnapshot;

crate::snapshot_calls! {
    kind: DBClusterSnapshot,
    describe: describe_db_cluster_snapshots "DescribeDBClusterSnapshots" => db_cluster_snapshots,
    identifier: db_cluster_snapshot_identifier,
    source: db_cluster_identifier,
    create: create_db_cluster_snapshot "CreateDBClusterSnapshot",
    copy: copy_db_cluster_snapshot "CopyDBClusterSnapshot" (
        source_db_cluster_snapshot_identifier "SourceDBClusterSnapshotIdentifier",
        target_db_cluster_snapshot_identifier "TargetDBClusterSnapshotIdentifier"
    ),
    attributes: describe_db_cluster_snapshot_attributes "DescribeDBClusterSnapshotAttributes"
        => db_cluster_snapshot_attributes_result . db_cluster_snapshot_attributes,
    modify: modify_db_cluster_snapshot_attribute "ModifyDBClusterSnapshotAttribute",
    delete: delete_db_cluster_snapshot "DeleteDBClusterSnapshot",
    observed: {
        arn: db_cluster_snapshot_arn,
        resource: db_cluster_resource_id,
        encrypted: storage_encrypted
    },
}
