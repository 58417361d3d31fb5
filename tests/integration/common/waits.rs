//! Waiting for what the operator does, and reading what it reported: conditions, Events, Secrets.

use super::*;

/// Polls `check` until it returns Some, or panics naming `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The DBInstance, once its status satisfies `check`.
pub async fn wait_dbi(
    api: &Api<DBInstance>,
    name: &str,
    what: &str,
    timeout: Duration,
    check: impl Fn(&DBInstance) -> bool,
) -> DBInstance {
    let start = Instant::now();
    loop {
        let db = api.get_opt(name).await.ok().flatten();
        if let Some(db) = db.as_ref().filter(|db| check(db)) {
            return db.clone();
        }
        if start.elapsed() > timeout {
            let conditions = db.and_then(|d| d.status).map(|s| s.reported.conditions);
            panic!("timed out after {timeout:?} waiting for {what}; conditions: {conditions:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The status of the named condition, with its reason.
pub fn condition(db: &DBInstance, type_: &str) -> Option<(String, String, String)> {
    db.status
        .as_ref()?
        .reported
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

pub fn is_ready(db: &DBInstance) -> bool {
    condition(db, "Ready").is_some_and(|c| c.0 == "True")
}

/// Waits until the named object is gone from the API.
pub async fn wait_gone(api: &Api<DBInstance>, name: &str, timeout: Duration) {
    wait_for(
        &format!("DBInstance {name} to be gone"),
        timeout,
        || async { matches!(api.get_opt(name).await, Ok(None)).then_some(()) },
    )
    .await
}

/// Deletes the DBInstance and waits (90 s at most) until the operator has let it go.
pub async fn delete_and_wait(api: &Api<DBInstance>, name: &str) {
    delete(api, name).await;
    wait_gone(api, name, Duration::from_secs(90)).await;
}

pub async fn delete(api: &Api<DBInstance>, name: &str) {
    api.delete(name, &DeleteParams::default())
        .await
        .expect("delete DBInstance");
}

/// The Events recorded for an object.
pub async fn events(
    client: &Client,
    ns: &str,
    name: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), ns);
    api.list(&Default::default())
        .await
        .expect("list events")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .collect()
}

/// Reasons of the Events recorded for an object.
pub async fn event_reasons(client: &Client, ns: &str, name: &str) -> Vec<String> {
    events(client, ns, name)
        .await
        .into_iter()
        .filter_map(|e| e.reason)
        .collect()
}

/// Waits until an Event with `reason` is recorded for an object. The operator publishes its Events
/// after the calls they report, so a test that saw a call's effect in RDS waits for its Event.
pub async fn wait_event(client: &Client, ns: &str, name: &str, reason: &str) {
    wait_for(&format!("a {reason} Event of {name}"), TIMEOUT, || async {
        let reasons = event_reasons(client, ns, name).await;
        reasons.iter().any(|r| r == reason).then_some(())
    })
    .await
}

/// A Secret's data as text, or None when it does not exist.
pub async fn secret_data(
    client: &Client,
    ns: &str,
    name: &str,
) -> Option<BTreeMap<String, String>> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret = api.get_opt(name).await.expect("read Secret")?;
    Some(
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8(v.0).expect("UTF-8 Secret value")))
            .collect(),
    )
}

/// Every Event note for an object, joined.
pub async fn event_notes(client: &Client, ns: &str, name: &str) -> String {
    let notes: Vec<String> = events(client, ns, name)
        .await
        .into_iter()
        .filter_map(|e| e.note)
        .collect();
    notes.join("\n")
}

/// The reason of the Synced condition, or "".
pub fn synced_reason(db: &DBInstance) -> String {
    condition(db, "Synced").map(|c| c.1).unwrap_or_default()
}

/// Calls of one action the emulator served for an identifier (moto_ext's count).
/// How long a test waits for one thing the operator does.
pub const TIMEOUT: Duration = Duration::from_secs(90);

/// Merges `spec` into a DBInstance's spec.
pub async fn patch_spec(api: &Api<DBInstance>, name: &str, spec: serde_json::Value) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({ "spec": spec })),
    )
    .await
    .expect("patch spec");
}

/// An object of one of the group kinds (or a DBCluster), once it satisfies `check` (90 s at most).
pub async fn wait_object<K: rds_operator::managed::references::Referable>(
    api: &Api<K>,
    name: &str,
    what: &str,
    check: impl Fn(&K) -> bool,
) -> K {
    wait_for(what, Duration::from_secs(90), || async {
        let obj = api.get_opt(name).await.ok()??;
        check(&obj).then_some(obj)
    })
    .await
}

/// A condition of an object of one of the group kinds: (status, reason, message).
pub fn object_condition<K: rds_operator::managed::references::Referable>(
    obj: &K,
    type_: &str,
) -> Option<(String, String, String)> {
    (K::conditions(rds_operator::managed::references::Referable::status(obj)?).iter())
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// Waits until an object of one of the group kinds is gone from the API.
pub async fn wait_object_gone<K: rds_operator::managed::references::Referable>(
    api: &Api<K>,
    name: &str,
) {
    wait_for(
        &format!("{name} to be gone"),
        Duration::from_secs(120),
        || async { api.get_opt(name).await.ok()?.is_none().then_some(()) },
    )
    .await
}

/// The passes the operator finished of the one object `name` of `kind`, whatever their result
/// (its debug log's "reconciled" and "reconcile failed" lines, which name the object:
/// Kind.version.group/name.namespace).
pub fn passes_of(operator: &Operator, (kind, name): (&str, &str)) -> u64 {
    let (kind, object) = (format!("{kind}.v"), format!(".rds.operator.rs/{name}."));
    let finished = |l: &str| l.contains(" reconciled ") || l.contains(" reconcile failed ");
    (operator.logs().lines())
        .filter(|l| finished(l) && l.contains(&kind) && l.contains(&object))
        .count() as u64
}

/// Asserts that `holds` stays true while the operator makes at least two whole passes of the
/// object `name` of `kind` (a negative check that proves the operator was alive and looked at
/// that object meanwhile; three counted, since one may have been under way at the start): read
/// every half second, once more after the last; fails if it does not hold, or if the operator
/// makes fewer passes of it within TIMEOUT.
pub async fn holds_over_passes<F, Fut>(
    operator: &Operator,
    object: (&str, &str),
    what: &str,
    holds: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let counter = || passes_of(operator, object);
    let counted = format!("passes of {} {}", object.0, object.1);
    holds_while((counter, &counted), Duration::ZERO, what, holds).await;
}

/// [`holds_over_passes`] for an object that waits for its spec to change (refused, with no
/// look again due): each look first annotates it ([`annotate`]), an edit that wakes a pass and
/// changes nothing it acts on.
pub async fn holds_over_pokes<K, F, Fut>(
    operator: &Operator,
    api: &Api<K>,
    object: (&str, &str),
    what: &str,
    mut holds: F,
) where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut pokes = 0u32;
    let poked = || {
        pokes += 1;
        let check = holds();
        let (api, name, n) = (api.clone(), object.1.to_owned(), pokes.to_string());
        async move {
            annotate(&api, &name, "test.rds.operator.rs/poke", &n).await;
            check.await
        }
    };
    holds_over_passes(operator, object, what, poked).await;
}

/// The one loop of the negative checks: `holds` is read every half second until `moved` (a
/// counter of the operator's: its passes, its listings) has moved three times and `at_least` has
/// passed, and once more then; it fails if `holds` does not hold, or if the counter moves fewer
/// times within TIMEOUT (the check would prove nothing).
pub async fn holds_while<F, Fut>(
    (moved, counted): (impl Fn() -> u64, &str),
    at_least: Duration,
    what: &str,
    mut holds: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let (before, start) = (moved(), Instant::now());
    loop {
        let made = moved().saturating_sub(before);
        assert!(holds().await, "{what}: not so after {made} {counted}");
        if made >= 3 && start.elapsed() >= at_least {
            return;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "{what}: {made} {counted} in {TIMEOUT:?}, which proves nothing"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Sets annotation `key` to `value` on the object `name` (a merge patch): an edit that wakes the
/// operator's pass of it without changing its spec.
pub async fn annotate<K>(api: &Api<K>, name: &str, key: &str, value: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let patch = serde_json::json!({"metadata": {"annotations": {key: value}}});
    (api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .unwrap_or_else(|e| panic!("annotate {name}: {e}"));
}

/// The listings of its locations' instances the operator has made, counted by the changes it
/// is seen to make to the time of the last one (`rds_operator_location_last_poll_timestamp_seconds`,
/// the newest of its locations); a direct read of one instance is no listing. Read often enough
/// (every half second) to see each at the test bed's intervals.
pub fn listings(operator: &Operator) -> impl Fn() -> u64 + '_ {
    let last = || {
        let Some((_, text)) = operator.get("/metrics") else {
            return 0.0;
        };
        (text.lines())
            .filter(|l| l.starts_with("rds_operator_location_last_poll_timestamp_seconds{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .fold(0.0, f64::max)
    };
    let seen = std::cell::Cell::new((last(), 0u64));
    move || {
        let (before, n) = seen.get();
        let now = last();
        let n = if now > before { n + 1 } else { n };
        seen.set((now.max(before), n));
        n
    }
}

/// [`holds_over_passes`] for an object the operator does not pass over while nothing changes (a
/// DBInstance in sync is looked at through its location's shared listing): `holds` stays true
/// while the operator lists its location's instances three more times.
pub async fn holds_over_polls<F, Fut>(operator: &Operator, what: &str, holds: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let listed = listings(operator);
    holds_while(
        (listed, "listings of the location"),
        Duration::ZERO,
        what,
        holds,
    )
    .await;
}

/// In sync: no call that changes anything (every call but a read) names `identifiers` at the
/// emulator while the operator makes three passes of the object `name` of `kind`.
pub async fn steady_state(operator: &Operator, object: (&str, &str), identifiers: &[&str]) {
    let before = mutations(identifiers);
    let steady = || async { mutations(identifiers) == before };
    holds_over_passes(operator, object, "no mutating call in steady state", steady).await;
}
