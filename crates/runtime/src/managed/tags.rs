//! Tags every kind shares: the ownership tags, and the changes that keep to the keys the operator
//! manages. Pure.

use std::collections::BTreeMap;

use crate::crd::{OWNER_NAME_TAG, OWNER_TAG, Tag};

/// The ownership tags: the object's uid (the idempotency key, and what the IAM policy checks) and
/// its `namespace/name` for people reading the AWS console.
pub fn owner_tags(uid: &str, namespace: &str, name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (OWNER_TAG.to_owned(), uid.to_owned()),
        (OWNER_NAME_TAG.to_owned(), format!("{namespace}/{name}")),
    ])
}

/// Whether a list of the operator's settings names the namespace (`*`: every namespace).
pub fn listed(list: &[String], namespace: &str) -> bool {
    list.iter().any(|n| n == "*" || n == namespace)
}

/// Whether a grant tag (`key`) names the namespace: its value lists namespaces, separated by
/// spaces (RDS tag values cannot hold commas).
pub fn tag_grants(tags: &BTreeMap<String, String>, key: &str, namespace: &str) -> bool {
    (tags.get(key)).is_some_and(|v| v.split_whitespace().any(|n| n == namespace))
}

/// Whether AWS tags mark their resource as the one made for the object with this uid.
pub fn owned_by(tags: &BTreeMap<String, String>, uid: &str) -> bool {
    tags.get(OWNER_TAG).map(String::as_str) == Some(uid)
}

/// The spec's tags, then the ownership tags (which win).
pub fn with_owner(
    spec_tags: &[Tag],
    uid: &str,
    namespace: &str,
    name: &str,
) -> BTreeMap<String, String> {
    let mut tags: BTreeMap<String, String> = (spec_tags.iter())
        .map(|t| (t.key.clone(), t.value.clone()))
        .collect();
    tags.extend(owner_tags(uid, namespace, name));
    tags
}

/// The keys of spec tags, sorted: the tags the operator manages.
pub fn keys(spec_tags: &[Tag]) -> Vec<String> {
    let mut keys: Vec<String> = spec_tags.iter().map(|t| t.key.clone()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The spec's tag keys the operator has applied once this sync's AddTagsToResource is done: those
/// it applied before, and those it adds now (missing, or with another value). A key already on the
/// resource with the spec's value stays someone else's, so removing it from the spec later leaves
/// it where it was (an AWS Backup plan's tag, a platform's cost allocation tag).
pub fn applied(
    spec_tags: &[Tag],
    observed: &BTreeMap<String, String>,
    before: &[String],
) -> Vec<String> {
    let mut keys: Vec<String> = (spec_tags.iter())
        .filter(|t| before.contains(&t.key) || observed.get(&t.key) != Some(&t.value))
        .map(|t| t.key.clone())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The tags to add (desired ones missing or different) and to remove: keys the operator applied
/// before (`managed`) that left the spec. Tags others set, and `aws:` ones, are never removed.
pub fn changes(
    observed: &BTreeMap<String, String>,
    desired: &BTreeMap<String, String>,
    managed: &[String],
) -> (BTreeMap<String, String>, Vec<String>) {
    let add = (desired.iter())
        .filter(|(k, v)| observed.get(*k) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let remove = (observed.keys())
        .filter(|k| !k.starts_with("aws:") && !desired.contains_key(*k))
        .filter(|k| managed.contains(k))
        .cloned()
        .collect();
    (add, remove)
}

/// The namespace of the DBInstance (or group) the ownership tags name, if they name one.
pub fn owner_namespace(tags: &BTreeMap<String, String>) -> Option<&str> {
    tags.get(OWNER_TAG)?;
    Some(tags.get(OWNER_NAME_TAG)?.split_once('/')?.0)
}

/// Whether the ownership tags say an object of this namespace owns the resource.
pub fn owned_by_namespace(tags: &BTreeMap<String, String>, namespace: &str) -> bool {
    owner_namespace(tags) == Some(namespace)
}

/// Whether the ownership tags say an object of another namespace owns the resource (tags that
/// carry the uid but no readable namespace count as another's).
pub fn of_another_namespace(tags: &BTreeMap<String, String>, namespace: &str) -> bool {
    tags.contains_key(OWNER_TAG) && !owned_by_namespace(tags, namespace)
}
