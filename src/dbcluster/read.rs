//! Step 1 of a DBCluster's reconcile, read: the cluster (from the shared listing, or directly),
//! its Secrets, its references, its restore source, and at deletion its members, gathered into
//! [`Facts`]; a failure here is a failure to learn, never a decision.

use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;

use super::observed::ObservedCluster;
use super::plan::{self, Facts};
use super::{ClusterRestoreFrom, DBCluster};
use crate::context::Context;
use crate::database::password::{PasswordRead, password_and_rotation};
use crate::database::readers::kube::secret_and_readers;
use crate::database::tenancy::RestoreSource;
use crate::dbcluster::aws::ClusterCalls;
use crate::dbcluster::restore::ClusterRestoreCalls;
use crate::dbclusterparametergroup::DBClusterParameterGroup;
use crate::dbclustersnapshot::DBClusterSnapshot;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::locate::Located;
use crate::managed::placement::Placement;
use crate::managed::references;
use crate::managed::references::Referrers;
use crate::managed::stores::Stores;
use crate::rds_state::{AwsIdentity, SnapshotInfo, database_key};

pub(super) async fn read(
    cluster: &DBCluster,
    ctx: &Context,
    located: &Located,
) -> Result<Facts, Error> {
    let namespace = (cluster.namespace()).ok_or(Error::MissingObjectKey("namespace"))?;
    let at = &*located.location;
    let identifier = cluster.identifier();
    let deleting = cluster.metadata.deletion_timestamp.is_some();
    let (observed, observed_directly) = match plan::paused(cluster) {
        // Paused: no AWS call at all.
        true => (None, false),
        false => observe(ctx, cluster, at).await?,
    };
    let owner_alive = tagged_owner_alive(ctx, &namespace, cluster, observed.as_ref()).await?;
    let absent_for = (observed_directly && observed.is_none())
        .then(|| (at.observer.listing::<ObservedCluster>()).absent_for(&identifier))
        .flatten();
    let reads = plan::reads(cluster, observed.as_ref());
    let (identity, snapshots) = gone_reads(at, &identifier, reads.gone).await?;
    let (snapshot_ref, restore_source) = restore_reads(ctx, at, &namespace, &reads).await?;
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let secondary = super::global::secondary(ctx, cluster).await?;
    let read = password_read(cluster, observed.as_ref(), secondary.as_ref());
    let source = (&cluster.spec.password, secret_arn(observed.as_ref()));
    let (password, secret_rotation) =
        password_and_rotation(cluster, (at, &api), read, source).await?;
    let exists = observed.is_some();
    let name = (cluster.spec.connection.connection_secret.as_ref())
        .map(|c| c.name.as_str())
        .filter(|_| exists && !deleting);
    let previous = (cluster.status.as_ref()).and_then(|s| s.common.secret_readers.as_ref());
    let (connection_secret, readers) = secret_and_readers(ctx, &namespace, name, previous).await?;
    let (subnet_group, parameter_group) = references(ctx, cluster, &namespace).await?;
    // An expiring clone deletes its members with it: they are read each pass.
    let expiring = cluster.spec.expire_after.is_some() && !deleting;
    let referrers = match (observed_directly && deleting) || expiring {
        true => members(ctx, cluster).await?,
        false => Vec::new(),
    };
    let polled = polled(ctx, at, cluster, observed.as_ref());
    let (global_members, global_endpoint) =
        super::global::member_reads(at, cluster, observed.as_ref(), observed_directly).await?;
    let blue_green = super::blue_green::read(at, cluster, reads.blue_green.as_ref()).await?;
    Ok(Facts {
        cluster: cluster.clone(),
        observed,
        observed_directly,
        password,
        connection_secret,
        readers,
        secret_rotation,
        subnet_group,
        parameter_group,
        referrers,
        declared_members: polled.declared_members,
        absent_for,
        identity,
        snapshots,
        snapshot_ref,
        restore_source,
        global: secondary.map(|(global, _)| global),
        global_members,
        global_endpoint,
        shard_group_endpoint: shard_group(at, cluster, name.is_some()).await?,
        maintenance: polled.maintenance,
        blue_green,
        grants: ctx.grants.clone(),
        owner_alive,
        observers: observers_of(ctx, cluster, &located.placement),
        member_states: polled.member_states,
        health: polled.health,
        alarms: polled.alarms,
        hash_key: ctx.hash_key.clone(),
        ca_bundle: ctx.ca_bundle.clone(),
        intervals: at.observer.intervals,
        placement: located.placement.clone(),
        now: crate::duration::now(),
    })
}

/// What the location's shared polls, and the watches of DBInstances, last found of a cluster
/// (`plan::Facts` has each).
struct Polled {
    member_states: std::collections::BTreeMap<String, String>,
    declared_members: Vec<String>,
    health: Option<crate::rds_state::ObservedHealth>,
    alarms: Option<Vec<crate::rds_state::ObservedAlarm>>,
    maintenance: Option<Vec<crate::maintenance::PendingAction>>,
}

/// What the location's shared polls last found of the cluster: its members' states, its figures
/// (`health`), its alarms (when the spec or status has some), its pending maintenance, and but at
/// deletion the DBInstances that name it theirs ([`DeclaredMembers`]).
fn polled(
    ctx: &Context,
    at: &Location,
    cluster: &DBCluster,
    observed: Option<&ObservedCluster>,
) -> Polled {
    let identifier = cluster.identifier();
    let alarms = (plan::alarms::has_alarms(cluster))
        .then(|| at.observer.alarms_of(&database_key(&identifier, true)))
        .flatten();
    let (exists, settled) = (observed.is_some(), at.observer.intervals.settled);
    let maintenance = crate::maintenance::aws::listed(at, "cluster", &identifier, exists, settled);
    let deleting = cluster.metadata.deletion_timestamp.is_some();
    Polled {
        member_states: member_states(at, observed),
        declared_members: match deleting {
            true => Vec::new(),
            false => ctx.shared::<DeclaredMembers>().of(ctx, cluster),
        },
        health: health(at, cluster, observed),
        alarms,
        maintenance,
    }
}

/// The figures of a cluster of ours from the last health poll, which this asks to read them from
/// now on; None for one being deleted or not ours.
fn health(
    at: &Location,
    cluster: &DBCluster,
    observed: Option<&ObservedCluster>,
) -> Option<crate::rds_state::ObservedHealth> {
    let uid = cluster.metadata.uid.as_deref().unwrap_or_default();
    let o = observed.filter(|o| crate::managed::tags::owned_by(&o.tags, uid))?;
    if cluster.metadata.deletion_timestamp.is_some() || plan::observe_only(cluster) {
        return None;
    }
    at.observer
        .want_cluster_health(&o.identifier, plan::health::metrics(cluster));
    at.observer.health(&database_key(&o.identifier, true))
}

/// The endpoint of a limitless cluster's DB shard group, while its connection Secret is written:
/// from the shared listing of shard groups while it is fresh (no call of its own), else one
/// DescribeDBShardGroups of the cluster; nothing for a standard cluster.
async fn shard_group(
    at: &Location,
    cluster: &DBCluster,
    writing: bool,
) -> Result<Option<String>, Error> {
    use crate::database::choices::ClusterScalabilityType::Limitless;
    use crate::database::shard_group::{ObservedShardGroup, endpoint_of};
    if !writing || cluster.spec.cluster_scalability_type != Some(Limitless) {
        return Ok(None);
    }
    let identifier = cluster.identifier();
    let listing = at.observer.listing::<ObservedShardGroup>();
    Ok(match listing.all(at.observer.intervals.settled) {
        Some(groups) => endpoint_of(&groups, &identifier),
        None => at.rds.shard_group_endpoint(&identifier).await?,
    })
}

/// Ours gone (an out-of-band deletion): the account and region, and the cluster snapshots of the
/// identifier.
async fn gone_reads(
    at: &Location,
    identifier: &str,
    gone: bool,
) -> Result<(Option<AwsIdentity>, Vec<SnapshotInfo>), Error> {
    Ok(match gone {
        true => (
            Some(at.identity().await?),
            at.rds.cluster_snapshots_of(identifier).await?,
        ),
        false => (None, Vec::new()),
    })
}

/// Which master password to read: none while paused; a secondary's is its primary DBCluster's.
/// Whether the DBCluster the observed cluster's ownership tags name (another one of the
/// namespace) still exists; None when they name none.
async fn tagged_owner_alive(
    ctx: &Context,
    namespace: &str,
    cluster: &DBCluster,
    observed: Option<&ObservedCluster>,
) -> Result<Option<bool>, Error> {
    match observed.and_then(|o| plan::tagged_owner(cluster, o)) {
        Some(owner) => Ok(Some(owner_alive(ctx, namespace, owner).await?)),
        None => Ok(None),
    }
}

/// The secret RDS manages the cluster's master password in.
fn secret_arn(observed: Option<&ObservedCluster>) -> Option<&str> {
    observed.and_then(|o| o.master_user_secret_arn.as_deref())
}

fn password_read(
    cluster: &DBCluster,
    observed: Option<&ObservedCluster>,
    secondary: Option<&(Result<plan::Global, String>, PasswordRead)>,
) -> PasswordRead {
    match (plan::paused(cluster), secondary) {
        (true, _) => PasswordRead::None,
        (false, Some((_, read))) => read.clone(),
        (false, None) => plan::password_read(cluster, observed),
    }
}

/// What dbSubnetGroupRef and dbClusterParameterGroupRef resolve to (not read at deletion).
async fn references(
    ctx: &Context,
    cluster: &DBCluster,
    namespace: &str,
) -> Result<
    (
        Option<Result<String, String>>,
        Option<Result<String, String>>,
    ),
    Error,
> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return Ok((None, None));
    }
    let client = &ctx.client;
    let subnet_group = match &cluster.spec.network.db_subnet_group_ref {
        Some(r) => Some(references::resolve::<DBSubnetGroup>(client, namespace, &r.name).await?),
        None => None,
    };
    let parameter_group = match &cluster.spec.db_cluster_parameter_group_ref {
        Some(r) => {
            let name = &r.name;
            Some(references::resolve::<DBClusterParameterGroup>(client, namespace, name).await?)
        }
        None => None,
    };
    Ok((subnet_group, parameter_group))
}

/// The namespaces of the other DBClusters that observe a cluster of this identifier in the same
/// account and region (or whose place is not recorded yet), as the watches know them.
fn observers_of(ctx: &Context, cluster: &DBCluster, here: &Placement) -> Vec<String> {
    let same_place = |c: &DBCluster| {
        (c.status.as_ref().and_then(|s| s.common.placement.as_ref()))
            .is_none_or(|p| p.account_id == here.account_id && p.region == here.region)
    };
    (ctx.shared::<Stores<DBCluster>>().all().into_iter())
        .filter(|c| {
            c.metadata.uid != cluster.metadata.uid && c.identifier() == cluster.identifier()
        })
        .filter(|c| same_place(c) && plan::observe_only(c))
        .filter_map(|c| c.metadata.namespace.clone())
        .collect()
}

/// The RDS state of each member, as the shared poll of instances last saw it (no call).
fn member_states(
    at: &Location,
    observed: Option<&ObservedCluster>,
) -> std::collections::BTreeMap<String, String> {
    (observed.iter().flat_map(|o| &o.members))
        .filter_map(|m| {
            let found = at.observer.last_polled(&m.identifier)?.instance?;
            Some((m.identifier.clone(), found.status))
        })
        .collect()
}

/// The RDS identifiers of the DBInstances that name a cluster theirs, as the watches know them.
/// DBInstance names DBCluster, not the other way: it registers at start (`Managed::declare`) how
/// they are found, as a kind referred to registers a [`references::Resolver`].
#[derive(Default)]
pub struct DeclaredMembers(std::sync::OnceLock<fn(&Context, &DBCluster) -> Vec<String>>);

impl DeclaredMembers {
    pub fn register(&self, of: fn(&Context, &DBCluster) -> Vec<String>) {
        let _ = self.0.set(of);
    }

    fn of(&self, ctx: &Context, cluster: &DBCluster) -> Vec<String> {
        (self.0.get()).map_or_else(Vec::new, |of| of(ctx, cluster))
    }
}

/// Whether the DBCluster (name, uid) of this namespace a cluster's ownership tags name exists.
async fn owner_alive(
    ctx: &Context,
    namespace: &str,
    (name, uid): (String, String),
) -> Result<bool, Error> {
    let api: Api<DBCluster> = Api::namespaced(ctx.client.clone(), namespace);
    let owner = (api.get_opt(&name).await).map_err(kube_err("get DBCluster"))?;
    Ok(owner.is_some_and(|o| o.uid().as_deref() == Some(uid.as_str())))
}

/// The cluster: from the shared listing where it may serve, else (and always at deletion) by a
/// DescribeDBClusters of its own, from the namespace's read budget; whether it was read directly.
async fn observe(
    ctx: &Context,
    cluster: &DBCluster,
    at: &Location,
) -> Result<(Option<ObservedCluster>, bool), Error> {
    let identifier = cluster.identifier();
    let polled = match (
        cluster.metadata.deletion_timestamp.is_some(),
        plan::direct_read(cluster),
    ) {
        (true, true) => None,
        (true, false) => Some(None),
        (false, _) => (at.observer.listing::<ObservedCluster>())
            .get(&identifier, at.observer.intervals.settled)
            .map(Some),
    };
    Ok(match polled {
        Some(observed) => (observed, false),
        None => {
            // From the namespace's budget of direct reads, as an instance's: one namespace cannot
            // spend the account's read rate for another.
            ctx.spend_read(&cluster.namespace().unwrap_or_default())?;
            let found = at.rds.describe_cluster(&identifier).await?;
            (at.observer.listing::<ObservedCluster>()).read_directly(&identifier, found.is_some());
            (found, true)
        }
    })
}

/// What spec.restoreFrom names, while restoring: a DBClusterSnapshot of the namespace resolves to
/// its RDS identifier once available (Ready); then the source as RDS has it.
async fn restore_reads(
    ctx: &Context,
    at: &Location,
    namespace: &str,
    reads: &plan::Reads,
) -> Result<(Option<Result<String, String>>, Option<RestoreSource>), Error> {
    let Some(r) = &reads.restore_source else {
        return Ok((None, None));
    };
    let client = &ctx.client;
    if let Some(clone) = &r.clone_of {
        // A clone's source: a DBCluster of the namespace, once Ready; then the cluster as RDS
        // has it.
        let resolved = references::resolve::<DBCluster>(client, namespace, &clone.name).await?;
        let source = match &resolved {
            Ok(identifier) => {
                let r = ClusterRestoreFrom {
                    source_db_cluster_identifier: Some(identifier.clone()),
                    ..r.clone()
                };
                Some(restore_source(at, &r).await?)
            }
            Err(_) => None,
        };
        return Ok((Some(resolved), source));
    }
    let Some(by_ref) = &r.db_cluster_snapshot_ref else {
        return Ok((None, Some(restore_source(at, r).await?)));
    };
    let resolved =
        references::resolve::<DBClusterSnapshot>(client, namespace, &by_ref.name).await?;
    let source = match &resolved {
        Ok(identifier) => {
            let r = ClusterRestoreFrom {
                db_cluster_snapshot_identifier: Some(identifier.clone()),
                ..r.clone()
            };
            Some(restore_source(at, &r).await?)
        }
        Err(_) => None,
    };
    Ok((Some(resolved), source))
}

/// What spec.restoreFrom's source is, read now: a cluster snapshot's tags and those of the
/// cluster it was taken of (while that still exists), or the source cluster's tags.
async fn restore_source(at: &Location, r: &ClusterRestoreFrom) -> Result<RestoreSource, Error> {
    let found = |tags, instance_tags| RestoreSource::Found {
        tags,
        instance_tags,
    };
    if let Some(snapshot) = &r.db_cluster_snapshot_identifier {
        let Some((s, source)) = at.rds.cluster_snapshot(snapshot).await? else {
            return Ok(RestoreSource::NotFound);
        };
        let source_tags = at.rds.describe_cluster(&source).await?.map(|c| c.tags);
        return Ok(found(s.tags, source_tags));
    }
    let Some(source) = &r.source_db_cluster_identifier else {
        return Ok(RestoreSource::NotFound);
    };
    Ok(match at.rds.describe_cluster(source).await? {
        Some(c) => found(c.tags, None),
        None => RestoreSource::NotFound,
    })
}

/// The members of the cluster (the DBInstances of the namespace that refer to it), read from the
/// API (fresh: a deletion waits on them).
async fn members(ctx: &Context, cluster: &DBCluster) -> Result<Vec<String>, Error> {
    let found = ctx
        .shared::<Referrers<DBCluster>>()
        .of(&ctx.client, cluster)
        .await?;
    Ok(found
        .into_iter()
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect())
}
