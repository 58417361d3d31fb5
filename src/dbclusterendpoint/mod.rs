//! The `DBClusterEndpoint` kind: a custom endpoint of an Aurora cluster (CreateDBClusterEndpoint),
//! READER or ANY, over the members it names (`staticMembers`) or all but those it excludes
//! (`excludedMembers`), given as DBInstances of the namespace; kept in sync with
//! ModifyDBClusterEndpoint, deleted with the object, and with a connection Secret of its own (the
//! endpoint, the cluster's credentials). It runs on the group kinds' skeleton (`managed::named`):
//! read (`controller.rs`), plan (pure, `plan.rs` with its table tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::{LocalRef, Tag};
use crate::sensitive::Sensitive;

/// A custom endpoint of an Aurora DB cluster.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBClusterEndpoint",
    plural = "dbclusterendpoints",
    shortname = "dbce",
    category = "rds",
    namespaced,
    status = "DBClusterEndpointStatus",
    doc = "A custom endpoint of an Amazon Aurora DB cluster managed by rds-operator.",
    printcolumn(name = "Type", type_ = "string", json_path = ".spec.endpointType"),
    printcolumn(name = "State", type_ = "string", json_path = ".status.state"),
    printcolumn(name = "Endpoint", type_ = "string", json_path = ".status.endpoint"),
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
    validation = kube::core::Rule::new("has(self.dbClusterEndpointIdentifier) == has(oldSelf.dbClusterEndpointIdentifier) && (!has(self.dbClusterEndpointIdentifier) || self.dbClusterEndpointIdentifier == oldSelf.dbClusterEndpointIdentifier)").message("dbClusterEndpointIdentifier is immutable").field_path(".dbClusterEndpointIdentifier"),
    validation = kube::core::Rule::new("self.dbClusterRef == oldSelf.dbClusterRef").message("dbClusterRef is immutable: an endpoint belongs to one cluster").field_path(".dbClusterRef"),
    validation = kube::core::Rule::new("!has(self.staticMembers) || !has(self.excludedMembers) || size(self.staticMembers) == 0 || size(self.excludedMembers) == 0").message("set either staticMembers (only these) or excludedMembers (all but these), not both"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterEndpointSpec {
    /// Name of the endpoint in RDS (a letter first, then letters, digits and hyphens); defaults to
    /// metadata.name. Immutable.
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$"))]
    pub db_cluster_endpoint_identifier: Option<String>,
    /// The DBCluster of this namespace the endpoint belongs to; waited for until Ready. Immutable.
    pub db_cluster_ref: LocalRef,
    /// READER (only the cluster's readers among its members) or ANY (readers and the writer).
    pub endpoint_type: EndpointType,
    /// Only these member DBInstances of the namespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_members: Vec<LocalRef>,
    /// Every eligible member but these DBInstances of the namespace (members added later too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_members: Vec<LocalRef>,
    /// Tags of the endpoint, besides the ownership tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// The Secret to write the endpoint and the cluster's credentials to, with the usual keys
    /// (host, port, username, password, dbname, engine, uri) and extraKeys.
    pub connection_secret: Option<crate::database::parts::ConnectionSecretSpec>,
    /// Where its calls go: the cluster's AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// Which members a custom endpoint may reach.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum EndpointType {
    #[default]
    Reader,
    Any,
}

impl EndpointType {
    pub fn as_str(&self) -> &'static str {
        match self {
            EndpointType::Reader => "READER",
            EndpointType::Any => "ANY",
        }
    }
}

/// What the operator observed of the endpoint.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBClusterEndpointStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the endpoint in RDS.
    pub db_cluster_endpoint_identifier: Option<String>,
    pub arn: Option<String>,
    /// Its state as RDS reports it (creating, available, modifying, deleting).
    pub state: Option<String>,
    /// The endpoint's address.
    pub endpoint: Option<String>,
    /// The cluster's RDS identifier.
    pub db_cluster_identifier: Option<String>,
    /// The static and excluded members as RDS lists them (RDS identifiers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_members: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_members: Vec<String>,
    /// Name of the connection Secret last written.
    pub connection_secret: Option<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region its calls go to, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// The endpoint as DescribeDBClusterEndpoints shows it, with its tags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedClusterEndpoint {
    pub name: String,
    pub arn: Option<String>,
    pub cluster: String,
    pub status: String,
    pub endpoint: Option<String>,
    pub endpoint_type: Option<String>,
    pub static_members: Vec<String>,
    pub excluded_members: Vec<String>,
    pub tags: BTreeMap<String, String>,
}

/// The cluster the endpoint belongs to, once its DBCluster is Ready: what the endpoint and its
/// Secret need of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cluster {
    pub identifier: String,
    pub port: i32,
    pub username: String,
    pub dbname: String,
    pub engine: String,
    /// The cluster's instances, as its DBCluster's status last listed them.
    pub members: Vec<crate::dbcluster::ClusterMember>,
}

/// The RDS identifiers of the static and the excluded members.
pub type Members = (Vec<String>, Vec<String>);

/// What the read step found besides the endpoint (nothing at deletion). Not Debug-printed with
/// its password: `Sensitive` prints redacted.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    /// The DBCluster, or why it cannot be used yet (None: not read).
    pub cluster: Option<Result<Cluster, String>>,
    /// The RDS identifiers of staticMembers and excludedMembers, or why one cannot be used yet.
    pub members: Option<Result<Members, String>>,
    /// The cluster's master password, for the Secret (None: unknown or not asked).
    pub password: Option<Sensitive>,
    /// The connection Secret as it is now.
    pub secret: Option<Secret>,
}

impl DBClusterEndpoint {
    /// The RDS identifier: spec.dbClusterEndpointIdentifier or metadata.name, lower-cased.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_cluster_endpoint_identifier.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(DBClusterEndpoint, |s| s.arn.is_some());
