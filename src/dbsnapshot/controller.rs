//! The DBSnapshot reconcile: what it reads (the snapshot in RDS; while it is still to be taken, its
//! source instance) and how it acts; the shell around them, the deletion and the tag steps are the
//! group kinds' (`managed::groups`).

use crate::context::Context;
use crate::error::Error;
use crate::locations::Location;
use crate::managed::groups::{Group, Shared};
use crate::managed::references::Resolver;

use super::plan::Own;
use super::{DBSnapshot, DBSnapshotStatus, ObservedSnapshot, Source};

/// The marker under which the DBInstance kind registers how a DBInstance's name resolves to its
/// RDS identifier (`references::Resolver`): this kind cannot name that one, which names it.
pub struct SourceInstance;

impl Group for DBSnapshot {
    type Observed = ObservedSnapshot;
    type Extra = Source;
    type Own = Own;
    type Status = DBSnapshotStatus;
    const LABEL: &'static str = "DBSnapshot";
    const WHAT: &'static str = "DB snapshot";
    const NAME_FIELD: &'static str = "dbSnapshotIdentifier";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedSnapshot>, Source), Error> {
        let name = self.group_name();
        let deleting = self.metadata.deletion_timestamp.is_some();
        // The shared listing's entry while it may serve (a snapshot RDS has finished); otherwise,
        // and at deletion, RDS is asked directly.
        let listed = (at.observer.listing::<ObservedSnapshot>()).get(&name, shared.drift_interval);
        let observed = match listed.filter(|_| !deleting) {
            Some(snapshot) => Some(snapshot),
            None => at.rds.db_snapshot(&name).await?,
        };
        let taken = self.status.as_ref().is_some_and(|s| s.arn.is_some());
        let source = match observed.is_none() && !deleting && !taken {
            true => source(self, &shared.ctx, at).await?,
            false => Source::NotRead,
        };
        Ok((observed, source))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        match step {
            Own::Create {
                name,
                instance,
                tags,
            } => Ok(at.rds.create_db_snapshot(name, instance, tags).await?),
        }
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(at.rds.delete_db_snapshot(name).await?)
    }

    fn retained(&self) -> bool {
        DBSnapshot::retained(self)
    }

    crate::group_fields!(DBSnapshotStatus, db_snapshot_identifier);
}

/// The source instance, read now: a DBInstance of the namespace resolves to its RDS identifier
/// once Ready; then the instance as RDS has it (its state, and the tags the tenancy rules read).
async fn source(snapshot: &DBSnapshot, ctx: &Context, at: &Location) -> Result<Source, Error> {
    let namespace = snapshot.metadata.namespace.as_deref().unwrap_or_default();
    let s = &snapshot.spec.source;
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
            grants: ctx.grants.clone(),
        },
        None => Source::NotFound(identifier),
    })
}
