//! Health from CloudWatch (issue 58), on real engines: the emulator publishes each server's
//! metrics (moto_ext/metrics.py, every 5 s), the operator's health poll reads them once a drift
//! interval (5 s here) and status.health shows them; an approved blue/green switchover waits while
//! green is further behind than maxLagSeconds, with the figure, and goes once it catches up.

use std::collections::BTreeMap;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{
    Operator, TIMEOUT, aws_request, calls, condition, dbinstance, is_ready, mariadb_keys, messages,
    region, secret_data, setup, synced_reason, topic_with_queue, unique, wait_dbi, wait_event,
};

fn real(db: &mut DBInstance) {
    db.spec.tags.push(rds_operator::crd::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
}

fn lag(db: &DBInstance) -> Option<i64> {
    db.status
        .as_ref()?
        .common
        .health
        .as_ref()?
        .replica_lag_seconds
}

async fn patch(api: &Api<DBInstance>, name: &str, patch: serde_json::Value) {
    (api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("patch DBInstance");
}

/// A session on `host` that holds a global read lock for `seconds` (the master user has RELOAD,
/// as on RDS): the replication's SQL thread waits behind it, as behind any long query on a
/// replica, while its I/O thread goes on receiving.
pub(crate) fn hold_read_lock(
    s: &BTreeMap<String, String>,
    host: &str,
    port: &str,
    seconds: u32,
) -> Child {
    let sql = format!("FLUSH TABLES WITH READ LOCK; SELECT SLEEP({seconds});");
    (Command::new("mariadb")
        .args([
            "--no-defaults",
            "-h",
            host,
            "-P",
            port,
            "-u",
            &s["username"],
            "-e",
            &sql,
        ])
        .env("MYSQL_PWD", &s["password"])
        .spawn())
    .expect("mariadb (Debian mariadb-client)")
}

fn secret(name: &str) -> serde_json::Value {
    json!({"name": name})
}

/// Creates the DBInstance `name` (RDS identifier `id`, with `extra` in its spec) on a real engine,
/// its connection Secret `<name>-db`, waits until it is Ready and makes the table `beans` through
/// the Secret; the Secret's keys.
async fn ready_with_beans(
    client: &kube::Client,
    ns: &str,
    instances: &Api<DBInstance>,
    (name, id): (&str, &str),
    extra: serde_json::Value,
) -> BTreeMap<String, String> {
    let mut spec = json!({"connectionSecret": secret(&format!("{name}-db"))});
    spec.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let mut db = dbinstance(name, id, spec);
    real(&mut db);
    (instances.create(&PostParams::default(), &db).await).expect("create");
    wait_dbi(instances, name, "Ready", TIMEOUT, is_ready).await;
    let s = (secret_data(client, ns, &format!("{name}-db")).await).expect("the Secret");
    let (ok, out) = mariadb_keys(&s, &s["password"], "CREATE TABLE beans (n INT PRIMARY KEY)");
    assert!(ok, "{out}");
    s
}

/// A replica held behind a read lock: the source's write is not applied, and status.health shows
/// a lag within two drift intervals of the emulator publishing it, larger at each reading after;
/// the source shows free storage, connections and CPU, and no lag.
#[tokio::test]
async fn a_replica_whose_replication_is_paused_shows_a_growing_lag_in_status() {
    let (client, ns, instances, _rds) = setup("health-lag").await;
    let _operator = Operator::start(&ns);
    let (main_id, replica_id) = (unique("main"), unique("replica"));
    let m = ready_with_beans(
        &client,
        &ns,
        &instances,
        ("main", &main_id),
        json!({"backupRetentionPeriod": 1}),
    )
    .await;
    let mut replica = dbinstance(
        "replica",
        &replica_id,
        json!({"replicaOf": {"name": "main"}, "connectionSecret": secret("replica-db")}),
    );
    replica.spec.master_username = None;
    replica.spec.password.master_user_password = None;
    replica.spec.db_name = None;
    replica.spec.engine_version = None;
    instances
        .create(&PostParams::default(), &replica)
        .await
        .expect("create the replica");
    let caught_up = wait_dbi(
        &instances,
        "replica",
        "the replica caught up in status",
        TIMEOUT,
        |db| is_ready(db) && lag(db) == Some(0),
    )
    .await;
    let health = caught_up.status.unwrap().common.health.unwrap();
    assert!(
        health.free_storage_mib.is_some_and(|f| f > 19 * 1024),
        "{health:?}"
    );
    let source = wait_dbi(&instances, "main", "the source's health", TIMEOUT, |db| {
        db.status
            .as_ref()
            .and_then(|s| s.common.health.as_ref())
            .is_some_and(|h| {
                h.free_storage_mib.is_some() && h.connections.is_some() && h.cpu_percent.is_some()
            })
    })
    .await;
    let health = source.status.unwrap().common.health.unwrap();
    assert_eq!(
        health.replica_lag_seconds, None,
        "a source has no replica lag"
    );
    assert!(
        health.storage_headroom_percent.is_some_and(|p| p > 90),
        "{health:?}"
    );

    let r = secret_data(&client, &ns, "replica-db")
        .await
        .expect("the replica's Secret");
    let mut holder = hold_read_lock(&r, &r["host"], &r["port"], 90);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (ok, out) = mariadb_keys(&m, &m["password"], "INSERT INTO beans VALUES (1)");
    assert!(ok, "{out}");
    let written = Instant::now();
    // Two drift intervals (5 s each) after the emulator's next reading (every 5 s), and a second
    // for the lag to reach one.
    let within = Duration::from_secs(2 * 5 + 5 + 1 + 4);
    let first = wait_dbi(&instances, "replica", "a lag in status", within, |db| {
        lag(db).is_some_and(|l| l >= 1)
    })
    .await;
    let first_lag = lag(&first).unwrap();
    eprintln!(
        "lag {first_lag} s in status {:?} after the write",
        written.elapsed()
    );
    let later = wait_dbi(
        &instances,
        "replica",
        "a growing lag",
        Duration::from_secs(20),
        |db| lag(db).is_some_and(|l| l > first_lag),
    )
    .await;
    assert!(lag(&later).unwrap() > first_lag);
    let (ok, out) = mariadb_keys(&r, &r["password"], "SELECT COUNT(*) FROM beans");
    assert!(
        ok && out.trim() == "0",
        "the replica has not applied the write: {out}"
    );
    let _ = holder.kill();
    let _ = holder.wait();
    remove(&instances, "replica").await;
    remove(&instances, "main").await;
}

/// An approved switchover while green is behind blue (green's replication held behind a read
/// lock, blue written to): no SwitchoverBlueGreenDeployment, Synced says SwitchoverWaitingForLag
/// with green's lag; once the lock goes and green catches up, the switchover goes, and green had
/// the row.
#[tokio::test]
async fn a_blue_green_switchover_approved_while_green_is_behind_waits_then_goes_once_caught_up() {
    let (client, ns, instances, _rds) = setup("health-bg").await;
    let operator = Operator::start(&ns);
    let id = unique("bg");
    let extra =
        json!({"upgradePolicy": "BlueGreen", "backupRetentionPeriod": 1, "maxLagSeconds": 5});
    let s = ready_with_beans(&client, &ns, &instances, ("db", &id), extra).await;
    let upgrade = json!({"spec": {"engineVersion": "8.4.3", "allowMajorVersionUpgrade": true}});
    patch(&instances, "db", upgrade).await;
    let waiting = wait_dbi(&instances, "db", "awaiting approval", TIMEOUT, |db| {
        synced_reason(db) == "SwitchoverAwaitingApproval"
    })
    .await;
    let bg = waiting.status.unwrap().blue_green.unwrap();
    let deployment = bg.deployment.deployment_identifier.clone();
    let green = bg.green_endpoint.expect("green's endpoint");

    let mut holder = hold_read_lock(&s, &green.address, &green.port.to_string(), 120);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO beans VALUES (1)");
    assert!(ok, "{out}");
    // Behind by more than maxLagSeconds before the approval, in the figures the gate reads too
    // (the emulator publishes every 5 s, the operator reads every drift interval).
    tokio::time::sleep(Duration::from_secs(20)).await;
    patch(
        &instances,
        "db",
        json!({"spec": {"switchover": deployment}}),
    )
    .await;
    let held = wait_dbi(
        &instances,
        "db",
        "the switchover waiting for green",
        TIMEOUT,
        |db| {
            synced_reason(db) == "SwitchoverWaitingForLag"
                && condition(db, "Synced").is_some_and(|c| c.2.contains("behind blue"))
        },
    )
    .await;
    let message = condition(&held, "Synced").unwrap().2;
    eprintln!("{message}");
    assert!(message.contains("over maxLagSeconds 5"), "{message}");
    let held = || async { calls(&deployment, "SwitchoverBlueGreenDeployment") == 0 };
    crate::common::holds_over_passes(&operator, ("DBInstance", "db"), "held while behind", held)
        .await;

    let _ = holder.kill();
    let _ = holder.wait();
    // Once caught up: CloudWatch's highest lag of the last minute falls under 5 s within the
    // minute.
    let done = wait_dbi(
        &instances,
        "db",
        "switched over",
        Duration::from_secs(180),
        |db| {
            (db.status.as_ref().and_then(|s| s.blue_green.as_ref()))
                .is_some_and(|b| b.deployment.status == "SWITCHOVER_COMPLETED")
        },
    )
    .await;
    assert_eq!(calls(&deployment, "SwitchoverBlueGreenDeployment"), 1);
    assert!(done.status.is_some());
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT COUNT(*) FROM beans");
    assert!(
        ok && out.trim() == "1",
        "the row written while green was behind: {out}"
    );
    remove(&instances, "db").await;
}

/// Deletes the DBInstance `name` and what it made in RDS (its instance, and an old one a
/// switchover left), without a final snapshot, and waits until it is gone: a real server left
/// running counts against the emulator's limit for the other tests.
async fn remove(instances: &Api<DBInstance>, name: &str) {
    let delete = json!({"spec": {"deletionPolicy": "Delete"}});
    patch(instances, name, delete).await;
    crate::common::delete(instances, name).await;
    crate::common::wait_gone(instances, name, TIMEOUT).await;
}

/// The operator's alarms of `identifier` as CloudWatch lists them (its JSON protocol on the
/// emulator): (name, state) sorted.
fn alarms_in_cloudwatch(identifier: &str) -> Vec<(String, String)> {
    let listed = alarms_named(&format!("rds-operator:{identifier}:"));
    (listed.into_iter()).map(|(n, s, _)| (n, s)).collect()
}

/// The alarms whose names start with `prefix`, as CloudWatch lists them: (name, state, the
/// dimension's name) sorted.
pub(crate) fn alarms_named(prefix: &str) -> Vec<(String, String, String)> {
    let headers = "Content-Type: application/x-amz-json-1.0\r\n\
                   X-Amz-Target: GraniteServiceVersion20100801.DescribeAlarms\r\n";
    let body = json!({"AlarmNamePrefix": prefix}).to_string();
    let (code, answer) = aws_request(("POST", "/"), (&region(), "monitoring"), headers, &body);
    assert_eq!(code, 200, "DescribeAlarms: {answer}");
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
    let mut found: Vec<(String, String, String)> =
        (answer["MetricAlarms"].as_array().into_iter().flatten())
            .map(|a| {
                let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
                let dimension = text(&a["Dimensions"][0]["Name"]);
                (text(&a["AlarmName"]), text(&a["StateValue"]), dimension)
            })
            .collect();
    found.sort();
    found
}

fn alarm_state(db: &DBInstance, metric: &str) -> Option<String> {
    let status = db.status.as_ref()?;
    (status.common.alarms.iter())
        .find(|a| a.metric == metric)
        .map(|a| a.state.clone())
}

/// A database with alarms on a real engine, their topic's queue listening: the alarms are made
/// (tagged as the operator's) and show OK in status; with the free-storage threshold set 24 MiB
/// under what is free, 64 MiB written takes free storage past it, and the alarm goes to ALARM in
/// CloudWatch and in status, with an AlarmFiring Event and a notification on the topic.
#[tokio::test]
async fn filling_a_databases_disk_past_the_threshold_sets_its_alarm_to_alarm_and_raises_an_event() {
    let (client, ns, instances, _rds) = setup("health-alarm").await;
    let operator = Operator::start(&ns);
    let id = unique("full");
    let (topic, queue) = topic_with_queue(&id).await;
    let extra = json!({"alarms": {"topicArn": topic}});
    let s = ready_with_beans(&client, &ns, &instances, ("db", &id), extra).await;
    let watched = wait_dbi(
        &instances,
        "db",
        "the alarms OK and free storage shown",
        TIMEOUT,
        |db| {
            let free = (db.status.as_ref().and_then(|s| s.common.health.as_ref()))
                .and_then(|h| h.free_storage_mib);
            free.is_some()
                && ["FreeStorageSpace", "CPUUtilization", "DatabaseConnections"]
                    .iter()
                    .all(|m| alarm_state(db, m).as_deref() == Some("OK"))
        },
    )
    .await;
    assert_eq!(
        alarms_in_cloudwatch(&id).len(),
        3,
        "{:?}",
        alarms_in_cloudwatch(&id)
    );
    let free = watched
        .status
        .unwrap()
        .common
        .health
        .unwrap()
        .free_storage_mib
        .unwrap();
    let below = format!("{}Mi", free - 24);
    patch(
        &instances,
        "db",
        json!({"spec": {"alarms": {"topicArn": topic, "freeStorageBelow": below}}}),
    )
    .await;
    let ok = |db: &DBInstance| alarm_state(db, "FreeStorageSpace").as_deref() == Some("OK");
    wait_dbi(&instances, "db", "the storage alarm OK", TIMEOUT, ok).await;
    let not_full = || async { ok(&instances.get("db").await.expect("the DBInstance")) };
    crate::common::holds_over_polls(&operator, "not full yet", not_full).await;

    let fill = "CREATE TABLE fill (b LONGBLOB); \
                INSERT INTO fill SELECT REPEAT('x', 8388608) FROM seq_1_to_8;";
    let (ok, out) = mariadb_keys(&s, &s["password"], fill);
    assert!(ok, "fill: {out}");
    wait_dbi(
        &instances,
        "db",
        "the storage alarm in ALARM",
        TIMEOUT,
        |db| alarm_state(db, "FreeStorageSpace").as_deref() == Some("ALARM"),
    )
    .await;
    wait_event(&client, &ns, "db", "AlarmFiring").await;
    let storage = format!("rds-operator:{id}:FreeStorageSpace");
    assert!(alarms_in_cloudwatch(&id).contains(&(storage.clone(), "ALARM".into())));
    let heard = messages(&queue).await;
    assert!(
        heard
            .iter()
            .any(|m| m.contains(&storage) && m.contains("ALARM")),
        "the topic's notification: {heard:?}"
    );
    remove(&instances, "db").await;
}

/// Deleting a DBInstance deletes the alarms the operator made for it (and no other's), which
/// carried its ownership tags.
#[tokio::test]
async fn deleting_the_dbinstance_deletes_its_alarms() {
    let (_client, ns, instances, _rds) = setup("health-alarm-delete").await;
    let _operator = Operator::start(&ns);
    let (id, other) = (unique("alarmed"), unique("kept"));
    for (name, identifier) in [("db", &id), ("other", &other)] {
        let db = dbinstance(
            name,
            identifier,
            json!({"alarms": {}, "deletionPolicy": "Delete"}),
        );
        instances
            .create(&PostParams::default(), &db)
            .await
            .expect("create");
    }
    for name in ["db", "other"] {
        wait_dbi(&instances, name, "its alarms made", TIMEOUT, |db| {
            db.status
                .as_ref()
                .is_some_and(|s| s.common.alarms.len() == 3)
        })
        .await;
    }
    let made = alarms_in_cloudwatch(&id);
    assert_eq!(made.len(), 3, "{made:?}");
    let tags = alarm_tags(&made[0].0);
    assert!(
        tags.contains("rds.operator.rs/owner-uid"),
        "tagged as the operator's: {tags}"
    );
    crate::common::delete(&instances, "db").await;
    crate::common::wait_gone(&instances, "db", TIMEOUT).await;
    assert_eq!(alarms_in_cloudwatch(&id), vec![], "its alarms went with it");
    assert_eq!(alarms_in_cloudwatch(&other).len(), 3, "another's stay");
    crate::common::delete(&instances, "other").await;
}

/// An alarm's tags, as CloudWatch lists them (JSON).
pub(crate) fn alarm_tags(name: &str) -> String {
    let headers = "Content-Type: application/x-amz-json-1.0\r\n\
                   X-Amz-Target: GraniteServiceVersion20100801.ListTagsForResource\r\n";
    let arn = format!("arn:aws:cloudwatch:{}:123456789012:alarm:{name}", region());
    let body = json!({"ResourceARN": arn}).to_string();
    let (code, answer) = aws_request(("POST", "/"), (&region(), "monitoring"), headers, &body);
    assert_eq!(code, 200, "ListTagsForResource: {answer}");
    answer
}
