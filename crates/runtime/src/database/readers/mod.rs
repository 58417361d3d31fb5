//! The readers of a connection Secret, rolled when its data changes: the Deployments, StatefulSets
//! and DaemonSets of its namespace whose pods read it (`envFrom`, `env`, a volume, a projected
//! volume) or that name it in the `rds.operator.rs/reads-secrets` annotation get a pod template
//! annotation with the Secret's version, and Kubernetes rolls them with their own strategy. A
//! workload annotated `rds.operator.rs/roll-on-secret-change: "false"` is never touched, and
//! nothing outside the Secret's namespace is. Off unless the operator runs with
//! `--roll-secret-readers` (the chart's `rollSecretReaders`).
//!
//! The version is a counter in the Secret's `rds.operator.rs/secret-version` annotation, raised
//! with each write that changes its data ([`next_version`]); never a hash of the data, which would
//! put something derived from a password into every Pod's metadata. Pure: what to list
//! ([`to_list`]), what a workload reads ([`Workload`]) and what to roll ([`plan`]); the calls are
//! in [`kube`].

pub mod kube;

use std::collections::{BTreeMap, BTreeSet};

use ::kube::KubeSchema;
use ::kube::runtime::events::EventType;
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::time::Duration;

use crate::managed::plan::KindPlan;

/// The Secret's version, raised with each write that changes its data.
pub const SECRET_VERSION: &str = "rds.operator.rs/secret-version";
/// On a workload: "false" and it is never rolled.
pub const ROLL: &str = "rds.operator.rs/roll-on-secret-change";
/// On a workload: the Secrets (comma-separated) it reads in a way its pod spec does not show (an
/// app that reads them through the API), rolled as if it did.
pub const READS: &str = "rds.operator.rs/reads-secrets";
/// The prefix of the pod template annotation that holds the version of a Secret its pods have.
pub const TEMPLATE_PREFIX: &str = "secret.rds.operator.rs/";

/// The kinds of workload rolled.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
}

/// A workload of the namespace, as the plan needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub kind: WorkloadKind,
    pub name: String,
    /// The Secrets its pods read, and those its `reads-secrets` annotation names.
    pub reads: BTreeSet<String>,
    /// Annotated `roll-on-secret-change: "false"`.
    pub opted_out: bool,
    /// Its pod template's annotations.
    pub template: BTreeMap<String, String>,
    /// Whether its current template is rolled out (as `kubectl rollout status` decides).
    pub rolled_out: bool,
}

impl Workload {
    fn of(
        kind: WorkloadKind,
        meta: &ObjectMeta,
        template: &PodTemplateSpec,
        rolled_out: bool,
    ) -> Workload {
        let annotations = meta.annotations.clone().unwrap_or_default();
        let mut reads = template.spec.as_ref().map(secrets_read).unwrap_or_default();
        if let Some(named) = annotations.get(READS) {
            reads.extend(
                (named.split(','))
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
        }
        Workload {
            kind,
            name: meta.name.clone().unwrap_or_default(),
            reads,
            opted_out: annotations.get(ROLL).is_some_and(|v| v == "false"),
            template: (template.metadata.as_ref())
                .and_then(|m| m.annotations.clone())
                .unwrap_or_default(),
            rolled_out,
        }
    }

    /// A Deployment: rolled out when its controller saw its generation and every replica is
    /// updated and available.
    pub fn of_deployment(d: &Deployment) -> Workload {
        let wanted = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let s = d.status.clone().unwrap_or_default();
        let rolled_out = seen(&d.metadata, s.observed_generation)
            && s.updated_replicas.unwrap_or(0) >= wanted
            && s.replicas.unwrap_or(0) == s.updated_replicas.unwrap_or(0)
            && s.available_replicas.unwrap_or(0) >= wanted;
        let template = d.spec.as_ref().map(|s| &s.template);
        Workload::of(
            WorkloadKind::Deployment,
            &d.metadata,
            template.unwrap_or(&PodTemplateSpec::default()),
            rolled_out,
        )
    }

    /// A StatefulSet: rolled out when its controller saw its generation and every replica is
    /// updated and ready.
    pub fn of_stateful_set(st: &StatefulSet) -> Workload {
        let wanted = st.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
        let s = st.status.clone().unwrap_or_default();
        let rolled_out = seen(&st.metadata, s.observed_generation)
            && s.updated_replicas.unwrap_or(0) >= wanted
            && s.ready_replicas.unwrap_or(0) >= wanted
            && (s.update_revision.is_none() || s.update_revision == s.current_revision);
        let template = st.spec.as_ref().map(|s| &s.template);
        Workload::of(
            WorkloadKind::StatefulSet,
            &st.metadata,
            template.unwrap_or(&PodTemplateSpec::default()),
            rolled_out,
        )
    }

    /// A DaemonSet: rolled out when its controller saw its generation and every node's pod is
    /// updated and available.
    pub fn of_daemon_set(ds: &DaemonSet) -> Workload {
        let s = ds.status.clone().unwrap_or_default();
        let rolled_out = seen(&ds.metadata, s.observed_generation)
            && s.updated_number_scheduled.unwrap_or(0) >= s.desired_number_scheduled
            && s.number_available.unwrap_or(0) >= s.desired_number_scheduled;
        let template = ds.spec.as_ref().map(|s| &s.template);
        Workload::of(
            WorkloadKind::DaemonSet,
            &ds.metadata,
            template.unwrap_or(&PodTemplateSpec::default()),
            rolled_out,
        )
    }
}

/// Whether the workload's controller has seen its current generation.
fn seen(meta: &ObjectMeta, observed: Option<i64>) -> bool {
    observed.is_some_and(|o| o >= meta.generation.unwrap_or(0))
}

/// The Secrets a pod spec reads: by `envFrom`, `env`, a volume or a projected volume, in any
/// container (init and ephemeral ones too).
pub fn secrets_read(pod: &PodSpec) -> BTreeSet<String> {
    let mut read = BTreeSet::new();
    let containers = (pod.containers.iter())
        .chain(pod.init_containers.iter().flatten())
        .map(|c| (&c.env, &c.env_from));
    let ephemeral = (pod.ephemeral_containers.iter().flatten()).map(|c| (&c.env, &c.env_from));
    for (env, env_from) in containers.chain(ephemeral) {
        read.extend(
            (env_from.iter().flatten())
                .filter_map(|e| e.secret_ref.as_ref())
                .map(|r| r.name.clone()),
        );
        read.extend(
            (env.iter().flatten())
                .filter_map(|e| e.value_from.as_ref()?.secret_key_ref.as_ref())
                .map(|r| r.name.clone()),
        );
    }
    for volume in pod.volumes.iter().flatten() {
        read.extend(volume.secret.as_ref().and_then(|s| s.secret_name.clone()));
        let projected = (volume.projected.as_ref())
            .and_then(|p| p.sources.as_ref())
            .into_iter()
            .flatten();
        read.extend(
            projected
                .filter_map(|s| s.secret.as_ref())
                .map(|s| s.name.clone()),
        );
    }
    read
}

/// The Secret's version (None: the operator has not written its data since it began counting).
pub fn version(secret: &Secret) -> Option<u64> {
    (secret.metadata.annotations.as_ref())
        .and_then(|a| a.get(SECRET_VERSION))
        .and_then(|v| v.parse().ok())
}

/// The version a write of the Secret's data gives it: 1 for a new Secret, one more than it has
/// otherwise (a Secret from before the counter: 2, so its readers are rolled).
pub fn next_version(current: Option<&Secret>) -> u64 {
    match current {
        None => 1,
        Some(s) => version(s).unwrap_or(1) + 1,
    }
}

/// The pod template annotation that holds the version of Secret `name` (None: the name is too
/// long for an annotation's name, 63 characters).
pub fn template_key(name: &str) -> Option<String> {
    (name.len() <= 63).then(|| format!("{TEMPLATE_PREFIX}{name}"))
}

/// The readers of a connection Secret, as the last pass that listed them left them.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReaders {
    /// The Secret's version (its rds.operator.rs/secret-version annotation) the readers were
    /// rolled to.
    pub version: u64,
    /// When a reader was last rolled to it (RFC 3339).
    pub rolled_at: Option<String>,
    /// The Deployments, StatefulSets and DaemonSets of the namespace that read the Secret.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readers: Vec<SecretReader>,
}

impl SecretReaders {
    /// Whether every reader the operator rolls has rolled out the version: none reads an older
    /// one (readers opted out are not known, and not waited for).
    pub fn rolled_out(&self) -> bool {
        self.readers.iter().all(|r| r.state != ReaderState::Rolling)
    }
}

/// A workload that reads the Secret.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SecretReader {
    pub kind: WorkloadKind,
    pub name: String,
    pub state: ReaderState,
}

/// Where a reader's rollout stands.
#[derive(
    Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, JsonSchema,
)]
pub enum ReaderState {
    /// Its pod template has the version, and Kubernetes is rolling it out.
    Rolling,
    /// Every pod of it has the version.
    RolledOut,
    /// Annotated rds.operator.rs/roll-on-secret-change "false": not rolled.
    OptedOut,
}

/// A roll of one reader: its pod template annotated with the Secret's version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Roll {
    pub kind: WorkloadKind,
    pub name: String,
    /// The pod template annotation and its value.
    pub annotation: String,
    pub version: u64,
}

/// Whether the readers of the Secret are listed this pass: its version is not the one status says
/// they were rolled to, or a rollout is still going. A Secret at its first version has readers
/// that read it from the start: none is rolled.
pub fn to_list(secret: Option<&Secret>, previous: Option<&SecretReaders>) -> bool {
    let Some(version) = secret.and_then(version) else {
        return false;
    };
    match previous {
        None => version > 1,
        Some(p) => p.version != version || !p.rolled_out(),
    }
}

/// The rolls the readers of Secret `name` need and the status that says so, given the workloads
/// listed (None: not listed this pass, and status stays as it was). Each workload that reads the
/// Secret and does not have its version in its pod template is rolled (an Event says which);
/// opted-out ones are only reported. While a rollout goes, the plan looks again within `busy`.
pub fn plan<S, St, X>(
    plan: &mut KindPlan<S, St, X>,
    wrap: impl Fn(Roll) -> S,
    (name, secret): (&str, Option<&Secret>),
    (listed, previous): (Option<&[Workload]>, Option<&SecretReaders>),
    (now, busy): (&str, Duration),
) -> Option<SecretReaders> {
    let (Some(listed), Some(version), Some(key)) =
        (listed, secret.and_then(version), template_key(name))
    else {
        return previous.cloned();
    };
    let mut status = SecretReaders {
        version,
        rolled_at: previous
            .filter(|p| p.version == version)
            .and_then(|p| p.rolled_at.clone()),
        readers: Vec::new(),
    };
    let mut rolled = Vec::new();
    for w in listed.iter().filter(|w| w.reads.contains(name)) {
        let has = w
            .template
            .get(&key)
            .is_some_and(|v| *v == version.to_string());
        let state = match (w.opted_out, has, w.rolled_out) {
            (true, _, _) => ReaderState::OptedOut,
            (false, true, true) => ReaderState::RolledOut,
            (false, true, false) => ReaderState::Rolling,
            (false, false, _) => {
                plan.step(wrap(Roll {
                    kind: w.kind,
                    name: w.name.clone(),
                    annotation: key.clone(),
                    version,
                }));
                rolled.push(format!("{:?} {}", w.kind, w.name));
                ReaderState::Rolling
            }
        };
        status.readers.push(SecretReader {
            kind: w.kind,
            name: w.name.clone(),
            state,
        });
    }
    if !rolled.is_empty() {
        status.rolled_at = Some(now.to_owned());
        let note = format!(
            "rolled {} to Secret {name}'s version {version}",
            rolled.join(", ")
        );
        plan.event(EventType::Normal, "ReadersRolled", "Update", note);
    }
    if !status.rolled_out() {
        plan.look_again_within(busy);
    }
    Some(status)
}

#[cfg(test)]
mod tests;
