//! What the spec alone decides: validation the schema cannot make, ownership and tags, the names
//! and hashes derived from the DBInstance, and its intervals.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::dbinstance::{
    ACK_ADOPTION_POLICY, ACK_DELETION_POLICY, AdoptionPolicy, DBInstance, DBInstanceSpec,
    DeletionPolicy, ManagementPolicy, OWNER_NAME_TAG, OWNER_TAG, RETAINED_TAG,
};
use crate::duration::MIN_SPEC_INTERVAL;
use crate::rds_state::{ObservedInstance, PollIntervals};

pub use crate::database::password::{legacy_password_hash, password_hash};
pub use crate::database::secret::{controlled_by, owner_referenced};
pub use crate::database::snapshots::{final_snapshot_at, final_snapshot_name};
use crate::database::spec::{Backups, Connection, Deletion, Network, PasswordSource, Security};
pub use crate::database::window::in_window;

/// Is this observed instance the one created for the DBInstance with this uid?
pub fn owned_by(observed: &ObservedInstance, uid: &str) -> bool {
    crate::managed::tags::owned_by(&observed.tags, uid)
}

fn annotation<'a>(db: &'a DBInstance, key: &str) -> Option<&'a str> {
    (db.metadata.annotations.as_ref())
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

/// Whether the instance in status is this DBInstance's own (created, restored or adopted by it),
/// the only kind it restores or creates again when it goes.
pub fn was_owned(db: &DBInstance) -> bool {
    (db.status.as_ref()).is_some_and(|s| s.common.arn.is_some() && s.common.owned == Some(true))
}

/// Whether the DBInstance only observes its instance (managementPolicy ObserveOnly).
pub fn observe_only(db: &DBInstance) -> bool {
    db.spec.policies.management_policy == ManagementPolicy::ObserveOnly
}

/// Whether the DBInstance is in dry run (annotation `rds.operator.rs/dry-run: "true"`).
pub fn dry_run(db: &DBInstance) -> bool {
    annotation(db, crate::dbinstance::DRY_RUN_ANNOTATION)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The adoption policy: spec.adoptionPolicy, or ACK's `services.k8s.aws/adoption-policy`
/// annotation; an unknown value, or one that contradicts the spec, is refused.
pub fn adoption_policy(db: &DBInstance) -> Result<AdoptionPolicy, String> {
    let ack = match annotation(db, ACK_ADOPTION_POLICY) {
        None => None,
        Some(v) if v.eq_ignore_ascii_case("adopt") => Some(AdoptionPolicy::Adopt),
        Some(v) if v.eq_ignore_ascii_case("adopt-or-create") => Some(AdoptionPolicy::AdoptOrCreate),
        Some(v) => {
            return Err(format!(
                "annotation {ACK_ADOPTION_POLICY}: {v:?} is neither adopt nor adopt-or-create; \
                 write spec.adoptionPolicy: Adopt or AdoptOrCreate instead"
            ));
        }
    };
    match (db.spec.policies.adoption_policy, ack) {
        (Some(spec), Some(ack)) if spec != ack => Err(format!(
            "annotation {ACK_ADOPTION_POLICY} says {ack:?} and spec.adoptionPolicy says {spec:?}; \
             keep one of them"
        )),
        (spec, ack) => Ok(spec.or(ack).unwrap_or_default()),
    }
}

/// What deleting the DBInstance does: ACK's `services.k8s.aws/deletion-policy: retain` keeps the
/// instance whatever the spec says; otherwise spec.deletionPolicy (ACK's `delete` deletes, with
/// the final snapshot the spec asks for: Snapshot unless it says Delete).
pub fn deletion_policy(db: &DBInstance) -> DeletionPolicy {
    match annotation(db, ACK_DELETION_POLICY) {
        Some(v) if v.eq_ignore_ascii_case("retain") => DeletionPolicy::Retain,
        _ => db.spec.deletion.deletion_policy,
    }
}

fn validate_ack_annotations(db: &DBInstance) -> Result<(), String> {
    adoption_policy(db)?;
    match annotation(db, ACK_DELETION_POLICY) {
        None => Ok(()),
        Some(v) if v.eq_ignore_ascii_case("retain") => Ok(()),
        Some(v) if v.eq_ignore_ascii_case("delete") => match db.spec.deletion.deletion_policy {
            DeletionPolicy::Retain => Err(format!(
                "annotation {ACK_DELETION_POLICY}: delete contradicts spec.deletionPolicy Retain; keep one of them"
            )),
            _ => Ok(()),
        },
        Some(v) => Err(format!(
            "annotation {ACK_DELETION_POLICY}: {v:?} is neither retain nor delete; \
             write spec.deletionPolicy: Retain, Snapshot or Delete instead"
        )),
    }
}

/// The `namespace/name` an instance's ownership tag names, when it carries one.
fn owner_name(observed: &ObservedInstance) -> Option<(&str, &str)> {
    observed.tags.get(OWNER_NAME_TAG)?.split_once('/')
}

/// Whether the instance belongs to a DBInstance of another namespace (by its ownership tags):
/// never adopted or observed from this one.
pub fn of_another_namespace(observed: &ObservedInstance, db: &DBInstance) -> bool {
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    crate::managed::tags::of_another_namespace(&observed.tags, namespace)
}

/// Whether the instance was retained by a DBInstance of this namespace and name (a DBInstance
/// deleted with deletionPolicy Retain, then applied again): adopted without asking.
pub fn retained_for(observed: &ObservedInstance, db: &DBInstance) -> bool {
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    observed.tags.contains_key(RETAINED_TAG) && owner_name(observed) == Some((namespace, name))
}

/// The DBInstance (namespace, name, uid) an instance's ownership tags name, when it is one of
/// this namespace's other than this one: whether it still exists decides whether it may be adopted.
pub fn tagged_owner(
    observed: &ObservedInstance,
    db: &DBInstance,
) -> Option<(String, String, String)> {
    let uid = observed.tags.get(OWNER_TAG)?;
    let (ns, name) = owner_name(observed)?;
    (!of_another_namespace(observed, db) && Some(uid.as_str()) != db.metadata.uid.as_deref())
        .then(|| (ns.to_owned(), name.to_owned(), uid.clone()))
}

/// Whether this DBInstance may read what it needs to take over or observe an instance that is not
/// its own (its referenced password, its connection Secret): observe-only, an adoption policy, or
/// an instance it retained itself; never one of another namespace.
pub fn may_claim(db: &DBInstance, observed: &ObservedInstance) -> bool {
    !of_another_namespace(observed, db)
        && (observe_only(db)
            || retained_for(observed, db)
            || adoption_policy(db).is_ok_and(|p| p != AdoptionPolicy::Never))
}

/// Whether the DBInstance is paused (annotation `rds.operator.rs/paused: "true"`): no AWS call at all.
pub fn paused(db: &DBInstance) -> bool {
    (db.metadata.annotations.as_ref())
        .and_then(|a| a.get(crate::dbinstance::PAUSED_ANNOTATION))
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// Whether the DBInstance carries the operator's cleanup finalizer.
pub fn has_finalizer(db: &DBInstance) -> bool {
    crate::dbinstance::has_finalizer(&db.metadata)
}

/// Name of the Secret holding a generated master password.
pub fn generated_secret_name(db: &DBInstance) -> String {
    format!(
        "{}-master-password",
        db.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether the DBInstance is a member of an Aurora cluster (dbClusterRef or dbClusterIdentifier).
pub fn is_member(db: &DBInstance) -> bool {
    db.spec.db_cluster_ref.is_some() || db.spec.db_cluster_identifier.is_some()
}

/// The spec fields a member takes from its cluster, by their spec names.
pub const CLUSTER_OWNED: &[&str] = &[
    "allocatedStorage",
    "maxAllocatedStorage",
    "storageType",
    "iops",
    "storageThroughput",
    "masterUsername",
    "masterUserPassword",
    "manageMasterUserPassword",
    "dbName",
    "backupRetentionPeriod",
    "preferredBackupWindow",
    "engineVersion",
    "storageEncrypted",
    "kmsKeyID",
    "port",
    "multiAZ",
    "vpcSecurityGroupIDs",
    "dbSubnetGroupName",
    "deletionProtection",
    "copyTagsToSnapshot",
    "enableIAMDatabaseAuthentication",
    "enableCloudwatchLogsExports",
    "characterSetName",
    "databaseInsightsMode",
];

/// A member's spec as the plan reads it: every field its cluster owns ([`CLUSTER_OWNED`]) left
/// out, whatever the object says (the API server refuses them, and an object stored before that
/// rule is read the same way), so none is ever sent in a Create or Modify, or seen as drift.
pub fn member_view(spec: &DBInstanceSpec) -> DBInstanceSpec {
    let view = DBInstanceSpec {
        allocated_storage: None,
        max_allocated_storage: None,
        storage_type: None,
        iops: None,
        storage_throughput: None,
        master_username: None,
        password: PasswordSource::default(),
        db_name: None,
        backup_retention_period: None,
        backups: Backups::default(),
        engine_version: None,
        security: Security::default(),
        network: Network::default(),
        multi_az: None,
        character_set_name: None,
        restore_from: None,
        connection: Connection::default(),
        insights: crate::database::spec::Insights {
            database_insights_mode: None,
            ..spec.insights.clone()
        },
        ..spec.clone()
    };
    DBInstanceSpec {
        deletion: Deletion {
            deletion_protection: None,
            final_db_snapshot_identifier: None,
            ..view.deletion.clone()
        },
        ..view
    }
}

/// Whether the operator sends the password itself (and so tracks its hash for rotation).
pub fn operator_sends_password(spec: &DBInstanceSpec) -> bool {
    spec.password.manage_master_user_password != Some(true)
}

/// The final snapshot's identifier: spec.finalDBSnapshotIdentifier, else one derived from the
/// instance, the DBInstance's uid and its deletion time: unique per deletion, and the same on every
/// retry of one deletion (after a crash too).
pub fn final_snapshot_identifier(db: &DBInstance) -> String {
    let explicit = db.spec.deletion.final_db_snapshot_identifier.as_deref();
    final_snapshot_name(explicit, &db.identifier(), &db.metadata)
}

/// Tags to create the instance with: the spec's, then the ownership tags (which win).
pub fn creation_tags(
    spec: &DBInstanceSpec,
    uid: &str,
    namespace: &str,
    name: &str,
) -> BTreeMap<String, String> {
    crate::managed::tags::with_owner(&spec.tags, uid, namespace, name)
}

/// The tags this DBInstance's instance should carry: the spec's and the ownership tags.
pub fn tags_of(db: &DBInstance) -> BTreeMap<String, String> {
    let uid = db.metadata.uid.as_deref().unwrap_or_default();
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    let name = db.metadata.name.as_deref().unwrap_or_default();
    creation_tags(&db.spec, uid, namespace, name)
}

/// The keys of spec.tags, sorted: the tags the operator manages.
pub fn tag_keys(spec: &DBInstanceSpec) -> Vec<String> {
    crate::managed::tags::keys(&spec.tags)
}

/// The Secrets a DBInstance uses: its referenced or generated password Secret, and its connection
/// Secret.
pub fn secrets_of(db: &DBInstance) -> Vec<(String, &'static str)> {
    let password = match &db.spec.password.master_user_password {
        Some(r) => (r.name.clone(), "master password Secret"),
        None => (
            generated_secret_name(db),
            "generated master password Secret",
        ),
    };
    let connection = (db.spec.connection.connection_secret.as_ref())
        .map(|c| (c.name.clone(), "connection Secret"));
    std::iter::once(password).chain(connection).collect()
}

/// Checks against the other DBInstances of the namespace: the connection Secret may not be a
/// Secret another one uses (its password, generated password or connection Secret).
pub fn validate_against(db: &DBInstance, peers: &[DBInstance]) -> Result<(), String> {
    let Some(wanted) = &db.spec.connection.connection_secret else {
        return Ok(());
    };
    for peer in peers.iter().filter(|p| p.metadata.uid != db.metadata.uid) {
        if let Some((_, what)) = secrets_of(peer)
            .into_iter()
            .find(|(n, _)| *n == wanted.name)
        {
            return Err(format!(
                "connectionSecret.name {:?} is the {what} of DBInstance {}; choose another name",
                wanted.name,
                peer.metadata.name.as_deref().unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// Checks the schema cannot make: returns a message for the user when the spec is unusable.
pub fn validate(db: &DBInstance) -> Result<(), String> {
    let namespace = db.metadata.namespace.as_deref().unwrap_or_default();
    validate_ack_annotations(db)?;
    // The identifier defaults to metadata.name, which Kubernetes lets hold what RDS refuses (the
    // CRD holds a spec's own to RDS's rule at apply).
    if db.spec.db_instance_identifier.is_none()
        && let Some(why) = crate::database::identifier::problem(
            "metadata.name (the default dbInstanceIdentifier)",
            db.metadata.name.as_deref().unwrap_or_default(),
        )
    {
        return Err(format!("{why}; set dbInstanceIdentifier"));
    }
    if let Some(r) = &db.spec.password.master_user_password
        && let Some(ns) = r.namespace.as_deref()
        && ns != namespace
    {
        return Err(format!(
            "masterUserPassword refers to a Secret in namespace {ns:?}; only the DBInstance's own namespace {namespace:?} is allowed"
        ));
    }
    if let Some(c) = &db.spec.connection.connection_secret {
        crate::database::connection::validate_templates(&c.extra_keys)
            .map_err(|e| e.to_string())?;
        let clashes = [
            db.spec
                .password
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
    // A read replica inherits its source's storage (CreateDBInstanceReadReplica takes none), and
    // a restore its snapshot's or source's (the restores take none either).
    let inherits = db.spec.engine.starts_with("aurora")
        || db.spec.replica_of.is_some()
        || db.spec.restore_from.is_some();
    if !inherits && db.spec.allocated_storage.is_none() {
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
    if own < intervals.settled || spec.password.manage_master_user_password == Some(true) {
        own
    } else {
        intervals.settled * 10
    }
}
