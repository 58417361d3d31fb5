//! What the CRDs of every kind share: the API group, the cleanup finalizer, the ownership tag
//! names, the types every spec uses (a reference by name, a tag), and the CRD YAML committed in
//! `crds/`. Doc comments here become `kubectl explain` text.

use kube::{CustomResourceExt, KubeSchema};
use serde::{Deserialize, Serialize};

/// API group of the operator's resources.
pub const GROUP: &str = "rds.operator.rs";
/// Finalizer that holds an object until what it made in RDS is gone (or retained).
pub const FINALIZER: &str = "rds.operator.rs/cleanup";
/// RDS tag that marks a resource as managed by the object with this uid: the idempotency key
/// together with the RDS name.
pub const OWNER_TAG: &str = "rds.operator.rs/owner-uid";
/// RDS tag with the `namespace/name` of the owning object, for people reading the RDS console.
pub const OWNER_NAME_TAG: &str = "rds.operator.rs/owner";

/// Annotation that stops every AWS call for an object while it is "true" (during an incident,
/// say); the operator reports `Synced=False`, reason `ReconcilePaused`, and resumes when it goes.
pub const PAUSED_ANNOTATION: &str = "rds.operator.rs/paused";
/// Annotation that makes the operator show what it would do (status.dryRun) and do none of it: no
/// AWS call that changes anything, no Secret written.
pub const DRY_RUN_ANNOTATION: &str = "rds.operator.rs/dry-run";

/// Annotation asking for a password rotation now: one rotation per value (a time, a counter),
/// the value last acted on kept in status.
pub const ROTATE_NOW_ANNOTATION: &str = "rds.operator.rs/rotate-now";
/// RDS tag written when a DBInstance with deletionPolicy Retain lets its instance go: a later
/// DBInstance of the same namespace and name adopts the instance on its own.
pub const RETAINED_TAG: &str = "rds.operator.rs/retained";
/// RDS tag added with the ownership tags when a DBInstance adopts an instance (its value: the
/// time). Until the adoption is in status, an instance carrying it is held like an adoption, so a
/// crash between the adopting call and the status write lets no correction through unconfirmed.
pub const ADOPTED_TAG: &str = "rds.operator.rs/adopted";
/// RDS tag a platform admin puts on a snapshot or an instance to let DBInstances of the namespaces
/// it names (separated by spaces) restore from it (spec.restoreFrom).
pub const RESTORABLE_BY_TAG: &str = "rds.operator.rs/restorable-by";
/// RDS tag a platform admin puts on an instance no DBInstance owns (made by the console,
/// CloudFormation, Terraform...) to let DBInstances of the namespaces it names (separated by
/// spaces) observe or adopt it.
pub const ADOPTABLE_BY_TAG: &str = "rds.operator.rs/adoptable-by";
/// Annotation on the Secrets the operator writes for a DBInstance: the DBInstance's uid. It marks
/// them as that DBInstance's whether or not they carry its ownerReference (under deletionPolicy
/// Retain they do not, so no garbage collection can take the retained database's password).
pub const SECRET_OWNER_ANNOTATION: &str = "rds.operator.rs/owner-uid";
/// ACK's deletion policy annotation (`retain` or `delete`), honoured on a DBInstance ported from ACK.
pub const ACK_DELETION_POLICY: &str = "services.k8s.aws/deletion-policy";
/// ACK's adoption policy annotation (`adopt` or `adopt-or-create`), honoured as spec.adoptionPolicy.
pub const ACK_ADOPTION_POLICY: &str = "services.k8s.aws/adoption-policy";

/// An object of the same namespace, by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
pub struct LocalRef {
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// An AWSAccount (cluster-scoped), by name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
pub struct AccountRef {
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// An RDS tag.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Tag {
    /// Tag key (not starting with "aws:").
    #[schemars(length(min = 1, max = 128))]
    #[x_kube(validation = kube::core::Rule::new("!self.startsWith('aws:')").message("tag keys starting with aws: are reserved by AWS"))]
    pub key: String,
    /// Tag value.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub value: String,
}

/// What every kind's status reports first (flattened into it: `status.conditions`,
/// `status.observedGeneration`).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reported {
    /// Ready: what the object stands for can be used (a database available to clients, RDS
    /// serving it while it backs up, applies a modification or optimises storage; a group in RDS
    /// for those that use it; an account the operator reaches), and its connection Secret, when
    /// the spec asks for one, holds it; an operator or AWS error never turns it False. Synced: the last reconcile brought AWS to the spec, or why not (errors and
    /// refusals are here; an object being deleted while others use it says InUse). Reconciling:
    /// AWS or the operator is still working towards the spec (creating, modifying, restoring,
    /// retrying). Stalled: only a spec change can help (InvalidSpec, InvalidParameter,
    /// IdentifierInUse, UnsupportedChange...); the operator does not retry until it comes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[x_kube(merge_strategy = kube::core::ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    /// The metadata.generation the status was computed for.
    pub observed_generation: Option<i64>,
}

/// Whether the object carries the cleanup finalizer.
pub fn has_finalizer(meta: &kube::api::ObjectMeta) -> bool {
    (meta.finalizers.iter().flatten()).any(|f| f == FINALIZER)
}

/// A kind's CRD as YAML, as committed in `crds/<kind>.yaml`.
pub fn yaml<K: CustomResourceExt>() -> String {
    let crd = K::crd();
    format!(
        "# Generated by `rds-operator crd` from src/{}/: do not edit (run `make crds`).\n{}",
        crd.spec.names.kind.to_lowercase(),
        serde_yaml::to_string(&crd).expect("a CRD always serialises")
    )
}
