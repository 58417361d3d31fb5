//! The pure middle of the reconcile: desired spec + observed RDS instance -> what to do and what to
//! report. No I/O here; everything is a plain value, so every rule has a unit test.

use std::collections::BTreeMap;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::crd::{
    Condition, DBInstance, DBInstanceSpec, DBInstanceStatus, DeletionPolicy, DriftPolicy,
    DriftRecord, Endpoint, FieldDrift, OWNER_NAME_TAG, OWNER_TAG,
};
use crate::drift::Diff;
use crate::observer::is_transitional;
use crate::rds::ObservedInstance;

/// What to do for a DBInstance that is not being deleted.
#[derive(Clone, Debug, PartialEq)]
pub enum ApplyStep {
    /// No instance with the identifier: create it.
    Create,
    /// Our instance was deleted outside the operator: create it again from the spec.
    Recreate,
    /// Our instance was deleted outside the operator and driftPolicy is Report: only say so.
    Missing,
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

/// `existed` says an instance was observed for this DBInstance before (its ARN is in status).
pub fn plan_apply(
    uid: &str,
    observed: Option<&ObservedInstance>,
    existed: bool,
    policy: DriftPolicy,
) -> ApplyStep {
    match observed {
        None if existed && policy == DriftPolicy::Report => ApplyStep::Missing,
        None if existed => ApplyStep::Recreate,
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

/// A salted hash of the master password, to notice a rotation without keeping the password.
pub fn password_hash(uid: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("rds-operator:{uid}:{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The drift record to show: the previous one (and its time) while the same fields differ the same
/// way, so an unchanged drift writes nothing new.
pub fn drift_record(
    previous: Option<&DriftRecord>,
    action: &str,
    diffs: &[Diff],
    now: &str,
) -> DriftRecord {
    let fields: Vec<FieldDrift> = diffs
        .iter()
        .map(|d| FieldDrift {
            field: d.field.to_owned(),
            observed: d.observed.clone(),
            desired: d.desired.clone(),
        })
        .collect();
    match previous {
        Some(p) if p.action == action && p.fields == fields => p.clone(),
        _ => DriftRecord {
            time: now.to_owned(),
            action: action.to_owned(),
            fields,
        },
    }
}

/// "dbInstanceClass: db.t3.small -> db.t3.micro; tags: a=b -> (none)"
pub fn describe_diffs(diffs: &[Diff]) -> String {
    diffs
        .iter()
        .map(|d| {
            format!(
                "{}: {} -> {}",
                d.field,
                or_none(&d.observed),
                or_none(&d.desired)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

/// Parses a Go-style duration as the CRD accepts it: "60s", "5m", "1m30s", "500ms", "1h".
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?} is not a duration such as 60s, 5m, 1m30s or 500ms");
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = rest.parse::<f64>() {
        return Ok(Duration::from_secs_f64(seconds));
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let (number, tail) = rest.split_at(split);
        let value: f64 = number.parse().map_err(|_| bad())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        total += value
            * match unit {
                "ns" => 1e-9,
                "us" | "µs" => 1e-6,
                "ms" => 1e-3,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return Err(bad()),
            };
        rest = tail;
    }
    Ok(Duration::from_secs_f64(total))
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
    if let Some(c) = &db.spec.connection_secret {
        crate::connection::validate_templates(&c.extra_keys).map_err(|e| e.to_string())?;
        let clashes = [
            db.spec
                .master_user_password
                .as_ref()
                .map(|r| r.name.clone()),
            Some(format!(
                "{}-master-password",
                db.metadata.name.as_deref().unwrap_or_default()
            )),
        ];
        if clashes.iter().flatten().any(|n| *n == c.name) {
            return Err(format!(
                "connectionSecret.name {:?} is the master password Secret; choose another name",
                c.name
            ));
        }
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

    const C: DriftPolicy = DriftPolicy::Correct;

    #[test]
    fn absent_instance_is_created() {
        assert_eq!(plan_apply(UID, None, false, C), ApplyStep::Create);
    }

    #[test]
    fn instance_deleted_out_of_band_is_recreated_or_reported() {
        assert_eq!(plan_apply(UID, None, true, C), ApplyStep::Recreate);
        assert_eq!(
            plan_apply(UID, None, true, DriftPolicy::Report),
            ApplyStep::Missing
        );
    }

    #[test]
    fn our_tagged_instance_is_adopted_not_created_again() {
        assert_eq!(
            plan_apply(UID, Some(&ours("creating")), false, C),
            ApplyStep::Observe
        );
    }

    #[test]
    fn durations_in_go_syntax() {
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3d").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn password_hash_is_salted_and_hides_the_password() {
        let h = password_hash(UID, "hunter2");
        assert_eq!(h.len(), 64);
        assert!(!h.contains("hunter2"));
        assert_ne!(h, password_hash("other-uid", "hunter2"));
        assert_eq!(h, password_hash(UID, "hunter2"));
    }

    #[test]
    fn unchanged_drift_keeps_its_record() {
        let diffs = vec![Diff {
            field: "multiAZ",
            observed: "true".into(),
            desired: "false".into(),
        }];
        let first = drift_record(None, "Reported", &diffs, "t1");
        assert_eq!(first.time, "t1");
        assert_eq!(drift_record(Some(&first), "Reported", &diffs, "t2"), first);
        assert_eq!(
            drift_record(Some(&first), "Corrected", &diffs, "t3").time,
            "t3"
        );
        assert_eq!(describe_diffs(&diffs), "multiAZ: true -> false");
    }

    #[test]
    fn foreign_instance_is_never_adopted() {
        assert_eq!(
            plan_apply(UID, Some(&theirs()), false, C),
            ApplyStep::Foreign {
                owner: Some("other/db".into())
            }
        );
        let mut other_uid = ours("available");
        other_uid
            .tags
            .insert(OWNER_TAG.into(), "another-uid".into());
        assert!(matches!(
            plan_apply(UID, Some(&other_uid), true, C),
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
