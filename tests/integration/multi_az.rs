//! A Multi-AZ DB cluster (engine mysql), on the emulator's real engine: RDS makes its writer and
//! two readable standbys; the Secret's readerHost reaches a standby that shows the writer's row
//! and refuses writes; nothing is sent in steady state; more storage and IOPS are one
//! ModifyDBCluster; deleting the DBCluster deletes it with the instances RDS made for it. Its
//! Performance Insights and Enhanced Monitoring are kept as Aurora's are. What RDS refuses of one
//! is refused at apply.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::json;

use crate::clusters::{cluster, ready};
use crate::common::{self, *};

fn multi_az(extra: serde_json::Value) -> serde_json::Value {
    let mut spec = json!({"engine": "mysql", "engineVersion": "8.0.42",
                          "dbClusterInstanceClass": "db.m6gd.large", "allocatedStorage": 100,
                          "storageType": "io1", "iops": 1000, "deletionPolicy": "Delete",
                          "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    spec
}

const MONITORING_ROLE: &str = "arn:aws:iam::123456789012:role/rds-monitoring";

/// Waits until RDS shows every instance available.
async fn available(rds: &aws_sdk_rds::Client, ids: &[String]) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let mut states = Vec::new();
        for id in ids {
            let out = rds
                .describe_db_instances()
                .db_instance_identifier(id)
                .send();
            let found = out.await.ok().and_then(|o| {
                let db = o.db_instances().first()?.clone();
                db.db_instance_status().map(str::to_owned)
            });
            states.push(found.unwrap_or_default());
        }
        if states.iter().all(|s| s == "available") {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{ids:?}: {states:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn a_multi_az_db_clusters_reader_refuses_writes_and_shows_the_writers_row() {
    let (client, ns, _instances, rds) = setup("multiaz").await;
    let operator = Operator::start(&ns);
    let id = common::unique("maz");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    // Insights and monitoring are valid for Multi-AZ DB clusters too (API_CreateDBCluster.html).
    let insights = json!({"enablePerformanceInsights": true, "monitoringInterval": 30,
                          "monitoringRoleARN": MONITORING_ROLE});
    (clusters
        .create(&pp, &cluster(&id, multi_az(insights)))
        .await)
        .expect("create");
    let c = wait_object(&clusters, "coffee", "Ready, three members", |c| {
        ready(c) && c.status.as_ref().is_some_and(|s| s.members.len() == 3)
    })
    .await;
    let members = c.status.clone().unwrap().members;
    let writers: Vec<_> = members.iter().filter(|m| m.is_cluster_writer).collect();
    assert_eq!(writers.len(), 1, "one writer: {members:?}");
    let names: Vec<String> = (1..=3).map(|n| format!("{id}-instance-{n}")).collect();
    available(&rds, &names).await;
    let made = rds.describe_db_clusters().db_cluster_identifier(&id).send();
    let made = made.await.unwrap().db_clusters()[0].clone();
    assert_eq!(
        (
            made.performance_insights_enabled(),
            made.monitoring_interval()
        ),
        (Some(true), Some(30)),
        "the create carried insights and monitoring"
    );
    assert_eq!(made.monitoring_role_arn(), Some(MONITORING_ROLE));

    let s = (common::secret_data(&client, &ns, "coffee-db").await).expect("the cluster Secret");
    assert_ne!(s["host"], s["readerHost"], "writer and reader endpoints");
    let sql = "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "a write through host: {out}");
    // Both standbys, one after another behind the reader endpoint, have the row and refuse writes.
    for _ in 0..2 {
        let select = "SELECT name FROM suppliers";
        let (ok, out) = wait_sql(&s, &s["readerHost"], select, "Beans", TIMEOUT).await;
        assert!(
            ok && out.contains("Beans"),
            "the writer's row on a reader: {out}"
        );
        let insert = "INSERT INTO suppliers VALUES ('through the reader')";
        let (ok, out) = wait_sql(&s, &s["readerHost"], insert, "", Duration::ZERO).await;
        assert!(
            !ok && out.contains("read-only") && out.contains("1290"),
            "a write through readerHost is refused: {out}"
        );
    }

    // Steady state: three drift intervals with no call that changes anything.
    let ids: Vec<&str> = std::iter::once(id.as_str())
        .chain(names.iter().map(String::as_str))
        .collect();
    common::steady_state(&operator, ("DBCluster", "coffee"), &ids).await;

    let patch = json!({"spec": {"allocatedStorage": 200, "iops": 2000}});
    let params = PatchParams::default();
    (clusters
        .patch("coffee", &params, &Patch::Merge(&patch))
        .await)
        .expect("patch storage");
    let grown = || async {
        let out = rds.describe_db_clusters().db_cluster_identifier(&id).send();
        let c = out.await.unwrap().db_clusters()[0].clone();
        (c.allocated_storage(), c.iops())
    };
    let deadline = std::time::Instant::now() + TIMEOUT;
    while grown().await != (Some(200), Some(2000)) {
        assert!(std::time::Instant::now() < deadline, "{:?}", grown().await);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    wait_object(&clusters, "coffee", "Ready again", ready).await;
    assert_eq!(common::calls(&id, "ModifyDBCluster"), 1, "one change");

    // RDS's instances go with the cluster: no DBInstance to delete first.
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
    for name in &names {
        let found = rds
            .describe_db_instances()
            .db_instance_identifier(name)
            .send();
        assert!(found.await.is_err(), "{name} is gone with its cluster");
    }
}

#[tokio::test]
async fn what_rds_refuses_of_a_multi_az_db_cluster_is_refused_at_apply() {
    let (client, ns, _instances, _rds) = setup("multiaz-apply").await;
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let id = common::unique("mazr");
    let rows = [
        (
            json!({"dbClusterInstanceClass": null}),
            "dbClusterInstanceClass is required",
        ),
        (json!({"iops": null}), "needs iops"),
        (json!({"iops": 6000}), "0.5 to 50 times allocatedStorage"),
        (json!({"storageType": "aurora-iopt1"}), "io1, io2 or gp3"),
        (json!({"enableHttpEndpoint": true}), "those are Aurora's"),
    ];
    for (change, says) in rows {
        let mut spec = multi_az(json!({}));
        spec.as_object_mut()
            .unwrap()
            .extend(change.as_object().unwrap().clone());
        spec.as_object_mut().unwrap().retain(|_, v| !v.is_null());
        let refused = clusters
            .create(&PostParams::default(), &cluster(&id, spec))
            .await;
        let message = refused.expect_err("refused at apply").to_string();
        assert!(message.contains(says), "{change}: {message}");
    }
    // An Aurora cluster's storage grows by itself: allocatedStorage is refused.
    let aurora = json!({"allocatedStorage": 100});
    let refused = clusters
        .create(&PostParams::default(), &cluster(&id, aurora))
        .await;
    let message = refused.expect_err("refused at apply").to_string();
    assert!(
        message.contains("allocatedStorage is required for a Multi-AZ DB cluster"),
        "{message}"
    );
}
