//! AWS accounts as the plumbing reaches them: how an account is reached ([`Reach`]: the Secret of
//! its source credentials, its chain of roles in [`credentials`], its event queues), its regions
//! and the namespaces it is granted to ([`Account`]), and the directory of accounts by name
//! ([`Accounts`]). The AWSAccount kind fills them from its objects; nothing here names it. The CRD
//! parts the AWSAccount spec is made of are here too: doc comments become `kubectl explain` text.

pub mod credentials;

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::crd::LocalRef;

/// An AWS account as placement and the locations read it: its name, uid and generation (the key
/// its credentials are cached by), the regions it allows, the namespaces it is granted to, and how
/// it is reached.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Account {
    pub name: String,
    pub uid: String,
    pub generation: i64,
    pub regions: Vec<String>,
    pub namespace_selector: NamespaceSelector,
    pub reach: Reach,
}

impl Account {
    /// The AWS account ID its chain of roles ends in (of the last role's ARN); None for the
    /// operator's own credentials, with no role.
    pub fn account_id(&self) -> Option<&str> {
        let role = self.reach.assume_role_chain.last()?;
        role.role_arn.split(':').nth(4)
    }
}

/// How an account is reached: the Secret of its source credentials in the operator's namespace
/// (None: the operator's own), its chain of roles, and its event queues.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reach {
    pub source_secret: Option<String>,
    pub assume_role_chain: Vec<AssumeRole>,
    pub event_queues: Vec<EventQueue>,
}

/// The accounts by name, as a watch of them caches them.
pub trait Accounts: Send + Sync {
    /// The account of this name (None: there is none).
    fn get(&self, name: &str) -> Option<Account>;
    /// Every account.
    fn all(&self) -> Vec<Account>;
    /// Whether the watch has listed them (waits for its first list; false: it never will).
    fn ready(&self) -> BoxFuture<'_, bool>;
    /// The names of the accounts that change, as they change.
    fn changes(&self) -> BoxStream<'static, String>;
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
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceCredentials {
    /// A Secret in the operator's own namespace with the keys AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials). The Secret is
    /// read from the operator's namespace only, never from a tenant's.
    pub secret_ref: Option<LocalRef>,
}

/// One role of the chain.
#[serde_with::skip_serializing_none]
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
