//! The tenancy rules both database kinds keep: what the operator's settings and the grant tags in
//! AWS grant to a namespace, and whether a restore source may be restored into it. Pure; the table
//! tests are DBInstance's (`dbinstance/plan/tenancy_tests.rs`) and DBCluster's.

use std::collections::BTreeMap;

use crate::context::Grants;
use crate::crd::RESTORABLE_BY_TAG;
use crate::managed::tags::owned_by_namespace;
pub use crate::managed::tags::{listed, tag_grants};

/// What the read step found, in this reconcile, of spec.restoreFrom's source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RestoreSource {
    /// RDS has no such snapshot or instance (or shows it to nobody here).
    NotFound,
    /// Its tags, and for a snapshot the tags of the instance it was taken of while that instance
    /// still exists (matched by DbiResourceId).
    Found {
        tags: BTreeMap<String, String>,
        instance_tags: Option<BTreeMap<String, String>>,
    },
}

/// Whether spec.restoreFrom's source may be restored into this namespace: it is the namespace's
/// own (its ownership tags, or those of the instance a snapshot was taken of), a grant tag names
/// the namespace, or the operator's settings grant it restores. Not read (None): no.
pub fn may_restore(source: Option<&RestoreSource>, namespace: &str, grants: &Grants) -> bool {
    if listed(&grants.restore, namespace) {
        return true;
    }
    let Some(RestoreSource::Found {
        tags,
        instance_tags,
    }) = source
    else {
        return false;
    };
    let own = |t: &BTreeMap<String, String>| {
        owned_by_namespace(t, namespace) || tag_grants(t, RESTORABLE_BY_TAG, namespace)
    };
    own(tags) || instance_tags.as_ref().is_some_and(own)
}
