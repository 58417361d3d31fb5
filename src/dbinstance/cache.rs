//! What the DBInstance reconciles ask of the watches' stores of DBInstances.

use super::DBInstance;
use crate::managed::placement::Placement;
use crate::managed::stores::Stores;

/// The watches' stores of DBInstances.
pub type Instances = Stores<DBInstance>;

/// What the DBInstance reconciles ask of the watches' stores of DBInstances.
pub trait InstanceStores {
    /// The DBInstances of a namespace that use a Secret of this name (as password, generated
    /// password or connection Secret), as the watches know them.
    fn peers_using(&self, namespace: &str, secret: &str) -> Vec<DBInstance>;

    /// The namespaces of the DBInstances (other than `uid`) that observe an instance of this
    /// identifier (managementPolicy ObserveOnly) in the same account and region (or whose place
    /// is not recorded yet, which may be the same), as the watches know them.
    fn observers_of(&self, identifier: &str, uid: Option<&str>, here: &Placement) -> Vec<String>;

    /// The RDS identifiers of the DBInstances (not being deleted) that name `cluster` theirs, as
    /// the watches know them.
    fn members_of(&self, cluster: &crate::dbcluster::DBCluster) -> Vec<String>;
}

impl InstanceStores for Stores<DBInstance> {
    fn peers_using(&self, namespace: &str, secret: &str) -> Vec<DBInstance> {
        (self.all().into_iter())
            .filter(|db| db.metadata.namespace.as_deref() == Some(namespace))
            .filter(|db| {
                crate::dbinstance::plan::spec::secrets_of(db)
                    .iter()
                    .any(|(n, _)| n == secret)
            })
            .map(|db| (*db).clone())
            .collect()
    }

    fn observers_of(&self, identifier: &str, uid: Option<&str>, here: &Placement) -> Vec<String> {
        let same_place = |db: &DBInstance| {
            (db.status.as_ref().and_then(|s| s.common.placement.as_ref()))
                .is_none_or(|p| p.account_id == here.account_id && p.region == here.region)
        };
        (self.all().into_iter())
            .filter(|db| db.metadata.uid.as_deref() != uid && db.identifier() == identifier)
            .filter(|db| same_place(db))
            .filter(|db| crate::dbinstance::plan::spec::observe_only(db))
            .filter_map(|db| db.metadata.namespace.clone())
            .collect()
    }

    fn members_of(&self, cluster: &crate::dbcluster::DBCluster) -> Vec<String> {
        use crate::managed::references::RefersTo;
        (self.all().into_iter())
            .filter(|db| db.metadata.deletion_timestamp.is_none() && db.refers_to(cluster))
            .map(|db| db.identifier())
            .collect()
    }
}
