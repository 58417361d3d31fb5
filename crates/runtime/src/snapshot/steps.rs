//! The steps of a snapshot kind, over [`SnapshotKind`]: what a reconcile reads (the snapshot of
//! the name; while it is still to be taken, its source; with a schedule, the source's manual
//! snapshots; while the spec or status names a share, the restore attribute), which plan decides
//! (one snapshot's, or a schedule's), and the calls it makes. The kind's `impl NamedKind` hands its
//! `observe`, `plan` and `act` to these.

use std::collections::BTreeMap;

use kube::Api;

use crate::context::Context;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::named::Shared;
use crate::rds::arn_part;

use super::plan::{Facts, Own, Plan};
use super::{Extra, Listed, ObservedSnapshot, Reference, Shares, SnapshotKind, Source};

/// The read step: the snapshot of the name (from the shared listing while it may serve it and it
/// is this object's; else, and at deletion, from RDS) and what else the plan needs.
pub async fn observe<K: SnapshotKind>(
    snapshot: &K,
    shared: &Shared,
    at: &Location,
) -> Result<(Option<Listed<K>>, Extra), Error> {
    let deleting = snapshot.meta().deletion_timestamp.is_some();
    let ctx = &shared.ctx;
    if snapshot.options().schedule.is_some() {
        return Ok((None, series(snapshot, ctx, at, deleting).await?));
    }
    let name = snapshot.rds_name_of();
    // A snapshot not this object's is read directly too: its claim (adoption) is decided on a
    // fresh read.
    let uid = snapshot.meta().uid.as_deref().unwrap_or_default();
    let listed = K::listed(at, &name, shared.drift_interval)
        .filter(|o| crate::managed::tags::owned_by(&o.tags, uid));
    let observed = match listed.filter(|_| !deleting) {
        Some(snapshot) => Some(snapshot),
        None => K::describe(&at.rds, &name).await?,
    };
    let taken = snapshot
        .status()
        .map(K::fields)
        .is_some_and(|f| f.report.arn.is_some());
    let source = match observed.is_none() && !deleting && !taken {
        true => source(snapshot, ctx, at).await?,
        false => Source::NotRead,
    };
    let shares = match &observed {
        Some(o) if o.status == "available" && !deleting && sharing(snapshot) => {
            Some(shares::<K>(snapshot, ctx, at, std::slice::from_ref(&o.name)).await?)
        }
        _ => None,
    };
    let instance_tags = match &observed {
        Some(o) if !deleting && tagged_for_another(snapshot, o) => {
            source_tags::<K>(&at.rds, o).await?
        }
        _ => None,
    };
    // The export task while one is asked and not known to be done: read before any is sent.
    let recorded = snapshot
        .status()
        .map(K::fields)
        .and_then(|f| f.report.export);
    let export = match (
        &observed,
        super::export::to_read(snapshot, recorded.as_ref()),
    ) {
        (Some(o), Some(task)) if o.status == "available" && !deleting => {
            Some(at.rds.export_task(&task).await?)
        }
        _ => None,
    };
    let extra = Extra {
        source,
        series: None,
        shares,
        adoption: ctx.grants.adoption.clone(),
        instance_tags,
        export,
        role_grants: ctx.grants.roles.clone(),
    };
    Ok((observed.map(Listed::from), extra))
}

/// The kind's plan, pure: one snapshot (`plan.rs`), or a schedule's (`schedule.rs`).
pub fn plan<K: SnapshotKind>(f: &Facts<K>) -> Plan<K> {
    match &f.object.options().schedule {
        Some(schedule) => super::schedule::plan(f, schedule),
        None => super::plan::plan(f),
    }
}

/// The act step of a call only the snapshot kinds make.
pub async fn act<K: SnapshotKind>(at: &Location, step: &Own) -> Result<(), Error> {
    let rds = &at.rds;
    match step {
        Own::Create {
            name,
            instance,
            tags,
        } => Ok(K::create(rds, name, instance, tags).await?),
        Own::Copy {
            name,
            source,
            kms_key_id,
            copy_tags,
            tags,
        } => {
            let kms = kms_key_id.as_deref();
            Ok(K::copy(rds, name, source, kms, *copy_tags, tags).await?)
        }
        Own::Share { name, add, remove } => Ok(K::share(rds, name, add, remove).await?),
        Own::Export(export) => Ok(rds.start_export_task(export).await?),
    }
}

/// Whether RDS's snapshot carries ownership tags that are not this object's (perhaps its
/// source's, which RDS copied): then the source's tags are read, for the claim rule.
fn tagged_for_another<K: SnapshotKind>(snapshot: &K, o: &ObservedSnapshot) -> bool {
    let uid = snapshot.meta().uid.as_deref().unwrap_or_default();
    o.tags.contains_key(crate::crd::OWNER_TAG) && !crate::managed::tags::owned_by(&o.tags, uid)
}

/// Whether the spec or the status names a share: only then is it read.
fn sharing<K: SnapshotKind>(snapshot: &K) -> bool {
    let recorded =
        (snapshot.status().map(K::fields)).is_some_and(|f| !f.report.shared_with.is_empty());
    !snapshot.options().shared_with.is_empty() || recorded
}

/// Who may restore each of these snapshots now, and who may be given them: the AWS account IDs of
/// the AWSAccounts granted to the namespace (of the last role of each chain), and the operator's
/// settings.
async fn shares<K: SnapshotKind>(
    snapshot: &K,
    ctx: &Context,
    at: &Location,
    names: &[String],
) -> Result<Shares, Error> {
    let namespace = snapshot.meta().namespace.clone().unwrap_or_default();
    let accounts = ctx.directory.granted_accounts(&namespace);
    let mut current = BTreeMap::new();
    for name in names {
        current.insert(name.clone(), K::shares(&at.rds, name).await?);
    }
    Ok(Shares {
        current,
        accounts,
        grants: ctx.grants.clone(),
    })
}

/// A schedule's source (not at deletion) and every manual snapshot of the source, read directly:
/// the deletion of the oldest is decided on them.
async fn series<K: SnapshotKind>(
    snapshot: &K,
    ctx: &Context,
    at: &Location,
    deleting: bool,
) -> Result<Extra, Error> {
    let source = match deleting {
        true => Source::NotRead,
        false => source(snapshot, ctx, at).await?,
    };
    let recorded = snapshot.status().map(K::fields).and_then(|f| f.source);
    let instance = match &source {
        Source::Found { identifier, .. } | Source::NotFound(identifier) => Some(identifier.clone()),
        Source::NotRead | Source::Unresolved(_) => recorded,
    };
    let series = match instance {
        Some(instance) => K::snapshots_of(&at.rds, &instance).await?,
        None => Vec::new(),
    };
    // While a share is asked or recorded: who may restore each available snapshot it made.
    let uid = snapshot.meta().uid.as_deref().unwrap_or_default();
    let kept: Vec<String> = (series.iter())
        .filter(|o| o.status == "available" && crate::managed::tags::owned_by(&o.tags, uid))
        .map(|o| o.name.clone())
        .collect();
    let shares = match !deleting && sharing(snapshot) {
        true => Some(shares::<K>(snapshot, ctx, at, &kept).await?),
        false => None,
    };
    Ok(Extra {
        source,
        series: Some(series),
        shares,
        ..Extra::default()
    })
}

/// The source, read now: an object of the namespace resolves to its RDS identifier once Ready;
/// then the instance or cluster as RDS has it (its state, and the tags the tenancy rules read).
async fn source<K: SnapshotKind>(
    snapshot: &K,
    ctx: &Context,
    at: &Location,
) -> Result<Source, Error> {
    let namespace = snapshot.meta().namespace.as_deref().unwrap_or_default();
    if let Some(from) = snapshot.copy_from() {
        return copy_source::<K>(&from, namespace, ctx, at).await;
    }
    let identifier = match snapshot.source() {
        Some(Reference::Name(name)) => match K::resolve_source(ctx, namespace, &name).await? {
            Ok(identifier) => identifier,
            Err(why) => return Ok(Source::Unresolved(why)),
        },
        Some(Reference::Identifier(identifier)) => identifier,
        None => return Ok(Source::Unresolved("the spec names no source".into())),
    };
    Ok(match K::describe_source(&at.rds, &identifier).await? {
        Some(o) => Source::Found {
            identifier,
            status: o.status,
            tags: o.tags,
            instance_tags: None,
            grants: ctx.grants.clone(),
        },
        None => Source::NotFound(identifier),
    })
}

/// The snapshot a copy is made of, read now where it lives: an object of the kind in the
/// namespace (by its ARN, once Ready) or the identifier or ARN the spec gives; its state, its tags
/// and those of what it was taken of while that exists (the tenancy rules read them).
async fn copy_source<K: SnapshotKind>(
    from: &Reference,
    namespace: &str,
    ctx: &Context,
    at: &Location,
) -> Result<Source, Error> {
    let source = match from {
        Reference::Name(name) => {
            let api: Api<K> = Api::namespaced(ctx.client.clone(), namespace);
            let found = (api.get_opt(name).await).map_err(kube_err("get the copy's source"))?;
            match found.as_ref().and_then(ready_arn) {
                Some(arn) => arn,
                None => {
                    return Ok(Source::Unresolved(format!(
                        "{} {name} is not Ready yet",
                        K::LABEL
                    )));
                }
            }
        }
        Reference::Identifier(identifier) => identifier.clone(),
    };
    // A snapshot is described in its own region, by its name; one of another account (shared
    // with this one) by its ARN, and its tags are not read: RDS shows no account another's tags,
    // so only the operator's --grant-restore lets it be copied (as for restoreFrom).
    let elsewhere = arn_part(&source, 3).is_some_and(|r| r != at.rds.place().region());
    let rds = at.rds.for_region_of(&source);
    let ours = at.rds.place().account();
    if arn_part(&source, 4).is_some_and(|a| !ours.is_empty() && a != ours) {
        return Ok(match K::describe(&rds, &source).await? {
            Some(found) => Source::Found {
                identifier: source.clone(),
                status: found.status,
                tags: Default::default(),
                instance_tags: None,
                grants: ctx.grants.clone(),
            },
            None => Source::NotFound(source),
        });
    }
    let name = match source.starts_with("arn:") {
        true => source.rsplit(':').next().unwrap_or_default(),
        false => source.as_str(),
    };
    let Some(found) = K::describe(&rds, name).await? else {
        return Ok(Source::NotFound(source));
    };
    let instance_tags = source_tags::<K>(&rds, &found).await?;
    // A copy in the same region names the source by identifier; from elsewhere, by ARN.
    let identifier = match elsewhere {
        true => source.clone(),
        false => found.name.clone(),
    };
    Ok(Source::Found {
        identifier,
        status: found.status,
        tags: found.tags,
        instance_tags,
        grants: ctx.grants.clone(),
    })
}

/// The tags of the instance or cluster a snapshot was taken of, while that one exists: the one of
/// its identifier, and only when it is the same one (its resource ID), not a later namesake.
async fn source_tags<K: SnapshotKind>(
    rds: &crate::rds::Rds,
    found: &ObservedSnapshot,
) -> Result<Option<BTreeMap<String, String>>, Error> {
    if found.instance.is_empty() {
        return Ok(None);
    }
    let same = |s: &super::SourceState| match (&s.resource_id, &found.source_resource_id) {
        (Some(now), Some(then)) => now == then,
        _ => false,
    };
    Ok((K::describe_source(rds, &found.instance).await?)
        .filter(same)
        .map(|s| s.tags))
}

/// An object's snapshot ARN once it may be referred to (`references::usable`: Ready at its
/// generation, not being deleted).
fn ready_arn<K: SnapshotKind>(s: &K) -> Option<String> {
    let status = s.status()?;
    crate::managed::references::usable(s, status)
        .then(|| K::fields(status).report.arn)
        .flatten()
}
