//! DBInstance on the skeleton (`managed::skeleton`): its wake-ups, and its four steps: read
//! (`read.rs`) -> plan (pure, `plan/`) -> act (`act.rs`) -> report (`plan::status`, and the
//! gauges below). Nothing here decides what to call or what to report.

use futures::StreamExt;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;

use crate::context::Context;
use crate::dbcluster::DBCluster;
use crate::dbinstance::plan::{self, Facts, Gauge, Plan, PlannedEvent, Response, Step, status};
use crate::dbinstance::{DBInstance, DBInstanceStatus};
use crate::dbinstance::{act, read};
use crate::dbparametergroup::DBParameterGroup;
use crate::dbsubnetgroup::DBSubnetGroup;
use crate::error::Error;
use crate::managed::locate::{AccountUsers, Located};
use crate::managed::references::{Referrers, RefersTo};
use crate::managed::{Failure, Managed, references};
use crate::optiongroup::OptionGroup;

/// DBInstance on the skeleton: woken by its Secrets, by the groups it refers to and by the
/// observer; its status finished from the plan and RDS's answers (`status::finish`).
impl Managed for DBInstance {
    const KIND: &'static str = "DBInstance";
    type Ctx = Context;
    type Facts = Facts;
    type Step = Step;
    type Plan = Plan;
    type Answer = Response;
    type Status = DBInstanceStatus;
    type Where = Located;

    /// A DBInstance can use an account; it refers to its subnet group, its parameter group and its
    /// DBCluster: their deletions wait for it, and its changes wake them.
    fn declare(ctx: &Context) {
        ctx.shared::<AccountUsers>().declare::<DBInstance>();
        ctx.shared::<Referrers<DBSubnetGroup>>()
            .declare::<DBInstance>();
        ctx.shared::<Referrers<DBParameterGroup>>()
            .declare::<DBInstance>();
        ctx.shared::<Referrers<OptionGroup>>()
            .declare::<DBInstance>();
        ctx.shared::<Referrers<DBCluster>>().declare::<DBInstance>();
        // A DBCluster with members waits for one to serve (dbcluster::plan::serving).
        ctx.shared::<crate::dbcluster::read::DeclaredMembers>()
            .register(|ctx, cluster| {
                use super::cache::{InstanceStores, Instances};
                ctx.shared::<Instances>().members_of(cluster)
            });
        // A DBSnapshot's source names a DBInstance.
        (ctx.shared::<references::Resolver<crate::dbsnapshot::controller::SourceInstance>>())
            .register::<DBInstance>();
    }

    fn watches(
        controller: Controller<DBInstance>,
        ctx: &Context,
        namespace: Option<&str>,
    ) -> Controller<DBInstance> {
        let store = controller.store();
        ctx.shared::<super::cache::Instances>().add(store.clone());
        let controller = references::wakes_by_secrets(controller, ctx, namespace, |db| {
            (db.spec.password.master_user_password.iter())
                .map(|r| r.name.as_str())
                .collect()
        });
        // A DBSubnetGroup or DBParameterGroup becoming Ready (or changing) wakes the DBInstances
        // that refer to it.
        let controller = references::wakes_by_reference::<_, DBSubnetGroup>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| {
                (db.spec.network.db_subnet_group_ref.as_ref()).map(|r| r.name.as_str())
            },
        );
        let controller = references::wakes_by_reference::<_, DBParameterGroup>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| (db.spec.db_parameter_group_ref.as_ref()).map(|r| r.name.as_str()),
        );
        let controller = references::wakes_by_reference::<_, OptionGroup>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| (db.spec.option_group_ref.as_ref()).map(|r| r.name.as_str()),
        );
        // A member waits for its DBCluster to be Ready.
        let controller = references::wakes_by_reference::<_, DBCluster>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| (db.spec.db_cluster_ref.as_ref()).map(|r| r.name.as_str()),
        );
        // A restore from a DBSnapshot waits for it to be available.
        let controller = references::wakes_by_reference::<_, crate::dbsnapshot::DBSnapshot>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| {
                (db.spec.restore_from.as_ref())
                    .and_then(|r| r.db_snapshot_ref.as_ref())
                    .map(|r| r.name.as_str())
            },
        );
        // A replica waits for its source DBInstance to be Ready.
        let controller = references::wakes_by_reference::<_, DBInstance>(
            controller,
            ctx,
            namespace,
            |db: &DBInstance| (db.spec.replica_of.as_ref()).and_then(|r| r.name.as_deref()),
        );
        let controller = crate::managed::locate::woken_by_accounts(controller, ctx);
        let namespace = namespace.map(str::to_owned);
        let changed = (ctx.locations.changes())
            .filter(move |o| {
                futures::future::ready(namespace.is_none() || o.namespace == namespace)
            })
            .map(|o| {
                ObjectRef::<DBInstance>::new(&o.name).within(&o.namespace.unwrap_or_default())
            });
        controller.reconcile_on(changed)
    }

    async fn locate(&self, ctx: &Context) -> Result<Located, Error> {
        crate::managed::locate::locate(self, ctx).await
    }

    fn may_act(ctx: &Context, at: &Located) -> bool {
        at.may_act(ctx)
    }

    async fn read(&self, ctx: &Context, at: &Located) -> Result<Facts, Error> {
        read::gather(self, ctx, at).await
    }

    fn plan(facts: &Facts) -> Plan {
        plan::plan(facts)
    }

    async fn act(
        &self,
        ctx: &Context,
        at: &Located,
        step: &Step,
    ) -> Result<Option<Response>, Error> {
        act::execute(ctx, &at.location, self, step).await
    }

    fn status(&self) -> Option<&DBInstanceStatus> {
        self.status.as_ref()
    }

    fn settle(
        &self,
        facts: &Facts,
        plan: &Plan,
        answer: Option<&Response>,
    ) -> Option<DBInstanceStatus> {
        let (previous, generation) = (self.status.as_ref(), self.metadata.generation);
        let planned = plan.status.as_ref()?;
        let mut status = status::finish(planned, previous, answer, generation, &facts.now);
        status.common.placement = Some(facts.placement.clone());
        Some(status)
    }

    /// Over the last status; what the plan found is not used (a DBInstance's plan reports RDS's
    /// state only when its steps succeed).
    fn failed(&self, failure: &Failure<'_, Plan>) -> (DBInstanceStatus, Option<PlannedEvent>) {
        let (previous, generation) = (self.status.as_ref(), self.metadata.generation);
        let (planned, event) = status::failure(previous, failure.reason, failure.message);
        let mut status = status::finish(&planned, previous, None, generation, failure.now);
        // Where the instance lives is only ever recorded by a pass that placed it.
        status.common.placement = previous.and_then(|p| p.common.placement.clone());
        (status, event)
    }

    /// The instance gauge follows the RDS state the status reports; the drift metric counts what
    /// was put back.
    fn reported(&self, ctx: &Context, plan: &Plan, written: Option<&DBInstanceStatus>) {
        let uid = self.uid().unwrap_or_default();
        if let (Some(planned), Some(written)) = (&plan.status, written)
            && planned.reports_rds_state()
        {
            ctx.metrics.set_state(&uid, Some(self.gauge(written)));
        }
        let removed = plan.ext.gauge == Gauge::Remove;
        let shown = written.map(|w| (&w.common, w.certificate_valid_till.as_deref()));
        let who = (&self.metadata, "DBInstance");
        crate::database::health::report_gauges(&ctx.metrics.healths, who, shown, removed);
        if removed {
            ctx.metrics.set_state(&uid, None);
        }
        if !plan.ext.drift_corrected.is_empty() {
            ctx.metrics
                .drift_corrected(plan.ext.drift_corrected.iter().copied());
        }
    }
}

impl DBInstance {
    /// What the instance gauge says of this DBInstance's instance, as `status` reports it.
    fn gauge(&self, status: &DBInstanceStatus) -> crate::metrics::InstanceGauge {
        let role = match (&self.spec.replica_of, plan::spec::is_member(self)) {
            (_, true) => "member",
            (Some(_), false) => "replica",
            (None, false) => "standalone",
        };
        crate::metrics::InstanceGauge {
            state: status.db_instance_status.clone().unwrap_or_default(),
            object_namespace: self.namespace().unwrap_or_default(),
            role,
            blue_green: (status.blue_green.as_ref())
                .map(|b| b.deployment.status.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "none".into()),
        }
    }
}

/// A replica refers to its source DBInstance (spec.replicaOf.name): it is made once that one is
/// Ready, with the RDS identifier its status reports.
impl references::Referable for DBInstance {
    type Status = DBInstanceStatus;
    const LABEL: &'static str = "DBInstance";
    fn status(&self) -> Option<&DBInstanceStatus> {
        self.status.as_ref()
    }
    fn conditions(status: &DBInstanceStatus) -> &[crate::dbinstance::Condition] {
        &status.reported.conditions
    }
    fn rds_name(status: &DBInstanceStatus) -> Option<String> {
        status.db_instance_identifier.clone()
    }
}

impl RefersTo<DBSubnetGroup> for DBInstance {
    fn refers_to(&self, group: &DBSubnetGroup) -> bool {
        let named = self
            .spec
            .network
            .db_subnet_group_ref
            .as_ref()
            .map(|r| &r.name);
        self.namespace() == group.namespace() && named == group.metadata.name.as_ref()
    }
}

impl RefersTo<DBParameterGroup> for DBInstance {
    fn refers_to(&self, group: &DBParameterGroup) -> bool {
        let named = self.spec.db_parameter_group_ref.as_ref().map(|r| &r.name);
        self.namespace() == group.namespace() && named == group.metadata.name.as_ref()
    }
}

impl RefersTo<OptionGroup> for DBInstance {
    fn refers_to(&self, group: &OptionGroup) -> bool {
        let named = self.spec.option_group_ref.as_ref().map(|r| &r.name);
        self.namespace() == group.namespace() && named == group.metadata.name.as_ref()
    }
}

/// A member of a DBCluster: by reference, or by its RDS identifier.
impl RefersTo<DBCluster> for DBInstance {
    fn refers_to(&self, cluster: &DBCluster) -> bool {
        let by_ref = (self.spec.db_cluster_ref.as_ref())
            .is_some_and(|r| Some(&r.name) == cluster.metadata.name.as_ref());
        let by_identifier = (self.spec.db_cluster_identifier.as_deref())
            .is_some_and(|id| id.eq_ignore_ascii_case(&cluster.identifier()));
        self.namespace() == cluster.namespace() && (by_ref || by_identifier)
    }
}
