//! Which fields of an RDS cluster differ from the DBCluster's spec, and the ModifyDBCluster that
//! puts them right. Pure. Only fields the spec sets are compared; protective drift (deletion
//! protection turned on, a longer backup retention) is kept, as for instances.

use std::collections::BTreeSet;

use super::DBClusterSpec;
use super::observed::ObservedCluster;
use crate::database::version::{VersionChange, engine_version_change};

/// Exactly the fields a ModifyDBCluster sends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterModification {
    pub apply_immediately: bool,
    pub allow_major_version_upgrade: bool,
    pub engine_version: Option<String>,
    pub serverless_v2: Option<(f64, f64)>,
    pub port: Option<i32>,
    pub backup_retention_period: Option<i32>,
    pub preferred_backup_window: Option<String>,
    pub preferred_maintenance_window: Option<String>,
    pub vpc_security_group_ids: Option<Vec<String>>,
    pub db_cluster_parameter_group_name: Option<String>,
    pub iam_database_authentication: Option<bool>,
    /// Log types to enable, and to disable.
    pub logs_exports: Option<(Vec<String>, Vec<String>)>,
    pub deletion_protection: Option<bool>,
    pub copy_tags_to_snapshot: Option<bool>,
    /// Send the master password (a rotation).
    pub rotate_password: bool,
}

impl ClusterModification {
    /// The spec field names this modification carries.
    pub fn fields(&self) -> Vec<&'static str> {
        let set = [
            ("engineVersion", self.engine_version.is_some()),
            (
                "serverlessV2ScalingConfiguration",
                self.serverless_v2.is_some(),
            ),
            ("port", self.port.is_some()),
            (
                "backupRetentionPeriod",
                self.backup_retention_period.is_some(),
            ),
            (
                "preferredBackupWindow",
                self.preferred_backup_window.is_some(),
            ),
            (
                "preferredMaintenanceWindow",
                self.preferred_maintenance_window.is_some(),
            ),
            ("vpcSecurityGroupIDs", self.vpc_security_group_ids.is_some()),
            (
                "dbClusterParameterGroupName",
                self.db_cluster_parameter_group_name.is_some(),
            ),
            (
                "enableIAMDatabaseAuthentication",
                self.iam_database_authentication.is_some(),
            ),
            ("enableCloudwatchLogsExports", self.logs_exports.is_some()),
            ("deletionProtection", self.deletion_protection.is_some()),
            ("copyTagsToSnapshot", self.copy_tags_to_snapshot.is_some()),
            ("masterUserPassword", self.rotate_password),
        ];
        (set.into_iter())
            .filter(|(_, on)| *on)
            .map(|(f, _)| f)
            .collect()
    }

    /// Leaves a field (by its spec name) as RDS has it.
    pub fn leave(&mut self, field: &str) {
        match field {
            "engineVersion" => self.engine_version = None,
            "serverlessV2ScalingConfiguration" => self.serverless_v2 = None,
            "port" => self.port = None,
            "backupRetentionPeriod" => self.backup_retention_period = None,
            "preferredBackupWindow" => self.preferred_backup_window = None,
            "preferredMaintenanceWindow" => self.preferred_maintenance_window = None,
            "vpcSecurityGroupIDs" => self.vpc_security_group_ids = None,
            "dbClusterParameterGroupName" => self.db_cluster_parameter_group_name = None,
            "enableIAMDatabaseAuthentication" => self.iam_database_authentication = None,
            "enableCloudwatchLogsExports" => self.logs_exports = None,
            "deletionProtection" => self.deletion_protection = None,
            "copyTagsToSnapshot" => self.copy_tags_to_snapshot = None,
            "masterUserPassword" => self.rotate_password = false,
            _ => {}
        }
    }

    pub fn in_sync(&self) -> bool {
        self.fields().is_empty()
    }

    pub fn field_list(&self) -> String {
        self.fields().join(", ")
    }
}

/// What comparing the spec with RDS's cluster found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Comparison {
    pub modification: ClusterModification,
    /// Protective drift left as RDS has it, in words.
    pub kept: Option<String>,
    /// A change RDS cannot make (a downgrade, a major upgrade not allowed), in words.
    pub refused: Option<String>,
}

fn differs<T: PartialEq + Clone>(want: &Option<T>, have: &Option<T>) -> Option<T> {
    want.as_ref().filter(|w| Some(*w) != have.as_ref()).cloned()
}

fn differs_ignoring_case(want: &Option<String>, have: &Option<String>) -> Option<String> {
    let same = |w: &String| have.as_ref().is_some_and(|h| h.eq_ignore_ascii_case(w));
    want.as_ref().filter(|w| !same(w)).cloned()
}

/// An engine version upgrade the spec asks for, into `m`; Some: why it is refused.
fn engine_version(
    spec: &DBClusterSpec,
    o: &ObservedCluster,
    m: &mut ClusterModification,
) -> Option<String> {
    let (Some(want), Some(have)) = (&spec.engine_version, &o.engine_version) else {
        return None;
    };
    let engine = spec.engine.as_str();
    let allow_major = spec.maintenance.allow_major_version_upgrade == Some(true);
    let pending = o.pending_modified_values.get("engineVersion");
    match engine_version_change(engine, want, have, allow_major) {
        // Already asked for, waiting for the maintenance window: not sent again.
        VersionChange::Upgrade if pending == Some(want) => {}
        VersionChange::Upgrade => {
            m.engine_version = Some(want.clone());
            m.allow_major_version_upgrade = allow_major;
        }
        VersionChange::Refused(why) => return Some(why),
        VersionChange::None => {}
    }
    None
}

/// The log types to enable and disable, when the spec names them and they differ.
fn logs_exports(spec: &DBClusterSpec, o: &ObservedCluster) -> Option<(Vec<String>, Vec<String>)> {
    let want = spec.security.enable_cloudwatch_logs_exports.as_ref()?;
    let have = &o.enabled_cloudwatch_logs_exports;
    let enable: Vec<String> = (want.iter())
        .filter(|w| !have.contains(w))
        .cloned()
        .collect();
    let disable: Vec<String> = (have.iter())
        .filter(|h| !want.contains(h))
        .cloned()
        .collect();
    (!enable.is_empty() || !disable.is_empty()).then_some((enable, disable))
}

/// The spec against RDS's cluster. Protective drift is kept unless the spec was `edited` since
/// it was last in sync (then the spec's word is the user's).
pub fn compare(spec: &DBClusterSpec, o: &ObservedCluster, edited: bool) -> Comparison {
    let mut out = Comparison::default();
    let m = &mut out.modification;
    m.apply_immediately = spec.maintenance.apply_immediately.unwrap_or(true);
    out.refused = engine_version(spec, o, m);
    let scaling = (spec.serverless_v2_scaling_configuration.as_ref())
        .map(|s| (s.min_capacity, s.max_capacity));
    m.serverless_v2 = differs(&scaling, &o.serverless_v2);
    m.port = differs(&spec.network.port, &o.port);
    let mut kept = Vec::new();
    match (spec.backup_retention_period, o.backup_retention_period) {
        (Some(want), Some(have)) if have > want && !edited => kept.push(format!(
            "backupRetentionPeriod is {have} in RDS, longer than {want}"
        )),
        (want, have) => m.backup_retention_period = differs(&want, &have),
    }
    m.preferred_backup_window = differs_ignoring_case(
        &spec.backups.preferred_backup_window,
        &o.preferred_backup_window,
    );
    m.preferred_maintenance_window = differs_ignoring_case(
        &spec.maintenance.preferred_maintenance_window,
        &o.preferred_maintenance_window,
    );
    if let Some(want) = &spec.network.vpc_security_group_ids {
        let (w, h): (BTreeSet<_>, BTreeSet<_>) = (
            want.iter().collect(),
            o.vpc_security_group_ids.iter().collect(),
        );
        m.vpc_security_group_ids = (w != h).then(|| want.clone());
    }
    m.db_cluster_parameter_group_name = differs_ignoring_case(
        &spec.db_cluster_parameter_group_name,
        &o.db_cluster_parameter_group_name,
    );
    m.iam_database_authentication = differs(
        &spec.security.enable_iam_database_authentication,
        &o.iam_database_authentication_enabled,
    );
    m.logs_exports = logs_exports(spec, o);
    match (spec.deletion.deletion_protection, o.deletion_protection) {
        (None, Some(true)) | (Some(false), Some(true)) if !edited => {
            kept.push("deletionProtection is on in RDS".to_owned());
        }
        (want, have) => m.deletion_protection = differs(&want, &have),
    }
    m.copy_tags_to_snapshot = differs(
        &spec.backups.copy_tags_to_snapshot,
        &o.copy_tags_to_snapshot,
    );
    if !kept.is_empty() {
        out.kept = Some(format!(
            "{}: protection added outside the operator is kept",
            kept.join("; ")
        ));
    }
    out
}
