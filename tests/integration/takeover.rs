//! Taking over what exists: adoption, re-adoption after Retain, observe-only, pause, dry run,
//! restore from a point in time, and manifests written for ACK.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::{
    ACK_DELETION_POLICY, ADOPTABLE_BY_TAG, DBInstance, DRY_RUN_ANNOTATION, OWNER_TAG,
    PAUSED_ANNOTATION, RETAINED_TAG,
};
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{
    self, Operator, calls, dbinstance, is_ready, patch_spec, setup, synced_reason, unique,
    wait_dbi, wait_for,
};

async fn annotate(api: &Api<DBInstance>, value: Option<&str>) {
    annotate_with(api, PAUSED_ANNOTATION, value).await;
}

async fn annotate_with(api: &Api<DBInstance>, key: &str, value: Option<&str>) {
    let patch = json!({"metadata": {"annotations": {key: value}}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("annotate");
}

#[tokio::test]
async fn a_paused_dbinstance_makes_no_rds_call_until_it_resumes() {
    let (client, ns, api, rds) = setup("paused").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let id = unique("paused");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;

    annotate(&api, Some("true")).await;
    wait_dbi(&api, "db", "ReconcilePaused", TIMEOUT, |db| {
        synced_reason(db) == "ReconcilePaused"
    })
    .await;
    assert!(
        common::event_reasons(&client, &ns, "db")
            .await
            .contains(&"ReconcilePaused".into())
    );
    // Someone changes the instance during the incident.
    common::console_modify(&rds, &id, |m| m.db_instance_class("db.t3.large")).await;
    let before = common::server_calls(&id);
    let silent = || async { common::server_calls(&id) == before };
    common::holds_over_polls(
        &operator,
        "no RDS call named the instance while paused",
        silent,
    )
    .await;
    let db = api.get("db").await.expect("get");
    assert!(is_ready(&db), "Ready stays what was last observed");

    // Unpaused: the drift is corrected.
    annotate(&api, None).await;
    common::wait_class(&rds, &id, "db.t3.micro").await;
    common::delete_and_wait(&api, "db").await;
}

/// Creates an instance as a CloudFormation stack or the console would: no rds-operator tags but
/// the platform admin's grant of its adoption to `namespace` (rds.operator.rs/adoptable-by).
pub async fn stack_instance(rds: &aws_sdk_rds::Client, id: &str, class: &str, namespace: &str) {
    (rds.create_db_instance())
        .db_instance_identifier(id)
        .engine("mysql")
        .engine_version("8.0.42")
        .db_instance_class(class)
        .allocated_storage(20)
        .storage_type("gp2")
        .backup_retention_period(0)
        .master_username("admin")
        .master_user_password("Sup3r-Secret-Passw0rd")
        .db_name("COFFEE")
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key("app")
                .value("coffee-manage")
                .build(),
        )
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key(ADOPTABLE_BY_TAG)
                .value(namespace)
                .build(),
        )
        .send()
        .await
        .expect("create the stack's instance");
}

const MUTATIONS: [&str; 4] = [
    "ModifyDBInstance",
    "AddTagsToResource",
    "RemoveTagsFromResource",
    "DeleteDBInstance",
];

fn mutations(id: &str) -> u64 {
    common::calls_of(id, &MUTATIONS)
}

#[tokio::test]
async fn adoption_tags_only_and_puts_differences_right_once_the_spec_changes() {
    let (client, ns, api, rds) = setup("adopt").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let id = unique("adopt");
    stack_instance(&rds, &id, "db.t3.small", &ns).await;
    let spec = json!({"adoptionPolicy": "Adopt", "backupRetentionPeriod": 0});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "AdoptedWithDifferences", TIMEOUT, |db| {
        synced_reason(db) == "AdoptedWithDifferences"
    })
    .await;
    let drift = db.status.unwrap().last_drift.expect("lastDrift");
    assert!(
        drift.fields.iter().any(|f| f.field == "dbInstanceClass"
            && f.observed == "db.t3.small"
            && f.desired == "db.t3.micro"),
        "{drift:?}"
    );
    let reasons = common::event_reasons(&client, &ns, "db").await;
    assert!(reasons.contains(&"Adopted".into()), "{reasons:?}");
    assert!(reasons.contains(&"DriftDetected".into()), "{reasons:?}");
    // The ownership tags were added and nothing else was sent.
    let unmodified = || async { calls(&id, "ModifyDBInstance") == 0 };
    let what = "no ModifyDBInstance before the spec changes";
    common::holds_over_polls(&operator, what, unmodified).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.db_instance_class(), Some("db.t3.small"));
    let tags = common::tags_of(&i);
    let uid = api.get("db").await.expect("get").metadata.uid.expect("uid");
    assert_eq!(tags.get(OWNER_TAG), Some(&uid));
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some("Sup3r-Secret-Passw0rd")
    );

    // Any edit of the spec confirms it: the differences are put right.
    patch_spec(&api, "db", json!({"tags": [{"key": "app", "value": "coffee-manage"}, {"key": "team", "value": "cafe"}]})).await;
    common::wait_class(&rds, &id, "db.t3.micro").await;
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some("Sup3r-Secret-Passw0rd"),
        "the password was never sent"
    );
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn an_instance_retained_is_adopted_again_by_the_same_name() {
    let (client, ns, api, rds) = setup("readopt").await;
    let _operator = Operator::start(&ns);
    let id = unique("readopt");
    let spec = json!({"deletionPolicy": "Retain"});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec.clone()))
        .await
        .expect("create");
    let first = wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    common::delete_and_wait(&api, "db").await;
    let i = common::describe(&rds, &id)
        .await
        .expect("retained instance");
    assert!(
        common::tags_of(&i).contains_key(RETAINED_TAG),
        "marked as let go"
    );

    // A GitOps rebuild applies the same manifest: the instance is adopted, not refused.
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create again");
    let second = wait_dbi(&api, "db", "ready and synced", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let tags = common::tags_of(&common::describe(&rds, &id).await.expect("instance"));
    assert_eq!(tags.get(OWNER_TAG), second.metadata.uid.as_ref());
    assert_ne!(first.metadata.uid, second.metadata.uid);
    assert!(
        !tags.contains_key(RETAINED_TAG),
        "no longer marked as let go"
    );
    let notes = common::event_notes(&client, &ns, "db").await;
    assert!(notes.contains("adopted again"), "{notes}");
    patch_spec(&api, "db", json!({"deletionPolicy": "Delete"})).await;
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn observe_only_reports_and_writes_the_secret_and_never_changes_the_instance() {
    let (client, ns, api, rds) = setup("observe").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let id = unique("observe");
    stack_instance(&rds, &id, "db.t3.small", &ns).await;
    let spec = json!({
        "managementPolicy": "ObserveOnly",
        "deletionPolicy": "Delete",
        "connectionSecret": {"name": "db-connection"},
    });
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "Observed", TIMEOUT, |db| {
        synced_reason(db) == "Observed" && is_ready(db)
    })
    .await;
    let status = db.status.expect("status");
    assert!(status.common.endpoint.is_some());
    let drift = status.last_drift.expect("lastDrift");
    assert!(
        drift.fields.iter().any(|f| f.field == "dbInstanceClass"),
        "{drift:?}"
    );
    let secret = wait_for("the connection Secret", TIMEOUT, || async {
        common::secret_data(&client, &ns, "db-connection").await
    })
    .await;
    assert_eq!(secret["password"], "Sup3r-Secret-Passw0rd");
    assert_eq!(secret["username"], "admin");
    let unchanged = || async { mutations(&id) == 0 };
    common::holds_over_polls(&operator, "no call changed the instance", unchanged).await;

    // Deleting it (deletionPolicy Delete, even) leaves the instance as it was.
    common::delete_and_wait(&api, "db").await;
    let i = common::describe(&rds, &id).await.expect("still there");
    assert_eq!(i.db_instance_class(), Some("db.t3.small"));
    assert!(!common::tags_of(&i).contains_key(OWNER_TAG));
    assert_eq!(mutations(&id), 0, "no call changed the instance");
}

#[tokio::test]
async fn a_dry_run_shows_a_class_change_as_an_outage_and_makes_no_call() {
    let (client, ns, api, rds) = setup("dryrun").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let id = unique("dryrun");
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    annotate_with(&api, DRY_RUN_ANNOTATION, Some("true")).await;
    let before = mutations(&id);
    patch_spec(&api, "db", json!({"dbInstanceClass": "db.t3.large"})).await;
    let db = wait_dbi(&api, "db", "DryRun", TIMEOUT, |db| {
        synced_reason(db) == "DryRun"
    })
    .await;
    let steps = db
        .status
        .unwrap()
        .common
        .dry_run
        .expect("status.dryRun")
        .steps;
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(steps[0].action, "ModifyDBInstance");
    assert_eq!(steps[0].disruption, "Outage");
    assert_eq!(steps[0].fields[0].field, "dbInstanceClass");
    assert_eq!(steps[0].fields[0].desired, "db.t3.large");
    let reasons = common::event_reasons(&client, &ns, "db").await;
    assert!(reasons.contains(&"DryRun".into()), "{reasons:?}");
    let unchanged = || async { mutations(&id) == before };
    common::holds_over_polls(&operator, "no mutating call in dry run", unchanged).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(i.db_instance_class(), Some("db.t3.micro"));

    // Let it act: the edit is applied as an edit, not put back as drift.
    annotate_with(&api, DRY_RUN_ANNOTATION, None).await;
    common::wait_class(&rds, &id, "db.t3.large").await;
    common::wait_event(&client, &ns, "db", "Updating").await;
    let reasons = common::event_reasons(&client, &ns, "db").await;
    assert!(!reasons.contains(&"DriftCorrected".into()), "{reasons:?}");
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_point_in_time_restore_gets_the_specs_class_and_backup_retention() {
    let (_client, ns, api, rds) = setup("pitr").await;
    let _operator = Operator::start(&ns);
    let source = unique("pitrsrc");
    let id = unique("pitr");
    api.create(
        &PostParams::default(),
        &dbinstance(
            "source",
            &source,
            json!({"backupRetentionPeriod": 7, "deletionPolicy": "Delete"}),
        ),
    )
    .await
    .expect("create source");
    wait_dbi(&api, "source", "ready", TIMEOUT, is_ready).await;
    let spec = json!({
        "dbInstanceClass": "db.t3.small",
        "backupRetentionPeriod": 2,
        "deletionPolicy": "Delete",
        "restoreFrom": {"sourceDBInstanceIdentifier": source, "useLatestRestorableTime": true},
    });
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create");
    let db = wait_dbi(&api, "db", "ready and synced", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let restore = db.status.unwrap().restore.expect("status.restore");
    assert!(
        restore.settings_applied && restore.source.contains(&source),
        "{restore:?}"
    );
    let i = common::describe(&rds, &id)
        .await
        .expect("restored instance");
    assert_eq!(i.db_instance_class(), Some("db.t3.small"));
    assert_eq!(i.backup_retention_period(), Some(2));
    assert_eq!(
        calls(&id, "ModifyDBInstance"),
        1,
        "one follow-up ModifyDBInstance"
    );
    assert_eq!(
        common::rds_master_password(&id).as_deref(),
        Some("Sup3r-Secret-Passw0rd")
    );
    // restoreFrom is immutable.
    let err = api
        .patch(
            "db",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"restoreFrom": {"dbSnapshotIdentifier": "other"}}})),
        )
        .await
        .expect_err("restoreFrom is immutable");
    assert!(
        err.to_string().contains("restoreFrom is immutable"),
        "{err}"
    );
    common::delete_and_wait(&api, "db").await;
    common::delete_and_wait(&api, "source").await;
}

/// An ACK manifest from tests/fixtures/ack, its variables filled in as ACK's tests do, and only
/// its apiVersion changed.
fn ack_manifest(file: &str, id: &str, ns: &str) -> serde_json::Value {
    let text = ack_text(file, id, ns);
    let mut manifest: serde_json::Value = serde_yaml::from_str(&text).expect("YAML");
    assert_eq!(manifest["apiVersion"], "rds.services.k8s.aws/v1alpha1");
    manifest["apiVersion"] = json!("rds.operator.rs/v1alpha1");
    manifest
}

/// The text of an ACK manifest from tests/fixtures/ack, its variables filled in as ACK's tests
/// do.
pub(crate) fn ack_text(file: &str, id: &str, ns: &str) -> String {
    let path = format!("{}/tests/fixtures/ack/{file}", common::REPO);
    let text = std::fs::read_to_string(&path).expect("fixture");
    (text.replace("$DB_INSTANCE_ID", id))
        .replace("$COPY_TAGS_TO_SNAPSHOT", "false")
        .replace("$MASTER_USER_PASS_SECRET_NAMESPACE", ns)
        .replace("$MASTER_USER_PASS_SECRET_NAME", "db-password")
        .replace("$MASTER_USER_PASS_SECRET_KEY", "password")
}

async fn apply(
    api: &Api<DBInstance>,
    name: &str,
    manifest: &serde_json::Value,
) -> Result<DBInstance, kube::Error> {
    let params = PatchParams::apply("kubectl").validation_strict();
    api.patch(name, &params, &Patch::Apply(manifest)).await
}

#[tokio::test]
async fn acks_published_manifests_port_by_changing_the_api_version() {
    let (_client, ns, api, rds) = setup("ack").await;
    let _operator = Operator::start(&ns);

    // postgres13: applies and becomes Ready.
    let id13 = unique("ack13");
    apply(
        &api,
        &id13,
        &ack_manifest("db_instance_postgres13_t3_micro.yaml", &id13, &ns),
    )
    .await
    .expect("ACK's postgres13 manifest applies");
    wait_dbi(&api, &id13, "ready", TIMEOUT, is_ready).await;

    // postgres14 asks for 5 GiB, below what RDS allows: refused at apply, saying why.
    let id14 = unique("ack14");
    let err = apply(
        &api,
        &id14,
        &ack_manifest("db_instance_postgres14_t3_micro.yaml", &id14, &ns),
    )
    .await
    .expect_err("5 GiB is refused at apply");
    assert!(err.to_string().contains("allocatedStorage"), "{err}");

    // An ACK annotation value we would not honour is refused at apply, saying what to write.
    let mut keep = ack_manifest("db_instance_postgres13_t3_micro.yaml", "ackkeep", &ns);
    keep["metadata"]["annotations"] = json!({ACK_DELETION_POLICY: "keep"});
    let err = apply(&api, "ackkeep", &keep).await.expect_err("refused");
    assert!(err.to_string().contains("spec.deletionPolicy"), "{err}");

    // postgres17 with adopt-or-create and deletion-policy retain: created (nothing to adopt), and
    // still there after the DBInstance is deleted.
    let id17 = unique("ack17");
    apply(
        &api,
        &id17,
        &ack_manifest("db_instance_postgres17_adopt.yaml", &id17, &ns),
    )
    .await
    .expect("ACK's postgres17 manifest applies");
    let db = wait_dbi(&api, &id17, "ready", TIMEOUT, is_ready).await;
    let annotations = db.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get(ACK_DELETION_POLICY).map(String::as_str),
        Some("retain")
    );
    common::delete_and_wait(&api, &id17).await;
    let i = common::describe(&rds, &id17)
        .await
        .expect("retained by ACK's annotation");
    assert_eq!(i.db_instance_status(), Some("available"));
    common::delete_and_wait(&api, &id13).await;
}
