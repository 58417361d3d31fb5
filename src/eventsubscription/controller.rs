//! The EventSubscription reconcile: what it reads (the subscription, from the shared listing while
//! it may serve, else from RDS; its sources, objects of the namespace resolved to their RDS
//! identifiers once Ready) and how it acts; the shell, the deletion and the tag steps are the group
//! kinds' (`managed::named`).

use kube::ResourceExt;

use crate::dbcluster::DBCluster;
use crate::dbclustersnapshot::DBClusterSnapshot;
use crate::dbinstance::DBInstance;
use crate::dbparametergroup::DBParameterGroup;
use crate::dbproxy::DBProxy;
use crate::dbsnapshot::DBSnapshot;
use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references::resolve;

use super::aws::SubscriptionCalls;
use super::plan::Own;
use super::{
    EventSubscription, EventSubscriptionStatus, ObservedSubscription, SourceType, Sources,
};

impl NamedKind for EventSubscription {
    type Observed = ObservedSubscription;
    type Extra = Sources;
    type Own = Own;
    type Status = EventSubscriptionStatus;
    const LABEL: &'static str = "EventSubscription";
    const WHAT: &'static str = "event subscription";
    const NAME_FIELD: &'static str = "subscriptionName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedSubscription>, Sources), Error> {
        let (name, deleting) = (
            self.name_in_rds(),
            self.metadata.deletion_timestamp.is_some(),
        );
        let listed = (at.observer.listing::<ObservedSubscription>())
            .get(&name, shared.drift_interval)
            .filter(|_| !deleting);
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.subscription(&name).await?,
        };
        let sources = match deleting {
            true => Sources::default(),
            false => sources(shared, self).await?,
        };
        Ok((observed, sources))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedSubscription>()).changing(&self.name_in_rds());
        Ok(at.rds.subscription_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_subscription(name).await?)
    }

    crate::named_fields!(EventSubscriptionStatus, subscription_name);
}

/// The RDS identifiers of spec.sourceRefs, each an object of the namespace of the source type's
/// kind, read now; the first one not Ready stops the list with why.
async fn sources(shared: &Shared, s: &EventSubscription) -> Result<Sources, Error> {
    let (client, namespace) = (&shared.ctx.client, s.namespace().unwrap_or_default());
    let mut ids = Vec::new();
    for r in &s.spec.source_refs {
        let name = r.name.as_str();
        let resolved = match s.spec.source_type {
            SourceType::DbInstance => resolve::<DBInstance>(client, &namespace, name).await?,
            SourceType::DbCluster => resolve::<DBCluster>(client, &namespace, name).await?,
            SourceType::DbParameterGroup => {
                resolve::<DBParameterGroup>(client, &namespace, name).await?
            }
            SourceType::DbSnapshot => resolve::<DBSnapshot>(client, &namespace, name).await?,
            SourceType::DbClusterSnapshot => {
                resolve::<DBClusterSnapshot>(client, &namespace, name).await?
            }
            SourceType::DbProxy => resolve::<DBProxy>(client, &namespace, name).await?,
        };
        match resolved {
            Ok(id) => ids.push(id),
            Err(why) => {
                return Ok(Sources {
                    ids,
                    unresolved: Some(why),
                });
            }
        }
    }
    Ok(Sources {
        ids,
        unresolved: None,
    })
}
