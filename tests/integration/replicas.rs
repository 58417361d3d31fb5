//! Read replicas (spec.replicaOf) on the emulator's replicas and real engines: a replica of a
//! DBInstance is Ready and reads its source's rows through its own connection Secret (the source's
//! credentials); removing replicaOf promotes it with one PromoteReadReplica, after which a spec
//! change applies as for any instance; replicaOf cannot be added back; a source with a live
//! replica is not deleted until the replica goes; another namespace's instance is never copied.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{
    Operator, TIMEOUT, calls, condition, dbinstance, describe, is_ready, mariadb_keys, secret_data,
    setup, synced_reason, unique, wait_class, wait_dbi, wait_gone, wait_sql,
};

const FIVE: std::time::Duration = std::time::Duration::from_secs(5);

fn secret(name: &str) -> serde_json::Value {
    json!({"name": name, "extraKeys": {
        "APP_DB_HOST": "{{ host }}", "APP_DB_USER": "{{ username }}",
        "APP_DB_PASSWORD": "{{ password }}", "APP_DB_NAME": "{{ dbname }}",
    }})
}

/// The replica `replica` of the DBInstance `main`, without what it inherits.
fn replica(identifier: &str, extra: serde_json::Value) -> DBInstance {
    let mut db = dbinstance(
        "replica",
        identifier,
        json!({"replicaOf": {"name": "main"}, "connectionSecret": secret("replica-db")}),
    );
    db.spec.master_username = None;
    db.spec.password.master_user_password = None;
    db.spec.db_name = None;
    db.spec.engine_version = None;
    if let Some(extra) = extra.as_object() {
        let mut spec = serde_json::to_value(&db.spec).unwrap();
        spec.as_object_mut().unwrap().extend(extra.clone());
        db.spec = serde_json::from_value(spec).unwrap();
    }
    db
}

fn replicating(db: &DBInstance) -> bool {
    let replication = db.status.as_ref().and_then(|s| s.replication.as_ref());
    is_ready(db)
        && synced_reason(db) == "Synced"
        && replication.is_some_and(|r| {
            r.source_db_instance_identifier.is_some()
                && r.status_infos.iter().any(|i| i.status == "replicating")
        })
}

/// Creates the replica and waits until it replicates from `source` (as RDS names it).
async fn made(instances: &Api<DBInstance>, replica: &DBInstance, source: &str) -> DBInstance {
    (instances.create(&PostParams::default(), replica).await).expect("create the replica");
    let r = wait_dbi(
        instances,
        "replica",
        "the replica replicating",
        TIMEOUT,
        replicating,
    )
    .await;
    let replication = r
        .status
        .as_ref()
        .and_then(|s| s.replication.clone())
        .unwrap();
    assert_eq!(
        replication.source_db_instance_identifier.as_deref(),
        Some(source)
    );
    r
}

/// Creates the source DBInstance and waits until it is Ready.
async fn source_ready(instances: &Api<DBInstance>, main: &DBInstance) -> DBInstance {
    (instances.create(&PostParams::default(), main).await).expect("create the source");
    wait_dbi(instances, "main", "the source Ready", TIMEOUT, is_ready).await
}

/// Deletes the source DBInstance `main` and waits until it reports that its deletion waits for a
/// replica (InUse).
async fn source_deletion_waits(instances: &Api<DBInstance>) {
    crate::common::delete(instances, "main").await;
    wait_dbi(
        instances,
        "main",
        "the source waiting (InUse)",
        TIMEOUT,
        |db| synced_reason(db) == "InUse",
    )
    .await;
}

/// A replica of a DBInstance on a real engine: Ready, its Secret logs in with the source's
/// password and reads the row written through the source; removing replicaOf sends one
/// PromoteReadReplica, the promoted instance gets the spec's own (generated) password once and
/// still holds the rows, and a class change is then one ModifyDBInstance, as for any instance.
#[tokio::test]
async fn a_replica_reads_its_sources_rows_and_is_promoted_by_removing_replica_of() {
    let (client, ns, instances, rds) = setup("replica").await;
    let _operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let mut main = dbinstance(
        "main",
        &main_id,
        json!({"backupRetentionPeriod": 1, "connectionSecret": secret("main-db")}),
    );
    main.spec.tags.push(rds_operator::crd::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    source_ready(&instances, &main).await;
    let m = secret_data(&client, &ns, "main-db")
        .await
        .expect("the source's Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&m, &m["password"], sql);
    assert!(ok, "write through the source: {out}");

    made(&instances, &replica(&replica_id, json!({})), &main_id).await;
    assert_eq!(calls(&replica_id, "CreateDBInstanceReadReplica"), 1);
    assert_eq!(calls(&replica_id, "CreateDBInstance"), 0);
    let s = secret_data(&client, &ns, "replica-db")
        .await
        .expect("the replica's Secret");
    assert_eq!(s["password"], m["password"], "the source's credentials");
    assert_eq!(s["username"], "admin");
    assert_eq!(s["APP_DB_HOST"], s["host"]);
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT name FROM suppliers");
    assert!(
        ok && out.contains("Beans & Co"),
        "read through the replica: {out}"
    );
    // The replica is a server of its own, read-only, that replicates its source: until this
    // issue its endpoint was the source's, and a write through it landed in the source.
    assert_ne!(s["host"], m["host"], "the replica's own address");
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO suppliers VALUES ('x')");
    assert!(
        !ok && out.contains("read-only"),
        "a write through the replica is refused: {out}"
    );
    let later = "INSERT INTO suppliers VALUES ('Later Beans')";
    let (ok, out) = mariadb_keys(&m, &m["password"], later);
    assert!(ok, "a new row on the source: {out}");
    let select = "SELECT name FROM suppliers";
    let (_, out) = wait_sql(&s, &s["host"], select, "Later Beans", FIVE).await;
    assert!(
        out.contains("Later Beans"),
        "the source's new row within 5 s: {out}"
    );
    let main_status = wait_dbi(
        &instances,
        "main",
        "the source lists its replica",
        TIMEOUT,
        |db| {
            (db.status.as_ref().and_then(|s| s.replication.as_ref()))
                .is_some_and(|r| r.read_replicas.contains(&replica_id))
        },
    )
    .await;
    assert!(is_ready(&main_status));

    // Adding replicaOf to a standalone instance is refused at apply.
    let add = json!({"spec": {"replicaOf": {"name": "replica"}}});
    let refused = instances
        .patch("main", &PatchParams::default(), &Patch::Merge(&add))
        .await;
    let message = refused.expect_err("replicaOf cannot be added").to_string();
    assert!(message.contains("replicaOf cannot be added"), "{message}");

    // Promotion: replicaOf removed.
    let promote = json!({"spec": {"replicaOf": null}});
    (instances
        .patch("replica", &PatchParams::default(), &Patch::Merge(&promote))
        .await)
        .expect("remove replicaOf");
    let promoted = wait_dbi(
        &instances,
        "replica",
        "the promoted instance in sync",
        TIMEOUT,
        |db| {
            let replication = db.status.as_ref().and_then(|s| s.replication.as_ref());
            is_ready(db)
                && synced_reason(db) == "Synced"
                && db.status.as_ref().unwrap().reported.observed_generation
                    == db.metadata.generation
                && replication.is_some_and(|r| {
                    r.promoted == Some(true) && r.source_db_instance_identifier.is_none()
                })
        },
    )
    .await;
    assert_eq!(calls(&replica_id, "PromoteReadReplica"), 1);
    assert!(
        promoted
            .status
            .unwrap()
            .common
            .master_user_password_hash
            .is_some()
    );
    let rds_replica = describe(&rds, &replica_id)
        .await
        .expect("the promoted instance");
    assert_eq!(
        rds_replica.read_replica_source_db_instance_identifier(),
        None
    );
    // The promoted instance has its own (generated) password now, and its own copy of the rows.
    let s = secret_data(&client, &ns, "replica-db")
        .await
        .expect("the Secret");
    assert_ne!(
        s["password"], m["password"],
        "the spec's own password was sent"
    );
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT name FROM suppliers");
    assert!(
        ok && out.contains("Beans & Co"),
        "the promoted instance's rows: {out}"
    );
    let own = "INSERT INTO suppliers VALUES ('promoted'); SELECT count(*) FROM suppliers";
    let (ok, out) = mariadb_keys(&s, &s["password"], own);
    assert!(
        ok && out.trim() == "3",
        "the promoted instance takes writes: {out}"
    );
    let (ok, out) = mariadb_keys(&m, &m["password"], "SELECT count(*) FROM suppliers");
    assert!(ok && out.trim() == "2", "and the source is its own: {out}");

    // Now a standalone instance: a class change is one ModifyDBInstance.
    let before = calls(&replica_id, "ModifyDBInstance");
    let class = json!({"spec": {"dbInstanceClass": "db.t3.small"}});
    (instances
        .patch("replica", &PatchParams::default(), &Patch::Merge(&class))
        .await)
        .expect("change the class");
    wait_class(&rds, &replica_id, "db.t3.small").await;
    assert_eq!(calls(&replica_id, "ModifyDBInstance"), before + 1);
    assert_eq!(calls(&replica_id, "PromoteReadReplica"), 1, "promoted once");
    for name in ["replica", "main"] {
        let policy = json!({"spec": {"deletionPolicy": "Delete"}});
        let _ = instances
            .patch(name, &PatchParams::default(), &Patch::Merge(&policy))
            .await;
        crate::common::delete(&instances, name).await;
        wait_gone(&instances, name, TIMEOUT).await;
    }
}

/// Deleting a source with a live replica waits (InUse) and sends no DeleteDBInstance; once the
/// replica is deleted (without a final snapshot, which RDS refuses for a replica), the source is
/// deleted after its own final snapshot.
#[tokio::test]
async fn deleting_a_source_with_a_replica_waits_for_the_replica() {
    let (_client, ns, instances, rds) = setup("replica-del").await;
    let operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let main = dbinstance("main", &main_id, json!({"backupRetentionPeriod": 1}));
    source_ready(&instances, &main).await;
    let copy = replica(&replica_id, json!({"connectionSecret": null}));
    made(&instances, &copy, &main_id).await;

    source_deletion_waits(&instances).await;
    let kept = || async { calls(&main_id, "DeleteDBInstance") == 0 };
    crate::common::holds_over_passes(
        &operator,
        ("DBInstance", "main"),
        "the source is not deleted",
        kept,
    )
    .await;
    assert!(describe(&rds, &main_id).await.is_some());

    crate::common::delete(&instances, "replica").await;
    wait_gone(&instances, "replica", TIMEOUT).await;
    wait_gone(&instances, "main", TIMEOUT).await;
    assert_eq!(calls(&replica_id, "DeleteDBInstance"), 1);
    assert_eq!(calls(&main_id, "DeleteDBInstance"), 1);
    // Asked per instance: one page of every snapshot the emulator holds (MaxRecords 100) need not
    // hold these two while other tests run.
    let of = async |id: &str| {
        let request = rds.describe_db_snapshots().db_instance_identifier(id);
        let snapshots = (request.send().await).expect("snapshots");
        (snapshots.db_snapshots().iter())
            .filter(|s| {
                s.db_instance_identifier() == Some(id) && s.snapshot_type() == Some("manual")
            })
            .count()
    };
    assert_eq!(of(&replica_id).await, 0, "no snapshot of a replica");
    assert_eq!(of(&main_id).await, 1, "the source's final snapshot");
}

/// A replica inherits its source's storage: applied without allocatedStorage, which the API server
/// requires of any other instance but Aurora, it is accepted, made by one
/// CreateDBInstanceReadReplica, and has its source's storage in RDS.
#[tokio::test]
async fn a_replica_without_allocated_storage_is_accepted_and_gets_its_sources() {
    let (_client, ns, instances, rds) = setup("replica-storage").await;
    let _operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let main = dbinstance(
        "main",
        &main_id,
        json!({"backupRetentionPeriod": 1, "allocatedStorage": 30}),
    );
    source_ready(&instances, &main).await;
    let copy = replica(
        &replica_id,
        json!({"connectionSecret": null, "allocatedStorage": null}),
    );
    assert_eq!(copy.spec.allocated_storage, None);
    made(&instances, &copy, &main_id).await;
    assert_eq!(calls(&replica_id, "CreateDBInstanceReadReplica"), 1);
    let in_rds = describe(&rds, &replica_id)
        .await
        .expect("the replica in RDS");
    assert_eq!(in_rds.allocated_storage(), Some(30), "the source's storage");

    crate::common::delete(&instances, "replica").await;
    wait_gone(&instances, "replica", TIMEOUT).await;
    crate::common::delete(&instances, "main").await;
    wait_gone(&instances, "main", TIMEOUT).await;
}

/// A replica of an instance another namespace's DBInstance owns is refused
/// (ReplicaSourceNotOwned): no CreateDBInstanceReadReplica is sent.
#[tokio::test]
async fn a_replica_of_another_namespaces_instance_is_refused() {
    let (_client, theirs, their_instances, _rds) = setup("replica-theirs").await;
    let (_client, ours, our_instances, _rds) = setup("replica-ours").await;
    let operator = Operator::start_with(&format!("{theirs},{ours}"), &[]);
    let (their_id, replica_id) = (unique("ledger"), unique("copy"));
    let ledger = dbinstance("ledger", &their_id, json!({"backupRetentionPeriod": 1}));
    (their_instances
        .create(&PostParams::default(), &ledger)
        .await)
        .expect("their instance");
    wait_dbi(
        &their_instances,
        "ledger",
        "their instance Ready",
        TIMEOUT,
        is_ready,
    )
    .await;
    let mut copy = replica(&replica_id, json!({"connectionSecret": null}));
    copy.spec.replica_of = Some(rds_operator::dbinstance::ReplicaOf {
        db_instance_identifier: Some(their_id.clone()),
        ..Default::default()
    });
    copy.spec.password.master_user_password = dbinstance("x", "x", json!({}))
        .spec
        .password
        .master_user_password;
    (our_instances.create(&PostParams::default(), &copy).await).expect("the copy");
    wait_dbi(
        &our_instances,
        "replica",
        "the copy refused",
        TIMEOUT,
        |db| synced_reason(db) == "ReplicaSourceNotOwned",
    )
    .await;
    let none = || async { calls(&replica_id, "CreateDBInstanceReadReplica") == 0 };
    crate::common::holds_over_passes(
        &operator,
        ("DBInstance", "replica"),
        "no replica made",
        none,
    )
    .await;
    crate::common::delete(&our_instances, "replica").await;
    wait_gone(&our_instances, "replica", TIMEOUT).await;
    let policy = json!({"spec": {"deletionPolicy": "Delete"}});
    let _ = their_instances
        .patch("ledger", &PatchParams::default(), &Patch::Merge(&policy))
        .await;
    crate::common::delete(&their_instances, "ledger").await;
    wait_gone(&their_instances, "ledger", TIMEOUT).await;
}

/// A replica in the operator's region of this namespace's DBInstance in another region, by its
/// ARN: read there for its tags, made with the ARN as its source, and the source lists it; the
/// source's deletion waits for it.
#[tokio::test]
async fn a_replica_of_an_instance_in_another_region_is_made_by_its_arn() {
    let (_client, ns, instances, rds) = setup("replica-region").await;
    let _operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let main = dbinstance(
        "main",
        &main_id,
        json!({"backupRetentionPeriod": 1, "region": "eu-west-1"}),
    );
    let main = source_ready(&instances, &main).await;
    let arn = main.status.unwrap().common.arn.expect("the source's ARN");
    assert!(arn.contains(":eu-west-1:"), "{arn}");
    let mut copy = replica(&replica_id, json!({"connectionSecret": null}));
    copy.spec.replica_of = Some(rds_operator::dbinstance::ReplicaOf {
        arn: Some(arn.clone()),
        ..Default::default()
    });
    copy.spec.password.master_user_password = dbinstance("x", "x", json!({}))
        .spec
        .password
        .master_user_password;
    made(&instances, &copy, &arn).await;
    assert_eq!(calls(&replica_id, "CreateDBInstanceReadReplica"), 1);
    let here = describe(&rds, &replica_id)
        .await
        .expect("the replica in us-east-1");
    assert_eq!(
        here.read_replica_source_db_instance_identifier(),
        Some(arn.as_str())
    );
    let eu = crate::common::rds_of_region("eu-west-1").await;
    let there = describe(&eu, &main_id)
        .await
        .expect("the source in eu-west-1");
    assert_eq!(
        there.read_replica_db_instance_identifiers().len(),
        1,
        "{there:?}"
    );
    source_deletion_waits(&instances).await;
    crate::common::delete(&instances, "replica").await;
    wait_gone(&instances, "replica", TIMEOUT).await;
    let policy = json!({"spec": {"deletionPolicy": "Delete"}});
    let _ = instances
        .patch("main", &PatchParams::default(), &Patch::Merge(&policy))
        .await;
    wait_gone(&instances, "main", TIMEOUT).await;
}

/// A replica of a source without automated backups: RDS would refuse it with a code that
/// otherwise means "busy" (InvalidDBInstanceState, "Automated backups are not enabled"), which
/// the operator once told apart by those words. Now it reads the source's backup retention as RDS
/// reports it and asks for nothing: SourceBackupsOff naming the field, and no
/// CreateDBInstanceReadReplica reaches the emulator while the operator polls on. Changed: it was
/// InvalidParameter and Stalled after one refused call; it is not Stalled now, for a change of the
/// source (backups turned on) helps, not only one of this spec.
#[tokio::test]
async fn a_replica_of_a_source_without_backups_is_not_asked_for_and_names_the_field() {
    let (_client, ns, instances, _rds) = setup("replica-nobackups").await;
    let operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let main = dbinstance("main", &main_id, json!({"backupRetentionPeriod": 0}));
    source_ready(&instances, &main).await;
    (instances.create(&PostParams::default(), &replica(&replica_id, json!({}))))
        .await
        .expect("create the replica");
    let r = wait_dbi(
        &instances,
        "replica",
        "Synced=False SourceBackupsOff",
        TIMEOUT,
        |db| synced_reason(db) == "SourceBackupsOff",
    )
    .await;
    let (_, _, message) = condition(&r, "Synced").expect("Synced");
    assert!(
        message.contains("automated backups off") && message.contains("backupRetentionPeriod"),
        "{message}"
    );
    let tried =
        crate::common::not_retried(&operator, &replica_id, "CreateDBInstanceReadReplica").await;
    assert_eq!(tried, 0, "no CreateDBInstanceReadReplica");

    crate::common::delete(&instances, "replica").await;
    wait_gone(&instances, "replica", TIMEOUT).await;
    crate::common::delete(&instances, "main").await;
    wait_gone(&instances, "main", TIMEOUT).await;
}
