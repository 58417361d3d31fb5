//! The DBCluster kind and its member DBInstances: an Aurora MySQL cluster served by a real MariaDB
//! server behind the emulator, its writer and reader endpoints in its connection Secret, fields
//! the cluster owns refused on a member, one ModifyDBCluster for a version change and none for the
//! members, no call in steady state, and a deletion that waits for the members, then leaves a
//! final cluster snapshot.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::crd::Tag;
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclusterparametergroup::DBClusterParameterGroup;
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbsubnetgroup::DBSubnetGroup;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, is_ready, mariadb_keys, object_condition, secret_data, setup, unique,
    wait_dbi, wait_for, wait_object, wait_object_gone, wait_sql,
};

const VERSION: &str = "8.0.mysql_aurora.3.08.0";
const NEWER: &str = "8.0.mysql_aurora.3.09.0";
const FIVE: Duration = Duration::from_secs(5);

pub(crate) fn cluster(identifier: &str, extra: serde_json::Value) -> DBCluster {
    let mut spec = json!({
        "dbClusterIdentifier": identifier,
        "engine": "aurora-mysql",
        "engineVersion": VERSION,
        "masterUsername": "admin",
        "masterUserPassword": {"name": "db-password", "key": "password"},
        "databaseName": "COFFEE",
        "connectionSecret": {"name": "coffee-db", "extraKeys": {
            "APP_DB_HOST": "{{ host }}", "APP_DB_READER_HOST": "{{ readerHost }}",
            "APP_DB_USER": "{{ username }}", "APP_DB_PASSWORD": "{{ password }}",
            "APP_DB_NAME": "{{ dbname }}",
        }},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBCluster",
        "metadata": {"name": "coffee"},
        "spec": spec,
    }))
    .expect("valid DBCluster")
}

pub(crate) fn member(name: &str, identifier: &str, extra: serde_json::Value) -> DBInstance {
    let mut spec = json!({
        "dbInstanceIdentifier": identifier,
        "engine": "aurora-mysql",
        "dbInstanceClass": "db.r6g.large",
        "dbClusterRef": {"name": "coffee"},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBInstance",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid DBInstance")
}

pub(crate) fn ready(c: &DBCluster) -> bool {
    object_condition(c, "Ready").is_some_and(|r| r.0 == "True")
        && object_condition(c, "Synced").is_some_and(|s| s.1 == "Synced")
        && c.status.as_ref().unwrap().reported.observed_generation == c.metadata.generation
}

/// The Aurora Coffee Manage example (deploy/examples/coffee-manage-aurora/), with the emulator's
/// subnets and a real engine: a cluster with a writer and a reader whose Secret's `host` and
/// `readerHost` are endpoints of their own, as the members' are; a row written through `host`
/// is read through `readerHost` within 5 s, which refuses writes as read-only; nothing is sent
/// while all is in sync; a version change is one ModifyDBCluster and no ModifyDBInstance for the
/// members; after a failover `host` reaches the new writer and takes writes, and a client writing
/// every 0.3 s through the Secret across it loses no acknowledged row.
#[tokio::test]
async fn the_aurora_example_serves_sql_through_its_writer_and_reader() {
    let (client, ns, instances, rds) = setup("aurora").await;
    let dir = format!("{}/deploy/examples/coffee-manage-aurora", common::REPO);
    let read = |file: &str| std::fs::read_to_string(format!("{dir}/{file}")).expect("example file");
    let password: Secret = serde_yaml::from_str(&read("password-secret.yaml")).unwrap();
    let mut subnets: DBSubnetGroup = serde_yaml::from_str(&read("dbsubnetgroup.yaml")).unwrap();
    subnets.spec.subnet_ids = crate::subnetgroups::coffee_subnets(&rds).await;
    subnets.spec.db_subnet_group_name = Some(unique("aur-subnets"));
    let mut params: DBClusterParameterGroup =
        serde_yaml::from_str(&read("dbclusterparametergroup.yaml")).unwrap();
    params.spec.db_cluster_parameter_group_name = Some(unique("aur-params"));
    let mut c: DBCluster = serde_yaml::from_str(&read("dbcluster.yaml")).unwrap();
    let (id, writer, reader) = (unique("aur"), unique("aur-w"), unique("aur-r"));
    c.spec.db_cluster_identifier = Some(id.clone());
    c.spec.tags.push(Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    let mut members: Vec<DBInstance> = ["writer.yaml", "reader.yaml"]
        .map(|f| serde_yaml::from_str(&read(f)).unwrap())
        .into();
    members[0].spec.db_instance_identifier = Some(writer.clone());
    members[1].spec.db_instance_identifier = Some(reader.clone());
    let deployment: Deployment = serde_yaml::from_str(&read("deployment.yaml")).unwrap();

    let operator = Operator::start(&ns);
    let pp = PostParams::default();
    (Api::<Secret>::namespaced(client.clone(), &ns)
        .create(&pp, &password)
        .await)
        .unwrap();
    (Api::<DBSubnetGroup>::namespaced(client.clone(), &ns)
        .create(&pp, &subnets)
        .await)
        .unwrap();
    let groups: Api<DBClusterParameterGroup> = Api::namespaced(client.clone(), &ns);
    (groups.create(&pp, &params).await).expect("the example group is accepted");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    (clusters.create(&pp, &c).await).expect("the example DBCluster is accepted");
    for m in &members {
        (instances.create(&pp, m).await).expect("the example members are accepted");
    }
    // The Deployment is valid for the API server (no kubelet runs it here).
    (Api::<Deployment>::namespaced(client.clone(), &ns)
        .create(&pp, &deployment)
        .await)
        .expect("the example Deployment is accepted");
    let cluster_name = c.metadata.name.clone().unwrap();
    let secret_name = (c.spec.connection.connection_secret.as_ref()).map(|s| s.name.clone());
    let first = wait_object(&clusters, &cluster_name, "the cluster Ready", ready).await;
    // Ready means usable (issue 76): the moment the cluster turns Ready its writer is available
    // in RDS and a login through its Secret works. (RDS reports the cluster available before any
    // instance exists: that alone made it Ready, and its Secret written, before its writer was
    // even created.)
    let status = |i: Option<aws_sdk_rds::types::DbInstance>| i?.db_instance_status;
    assert_eq!(
        status(common::describe(&rds, &writer).await).as_deref(),
        Some("available"),
        "the writer when the cluster turned Ready: {:?}",
        first.status.map(|s| s.reported.conditions)
    );
    let at_once = secret_data(&client, &ns, &secret_name.expect("the example's Secret"))
        .await
        .expect("the cluster Secret at Ready");
    let (ok, out) = mariadb_keys(&at_once, &at_once["password"], "SELECT 1");
    assert!(ok, "a login the moment the cluster turned Ready: {out}");
    for m in &members {
        let name = m.metadata.name.clone().unwrap();
        wait_dbi(&instances, &name, "the member Ready", TIMEOUT, is_ready).await;
    }
    let c = wait_object(&clusters, &cluster_name, "both members listed", |c| {
        c.status.as_ref().is_some_and(|s| s.members.len() == 2)
    })
    .await;
    let status = c.status.clone().unwrap();
    assert_eq!(
        status
            .members
            .iter()
            .filter(|m| m.is_cluster_writer)
            .count(),
        1
    );

    let secret = c
        .spec
        .connection
        .connection_secret
        .as_ref()
        .unwrap()
        .name
        .clone();
    let s = secret_data(&client, &ns, &secret)
        .await
        .expect("the cluster Secret");
    for key in [
        "APP_DB_HOST",
        "APP_DB_USER",
        "APP_DB_PASSWORD",
        "APP_DB_NAME",
    ] {
        assert!(s.contains_key(key), "the app reads {key}: {s:?}");
    }
    assert_eq!(s["APP_DB_HOST"], s["host"]);
    assert_eq!(s["APP_DB_READER_HOST"], s["readerHost"]);
    assert_eq!(
        (s["username"].as_str(), s["dbname"].as_str()),
        ("admin", "COFFEE")
    );
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "log in through the writer host: {out}");
    // Four endpoints, each its own address, as on RDS: the cluster's (writer), its reader
    // endpoint, and each member's own. Until this issue the emulator served one address for all
    // four, and this test asserted that a member's endpoint was the cluster's.
    let w = instances.get("coffee-aurora-writer").await.expect("writer");
    let r = instances.get("coffee-aurora-reader").await.expect("reader");
    let own = |db: &DBInstance| {
        let endpoint = db.status.as_ref().and_then(|s| s.common.endpoint.as_ref());
        endpoint
            .map(|e| e.address.clone())
            .expect("a member's endpoint")
    };
    let (writer_host, reader_member_host) = (own(&w), own(&r));
    let hosts = [
        &s["host"],
        &s["readerHost"],
        &writer_host,
        &reader_member_host,
    ];
    let distinct: std::collections::BTreeSet<_> = hosts.iter().collect();
    assert_eq!(
        distinct.len(),
        4,
        "four endpoints, four addresses: {hosts:?}"
    );
    // The writer's row reaches the reader within 5 s (replication), and the reader endpoint
    // refuses writes as RDS's does (ERROR 1290 ... --read-only).
    let select = "SELECT name FROM suppliers";
    let (ok, out) = wait_sql(&s, &s["readerHost"], select, "Beans & Co", FIVE).await;
    assert!(
        ok && out.contains("Beans & Co"),
        "read through the reader host: {out}"
    );
    let insert = "INSERT INTO suppliers VALUES ('through the reader')";
    let (ok, out) = wait_sql(&s, &s["readerHost"], insert, "", Duration::ZERO).await;
    assert!(
        !ok && out.contains("read-only") && out.contains("1290"),
        "a write through readerHost is refused: {out}"
    );
    let (ok, out) = wait_sql(&s, &writer_host, select, "Beans & Co", FIVE).await;
    assert!(
        ok && out.contains("Beans & Co"),
        "the writer's own endpoint: {out}"
    );
    // In sync: three passes of the operator's with no call that changes anything.
    let ids = [id.as_str(), writer.as_str(), reader.as_str()];
    let before = common::mutations(&ids);
    common::steady_state(&operator, ("DBCluster", &cluster_name), &ids).await;

    let patch = json!({"spec": {"engineVersion": NEWER}});
    (clusters
        .patch(
            &cluster_name,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await)
        .expect("patch engineVersion");
    wait_object(&clusters, &cluster_name, "the new version", |c| {
        ready(c) && c.status.as_ref().unwrap().common.engine_version.as_deref() == Some(NEWER)
    })
    .await;
    let after = common::mutations(&ids);
    let modify = |m: &BTreeMap<String, u64>, key: &str| m.get(key).copied().unwrap_or(0);
    let key = format!("ModifyDBCluster {id}");
    assert_eq!(modify(&after, &key), modify(&before, &key) + 1, "{after:?}");
    for m in [&writer, &reader] {
        assert_eq!(
            modify(&after, &format!("ModifyDBInstance {m}")),
            0,
            "{after:?}"
        );
    }

    // A failover (FailoverDBCluster) makes the reader the writer: the Secret's host, the cluster
    // endpoint, now reaches it and takes writes; the old writer is a reader and refuses them. A
    // client writing every 0.3 s through the Secret loses no row it was told was written.
    let writes = common::Writer::start(&s, Duration::from_millis(300));
    writes.keep_writing(10).await;
    (rds.failover_db_cluster()
        .db_cluster_identifier(&id)
        .target_db_instance_identifier(&reader)
        .send()
        .await)
        .expect("FailoverDBCluster");
    let insert = "INSERT INTO suppliers VALUES ('after the failover'); SELECT @@server_id";
    let (ok, out) = wait_sql(&s, &s["host"], insert, "", Duration::ZERO).await;
    assert!(ok, "a write through host after the failover: {out}");
    let new_writer = "SELECT @@server_id, @@read_only";
    let (ok, through_new) = wait_sql(&s, &reader_member_host, new_writer, "", Duration::ZERO).await;
    assert!(
        ok && through_new.starts_with(out.trim()) && through_new.trim().ends_with('0'),
        "host reaches the former reader, now writable: {out} / {through_new}"
    );
    let select = "SELECT name FROM suppliers";
    let (ok, out) = wait_sql(&s, &writer_host, select, "after the failover", FIVE).await;
    assert!(
        ok && out.contains("after the failover"),
        "the old writer replicates the new: {out}"
    );
    let insert = "INSERT INTO suppliers VALUES ('to the old writer')";
    let (ok, out) = wait_sql(&s, &writer_host, insert, "", Duration::ZERO).await;
    assert!(
        !ok && out.contains("read-only"),
        "the old writer is a reader now: {out}"
    );
    writes.keep_writing(12).await;
    common::no_acknowledged_row_lost(writes, &s, "Aurora failover");
    for m in &members {
        let _ = instances
            .delete(&m.metadata.name.clone().unwrap(), &DeleteParams::default())
            .await;
    }
    let delete = json!({"spec": {"deletionPolicy": "Delete"}});
    let _ = (clusters.patch(
        &cluster_name,
        &PatchParams::default(),
        &Patch::Merge(&delete),
    ))
    .await;
    let _ = clusters
        .delete(&cluster_name, &DeleteParams::default())
        .await;
    wait_object_gone(&clusters, &cluster_name).await;
}

/// Deleting a cluster whose member still exists waits (InUse) and calls no DeleteDBCluster; once
/// the member is gone (deleted without a final snapshot, which RDS refuses for a member), the
/// cluster is deleted, leaving its final cluster snapshot.
#[tokio::test]
async fn a_cluster_deleted_with_members_waits_then_leaves_a_final_snapshot() {
    let (client, ns, instances, rds) = setup("aurora-del").await;
    let operator = Operator::start(&ns);
    let (id, one) = (unique("aurd"), unique("aurd-1"));
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    (clusters
        .create(&PostParams::default(), &cluster(&id, json!({})))
        .await)
        .expect("create");
    (instances
        .create(&PostParams::default(), &member("one", &one, json!({})))
        .await)
        .expect("create member");
    wait_object(&clusters, "coffee", "the cluster Ready", ready).await;
    wait_dbi(&instances, "one", "the member Ready", TIMEOUT, is_ready).await;

    clusters
        .delete("coffee", &DeleteParams::default())
        .await
        .expect("delete the cluster");
    let c = wait_object(&clusters, "coffee", "InUse", |c| {
        object_condition(c, "Synced").is_some_and(|s| s.1 == "InUse")
    })
    .await;
    let message = object_condition(&c, "Synced").unwrap().2;
    assert!(message.contains("DBInstance one"), "{message}");
    let kept = || async { common::calls(&id, "DeleteDBCluster") == 0 };
    let what = "no delete while a member exists";
    common::holds_over_passes(&operator, ("DBCluster", "coffee"), what, kept).await;
    assert!(common::calls(&id, "DescribeDBClusters") > 0);

    instances
        .delete("one", &DeleteParams::default())
        .await
        .expect("delete the member");
    wait_object_gone(&clusters, "coffee").await;
    assert_eq!(common::calls(&id, "DeleteDBCluster"), 1);
    assert_eq!(common::calls(&one, "DeleteDBInstance"), 1);
    let gone = rds
        .describe_db_clusters()
        .db_cluster_identifier(&id)
        .send()
        .await;
    assert!(gone.is_err(), "RDS has no cluster {id} any more");
    let snapshots = (rds.describe_db_cluster_snapshots())
        .db_cluster_identifier(&id)
        .snapshot_type("manual")
        .send()
        .await
        .expect("cluster snapshots");
    let names: Vec<&str> = (snapshots.db_cluster_snapshots().iter())
        .filter_map(|s| s.db_cluster_snapshot_identifier())
        .collect();
    assert!(
        names.len() == 1 && names[0].starts_with(&format!("{id}-final-")),
        "one final snapshot of the cluster: {names:?}"
    );
    let member_snapshots = (rds.describe_db_snapshots())
        .db_instance_identifier(&one)
        .snapshot_type("manual")
        .send()
        .await
        .expect("member snapshots");
    assert!(
        member_snapshots.db_snapshots().is_empty(),
        "a member takes no final snapshot"
    );
}

/// Every field the cluster owns is refused on a member at apply, with a message naming it.
#[tokio::test]
async fn a_member_refuses_the_fields_its_cluster_owns_at_apply() {
    let (_client, _ns, instances, _rds) = setup("aurora-cel").await;
    let fields = [
        ("allocatedStorage", json!(20)),
        ("storageType", json!("gp3")),
        ("masterUsername", json!("admin")),
        (
            "masterUserPassword",
            json!({"name": "db-password", "key": "password"}),
        ),
        ("manageMasterUserPassword", json!(true)),
        ("dbName", json!("COFFEE")),
        ("backupRetentionPeriod", json!(7)),
        ("preferredBackupWindow", json!("03:00-04:00")),
        ("engineVersion", json!("8.0.mysql_aurora.3.08.0")),
        ("storageEncrypted", json!(true)),
        ("kmsKeyID", json!("alias/rds")),
        ("vpcSecurityGroupIDs", json!(["sg-1"])),
        ("dbSubnetGroupName", json!("coffee")),
        ("deletionProtection", json!(true)),
        ("port", json!(3306)),
    ];
    for (field, value) in fields {
        let m = member("m", &unique("aurm"), json!({ field: value }));
        let err = instances
            .create(&PostParams::default(), &m)
            .await
            .expect_err(field);
        let text = err.to_string();
        assert!(
            text.contains(&format!("{field} is the DBCluster's")),
            "{field}: {text}"
        );
    }
    let mysql = member("m", &unique("aurm"), json!({"engine": "mysql"}));
    let err = (instances.create(&PostParams::default(), &mysql).await).expect_err("engine");
    assert!(
        err.to_string()
            .contains("aurora-mysql or aurora-postgresql"),
        "{err}"
    );
    // A member as the cluster wants it is accepted.
    let fine = member("m", &unique("aurm"), json!({"promotionTier": 1}));
    (instances.create(&PostParams::default(), &fine).await).expect("a member is accepted");
}

/// A cluster deleted outside the operator (with a final snapshot, as the console offers) is
/// restored from that snapshot, its own, once the absence is confirmed: the row written before is
/// there, read through the Secret, which follows the new cluster's endpoints.
#[tokio::test]
async fn an_out_of_band_cluster_deletion_is_restored_from_its_own_final_snapshot() {
    let (client, ns, _instances, rds) = setup("aurora-oob").await;
    let _operator = Operator::start(&ns);
    let id = unique("auro");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&id, real))
        .await)
        .expect("create");
    wait_object(&clusters, "coffee", "the cluster Ready", ready).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the cluster Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "{out}");

    let final_snapshot = format!("{id}-console-final");
    (rds.delete_db_cluster())
        .db_cluster_identifier(&id)
        .final_db_snapshot_identifier(&final_snapshot)
        .send()
        .await
        .expect("delete the cluster outside the operator");
    let c = wait_object(&clusters, "coffee", "the restore", |c| {
        let status = c.status.as_ref().unwrap();
        status.restored_from.as_deref() == Some(&format!("cluster snapshot {final_snapshot}"))
    })
    .await;
    let events = common::event_reasons(&client, &ns, "coffee").await;
    assert!(events.iter().any(|r| r == "Restoring"), "{events:?}");
    drop(c);
    wait_object(&clusters, "coffee", "the restored cluster Ready", ready).await;
    assert_eq!(common::calls(&id, "RestoreDBClusterFromSnapshot"), 1);
    assert_eq!(
        common::calls(&id, "CreateDBCluster"),
        1,
        "never created empty"
    );
    let s = wait_for("the Secret on the restored cluster", TIMEOUT, || async {
        let s = secret_data(&client, &ns, "coffee-db").await?;
        let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT name FROM suppliers");
        (ok && out.contains("Beans & Co")).then_some(s)
    })
    .await;
    assert_eq!(s["username"], "admin");
    let delete = json!({"spec": {"deletionPolicy": "Delete"}});
    let _ = (clusters.patch("coffee", &PatchParams::default(), &Patch::Merge(&delete))).await;
    let _ = clusters.delete("coffee", &DeleteParams::default()).await;
    wait_object_gone(&clusters, "coffee").await;
}

/// restoreFrom a point in time of this namespace's cluster: the new cluster has the source's
/// data, and the spec's own password is sent once it is available (the source's is not kept).
#[tokio::test]
async fn a_cluster_is_restored_to_a_point_in_time_of_this_namespaces_cluster() {
    let (client, ns, _instances, _rds) = setup("aurora-pitr").await;
    let _operator = Operator::start(&ns);
    let (source, copy) = (unique("aurp"), unique("aurp-copy"));
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&source, real))
        .await)
        .expect("create");
    wait_object(&clusters, "coffee", "the source Ready", ready).await;
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the source's Secret");
    let sql =
        "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans & Co');";
    let (ok, out) = mariadb_keys(&s, &s["password"], sql);
    assert!(ok, "{out}");

    common::secret(
        &client,
        &ns,
        "copy-password",
        "password",
        "An0ther-Passw0rd",
    )
    .await;
    let mut restored = cluster(
        &copy,
        json!({
            "masterUserPassword": {"name": "copy-password", "key": "password"},
            "restoreFrom": {"sourceDBClusterIdentifier": source, "useLatestRestorableTime": true},
            "connectionSecret": {"name": "copy-db"},
        }),
    );
    restored.metadata.name = Some("copy".into());
    (clusters.create(&PostParams::default(), &restored).await).expect("create the copy");
    wait_object(&clusters, "copy", "the copy Ready", |c| {
        ready(c) && c.status.as_ref().unwrap().restored_from.is_some()
    })
    .await;
    assert_eq!(common::calls(&copy, "RestoreDBClusterToPointInTime"), 1);
    let s = wait_for(
        "the copy's Secret logs in with the spec's password",
        TIMEOUT,
        || async {
            let s = secret_data(&client, &ns, "copy-db").await?;
            let (ok, out) = mariadb_keys(&s, "An0ther-Passw0rd", "SELECT name FROM suppliers");
            (ok && out.contains("Beans & Co")).then_some(s)
        },
    )
    .await;
    assert_eq!(s["password"], "An0ther-Passw0rd");
    assert_eq!(
        common::calls(&copy, "ModifyDBCluster"),
        1,
        "the password, sent once"
    );
    for name in ["copy", "coffee"] {
        let delete = json!({"spec": {"deletionPolicy": "Delete"}});
        let _ = (clusters.patch(name, &PatchParams::default(), &Patch::Merge(&delete))).await;
        let _ = clusters.delete(name, &DeleteParams::default()).await;
    }
    for name in ["copy", "coffee"] {
        wait_object_gone(&clusters, name).await;
    }
}

/// A DBClusterParameterGroup's static change leaves the members pending a reboot, which the
/// cluster reports (Report) and then, with pendingRebootPolicy Reboot, puts right: one
/// RebootDBInstance per member, the reader before the writer.
#[tokio::test]
async fn a_static_cluster_parameter_change_waits_for_a_reboot_that_the_policy_makes() {
    let (client, ns, instances, rds) = setup("aurora-cpg").await;
    let operator = Operator::start(&ns);
    let (id, group) = (unique("aurc"), unique("aurc-params"));
    let (writer, reader) = (unique("aurc-w"), unique("aurc-r"));
    let groups: Api<DBClusterParameterGroup> = Api::namespaced(client.clone(), &ns);
    let params: DBClusterParameterGroup = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBClusterParameterGroup",
        "metadata": {"name": "coffee-params"},
        "spec": {
            "dbClusterParameterGroupName": group,
            "family": "aurora-mysql8.0",
            "description": "Coffee Manage cluster settings",
            "parameters": {"time_zone": "UTC"},
        },
    }))
    .expect("valid DBClusterParameterGroup");
    (groups.create(&PostParams::default(), &params).await).expect("create the group");
    let synced = |g: &DBClusterParameterGroup| {
        object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
            && g.status.as_ref().unwrap().reported.observed_generation == g.metadata.generation
    };
    wait_object(&groups, "coffee-params", "the group Synced", synced).await;
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let spec = json!({"dbClusterParameterGroupRef": {"name": "coffee-params"}});
    (clusters
        .create(&PostParams::default(), &cluster(&id, spec))
        .await)
        .expect("create");
    for (name, identifier, tier) in [("writer", &writer, 0), ("reader", &reader, 1)] {
        let m = member(name, identifier, json!({"promotionTier": tier}));
        (instances.create(&PostParams::default(), &m).await).expect("create member");
        wait_dbi(&instances, name, "the member Ready", TIMEOUT, is_ready).await;
    }
    wait_object(&clusters, "coffee", "the cluster Ready", ready).await;

    let patch = json!({"spec": {"parameters": {"binlog_format": "ROW"}}});
    (groups
        .patch(
            "coffee-params",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await)
        .expect("a static parameter");
    wait_object(&groups, "coffee-params", "the group Synced again", synced).await;
    let out = (rds.describe_db_cluster_parameters())
        .db_cluster_parameter_group_name(&group)
        .source("user")
        .send()
        .await
        .expect("parameters");
    let binlog = (out.parameters().iter())
        .find(|p| p.parameter_name() == Some("binlog_format"))
        .expect("binlog_format set");
    assert_eq!(
        binlog.apply_method().map(|m| m.as_str()),
        Some("pending-reboot")
    );
    let c = wait_object(&clusters, "coffee", "PendingReboot", |c| {
        object_condition(c, "Synced").is_some_and(|s| s.1 == "PendingReboot")
    })
    .await;
    assert!(
        object_condition(&c, "Ready").is_some_and(|r| r.0 == "True"),
        "still Ready"
    );
    let reboots =
        || common::calls(&writer, "RebootDBInstance") + common::calls(&reader, "RebootDBInstance");
    let none = || async { reboots() == 0 };
    common::holds_over_passes(
        &operator,
        ("DBCluster", "coffee"),
        "Report reboots nothing",
        none,
    )
    .await;

    let since = common::epoch();
    let policy = json!({"spec": {"pendingRebootPolicy": "Reboot"}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&policy))
        .await)
        .expect("pendingRebootPolicy Reboot");
    wait_object(&clusters, "coffee", "no reboot pending", |c| {
        ready(c) && c.metadata.generation == Some(2)
    })
    .await;
    for m in [&writer, &reader] {
        assert_eq!(common::calls(m, "RebootDBInstance"), 1, "{m} rebooted once");
    }
    let body =
        common::moto_ext_get(&format!("/_rds_ext/mutations?since={since}")).expect("mutations");
    let rows: Vec<(f64, String, String)> = serde_json::from_str(&body).expect("mutations JSON");
    let order: Vec<&str> = (rows.iter())
        .filter(|(_, action, _)| action == "RebootDBInstance")
        .map(|(_, _, id)| id.as_str())
        .collect();
    assert_eq!(
        order,
        vec![reader.as_str(), writer.as_str()],
        "the writer last"
    );
    for name in ["writer", "reader"] {
        let _ = instances.delete(name, &DeleteParams::default()).await;
    }
    let delete = json!({"spec": {"deletionPolicy": "Delete"}});
    let _ = (clusters.patch("coffee", &PatchParams::default(), &Patch::Merge(&delete))).await;
    let _ = clusters.delete("coffee", &DeleteParams::default()).await;
    wait_object_gone(&clusters, "coffee").await;
    let _ = groups
        .delete("coffee-params", &DeleteParams::default())
        .await;
    wait_object_gone(&groups, "coffee-params").await;
}
