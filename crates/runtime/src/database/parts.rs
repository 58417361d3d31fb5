//! The CRD parts both database kinds (DBInstance and DBCluster) have in their specs and statuses:
//! the connection Secret, a Secret key, an endpoint, the dry run and the drift records. Doc comments
//! here become `kubectl explain` text.

use std::collections::BTreeMap;

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How often Secrets Manager rotates a secret (RotateSecret's RotationRules).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[x_kube(validation = kube::core::Rule::new("has(self.scheduleExpression) != has(self.automaticallyAfterDays)").message("give scheduleExpression or automaticallyAfterDays, not both"))]
#[serde(rename_all = "camelCase")]
pub struct SecretRotation {
    /// A schedule in Secrets Manager's syntax: rate(4 days), rate(12 hours) or cron(0 3 ? * SUN *).
    #[schemars(length(min = 1, max = 256), regex(pattern = r"^(rate|cron)\(.+\)$"))]
    pub schedule_expression: Option<String>,
    /// Or every this many days (1 to 1000).
    #[schemars(range(min = 1, max = 1000))]
    pub automatically_after_days: Option<i64>,
    /// How long a rotation may take within its schedule, such as 3h (1h to 24h).
    #[schemars(length(min = 2, max = 3), regex(pattern = r"^[0-9]{1,2}h$"))]
    pub duration: Option<String>,
}

impl SecretRotation {
    /// Whether Secrets Manager's rules (`observed`) are what this asks for: each field given here
    /// is the same there (Secrets Manager may add what was not asked, such as a duration).
    pub fn kept_by(&self, observed: &SecretRotation) -> bool {
        let same = |want: &Option<String>, have: &Option<String>| want.is_none() || want == have;
        same(&self.schedule_expression, &observed.schedule_expression)
            && same(&self.duration, &observed.duration)
            && (self.automatically_after_days.is_none()
                || self.automatically_after_days == observed.automatically_after_days)
    }
}

/// The secret RDS keeps an RDS-managed master password in (MasterUserSecret).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MasterUserSecret {
    /// Its ARN in Secrets Manager.
    pub secret_arn: Option<String>,
    /// The KMS key it is encrypted with (an ARN, as RDS reports it).
    pub kms_key_id: Option<String>,
    /// creating, active, rotating or impaired.
    pub secret_status: Option<String>,
}

impl MasterUserSecret {
    /// The secret as RDS describes it (None: RDS manages no password of the database).
    pub fn of(arn: Option<&String>, kms: Option<&String>, status: Option<&String>) -> Option<Self> {
        arn.map(|a| MasterUserSecret {
            secret_arn: Some(a.clone()),
            kms_key_id: kms.cloned(),
            secret_status: status.cloned(),
        })
    }
}

/// What the operator would do, were it not in dry run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DryRun {
    /// The steps, in order (none: nothing would change).
    #[serde(default)]
    pub steps: Vec<DryRunStep>,
}

/// One step the operator would take.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DryRunStep {
    /// The call or write (CreateDBInstance, ModifyDBInstance, AddTagsToResource, DeleteDBInstance,
    /// a Secret...).
    pub action: String,
    /// What it changes: the fields, from what to what.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldDrift>,
    /// What the database goes through, from RDS's documented downtime for each setting: None,
    /// Reboot (applies at the next reboot), Failover (a Multi-AZ instance fails over), Outage,
    /// Switchover (a blue/green switchover moves the endpoint to green), NewInstance (created or
    /// restored) or Deletion.
    pub disruption: String,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// Fields found changed outside the operator, and what was done.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DriftRecord {
    /// When the difference was found (RFC 3339).
    pub time: String,
    /// Corrected (put back to the spec), Kept (more protective in AWS than in the spec, so left as
    /// it is), Restored or Recreated (the instance was deleted outside the operator), or Reported
    /// (driftPolicy Report).
    pub action: String,
    /// The fields, with what RDS had and what the spec says.
    #[serde(default)]
    pub fields: Vec<FieldDrift>,
}

/// One drifted field.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldDrift {
    /// Spec field name.
    pub field: String,
    /// Value found in RDS.
    pub observed: String,
    /// Value in the spec.
    pub desired: String,
}

/// Fields that differ (or change), in words: "dbInstanceClass: db.t3.micro -> db.t3.small; ...".
pub fn describe_fields(fields: impl IntoIterator<Item = FieldDrift>) -> String {
    (fields.into_iter())
        .map(|d| {
            format!(
                "{}: {} -> {}",
                d.field,
                or_none(&d.observed),
                or_none(&d.desired)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

/// Address and port of an RDS instance.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub address: String,
    pub port: i32,
}

/// A status condition: Kubernetes's own `meta/v1 Condition` (type, status, reason, message,
/// lastTransitionTime as a date-time, observedGeneration), so tools that read conditions find the
/// schema they expect.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// The connection Secret: standard keys host, port, username, password, dbname, engine and uri,
/// plus extra keys rendered from templates.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionSecretSpec {
    /// Name of the Secret, in the DBInstance's namespace. The operator owns it: it is written when
    /// the instance is available, kept up to date, restored when changed, and deleted with the
    /// DBInstance.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// Extra keys and their templates over the standard keys, e.g.
    /// `APP_DB_HOST: "{{ host }}"` or `JDBC_URL: "jdbc:mysql://{{ host }}:{{ port }}/{{ dbname }}"`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_keys: BTreeMap<String, String>,
}

/// A key in a Secret of the DBInstance's namespace.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyReference {
    /// Name of the Secret.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Key in the Secret.
    #[schemars(length(min = 1))]
    pub key: String,
    /// Namespace of the Secret. Only the DBInstance's own namespace is allowed; kept for manifests
    /// written for ACK, which carry it.
    pub namespace: Option<String>,
}

/// An IAM role of the database as RDS lists it, and whether the operator associated it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleStatus {
    #[serde(rename = "roleARN")]
    pub role_arn: String,
    pub feature_name: Option<String>,
    /// ACTIVE, PENDING or INVALID.
    pub status: Option<String>,
    /// The operator associated it for the spec, and removes it when the spec no longer lists it.
    pub managed: Option<bool>,
}
