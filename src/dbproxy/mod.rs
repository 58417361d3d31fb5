//! The `DBProxy` kind: an RDS Proxy with its default target group and its targets in one object,
//! as a user thinks of it. CreateDBProxy once its targets resolve; its settings kept with
//! ModifyDBProxy and its pool with ModifyDBProxyTargetGroup; its targets (DBInstances or a
//! DBCluster of the namespace) registered and deregistered as the spec lists them, their health
//! in status; the Secrets Manager secret it authenticates with kept in sync with the target's
//! password (created, rewritten when it rotates, deleted with the proxy); a connection Secret of
//! its own (the proxy's endpoint, the target's credentials). Deleting it deletes the proxy and
//! its secret; the targets stay. It runs on the group kinds' skeleton (`managed::named`): read
//! (`controller.rs`), plan (pure, `plan.rs` with its table tests), act (`aws.rs`), report.

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

/// An RDS Proxy and its targets.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "DBProxy",
    plural = "dbproxies",
    shortname = "dbpx",
    category = "rds",
    namespaced,
    status = "DBProxyStatus",
    doc = "An Amazon RDS Proxy and its targets, managed by rds-operator.",
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
    validation = kube::core::Rule::new("has(self.dbProxyName) == has(oldSelf.dbProxyName) && (!has(self.dbProxyName) || self.dbProxyName == oldSelf.dbProxyName)").message("dbProxyName is immutable").field_path(".dbProxyName"),
    validation = kube::core::Rule::new("self.engineFamily == oldSelf.engineFamily").message("engineFamily is immutable").field_path(".engineFamily"),
    validation = kube::core::Rule::new("self.vpcSubnetIDs == oldSelf.vpcSubnetIDs").message("vpcSubnetIDs is immutable: RDS cannot move a proxy").field_path(".vpcSubnetIDs"),
    validation = kube::core::Rule::new("self.targets.all(t, has(t.dbInstanceRef) != has(t.dbClusterRef))").message("each target is a dbInstanceRef or a dbClusterRef").field_path(".targets"),
    validation = kube::core::Rule::new("!has(self.endpoints) || self.endpoints.all(e, self.endpoints.exists_one(o, o.name == e.name))").message("each endpoint is named once").field_path(".endpoints"),
    validation = kube::core::Rule::new("!self.targets.exists(t, has(t.dbClusterRef)) || size(self.targets) == 1").message("a proxy's targets are DB instances, or one DB cluster").field_path(".targets"),
)]
#[serde(rename_all = "camelCase")]
pub struct DBProxySpec {
    /// Name of the proxy in RDS (a letter first, then letters, digits and hyphens); defaults to
    /// metadata.name. Immutable.
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$"))]
    pub db_proxy_name: Option<String>,
    /// MYSQL, POSTGRESQL or SQLSERVER: the engines of its targets. Immutable.
    pub engine_family: EngineFamily,
    /// Its targets: DBInstances of this namespace, or one DBCluster, each waited for until Ready.
    /// One removed from the list is deregistered; the databases themselves are never touched.
    #[schemars(length(min = 1, max = 20))]
    pub targets: Vec<ProxyTarget>,
    /// How clients authenticate.
    #[serde(default)]
    pub auth: ProxyAuth,
    /// Refuse connections without TLS.
    #[serde(default, rename = "requireTLS")]
    pub require_tls: bool,
    /// Seconds a client connection may idle before the proxy closes it (RDS's default: 1800).
    #[schemars(range(min = 1, max = 28800))]
    pub idle_client_timeout: Option<i32>,
    /// The pool of database connections the proxy keeps (ModifyDBProxyTargetGroup).
    pub connection_pool: Option<ConnectionPool>,
    /// The subnets the proxy runs in (at least two Availability Zones). Immutable.
    #[serde(rename = "vpcSubnetIDs")]
    #[schemars(length(min = 2))]
    pub vpc_subnet_ids: Vec<String>,
    /// Its security groups.
    #[serde(
        default,
        rename = "vpcSecurityGroupIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub vpc_security_group_ids: Vec<String>,
    /// The IAM role the proxy reads its Secrets Manager secret with.
    #[serde(rename = "roleARN")]
    #[schemars(length(min = 1))]
    pub role_arn: String,
    /// Endpoints besides the proxy's default one: READ_WRITE, or READ_ONLY (the readers of an
    /// Aurora cluster target), each with a connection Secret of its own if named. One the operator
    /// made and the spec dropped is deleted; an endpoint's role cannot change (RDS cannot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub endpoints: Vec<ProxyEndpointSpec>,
    /// Tags of the proxy, besides the ownership tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// The Secret to write the proxy's endpoint and the target's credentials to, with the usual
    /// keys (host, port, username, password, dbname, engine, uri) and extraKeys: the Coffee Manage
    /// Deployment switches to the proxy by naming this Secret instead of the instance's.
    pub connection_secret: Option<crate::database::parts::ConnectionSecretSpec>,
    /// Where its calls go: its AWSAccount and region (its targets').
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// The engine family of a proxy.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum EngineFamily {
    #[default]
    Mysql,
    Postgresql,
    Sqlserver,
}

impl EngineFamily {
    /// The family of an engine (None: one no proxy takes); API_CreateDBProxy.html, EngineFamily.
    pub fn of(engine: &str) -> Option<EngineFamily> {
        match engine {
            "mysql" | "mariadb" | "aurora-mysql" => Some(EngineFamily::Mysql),
            "postgres" | "aurora-postgresql" => Some(EngineFamily::Postgresql),
            e if e.starts_with("sqlserver") => Some(EngineFamily::Sqlserver),
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            EngineFamily::Mysql => "MYSQL",
            EngineFamily::Postgresql => "POSTGRESQL",
            EngineFamily::Sqlserver => "SQLSERVER",
        }
    }
}

/// One target: a DBInstance or a DBCluster of the namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyTarget {
    #[serde(
        default,
        rename = "dbInstanceRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_instance_ref: Option<LocalRef>,
    #[serde(
        default,
        rename = "dbClusterRef",
        skip_serializing_if = "Option::is_none"
    )]
    pub db_cluster_ref: Option<LocalRef>,
}

/// An endpoint of the proxy besides its default one (CreateDBProxyEndpoint).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyEndpointSpec {
    /// Its name in RDS (a letter first, then letters, digits and hyphens).
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$"))]
    pub name: String,
    /// READ_WRITE (the writer) or READ_ONLY (the readers of an Aurora cluster target).
    #[serde(default)]
    pub target_role: TargetRole,
    /// Its subnets; the proxy's by default.
    #[serde(
        default,
        rename = "vpcSubnetIDs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub vpc_subnet_ids: Vec<String>,
    /// The Secret to write this endpoint and the target's credentials to.
    pub connection_secret: Option<crate::database::parts::ConnectionSecretSpec>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TargetRole {
    #[default]
    ReadWrite,
    ReadOnly,
}

impl TargetRole {
    pub fn as_str(&self) -> &'static str {
        match self {
            TargetRole::ReadWrite => "READ_WRITE",
            TargetRole::ReadOnly => "READ_ONLY",
        }
    }
}

/// An endpoint of the proxy as RDS reports it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyEndpoint {
    pub name: String,
    pub target_role: Option<String>,
    /// creating, available, modifying, deleting...
    pub state: Option<String>,
    pub endpoint: Option<String>,
}

/// How clients authenticate to the proxy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProxyAuth {
    /// DISABLED (default: the database password, checked against the Secrets Manager secret) or
    /// REQUIRED (IAM authentication).
    #[serde(default, rename = "iamAuth")]
    pub iam_auth: IamAuth,
    /// An existing Secrets Manager secret to use (the target's RDS-managed master user secret, for
    /// one): the operator then keeps none of its own. Without it, the operator keeps a secret
    /// `rds-operator/<namespace>/<name>` holding the first target's username and password,
    /// rewritten when that password changes and deleted with the proxy.
    #[serde(default, rename = "secretARN", skip_serializing_if = "Option::is_none")]
    pub secret_arn: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum IamAuth {
    #[default]
    Disabled,
    Required,
}

/// The target group's connection pool.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionPool {
    /// The most connections, as a percentage of the target's max_connections.
    #[schemars(range(min = 1, max = 100))]
    pub max_connections_percent: Option<i32>,
    /// The most idle connections, as a percentage of the target's max_connections.
    #[schemars(range(min = 0, max = 100))]
    pub max_idle_connections_percent: Option<i32>,
    /// Seconds a client waits for a connection from the pool.
    #[schemars(range(min = 1, max = 3600))]
    pub connection_borrow_timeout: Option<i32>,
}

/// What the operator observed of the proxy.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct DBProxyStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the proxy in RDS.
    pub db_proxy_name: Option<String>,
    pub arn: Option<String>,
    /// Its state as RDS reports it (creating, available, modifying, deleting...).
    pub state: Option<String>,
    /// The proxy's default (read/write) endpoint.
    pub endpoint: Option<String>,
    /// Its endpoints besides the default one, as DescribeDBProxyEndpoints reports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<ProxyEndpoint>,
    /// The endpoints the operator made from spec.endpoints: the only ones it deletes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_endpoints: Vec<String>,
    /// Each registered target and its health, as DescribeDBProxyTargets reports it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetHealth>,
    /// The Secrets Manager secret the operator keeps for the proxy.
    #[serde(
        default,
        rename = "authSecretARN",
        skip_serializing_if = "Option::is_none"
    )]
    pub auth_secret_arn: Option<String>,
    /// Name of the connection Secret last written.
    pub connection_secret: Option<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region its calls go to, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// A registered target, as DescribeDBProxyTargets reports it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetHealth {
    /// The DB instance or cluster's RDS identifier.
    pub identifier: String,
    /// RDS_INSTANCE, TRACKED_CLUSTER or RDS_SERVERLESS_ENDPOINT.
    pub r#type: Option<String>,
    /// REGISTERING, AVAILABLE or UNAVAILABLE.
    pub state: Option<String>,
    /// Why it is unavailable (AUTH_FAILURE, CONNECTION_FAILED, ...), and RDS's words.
    pub reason: Option<String>,
    pub description: Option<String>,
}

/// The proxy as RDS reports it, with its tags, targets and pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedProxy {
    pub name: String,
    pub arn: Option<String>,
    pub status: String,
    pub endpoint: Option<String>,
    pub require_tls: bool,
    pub idle_client_timeout: Option<i32>,
    pub role_arn: Option<String>,
    pub security_groups: Vec<String>,
    /// The secrets of its auth, with their IAM setting.
    pub auth: Vec<(String, String)>,
    pub tags: BTreeMap<String, String>,
    pub targets: Vec<TargetHealth>,
    pub pool: ConnectionPool,
    pub endpoints: Vec<ProxyEndpoint>,
}

/// A target, resolved: its RDS identifier, and whether it is a cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resolved {
    pub identifier: String,
    pub cluster: bool,
    /// Its engine, as its DBInstance or DBCluster says (empty: not known, a target RDS lists).
    pub engine: String,
}

/// The credentials the proxy passes on: those of its first target.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    pub username: String,
    pub password: Option<Sensitive>,
    pub dbname: String,
    pub port: i32,
    pub engine: String,
}

/// What the read step found besides the proxy (nothing at deletion). Not Debug-printed with its
/// password: `Sensitive` prints redacted.
#[derive(Clone, Debug, Default)]
pub struct Reads {
    /// The targets, or why one cannot be used yet (None: not read).
    pub targets: Option<Result<Vec<Resolved>, String>>,
    pub credentials: Option<Credentials>,
    /// The operator's Secrets Manager secret of the proxy, read now (GetSecretValue): its ARN, and
    /// whether it holds the credentials' username and password. None: it has none (or the spec
    /// names its own).
    pub auth_secret: Option<(String, bool)>,
    /// The connection Secret as it is now.
    pub secret: Option<Secret>,
    /// The endpoints' connection Secrets as they are now, by endpoint name.
    pub endpoint_secrets: BTreeMap<String, Secret>,
    /// The namespaces the operator's --grant-roles lists (`managed::roles`): roleARN is held to
    /// the namespace's roles as exportTo.iamRole and restoreFrom.s3's are.
    pub role_grants: Vec<String>,
}

impl DBProxy {
    /// The RDS name: spec.dbProxyName or metadata.name, lower-cased.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.db_proxy_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }

    /// The name of the Secrets Manager secret the operator keeps for it.
    pub fn auth_secret_name(&self) -> String {
        let namespace = self.metadata.namespace.as_deref().unwrap_or_default();
        format!("rds-operator/{namespace}/{}", self.name_in_rds())
    }
}

crate::placed!(DBProxy, |s| s.arn.is_some());
