//! The DBSnapshot reconcile: what it reads (the snapshot in RDS; while it is still to be taken, its
//! source instance) and how it acts; the shell around them, the deletion and the tag steps are the
//! group kinds' (`managed::groups`).

use kube::Api;
use kube::runtime::reflector::ObjectRef;

use crate::context::Context;
use crate::error::{Error, kube_err};
use crate::locations::Location;
use crate::managed::groups::{Group, Shared};
use crate::managed::references::Resolver;
use crate::rds::arn_part;

use super::plan::Own;
use super::{CopyFrom, DBSnapshot, DBSnapshotStatus, Extra, ObservedSnapshot, Shares, Source};

/// The marker under which the DBInstance kind registers how a DBInstance's name resolves to its
/// RDS identifier (`references::Resolver`): this kind cannot name that one, which names it.
pub struct SourceInstance;

impl Group for DBSnapshot {
    type Observed = ObservedSnapshot;
    type Extra = Extra;
    type Own = Own;
    type Status = DBSnapshotStatus;
    const LABEL: &'static str = "DBSnapshot";
    const WHAT: &'static str = "DB snapshot";
    const NAME_FIELD: &'static str = "dbSnapshotIdentifier";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedSnapshot>, Extra), Error> {
        let deleting = self.metadata.deletion_timestamp.is_some();
        if self.spec.schedule.is_some() {
            return Ok((None, series(self, &shared.ctx, at, deleting).await?));
        }
        let name = self.group_name();
        // The shared listing's entry while it may serve (a snapshot RDS has finished); otherwise,
        // and at deletion, RDS is asked directly.
        let listed = (at.observer.listing::<ObservedSnapshot>()).get(&name, shared.drift_interval);
        // A snapshot not this object's is read directly too: its claim (adoption) is decided on
        // a fresh read.
        let uid = self.metadata.uid.as_deref().unwrap_or_default();
        let listed = listed.filter(|o| crate::managed::tags::owned_by(&o.tags, uid));
        let observed = match listed.filter(|_| !deleting) {
            Some(snapshot) => Some(snapshot),
            None => at.rds.db_snapshot(&name).await?,
        };
        let taken = self.status.as_ref().is_some_and(|s| s.arn.is_some());
        let source = match observed.is_none() && !deleting && !taken {
            true => source(self, &shared.ctx, at).await?,
            false => Source::NotRead,
        };
        let shares = match &observed {
            Some(o) if o.status == "available" && !deleting && sharing(self) => {
                Some(shares(self, &shared.ctx, at, &o.name).await?)
            }
            _ => None,
        };
        let series = None;
        let adoption = shared.ctx.grants.adoption.clone();
        let instance_tags = match &observed {
            Some(o) if !deleting && tagged_for_another(self, o) => {
                (at.rds.describe(&o.instance).await?).map(|i| i.tags)
            }
            _ => None,
        };
        Ok((
            observed,
            Extra {
                source,
                series,
                shares,
                adoption,
                instance_tags,
            },
        ))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        match step {
            Own::Create {
                name,
                instance,
                tags,
            } => Ok(at.rds.create_db_snapshot(name, instance, tags).await?),
            Own::Copy {
                name,
                source,
                kms_key_id,
                copy_tags,
                tags,
            } => {
                let kms = kms_key_id.as_deref();
                Ok((at.rds)
                    .copy_db_snapshot(name, source, kms, *copy_tags, tags)
                    .await?)
            }
            Own::Share { name, add, remove } => {
                Ok(at.rds.share_db_snapshot(name, add, remove).await?)
            }
        }
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_db_snapshot(name).await?)
    }

    fn retained(&self, adopted: bool) -> bool {
        DBSnapshot::retained(self, adopted)
    }

    crate::group_fields!(DBSnapshotStatus, db_snapshot_identifier, plan);
}

/// Whether RDS's snapshot carries ownership tags that are not this object's (perhaps its
/// instance's, which RDS copied): then the instance's tags are read, for the claim rule.
fn tagged_for_another(snapshot: &DBSnapshot, o: &ObservedSnapshot) -> bool {
    let uid = snapshot.metadata.uid.as_deref().unwrap_or_default();
    o.tags.contains_key(crate::crd::OWNER_TAG) && !crate::managed::tags::owned_by(&o.tags, uid)
}

/// Whether the spec or the status names a share: only then is it read.
fn sharing(snapshot: &DBSnapshot) -> bool {
    let recorded = snapshot
        .status
        .as_ref()
        .is_some_and(|s| !s.shared_with.is_empty());
    !snapshot.spec.shared_with.is_empty() || recorded
}

/// Who may restore the snapshot now, and who may be given it: the AWS account IDs of the
/// AWSAccounts granted to the namespace (of the last role of each chain), and the operator's
/// settings.
async fn shares(
    snapshot: &DBSnapshot,
    ctx: &Context,
    at: &Location,
    name: &str,
) -> Result<Shares, Error> {
    let namespace = snapshot.metadata.namespace.clone().unwrap_or_default();
    let directory = &ctx.directory;
    let ns = directory.namespaces.get(&ObjectRef::new(&namespace));
    let labels = (ns.and_then(|n| n.metadata.labels.clone())).unwrap_or_default();
    let accounts = (directory.accounts.all().into_iter())
        .filter(|a| a.namespace_selector.selects(&namespace, &labels))
        .filter_map(|a| a.account_id().map(str::to_owned))
        .collect();
    Ok(Shares {
        current: at.rds.db_snapshot_shares(name).await?,
        accounts,
        grants: ctx.grants.clone(),
    })
}

/// The kind's plan, pure: one snapshot (`plan.rs`), or a schedule's (`schedule.rs`).
pub fn plan(f: &super::plan::Facts) -> super::plan::Plan {
    match &f.group.spec.schedule {
        Some(schedule) => super::schedule::plan(f, schedule),
        None => super::plan::plan(f),
    }
}

/// A schedule's source (not at deletion) and every manual snapshot of the source instance, read
/// directly: the deletion of the oldest is decided on them.
async fn series(
    snapshot: &DBSnapshot,
    ctx: &Context,
    at: &Location,
    deleting: bool,
) -> Result<Extra, Error> {
    let source = match deleting {
        true => Source::NotRead,
        false => source(snapshot, ctx, at).await?,
    };
    let recorded = (snapshot.status.as_ref()).and_then(|s| s.db_instance_identifier.clone());
    let instance = match &source {
        Source::Found { identifier, .. } | Source::NotFound(identifier) => Some(identifier.clone()),
        Source::NotRead | Source::Unresolved(_) => recorded,
    };
    let series = match instance {
        Some(instance) => at.rds.db_snapshots_of(&instance).await?,
        None => Vec::new(),
    };
    Ok(Extra {
        source,
        series: Some(series),
        ..Extra::default()
    })
}

/// The source instance, read now: a DBInstance of the namespace resolves to its RDS identifier
/// once Ready; then the instance as RDS has it (its state, and the tags the tenancy rules read).
async fn source(snapshot: &DBSnapshot, ctx: &Context, at: &Location) -> Result<Source, Error> {
    let namespace = snapshot.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(from) = &snapshot.spec.copy_from {
        return copy_source(from, namespace, ctx, at).await;
    }
    let Some(s) = &snapshot.spec.source else {
        return Ok(Source::Unresolved("the spec names no source".into()));
    };
    let identifier = match (&s.name, &s.db_instance_identifier) {
        (Some(name), _) => {
            let resolver = ctx.shared::<Resolver<SourceInstance>>();
            match resolver.resolve(&ctx.client, namespace, name).await? {
                Ok(identifier) => identifier,
                Err(why) => return Ok(Source::Unresolved(why)),
            }
        }
        (None, Some(identifier)) => identifier.clone(),
        (None, None) => return Ok(Source::Unresolved("source names no instance".into())),
    };
    Ok(match at.rds.describe(&identifier).await? {
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

/// The snapshot a copy is made of, read now where it lives: a DBSnapshot of the namespace (by its
/// ARN, once Ready) or the identifier or ARN the spec gives; its state, its tags and those of the
/// instance it was taken of while that exists (the tenancy rules read them).
async fn copy_source(
    from: &CopyFrom,
    namespace: &str,
    ctx: &Context,
    at: &Location,
) -> Result<Source, Error> {
    let source = match (&from.name, &from.db_snapshot_identifier) {
        (Some(name), _) => {
            let api: Api<DBSnapshot> = Api::namespaced(ctx.client.clone(), namespace);
            let found = (api.get_opt(name).await).map_err(kube_err("get DBSnapshot"))?;
            match found.as_ref().and_then(ready_arn) {
                Some(arn) => arn,
                None => {
                    return Ok(Source::Unresolved(format!(
                        "DBSnapshot {name} is not Ready yet"
                    )));
                }
            }
        }
        (None, Some(identifier)) => identifier.clone(),
        (None, None) => return Ok(Source::Unresolved("copyFrom names no snapshot".into())),
    };
    // A snapshot is described in its own region, by its name; one of another account (shared
    // with this one) by its ARN, and its tags are not read: RDS shows no account another's tags,
    // so only the operator's --grant-restore lets it be copied (as for restoreFrom).
    let elsewhere = arn_part(&source, 3).is_some_and(|r| r != at.rds.place().region());
    let rds = at.rds.for_region_of(&source);
    let ours = at.rds.place().account();
    if arn_part(&source, 4).is_some_and(|a| !ours.is_empty() && a != ours) {
        return Ok(match rds.db_snapshot(&source).await? {
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
    let name = source.rsplit(':').next().unwrap_or_default();
    let name = if source.starts_with("arn:") {
        name
    } else {
        source.as_str()
    };
    let Some((found, instance_tags)) = rds.snapshot_with_instance_tags(name).await? else {
        return Ok(Source::NotFound(source));
    };
    // A copy in the same region names the source by identifier; from elsewhere, by ARN.
    let identifier = match elsewhere {
        true => source.clone(),
        false => found.identifier.clone(),
    };
    Ok(Source::Found {
        identifier,
        status: found.status,
        tags: found.tags,
        instance_tags,
        grants: ctx.grants.clone(),
    })
}

/// A DBSnapshot's ARN once it may be referred to (`references::usable`: Ready at its generation,
/// not being deleted).
fn ready_arn(s: &DBSnapshot) -> Option<String> {
    let status = s.status.as_ref()?;
    crate::managed::references::usable(s, status)
        .then(|| status.arn.clone())
        .flatten()
}
