//! The DBSnapshot reconcile: what the kind tells the snapshot kinds' shared layer (`snapshot`:
//! its read, plan and act steps) and the group kinds' skeleton (the shell, the deletion, the tag
//! steps): its spec's references, its status's identifiers, its RDS calls (`aws.rs`).

use crate::aws_error::AwsError;
use crate::context::Context;
use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references::Resolver;
use crate::rds::{Rds, tag_map};
use crate::snapshot::calls::SnapshotCalls;
use crate::snapshot::plan::Own;
use crate::snapshot::{
    Extra, Fields, Listed, Reference, SnapshotKind, SnapshotOptions, SourceState, steps,
};

use super::{DBSnapshot, DBSnapshotStatus};

/// The marker under which the DBInstance kind registers how a DBInstance's name resolves to its
/// RDS identifier (`references::Resolver`): this kind cannot name that one, which names it.
pub struct SourceInstance;

impl NamedKind for DBSnapshot {
    type Observed = Listed<Self>;
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
    ) -> Result<(Option<Listed<Self>>, Extra), Error> {
        steps::observe(self, shared, at).await
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        steps::act::<Self>(at, step).await
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        Ok(<Self as SnapshotCalls>::delete(&at.rds, name).await?)
    }

    fn retained(&self, adopted: bool) -> bool {
        crate::snapshot::retained(&self.spec.options, adopted)
    }

    /// An export the plan recorded as started is put back as the previous pass had it (the
    /// next pass finds RDS's task, or sends it again); the accounts a share may have reached stay
    /// recorded until their removal is seen: they decide whether the shares are read at all.
    fn records_after_failure(fields: &mut DBSnapshotStatus, previous: &DBSnapshotStatus) {
        fields.report.export = previous.report.export.clone();
        let shared = &mut fields.report.shared_with;
        crate::managed::named::keep_applied(shared, &previous.report.shared_with);
    }

    crate::named_fields!(
        DBSnapshotStatus,
        db_snapshot_identifier,
        crate::snapshot::steps::plan
    );
}

impl SnapshotKind for DBSnapshot {
    const SOURCE: &'static str = "RDS instance";
    const LISTED: &'static str = "the manual DB snapshots";

    fn options(&self) -> &SnapshotOptions {
        &self.spec.options
    }

    fn source(&self) -> Option<Reference> {
        let s = self.spec.source.as_ref()?;
        Reference::of(&s.name, &s.db_instance_identifier)
    }

    fn copy_from(&self) -> Option<Reference> {
        let c = self.spec.copy_from.as_ref()?;
        Reference::of(&c.name, &c.db_snapshot_identifier)
    }

    fn fields(status: &DBSnapshotStatus) -> Fields {
        Fields {
            name: status.db_snapshot_identifier.clone(),
            source: status.db_instance_identifier.clone(),
            report: status.report.clone(),
            applied_tag_keys: status.applied_tag_keys.clone(),
        }
    }

    fn with_fields(fields: Fields) -> DBSnapshotStatus {
        DBSnapshotStatus {
            db_snapshot_identifier: fields.name,
            db_instance_identifier: fields.source,
            report: fields.report,
            applied_tag_keys: fields.applied_tag_keys,
            ..Default::default()
        }
    }

    async fn describe_source(rds: &Rds, identifier: &str) -> Result<Option<SourceState>, AwsError> {
        Ok((rds.db_instance(identifier).await?).map(|o| SourceState {
            status: o.db_instance_status().unwrap_or_default().to_owned(),
            tags: tag_map(o.tag_list()),
            resource_id: o.dbi_resource_id().map(str::to_owned),
        }))
    }

    async fn resolve_source(
        ctx: &Context,
        namespace: &str,
        name: &str,
    ) -> Result<Result<String, String>, Error> {
        let resolver = ctx.shared::<Resolver<SourceInstance>>();
        resolver.resolve(&ctx.client, namespace, name).await
    }
}
