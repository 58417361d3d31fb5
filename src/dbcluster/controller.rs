//! DBCluster on the skeleton (`managed::skeleton`): read (the cluster from the shared listing, or
//! directly; its Secrets; its references; at deletion its members), the pure plan (`plan.rs`), one
//! step at a time, and the status. Nothing here decides what to call or what to report.

use kube::Resource;
use kube::runtime::Controller;

use super::plan::{self, Facts, Plan, Step};
use super::{DBCluster, DBClusterStatus};
use crate::context::Context;
use crate::dbclusterparametergroup::DBClusterParameterGroup;
use crate::dbclustersnapshot::DBClusterSnapshot;
use crate::dbclustersnapshot::controller::SourceCluster;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::Error;
use crate::globalcluster::GlobalCluster;
use crate::globalcluster::controller::PrimaryCluster;
use crate::managed::locate::{AccountUsers, Located};
use crate::managed::plan::KindStatus;
use crate::managed::plan::PlannedEvent;
use crate::managed::references::Referable;
use crate::managed::references::Referrers;
use crate::managed::stores::Stores;
use crate::managed::{Failure, Managed, conditions, references};

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
    /// Available in RDS, waiting for a member to serve: its members join it, and what needs only
    /// the cluster goes on (`plan::serving`).
    const USABLE_WHEN: &'static [&'static str] = &[crate::dbcluster::plan::serving::NO_WRITER];
}

/// The status after a pass: the plan's fields, with its conditions merged into the previous ones.
fn settled(
    previous: Option<&DBClusterStatus>,
    planned: &KindStatus<DBClusterStatus>,
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
        let controller = references::wakes_by_secrets(controller, ctx, namespace, |c| {
            (c.spec.password.master_user_password.iter())
                .map(|r| r.name.as_str())
                .collect()
        });
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
        super::read::read(self, ctx, at).await
    }

    fn plan(facts: &Facts) -> Plan {
        plan::plan(facts)
    }

    async fn act(&self, ctx: &Context, at: &Located, step: &Step) -> Result<Option<()>, Error> {
        super::act::act(ctx, at, self, step).await?;
        Ok(None)
    }

    fn status(&self) -> Option<&DBClusterStatus> {
        self.status.as_ref()
    }

    /// The cluster's health gauges follow the status written; they go with the finalizer.
    fn reported(&self, ctx: &Context, plan: &Plan, written: Option<&DBClusterStatus>) {
        let removed = (plan.steps.iter()).any(|s| matches!(s, Step::RemoveFinalizer));
        let shown = written.map(|w| (&w.common, None));
        let who = (&self.metadata, "DBCluster");
        crate::database::health::report_gauges(&ctx.metrics.healths, who, shown, removed);
    }

    fn settle(&self, facts: &Facts, plan: &Plan, _: Option<&()>) -> Option<DBClusterStatus> {
        let planned = plan.status.as_ref()?;
        let generation = self.meta().generation;
        let mut status = settled(self.status.as_ref(), planned, generation, &facts.now);
        status.common.placement = Some(facts.placement.clone());
        Some(status)
    }

    fn connection_write(step: &Step) -> Option<&str> {
        match step {
            Step::Secret(secret) => secret.connection(),
            _ => None,
        }
    }

    fn failed(&self, failure: &Failure<'_, Plan>) -> (DBClusterStatus, Option<PlannedEvent>) {
        let previous = self.status.as_ref();
        let before = previous.map_or(&[][..], |s| &s.reported.conditions[..]);
        let (ready, synced, event) = conditions::failed(before, failure.reason, failure.message);
        let planned = failure.planned.and_then(|p| p.status.as_ref());
        let ready =
            conditions::ready_after_failure(planned.map(|p| &p.ready), ready, failure.reason);
        // Not Ready while the connection Secret it planned to write may not be written.
        let unwritten = failure.unwritten(Self::connection_write);
        let ready = conditions::ready_unless_unwritten(&ready, &unwritten, failure.message);
        // What the plan meant to report (a restore under way, say) is not true yet: the fields
        // stay as last written.
        let fields = previous.cloned().unwrap_or_default();
        let status = KindStatus {
            fields,
            ready,
            synced,
            busy: false,
        };
        let mut status = settled(previous, &status, self.meta().generation, failure.now);
        // Where the cluster lives is only ever recorded by a pass that placed it.
        status.common.placement = previous.and_then(|p| p.common.placement.clone());
        (status, event)
    }
}
