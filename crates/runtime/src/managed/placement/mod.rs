//! Where a resource lives: the AWS account and region of every kind's object, decided by pure
//! rules with their table tests. An object names an AWSAccount (`spec.accountRef`) and a region
//! (`spec.region`); either defaults from its namespace's annotations, then the operator's own.
//! A namespace the account does not select is refused, as is a region the account does not
//! allow, and no AWS call is made with that account. Once the resource exists in AWS, its account
//! and region are recorded in status: a later difference is refused (`AccountOrRegionMismatch`),
//! never a create elsewhere.

use std::collections::BTreeMap;

use kube::{KubeSchema, Resource};
use serde::{Deserialize, Serialize};

use crate::accounts::Account;
pub use crate::locations::{Source, Target};

mod regions;

/// Namespace annotation: the AWSAccount a namespace's resources use when they name none.
pub const ACCOUNT_ANNOTATION: &str = "rds.operator.rs/account";
/// Namespace annotation: the region a namespace's resources use when they name none.
pub const REGION_ANNOTATION: &str = "rds.operator.rs/region";
/// ACK's namespace annotations and resource annotation, honoured with `--ack-compat`.
pub const ACK_ACCOUNT_ANNOTATION: &str = "services.k8s.aws/owner-account-id";
pub const ACK_DEFAULT_REGION_ANNOTATION: &str = "services.k8s.aws/default-region";
pub const ACK_REGION_ANNOTATION: &str = "services.k8s.aws/region";

/// Where a resource is to live, as every placed kind's spec says it (flattened into the spec:
/// `spec.accountRef`, `spec.region`).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Where {
    /// The AWSAccount to manage the resource in (cluster-scoped; it must select this namespace).
    /// Default: the namespace's rds.operator.rs/account annotation, else the operator's own
    /// credentials.
    pub account_ref: Option<crate::crd::AccountRef>,
    /// The AWS region (one the account allows). Default: the namespace's rds.operator.rs/region
    /// annotation, else the operator's own region. Once the resource exists, the account and
    /// region it lives in are kept in status.placement: pointing accountRef or region elsewhere
    /// is refused (AccountOrRegionMismatch, until they are put back), never a create elsewhere.
    #[schemars(regex(pattern = r"^[a-z]{2,4}(-[a-z]+)+-[0-9]+$"))]
    pub region: Option<String>,
}

/// Where a resource lives in AWS, as its status records it.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The AWSAccount it was reached through (absent: the operator's own credentials, or an ACK
    /// role-map entry).
    pub account: Option<String>,
    /// The AWS account id.
    #[serde(rename = "accountID")]
    pub account_id: String,
    pub region: String,
}

/// A placement refused: the condition reason and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: &'static str,
    pub message: String,
}

impl From<Refusal> for crate::error::Error {
    fn from(r: Refusal) -> Self {
        crate::error::Error::Placement {
            reason: r.reason,
            message: r.message,
        }
    }
}

/// What the ACK compatibility reads, when `--ack-compat` is on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ack {
    /// The `ack-role-account-map` ConfigMap of the operator's namespace: account id -> role ARN.
    pub role_map: BTreeMap<String, String>,
}

/// Everything the placement of one object is decided on.
#[derive(Clone, Debug, Default)]
pub struct Facts<'a> {
    pub namespace: &'a str,
    pub namespace_labels: BTreeMap<String, String>,
    pub namespace_annotations: BTreeMap<String, String>,
    /// The object's own annotations (ACK's per-resource region).
    pub annotations: BTreeMap<String, String>,
    pub account_ref: Option<&'a str>,
    pub region: Option<&'a str>,
    /// The AWSAccount the object or its namespace names, as the directory has it (None: none of
    /// that name).
    pub account: Option<&'a Account>,
    /// Some with `--ack-compat`.
    pub ack: Option<Ack>,
    /// The operator's own region.
    pub own_region: &'a str,
}

impl Facts<'_> {
    /// The AWSAccount the object uses by name: its own reference, else its namespace's.
    pub fn account_name(&self) -> Option<&str> {
        (self.account_ref).or(self
            .namespace_annotations
            .get(ACCOUNT_ANNOTATION)
            .map(String::as_str))
    }
}

/// Decides where the object is reached: an AWSAccount (by the object's reference or its
/// namespace's annotation) when it exists, selects the namespace and allows the region; else,
/// with ACK compatibility, the role the role map gives the namespace's owner-account-id; else
/// the operator's own credentials. The region: the object's, its namespace's, ACK's (the
/// resource's, then the namespace's default), the operator's own.
pub fn decide(f: &Facts) -> Result<Target, Refusal> {
    let ack = |key: &str, from: &BTreeMap<String, String>| {
        f.ack.as_ref().and_then(|_| from.get(key).cloned())
    };
    let region = (f.region.map(str::to_owned))
        .or_else(|| f.namespace_annotations.get(REGION_ANNOTATION).cloned())
        .or_else(|| ack(ACK_REGION_ANNOTATION, &f.annotations))
        .or_else(|| ack(ACK_DEFAULT_REGION_ANNOTATION, &f.namespace_annotations))
        .unwrap_or_else(|| f.own_region.to_owned());
    if !regions::known(&region) {
        return Err(Refusal {
            reason: "InvalidSpec",
            message: format!(
                "region {region} is not a region of AWS's partitions as the operator's SDK knows \
                 them (a typo, or a region opened since this release); no call is made"
            ),
        });
    }
    if let Some(name) = f.account_name() {
        let Some(account) = f.account.filter(|a| a.name == name) else {
            return Err(Refusal {
                reason: "AccountNotFound",
                message: format!("AWSAccount {name} does not exist; waiting for it"),
            });
        };
        if !(account.namespace_selector).selects(f.namespace, &f.namespace_labels) {
            return Err(Refusal {
                reason: "AccountNotGranted",
                message: format!(
                    "AWSAccount {name} is not granted to namespace {}: its namespaceSelector does not select it; \
                     no AWS call is made with it",
                    f.namespace
                ),
            });
        }
        if !account.regions.contains(&region) {
            return Err(Refusal {
                reason: "RegionNotAllowed",
                message: format!(
                    "AWSAccount {name} allows the regions {:?}, not {region}",
                    account.regions
                ),
            });
        }
        return Ok(Target {
            source: Source::account(account),
            region,
        });
    }
    if let Some(account_id) = ack(ACK_ACCOUNT_ANNOTATION, &f.namespace_annotations) {
        let role_map = f.ack.as_ref().map(|a| &a.role_map);
        let Some(role_arn) = role_map.and_then(|m| m.get(&account_id)) else {
            return Err(Refusal {
                reason: "AccountNotGranted",
                message: format!(
                    "namespace {} names account {account_id} (services.k8s.aws/owner-account-id), which the \
                     ack-role-account-map ConfigMap does not map to a role; no AWS call is made",
                    f.namespace
                ),
            });
        };
        return Ok(Target {
            source: Source::AckRole {
                account_id,
                role_arn: role_arn.clone(),
            },
            region,
        });
    }
    Ok(Target {
        source: Source::Own,
        region,
    })
}

/// Checks where the object is now reached against where its resource was recorded: once the
/// resource exists in AWS (`created`), another account id or region is refused. An account id
/// the ACK role map promised and the role does not reach is refused as well.
pub fn check(
    recorded: Option<&Placement>,
    created: bool,
    now: &Placement,
    target: &Target,
) -> Result<(), Refusal> {
    if let Source::AckRole { account_id, .. } = &target.source
        && *account_id != now.account_id
    {
        return Err(Refusal {
            reason: "AccountOrRegionMismatch",
            message: format!(
                "the role ack-role-account-map gives account {account_id} reaches account {}; nothing is done",
                now.account_id
            ),
        });
    }
    match recorded {
        Some(was) if created && (was.account_id != now.account_id || was.region != now.region) => {
            Err(Refusal {
                reason: "AccountOrRegionMismatch",
                message: format!(
                    "the resource exists in account {}, region {}, but the object now points at account {}, \
                     region {}; nothing is created elsewhere: put spec.accountRef, spec.region (or the namespace's \
                     defaults) back",
                    was.account_id, was.region, now.account_id, now.region
                ),
            })
        }
        _ => Ok(()),
    }
}

/// What the status records: once the resource exists, where it was recorded (unchanged: a
/// difference was refused by [`check`]); before that, where it is being reached now.
pub fn record(recorded: Option<&Placement>, created: bool, now: &Placement) -> Placement {
    match recorded {
        Some(was) if created => was.clone(),
        _ => now.clone(),
    }
}

/// What a kind exposes of where its object lives.
pub trait Placed: Resource {
    fn account_ref(&self) -> Option<&str>;
    fn region(&self) -> Option<&str>;
    /// Where its status records the resource.
    fn placement(&self) -> Option<&Placement>;
    /// Whether its resource exists in AWS, as far as its status says.
    fn created(&self) -> bool;
}

/// [`Placed`] for a kind with `spec.accountRef`, `spec.region` and `status.placement`, whose
/// resource exists once its status says `$created`. The placement is `status.placement`, or the
/// path given after `placement at` (a kind whose status flattens it from a shared block).
#[macro_export]
macro_rules! placed {
    ($kind:ty, |$status:ident| $created:expr) => {
        $crate::placed!($kind, |$status| $created, placement at placement);
    };
    ($kind:ty, |$status:ident| $created:expr, placement at $($path:ident).+) => {
        impl $crate::managed::placement::Placed for $kind {
            fn account_ref(&self) -> Option<&str> {
                self.spec
                    .placement
                    .account_ref
                    .as_ref()
                    .map(|r| r.name.as_str())
            }
            fn region(&self) -> Option<&str> {
                self.spec.placement.region.as_deref()
            }
            fn placement(&self) -> Option<&$crate::managed::placement::Placement> {
                self.status.as_ref().and_then(|s| s.$($path).+.as_ref())
            }
            fn created(&self) -> bool {
                self.status.as_ref().is_some_and(|$status| $created)
            }
        }
    };
}

#[cfg(test)]
mod tests;
