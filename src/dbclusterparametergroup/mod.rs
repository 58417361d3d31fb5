//! The `DBClusterParameterGroup` kind: an Aurora engine's cluster-level settings, for the
//! DBClusters that use it. It is planned by the DBParameterGroup's rules (`dbparametergroup::plan`:
//! each parameter applied as RDS's catalog of the family says, DescribeEngineDefaultClusterParameters
//! here, 20 to a call, resets of what leaves the spec); a static change leaves the members of its
//! clusters pending a reboot, which each DBCluster's pendingRebootPolicy handles.

pub mod aws;
pub mod controller;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;
use crate::dbparametergroup::{Fields, ParameterGroupKind};

/// An RDS DB cluster parameter group.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBClusterParameterGroup",
    plural = "dbclusterparametergroups",
    shortname = "dbcpg",
    category = "rds",
    namespaced,
    status = "DBClusterParameterGroupStatus",
    doc = "An Amazon Aurora DB cluster parameter group managed by rds-operator.",
    printcolumn(name = "Family", type_ = "string", json_path = ".spec.family"),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(
    validation = kube::core::Rule::new("has(self.dbClusterParameterGroupName) == has(oldSelf.dbClusterParameterGroupName) && (!has(self.dbClusterParameterGroupName) || self.dbClusterParameterGroupName == oldSelf.dbClusterParameterGroupName)").message("dbClusterParameterGroupName is immutable").field_path(".dbClusterParameterGroupName"),
    validation = kube::core::Rule::new("self.family == oldSelf.family").message("family is immutable").field_path(".family"),
    validation = kube::core::Rule::new("self.description == oldSelf.description").message("description is immutable: RDS cannot change it").field_path(".description"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterParameterGroupSpec {
    /// Name of the group in RDS (letters, digits, hyphens); defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub db_cluster_parameter_group_name: Option<String>,
    /// The family, e.g. aurora-mysql8.0 or aurora-postgresql16. Immutable.
    #[schemars(length(min = 1))]
    pub family: String,
    /// What the group is for. Immutable.
    #[schemars(length(min = 1, max = 255))]
    pub description: String,
    /// Parameters and their values, each applied as RDS's catalog of the family says: at once for
    /// a dynamic parameter, at the members' next reboot for a static one. A parameter removed
    /// from here is reset to the engine default.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// Tags of the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// What the operator observed of the group.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterParameterGroupStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the group in RDS.
    pub db_cluster_parameter_group_name: Option<String>,
    /// ARN of the group.
    pub arn: Option<String>,
    /// The parameters the operator set from spec.parameters: the only ones it resets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_parameters: Vec<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the group lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

impl DBClusterParameterGroup {
    /// The RDS name: spec.dbClusterParameterGroupName or metadata.name, in lower case.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_cluster_parameter_group_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

impl ParameterGroupKind for DBClusterParameterGroup {
    fn family(&self) -> &str {
        &self.spec.family
    }
    fn description(&self) -> &str {
        &self.spec.description
    }
    fn parameters(&self) -> &BTreeMap<String, String> {
        &self.spec.parameters
    }
    fn applied_parameters(status: &DBClusterParameterGroupStatus) -> &[String] {
        &status.applied_parameters
    }
    fn status_of(f: Fields) -> DBClusterParameterGroupStatus {
        DBClusterParameterGroupStatus {
            db_cluster_parameter_group_name: Some(f.name),
            arn: f.arn,
            applied_parameters: f.applied_parameters,
            applied_tag_keys: f.applied_tag_keys,
            ..Default::default()
        }
    }
}

crate::placed!(DBClusterParameterGroup, |s| s.arn.is_some());
