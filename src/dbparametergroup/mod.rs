//! The `DBParameterGroup` kind: an engine's settings for the instances that use it. Its plan
//! (`plan.rs`) decides which parameters to set or reset and how RDS applies each one, from RDS's own
//! catalog of the family (DescribeEngineDefaultParameters), never from a list kept here.

pub mod aws;
pub mod catalog;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;
use crate::managed::named::NamedKind;

/// An RDS DB parameter group.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBParameterGroup",
    plural = "dbparametergroups",
    shortname = "dbpg",
    category = "rds",
    namespaced,
    status = "DBParameterGroupStatus",
    doc = "An AWS RDS DB parameter group managed by rds-operator.",
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
    validation = kube::core::Rule::new("has(self.dbParameterGroupName) == has(oldSelf.dbParameterGroupName) && (!has(self.dbParameterGroupName) || self.dbParameterGroupName == oldSelf.dbParameterGroupName)").message("dbParameterGroupName is immutable").field_path(".dbParameterGroupName"),
    validation = kube::core::Rule::new("self.family == oldSelf.family").message("family is immutable").field_path(".family"),
    validation = kube::core::Rule::new("self.description == oldSelf.description").message("description is immutable: RDS cannot change it").field_path(".description"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBParameterGroupSpec {
    /// Name of the group in RDS (letters, digits, hyphens); defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub db_parameter_group_name: Option<String>,
    /// The parameter group family, e.g. mysql8.0 or postgres17. Immutable.
    #[schemars(length(min = 1))]
    pub family: String,
    /// What the group is for. Immutable.
    #[schemars(length(min = 1, max = 255))]
    pub description: String,
    /// Parameters and their values. Each is applied as RDS's catalog of the family says: at once
    /// for a dynamic parameter, at the next reboot for a static one. A parameter removed from here
    /// is reset to the engine default.
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
pub struct DBParameterGroupStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the group in RDS.
    pub db_parameter_group_name: Option<String>,
    /// ARN of the group.
    pub arn: Option<String>,
    /// The parameters the operator set from spec.parameters: the only ones it resets when they
    /// leave the spec.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_parameters: Vec<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// The group as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedParameterGroup {
    pub name: String,
    pub arn: Option<String>,
    pub family: String,
    /// The parameters set in the group (source user), by name.
    pub parameters: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
}

pub use crate::rds_state::{Catalog, ParameterInfo};

/// What the plan of a parameter group reports besides its conditions: the same for both kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fields {
    pub name: String,
    pub arn: Option<String>,
    pub applied_parameters: Vec<String>,
    pub applied_tag_keys: Vec<String>,
}

/// A kind of parameter group: DB (`DBParameterGroup`) or DB cluster (`DBClusterParameterGroup`).
/// Both are planned by the same rules (`plan.rs`) over their family's catalog.
pub trait ParameterGroupKind:
    NamedKind<Observed = ObservedParameterGroup, Extra = std::sync::Arc<Catalog>, Own = plan::Own>
{
    fn family(&self) -> &str;
    fn description(&self) -> &str;
    fn parameters(&self) -> &BTreeMap<String, String>;
    fn applied_parameters(status: &Self::Status) -> &[String];
    /// The kind's status with these fields (conditions are the skeleton's).
    fn status_of(fields: Fields) -> Self::Status;
}

impl ParameterGroupKind for DBParameterGroup {
    fn family(&self) -> &str {
        &self.spec.family
    }
    fn description(&self) -> &str {
        &self.spec.description
    }
    fn parameters(&self) -> &BTreeMap<String, String> {
        &self.spec.parameters
    }
    fn applied_parameters(status: &DBParameterGroupStatus) -> &[String] {
        &status.applied_parameters
    }
    fn status_of(f: Fields) -> DBParameterGroupStatus {
        DBParameterGroupStatus {
            db_parameter_group_name: Some(f.name),
            arn: f.arn,
            applied_parameters: f.applied_parameters,
            applied_tag_keys: f.applied_tag_keys,
            ..Default::default()
        }
    }
}

impl DBParameterGroup {
    /// The RDS name: spec.dbParameterGroupName or metadata.name, lower-cased as RDS stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_parameter_group_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBParameterGroup, |s| s.arn.is_some());
