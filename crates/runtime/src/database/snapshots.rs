//! Snapshots as both database kinds name and choose them: a final snapshot's identifier, the newest
//! available snapshot, and whether a recorded resource is in the account and region the operator
//! works in now. Pure.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::rds_state::{AwsIdentity, SnapshotInfo};

/// The final snapshot's name of any kind: the one the spec names, else
/// `<identifier>-final-<uid prefix>-<deletion time>`.
pub fn final_snapshot_name(explicit: Option<&str>, identifier: &str, meta: &ObjectMeta) -> String {
    if let Some(name) = explicit {
        return name.to_owned();
    }
    let uid = meta.uid.as_deref().unwrap_or_default();
    let suffix: String = uid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    let when = (meta.deletion_timestamp.as_ref())
        .map(|t| t.0.strftime("%Y%m%d%H%M%S").to_string())
        .unwrap_or_default();
    format!("{identifier}-final-{suffix}-{when}")
}

/// A final snapshot's identifier for an instance deleted at `now` (RFC 3339) while the DBInstance
/// lives on (the old instance of a blue/green switchover): unique per deletion.
pub fn final_snapshot_at(identifier: &str, meta: &ObjectMeta, now: &str) -> String {
    let when: String = now.chars().filter(char::is_ascii_digit).take(14).collect();
    let mut at = meta.clone();
    at.deletion_timestamp = None;
    let name = final_snapshot_name(None, identifier, &at);
    format!("{name}{when}")
}

/// The account and region of the resource's (`what`: instance, cluster) ARN must be the
/// operator's own there: otherwise the operator is looking at another account or region, and
/// absence there proves nothing.
pub fn same_account_and_region(
    what: &str,
    arn: &str,
    identity: Option<&AwsIdentity>,
) -> Result<(), String> {
    let parts: Vec<&str> = arn.split(':').collect();
    let ["arn", _, "rds", region, account, ..] = parts.as_slice() else {
        return Err(format!(
            "the {what}'s ARN {arn:?} cannot be read; nothing is created"
        ));
    };
    let Some(me) = identity else {
        return Err("the operator's AWS account is unknown; nothing is created".into());
    };
    if me.region != *region || me.account != *account {
        return Err(format!(
            "the {what} was in account {account}, region {region}, but the operator now works in \
             account {}, region {}; nothing is created",
            me.account, me.region
        ));
    }
    Ok(())
}

/// An own snapshot that RDS is still taking, if any. The final snapshot of a deletion made outside
/// the operator is `creating` for minutes (API_DBSnapshot.html, Status and PercentProgress): a
/// restore decided before it is `available` would bring back older data than the database had, or
/// an empty database. Only snapshots that will never become available (failed, or going) are passed
/// over; a state this code does not know is waited for too.
pub fn being_taken<'a>(
    mut snapshots: impl Iterator<Item = &'a SnapshotInfo>,
) -> Option<&'a SnapshotInfo> {
    snapshots.find(|s| {
        !matches!(
            s.status.as_str(),
            "available" | "failed" | "deleting" | "deleted"
        )
    })
}

/// Why a restore waits for a snapshot still being taken (`what`: instance, cluster).
pub fn waiting_for(what: &str, identifier: &str, snapshot: &SnapshotInfo) -> String {
    format!(
        "RDS {what} {identifier} was deleted outside the operator; its snapshot {} is still {} \
         ({} snapshot), so nothing is restored or created until it is available",
        snapshot.identifier, snapshot.status, snapshot.kind
    )
}

/// The newest available snapshot.
pub fn newest<'a>(snapshots: impl Iterator<Item = &'a SnapshotInfo>) -> Option<&'a SnapshotInfo> {
    snapshots
        .filter(|s| s.status == "available")
        .max_by_key(|s| s.created_epoch)
}
