//! Table tests of the plan: each row states the facts and the full plan expected from them.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::runtime::events::EventType::{self, Normal, Warning};

use super::status::observed_status;
use super::*;
use crate::aws_error::{AwsError, ErrorClass};
use crate::database::spec::PasswordSource;
use crate::dbinstance::drift::Modification;
use crate::dbinstance::{
    ConnectionSecretSpec, Corrections, DBInstance, DBInstanceSpec, DBInstanceStatus,
    DeletionPolicy, DriftPolicy, DriftRecord, FINALIZER, FieldDrift, OWNER_NAME_TAG, OWNER_TAG,
    OutOfBandDeletionPolicy, SecretKeyReference, Tag,
};
use crate::error::Error;
use crate::rds_state::{AwsIdentity, ObservedInstance, PollIntervals, SnapshotInfo};

mod activation;
mod blue_green;
mod classes;
mod cleanup;
mod create;
mod health;
mod members;
mod replicas;
mod reporting;
mod sync;
mod take_over;
mod validation;

pub(super) const UID: &str = "6b0f1c2e-1111-2222-3333-444455556666";

pub(super) const NOW: &str = "2026-11-30T10:00:00Z";

/// The default final snapshot of the DBInstance below, deleted at the epoch.
const FINAL: &str = "coffee-final-6b0f1c2e-19700101000000";

const ARN: &str = "arn:aws:rds:us-east-1:123456789012:db:coffee";

pub(super) const BUSY: Requeue = Requeue::After(Duration::from_secs(5));

pub(super) const SETTLED: Requeue = Requeue::After(Duration::from_secs(60));

/// Ten drift intervals: the safety net behind the shared poll's wakes.
const SAFETY_NET: Requeue = Requeue::After(Duration::from_secs(600));

/// The operator's hash key in these tests.
pub(super) fn key() -> Sensitive {
    Sensitive::new("0123456789abcdef")
}

pub(super) fn pw(s: &str) -> Sensitive {
    Sensitive::new(s)
}

/// The Coffee Manage DBInstance: shop/coffee, finalizer on, generation 1, password from a Secret.
pub(super) fn db() -> DBInstance {
    let mut db = DBInstance::new(
        "coffee",
        DBInstanceSpec {
            master_username: Some("admin".into()),
            db_name: Some("COFFEE".into()),
            password: PasswordSource {
                master_user_password: Some(SecretKeyReference {
                    name: "coffee-db-password".into(),
                    key: "password".into(),
                    namespace: None,
                }),
                ..Default::default()
            },
            ..crate::dbinstance::coffee_spec()
        },
    );
    db.metadata.namespace = Some("shop".into());
    db.metadata.uid = Some(UID.into());
    db.metadata.generation = Some(1);
    db.metadata.finalizers = Some(vec![FINALIZER.into()]);
    db
}

/// Facts with nothing in RDS yet.
pub(super) fn facts() -> Facts {
    Facts {
        db: db(),
        observed: None,
        observed_directly: false,
        absent_for: None,
        rename_in_progress: false,
        placement: Default::default(),
        identity: Some(AwsIdentity {
            caller_arn: String::new(),
            account: "123456789012".into(),
            region: "us-east-1".into(),
        }),
        snapshots: Vec::new(),
        password: PasswordFacts::Referenced(Ok(pw("Sup3r-Secret"))),
        connection_secret: None,
        readers: None,
        secret_rotation: None,
        release_candidates: Vec::new(),
        peers: Vec::new(),
        owner_alive: None,
        restore_source: None,
        snapshot_ref: None,
        replica_source: None,
        blue_green: None,
        groups: Vec::new(),
        observers: Vec::new(),
        grants: Default::default(),
        subnet_group: None,
        parameter_group: None,
        option_group: None,
        maintenance: None,
        cluster: None,
        hash_key: key(),
        ca_bundle: None,
        intervals: PollIntervals::default(),
        now: NOW.into(),
        health: None,
        alarms: None,
        class_offered: None,
    }
}

/// Our instance, available and matching the spec.
pub(super) fn ours() -> ObservedInstance {
    ObservedInstance {
        identifier: "coffee".into(),
        status: "available".into(),
        arn: Some(ARN.into()),
        engine: Some("mysql".into()),
        engine_version: Some("8.0.42".into()),
        db_instance_class: Some("db.t3.micro".into()),
        allocated_storage: Some(20),
        storage_type: Some("gp2".into()),
        master_username: Some("admin".into()),
        db_name: Some("COFFEE".into()),
        address: Some("coffee.rds.local".into()),
        port: Some(3306),
        tags: [
            (OWNER_TAG.to_owned(), UID.to_owned()),
            (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
        ]
        .into(),
        ..Default::default()
    }
}

/// Facts for our instance, last seen available at generation 1 with this password.
pub(super) fn synced() -> Facts {
    let mut f = facts();
    f.observed = Some(ours());
    let mut status = observed_status("coffee", &ours());
    status.reported.observed_generation = Some(1);
    status.common.master_user_password_hash =
        Some(spec::password_hash(&key(), UID, "Sup3r-Secret"));
    status.common.owned = Some(true);
    f.db.status = Some(status);
    f
}

/// What the read step learns of a generated password that has no Secret yet: `candidate` is the
/// fresh one it offers.
pub(super) fn no_generated_secret(candidate: &str) -> PasswordFacts {
    PasswordFacts::Generated {
        existing: None,
        secret_exists: false,
        controlled: false,
        owner_referenced: false,
        candidate: pw(candidate),
    }
}

/// Sentence-like changes of the facts: `synced().rds_shows(|o| o.status = "modifying".into())`.
impl Facts {
    /// RDS shows the instance changed by `change` (from `ours()` when nothing was observed).
    pub(super) fn rds_shows(mut self, change: impl FnOnce(&mut ObservedInstance)) -> Self {
        let mut observed = self.observed.take().unwrap_or_else(ours);
        change(&mut observed);
        self.observed = Some(observed);
        self
    }

    /// The spec edited by `change`: a new generation.
    pub(super) fn edited(mut self, change: impl FnOnce(&mut DBInstanceSpec)) -> Self {
        change(&mut self.db.spec);
        self.db.metadata.generation = Some(self.db.metadata.generation.unwrap_or(1) + 1);
        self
    }
}

pub(super) fn with(mut f: Facts, change: impl FnOnce(&mut Facts)) -> Facts {
    change(&mut f);
    f
}

fn event(
    type_: EventType,
    reason: &str,
    action: &'static str,
    note: &str,
    after: usize,
) -> PlannedEvent {
    PlannedEvent {
        type_,
        reason: reason.into(),
        action,
        note: note.into(),
        after,
    }
}

fn plan_of(
    requeue: Requeue,
    steps: Vec<Step>,
    status: Option<StatusPlan>,
    events: Vec<PlannedEvent>,
) -> Plan {
    Plan {
        steps,
        status,
        events,
        ..Plan::new(requeue)
    }
}

/// A status that reports the RDS state, with Synced as given.
fn observed(fields: DBInstanceStatus, ok: bool, reason: &str, message: &str) -> Option<StatusPlan> {
    Some(StatusPlan {
        secret_pending: None,
        held: false,
        fields,
        ready: None,
        synced: ConditionPlan::new(ok, reason, message),
    })
}

/// Ready=False and Synced=False with the reason, over the previous status.
fn failed(previous: Option<&DBInstanceStatus>, reason: &str, message: &str) -> Option<StatusPlan> {
    let c = ConditionPlan::new(false, reason, message);
    Some(StatusPlan {
        secret_pending: None,
        held: false,
        fields: previous.cloned().unwrap_or_default(),
        ready: Some(c.clone()),
        synced: c,
    })
}

/// The status fields reported for our instance as `synced()` leaves it.
fn synced_fields(f: &Facts) -> DBInstanceStatus {
    let mut fields = observed_status("coffee", f.observed.as_ref().unwrap());
    let previous = f.db.status.clone().unwrap_or_default();
    fields.common.master_user_password_hash = previous.common.master_user_password_hash;
    fields.last_drift = previous.last_drift;
    fields.common.connection_secret = previous.common.connection_secret;
    fields.common.secret_readers = previous.common.secret_readers;
    fields.common.last_rotate_request = previous.common.last_rotate_request;
    let observed = f.observed.as_ref().unwrap();
    fields.common.applied_tag_keys = (crate::managed::tags::applied)(
        &f.db.spec.tags,
        &observed.tags,
        &previous.common.applied_tag_keys,
    );
    fields.common.owned = (!spec::observe_only(&f.db)).then_some(true);
    let generation = f.db.metadata.generation.unwrap_or_default();
    fields.common.corrections = (previous.common.corrections.into_iter())
        .filter(|c| c.generation == generation)
        .collect();
    fields
}

fn creating_fields(hash: Option<&str>) -> DBInstanceStatus {
    let mut fields = DBInstanceStatus {
        db_instance_identifier: Some("coffee".into()),
        db_instance_status: Some("creating".into()),
        ..Default::default()
    };
    fields.common.owned = Some(true);
    fields.common.master_user_password_hash = hash.map(|p| spec::password_hash(&key(), UID, p));
    fields
}

/// The spec an instance is created or restored with: copyTagsToSnapshot on unless it says.
fn creation_spec(mut spec: DBInstanceSpec) -> Box<DBInstanceSpec> {
    spec.backups.copy_tags_to_snapshot.get_or_insert(true);
    Box::new(spec)
}

fn create_step(password: Option<&str>) -> Step {
    Step::Own(InstanceStep::CreateInstance {
        identifier: "coffee".into(),
        spec: creation_spec(db().spec),
        password: password.map(pw),
        tags: spec::creation_tags(&db().spec, UID, "shop", "coffee"),
    })
}

/// The plan that sends the Secret's new password "Rotated-2026" to RDS.
fn rotation(fields: DBInstanceStatus) -> Plan {
    plan_of(
        BUSY,
        vec![Step::Modify {
            identifier: "coffee".into(),
            modification: modification(|m| m.rotate_password = true),
            password: Some(pw("Rotated-2026")),
        }],
        observed(fields, false, "Updating", "sent masterUserPassword to RDS"),
        vec![event(
            Normal,
            "PasswordRotated",
            "Update",
            "sent the new master password from the Secret to RDS",
            1,
        )],
    )
}

fn modification(change: impl FnOnce(&mut Modification)) -> Box<Modification> {
    let mut m = Modification {
        apply_immediately: true,
        ..Default::default()
    };
    change(&mut m);
    Box::new(m)
}

const CREATING_NOTE: &str = "creating RDS instance coffee (mysql 8.0, db.t3.micro)";

const CREATING_SYNCED: &str = "the RDS instance is being created from the spec";

const MATCHES: &str = "the RDS instance matches the spec";

fn check(cases: Vec<(&str, Facts, Plan)>) {
    for (name, facts, expected) in cases {
        assert_eq!(plan(&facts), expected, "case: {name}");
    }
}

/// The plan that only reports `reason` (Ready=False, Synced=False, a Warning Event).
fn refused(f: &Facts, requeue: Requeue, reason: &str, message: &str) -> Plan {
    plan_of(
        requeue,
        vec![],
        failed(f.db.status.as_ref(), reason, message),
        vec![event(Warning, reason, "Reconcile", message, 0)],
    )
}

pub(super) fn snapshot(identifier: &str, kind: &str, status: &str, epoch: i64) -> SnapshotInfo {
    SnapshotInfo {
        identifier: identifier.into(),
        kind: kind.into(),
        status: status.into(),
        created: format!("t{epoch}"),
        created_epoch: epoch,
        dbi_resource_id: None,
        // Taken of this DBInstance's own instance (its tags copied): the only kind restored.
        tags: [(OWNER_TAG.to_owned(), UID.to_owned())].into(),
    }
}

pub(super) fn connection_secret(owner: &str, password: &str) -> Secret {
    let data = [
        ("host", "coffee.rds.local"),
        ("port", "3306"),
        ("username", "admin"),
        ("password", password),
        ("dbname", "COFFEE"),
        ("engine", "mysql"),
        (
            "uri",
            &format!("mysql://admin:{password}@coffee.rds.local:3306/COFFEE"),
        ),
    ];
    Secret {
        metadata: kube::api::ObjectMeta {
            name: Some("coffee-db".into()),
            owner_references: Some(vec![OwnerReference {
                uid: owner.into(),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
                .collect(),
        ),
        ..Default::default()
    }
}

/// The facts with the DBInstance being deleted (at the epoch), RDS read directly.
pub(super) fn being_deleted(f: Facts) -> Facts {
    with(f, |f| {
        f.db.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        f.observed_directly = true;
    })
}

pub(super) fn deleting(policy: DeletionPolicy, observed: Option<ObservedInstance>) -> Facts {
    with(synced(), |f| {
        f.db.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
        f.db.spec.deletion.deletion_policy = policy;
        f.observed = observed;
        f.observed_directly = true;
        f.password = PasswordFacts::NotRead;
        f.release_candidates = vec![
            Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some("coffee-db".into()),
                    owner_references: Some(vec![OwnerReference {
                        uid: UID.into(),
                        ..Default::default()
                    }]),
                    ..Default::default()
                },
                ..Default::default()
            },
            // Someone else's Secret of the same name as the generated one: never released.
            Secret {
                metadata: kube::api::ObjectMeta {
                    name: Some("coffee-master-password".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        ];
    })
}

/// An RFC 3339 time as a Kubernetes time.
fn at(t: &str) -> Time {
    Time(t.parse().expect("RFC 3339"))
}

/// The step names and the Synced reason of a plan: what the take-over rules below decide.
pub(super) fn outline(p: &Plan) -> (Vec<&'static str>, String) {
    let names = p.steps.iter().map(Step::name).collect();
    let reason = (p.status.as_ref()).map_or(String::new(), |s| s.synced.reason.clone());
    (names, reason)
}

pub(super) fn check_outlines(cases: Vec<(&str, Facts, Vec<&'static str>, &str)>) {
    for (name, facts, steps, reason) in cases {
        let got = plan(&facts);
        assert_eq!(outline(&got), (steps, reason.to_owned()), "case: {name}");
    }
}

/// An instance someone else created (CloudFormation, the console): no ownership tags.
/// A platform admin granted its adoption to namespace shop.
pub(super) fn stack_instance() -> ObservedInstance {
    let mut o = ours();
    o.tags = [
        (
            "aws:cloudformation:stack-name".to_owned(),
            "coffee".to_owned(),
        ),
        (
            crate::dbinstance::ADOPTABLE_BY_TAG.to_owned(),
            "shop".to_owned(),
        ),
    ]
    .into();
    o.db_instance_class = Some("db.t3.small".into());
    o
}

fn annotated(mut f: Facts, key: &str, value: &str) -> Facts {
    (f.db.metadata.annotations.get_or_insert_default()).insert(key.into(), value.into());
    f
}

pub(super) fn adopting(policy: crate::dbinstance::AdoptionPolicy) -> Facts {
    with(facts(), |f| {
        f.db.spec.policies.adoption_policy = Some(policy);
        f.observed = Some(stack_instance());
        f.observed_directly = true;
    })
}

/// An instance tagged for the DBInstance `owner` (namespace/name), which still exists or not.
fn claimed_by(owner: &str, alive: Option<bool>) -> Facts {
    with(adopting(crate::dbinstance::AdoptionPolicy::Adopt), |f| {
        let o = f.observed.as_mut().unwrap();
        o.tags.insert(OWNER_TAG.into(), "theirs".into());
        o.tags.insert(OWNER_NAME_TAG.into(), owner.into());
        f.owner_alive = alive;
    })
}

/// A previous DBInstance shop/coffee (another uid) retained this instance.
fn retained() -> ObservedInstance {
    let mut o = ours();
    o.tags.insert(OWNER_TAG.into(), "previous-uid".into());
    o.tags
        .insert(crate::dbinstance::RETAINED_TAG.into(), NOW.into());
    o
}
