//! What the spec alone decides: validation the schema cannot make, ownership and tags, the names
//! and hashes derived from the DBInstance, and its intervals.

use std::collections::BTreeMap;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::crd::{DBInstance, DBInstanceSpec, OWNER_NAME_TAG, OWNER_TAG};
use crate::duration::MIN_SPEC_INTERVAL;
use crate::observed::{ObservedInstance, PollIntervals};

/// Is this observed instance the one created for the DBInstance with this uid?
pub fn owned_by(observed: &ObservedInstance, uid: &str) -> bool {
    observed.tags.get(OWNER_TAG).map(String::as_str) == Some(uid)
}

/// Name of the Secret holding a generated master password.
pub fn generated_secret_name(db: &DBInstance) -> String {
    format!(
        "{}-master-password",
        db.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether the operator sends the password itself (and so tracks its hash for rotation).
pub fn operator_sends_password(spec: &DBInstanceSpec) -> bool {
    spec.manage_master_user_password != Some(true)
}

/// The final snapshot's identifier: spec.finalDBSnapshotIdentifier, else one derived from the
/// instance, the DBInstance's uid and its deletion time: unique per deletion, and the same on every
/// retry of one deletion (after a crash too).
pub fn final_snapshot_identifier(db: &DBInstance) -> String {
    if let Some(name) = &db.spec.final_db_snapshot_identifier {
        return name.clone();
    }
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let suffix: String = uid
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(8)
        .collect();
    let when = (db.metadata.deletion_timestamp.as_ref())
        .map(|t| t.0.strftime("%Y%m%d%H%M%S").to_string())
        .unwrap_or_default();
    format!("{}-final-{suffix}-{when}", db.identifier())
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

/// The keys of spec.tags, sorted: the tags the operator manages.
pub fn tag_keys(spec: &DBInstanceSpec) -> Vec<String> {
    let mut keys: Vec<String> = spec.tags.iter().map(|t| t.key.clone()).collect();
    keys.sort();
    keys.dedup();
    keys
}

/// A salted hash of the master password, to notice a rotation without keeping the password.
pub fn password_hash(uid: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("rds-operator:{uid}:{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
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
            Some(generated_secret_name(db)),
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

/// The drift interval of this DBInstance: its spec.driftInterval (never under 10 s), else the
/// operator's.
pub fn drift_interval(spec: &DBInstanceSpec, intervals: &PollIntervals) -> Duration {
    match spec.drift_interval {
        Some(d) if d.is_negative() => MIN_SPEC_INTERVAL,
        Some(d) => Duration::from(d).max(MIN_SPEC_INTERVAL),
        None => intervals.settled,
    }
}

/// When to look again at a settled instance without being woken. The shared poll wakes a
/// DBInstance whose instance changes, the watches wake it when its spec or Secrets change, so this
/// is a safety net (ten drift intervals), except where only a timer notices: a drift interval
/// shorter than the operator's, or a password RDS rotates in Secrets Manager.
pub fn settled_requeue(spec: &DBInstanceSpec, intervals: &PollIntervals) -> Duration {
    let own = drift_interval(spec, intervals);
    if own < intervals.settled || spec.manage_master_user_password == Some(true) {
        own
    } else {
        intervals.settled * 10
    }
}
