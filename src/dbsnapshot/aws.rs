//! The RDS calls of the DBSnapshot kind: the snapshot kinds' calls (`snapshot_calls!`) with the
//! DB snapshot operations' names, and the observer's listing of the location's manual DB
//! snapshots.

use crate::aws_error::AwsError;
use crate::rds::Rds;
use crate::snapshot::ObservedSnapshot;
use crate::snapshot::calls::SnapshotCalls;

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
    not_found: "DBSnapshotNotFound",
    observed: {arn: db_snapshot_arn, resource: dbi_resource_id, encrypted: encrypted},
}

impl crate::observer::listing::Listed for ObservedSnapshot {
    const WHAT: &'static str = "the manual DB snapshots";
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    /// Only a snapshot RDS has finished taking: one in progress is read directly.
    fn settled(&self) -> bool {
        self.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        DBSnapshot::manual(rds).await
    }
}
