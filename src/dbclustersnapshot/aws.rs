//! The RDS calls of the DBClusterSnapshot kind: the snapshot kinds' calls (`snapshot_calls!`)
//! with the DB cluster snapshot operations' names, and the observer's listing of the location's
//! manual cluster snapshots.

use std::ops::Deref;

use crate::aws_error::AwsError;
use crate::rds::Rds;
use crate::snapshot::ObservedSnapshot;
use crate::snapshot::calls::SnapshotCalls;

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
    not_found: "DBClusterSnapshotNotFound",
    observed: {
        arn: db_cluster_snapshot_arn,
        resource: db_cluster_resource_id,
        encrypted: storage_encrypted
    },
}

/// A cluster snapshot as RDS reports it: the shared observed snapshot, as its own type so the
/// observer keeps its listing apart from the DB snapshots'.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedClusterSnapshot(pub ObservedSnapshot);

impl Deref for ObservedClusterSnapshot {
    type Target = ObservedSnapshot;
    fn deref(&self) -> &ObservedSnapshot {
        &self.0
    }
}

impl crate::observer::listing::Listed for ObservedClusterSnapshot {
    const WHAT: &'static str = "the manual DB cluster snapshots";
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    /// Only a snapshot RDS has finished taking: one in progress is read directly.
    fn settled(&self) -> bool {
        self.status == "available"
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        let found = DBClusterSnapshot::manual(rds).await?;
        Ok(found.into_iter().map(ObservedClusterSnapshot).collect())
    }
}
