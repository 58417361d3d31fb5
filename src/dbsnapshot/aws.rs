//! The RDS calls of the DBSnapshot kind: the snapshot kinds' calls (`snapshot_calls!`) with the
//! DB snapshot operations' names, and the observer's listing of the location's manual DB
//! snapshots.

use super::DBSnapshot;

crate::snapshot_calls! {
    kind: DBSnapshot,
    describe: describe_db_snapshots "DescribeDBSnapshots" => db_snapshots,
    identifier: db_snapshot_identifier,
    source: db_instance_identifier,
    create: create_db_snapshot "CreateDBSnapshot",
    copy: copy_db_snapshot "CopyDBSnapshot" (
        source_db_snapshot_identifier "SourceDBSnapshotIdentifier",
        target_db_snapshot_identifier "TargetDBSnapshotIdentifier"
    ),
    attributes: describe_db_snapshot_attributes "DescribeDBSnapshotAttributes"
        => db_snapshot_attributes_result . db_snapshot_attributes,
    modify: modify_db_snapshot_attribute "ModifyDBSnapshotAttribute",
    delete: delete_db_snapshot "DeleteDBSnapshot",
    observed: {arn: db_snapshot_arn, resource: dbi_resource_id, encrypted: encrypted},
}
