//! What every kind the operator manages shares (DBInstance, DBSubnetGroup) when it talks to the API
//! server: the cleanup finalizer, conditions and the status write, and Events. The pure parts are
//! shared the same way: ownership tags and tag changes (`tags.rs`), the finalizer check
//! (`crd::has_finalizer`), conditions (`plan::status`), error classification (`rds.rs`,
//! `error.rs`) and the per-object backoff (`Context::next_failure`, `plan::backoff_delay`).

use std::fmt::Debug;

use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tracing::warn;

use crate::context::Context;
use crate::dbinstance::plan::status;
use crate::dbinstance::plan::{ConditionPlan, PlannedEvent, Requeue};
use crate::dbinstance::{Condition, DBInstance, FINALIZER, LocalRef};
use crate::error::{Error, kube_err};
use crate::secrets::MANAGER;
use crate::shell::{self, Failed, Outcome, Shell};

/// A namespaced kind of this operator.
pub trait Kind:
    Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
{
}

impl<K> Kind for K where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
{
}

/// Adds or removes the cleanup finalizer, guarded by resourceVersion so a concurrent change is
/// never overwritten.
pub async fn set_finalizer<K: Kind>(ctx: &Context, obj: &K, present: bool) -> Result<(), Error> {
    let mut finalizers: Vec<String> = (obj.finalizers().iter())
        .filter(|f| *f != FINALIZER)
        .cloned()
        .collect();
    if present {
        finalizers.push(FINALIZER.to_owned());
    }
    let api: Api<K> = Api::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default());
    let patch = json!({
        "metadata": { "finalizers": finalizers, "resourceVersion": obj.resource_version() }
    });
    let written = (api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    ))
    .await
    .map_err(kube_err("patch finalizers"))?;
    let uid = obj.uid().unwrap_or_default();
    match present {
        true => ctx
            .writes
            .wrote(&uid, written.resource_version().as_deref()),
        // Let go of: no reconcile of it waits on the cache again.
        false => ctx.writes.forget(&uid),
    }
    Ok(())
}

/// A controller of `K` whose cache keeps each object without its managedFields and kubectl's
/// last-applied annotation, which no reconcile reads: together about as large as the object again,
/// for every object the watch holds (kube-rs's `WatchStreamExt::modify`, as its docs advise).
pub fn lean_controller<K: Kind + Send + Sync + 'static>(
    api: Api<K>,
) -> kube::runtime::Controller<K> {
    use kube::runtime::{WatchStreamExt, reflector, watcher};
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default().any_semantic())
        .modify(lean)
        .reflect(writer)
        .applied_objects();
    kube::runtime::Controller::for_stream(stream, reader)
}

/// Drops what [`lean_controller`]'s cache does without.
pub fn lean<K: Resource>(obj: &mut K) {
    obj.managed_fields_mut().clear();
    obj.annotations_mut()
        .remove("kubectl.kubernetes.io/last-applied-configuration");
}

/// Writes the status by server-side apply.
pub async fn patch_status<K: Kind>(
    ctx: &Context,
    obj: &K,
    status: &impl Serialize,
) -> Result<(), Error> {
    let api: Api<K> = Api::namespaced(ctx.client.clone(), &obj.namespace().unwrap_or_default());
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    let params = PatchParams::apply(MANAGER).force();
    let written = (api.patch_status(&obj.name_any(), &params, &Patch::Apply(&patch)))
        .await
        .map_err(kube_err("patch status"))?;
    let uid = obj.uid().unwrap_or_default();
    (ctx.writes).wrote(&uid, written.resource_version().as_deref());
    Ok(())
}

/// Publishes a planned Event; a failure is logged, never raised.
pub async fn publish<K: Kind>(recorder: &Recorder, obj: &K, planned: &PlannedEvent) {
    let event = Event {
        type_: planned.type_,
        reason: planned.reason.clone(),
        note: Some(planned.note.clone()),
        action: planned.action.to_owned(),
        secondary: None,
    };
    if let Err(e) = recorder.publish(&event, &obj.object_ref(&())).await {
        warn!(error = %e, reason = planned.reason, "could not publish event");
    }
}

/// The plan of a kind reconciled by the shared shell: the steps in order, the status to write
/// (fields, Ready, Synced), the Events (each after the steps it follows), when to look again, and
/// the metric label of what it refuses (None for success), as for DBInstance.
#[derive(Clone, Debug, PartialEq)]
pub struct KindPlan<S, T> {
    pub steps: Vec<S>,
    pub status: Option<(T, ConditionPlan, ConditionPlan)>,
    pub events: Vec<PlannedEvent>,
    pub requeue: Requeue,
    pub refusal: Option<&'static str>,
}

impl<S, T> KindPlan<S, T> {
    pub fn new(requeue: Requeue) -> Self {
        KindPlan {
            steps: Vec::new(),
            status: None,
            events: Vec::new(),
            requeue,
            refusal: None,
        }
    }

    /// An Event published once the steps so far have succeeded.
    pub fn event(&mut self, type_: EventType, reason: &str, action: &'static str, note: String) {
        self.events.push(PlannedEvent {
            type_,
            reason: reason.into(),
            action,
            note,
            after: self.steps.len(),
        });
    }
}

/// A kind reconciled by the shared shell (`shell::reconcile`): read -> plan (pure) -> act -> report.
/// What differs per kind is these functions, in the kind's own files.
pub trait Reconciled: Kind + Send + Sync + 'static {
    type Facts: Send;
    type Step: Send + Sync;
    type Status: Clone + PartialEq + Default + Serialize + Send + Sync;
    /// The kind in spans and logs.
    const LABEL: &'static str;
    /// Step 1: what a decision needs.
    fn read(
        &self,
        shared: &Shared,
    ) -> impl std::future::Future<Output = Result<Self::Facts, Error>> + Send;
    /// Step 2, pure.
    fn plan(facts: &Self::Facts) -> KindPlan<Self::Step, Self::Status>;
    /// Step 3, one step.
    fn act(
        &self,
        shared: &Shared,
        step: &Self::Step,
    ) -> impl std::future::Future<Output = Result<(), Error>> + Send;
    fn status(&self) -> Option<&Self::Status>;
    fn conditions(status: &mut Self::Status) -> &mut Vec<Condition>;
    fn observed_generation(status: &mut Self::Status) -> &mut Option<i64>;
    /// The name in RDS the status reports.
    fn rds_name(status: &Self::Status) -> Option<String>;
    /// The reference to an object of this kind a DBInstance holds, if any.
    fn referred_by(db: &DBInstance) -> Option<&LocalRef>;
}

/// What a DBInstance's reference to an object of kind `K` resolves to: its RDS name once it is
/// Ready at its current generation (and not being deleted), or why it cannot be used yet.
pub async fn resolve<K: Reconciled>(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Result<String, String>, Error> {
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let what = K::LABEL;
    let Some(obj) = api
        .get_opt(name)
        .await
        .map_err(kube_err("get a referenced object"))?
    else {
        return Ok(Err(format!("{what} {name} does not exist")));
    };
    let mut status = obj.status().cloned().unwrap_or_default();
    let generation = obj.meta().generation;
    let ready = (K::conditions(&mut status).iter())
        .any(|c| c.type_ == "Ready" && c.status == "True" && c.observed_generation == generation);
    Ok(match (ready, K::rds_name(&status)) {
        (true, Some(rds_name)) if obj.meta().deletion_timestamp.is_none() => Ok(rds_name),
        _ => Err(format!("{what} {name} is not Ready yet")),
    })
}

/// The DBInstances of the object's namespace that refer to it, read from the API (fresh: a
/// deletion waits on them) only when the object is being deleted, the one decision that needs
/// them; otherwise none, and no read.
pub async fn referrers<K: Reconciled>(client: &Client, obj: &K) -> Result<Vec<String>, Error> {
    if obj.meta().deletion_timestamp.is_none() {
        return Ok(Vec::new());
    }
    let namespace = obj.namespace().unwrap_or_default();
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &namespace);
    let list = (api.list(&Default::default()).await).map_err(kube_err("list DBInstances"))?;
    let name = obj.meta().name.as_ref();
    Ok((list.items.into_iter())
        .filter(|db| K::referred_by(db).is_some_and(|r| Some(&r.name) == name))
        .map(|db| db.name_any())
        .collect())
}

/// Runs the shared shell's controller of kind `K` for one namespace (or all) until `shutdown`
/// turns true; a DBInstance that starts or stops referring to an object wakes it.
pub async fn run<K: Reconciled>(
    ctx: std::sync::Arc<crate::context::Context>,
    namespace: Option<String>,
    concurrency: u16,
    drift_interval: std::time::Duration,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    use futures::StreamExt;
    use kube::runtime::controller::Config as ControllerConfig;
    use kube::runtime::reflector::ObjectRef;
    use kube::runtime::watcher;
    let (objects, instances): (Api<K>, Api<DBInstance>) = match &namespace {
        Some(ns) => (
            Api::namespaced(ctx.client.clone(), ns),
            Api::namespaced(ctx.client.clone(), ns),
        ),
        None => (Api::all(ctx.client.clone()), Api::all(ctx.client.clone())),
    };
    tracing::info!(
        namespace = namespace.as_deref().unwrap_or("*"),
        kind = K::LABEL,
        "starting controller"
    );
    let shared = std::sync::Arc::new(Shared {
        ctx,
        drift_interval,
    });
    lean_controller(objects)
        .with_config(ControllerConfig::default().concurrency(concurrency))
        .watches(
            instances,
            watcher::Config::default().any_semantic(),
            |db: DBInstance| {
                let ns = db.namespace();
                K::referred_by(&db).and_then(|r| ns.map(|ns| ObjectRef::new(&r.name).within(&ns)))
            },
        )
        .graceful_shutdown_on(async move {
            let _ = shutdown.wait_for(|stop| *stop).await;
        })
        .run(shell::reconcile::<K>, shell::error_policy::<K>, shared)
        .for_each(|result| async move {
            if let Err(e) = result {
                tracing::debug!(error = %e, kind = K::LABEL, "reconcile failed");
            }
        })
        .await;
}

/// The deletion every kind of the shared shell follows: wait while DBInstances refer to the
/// object (no call made); delete what is ours (`delete`), then let go; let go of what is not ours
/// or is gone.
pub fn deletion<K: Reconciled>(
    obj: &K,
    referrers: &[String],
    ours: Option<bool>,
    (delete, remove_finalizer): (K::Step, K::Step),
    what: &str,
    drift_interval: std::time::Duration,
) -> KindPlan<K::Step, K::Status> {
    let (meta, status) = (obj.meta(), obj.status());
    let mut plan = KindPlan::new(Requeue::AwaitChange);
    if !crate::dbinstance::has_finalizer(meta) {
        return plan;
    }
    if !referrers.is_empty() {
        let message = format!(
            "DBInstance {} still refers to this {what}; it is deleted once they are gone",
            referrers.join(", ")
        );
        let condition = ConditionPlan::new(false, "InUse", message);
        let fields = status.cloned().unwrap_or_default();
        plan.status = Some((fields, condition.clone(), condition));
        plan.requeue = Requeue::After(drift_interval);
        return plan;
    }
    if ours == Some(true) {
        plan.steps.push(delete);
        plan.event(
            EventType::Normal,
            "Deleting",
            "Delete",
            format!("deleting the {what} in RDS"),
        );
    }
    plan.steps.push(remove_finalizer);
    plan
}

/// The tag calls that bring an object's tags to the desired ones, keeping to managed keys: (tags
/// to add, keys to remove).
pub fn tag_steps<S>(
    plan: &mut KindPlan<S, impl Sized>,
    observed: &std::collections::BTreeMap<String, String>,
    desired: &std::collections::BTreeMap<String, String>,
    managed: &[String],
    add: impl FnOnce(std::collections::BTreeMap<String, String>) -> S,
    remove: impl FnOnce(Vec<String>) -> S,
) -> Vec<String> {
    let (to_add, to_remove) = crate::tags::changes(observed, desired, managed);
    let mut changed = Vec::new();
    if !to_add.is_empty() {
        changed.push(format!(
            "tags: add {}",
            to_add.keys().cloned().collect::<Vec<_>>().join(",")
        ));
        plan.steps.push(add(to_add));
    }
    if !to_remove.is_empty() {
        changed.push(format!("tags: remove {}", to_remove.join(",")));
        plan.steps.push(remove(to_remove));
    }
    changed
}

/// What the shared shell's reconciles share.
pub struct Shared {
    pub ctx: std::sync::Arc<crate::context::Context>,
    /// How often to look again at a settled object.
    pub drift_interval: std::time::Duration,
}

/// Every group kind in the shell every kind runs in: its four steps, and failures reported over
/// what its plan found.
impl<K: Reconciled> Shell for K {
    const KIND: &'static str = <K as Reconciled>::LABEL;
    type Ctx = Shared;
    type Planned = (K::Status, ConditionPlan);

    fn context(shared: &Shared) -> &crate::context::Context {
        &shared.ctx
    }

    async fn once(&self, shared: &Shared) -> Result<Outcome, Failed<Self::Planned>> {
        once(self, shared).await
    }

    async fn report_failure(&self, shared: &Shared, error: &Error, planned: Option<Self::Planned>) {
        failure(shared, self, error, planned).await;
    }
}

async fn once<K: Reconciled>(
    obj: &K,
    shared: &Shared,
) -> Result<Outcome, Failed<(K::Status, ConditionPlan)>> {
    let facts = obj.read(shared).await?;
    let plan = K::plan(&facts);
    let mut completed = 0;
    let mut error = None;
    for step in &plan.steps {
        match obj.act(shared, step).await {
            Ok(()) => completed += 1,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    for event in plan.events.iter().filter(|e| e.after <= completed) {
        publish(&shared.ctx.recorder, obj, event).await;
    }
    let outcome = Outcome {
        requeue: plan.requeue,
        refusal: plan.refusal,
    };
    match (error, plan.status) {
        (None, Some((fields, ready, synced))) => {
            write_status(shared, obj, fields, &ready, &synced).await?;
            Ok(outcome)
        }
        (None, None) => Ok(outcome),
        (Some(error), planned) => Err(Failed {
            error,
            planned: planned.map(|(fields, ready, _)| (fields, ready)),
        }),
    }
}

/// Writes the status, with conditions merged into the previous ones, when it changed.
async fn write_status<K: Reconciled>(
    shared: &Shared,
    obj: &K,
    mut status: K::Status,
    ready: &ConditionPlan,
    synced: &ConditionPlan,
) -> Result<(), Error> {
    let mut previous = obj.status().cloned().unwrap_or_default();
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let generation = obj.meta().generation;
    // No RDS state drives Reconciling for a group: only Synced does.
    let before = K::conditions(&mut previous);
    *K::conditions(&mut status) =
        status::conditions(before, ready, synced, false, generation, &now);
    *K::observed_generation(&mut status) = generation;
    if status == previous {
        return Ok(());
    }
    patch_status(&shared.ctx, obj, &status).await
}

/// Ready and Synced False with the error's reason (AWS's code and message), an Event when that is
/// new; best effort.
async fn failure<K: Reconciled>(
    shared: &Shared,
    obj: &K,
    error: &Error,
    planned: Option<(K::Status, ConditionPlan)>,
) {
    let Some((reason, message)) = error.user_facing() else {
        return;
    };
    let mut status = obj.status().cloned().unwrap_or_default();
    let (ready, failed, event) = status::failed(K::conditions(&mut status), &reason, &message);
    let ready = status::ready_after_failure(planned.as_ref().map(|p| &p.1), ready, &reason);
    if let Some((fields, _)) = planned {
        status = fields;
    }
    if let Some(event) = event {
        publish(&shared.ctx.recorder, obj, &event).await;
    }
    if let Err(e) = write_status(shared, obj, status, &ready, &failed).await {
        warn!(error = %e, "could not report failure in status");
    }
}

#[cfg(test)]
mod tests {
    use crate::writes::Writes;
    use kube::api::ObjectMeta;

    fn copy(uid: &str, resource_version: &str) -> ObjectMeta {
        ObjectMeta {
            uid: Some(uid.into()),
            resource_version: Some(resource_version.into()),
            ..Default::default()
        }
    }

    #[test]
    fn the_cache_keeps_what_reconciles_read_and_drops_managed_fields_and_last_applied() {
        use kube::api::ObjectMeta;
        let mut db = crate::dbinstance::DBInstance::new("db", Default::default());
        db.metadata = ObjectMeta {
            annotations: Some(
                [
                    (
                        crate::dbinstance::DRY_RUN_ANNOTATION.to_owned(),
                        "true".to_owned(),
                    ),
                    (
                        "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
                        "{\"spec\":{}}".to_owned(),
                    ),
                ]
                .into(),
            ),
            managed_fields: Some(vec![Default::default(), Default::default()]),
            resource_version: Some("7".into()),
            ..db.metadata
        };
        super::lean(&mut db);
        assert_eq!(
            db.metadata.managed_fields.as_deref().unwrap_or_default(),
            &[]
        );
        let annotations = db.metadata.annotations.unwrap();
        assert_eq!(
            annotations.keys().collect::<Vec<_>>(),
            vec![crate::dbinstance::DRY_RUN_ANNOTATION]
        );
        assert_eq!(db.metadata.resource_version.as_deref(), Some("7"));
    }

    #[test]
    fn a_copy_older_than_our_write_is_behind_until_the_cache_catches_up() {
        let writes = Writes::default();
        assert!(
            !writes.behind(&copy("a", "5")),
            "nothing written: never behind"
        );
        writes.wrote("a", Some("100"));
        writes.wrote("a", Some("99"));
        // (copy, behind): compared as integers, not as strings ("99" > "100" as text).
        let rows = [("99", true), ("100", false), ("100", false), ("99", false)];
        for (i, (version, behind)) in rows.into_iter().enumerate() {
            assert_eq!(
                writes.behind(&copy("a", version)),
                behind,
                "row {i}: {version}"
            );
        }
        assert!(!writes.behind(&copy("b", "1")), "another object");
        // A resourceVersion that is no integer is never called stale.
        writes.wrote("c", Some("10"));
        assert!(!writes.behind(&copy("c", "opaque")));
        writes.wrote("d", Some("not-a-number"));
        assert!(!writes.behind(&copy("d", "1")));
        // Let go of: forgotten.
        writes.wrote("e", Some("10"));
        writes.forget("e");
        assert!(!writes.behind(&copy("e", "1")));
    }
}
