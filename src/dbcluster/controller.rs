//! DBCluster on the skeleton (`managed::skeleton`): read (the cluster from the shared listing, or
//! directly; its Secrets; its references; at deletion its members), the pure plan (`plan.rs`), one
//! step at a time, and the status. Nothing here decides what to call or what to report.

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use tracing::info;

use super::aws::CreateCluster;
use super::observed::ObservedCluster;
use super::plan::{self, Facts, Plan, Step};
use super::{ClusterRestoreFrom, DBCluster, DBClusterStatus};
use crate::context::Context;
use crate::crd::SECRET_OWNER_ANNOTATION;
use crate::database::password::PasswordRead;
use crate::database::tenancy::RestoreSource;
use crate::dbclusterparametergroup::DBClusterParameterGroup;
use crate::dbclustersnapshot::DBClusterSnapshot;
use crate::dbclustersnapshot::controller::SourceCluster;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::{Error, kube_err};
use crate::globalcluster::controller::PrimaryCluster;
use crate::globalcluster::{GlobalCluster, ObservedGlobalCluster};
use crate::locations::Location;
use crate::managed::locate::{AccountUsers, Located};
use crate::managed::placement::Placement;
use crate::managed::plan::GroupStatus;
use crate::managed::plan::PlannedEvent;
use crate::managed::references::Referable;
use crate::managed::references::Referrers;
use crate::managed::stores::Stores;
use crate::managed::{Failure, Managed, apiserver, conditions, references, scoped};
use crate::rds_state::{AwsIdentity, SnapshotInfo};
use crate::secrets::{self};

/// The DBClusters a Secret's change wakes: the Secrets it wrote (by ownerReference or owner
/// annotation) and the password Secret it refers to.
fn secret_wakes(
    store: Store<DBCluster>,
) -> impl Fn(PartialObjectMeta<Secret>) -> Vec<ObjectRef<DBCluster>> + Send + Sync + 'static {
    move |secret: PartialObjectMeta<Secret>| {
        let (ns, name) = (secret.namespace(), secret.name_any());
        let owner_uid = secret.annotations().get(SECRET_OWNER_ANNOTATION).cloned();
        let owners: Vec<String> = (secret.owner_references().iter())
            .filter(|o| o.kind == "DBCluster")
            .map(|o| o.uid.clone())
            .chain(owner_uid)
            .collect();
        (store.state().into_iter())
            .filter(|c| {
                c.namespace() == ns
                    && ((c.spec.password.master_user_password.as_ref())
                        .is_some_and(|r| r.name == name)
                        || c.uid().is_some_and(|u| owners.contains(&u)))
            })
            .map(|c| ObjectRef::from_obj(&*c))
            .collect()
    }
}

impl Referable for DBCluster {
    type Status = DBClusterStatus;
    const LABEL: &'static str = "DBCluster";
    fn status(&self) -> Option<&DBClusterStatus> {
        self.status.as_ref()
    }
    fn conditions(status: &DBClusterStatus) -> &[crate::database::parts::Condition] {
        &status.reported.conditions
    }
    fn rds_name(status: &DBClusterStatus) -> Option<String> {
        status.db_cluster_identifier.clone()
    }
}

async fn read(cluster: &DBCluster, ctx: &Context, located: &Located) -> Result<Facts, Error> {
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    let at = &*located.location;
    let intervals = at.observer.intervals;
    let identifier = cluster.identifier();
    let deleting = cluster.metadata.deletion_timestamp.is_some();
    let (observed, observed_directly) = match plan::paused(cluster) {
        // Paused: no AWS call at all.
        true => (None, false),
        false => observe(ctx, cluster, at).await?,
    };
    let tagged = observed
        .as_ref()
        .and_then(|o| plan::tagged_owner(cluster, o));
    let owner_alive = match tagged {
        Some(owner) => Some(owner_alive(ctx, &namespace, owner).await?),
        None => None,
    };
    let absent_for = (observed_directly && observed.is_none())
        .then(|| (at.observer.listing::<ObservedCluster>()).absent_for(&identifier))
        .flatten();
    let reads = plan::reads(cluster, observed.as_ref());
    let (identity, snapshots) = gone_reads(at, &identifier, reads.gone).await?;
    let (snapshot_ref, restore_source) = restore_reads(ctx, at, &namespace, &reads).await?;
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let secondary = super::global::secondary(ctx, cluster).await?;
    let read = password_read(cluster, observed.as_ref(), secondary.as_ref());
    let password = crate::database::password::password(cluster, at, &api, read).await?;
    let connection_secret = match (&cluster.spec.connection.connection_secret, &observed) {
        (Some(c), Some(_)) if !deleting => secrets::get(&api, &c.name).await?,
        _ => None,
    };
    let (subnet_group, parameter_group) = references(ctx, cluster, &namespace).await?;
    let referrers = match observed_directly && deleting {
        true => members(ctx, cluster).await?,
        false => Vec::new(),
    };
    let member_states = member_states(at, observed.as_ref());
    let (global_members, global_endpoint) =
        super::global::member_reads(at, cluster, observed.as_ref(), observed_directly).await?;
    let exists = observed.is_some();
    let maintenance =
        crate::maintenance::aws::listed(at, "cluster", &identifier, exists, intervals.settled);
    let blue_green = super::blue_green::read(at, cluster, reads.blue_green.as_ref()).await?;
    Ok(Facts {
        cluster: cluster.clone(),
        observed,
        observed_directly,
        password,
        connection_secret,
        subnet_group,
        parameter_group,
        referrers,
        absent_for,
        identity,
        snapshots,
        snapshot_ref,
        restore_source,
        global: secondary.map(|(global, _)| global),
        global_members,
        global_endpoint,
        maintenance,
        blue_green,
        grants: ctx.grants.clone(),
        owner_alive,
        observers: observers_of(ctx, cluster, &located.placement),
        member_states,
        hash_key: ctx.hash_key.clone(),
        ca_bundle: ctx.ca_bundle.clone(),
        intervals,
        placement: located.placement.clone(),
        now: crate::duration::now(),
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
        (c.status.as_ref().and_then(|s| s.placement.as_ref()))
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
    let Some(by_ref) = &r.db_cluster_snapshot_ref else {
        return Ok((None, Some(restore_source(at, r).await?)));
    };
    let client = &ctx.client;
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

/// Runs one step: the Kubernetes writes here, the RDS calls in [`act_rds`].
async fn act(ctx: &Context, at: &Located, cluster: &DBCluster, step: &Step) -> Result<(), Error> {
    let namespace = cluster
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    match step {
        Step::AddFinalizer => apiserver::set_finalizer(ctx, cluster, true).await?,
        Step::RemoveFinalizer => apiserver::set_finalizer(ctx, cluster, false).await?,
        Step::Secret(secret) => crate::database::secret::act(&api, cluster, secret).await?,
        Step::ClearSwitchoverAnnotation => {
            let key = crate::database::blue_green::SWITCHOVER_ANNOTATION;
            apiserver::remove_annotation(ctx, cluster, key).await?
        }
        _ => act_rds(at, step).await?,
    }
    Ok(())
}

/// The steps that call RDS; the shared listing is stale for the cluster after each.
async fn act_rds(at: &Located, step: &Step) -> Result<(), Error> {
    let (rds, observer) = (&at.location.rds, &at.location.observer);
    // The shared listing is stale for the cluster while the call is out, then until a listing
    // that starts after its answer.
    let _stale = (step.mutates()).map(|id| observer.listing::<ObservedCluster>().changing(id));
    match step {
        Step::Create {
            identifier,
            spec,
            password,
            tags,
            global,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            let global = global.as_deref();
            let request = CreateCluster {
                identifier,
                spec,
                password,
                tags,
                global,
            };
            rds.create_cluster(&request).await?;
            info!(identifier, global, "created RDS cluster");
        }
        Step::Detach {
            identifier,
            global,
            arn,
        } => {
            let _stale = (observer.listing::<ObservedGlobalCluster>()).changing(global);
            rds.remove_from_global_cluster(global, arn).await?;
            info!(
                identifier,
                global, "detaching RDS cluster from its global database"
            );
        }
        Step::Modify {
            identifier,
            modification,
            password,
        } => {
            let password = password.as_ref().map(|p| &p.0);
            rds.modify_cluster(identifier, modification, password)
                .await?;
            let fields = modification.field_list();
            info!(identifier, fields, "sent changes to RDS cluster");
        }
        Step::Restore { .. } | Step::RestoreToPointInTime { .. } => restore(rds, step).await?,
        Step::BlueGreen { .. } | Step::DeleteMember { .. } => {
            super::blue_green::act(rds, step).await?
        }
        Step::ApplyMaintenance(m) => {
            crate::maintenance::aws::apply(&at.location, "cluster", m).await?
        }
        Step::RebootMember { identifier, .. } => {
            // The member's state is unknown until it is read again.
            observer.mutated(identifier);
            rds.reboot(identifier).await?;
            info!(
                identifier,
                "rebooting a cluster member for static parameter changes"
            );
        }
        Step::AddTags { arn, tags, .. } => rds.add_tags(arn, tags).await?,
        Step::RemoveTags { arn, keys, .. } => rds.remove_tags(arn, keys).await?,
        Step::Delete {
            identifier,
            final_snapshot,
        } => {
            rds.delete_cluster(identifier, final_snapshot.as_deref())
                .await?;
            info!(identifier, final_snapshot, "deleting RDS cluster");
        }
        // Kubernetes steps are run by `act`.
        _ => {}
    }
    Ok(())
}

/// A restore, from a cluster snapshot or to a point in time.
async fn restore(rds: &crate::rds::Rds, step: &Step) -> Result<(), Error> {
    match step {
        Step::Restore {
            identifier,
            snapshot,
            spec,
            tags,
        } => {
            rds.restore_cluster(identifier, snapshot, spec, tags)
                .await?;
            info!(
                identifier,
                snapshot, "restoring RDS cluster from a snapshot"
            );
        }
        Step::RestoreToPointInTime {
            identifier,
            source,
            time,
            spec,
            tags,
        } => {
            let time = time.as_deref();
            (rds.restore_cluster_to_point_in_time(identifier, source, time, spec, tags)).await?;
            info!(
                identifier,
                source, time, "restoring RDS cluster to a point in time"
            );
        }
        _ => {}
    }
    Ok(())
}

/// The status after a pass: the plan's fields, with its conditions merged into the previous ones.
fn settled(
    previous: Option<&DBClusterStatus>,
    planned: &GroupStatus<DBClusterStatus>,
    generation: Option<i64>,
    now: &str,
) -> DBClusterStatus {
    let mut status = planned.fields.clone();
    let before = previous.map_or(&[][..], |s| &s.reported.conditions[..]);
    let (ready, synced, busy) = (&planned.ready, &planned.synced, planned.busy);
    status.reported.conditions =
        conditions::conditions(before, ready, synced, busy, generation, now);
    status.reported.observed_generation = generation;
    status
}

impl Managed for DBCluster {
    const KIND: &'static str = "DBCluster";
    type Ctx = Context;
    type Facts = Facts;
    type Step = Step;
    type Plan = Plan;
    type Answer = ();
    type Status = DBClusterStatus;
    type Where = Located;

    /// A DBCluster can use an account (`locate::AccountUsers`).
    fn declare(ctx: &Context) {
        ctx.shared::<AccountUsers>().declare::<DBCluster>();
        // A DBClusterSnapshot's source names a DBCluster.
        (ctx.shared::<references::Resolver<SourceCluster>>()).register::<DBCluster>();
        // A GlobalCluster's primary names a DBCluster.
        (ctx.shared::<references::Resolver<PrimaryCluster>>()).register::<DBCluster>();
    }

    fn watches(
        controller: Controller<DBCluster>,
        ctx: &Context,
        namespace: Option<&str>,
    ) -> Controller<DBCluster> {
        let store = controller.store();
        ctx.shared::<Stores<DBCluster>>().add(store.clone());
        let secrets = scoped::<PartialObjectMeta<Secret>>(&ctx.client, namespace);
        let controller = controller.watches_stream(
            watcher(secrets, watcher::Config::default().any_semantic()).touched_objects(),
            secret_wakes(store.clone()),
        );
        // A member that comes or goes wakes its cluster (a deletion waits on them).
        let referrers = ctx.shared::<Referrers<DBCluster>>();
        let controller = referrers.wake(controller, &ctx.client, namespace);
        // Its groups turning Ready (or changing) wake the DBClusters that refer to them.
        let controller = references::wakes_by_reference::<_, DBSubnetGroup>(
            controller,
            ctx,
            namespace,
            |c: &DBCluster| {
                c.spec
                    .network
                    .db_subnet_group_ref
                    .as_ref()
                    .map(|r| r.name.as_str())
            },
        );
        // A restore from a DBClusterSnapshot waits for it to be available.
        let controller = references::wakes_by_reference::<_, DBClusterSnapshot>(
            controller,
            ctx,
            namespace,
            |c: &DBCluster| {
                (c.spec.restore_from.as_ref())
                    .and_then(|r| r.db_cluster_snapshot_ref.as_ref())
                    .map(|r| r.name.as_str())
            },
        );
        // A secondary waits for its GlobalCluster to be Ready.
        let controller = references::wakes_by_reference::<_, GlobalCluster>(
            controller,
            ctx,
            namespace,
            |c: &DBCluster| (c.spec.global_cluster_ref.as_ref()).map(|r| r.name.as_str()),
        );
        let controller = references::wakes_by_reference::<_, DBClusterParameterGroup>(
            controller,
            ctx,
            namespace,
            |c: &DBCluster| {
                (c.spec.db_cluster_parameter_group_ref.as_ref()).map(|r| r.name.as_str())
            },
        );
        crate::managed::locate::woken_by_accounts(controller, ctx)
    }

    async fn locate(&self, ctx: &Context) -> Result<Located, Error> {
        crate::managed::locate::locate(self, ctx).await
    }

    fn may_act(ctx: &Context, at: &Located) -> bool {
        at.may_act(ctx)
    }

    async fn read(&self, ctx: &Context, at: &Located) -> Result<Facts, Error> {
        read(self, ctx, at).await
    }

    fn plan(facts: &Facts) -> Plan {
        plan::plan(facts)
    }

    async fn act(&self, ctx: &Context, at: &Located, step: &Step) -> Result<Option<()>, Error> {
        act(ctx, at, self, step).await?;
        Ok(None)
    }

    fn status(&self) -> Option<&DBClusterStatus> {
        self.status.as_ref()
    }

    fn settle(&self, facts: &Facts, plan: &Plan, _: Option<&()>) -> Option<DBClusterStatus> {
        let planned = plan.status.as_ref()?;
        let generation = self.meta().generation;
        let mut status = settled(self.status.as_ref(), planned, generation, &facts.now);
        status.placement = Some(facts.placement.clone());
        Some(status)
    }

    fn failed(&self, failure: &Failure<'_, Plan>) -> (DBClusterStatus, Option<PlannedEvent>) {
        let previous = self.status.as_ref();
        let before = previous.map_or(&[][..], |s| &s.reported.conditions[..]);
        let (ready, synced, event) = conditions::failed(before, failure.reason, failure.message);
        let planned = failure.planned.and_then(|p| p.status.as_ref());
        let ready =
            conditions::ready_after_failure(planned.map(|p| &p.ready), ready, failure.reason);
        // What the plan meant to report (a restore under way, say) is not true yet: the fields
        // stay as last written.
        let fields = previous.cloned().unwrap_or_default();
        let status = GroupStatus {
            fields,
            ready,
            synced,
            busy: false,
        };
        let mut status = settled(previous, &status, self.meta().generation, failure.now);
        // Where the cluster lives is only ever recorded by a pass that placed it.
        status.placement = previous.and_then(|p| p.placement.clone());
        (status, event)
    }
}
