//! The `OptionGroup` kind: the options of an engine (MariaDB's audit plugin, Oracle's and SQL
//! Server's features) for the DBInstances that refer to it (`optionGroupRef`). Made with
//! CreateOptionGroup, its options kept with ModifyOptionGroup (OptionsToInclude for those missing
//! or different, OptionsToRemove for those the operator set and the spec dropped), deleted with
//! the object once no DBInstance of the namespace refers to it. It runs on the group kinds'
//! skeleton (`managed::named`): read (`controller.rs`), plan (pure, `plan.rs` with its table
//! tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::crd::Tag;

/// An RDS option group.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "OptionGroup",
    plural = "optiongroups",
    shortname = "og",
    category = "rds",
    namespaced,
    status = "OptionGroupStatus",
    doc = "An AWS RDS option group managed by rds-operator.",
    printcolumn(name = "Engine", type_ = "string", json_path = ".spec.engineName"),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".spec.majorEngineVersion"
    ),
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
    validation = kube::core::Rule::new("has(self.optionGroupName) == has(oldSelf.optionGroupName) && (!has(self.optionGroupName) || self.optionGroupName == oldSelf.optionGroupName)").message("optionGroupName is immutable").field_path(".optionGroupName"),
    validation = kube::core::Rule::new("self.engineName == oldSelf.engineName").message("engineName is immutable").field_path(".engineName"),
    validation = kube::core::Rule::new("self.majorEngineVersion == oldSelf.majorEngineVersion").message("majorEngineVersion is immutable: make a group for the new version").field_path(".majorEngineVersion"),
    validation = kube::core::Rule::new("self.description == oldSelf.description").message("description is immutable: RDS cannot change it").field_path(".description"),
    validation = kube::core::Rule::new("!has(self.options) || self.options.all(o, self.options.exists_one(p, p.name == o.name))").message("each option is named once").field_path(".options"),
)]
#[serde(rename_all = "camelCase")]
pub struct OptionGroupSpec {
    /// Name of the group in RDS (a letter first, then letters, digits and hyphens); defaults to
    /// metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub option_group_name: Option<String>,
    /// The engine the group is for: mysql, mariadb, oracle-ee, sqlserver-se, ... Immutable.
    #[schemars(length(min = 1))]
    pub engine_name: String,
    /// The engine's major version, e.g. 8.0 or 10.11. Immutable.
    #[schemars(length(min = 1))]
    pub major_engine_version: String,
    /// What the group is for. Immutable.
    #[schemars(length(min = 1, max = 255))]
    pub description: String,
    /// The options of the group, each named once. One the operator set and removed from here is
    /// removed from the group (OptionsToRemove); RDS refuses that for a permanent or persistent
    /// option, and says so in the Synced condition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub options: Vec<OptionSpec>,
    /// Whether a change reaches the instances that use the group at once (true, the default) or
    /// in their next maintenance window.
    #[serde(default = "default_true")]
    pub apply_immediately: bool,
    /// Tags of the group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

fn default_true() -> bool {
    true
}

/// One option of the group, as RDS's OptionConfiguration takes it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct OptionSpec {
    /// The option's name, as DescribeOptionGroupOptions lists it (MARIADB_AUDIT_PLUGIN).
    #[schemars(length(min = 1, max = 255))]
    pub name: String,
    /// Settings of the option, by name (SERVER_AUDIT_EVENTS: CONNECT,QUERY). Only these are
    /// compared; the others keep RDS's defaults.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The port, for an option that listens on one.
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// The option's version, for an option that has versions.
    pub version: Option<String>,
    /// The VPC security groups of an option that listens on a port.
    #[serde(
        default,
        rename = "vpcSecurityGroupIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub vpc_security_group_ids: Vec<String>,
}

/// What the operator observed of the group.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct OptionGroupStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the group in RDS.
    pub option_group_name: Option<String>,
    /// ARN of the group.
    pub arn: Option<String>,
    /// The options the group has in RDS.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The options the operator set from spec.options: the only ones it removes when they leave
    /// the spec.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_options: Vec<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// One option as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedOption {
    /// Every setting RDS reports, by name (defaults included).
    pub settings: BTreeMap<String, String>,
    pub port: Option<i32>,
    pub version: Option<String>,
    pub vpc_security_group_ids: Vec<String>,
}

/// The group as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedOptionGroup {
    pub name: String,
    pub arn: Option<String>,
    pub engine_name: String,
    pub major_engine_version: String,
    pub options: BTreeMap<String, ObservedOption>,
    pub tags: BTreeMap<String, String>,
}

impl OptionGroup {
    /// The RDS name: spec.optionGroupName or metadata.name, lower-cased as RDS stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.option_group_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(OptionGroup, |s| s.arn.is_some());
