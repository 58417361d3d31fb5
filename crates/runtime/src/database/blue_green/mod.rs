//! Blue/green deployments, the rules both database kinds share (upgradePolicy BlueGreen on a
//! DBInstance or a DBCluster): what status reports of a deployment, what each state RDS reports
//! means for the object (reported, waited for, or a switchover to approve), who approves a
//! switchover, when the old instance or cluster's retention has passed, and how the read step finds
//! the deployment ([`aws`]). Each kind says what its deployment carries and what it deletes.
//! Pure, except [`aws`].

use std::collections::BTreeMap;

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::choices::{DeletionPolicy, SwitchoverPolicy, UpgradePolicy};
use super::parts::FieldDrift;
use super::spec::Upgrade;
use crate::rds_state::{BlueGreenTargets, ObservedDeployment};

pub mod aws;

/// Annotation that approves the switchover of the deployment RDS reports AVAILABLE: "true" (or
/// the deployment's identifier). The operator removes it once the switchover is sent, so it never
/// approves a later deployment.
pub const SWITCHOVER_ANNOTATION: &str = "rds.operator.rs/switchover";

/// A blue/green deployment, as DescribeBlueGreenDeployments reports it, and what the operator did:
/// the part of status.blueGreen both kinds have.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    /// RDS's identifier of the deployment (bgd-...): spec.switchover names it to approve.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub deployment_identifier: String,
    pub deployment_name: String,
    /// PROVISIONING, AVAILABLE, SWITCHOVER_IN_PROGRESS, SWITCHOVER_COMPLETED,
    /// INVALID_CONFIGURATION, SWITCHOVER_FAILED or DELETING.
    pub status: String,
    /// RDS's words on the state (why a switchover failed...).
    pub status_details: Option<String>,
    /// RDS's SwitchoverDetails: each member, blue to green, and its state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switchover_details: Vec<SwitchoverDetail>,
    /// RDS's tasks (CREATING_READ_REPLICA_OF_SOURCE, DB_ENGINE_VERSION_UPGRADE...) and their state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<BlueGreenTask>,
    /// What green carries: the fields, from blue's values to the spec's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<FieldDrift>,
    /// When the operator first saw the switchover completed (RFC 3339).
    pub switched_over_at: Option<String>,
}

#[cfg(any(test, feature = "fixtures"))]
impl DeploymentStatus {
    /// The table tests' deployment as recorded once made: RDS last reported it PROVISIONING.
    pub fn made(identifier: &str, name: &str) -> Self {
        DeploymentStatus {
            deployment_identifier: identifier.into(),
            deployment_name: name.into(),
            status: "PROVISIONING".into(),
            ..Default::default()
        }
    }
}

/// The table tests' deployment `identifier`, named coffee-2, as RDS reports it in `status`, from
/// blue's ARN to green's.
#[cfg(any(test, feature = "fixtures"))]
pub fn observed(
    identifier: &str,
    [source, target]: [String; 2],
    status: &str,
) -> ObservedDeployment {
    ObservedDeployment {
        identifier: identifier.into(),
        name: "coffee-2".into(),
        source,
        target: Some(target),
        status: status.into(),
        ..Default::default()
    }
}

/// One member of a switchover.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SwitchoverDetail {
    pub source_member: String,
    pub target_member: String,
    pub status: String,
}

/// One task of a blue/green deployment.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlueGreenTask {
    pub name: String,
    pub status: String,
}

/// A call of a blue/green deployment: the same in the steps of either kind
/// (`Step::BlueGreen { identifier, call }`), made by [`aws::act`].
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// CreateBlueGreenDeployment of `source` (the instance's or cluster's ARN), green made with
    /// `targets`, tagged with `tags`.
    Create {
        name: String,
        source: String,
        targets: Box<BlueGreenTargets>,
        tags: BTreeMap<String, String>,
    },
    /// SwitchoverBlueGreenDeployment, with the spec's timeout.
    Switchover {
        deployment: String,
        timeout: Option<i32>,
    },
    /// DeleteBlueGreenDeployment, never with its target.
    Delete { deployment: String },
}

impl Call {
    /// The step's name in plans and tests.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Create { .. } => "CreateBlueGreen",
            Call::Switchover { .. } => "Switchover",
            Call::Delete { .. } => "DeleteBlueGreen",
        }
    }

    /// What a dry run shows of it: the RDS action, whether it is a switchover (the endpoint moves
    /// to green), and a note.
    pub fn preview(&self) -> (&'static str, bool, String) {
        match self {
            Call::Create { name, .. } => (
                "CreateBlueGreenDeployment",
                true,
                format!(
                    "blue/green deployment {name}: a green copy with these changes, switched over \
                     once approved"
                ),
            ),
            Call::Switchover { deployment, .. } => (
                "SwitchoverBlueGreenDeployment",
                true,
                format!("the endpoint moves to the green copy of {deployment}"),
            ),
            Call::Delete { deployment } => (
                "DeleteBlueGreenDeployment",
                false,
                format!("{deployment}, never its target"),
            ),
        }
    }
}

/// How the read step finds the deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Read {
    /// By the identifier status recorded, and the green and old instance or cluster it recorded.
    Recorded {
        deployment: String,
        green: Option<String>,
        old: Option<String>,
    },
    /// By its source, the instance's or cluster's ARN (one made before its identifier was
    /// recorded).
    OfSource(String),
}

/// What the read step learnt of a deployment: `T` is the kind's observed instance or cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts<T> {
    /// The deployment, None when RDS has none.
    pub deployment: Option<ObservedDeployment>,
    /// Green before the switchover, read directly.
    pub green: Option<T>,
    /// The old instance or cluster after it, read directly.
    pub old: Option<T>,
    /// Green's replica lag in seconds, as the last health poll read it from CloudWatch (None:
    /// not known).
    pub green_lag_seconds: Option<f64>,
}

impl<T> Facts<T> {
    /// These facts with green and the old one as the kind read them.
    pub fn with<U>(self, green: Option<U>, old: Option<U>) -> Facts<U> {
        Facts {
            deployment: self.deployment,
            green,
            old,
            green_lag_seconds: self.green_lag_seconds,
        }
    }
}

impl<T> Default for Facts<T> {
    fn default() -> Self {
        Facts {
            deployment: None,
            green: None,
            old: None,
            green_lag_seconds: None,
        }
    }
}

/// The read of the deployment status recorded (its green before the switchover, its old one
/// after); or, with none recorded, of one made of `source` when `wanted` (the spec asks for a
/// change a deployment carries). None: nothing to read.
pub fn read(
    recorded: Option<(&DeploymentStatus, Option<String>, Option<String>)>,
    source: Option<&str>,
    wanted: bool,
) -> Option<Read> {
    let any = recorded.is_some();
    if let Some((r, green, old)) = recorded.filter(|(r, ..)| !r.deployment_identifier.is_empty()) {
        return Some(Read::Recorded {
            deployment: r.deployment_identifier.clone(),
            green: green.filter(|_| r.switched_over_at.is_none()),
            old,
        });
    }
    let source = source?;
    (any || wanted).then(|| Read::OfSource(source.to_owned()))
}

/// Whether the spec sends changes of the fields a deployment carries through one.
pub fn blue_green(upgrade: &Upgrade) -> bool {
    upgrade.upgrade_policy == UpgradePolicy::BlueGreen
}

/// What a state RDS reports means for the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reported (Synced False with `reason`), nothing sent; polled at the busy interval, or the
    /// settled one when only a person can move it on. `warning`: an Event when the state is new.
    Report {
        reason: &'static str,
        message: String,
        busy: bool,
        warning: bool,
    },
    /// AVAILABLE: switched over once approved.
    Available,
    /// SWITCHOVER_COMPLETED: the old instance or cluster is kept for its retention.
    Completed,
}

/// The stage of deployment `d` (API_BlueGreenDeployment.html, Status). A failed switchover or an
/// invalid green is reported and nothing is deleted: blue serves as before.
pub fn stage(d: &ObservedDeployment) -> Stage {
    let id = &d.identifier;
    let report = |reason, message, busy, warning| Stage::Report {
        reason,
        message,
        busy,
        warning,
    };
    match d.status.as_str() {
        "PROVISIONING" => report(
            "BlueGreenProvisioning",
            format!("RDS is making the green copy of deployment {id}"),
            true,
            false,
        ),
        "AVAILABLE" => Stage::Available,
        "SWITCHOVER_IN_PROGRESS" => report(
            "SwitchingOver",
            format!("RDS is switching over deployment {id}"),
            true,
            false,
        ),
        "SWITCHOVER_FAILED" | "INVALID_CONFIGURATION" => {
            let reason = match d.status.as_str() {
                "SWITCHOVER_FAILED" => "SwitchoverFailed",
                _ => "BlueGreenInvalid",
            };
            let message = format!(
                "blue/green deployment {id} is {}: {}; nothing is deleted (blue serves as before)",
                d.status,
                d.status_details.as_deref().unwrap_or_default()
            );
            report(reason, message, false, true)
        }
        "SWITCHOVER_COMPLETED" => Stage::Completed,
        _ => report(
            "BlueGreenDeleting",
            format!("blue/green deployment {id} is {}", d.status),
            true,
            false,
        ),
    }
}

/// The switchover annotation's value, if any.
pub fn annotation(annotations: Option<&BTreeMap<String, String>>) -> Option<&str> {
    annotations?.get(SWITCHOVER_ANNOTATION).map(String::as_str)
}

/// Whether the switchover of deployment `id` is approved: by spec.switchover, the annotation
/// ("true" or the identifier), or switchoverPolicy Auto.
pub fn approved(
    upgrade: &Upgrade,
    annotations: Option<&BTreeMap<String, String>>,
    id: &str,
) -> bool {
    upgrade.switchover.as_deref() == Some(id)
        || annotation(annotations).is_some_and(|v| v == "true" || v == id)
        || upgrade.switchover_policy == SwitchoverPolicy::Auto
}

/// What status reports of deployment `d`, with what the operator recorded of it before.
pub fn status(
    d: &ObservedDeployment,
    previous: Option<&DeploymentStatus>,
    now: &str,
) -> DeploymentStatus {
    let completed = d.status == "SWITCHOVER_COMPLETED";
    DeploymentStatus {
        deployment_identifier: d.identifier.clone(),
        deployment_name: d.name.clone(),
        status: d.status.clone(),
        status_details: d.status_details.clone(),
        switchover_details: (d.switchover_details.iter())
            .map(|(s, t, state)| SwitchoverDetail {
                source_member: s.clone(),
                target_member: t.clone(),
                status: state.clone(),
            })
            .collect(),
        tasks: (d.tasks.iter())
            .map(|(name, status)| BlueGreenTask {
                name: name.clone(),
                status: status.clone(),
            })
            .collect(),
        changes: previous.map(|p| p.changes.clone()).unwrap_or_default(),
        switched_over_at: completed.then(|| {
            (previous.and_then(|p| p.switched_over_at.clone())).unwrap_or_else(|| now.to_owned())
        }),
    }
}

/// The identifier an RDS ARN names (its last part): green's or the old one's, from the
/// deployment's Target or Source.
pub fn identifier_of(arn: &str) -> String {
    arn.rsplit(':').next().unwrap_or(arn).to_owned()
}

/// The name of the deployment made for this identifier at this generation (at most 60
/// characters, as RDS takes).
pub fn name(identifier: &str, generation: i64) -> String {
    let mut name = format!("{identifier}-{generation}");
    name.truncate(60);
    name
}

/// Whether the retention of the old instance or cluster, counted from the switchover, has passed.
/// Unset: never (it is kept).
pub fn retention_due(
    retention: Option<kube::core::Duration>,
    switched_over_at: Option<&str>,
    now: &str,
) -> bool {
    let (Some(retention), Some(switched)) = (retention, switched_over_at) else {
        return false;
    };
    let retention = match retention.is_negative() {
        true => std::time::Duration::ZERO,
        false => std::time::Duration::from(retention),
    };
    crate::duration::since(switched, now).is_some_and(|e| e >= retention)
}

/// The final snapshot of an instance or cluster a deployment left (green before the switchover, the
/// old one after it), by deletionPolicy: under Snapshot, at the object's deletion, named by its
/// deletion time (the same on every retry); at the end of a retention, by the time now.
pub fn leftover_snapshot(
    policy: DeletionPolicy,
    deleting: bool,
    identifier: &str,
    meta: &ObjectMeta,
    now: &str,
) -> Option<String> {
    match policy {
        DeletionPolicy::Snapshot if deleting => Some(super::snapshots::final_snapshot_name(
            None, identifier, meta,
        )),
        DeletionPolicy::Snapshot => {
            Some(super::snapshots::final_snapshot_at(identifier, meta, now))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
