//! Database Insights, Performance Insights and Enhanced Monitoring on both database kinds. RDS shows
//! Database Insights in its Standard mode on a database given none (the emulator does too): a spec
//! that leaves the fields out is in sync with that, and costs no call (ACK's rds-controller sent
//! about 750 ModifyDBInstance an hour across 8 instances for nil against "standard"). On a
//! DBCluster they are created, kept and changed with one ModifyDBCluster; advanced without 465
//! days of Performance Insights is refused at apply.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::json;

use crate::clusters::{cluster, ready};
use crate::common::{self, *};

const ROLE: &str = "arn:aws:iam::123456789012:role/rds-monitoring";

async fn cluster_of(rds: &aws_sdk_rds::Client, id: &str) -> aws_sdk_rds::types::DbCluster {
    let out = (rds
        .describe_db_clusters()
        .db_cluster_identifier(id)
        .send()
        .await)
        .expect("cluster");
    out.db_clusters()[0].clone()
}

#[tokio::test]
async fn a_spec_without_insights_fields_costs_no_call_while_rds_shows_standard() {
    let (client, ns, api, rds) = setup("insights-quiet").await;
    let (db_id, cluster_id) = (common::unique("dbi"), common::unique("dbic"));
    // 2 s drift interval: five drift intervals in 10 s.
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    (api.create(
        &PostParams::default(),
        &dbinstance("quiet", &db_id, json!({})),
    )
    .await)
        .expect("create");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    (clusters
        .create(&PostParams::default(), &cluster(&cluster_id, json!({})))
        .await)
        .expect("create cluster");
    wait_dbi(&api, "quiet", "Ready", TIMEOUT, is_ready).await;
    wait_object(&clusters, "coffee", "the cluster Ready", ready).await;
    let i = common::describe(&rds, &db_id).await.expect("instance");
    let c = cluster_of(&rds, &cluster_id).await;
    let standard = Some(&aws_sdk_rds::types::DatabaseInsightsMode::Standard);
    assert_eq!(
        i.database_insights_mode(),
        standard,
        "RDS shows its default"
    );
    assert_eq!(
        c.database_insights_mode(),
        standard,
        "RDS shows its default"
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    let before = [db_id.as_str(), cluster_id.as_str()].map(common::server_calls);
    let polls = operator_calls(&operator, "DescribeDBInstances");
    tokio::time::sleep(Duration::from_secs(11)).await;
    let after = [db_id.as_str(), cluster_id.as_str()].map(common::server_calls);
    assert!(
        operator_calls(&operator, "DescribeDBInstances") >= polls + 3,
        "it kept polling"
    );
    assert_eq!(
        after, before,
        "five drift intervals: no call named either database"
    );
    assert_eq!(operator_calls(&operator, "ModifyDBInstance"), 0);
    assert_eq!(operator_calls(&operator, "ModifyDBCluster"), 0);
    common::delete_and_wait(&api, "quiet").await;
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}

#[tokio::test]
async fn a_clusters_insights_and_monitoring_are_created_and_changed_with_one_modify() {
    let (client, ns, _api, rds) = setup("insights-cluster").await;
    let id = common::unique("insc");
    let _operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    // Advanced without 465 days of Performance Insights: refused at apply.
    let advanced = json!({"databaseInsightsMode": "advanced", "enablePerformanceInsights": true});
    let refused = clusters
        .create(&PostParams::default(), &cluster(&id, advanced))
        .await;
    let message = refused.expect_err("refused at apply").to_string();
    assert!(
        message.contains("performanceInsightsRetentionPeriod: 465"),
        "{message}"
    );

    let spec = json!({"databaseInsightsMode": "advanced", "enablePerformanceInsights": true,
                      "performanceInsightsRetentionPeriod": 465, "monitoringInterval": 30,
                      "monitoringRoleARN": ROLE});
    (clusters
        .create(&PostParams::default(), &cluster(&id, spec))
        .await)
        .expect("create");
    wait_object(&clusters, "coffee", "Ready", ready).await;
    let c = cluster_of(&rds, &id).await;
    assert_eq!(
        c.database_insights_mode(),
        Some(&aws_sdk_rds::types::DatabaseInsightsMode::Advanced)
    );
    assert_eq!(c.performance_insights_enabled(), Some(true));
    assert_eq!(c.performance_insights_retention_period(), Some(465));
    assert_eq!(
        (c.monitoring_interval(), c.monitoring_role_arn()),
        (Some(30), Some(ROLE))
    );
    assert_eq!(
        common::calls(&id, "ModifyDBCluster"),
        0,
        "the create carried them all"
    );

    let change = json!({"spec": {"monitoringInterval": 60}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&change))
        .await)
        .unwrap();
    wait_object(&clusters, "coffee", "Ready at the new generation", ready).await;
    wait_for("RDS shows the new interval", TIMEOUT, || async {
        (cluster_of(&rds, &id).await.monitoring_interval() == Some(60)).then_some(())
    })
    .await;
    assert_eq!(common::calls(&id, "ModifyDBCluster"), 1);
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}

/// Aurora I/O-Optimized: a cluster switched to aurora-iopt1 and back to Standard is refused a
/// second switch within RDS's 30 days, with the reason, and RDS is sent no call for it.
#[tokio::test]
async fn the_second_switch_to_io_optimized_within_30_days_is_refused() {
    let (client, ns, _api, rds) = setup("iopt").await;
    let id = common::unique("iopt");
    let operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    (clusters
        .create(&PostParams::default(), &cluster(&id, json!({})))
        .await)
        .expect("create");
    wait_object(&clusters, "coffee", "Ready", ready).await;
    assert_eq!(
        cluster_of(&rds, &id).await.storage_type(),
        Some("aurora"),
        "Standard by default"
    );
    for (storage, modifies) in [("aurora-iopt1", 1), ("aurora", 2)] {
        let change = json!({"spec": {"storageType": storage}});
        (clusters
            .patch("coffee", &PatchParams::default(), &Patch::Merge(&change))
            .await)
            .unwrap();
        wait_object(&clusters, "coffee", storage, ready).await;
        wait_for(storage, TIMEOUT, || async {
            (cluster_of(&rds, &id).await.storage_type() == Some(storage)).then_some(())
        })
        .await;
        assert_eq!(common::calls(&id, "ModifyDBCluster"), modifies);
    }
    let again = json!({"spec": {"storageType": "aurora-iopt1"}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&again))
        .await)
        .unwrap();
    let refused = wait_object(&clusters, "coffee", "StorageSwitchTooSoon", |c| {
        object_condition(c, "Synced").is_some_and(|s| s.1 == "StorageSwitchTooSoon")
    })
    .await;
    let message = object_condition(&refused, "Synced").unwrap().2;
    assert!(message.contains("once every 30 days"), "{message}");
    let two = || async { common::calls(&id, "ModifyDBCluster") == 2 };
    let what = "no call for the second switch";
    common::holds_over_passes(&operator, ("DBCluster", "coffee"), what, two).await;
    assert_eq!(cluster_of(&rds, &id).await.storage_type(), Some("aurora"));
    let reasons = common::event_reasons(&client, &ns, "coffee").await;
    assert!(
        reasons.contains(&"StorageSwitchTooSoon".to_owned()),
        "{reasons:?}"
    );
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}
