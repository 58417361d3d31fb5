//! upgradePolicy BlueGreen on a DBCluster, on the emulator's cluster blue/green deployments and
//! real engines: an Aurora major upgrade is one CreateBlueGreenDeployment and no ModifyDBCluster;
//! green is a read-only copy of the cluster and its member; nothing is switched over until a person
//! approves (the annotation, removed once used); then the cluster, its member and its endpoint are
//! green under their names, the rows and every acknowledged write are there, the connection Secret
//! is the same byte for byte, the member DBInstance follows, and the old cluster is kept until its
//! retention, then deleted (its member first), then the deployment. As RDS asks of an Aurora MySQL
//! source, the cluster is in a custom DB cluster parameter group with binary logging on (the
//! emulator refuses the default group: localstack/suite/test_rules.py), and green gets a group of
//! the new version's family, also with it on.

use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::database::blue_green::SWITCHOVER_ANNOTATION;
use rds_operator::dbcluster::{ClusterBlueGreen, DBCluster};
use rds_operator::dbclusterparametergroup::DBClusterParameterGroup;
use serde_json::json;

use crate::clusters::{cluster, member};
use crate::common::{
    Operator, TIMEOUT, Writer, calls, is_ready, mariadb, mariadb_keys, object_condition,
    secret_data, setup, unique, wait_dbi, wait_for, wait_object,
};

const FIVE_SEVEN: &str = "5.7.mysql_aurora.2.11.2";
const EIGHT: &str = "8.0.mysql_aurora.3.08.0";

fn blue_green(c: &DBCluster) -> Option<&ClusterBlueGreen> {
    c.status.as_ref()?.blue_green.as_ref()
}

fn synced_reason(c: &DBCluster) -> String {
    object_condition(c, "Synced")
        .map(|s| s.1)
        .unwrap_or_default()
}

async fn patch(api: &Api<DBCluster>, patch: serde_json::Value) {
    (api.patch("coffee", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("patch DBCluster");
}

/// A DBClusterParameterGroup with binary logging on ("the cluster must be associated with a custom
/// DB cluster parameter group with binary logging (binlog_format) turned on", Aurora User Guide,
/// blue-green-deployments-creating.html), once Synced.
async fn binlog_group(groups: &Api<DBClusterParameterGroup>, name: &str, family: &str) -> String {
    let identifier = unique(name);
    let group: DBClusterParameterGroup = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBClusterParameterGroup",
        "metadata": {"name": name},
        "spec": {
            "dbClusterParameterGroupName": identifier,
            "family": family,
            "description": "Coffee Manage, binary logging on for blue/green",
            "parameters": {"binlog_format": "ROW"},
        },
    }))
    .expect("valid DBClusterParameterGroup");
    (groups.create(&PostParams::default(), &group).await).expect("create the group");
    wait_object(groups, name, "the group Synced", |g| {
        object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
    })
    .await;
    identifier
}

async fn cluster_in_rds(
    rds: &aws_sdk_rds::Client,
    id: &str,
) -> Option<aws_sdk_rds::types::DbCluster> {
    let out = rds
        .describe_db_clusters()
        .db_cluster_identifier(id)
        .send()
        .await;
    out.ok()?.db_clusters().first().cloned()
}

#[tokio::test]
async fn an_aurora_major_upgrade_goes_blue_green_and_switches_over_only_once_approved() {
    let (client, ns, instances, rds) = setup("aurora-bg").await;
    let operator = Operator::start(&ns);
    let (id, writer) = (unique("aurbg"), unique("aurbg-w"));
    let groups: Api<DBClusterParameterGroup> = Api::namespaced(client.clone(), &ns);
    let blue_group = binlog_group(&groups, "blue-params", "aurora-mysql5.7").await;
    let green_group = binlog_group(&groups, "green-params", "aurora-mysql8.0").await;
    let mut c = cluster(
        &id,
        json!({"engineVersion": FIVE_SEVEN, "upgradePolicy": "BlueGreen",
               "deletionPolicy": "Delete", "maxLagSeconds": 5,
               "dbClusterParameterGroupRef": {"name": "blue-params"}}),
    );
    c.spec.tags.push(rds_operator::crd::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let pp = PostParams::default();
    (clusters.create(&pp, &c).await).expect("the DBCluster");
    let m = member("writer", &writer, json!({"deletionPolicy": "Delete"}));
    (instances.create(&pp, &m).await).expect("the member");
    wait_object(
        &clusters,
        "coffee",
        "the cluster Ready",
        crate::clusters::ready,
    )
    .await;
    wait_dbi(&instances, "writer", "the member Ready", TIMEOUT, is_ready).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "write before the upgrade: {out}");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let before = secrets.get("coffee-db").await.expect("the Secret").data;
    let writes = Writer::start(&s, Duration::from_millis(500));

    let upgrade = json!({"spec": {"engineVersion": EIGHT, "allowMajorVersionUpgrade": true,
        "dbInstanceParameterGroupName": "default.aurora-mysql8.0",
        "dbClusterParameterGroupRef": {"name": "green-params"}}});
    patch(&clusters, upgrade).await;
    let waiting = wait_object(
        &clusters,
        "coffee",
        "the deployment awaiting approval",
        |c| synced_reason(c) == "SwitchoverAwaitingApproval",
    )
    .await;
    let bg = blue_green(&waiting).unwrap().clone();
    let deployment = bg.deployment.deployment_identifier.clone();
    assert_eq!(bg.deployment.status, "AVAILABLE");
    assert_eq!(bg.deployment.changes[0].field, "engineVersion");
    assert!(
        (bg.deployment.tasks.iter()).any(|t| t.name == "DB_ENGINE_VERSION_UPGRADE"),
        "{bg:?}"
    );
    let green = bg.green_cluster.clone().expect("the green cluster");
    assert!(green.starts_with(&format!("{id}-green-")), "{bg:?}");
    assert_eq!(calls(&id, "CreateBlueGreenDeployment"), 1);
    assert_eq!(calls(&id, "ModifyDBCluster"), 0, "no in-place upgrade");
    assert_eq!(
        calls(&writer, "ModifyDBInstance"),
        0,
        "the member is not sent it"
    );
    // Green is a copy of the cluster and its member, on the new version, read-only.
    let g = cluster_in_rds(&rds, &green).await.expect("green in RDS");
    assert_eq!(g.engine_version(), Some(EIGHT));
    assert_eq!(g.db_cluster_parameter_group(), Some(green_group.as_str()));
    let green_member = g.db_cluster_members()[0].db_instance_identifier().unwrap();
    assert!(
        green_member.starts_with(&format!("{writer}-green-")),
        "{green_member}"
    );
    let green_host = bg.green_endpoint.clone().expect("green's endpoint");
    let on_green = |sql| {
        mariadb(
            &green_host,
            Some(&s["port"]),
            "admin",
            &s["password"],
            "COFFEE",
            sql,
        )
    };
    let (ok, out) = on_green("SELECT name FROM suppliers");
    assert!(
        ok && out.contains("Beans & Co"),
        "green has blue's rows: {out}"
    );
    let (ok, out) = on_green("INSERT INTO suppliers VALUES ('on green')");
    assert!(
        !ok && out.contains("read-only"),
        "green refuses writes: {out}"
    );
    // No switchover without approval, over three passes of the operator's.
    let unapproved = || async {
        calls(&deployment, "SwitchoverBlueGreenDeployment") == 0
            && calls(&id, "CreateBlueGreenDeployment") == 1
    };
    crate::common::holds_over_passes(
        &operator,
        ("DBCluster", "coffee"),
        "no switchover, made once",
        unapproved,
    )
    .await;

    // Green held behind a read lock while blue is written to: the approved switchover waits,
    // with green's lag (AuroraBinlogReplicaLag) over maxLagSeconds, and goes once it catches up.
    let mut holder = crate::db_health::hold_read_lock(&s, &green_host, &s["port"], 120);
    // Behind by more than maxLagSeconds before the approval, in the figures the gate reads (the
    // emulator publishes every 5 s; blue is written every 0.5 s).
    tokio::time::sleep(Duration::from_secs(20)).await;
    let approve = json!({"metadata": {"annotations": {SWITCHOVER_ANNOTATION: "true"}}});
    patch(&clusters, approve).await;
    let held = wait_object(&clusters, "coffee", "waiting for green's lag", |c| {
        let message = object_condition(c, "Synced")
            .map(|s| s.2)
            .unwrap_or_default();
        synced_reason(c) == "SwitchoverWaitingForLag" && message.contains("over maxLagSeconds 5")
    })
    .await;
    let none = || async { calls(&deployment, "SwitchoverBlueGreenDeployment") == 0 };
    let what = format!(
        "no switchover while green is behind: {:?}",
        held.status.map(|s| s.reported.conditions)
    );
    crate::common::holds_over_passes(&operator, ("DBCluster", "coffee"), &what, none).await;
    let _ = holder.kill();
    let _ = holder.wait();
    // Once caught up: CloudWatch's highest lag of the last minute falls under 5 s within the
    // minute.
    let done = wait_for(
        "switched over and in sync",
        Duration::from_secs(180),
        || async {
            let c = clusters.get_opt("coffee").await.ok()??;
            (synced_reason(&c) == "Synced"
                && blue_green(&c).is_some_and(|b| b.deployment.status == "SWITCHOVER_COMPLETED")
                && c.status.as_ref()?.common.engine_version.as_deref() == Some(EIGHT))
            .then_some(c)
        },
    )
    .await;
    assert_eq!(calls(&deployment, "SwitchoverBlueGreenDeployment"), 1);
    assert_eq!(
        calls(&id, "ModifyDBCluster"),
        0,
        "still no in-place upgrade"
    );
    let annotations = done.metadata.annotations.clone().unwrap_or_default();
    assert!(
        !annotations.contains_key(SWITCHOVER_ANNOTATION),
        "the approval is used once"
    );
    let old = format!("{id}-old1");
    assert_eq!(
        blue_green(&done).unwrap().old_cluster.as_deref(),
        Some(old.as_str())
    );
    let now = cluster_in_rds(&rds, &id)
        .await
        .expect("the cluster under its name");
    assert_eq!(now.engine_version(), Some(EIGHT));
    let names: Vec<_> = (now.db_cluster_members().iter())
        .filter_map(|m| m.db_instance_identifier())
        .collect();
    assert_eq!(
        names,
        [writer.as_str()],
        "green's member took the member's name"
    );
    let kept = cluster_in_rds(&rds, &old)
        .await
        .expect("the old cluster is kept");
    assert_eq!(kept.engine_version(), Some(FIVE_SEVEN));
    assert_eq!(kept.db_cluster_parameter_group(), Some(blue_group.as_str()));
    assert_eq!(now.db_cluster_parameter_group(), Some(green_group.as_str()));
    // The member DBInstance follows: its instance is green's, in sync, nothing sent to it.
    let w = wait_dbi(
        &instances,
        "writer",
        "the member on the new version",
        TIMEOUT,
        |db| {
            is_ready(db)
                && db.status.as_ref().unwrap().common.engine_version.as_deref() == Some(EIGHT)
        },
    )
    .await;
    assert_eq!(
        w.status.unwrap().db_instance_identifier.as_deref(),
        Some(writer.as_str())
    );
    assert_eq!(calls(&writer, "ModifyDBInstance"), 0);

    // The same Secret, byte for byte; the rows and every acknowledged write are there, and the
    // cluster endpoint takes writes on the new writer.
    tokio::time::sleep(Duration::from_secs(5)).await;
    crate::common::nothing_lost(writes, &s, "Aurora blue/green");
    let after = secrets.get("coffee-db").await.expect("the Secret").data;
    assert_eq!(after, before, "the connection Secret is unchanged");
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO suppliers VALUES ('after')");
    assert!(
        ok,
        "the writer endpoint takes writes after the switchover: {out}"
    );
    assert_eq!(
        calls(&old, "DeleteDBCluster"),
        0,
        "never deleted on its own"
    );

    // A retention: the old member goes first, then the old cluster, then the deployment.
    patch(&clusters, json!({"spec": {"oldClusterRetention": "1s"}})).await;
    wait_for("the old cluster deleted", TIMEOUT, || async {
        cluster_in_rds(&rds, &old).await.is_none().then_some(())
    })
    .await;
    assert_eq!(calls(&format!("{writer}-old1"), "DeleteDBInstance"), 1);
    assert_eq!(calls(&old, "DeleteDBCluster"), 1);
    wait_object(&clusters, "coffee", "the deployment deleted", |c| {
        blue_green(c).is_none()
    })
    .await;
    assert_eq!(calls(&deployment, "DeleteBlueGreenDeployment"), 1);
    assert!(
        cluster_in_rds(&rds, &id).await.is_some(),
        "the cluster itself stays"
    );

    crate::common::delete(&instances, "writer").await;
    crate::common::wait_gone(&instances, "writer", TIMEOUT).await;
    (clusters.delete("coffee", &Default::default()).await).expect("delete the DBCluster");
    crate::common::wait_object_gone(&clusters, "coffee").await;
    for name in ["blue-params", "green-params"] {
        (groups.delete(name, &Default::default()).await).expect("delete the group");
        crate::common::wait_object_gone(&groups, name).await;
    }
}
