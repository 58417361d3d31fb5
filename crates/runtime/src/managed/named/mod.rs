//! The kinds whose object is one named RDS resource (a subnet, parameter or option group, a
//! snapshot, a cluster endpoint, a global cluster, a proxy): found by its name, made, changed,
//! tagged and deleted with its object. What they share is here: the [`NamedKind`] trait (through
//! which they run on the skeleton, `skeleton.rs`), the facts and steps of its plan, and the plan
//! every one follows (deletion, retagging, a name in use: `plan.rs`).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::Controller;
use serde::Serialize;

use super::Kind;
use super::placement::Placement;
use super::plan::{KindPlan, KindStatus};
use crate::crd::Tag;
use crate::error::Error;
use crate::locations::Location;
use crate::observer::listing::Listed;

#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod plan;
mod skeleton;

pub use plan::{by_state, name_in_use, owned, plan, rds_name, refuse_name_in_use, retag};
pub use skeleton::{Shared, failed, referrers, settled};

/// What a named kind supplies: how to read the resource in RDS, its pure plan, how to run a step of
/// its own, its names, and where its status keeps what every named kind reports (the fields every
/// named kind has are reached through [`named_fields!`](crate::named_fields)).
pub trait NamedKind:
    Kind
    + kube::Resource<Scope = kube::core::NamespaceResourceScope>
    + crate::managed::placement::Placed
    + Send
    + Sync
    + 'static
{
    /// The resource as RDS has it.
    type Observed: Listed + Debug;
    /// What else only this kind reads (the parameter catalog); `()` for nothing.
    type Extra: Clone + Debug + Send + Sync;
    /// The steps only this kind takes (create, modify); the others are [`Step`]'s.
    type Own: Send + Sync;
    type Status: Clone + PartialEq + Default + Serialize + Send + Sync;
    /// The kind in spans and logs.
    const LABEL: &'static str;
    /// What RDS calls it, in messages ("DB subnet group").
    const WHAT: &'static str;
    /// The spec field that names it in RDS.
    const NAME_FIELD: &'static str;
    /// Read: the resource of its name in RDS (None: RDS has none), and what else the kind reads.
    fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> impl Future<Output = Result<(Option<Self::Observed>, Self::Extra), Error>> + Send;
    /// Pure (the kind's `plan.rs`).
    fn plan(facts: &Facts<Self>) -> NamedPlan<Self>;
    /// The tags of the resource in RDS.
    fn tags_of(observed: &Self::Observed) -> &BTreeMap<String, String>;
    fn arn_of(observed: &Self::Observed) -> Option<&str>;
    fn act(
        &self,
        shared: &Shared,
        at: &Location,
        step: &Self::Own,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// The DeleteDB...Group of the resource of this name.
    fn delete(
        &self,
        shared: &Shared,
        at: &Location,
        name: &str,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// The name in RDS (lower case, as RDS stores it).
    fn rds_name_of(&self) -> String;
    /// Whether deleting the object keeps what it has in RDS (a DBSnapshot's deletionPolicy
    /// Retain), given whether it adopted it (RDS's carries the adopted tag); a resource is always
    /// deleted with its object.
    fn retained(&self, _adopted: bool) -> bool {
        false
    }
    /// The kind's own wake-ups, besides its referrers' and its account's (a DBSnapshot's source).
    fn watches(
        controller: Controller<Self>,
        _shared: &Shared,
        _ns: Option<&str>,
    ) -> Controller<Self> {
        controller
    }
    /// The name in RDS the status reports.
    fn rds_name(status: &Self::Status) -> Option<String>;
    fn status(&self) -> Option<&Self::Status>;
    fn spec_tags(&self) -> &[Tag];
    /// The tag keys the operator applied from the spec, as the status keeps them.
    fn applied_tag_keys(status: &Self::Status) -> &[String];
    fn applied_tag_keys_mut(status: &mut Self::Status) -> &mut Vec<String>;
    /// After a failed step, the status has what the plan found of RDS, but no record the plan
    /// made of a step (`skeleton::failed`): the kind puts its records back as the previous pass
    /// had them (a role change sent, an export started), and keeps the names it may have applied
    /// (parameters, options, endpoints, accounts shared with) from both ([`keep_applied`]).
    fn records_after_failure(_fields: &mut Self::Status, _previous: &Self::Status) {}
    /// The connection Secret this step of the kind's writes (its name), if it writes one: a pass
    /// that fails with such a step planned leaves the resource not Ready, for the Secret may be
    /// unwritten ([`crate::managed::conditions::ready_unless_unwritten`]).
    fn connection_write(_step: &Self::Own) -> Option<&str> {
        None
    }
    fn conditions(status: &Self::Status) -> &[Condition];
    fn conditions_mut(status: &mut Self::Status) -> &mut Vec<Condition>;
    fn observed_generation(status: &mut Self::Status) -> &mut Option<i64>;
    fn placement_mut(status: &mut Self::Status) -> &mut Option<Placement>;
}

/// A record of names the operator applied, after a failed step: the plan's and the previous
/// pass's (a name the plan adds may be in RDS already if its step went through: kept, so it is
/// removed when it leaves the spec; a name the plan drops stays until its removal is seen).
pub fn keep_applied(names: &mut Vec<String>, other: &[String]) {
    for name in other {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names.sort();
}

/// The fields every named kind has, reached the same way in each: inside
/// `impl NamedKind for ...`, with the status type and the status field of its RDS name (and
/// `spec.tags`, `status.conditions`, `observedGeneration`, `appliedTagKeys`, `name_in_rds()`, the
/// observed resource's `tags`, and the kind's `plan::plan`, or the plan named third).
#[macro_export]
macro_rules! named_fields {
    ($status:ty, $rds_name:ident) => {
        $crate::named_fields!($status, $rds_name, super::plan::plan);
    };
    ($status:ty, $rds_name:ident, $plan:path) => {
        fn plan(
            facts: &$crate::managed::named::Facts<Self>,
        ) -> $crate::managed::named::NamedPlan<Self> {
            $plan(facts)
        }
        fn tags_of(observed: &Self::Observed) -> &std::collections::BTreeMap<String, String> {
            &observed.tags
        }
        fn arn_of(observed: &Self::Observed) -> Option<&str> {
            observed.arn.as_deref()
        }
        fn rds_name_of(&self) -> String {
            self.name_in_rds()
        }
        fn rds_name(status: &$status) -> Option<String> {
            status.$rds_name.clone()
        }
        fn status(&self) -> Option<&$status> {
            self.status.as_ref()
        }
        fn spec_tags(&self) -> &[$crate::crd::Tag] {
            &self.spec.tags
        }
        fn applied_tag_keys(status: &$status) -> &[String] {
            &status.applied_tag_keys
        }
        fn applied_tag_keys_mut(status: &mut $status) -> &mut Vec<String> {
            &mut status.applied_tag_keys
        }
        fn conditions(
            status: &$status,
        ) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
            &status.reported.conditions
        }
        fn conditions_mut(
            status: &mut $status,
        ) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> {
            &mut status.reported.conditions
        }
        fn observed_generation(status: &mut $status) -> &mut Option<i64> {
            &mut status.reported.observed_generation
        }
        fn placement_mut(
            status: &mut $status,
        ) -> &mut Option<$crate::managed::placement::Placement> {
            &mut status.placement
        }
    };
}

/// Everything a named kind's decision needs.
#[derive(Clone, Debug)]
pub struct Facts<K: NamedKind> {
    pub object: K,
    /// The resource with that name in RDS, with its tags.
    pub observed: Option<K::Observed>,
    /// What else the kind read (the parameter catalog; empty at deletion: not read).
    pub extra: K::Extra,
    /// At deletion: the objects of the namespace that refer to this resource, a kind each
    /// ("DBInstance a, b").
    pub referrers: Vec<String>,
    /// How often to look again once in sync.
    pub drift_interval: Duration,
    /// How often to look again while RDS is busy with it.
    pub busy_interval: Duration,
    /// Where the resource lives, as its status is to record it.
    pub placement: Placement,
    /// When they were read (RFC 3339).
    pub now: String,
}

/// A step of a named kind: one every named kind takes, or one of the kind's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step<S> {
    AddFinalizer,
    Own(S),
    AddTags {
        arn: String,
        tags: BTreeMap<String, String>,
    },
    RemoveTags {
        arn: String,
        keys: Vec<String>,
    },
    Delete {
        name: String,
    },
    RemoveFinalizer,
}

/// What one reconcile of a named kind does and reports.
pub type NamedPlan<K> = KindPlan<Step<<K as NamedKind>::Own>, KindStatus<<K as NamedKind>::Status>>;
