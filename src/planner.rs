//! The pure middle of the reconcile: desired spec + observed RDS instance -> what to do and what to
//! report. No I/O here; everything is a plain value, so every rule has a unit test.

use std::collections::BTreeMap;

use crate::crd::{
    Condition, DBInstance, DBInstanceSpec, DBInstanceStatus, DeletionPolicy, Endpoint,
    OWNER_NAME_TAG, OWNER_TAG,
};
use crate::observer::is_transitional;
use crate::rds::ObservedInstance;

/// What to do for a DBInstance that is not being deleted.
#[derive(Clone, Debug, PartialEq)]
pub enum ApplyStep {
    /// No instance with the identifier: create it.
    Create,
    /// An instance with the identifier exists but is not ours: never touch it.
    Foreign { owner: Option<String> },
    /// Our instance: report what RDS says.
    Observe,
}

/// What to do for a DBInstance that is being deleted.
#[derive(Clone, Debug, PartialEq)]
pub enum CleanupStep {
    /// Nothing (more) to do in RDS: release the finalizer.
    Release(Released),
    /// RDS is deleting, or busy: look again later.
    Wait,
    /// Send DeleteDBInstance, with a final snapshot when named.
    Delete { final_snapshot: Option<String> },
    /// The instance has deletion protection on: report it and wait for a person.
    Protected,
}

/// Why the finalizer may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// The instance is gone.
    Gone,
    /// deletionPolicy Retain.
    Retained,
    /// The instance with the identifier belongs to someone else.
    NotOurs,
}

/// Is this observed instance the one created for the DBInstance with this uid?
pub fn owned_by(observed: &ObservedInstance, uid: &str) -> bool {
    observed.tags.get(OWNER_TAG).map(String::as_str) == Some(uid)
}

pub fn plan_apply(uid: &str, observed: Option<&ObservedInstance>) -> ApplyStep {
    match observed {
        None => ApplyStep::Create,
        Some(o) if owned_by(o, uid) => ApplyStep::Observe,
        Some(o) => ApplyStep::Foreign {
            owner: o.tags.get(OWNER_NAME_TAG).cloned(),
        },
    }
}

pub fn plan_cleanup(
    policy: DeletionPolicy,
    uid: &str,
    identifier: &str,
    observed: Option<&ObservedInstance>,
) -> CleanupStep {
    let Some(o) = observed else {
        return CleanupStep::Release(Released::Gone);
    };
    if !owned_by(o, uid) {
        return CleanupStep::Release(Released::NotOurs);
    }
    match policy {
        DeletionPolicy::Retain => CleanupStep::Release(Released::Retained),
        _ if o.status == "deleting" => CleanupStep::Wait,
        _ if o.deletion_protection == Some(true) => CleanupStep::Protected,
        DeletionPolicy::Delete => CleanupStep::Delete {
            final_snapshot: None,
        },
        DeletionPolicy::Snapshot => CleanupStep::Delete {
            final_snapshot: Some(final_snapshot_identifier(identifier, uid)),
        },
    }
}

/// The final snapshot's identifier: derived from the instance and the DBInstance's uid, so a retry
/// after a crash names the same snapshot.
pub fn final_snapshot_identifier(identifier: &str, uid: &str) -> String {
    let suffix: String = uid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    format!("{identifier}-final-{suffix}")
}

/// Tags to create the instance with: the spec's, then the ownership tags (which win).
pub fn creation_tags(
    spec: &DBInstanceSpec,
    uid: &str,
    namespace: &str,
    name: &str,
) -> BTreeMap<String, String> {
    let mut tags: BTreeMap<String, String> = spec
        .tags
        .iter()
        .map(|t| (t.key.clone(), t.value.clone()))
        .collect();
    tags.insert(OWNER_TAG.to_owned(), uid.to_owned());
    tags.insert(OWNER_NAME_TAG.to_owned(), format!("{namespace}/{name}"));
    tags
}

/// Checks the schema cannot make: returns a message for the user when the spec is unusable.
pub fn validate(db: &DBInstance) -> Result<(), String> {
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    if let Some(r) = &db.spec.master_user_password
        && let Some(ns) = r.namespace.as_deref()
        && ns != namespace
    {
        return Err(format!(
            "masterUserPassword refers to a Secret in namespace {ns:?}; only the DBInstance's own namespace {namespace:?} is allowed"
        ));
    }
    if !db.spec.engine.starts_with("aurora") && db.spec.allocated_storage.is_none() {
        return Err(format!(
            "allocatedStorage is required for engine {}",
            db.spec.engine
        ));
    }
    Ok(())
}

/// The status fields that come from the observed instance.
pub fn observed_status(identifier: &str, observed: &ObservedInstance) -> DBInstanceStatus {
    DBInstanceStatus {
        db_instance_identifier: Some(identifier.to_owned()),
        db_instance_status: Some(observed.status.clone()),
        endpoint: match (&observed.address, observed.port) {
            (Some(address), Some(port)) => Some(Endpoint {
                address: address.clone(),
                port,
            }),
            _ => None,
        },
        arn: observed.arn.clone(),
        pending_modified_values: observed.pending_modified_values.clone(),
        ..Default::default()
    }
}

/// The Ready condition for an instance of ours in this RDS state.
pub fn readiness(status: &str) -> (bool, String, String) {
    match status {
        "available" => (
            true,
            "Available".into(),
            "the RDS instance is available".into(),
        ),
        s if is_transitional(s) => (
            false,
            camel_case(s),
            format!("RDS reports the instance as {s}; waiting for it to become available"),
        ),
        s => (
            false,
            camel_case(s),
            format!("RDS reports the instance as {s}, which needs attention in AWS"),
        ),
    }
}

/// `backing-up` -> `BackingUp`: RDS states as condition reasons.
pub fn camel_case(s: &str) -> String {
    s.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Builds a condition.
pub fn condition(
    type_: &str,
    ok: bool,
    reason: &str,
    message: &str,
    generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: if ok { "True" } else { "False" }.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: None,
        observed_generation: generation,
    }
}

/// Merges new conditions into the previous ones: a condition whose status did not change keeps its
/// lastTransitionTime, so an unchanged status writes nothing new (no hot loop).
pub fn merge_conditions(previous: &[Condition], new: Vec<Condition>, now: &str) -> Vec<Condition> {
    let mut merged: Vec<Condition> = previous
        .iter()
        .filter(|p| !new.iter().any(|n| n.type_ == p.type_))
        .cloned()
        .collect();
    for mut c in new {
        let before = previous.iter().find(|p| p.type_ == c.type_);
        c.last_transition_time = match before {
            Some(p) if p.status == c.status => p
                .last_transition_time
                .clone()
                .or_else(|| Some(now.to_owned())),
            _ => Some(now.to_owned()),
        };
        merged.push(c);
    }
    merged.sort_by(|a, b| a.type_.cmp(&b.type_));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{SecretKeyReference, Tag};

    const UID: &str = "6b0f1c2e-1111-2222-3333-444455556666";

    fn ours(status: &str) -> ObservedInstance {
        ObservedInstance {
            identifier: "coffee".into(),
            status: status.into(),
            tags: [(OWNER_TAG.to_owned(), UID.to_owned())].into(),
            ..Default::default()
        }
    }

    fn theirs() -> ObservedInstance {
        ObservedInstance {
            identifier: "coffee".into(),
            status: "available".into(),
            tags: [(OWNER_NAME_TAG.to_owned(), "other/db".to_owned())].into(),
            ..Default::default()
        }
    }

    #[test]
    fn absent_instance_is_created() {
        assert_eq!(plan_apply(UID, None), ApplyStep::Create);
    }

    #[test]
    fn our_tagged_instance_is_adopted_not_created_again() {
        assert_eq!(plan_apply(UID, Some(&ours("creating"))), ApplyStep::Observe);
    }

    #[test]
    fn foreign_instance_is_never_adopted() {
        assert_eq!(
            plan_apply(UID, Some(&theirs())),
            ApplyStep::Foreign {
                owner: Some("other/db".into())
            }
        );
        let mut other_uid = ours("available");
        other_uid
            .tags
            .insert(OWNER_TAG.into(), "another-uid".into());
        assert!(matches!(
            plan_apply(UID, Some(&other_uid)),
            ApplyStep::Foreign { .. }
        ));
    }

    #[test]
    fn cleanup_follows_deletion_policy() {
        let o = ours("available");
        assert_eq!(
            plan_cleanup(DeletionPolicy::Delete, UID, "coffee", Some(&o)),
            CleanupStep::Delete {
                final_snapshot: None
            }
        );
        assert_eq!(
            plan_cleanup(DeletionPolicy::Retain, UID, "coffee", Some(&o)),
            CleanupStep::Release(Released::Retained)
        );
        assert_eq!(
            plan_cleanup(DeletionPolicy::Snapshot, UID, "coffee", Some(&o)),
            CleanupStep::Delete {
                final_snapshot: Some("coffee-final-6b0f1c2e".into())
            }
        );
    }

    #[test]
    fn cleanup_of_missing_or_foreign_instance_releases() {
        assert_eq!(
            plan_cleanup(DeletionPolicy::Delete, UID, "coffee", None),
            CleanupStep::Release(Released::Gone)
        );
        assert_eq!(
            plan_cleanup(DeletionPolicy::Delete, UID, "coffee", Some(&theirs())),
            CleanupStep::Release(Released::NotOurs)
        );
    }

    #[test]
    fn cleanup_waits_while_deleting_and_stops_at_protection() {
        assert_eq!(
            plan_cleanup(
                DeletionPolicy::Delete,
                UID,
                "coffee",
                Some(&ours("deleting"))
            ),
            CleanupStep::Wait
        );
        let mut protected = ours("available");
        protected.deletion_protection = Some(true);
        assert_eq!(
            plan_cleanup(DeletionPolicy::Delete, UID, "coffee", Some(&protected)),
            CleanupStep::Protected
        );
        assert_eq!(
            plan_cleanup(DeletionPolicy::Retain, UID, "coffee", Some(&protected)),
            CleanupStep::Release(Released::Retained)
        );
    }

    #[test]
    fn ownership_tags_win_over_spec_tags() {
        let spec = DBInstanceSpec {
            tags: vec![
                Tag {
                    key: "team".into(),
                    value: "coffee".into(),
                },
                Tag {
                    key: OWNER_TAG.into(),
                    value: "forged".into(),
                },
            ],
            ..Default::default()
        };
        let tags = creation_tags(&spec, UID, "shop", "db");
        assert_eq!(tags["team"], "coffee");
        assert_eq!(tags[OWNER_TAG], UID);
        assert_eq!(tags[OWNER_NAME_TAG], "shop/db");
    }

    #[test]
    fn cross_namespace_password_is_refused() {
        let mut db = DBInstance::new(
            "db",
            DBInstanceSpec {
                engine: "mysql".into(),
                allocated_storage: Some(20),
                master_user_password: Some(SecretKeyReference {
                    name: "pw".into(),
                    key: "password".into(),
                    namespace: Some("elsewhere".into()),
                }),
                ..Default::default()
            },
        );
        db.metadata.namespace = Some("shop".into());
        assert!(validate(&db).unwrap_err().contains("elsewhere"));
        db.spec.master_user_password.as_mut().unwrap().namespace = Some("shop".into());
        assert_eq!(validate(&db), Ok(()));
        db.spec.allocated_storage = None;
        assert!(validate(&db).unwrap_err().contains("allocatedStorage"));
    }

    #[test]
    fn readiness_by_state() {
        assert!(readiness("available").0);
        let (ok, reason, _) = readiness("backing-up");
        assert!(!ok);
        assert_eq!(reason, "BackingUp");
        assert_eq!(
            readiness("incompatible-parameters").1,
            "IncompatibleParameters"
        );
    }

    #[test]
    fn unchanged_condition_keeps_its_transition_time() {
        let first = merge_conditions(
            &[],
            vec![condition("Ready", false, "Creating", "m", Some(1))],
            "t1",
        );
        assert_eq!(first[0].last_transition_time.as_deref(), Some("t1"));
        let same = merge_conditions(
            &first,
            vec![condition("Ready", false, "Creating", "m", Some(1))],
            "t2",
        );
        assert_eq!(same, first);
        let flipped = merge_conditions(
            &same,
            vec![condition("Ready", true, "Available", "m", Some(1))],
            "t3",
        );
        assert_eq!(flipped[0].last_transition_time.as_deref(), Some("t3"));
    }

    #[test]
    fn observed_status_reports_endpoint_only_when_known() {
        let mut o = ours("creating");
        assert_eq!(observed_status("coffee", &o).endpoint, None);
        o.address = Some("coffee.example".into());
        o.port = Some(3306);
        let s = observed_status("coffee", &o);
        assert_eq!(
            s.endpoint,
            Some(Endpoint {
                address: "coffee.example".into(),
                port: 3306
            })
        );
        assert_eq!(s.db_instance_status.as_deref(), Some("creating"));
    }
}
