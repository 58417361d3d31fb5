//! The `EventSubscription` kind: RDS event notifications (USER_Events.html) of objects of the
//! namespace, sent to an SNS topic. Made with CreateEventSubscription, kept with
//! ModifyEventSubscription (topic, categories, enabled) and Add/RemoveSourceIdentifierToSubscription
//! (its sources), deleted with the object. Its sources are objects of the namespace, by name
//! (`sourceRefs`): a subscription never reaches another namespace's databases, and never all of an
//! account's. It runs on the group kinds' skeleton (`managed::named`): read (`controller.rs`), plan
//! (pure, `plan.rs` with its table tests), act (`aws.rs`), report.

pub mod aws;
pub mod controller;
pub mod plan;

use std::collections::BTreeMap;

use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::crd::{LocalRef, Tag};

/// An RDS event subscription.
#[allow(clippy::duplicated_attributes)] // one printcolumn(...) per column
#[serde_with::skip_serializing_none]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "rds.operator.rs",
    version = "v1alpha1",
    kind = "EventSubscription",
    plural = "eventsubscriptions",
    shortname = "rdsevents",
    category = "rds",
    namespaced,
    status = "EventSubscriptionStatus",
    doc = "An AWS RDS event subscription managed by rds-operator.",
    printcolumn(name = "Source", type_ = "string", json_path = ".spec.sourceType"),
    printcolumn(name = "Status", type_ = "string", json_path = ".status.status"),
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
    validation = kube::core::Rule::new("has(self.subscriptionName) == has(oldSelf.subscriptionName) && (!has(self.subscriptionName) || self.subscriptionName == oldSelf.subscriptionName)").message("subscriptionName is immutable").field_path(".subscriptionName"),
    validation = kube::core::Rule::new("self.sourceType == oldSelf.sourceType").message("sourceType is immutable: its sources are of that type").field_path(".sourceType"),
    validation = kube::core::Rule::new("self.sourceRefs.all(r, self.sourceRefs.exists_one(s, s.name == r.name))").message("each source is named once").field_path(".sourceRefs"),
)]
#[serde(rename_all = "camelCase")]
pub struct EventSubscriptionSpec {
    /// Name of the subscription in RDS (a letter first, then letters, digits and hyphens);
    /// defaults to metadata.name. Immutable.
    #[schemars(
        length(min = 1, max = 255),
        regex(pattern = r"^[a-zA-Z][a-zA-Z0-9-]*$")
    )]
    pub subscription_name: Option<String>,
    /// The SNS topic the notifications go to (its ARN). Modifiable.
    #[serde(rename = "snsTopicARN")]
    #[schemars(length(min = 1, max = 2048))]
    pub sns_topic_arn: String,
    /// The kind of source: db-instance, db-cluster, db-parameter-group, db-snapshot,
    /// db-cluster-snapshot or db-proxy. Immutable.
    pub source_type: SourceType,
    /// The objects of this namespace whose events are sent, of the kind sourceType names
    /// (DBInstance, DBCluster, DBParameterGroup, DBSnapshot, DBClusterSnapshot, DBProxy): their RDS
    /// identifiers are the subscription's sources. Each is waited for until it is Ready.
    #[schemars(length(min = 1, max = 100))]
    pub source_refs: Vec<LocalRef>,
    /// The event categories sent (availability, backup, configuration change, creation,
    /// deletion, failover, failure, maintenance, notification, recovery, restoration...); all
    /// when left out. Modifiable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_categories: Vec<String>,
    /// Whether notifications are sent (RDS's default: true). Modifiable.
    pub enabled: Option<bool>,
    /// Tags of the subscription.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 40))]
    pub tags: Vec<Tag>,
    /// Where the resource lives: its AWSAccount and region.
    #[serde(flatten)]
    pub placement: crate::managed::placement::Where,
}

/// The source types whose sources are objects of this operator (API_CreateEventSubscription.html,
/// SourceType).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SourceType {
    #[default]
    #[serde(rename = "db-instance")]
    DbInstance,
    #[serde(rename = "db-cluster")]
    DbCluster,
    #[serde(rename = "db-parameter-group")]
    DbParameterGroup,
    #[serde(rename = "db-snapshot")]
    DbSnapshot,
    #[serde(rename = "db-cluster-snapshot")]
    DbClusterSnapshot,
    #[serde(rename = "db-proxy")]
    DbProxy,
}

impl SourceType {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceType::DbInstance => "db-instance",
            SourceType::DbCluster => "db-cluster",
            SourceType::DbParameterGroup => "db-parameter-group",
            SourceType::DbSnapshot => "db-snapshot",
            SourceType::DbClusterSnapshot => "db-cluster-snapshot",
            SourceType::DbProxy => "db-proxy",
        }
    }
}

/// What the operator observed of the subscription.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventSubscriptionStatus {
    /// The conditions and the generation they are of.
    #[serde(flatten)]
    pub reported: crate::crd::Reported,
    /// Name of the subscription in RDS.
    pub subscription_name: Option<String>,
    /// ARN of the subscription.
    pub arn: Option<String>,
    /// RDS's state: creating, modifying, deleting, active, no-permission or topic-not-exist.
    pub status: Option<String>,
    /// The sources RDS has (their identifiers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_ids: Vec<String>,
    /// The tag keys the operator applied from spec.tags: the only ones it removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub applied_tag_keys: Vec<String>,
    /// The AWS account and region the resource lives in, kept once it exists.
    pub placement: Option<crate::managed::placement::Placement>,
}

/// The subscription as RDS reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObservedSubscription {
    pub name: String,
    pub arn: Option<String>,
    pub topic: String,
    pub source_type: String,
    pub source_ids: Vec<String>,
    pub categories: Vec<String>,
    pub enabled: bool,
    pub status: String,
    pub tags: BTreeMap<String, String>,
}

/// What the read step found of the sources.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sources {
    /// The RDS identifiers of spec.sourceRefs, in order.
    pub ids: Vec<String>,
    /// Why a source cannot be used yet (None: all resolved, or not read at deletion).
    pub unresolved: Option<String>,
}

impl EventSubscription {
    /// The RDS name: spec.subscriptionName or metadata.name, lower-cased as RDS stores it.
    pub fn name_in_rds(&self) -> String {
        crate::managed::named::rds_name(
            self.spec.subscription_name.as_ref(),
            self.metadata.name.as_ref(),
        )
    }
}

crate::placed!(EventSubscription, |s| s.arn.is_some());
