//! A snapshot's export to Amazon S3 (spec.exportTo; StartExportTask, USER_ExportSnapshot.html),
//! for both snapshot kinds: once the snapshot is available, one export task per destination,
//! whose identifier is the object's and the destination's, so that a StartExportTask sent before
//! a crash is found again (DescribeExportTasks of the identifier, read before any call) and a
//! repeat is refused by RDS (ExportTaskAlreadyExists). The task's state, progress and failure go
//! to status.export. A failed export is reported and not sent again; a changed destination is a
//! new export. Pure; table tests in `dbsnapshot/tests/export.rs`.

use kube::KubeSchema;
use kube::runtime::events::EventType;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::managed::plan::{ConditionPlan, Requeue};
use crate::managed::roles::refused_role;
pub use crate::rds::export::{ObservedExport, StartExport};

use super::SnapshotKind;
use super::plan::{Facts, Own, Plan};

/// Where the snapshot's data goes, as Apache Parquet (StartExportTask).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportTo {
    /// The S3 bucket (S3BucketName).
    #[schemars(length(min = 3, max = 63))]
    pub bucket: String,
    /// The folder in the bucket (S3Prefix); RDS adds a folder named after the task.
    pub prefix: Option<String>,
    /// The KMS key RDS encrypts the exported data with (its ARN; KmsKeyId).
    #[serde(rename = "kmsKeyID")]
    #[schemars(length(min = 1, max = 2048))]
    pub kms_key_id: String,
    /// The ARN of the IAM role RDS writes to the bucket as (IamRoleArn). It must be this
    /// namespace's: under the IAM path /rds-operator/<namespace>/, or any role when the operator's
    /// --grant-roles lists the namespace (docs/tenancy.md, "IAM roles"); otherwise nothing is sent.
    #[schemars(length(min = 1, max = 2048))]
    pub iam_role: String,
    /// Only these databases, schemas or tables (ExportOnly); all when left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub export_only: Vec<String>,
}

/// The export as RDS last reported it, and when the operator sent it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportStatus {
    /// The export task's identifier (ExportTaskIdentifier): this object's and its destination's.
    pub task_identifier: String,
    /// STARTING, IN_PROGRESS, COMPLETE, FAILED, CANCELING or CANCELED, as RDS reports it.
    pub status: Option<String>,
    pub percent_progress: Option<i32>,
    /// Why it failed, in RDS's words.
    pub failure_cause: Option<String>,
    /// Where the data goes: s3://bucket/prefix/task.
    pub location: Option<String>,
    /// When the operator sent StartExportTask (RFC 3339): a task is sent once.
    pub started_at: Option<String>,
}

/// The states after which RDS does nothing more with a task.
const DONE: [&str; 3] = ["COMPLETE", "FAILED", "CANCELED"];

/// The task identifier of this object and destination: `ex-<uid>-<8 hex of the destination>`
/// (1 to 60 letters, digits and hyphens, a letter first).
pub fn task_identifier(uid: &str, to: &ExportTo) -> String {
    let destination = serde_json::to_string(to).unwrap_or_default();
    let digest = Sha256::digest(destination.as_bytes());
    let short: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("ex-{uid}-{short}")
}

/// The spec's destination and its task identifier, when the spec asks for an export.
pub fn wanted<K: SnapshotKind>(s: &K) -> Option<(&ExportTo, String)> {
    let to = s.options().export_to.as_ref()?;
    Some((
        to,
        task_identifier(s.meta().uid.as_deref().unwrap_or_default(), to),
    ))
}

/// Whether the read step reads the task: an export is asked and its task is not known to be done.
pub fn to_read<K: SnapshotKind>(s: &K, recorded: Option<&ExportStatus>) -> Option<String> {
    let (_, identifier) = wanted(s)?;
    let done = recorded.is_some_and(|r| {
        r.task_identifier == identifier && r.status.as_deref().is_some_and(|s| DONE.contains(&s))
    });
    (!done).then_some(identifier)
}

/// The export's part of a reconcile of an available snapshot (its ARN `arn`): the status to
/// record, the StartExportTask to send, and the Synced condition when the export has something to
/// say (None: nothing, or all is well).
pub fn plan<K: SnapshotKind>(
    f: &Facts<K>,
    plan: &mut Plan<K>,
    arn: &str,
    recorded: Option<&ExportStatus>,
) -> (Option<ExportStatus>, Option<ConditionPlan>) {
    let Some((to, identifier)) = wanted(&f.object) else {
        return (recorded.cloned(), None);
    };
    let mine = recorded.filter(|r| r.task_identifier == identifier);
    let location = format!(
        "s3://{}/{}{identifier}",
        to.bucket,
        (to.prefix.as_deref()).map_or(String::new(), |p| format!("{}/", p.trim_matches('/')))
    );
    let base = ExportStatus {
        task_identifier: identifier.clone(),
        location: Some(location),
        started_at: mine.and_then(|r| r.started_at.clone()),
        ..Default::default()
    };
    match f.extra.export.as_ref() {
        // Not read now: done, or not yet asked of RDS; what was recorded stands.
        None => (mine.cloned().or(recorded.cloned()), condition(mine)),
        Some(Some(task)) => reported(f, plan, base, (task, mine)),
        Some(None) if base.started_at.is_some() => {
            let why = format!(
                "export task {identifier} was sent at {} and RDS no longer lists it; it is not \
                 sent again (change exportTo for a new export)",
                base.started_at.as_deref().unwrap_or_default()
            );
            let kept = mine.cloned().unwrap_or(base);
            (
                Some(kept),
                Some(ConditionPlan::new(false, "ExportLost", why)),
            )
        }
        Some(None) => {
            let namespace = f.object.meta().namespace.as_deref().unwrap_or_default();
            let (granted, role) = (&f.extra.role_grants, &to.iam_role);
            if let Some(why) = refused_role(granted, namespace, "exportTo.iamRole", role) {
                plan.event(EventType::Warning, "RoleNotGranted", "Export", why.clone());
                plan.requeue = Requeue::After(f.drift_interval);
                let refused = ConditionPlan::new(false, "RoleNotGranted", why);
                return (recorded.cloned(), Some(refused));
            }
            plan.step(super::plan::Step::Own(Own::Export(StartExport {
                identifier: identifier.clone(),
                source_arn: arn.to_owned(),
                bucket: to.bucket.clone(),
                prefix: to.prefix.clone(),
                kms_key_id: to.kms_key_id.clone(),
                iam_role_arn: to.iam_role.clone(),
                export_only: to.export_only.clone(),
            })));
            let note = format!(
                "exporting the snapshot to {}",
                base.location.clone().unwrap()
            );
            plan.event(EventType::Normal, "Exporting", "Export", note);
            plan.requeue = Requeue::After(f.busy_interval);
            let status = ExportStatus {
                status: Some("STARTING".into()),
                started_at: Some(f.now.clone()),
                ..base
            };
            (Some(status), None)
        }
    }
}

/// RDS's task, reported: an Event when it ends, a wait while it runs.
fn reported<K: SnapshotKind>(
    f: &Facts<K>,
    plan: &mut Plan<K>,
    base: ExportStatus,
    (task, mine): (&ObservedExport, Option<&ExportStatus>),
) -> (Option<ExportStatus>, Option<ConditionPlan>) {
    let status = ExportStatus {
        status: Some(task.status.clone()),
        percent_progress: task.percent_progress,
        failure_cause: task.failure_cause.clone(),
        // Sent before a crash that left no record: RDS has it, so it was sent by now.
        started_at: base.started_at.clone().or(Some(f.now.clone())),
        ..base
    };
    let before = mine.and_then(|r| r.status.as_deref());
    let ended = DONE.contains(&task.status.as_str()) && before != Some(task.status.as_str());
    match task.status.as_str() {
        "COMPLETE" if ended => plan.event(
            EventType::Normal,
            "Exported",
            "Export",
            format!(
                "the snapshot is exported to {}",
                status.location.as_deref().unwrap_or_default()
            ),
        ),
        "FAILED" | "CANCELED" if ended => plan.event(
            EventType::Warning,
            "ExportFailed",
            "Export",
            failed(&status),
        ),
        "COMPLETE" | "FAILED" | "CANCELED" => {}
        _ => plan.requeue = Requeue::After(f.busy_interval),
    }
    let condition = condition(Some(&status));
    (Some(status), condition)
}

/// The Synced condition a recorded export asks for: a failure is reported (not retried).
fn condition(recorded: Option<&ExportStatus>) -> Option<ConditionPlan> {
    let r = recorded?;
    matches!(r.status.as_deref(), Some("FAILED" | "CANCELED"))
        .then(|| ConditionPlan::new(false, "ExportFailed", failed(r)))
}

fn failed(r: &ExportStatus) -> String {
    format!(
        "export task {} is {}: {}; it is not sent again (change exportTo for a new export)",
        r.task_identifier,
        r.status.as_deref().unwrap_or_default(),
        r.failure_cause.as_deref().unwrap_or("RDS gives no cause")
    )
}
