//! The `AWSAccount` kind, cluster-scoped: an AWS account the platform grants to namespaces. It says
//! how the operator reaches the account (source credentials, then a chain of roles, each with an
//! optional external ID and session tags), in which regions, and which namespaces may use it.
//! Read, plan (pure) and act as for every kind, on the shared skeleton.

pub mod controller;
pub mod credentials;
pub mod plan;

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelectorRequirement};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use crate::managed::crd::LocalRef;

/// An AWS account the operator may manage RDS resources in, for the namespaces it selects.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

/// The event queue of one region of the account.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventQueue {
    pub region: String,
    /// The queue's URL (https://sqs.REGION.amazonaws.com/ACCOUNT/NAME).
    #[serde(rename = "queueURL")]
    pub queue_url: String,
}

/// Where the source credentials come from.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceCredentials {
    /// A Secret in the operator's own namespace with the keys AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials). The Secret is
    /// read from the operator's namespace only, never from a tenant's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<LocalRef>,
}

/// One role of the chain.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssumeRole {
    /// ARN of the role (arn:aws:iam::ACCOUNT:role/NAME).
    #[serde(rename = "roleARN")]
    #[schemars(regex(pattern = r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$"))]
    pub role_arn: String,
    /// The external ID the role's trust policy requires (sts:ExternalId).
    #[serde(
        rename = "externalID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(length(min = 2, max = 1224))]
    pub external_id: Option<String>,
    /// The role session name (default: rds-operator), seen in CloudTrail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 64), regex(pattern = r"^[\w+=,.@-]+$"))]
    pub session_name: Option<String>,
    /// Session tags, for attribute-based access control in the role's policies.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub session_tags: BTreeMap<String, String>,
    /// The session tags passed on to the next role of the chain.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transitive_tag_keys: Vec<String>,
}

/// Namespaces by name and by labels.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSelector {
    /// Namespaces selected by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Namespaces selected by their labels, all of which must match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<String, String>,
    /// Namespaces selected by label expressions (In, NotIn, Exists, DoesNotExist), all of which
    /// must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

/// What the operator found of the account.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct AWSAccountStatus {
    /// Ready: the role chain can be assumed (STS GetCallerIdentity answered through it), or AWS's
    /// message why not. Synced: the last reconcile saw the spec. Stalled: only a spec change
    /// can help. An account being deleted while resources use it says InUse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,
    /// The metadata.generation the status was computed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The id of the account the chain reaches.
    #[serde(rename = "accountID", default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// The identity the operator has in it (the last role's assumed-role ARN).
    #[serde(rename = "callerARN", default, skip_serializing_if = "Option::is_none")]
    pub caller_arn: Option<String>,
    /// How many DBInstances, DBSubnetGroups and DBParameterGroups use the account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<i64>,
}

impl NamespaceSelector {
    /// Whether the namespace of this name and these labels is selected.
    pub fn selects(&self, name: &str, labels: &BTreeMap<String, String>) -> bool {
        if self.names.iter().any(|n| n == name) {
            return true;
        }
        if self.match_labels.is_empty() && self.match_expressions.is_empty() {
            return false;
        }
        let selector = k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
            match_labels: Some(self.match_labels.clone()),
            match_expressions: Some(self.match_expressions.clone()),
        };
        // A malformed expression selects nothing.
        use kube::core::SelectorExt;
        kube::core::Selector::try_from(selector).is_ok_and(|s| s.matches(labels))
    }
}

#[cfg(test)]
mod tests {
    use super::NamespaceSelector;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_namespace_is_selected_by_name_or_by_labels_and_an_empty_selector_selects_none() {
        let by_name = NamespaceSelector {
            names: vec!["team-a".into()],
            ..Default::default()
        };
        let by_labels = NamespaceSelector {
            match_labels: labels(&[("team", "a")]),
            ..Default::default()
        };
        let by_expression = NamespaceSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: "env".into(),
                operator: "In".into(),
                values: Some(vec!["prod".into(), "staging".into()]),
            }],
            ..Default::default()
        };
        let malformed = NamespaceSelector {
            match_expressions: vec![LabelSelectorRequirement {
                key: "env".into(),
                operator: "Near".into(),
                values: None,
            }],
            ..Default::default()
        };
        let rows = [
            (&by_name, "team-a", labels(&[]), true),
            (&by_name, "team-b", labels(&[("team", "a")]), false),
            (&by_labels, "team-b", labels(&[("team", "a")]), true),
            (&by_labels, "team-b", labels(&[("team", "b")]), false),
            (&by_expression, "x", labels(&[("env", "prod")]), true),
            (&by_expression, "x", labels(&[("env", "dev")]), false),
            (&malformed, "x", labels(&[("env", "prod")]), false),
            (&NamespaceSelector::default(), "team-a", labels(&[]), false),
        ];
        for (selector, name, labels, selected) in rows {
            assert_eq!(
                selector.selects(name, &labels),
                selected,
                "{selector:?} {name} {labels:?}"
            );
        }
    }
}
