//! The `DBSubnetGroup` kind: the subnets an RDS instance may live in. Read, plan (pure), act and
//! report as for DBInstance, each in its own file here; what every kind shares is in `managed.rs`.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;

/// An RDS DB subnet group.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBSubnetGroup",
    plural = "dbsubnetgroups",
    shortname = "dbsng",
    category = "rds",
    namespaced,
    status = "DBSubnetGroupStatus",
    doc = "An AWS RDS DB subnet group managed by rds-operator.",
    printcolumn(name = "VPC", type_ = "string", json_path = ".status.vpcID"),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
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
    validation = kube::core::Rule::new("has(self.dbSubnetGroupName) == has(oldSelf.dbSubnetGroupName) && (!has(self.dbSubnetGroupName) || self.dbSubnetGroupName == oldSelf.dbSubnetGroupName)").message("dbSubnetGroupName is immutable").field_path(".dbSubnetGroupName"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBSubnetGroupSpec {
    /// Name of the group in RDS (letters, digits, periods, underscores, spaces, hyphens); defaults
    /// to metadata.name. Immutable.
    #[schemars(length(min = 1, max = 255), regex(pattern = r"^[a-zA-Z0-9._ -]+$"))]
    pub db_subnet_group_name: Option<String>,
    /// What the group is for.
    #[serde(rename = "dbSubnetGroupDescription")]
    #[schemars(length(min = 1, max = 255))]
    pub description: String,
    /// The VPC subnets, in at least two Availability Zones.
    #[serde(rename = "subnetIDs")]
    #[schemars(length(min = 1, max = 20))]
    pub subnet_ids: Vec<String>,
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
pub struct DBSubnetGroupStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the group in RDS.
    pub db_subnet_group_name: Option<String>,
    /// ARN of the group.
    pub arn: Option<String>,
    /// The VPC of its subnets.
    #[serde(default, rename = "vpcID", skip_serializing_if = "Option::is_none")]
    pub vpc_id: Option<String>,
    /// The group's state as RDS reports it (Complete...).
    pub state: Option<String>,
    /// The subnets, with their Availability Zones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subnets: Vec<SubnetStatus>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// One subnet of the group.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubnetStatus {
    #[serde(rename = "subnetID")]
    pub subnet_id: String,
    pub availability_zone: String,
    pub status: String,
}

/// The group as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedSubnetGroup {
    pub name: String,
    pub arn: Option<String>,
    pub description: String,
    pub vpc_id: Option<String>,
    pub state: String,
    pub subnets: Vec<SubnetStatus>,
    pub tags: BTreeMap<String, String>,
}

impl DBSubnetGroup {
    /// The RDS name: spec.dbSubnetGroupName or metadata.name, lower-cased as RDS stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_subnet_group_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBSubnetGroup, |s| s.arn.is_some());
