//! A DBCluster's health (issue 58), on real engines: status.health of the cluster shows the
//! figures of all its instances (dimension DBClusterIdentifier) and its member DBInstances their
//! own, an Aurora reader's lag included; the cluster's alarms are made on that dimension, fire on
//! its instances' figures, and go with it.

use std::process::{Child, Command};

use kube::api::{Api, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::json;

use crate::clusters::{cluster, member, ready};
use crate::common::{
    Operator, TIMEOUT, is_ready, mariadb_keys, secret_data, setup, unique, wait_dbi, wait_event,
    wait_object, wait_object_gone,
};
use crate::db_health::{alarm_tags, alarms_named, hold_read_lock};

const REAL: &str = "moto-ext:real-engine";

/// An Aurora cluster of a writer and a reader on a real engine: the reader held behind a read lock
/// while the writer is written to shows its lag (AuroraReplicaLag, in seconds) in its DBInstance's
/// status.health, and the cluster the furthest reader's (AuroraReplicaLagMaximum) in its own, with
/// its CPU and connections; the reader does not have the row until the lock goes.
#[tokio::test]
async fn an_aurora_reader_held_behind_shows_its_lag_in_its_status_and_the_clusters() {
    let (client, ns, instances, _rds) = setup("cluster-health").await;
    let _operator = Operator::start_with(&ns, &["--drift-interval", "3s"]);
    let id = unique("chl");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    let real = json!({"deletionPolicy": "Delete", "tags": [{"key": REAL, "value": "true"}]});
    (clusters.create(&pp, &cluster(&id, real)).await).expect("create");
    for name in ["writer", "reader"] {
        let m = member(
            name,
            &format!("{id}-{name}"),
            json!({"deletionPolicy": "Delete"}),
        );
        (instances.create(&pp, &m).await).expect("member");
        wait_dbi(&instances, name, "the member Ready", TIMEOUT, is_ready).await;
    }
    wait_object(&clusters, "coffee", "Ready", ready).await;
    let s = (secret_data(&client, &ns, "coffee-db").await).expect("the cluster Secret");
    let (ok, out) = mariadb_keys(&s, &s["password"], "CREATE TABLE beans (n INT PRIMARY KEY)");
    assert!(ok, "{out}");
    let reader = instances.get("reader").await.expect("the reader");
    let at = reader
        .status
        .unwrap()
        .common
        .endpoint
        .expect("the reader's endpoint");
    let mut holder = hold_read_lock(&s, &at.address, &at.port.to_string(), 90);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO beans VALUES (1)");
    assert!(ok, "{out}");
    let lag = |h: Option<&rds_operator::database::health::HealthStatus>| {
        h.and_then(|h| h.replica_lag_seconds).unwrap_or_default()
    };
    let behind = wait_dbi(
        &instances,
        "reader",
        "the reader's lag in status",
        TIMEOUT,
        |db| lag(db.status.as_ref().and_then(|s| s.common.health.as_ref())) >= 2,
    )
    .await;
    let c = wait_object(&clusters, "coffee", "the cluster's lag in status", |c| {
        lag(c.status.as_ref().and_then(|s| s.common.health.as_ref())) >= 2
    })
    .await;
    let health = c.status.unwrap().common.health.unwrap();
    assert!(health.connections.is_some(), "{health:?}");
    assert_eq!(
        health.free_storage_mib, None,
        "an Aurora volume grows by itself"
    );
    let writer = instances.get("writer").await.expect("the writer");
    let writer_health = writer
        .status
        .and_then(|s| s.common.health)
        .unwrap_or_default();
    assert_eq!(
        writer_health.replica_lag_seconds, None,
        "a writer has no lag"
    );
    let reader_health = behind.status.unwrap().common.health.unwrap();
    eprintln!("reader {reader_health:?}, cluster {health:?}");
    let _ = holder.kill();
    let _ = holder.wait();
    for name in ["reader", "writer"] {
        crate::common::delete(&instances, name).await;
        crate::common::wait_gone(&instances, name, TIMEOUT).await;
    }
    (clusters.delete("coffee", &Default::default()).await).expect("delete");
    wait_object_gone(&clusters, "coffee").await;
}

/// A DBCluster's alarms are on the figures of all its instances (dimension DBClusterIdentifier):
/// made tagged as the operator's, shown in status (the furthest reader's lag without data while
/// the cluster has no reader); with more sessions open on its real engine than connectionsAbove,
/// the connections alarm goes to ALARM in CloudWatch and in status, with an AlarmFiring Event;
/// deleting the DBCluster deletes them.
#[tokio::test]
async fn a_clusters_connections_alarm_fires_on_its_sessions_and_its_alarms_go_with_it() {
    let (client, ns, _instances, _rds) = setup("cluster-alarm").await;
    let _operator = Operator::start_with(&ns, &["--drift-interval", "3s"]);
    let id = unique("cla");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let extra = json!({"alarms": {"connectionsAbove": 2}, "deletionPolicy": "Delete",
                       "tags": [{"key": REAL, "value": "true"}]});
    let cluster = cluster(&id, extra);
    (clusters.create(&PostParams::default(), &cluster).await).expect("create");
    let state = |c: &DBCluster, metric: &str| -> Option<String> {
        let alarms = &c.status.as_ref()?.common.alarms;
        (alarms.iter().find(|a| a.metric == metric)).map(|a| a.state.clone())
    };
    wait_object(&clusters, "coffee", "Ready, its alarms shown", |c| {
        ready(c)
            && state(c, "DatabaseConnections").as_deref() == Some("OK")
            && state(c, "AuroraReplicaLagMaximum").as_deref() == Some("INSUFFICIENT_DATA")
    })
    .await;
    let prefix = format!("rds-operator:cluster:{id}:");
    let made = alarms_named(&prefix);
    let metrics: Vec<&str> = (made.iter())
        .map(|(n, _, _)| n.trim_start_matches(&prefix))
        .collect();
    assert_eq!(
        metrics,
        [
            "AuroraReplicaLagMaximum",
            "CPUUtilization",
            "DatabaseConnections"
        ]
    );
    assert!(
        made.iter().all(|(_, _, d)| d == "DBClusterIdentifier"),
        "{made:?}"
    );
    assert!(alarm_tags(&made[0].0).contains("rds.operator.rs/owner-uid"));

    let s = (secret_data(&client, &ns, "coffee-db").await).expect("the cluster Secret");
    let sessions: Vec<Child> = (0..3)
        .map(|_| {
            (Command::new("mariadb")
                .args(["--no-defaults", "-h", &s["host"], "-P", &s["port"]])
                .args(["-u", &s["username"], "-e", "SELECT SLEEP(60)"])
                .env("MYSQL_PWD", &s["password"])
                .spawn())
            .expect("mariadb (Debian mariadb-client)")
        })
        .collect();
    wait_object(&clusters, "coffee", "the connections alarm in ALARM", |c| {
        state(c, "DatabaseConnections").as_deref() == Some("ALARM")
    })
    .await;
    wait_event(&client, &ns, "coffee", "AlarmFiring").await;
    let connections = format!("{prefix}DatabaseConnections");
    let listed = alarms_named(&prefix);
    assert!(
        listed
            .iter()
            .any(|(n, st, _)| *n == connections && st == "ALARM"),
        "{listed:?}"
    );
    for mut session in sessions {
        let _ = session.kill();
        let _ = session.wait();
    }
    (clusters.delete("coffee", &Default::default()).await).expect("delete");
    wait_object_gone(&clusters, "coffee").await;
    assert_eq!(alarms_named(&prefix), vec![], "its alarms went with it");
}
