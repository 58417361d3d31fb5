//! Step 1 of a reconcile, read: everything a decision needs, gathered into [`Facts`]. What to read
//! beyond the DBInstance is itself decided by the plan ([`plan::look`], [`plan::reads`]); a
//! failure here is a failure to learn, never a decision.

use crate::database::parts::SecretRotation;
use crate::database::password::{PasswordFacts, password_and_rotation};
use crate::database::readers::kube::secret_and_readers;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::Api;

use crate::context::Context;
use crate::dbcluster::DBCluster;
use crate::dbinstance::aws::InstanceCalls;
use crate::dbinstance::aws::ReplicaCalls;
use crate::dbinstance::aws::RestoreCalls;
use crate::dbinstance::cache::InstanceStores;
use crate::dbinstance::cache::Instances;
use crate::dbinstance::plan::tenancy::{ReplicaSource, RestoreSource};
use crate::dbinstance::plan::{
    self, BlueGreenFacts, BlueGreenRead, Facts, GroupRead, GroupTags, Look, PasswordRead, spec,
};
use crate::dbinstance::{DBInstance, RestoreFrom};
use crate::dbparametergroup::DBParameterGroup;
use crate::dbsnapshot::DBSnapshot;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::maintenance::aws::listed;
use crate::managed;
use crate::managed::locate::Located;
use crate::optiongroup::OptionGroup;
use crate::rds_state::{AwsIdentity, Observation, ObservedAlarm, SnapshotInfo};
use crate::secrets;

/// Reads the RDS instance, the Secrets and the settings a decision about `db` needs.
pub async fn gather(db: &DBInstance, ctx: &Context, located: &Located) -> Result<Facts, Error> {
    let namespace = db.namespace().ok_or(Error::MissingObjectKey("namespace"))?;
    db.uid().ok_or(Error::MissingObjectKey("uid"))?;
    let (at, instances) = (&*located.location, ctx.shared::<Instances>());
    let intervals = at.observer.intervals;
    let identifier = db.identifier();
    let (observation, reads) = observe(db, ctx, at, &namespace).await?;
    let observed = observation.instance;
    let maintenance = listed(at, "db", &identifier, observed.is_some(), intervals.settled);
    let absent_for = (observed.is_none() && observation.direct)
        .then(|| at.observer.absent_for(&identifier))
        .flatten();
    let api: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
    let (password, secret_rotation) = passwords(db, ctx, (at, &api), &reads, &observed).await?;
    let previous = (db.status.as_ref()).and_then(|s| s.common.secret_readers.as_ref());
    let name = reads.connection_secret.as_deref();
    let (connection_secret, readers) = secret_and_readers(ctx, &namespace, name, previous).await?;
    let (identity, snapshots) = identity_and_snapshots(at, &reads).await?;
    let [subnet_group, parameter_group, option_group] =
        references(db, ctx, &namespace, &reads).await?;
    let cluster = match reads.references && spec::is_member(db) {
        true => Some(cluster(db, ctx, &namespace).await?),
        false => None,
    };
    let owner_alive = match &reads.owner {
        Some(owner) => Some(owner_alive(ctx, owner).await?),
        None => None,
    };
    let (snapshot_ref, restore_source, replica_source, blue_green) =
        sources(db, ctx, at, &reads).await?;
    let groups = group_tags(at, &reads.groups).await?;
    let release_candidates = release_candidates(&api, &reads.release_candidates).await?;
    Ok(Facts {
        db: db.clone(),
        observed,
        observed_directly: observation.direct,
        absent_for,
        // Only an absence decision needs to know of renames anywhere in the account.
        rename_in_progress: reads.identity && at.observer.rename_in_progress(),
        identity,
        snapshots,
        password,
        connection_secret,
        readers,
        secret_rotation,
        release_candidates,
        peers: (db.spec.connection.connection_secret.as_ref())
            .map(|c| instances.peers_using(&namespace, &c.name))
            .unwrap_or_default(),
        owner_alive,
        restore_source,
        snapshot_ref,
        replica_source,
        blue_green,
        groups,
        observers: match reads.observers {
            true => instances.observers_of(&identifier, db.uid().as_deref(), &located.placement),
            false => Vec::new(),
        },
        grants: ctx.grants.clone(),
        subnet_group,
        parameter_group,
        option_group,
        maintenance,
        cluster,
        hash_key: ctx.hash_key.clone(),
        ca_bundle: ctx.ca_bundle.clone(),
        intervals,
        placement: located.placement.clone(),
        now: crate::duration::now(),
        health: at.observer.health(&identifier),
        alarms: alarms(db, at, &identifier),
        class_offered: class_offered(ctx, at, &reads).await,
    })
}

/// Whether RDS offers the spec's class, when the plan asked (None: not known).
async fn class_offered(ctx: &Context, at: &Location, reads: &plan::Reads) -> Option<bool> {
    let c = reads.class.as_ref()?;
    let offered = ctx.shared::<crate::dbinstance::aws::OfferedClasses>();
    (offered.offered(&at.rds, &c.engine, c.version.as_deref(), &c.class)).await
}

/// The account and region, and the identifier's snapshots, as far as the plan asked.
async fn identity_and_snapshots(
    at: &Location,
    reads: &plan::Reads,
) -> Result<(Option<AwsIdentity>, Vec<SnapshotInfo>), Error> {
    let identity = match reads.identity {
        true => Some(at.identity().await?),
        false => None,
    };
    let snapshots = match &reads.snapshots_of {
        Some(identifier) => at.rds.snapshots_of(identifier).await?,
        None => Vec::new(),
    };
    Ok((identity, snapshots))
}

/// The instance's alarms at the observer's last listing, when the spec or status has some.
fn alarms(db: &DBInstance, at: &Location, identifier: &str) -> Option<Vec<ObservedAlarm>> {
    plan::health::has_alarms(db)
        .then(|| at.observer.alarms_of(identifier))
        .flatten()
}

/// The instance, from the shared poll where it may serve or read directly (from the namespace's
/// read budget), and what else the plan says to read; read again directly when the plan asks
/// (an adoption, a tag change: decided on what RDS says now).
async fn observe(
    db: &DBInstance,
    ctx: &Context,
    at: &Location,
    namespace: &str,
) -> Result<(Observation, plan::Reads), Error> {
    let identifier = db.identifier();
    let observer = &*at.observer;
    let mut observation = match plan::look(db) {
        Look::None => Observation::default(),
        look @ (Look::Shared | Look::SharedNow) => {
            let max_age = spec::drift_interval(&db.spec, &observer.intervals);
            let wait = look == Look::Shared;
            match observer.cached(&identifier, max_age, wait).await {
                Some(cached) => cached,
                None => {
                    ctx.direct_read(observer, namespace, &identifier, true)
                        .await?
                }
            }
        }
        Look::Direct => {
            ctx.direct_read(observer, namespace, &identifier, false)
                .await?
        }
    };
    let mut reads = plan::reads(db, observation.instance.as_ref());
    if reads.direct && !observation.direct {
        observation = ctx
            .direct_read(observer, namespace, &identifier, false)
            .await?;
        reads = plan::reads(db, observation.instance.as_ref());
    }
    Ok((observation, reads))
}

type Sources = (
    Option<Result<String, String>>,
    Option<RestoreSource>,
    Option<Result<ReplicaSource, String>>,
    Option<BlueGreenFacts>,
);

/// The instance's blue/green deployment, and (read directly) its green instance before the
/// switchover and the old one after it.
/// Green's replica lag is what the last health poll read, which this asks to read it from now on
/// (and to wake `db` when it moves).
async fn blue_green(
    at: &Location,
    read: &BlueGreenRead,
    db: &DBInstance,
) -> Result<BlueGreenFacts, Error> {
    let (facts, [green, old]) = crate::database::blue_green::aws::read(&at.rds, read).await?;
    let green = match green {
        Some(g) => at.rds.describe(&g).await?,
        None => None,
    };
    let old = match old {
        Some(o) => at.rds.describe(&o).await?,
        None => None,
    };
    let mut facts = facts.with(green, old);
    if let Some(g) = &facts.green {
        let owner = crate::observer::Owner {
            namespace: db.namespace(),
            name: db.name_any(),
        };
        at.observer.want_lag(&g.identifier, owner);
        facts.green_lag_seconds =
            (at.observer.health(&g.identifier)).and_then(|h| h.replica_lag_seconds);
    }
    Ok(facts)
}

/// What spec.restoreFrom and spec.replicaOf name, and the instance's blue/green deployment, as
/// far as the plan asked.
async fn sources(
    db: &DBInstance,
    ctx: &Context,
    at: &Location,
    reads: &plan::Reads,
) -> Result<Sources, Error> {
    let namespace = db.namespace().unwrap_or_default();
    // A DBSnapshot of the namespace is restored by its RDS identifier, once available.
    let snapshot_ref =
        match (reads.restore_source.as_ref()).and_then(|r| r.db_snapshot_ref.as_ref()) {
            Some(r) => {
                let client = &ctx.client;
                Some(managed::references::resolve::<DBSnapshot>(client, &namespace, &r.name).await?)
            }
            None => None,
        };
    let restore = match (&reads.restore_source, &snapshot_ref) {
        (Some(_), Some(Err(_))) | (None, _) => None,
        (Some(r), Some(Ok(identifier))) => {
            let r = RestoreFrom {
                db_snapshot_identifier: Some(identifier.clone()),
                ..r.clone()
            };
            Some(restore_source(at, &r).await?)
        }
        (Some(r), None) => Some(restore_source(at, r).await?),
    };
    let replica = match reads.replica_source {
        true => Some(replica_source(db, ctx, at, &namespace).await?),
        false => None,
    };
    let blue_green = match &reads.blue_green {
        Some(read) => Some(blue_green(at, read, db).await?),
        None => None,
    };
    Ok((snapshot_ref, restore, replica, blue_green))
}

/// A replica's password is its source DBInstance's: where that one keeps it (a source that does
/// not exist has none to read).
/// The master password (a replica's source's too), and the rotation rules of the secret RDS
/// manages.
async fn passwords(
    db: &DBInstance,
    ctx: &Context,
    (at, api): (&Location, &Api<Secret>),
    reads: &plan::Reads,
    observed: &Option<crate::rds_state::ObservedInstance>,
) -> Result<(PasswordFacts, Option<Option<SecretRotation>>), Error> {
    let namespace = db.namespace().unwrap_or_default();
    let read = source_password(ctx, &namespace, reads.password.clone()).await?;
    let arn = (observed.as_ref()).and_then(|o| o.master_user_secret_arn.as_deref());
    password_and_rotation(db, (at, api), read, (&db.spec.password, arn)).await
}

async fn source_password(
    ctx: &Context,
    namespace: &str,
    read: PasswordRead,
) -> Result<PasswordRead, Error> {
    let PasswordRead::Source { name } = read else {
        return Ok(read);
    };
    let api: Api<DBInstance> = Api::namespaced(ctx.client.clone(), namespace);
    let source = (api.get_opt(&name).await).map_err(kube_err("get DBInstance"))?;
    Ok(source.map_or(PasswordRead::None, |s| plan::replica::source_password(&s)))
}

/// What spec.replicaOf names: the RDS identifier of the DBInstance of this namespace it names
/// (once Ready), or the identifier or ARN it gives; and that instance's tags, read now.
async fn replica_source(
    db: &DBInstance,
    ctx: &Context,
    at: &Location,
    namespace: &str,
) -> Result<Result<ReplicaSource, String>, Error> {
    let Some(r) = &db.spec.replica_of else {
        return Ok(Err("the DBInstance is not a replica".into()));
    };
    let source = match (&r.name, &r.db_instance_identifier, &r.arn) {
        (Some(name), _, _) => {
            match managed::references::resolve::<DBInstance>(&ctx.client, namespace, name).await? {
                Ok(identifier) => identifier,
                Err(why) => return Ok(Err(why)),
            }
        }
        (None, Some(identifier), _) => identifier.clone(),
        (None, None, Some(arn)) => arn.clone(),
        (None, None, None) => return Ok(Err("replicaOf names no source".into())),
    };
    let described = at.rds.describe_source(&source).await?;
    let backup_retention = described.as_ref().and_then(|o| o.backup_retention_period);
    let found = match described {
        Some(o) => RestoreSource::Found {
            tags: o.tags,
            instance_tags: None,
        },
        None => RestoreSource::NotFound,
    };
    Ok(Ok(ReplicaSource {
        source,
        found,
        backup_retention,
    }))
}

/// The metadata of the Secrets a release may let go of (those that exist).
async fn release_candidates(api: &Api<Secret>, names: &[String]) -> Result<Vec<Secret>, Error> {
    let mut found = Vec::new();
    for name in names {
        found.extend(secrets::get_metadata(api, name).await?);
    }
    Ok(found)
}

/// What dbSubnetGroupRef, dbParameterGroupRef and optionGroupRef resolve to, when the plan needs
/// them.
async fn references(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
    reads: &plan::Reads,
) -> Result<[Option<Result<String, String>>; 3], Error> {
    use managed::references::resolve;
    let client = &ctx.client;
    let subnet_group = match &db.spec.network.db_subnet_group_ref {
        Some(r) if reads.references => {
            Some(resolve::<DBSubnetGroup>(client, namespace, &r.name).await?)
        }
        _ => None,
    };
    let parameter_group = match &db.spec.db_parameter_group_ref {
        Some(r) if reads.references => {
            Some(resolve::<DBParameterGroup>(client, namespace, &r.name).await?)
        }
        _ => None,
    };
    let option_group = match &db.spec.option_group_ref {
        Some(r) if reads.references => {
            Some(resolve::<OptionGroup>(client, namespace, &r.name).await?)
        }
        _ => None,
    };
    Ok([subnet_group, parameter_group, option_group])
}

/// What a member's cluster resolves to: the DBCluster of dbClusterRef, or the DBCluster of this
/// namespace whose RDS identifier dbClusterIdentifier names (a cluster no DBCluster of the
/// namespace manages is not this namespace's to join), once it is Ready or stopped as its spec
/// says.
async fn cluster(
    db: &DBInstance,
    ctx: &Context,
    namespace: &str,
) -> Result<Result<String, String>, Error> {
    let name = match (&db.spec.db_cluster_ref, &db.spec.db_cluster_identifier) {
        (Some(r), _) => r.name.clone(),
        (None, Some(identifier)) => {
            let api: Api<DBCluster> = Api::namespaced(ctx.client.clone(), namespace);
            let list =
                (api.list(&Default::default()).await).map_err(kube_err("list DBClusters"))?;
            let found =
                (list.items.iter()).find(|c| c.identifier().eq_ignore_ascii_case(identifier));
            match found {
                Some(c) => c.name_any(),
                None => {
                    return Ok(Err(format!(
                        "no DBCluster of this namespace manages RDS cluster {identifier}; a member \
                         joins only a cluster of its own namespace"
                    )));
                }
            }
        }
        (None, None) => return Ok(Err("the DBInstance is not a cluster member".into())),
    };
    // A stopped cluster's members are stopped with it: they report it. (One that waits for its
    // members to serve is usable: `Referable::USABLE_WHEN`.)
    managed::references::resolve_also::<DBCluster>(&ctx.client, namespace, &name, &["Stopped"])
        .await
}

/// Whether the DBInstance (namespace, name, uid) an instance's tags name still exists.
async fn owner_alive(
    ctx: &Context,
    (namespace, name, uid): &(String, String, String),
) -> Result<bool, Error> {
    let api: Api<DBInstance> = Api::namespaced(ctx.client.clone(), namespace);
    let owner = (api.get_opt(name).await).map_err(kube_err("get DBInstance"))?;
    Ok(owner.is_some_and(|o| o.uid().as_deref() == Some(uid.as_str())))
}

/// What spec.restoreFrom's source is, read now: a snapshot's tags and those of the instance it was
/// taken of (while that still exists), or the source instance's tags.
async fn restore_source(at: &Location, r: &RestoreFrom) -> Result<RestoreSource, Error> {
    if let Some(snapshot) = &r.db_snapshot_identifier {
        let Some((s, instance_tags)) = at.rds.snapshot_with_instance_tags(snapshot).await? else {
            return Ok(RestoreSource::NotFound);
        };
        return Ok(RestoreSource::Found {
            tags: s.tags,
            instance_tags,
        });
    }
    let Some(source) = &r.source_db_instance_identifier else {
        return Ok(RestoreSource::NotFound);
    };
    Ok(match at.rds.describe(source).await? {
        Some(o) => RestoreSource::Found {
            tags: o.tags,
            instance_tags: None,
        },
        None => RestoreSource::NotFound,
    })
}

/// The tags of the groups the spec names (ListTagsForResource by the ARN each would have in the
/// instance's account and region; None: RDS has no such group).
async fn group_tags(at: &Location, groups: &[GroupRead]) -> Result<Vec<GroupTags>, Error> {
    let mut found = Vec::new();
    for g in groups {
        let me = at.identity().await?;
        let arn = format!(
            "arn:aws:rds:{}:{}:{}:{}",
            me.region, me.account, g.resource, g.name
        );
        found.push((g.field, at.rds.tags_if_any(&arn).await?));
    }
    Ok(found)
}
