//! The API-server writes every kind makes: the cleanup finalizer, the status by server-side apply,
//! Events, and the lean cache of a kind's controller.

use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::{Event, Recorder};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::json;
use tracing::warn;

use super::plan::PlannedEvent;
use super::triggers::cached_triggers;
use super::writes::Writes;
use super::{Kind, scoped};
use crate::context::Context;
use crate::crd::FINALIZER;
use crate::error::{Error, kube_err};
use crate::secrets::MANAGER;

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
    let api: Api<K> = scoped(&ctx.client, obj.namespace().as_deref());
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
        true => (ctx.shared::<Writes>()).wrote(&uid, written.resource_version().as_deref()),
        // Let go of: no reconcile of it waits on the cache again.
        false => ctx.shared::<Writes>().forget(&uid),
    }
    Ok(())
}

/// Removes annotation `key` from the object (one that approved something once, such as a
/// switchover, so that it never approves a later one).
pub async fn remove_annotation<K: Kind>(ctx: &Context, obj: &K, key: &str) -> Result<(), Error> {
    let api: Api<K> = scoped(&ctx.client, obj.namespace().as_deref());
    let patch = json!({"metadata": {"annotations": {key: null}}});
    (api.patch(
        &obj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    ))
    .await
    .map_err(kube_err("remove an annotation"))?;
    Ok(())
}

/// A controller of `K` whose cache keeps each object without its managedFields and kubectl's
/// last-applied annotation, which no reconcile reads: together about as large as the object again,
/// for every object the watch holds (kube-rs's `WatchStreamExt::modify`, as its docs advise). A
/// list's objects wake their reconciles once the cache holds them ([`cached_triggers`]).
pub fn lean_controller<K: Kind + Send + Sync + 'static>(
    api: Api<K>,
) -> kube::runtime::Controller<K> {
    use kube::runtime::{WatchStreamExt, watcher};
    let events = watcher(api, watcher::Config::default().any_semantic())
        .default_backoff()
        .modify(lean);
    let (cache, triggers) = cached_triggers(events);
    kube::runtime::Controller::for_stream(triggers, cache).trigger_backoff(trigger_backoff())
}

/// The backoff a controller applies to all its trigger watches at once, after an error of any
/// of them. kube-runtime's default (0.8 s doubling to 30 s, reset only after 120 s without an
/// error) holds back every event of every watch while one watch fails: an edit waited 30 s behind
/// an unrelated watch's error after a leader takeover. The kind's own watch backs off on its own
/// (`default_backoff`), and the shared backoff stays short: 0.5 s doubling to 4 s, with jitter,
/// reset after 30 s without an error.
pub fn trigger_backoff() -> impl kube::runtime::utils::Backoff {
    let short = backon::ExponentialBuilder::default()
        .with_min_delay(std::time::Duration::from_millis(500))
        .with_max_delay(std::time::Duration::from_secs(4))
        .with_factor(2.0)
        .with_jitter()
        .without_max_times();
    kube::runtime::utils::ResetTimerBackoff::new(
        kube::runtime::watcher::ExponentialBackoff::from(short),
        std::time::Duration::from_secs(30),
    )
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
    let api: Api<K> = scoped(&ctx.client, obj.namespace().as_deref());
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
    (ctx.shared::<Writes>()).wrote(&uid, written.resource_version().as_deref());
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_shared_trigger_backoff_never_holds_events_back_more_than_a_few_seconds() {
        use kube::runtime::utils::Backoff;
        let mut backoff = super::trigger_backoff();
        let waits: Vec<_> = (0..20)
            .map(|_| backoff.next().expect("never gives up"))
            .collect();
        assert!(
            waits
                .iter()
                .all(|w| *w <= std::time::Duration::from_secs(8)),
            "{waits:?}"
        );
        assert!(
            waits[0] >= std::time::Duration::from_millis(500),
            "{waits:?}"
        );
        backoff.reset();
        assert!(backoff.next().unwrap() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn the_cache_keeps_what_reconciles_read_and_drops_managed_fields_and_last_applied() {
        use kube::api::ObjectMeta;
        // Any object: a DBInstance a layer above is kept so (its dry-run annotation stays).
        use crate::crd::DRY_RUN_ANNOTATION;
        let mut db = k8s_openapi::api::core::v1::ConfigMap::default();
        db.metadata = ObjectMeta {
            annotations: Some(
                [
                    (DRY_RUN_ANNOTATION.to_owned(), "true".to_owned()),
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
            vec![DRY_RUN_ANNOTATION]
        );
        assert_eq!(db.metadata.resource_version.as_deref(), Some("7"));
    }
}
