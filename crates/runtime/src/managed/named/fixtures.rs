//! What the named kinds' table tests start from: the Coffee Manage object `shop/coffee`, with
//! its finalizer, and RDS's tags of a resource it owns.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Facts, NamedKind, NamedPlan, Step};
use crate::crd::{FINALIZER, OWNER_NAME_TAG, OWNER_TAG};

pub const UID: &str = "uid-1";

/// The facts of `object` (named coffee in namespace shop), absent from RDS.
pub fn facts<K: NamedKind>(mut object: K, extra: K::Extra) -> Facts<K> {
    let meta = object.meta_mut();
    meta.namespace = Some("shop".into());
    meta.uid = Some(UID.into());
    meta.finalizers = Some(vec![FINALIZER.into()]);
    Facts {
        object,
        observed: None,
        extra,
        referrers: vec![],
        drift_interval: Duration::from_secs(60),
        busy_interval: Duration::from_secs(5),
        placement: Default::default(),
        now: "2026-01-01T00:00:00Z".into(),
    }
}

/// The ownership tags of a resource made for `shop/coffee`.
pub fn owner_tags() -> BTreeMap<String, String> {
    [
        (OWNER_TAG.to_owned(), UID.to_owned()),
        (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
    ]
    .into()
}

pub fn with<K: NamedKind>(mut f: Facts<K>, change: impl FnOnce(&mut Facts<K>)) -> Facts<K> {
    change(&mut f);
    f
}

/// The facts with the object being deleted.
pub fn deleting<K: NamedKind>(f: Facts<K>) -> Facts<K> {
    with(f, |f| {
        let epoch = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
        let time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(epoch);
        f.object.meta_mut().deletion_timestamp = Some(time);
    })
}

/// The plan's steps by name: a kind's own by its variant (`Create`, `Modify`), the others by
/// theirs (`AddTags`, `Delete`, `RemoveFinalizer`).
pub fn step_names<K: NamedKind>(plan: &NamedPlan<K>) -> Vec<String>
where
    K::Own: std::fmt::Debug,
{
    let first = |text: String| {
        let name = text.split([' ', '{', '(']).next().unwrap_or_default();
        name.to_owned()
    };
    (plan.steps.iter())
        .map(|s| match s {
            Step::Own(own) => first(format!("{own:?}")),
            other => first(format!("{other:?}")),
        })
        .collect()
}

/// Synced's reason in the plan's status ("" without one).
pub fn synced_reason<K: NamedKind>(plan: &NamedPlan<K>) -> String {
    (plan.status.as_ref())
        .map(|s| s.synced.reason.clone())
        .unwrap_or_default()
}
