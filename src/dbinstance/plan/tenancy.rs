//! Rules that keep tenants apart. A DBInstance reaches only what its own namespace owns, or what
//! a platform admin granted to that namespace: by a grant tag in AWS (set by whoever controls the
//! account) or by the operator's own settings ([`Grants`]). Pure; the table tests are in
//! `tenancy_tests.rs`.
//!
//! - a restore source (snapshot or instance) is this namespace's own or granted to it;
//! - an instance no DBInstance owns is observed or adopted only where it is granted, and never
//!   from a second namespace while one observes it;
//! - after an out-of-band deletion, only this DBInstance's own snapshots are restored;
//! - a subnet or parameter group named in the spec is not another namespace's;
//! - the Secrets of a DBInstance with deletionPolicy Retain carry no ownerReference, so no
//!   garbage collection (a foreground deletion, a namespace's) can take the password first.

pub use crate::context::Grants;
pub use crate::database::tenancy::{RestoreSource, listed, may_restore, tag_grants};
use crate::dbinstance::{ADOPTABLE_BY_TAG, DBInstance, DeletionPolicy};
use crate::managed::tags::of_another_namespace;
use crate::rds_state::{ObservedInstance, SnapshotInfo};

/// What spec.replicaOf names, read in this reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaSource {
    /// What CreateDBInstanceReadReplica is sent: the source's identifier, or its ARN.
    pub source: String,
    /// Its tags, to learn whose it is.
    pub found: RestoreSource,
    /// Its backup retention period, as RDS reports it (None: not found, or not reported).
    pub backup_retention: Option<i32>,
}

/// Whether this namespace may claim (observe or adopt) an instance no DBInstance owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    Granted,
    /// No grant tag names the namespace, and the operator's settings grant it nothing.
    NotGranted,
    /// A DBInstance of another namespace observes it: it is never claimed from a second one.
    ObservedElsewhere,
}

/// `observers`: the namespaces of the other DBInstances that observe an instance of this
/// identifier (managementPolicy ObserveOnly).
pub fn claim(
    observed: &ObservedInstance,
    db: &DBInstance,
    grants: &Grants,
    observers: &[String],
) -> Claim {
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    if !listed(&grants.adoption, namespace)
        && !tag_grants(&observed.tags, ADOPTABLE_BY_TAG, namespace)
    {
        Claim::NotGranted
    } else if observers.iter().any(|n| n != namespace) {
        Claim::ObservedElsewhere
    } else {
        Claim::Granted
    }
}

/// The snapshots of this DBInstance's own instance: taken of the DbiResourceId status recorded,
/// or carrying its ownership tag. Never just any snapshot of the identifier: another team may
/// have used it before.
pub fn own_snapshots<'a>(
    snapshots: &'a [SnapshotInfo],
    db: &DBInstance,
) -> impl Iterator<Item = &'a SnapshotInfo> {
    let uid = db.metadata.uid.clone().unwrap_or_default();
    let resource = db.status.as_ref().and_then(|s| s.dbi_resource_id.clone());
    snapshots.iter().filter(move |s| {
        (resource.is_some() && s.dbi_resource_id == resource)
            || crate::managed::tags::owned_by(&s.tags, &uid)
    })
}

/// Whether the Secrets the operator writes for this DBInstance carry its ownerReference: not
/// under deletionPolicy Retain, where the garbage collector must find nothing to follow.
pub fn secrets_owner_referenced(db: &DBInstance) -> bool {
    super::spec::deletion_policy(db) != DeletionPolicy::Retain
}

/// A note for status and an Event when the password lives only in this namespace's Secret while
/// the database outlives the DBInstance: deleting the namespace deletes it.
pub fn password_advisory(db: &DBInstance) -> Option<String> {
    let generated = db.spec.password.master_user_password.is_none()
        && db.spec.password.manage_master_user_password != Some(true)
        && !super::spec::is_member(db);
    (generated && !secrets_owner_referenced(db)).then(|| {
        format!(
            "deletionPolicy is Retain and the master password is generated: it lives only in the Secret {} \
             of this namespace, and deleting the namespace deletes it with the database still running; \
             set manageMasterUserPassword: true to keep it in AWS Secrets Manager instead",
            super::spec::generated_secret_name(db)
        )
    })
}

/// The spec's group name fields (dbSubnetGroupName, dbParameterGroupName) whose groups, by
/// their tags, another namespace owns; a group made outside the operator (no ownership tags) is
/// anyone's to use.
pub fn foreign_groups(groups: &[super::GroupTags], namespace: &str) -> Vec<&'static str> {
    (groups.iter())
        .filter(|(_, tags)| (tags.as_ref()).is_some_and(|t| of_another_namespace(t, namespace)))
        .map(|(field, _)| *field)
        .collect()
}
