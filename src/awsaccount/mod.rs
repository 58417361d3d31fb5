//! The `AWSAccount` kind, cluster-scoped: an AWS account the platform grants to namespaces. It says
//! how the operator reaches the account (source credentials, then a chain of roles, each with an
//! optional external ID and session tags), in which regions, and which namespaces may use it.
//! Read, plan (pure) and act as for every kind, on the shared skeleton.

pub mod controller;
pub mod directory;
pub mod plan;

use kube::{CustomResource, KubeSchema, ResourceExt};
use serde::{Deserialize, Serialize};

use crate::accounts::{Account, Reach};
pub use crate::accounts::{AssumeRole, EventQueue, NamespaceSelector, SourceCredentials};

/// An AWS account the operator may manage RDS resources in, for the namespaces it selects.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "AWSAccount",
    plural = "awsaccounts",
    shortname = "awsacct",
    category = "rds",
    status = "AWSAccountStatus",
    doc = "An AWS account that rds-operator reaches by assuming roles, and the namespaces it is granted to.",
    printcolumn(name = "Account", type_ = "string", json_path = ".status.accountID"),
    printcolumn(name = "Users", type_ = "integer", json_path = ".status.resources"),
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
#[serde(rename_all = "camelCase")]
pub struct AWSAccountSpec {
    /// The credentials the first role is assumed with (or used as they are, with no role). Default:
    /// the operator's own (IRSA, EKS Pod Identity, environment, instance profile).
    pub source_credentials: Option<SourceCredentials>,
    /// The roles to assume, in order: each with the credentials of the one before it. The last
    /// role's account is the account RDS resources are managed in. Empty: the source credentials'
    /// own account.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 5))]
    pub assume_role_chain: Vec<AssumeRole>,
    /// The regions resources may be placed in with this account (spec.region of a DBInstance, a
    /// DBSubnetGroup or a DBParameterGroup).
    #[schemars(length(min = 1, max = 40))]
    pub regions: Vec<String>,
    /// The event feed of the account (docs/events.md), per region: an SQS queue in the account
    /// that EventBridge sends RDS's events to. With one, drift in that region is found within
    /// seconds, and the region's shared poll becomes a safety net.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_queues: Vec<EventQueue>,
    /// The namespaces whose resources may use this account: those named, and those whose labels
    /// match. A namespace selected by neither is refused (AccountNotGranted) and no AWS call is
    /// made for it. Empty: no namespace.
    #[serde(default)]
    pub namespace_selector: NamespaceSelector,
}

/// What the operator found of the account.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AWSAccountStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// The id of the account the chain reaches.
    #[serde(rename = "accountID", default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// The identity the operator has in it (the last role's assumed-role ARN).
    #[serde(rename = "callerARN", default, skip_serializing_if = "Option::is_none")]
    pub caller_arn: Option<String>,
    /// How many DBInstances, DBSubnetGroups and DBParameterGroups use the account.
    pub resources: Option<i64>,
}

impl AWSAccount {
    /// The account as placement and the locations read it.
    pub fn account(&self) -> Account {
        let spec = &self.spec;
        let secret = (spec.source_credentials.as_ref()).and_then(|s| s.secret_ref.as_ref());
        Account {
            name: self.name_any(),
            uid: self.uid().unwrap_or_default(),
            generation: self.metadata.generation.unwrap_or_default(),
            regions: spec.regions.clone(),
            namespace_selector: spec.namespace_selector.clone(),
            reach: Reach {
                source_secret: secret.map(|r| r.name.clone()),
                assume_role_chain: spec.assume_role_chain.clone(),
                event_queues: spec.event_queues.clone(),
            },
        }
    }
}
