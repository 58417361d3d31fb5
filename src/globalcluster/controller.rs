//! The GlobalCluster reconcile: what it reads (the global database in RDS; while it is still to
//! be made of a primary, that DBCluster and its cluster) and how it acts; the shell around them,
//! the deletion and the tag steps are the group kinds' (`managed::named`).

use std::collections::BTreeMap;

use crate::error::Error;
use crate::locations::Location;
use crate::managed::locate::Located;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references::Resolver;

use super::plan::{Own, role};

use super::{
    GlobalCluster, GlobalClusterStatus, ObservedGlobalCluster, Primary, Reads, RegionHeard,
    RegionSilence,
};
use crate::globalcluster::aws::GlobalClusterCalls;

/// The marker under which the DBCluster kind registers how a DBCluster's name resolves to its RDS
/// identifier (`references::Resolver`): this kind cannot name that one, which will name it.
pub struct PrimaryCluster;

impl NamedKind for GlobalCluster {
    type Observed = ObservedGlobalCluster;
    type Extra = Reads;
    type Own = Own;
    type Status = GlobalClusterStatus;
    const LABEL: &'static str = "GlobalCluster";
    const WHAT: &'static str = "global database";
    const NAME_FIELD: &'static str = "globalClusterIdentifier";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedGlobalCluster>, Reads), Error> {
        let (name, deleting) = (
            self.name_in_rds(),
            self.metadata.deletion_timestamp.is_some(),
        );
        let target = match (role::asked(self), deleting) {
            (Some((_, target)), false) => Some(resolve(shared, self, target).await?),
            _ => None,
        };
        let home = at.rds.health().place().region().to_owned();
        // A failover is decided on the global database read in its target's region (which so
        // shows that it answers), whoever RDS reports as writer and wherever that is.
        let failing_over = self.spec.failover_to.is_some() && !deleting && role::pending(self);
        let elsewhere = match (&target, failing_over) {
            (Some(Ok(identifier)), true) => match region_of(self, identifier) {
                Some(region) => Some(in_region(shared, self, &region).await?),
                None => None,
            },
            _ => None,
        };
        let at = elsewhere.as_ref().map_or(at, |l| &*l.location);
        // The shared listing's entry while it may serve (one RDS is not busy with); otherwise,
        // at deletion (decided on the members RDS lists now) and while a role change is pending,
        // RDS is asked directly.
        let direct = deleting || role::pending(self) || elsewhere.is_some();
        let listed = (at.observer.listing::<ObservedGlobalCluster>())
            .get(&name, shared.drift_interval)
            .filter(|_| !direct);
        let observed = match listed {
            Some(found) => Some(found),
            None => at.rds.global_cluster(&name).await?,
        };
        // The evidence, unless the annotation approves already (then no region need answer).
        let annotated = role::annotated(self);
        let regions = match failing_over && !annotated {
            true => heard(shared, self, observed.as_ref(), &home).await,
            false => Default::default(),
        };
        let asked = observed.is_none() && !deleting;
        let primary = match (&self.spec.source_db_cluster_ref, asked) {
            (Some(r), true) => primary(shared, at, &r.name, self).await?,
            _ => Primary::NotRead,
        };
        let target_lag_ms = target_lag(shared, self, target.as_ref()).await?;
        let reads = Reads {
            primary,
            target,
            target_lag_ms,
            regions,
        };
        Ok((observed, reads))
    }

    async fn act(&self, shared: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedGlobalCluster>()).changing(&self.name_in_rds());
        if let Own::Failover { region, .. } = step {
            let there = in_region(shared, self, region).await?;
            return Ok(there.location.rds.global_cluster_call(step).await?);
        }
        Ok(at.rds.global_cluster_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_global_cluster(name).await?)
    }

    fn retained(&self, _adopted: bool) -> bool {
        self.spec.deletion_policy == Some(super::GlobalDeletionPolicy::Retain)
    }

    /// A role change the plan recorded as sent is put back as the previous pass had it (the next
    /// pass decides again from a fresh read); one RDS showed done is a fact of the pass, kept (it
    /// ends `pending`, and a writer that moves away later is reported, not moved back).
    fn records_after_failure(fields: &mut GlobalClusterStatus, previous: &GlobalClusterStatus) {
        if !(fields.role_change.as_ref()).is_some_and(|r| r.completed) {
            fields.role_change = previous.role_change.clone();
        }
    }

    crate::named_fields!(GlobalClusterStatus, global_cluster_identifier);
}

/// The primary DBCluster of the namespace, resolved once Ready, and its cluster in this location
/// (CreateGlobalCluster names it by ARN, and RDS makes the global database in its region).
async fn primary(
    shared: &Shared,
    at: &Location,
    name: &str,
    g: &GlobalCluster,
) -> Result<Primary, Error> {
    let identifier = match resolve(shared, g, name).await? {
        Ok(identifier) => identifier,
        Err(why) => return Ok(Primary::Unresolved(why)),
    };
    Ok(match at.rds.db_cluster(&identifier).await? {
        Some(c) => Primary::Found {
            arn: c.db_cluster_arn().unwrap_or_default().to_owned(),
            status: c.status().unwrap_or_default().to_owned(),
        },
        None => Primary::Unresolved(format!(
            "RDS has no cluster {identifier} in the GlobalCluster's account and region: the \
             global database is made where its primary is (spec.region)"
        )),
    })
}

/// What a DBCluster of the namespace resolves to: its RDS identifier once Ready.
async fn resolve(
    shared: &Shared,
    g: &GlobalCluster,
    name: &str,
) -> Result<Result<String, String>, Error> {
    let ctx = &shared.ctx;
    let namespace = g.metadata.namespace.as_deref().unwrap_or_default();
    let resolver = ctx.shared::<Resolver<PrimaryCluster>>();
    resolver.resolve(&ctx.client, namespace, name).await
}

/// The switchoverTo target's replication lag, read in its region (one GetMetricData), while a
/// switchover to it is pending and maxLagSeconds gates it.
async fn target_lag(
    shared: &Shared,
    g: &GlobalCluster,
    target: Option<&Result<String, String>>,
) -> Result<Option<i64>, Error> {
    let (Some(Ok(identifier)), Some(_), true) = (
        target,
        g.spec
            .max_lag_seconds
            .filter(|_| g.spec.switchover_to.is_some()),
        role::pending(g),
    ) else {
        return Ok(None);
    };
    let Some(region) = region_of(g, identifier) else {
        return Ok(None);
    };
    let there = in_region(shared, g, &region).await?;
    let metric = crate::rds_state::Metric::AuroraGlobalDbReplicationLag;
    let lag = (there.location.rds)
        .latest_cluster_metric(identifier, metric)
        .await?;
    Ok(lag.map(|ms| ms.round() as i64))
}

/// What the operator has heard from each region of the global database (its members' as RDS
/// reports them now, else as the status last did, and its own): each region's location's
/// health, as of now. The writer's region is asked once (a DescribeGlobalClusters there, its
/// answer unused), so that its silence is measured even when nothing else of the operator calls
/// it. A region that cannot be located (its credentials not to be had, or another replica's
/// shard) is not heard: its silence approves nothing.
async fn heard(
    shared: &Shared,
    g: &GlobalCluster,
    observed: Option<&ObservedGlobalCluster>,
    home: &str,
) -> BTreeMap<String, RegionHeard> {
    let reported = g.status.as_ref().map_or(&[][..], |s| &s.members[..]);
    let members = observed.map_or(reported, |o| &o.members[..]);
    let writer = (members.iter()).find(|m| m.role == "writer");
    let mut regions: Vec<String> = members.iter().map(|m| m.region.clone()).collect();
    regions.push(home.to_owned());
    regions.sort();
    regions.dedup();
    let mut heard = BTreeMap::new();
    for region in regions {
        let Ok(there) = in_region(shared, g, &region).await else {
            continue;
        };
        let rds = &there.location.rds;
        if writer.is_some_and(|w| w.region == region) {
            // Its outcome is what counts: recorded in the location's health.
            let _ = rds.global_cluster(&g.name_in_rds()).await;
        }
        heard.insert(region, region_heard(rds.health()));
    }
    heard
}

/// One location's health as a failover's evidence, as of now.
fn region_heard(health: &crate::rds::health::Health) -> RegionHeard {
    let now = std::time::SystemTime::now();
    let silence = health.unanswered().map(|u| RegionSilence {
        since: crate::duration::rfc3339(u.since),
        silent_for: u.silent_for,
        calls: u.calls,
        last: u.last,
    });
    let answered_ago = health.answered().map(|(how, when)| {
        let ago = now.duration_since(when).unwrap_or_default();
        (ago, how == crate::silence::Heard::Throttled)
    });
    RegionHeard {
        silence,
        answered_ago,
    }
}

/// The region of a member cluster, as the status last reported it.
fn region_of(g: &GlobalCluster, identifier: &str) -> Option<String> {
    let members = g.status.as_ref().map_or(&[][..], |s| &s.members[..]);
    (members.iter())
        .find(|m| m.db_cluster_identifier == identifier)
        .map(|m| m.region.clone())
}

/// The GlobalCluster's account in another region: where a failover is read and sent, and whose
/// health is its evidence.
async fn in_region(shared: &Shared, g: &GlobalCluster, region: &str) -> Result<Located, Error> {
    let mut probe = g.clone();
    probe.spec.placement.region = Some(region.to_owned());
    probe.status = None;
    crate::managed::locate::locate(&probe, &shared.ctx).await
}
