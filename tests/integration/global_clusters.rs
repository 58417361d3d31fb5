//! The GlobalCluster kind: a global database made once of a primary DBCluster of the namespace,
//! tagged as its own, its deletion protection kept, its members reported, and a deletion that
//! waits while a member cluster is left, with no DeleteGlobalCluster sent. A secondary DBCluster
//! in another region, sent no password, serves the primary's rows read-only through its reader
//! endpoint, takes writes through the global writer endpoint, has a DBUser made through it, and
//! is detached before it is deleted.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::crd::Tag;
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbinstance::{DBInstance, DeletionPolicy};
use rds_operator::dbuser::DBUser;
use rds_operator::globalcluster::GlobalCluster;
use serde_json::json;

use crate::clusters::{cluster, ready as cluster_ready};
use crate::common::{
    self, Operator, TIMEOUT, is_ready, mariadb_keys, object_condition, secret_data, setup, unique,
    wait_dbi, wait_object, wait_object_gone, wait_sql,
};

const TEN: Duration = Duration::from_secs(10);

fn global(name: &str, spec: serde_json::Value) -> GlobalCluster {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "GlobalCluster",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid GlobalCluster")
}

fn synced_reason(g: &GlobalCluster) -> String {
    object_condition(g, "Synced").map_or_else(String::new, |c| c.1)
}

fn ready(g: &GlobalCluster) -> bool {
    object_condition(g, "Ready").is_some_and(|c| c.0 == "True") && synced_reason(g) == "Synced"
}

#[tokio::test]
async fn a_global_database_is_made_once_of_its_primary_and_waits_for_its_members_to_go() {
    let (client, ns, _instances, rds) = setup("gdb").await;
    let operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let (id, gid) = (unique("gdb-primary"), unique("gdb"));
    (clusters.create(
        &PostParams::default(),
        &cluster(&id, json!({"deletionPolicy": "Delete"})),
    ))
    .await
    .expect("create the primary DBCluster");
    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), &ns);
    // Made of the DBCluster coffee once it is Ready.
    let spec = json!({"globalClusterIdentifier": gid, "sourceDBClusterRef": {"name": "coffee"}});
    (globals.create(&PostParams::default(), &global("coffee-global", spec)))
        .await
        .expect("create the GlobalCluster");
    let made = wait_object(&globals, "coffee-global", "Ready", ready).await;
    wait_object(&clusters, "coffee", "the primary Ready", cluster_ready).await;
    let status = made.status.expect("a status");
    assert_eq!(status.writer.as_deref(), Some(id.as_str()));
    assert_eq!(status.members.len(), 1, "{:?}", status.members);
    assert_eq!(
        (
            status.members[0].region.as_str(),
            status.members[0].role.as_str()
        ),
        ("us-east-1", "writer")
    );
    assert_eq!(status.engine.as_deref(), Some("aurora-mysql"));
    assert_eq!(common::calls(&gid, "CreateGlobalCluster"), 1);
    let found = (rds.describe_global_clusters())
        .global_cluster_identifier(&gid)
        .send()
        .await
        .expect("DescribeGlobalClusters");
    let tags = found.global_clusters()[0].tag_list();
    assert!(
        tags.iter()
            .any(|t| t.key() == Some(rds_operator::crd::OWNER_TAG)),
        "tagged as the object's: {tags:?}"
    );

    // Deletion protection asked: one ModifyGlobalCluster; taken back: another.
    for (protected, sent) in [(true, 1), (false, 2)] {
        let patch = json!({"spec": {"deletionProtection": protected}});
        (globals.patch(
            "coffee-global",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        ))
        .await
        .expect("patch deletionProtection");
        wait_object(&globals, "coffee-global", "protection as asked", |g| {
            ready(g) && g.status.as_ref().unwrap().deletion_protection == Some(protected)
        })
        .await;
        assert_eq!(common::calls(&gid, "ModifyGlobalCluster"), sent);
    }

    // Deleted while the primary is a member: waits, and sends nothing.
    (globals.delete("coffee-global", &DeleteParams::default()))
        .await
        .expect("delete the GlobalCluster");
    wait_object(&globals, "coffee-global", "InUse", |g| {
        synced_reason(g) == "InUse"
    })
    .await;
    let kept = || async { common::calls(&gid, "DeleteGlobalCluster") == 0 };
    let what = "no DeleteGlobalCluster while the primary is a member";
    common::holds_over_passes(&operator, ("GlobalCluster", "coffee-global"), what, kept).await;
    // Once the primary is detached (by hand here: RDS refuses to delete a member cluster), the
    // global database goes.
    let primary = (status.members[0].db_cluster_arn.clone()).expect("the primary's ARN");
    (rds.remove_from_global_cluster())
        .global_cluster_identifier(&gid)
        .db_cluster_identifier(&primary)
        .send()
        .await
        .expect("RemoveFromGlobalCluster");
    wait_object_gone(&globals, "coffee-global").await;
    assert_eq!(common::calls(&gid, "DeleteGlobalCluster"), 1);
    (clusters.delete("coffee", &DeleteParams::default()))
        .await
        .expect("delete the primary");
    wait_object_gone(&clusters, "coffee").await;
    let gone = (rds.describe_global_clusters())
        .global_cluster_identifier(&gid)
        .send()
        .await;
    assert!(gone.is_err(), "RDS has it no more: {gone:?}");
}

/// The examples' password Secret, primary DBCluster (without its groups, deleted with its
/// object), GlobalCluster and secondary DBCluster, under these RDS identifiers (primary,
/// secondary, global database).
pub(crate) fn examples(
    id: &str,
    eu: &str,
    gid: &str,
) -> (Secret, DBCluster, GlobalCluster, DBCluster) {
    let password: Secret = example("coffee-manage-aurora/password-secret.yaml");
    let mut primary: DBCluster = example("coffee-manage-aurora/dbcluster.yaml");
    primary.spec.db_cluster_identifier = Some(id.to_owned());
    primary.spec.network.db_subnet_group_ref = None;
    primary.spec.db_cluster_parameter_group_ref = None;
    primary.spec.deletion.deletion_policy = DeletionPolicy::Delete;
    let mut global: GlobalCluster = example("coffee-manage-aurora-global/globalcluster.yaml");
    global.spec.global_cluster_identifier = Some(gid.to_owned());
    let mut secondary: DBCluster = example("coffee-manage-aurora-global/dbcluster-eu.yaml");
    secondary.spec.db_cluster_identifier = Some(eu.to_owned());
    (password, primary, global, secondary)
}

/// Creates the examples' password Secret and the primary DBCluster in `ns`, and waits until the
/// primary is Ready: the namespace's DBClusters.
pub(crate) async fn primary_ready(
    client: &kube::Client,
    ns: &str,
    password: &Secret,
    primary: &DBCluster,
) -> Api<DBCluster> {
    let pp = PostParams::default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns);
    (secrets.create(&pp, password).await).expect("the example password Secret");
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), ns);
    (clusters.create(&pp, primary).await).expect("the example DBCluster");
    wait_object(
        &clusters,
        "coffee-aurora",
        "the primary Ready",
        cluster_ready,
    )
    .await;
    clusters
}

fn example<T: serde::de::DeserializeOwned>(file: &str) -> T {
    let path = format!("{}/deploy/examples/{file}", common::REPO);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Coffee Manage Aurora example (its DBCluster, made real-engine, without its groups) as the
/// primary in us-east-1 with a row written through its Secret, and coffee-manage-aurora-global:
/// the GlobalCluster, the secondary DBCluster in eu-west-1 and its instance, all Ready.
struct Global {
    client: kube::Client,
    ns: String,
    instances: Api<DBInstance>,
    clusters: Api<DBCluster>,
    globals: Api<GlobalCluster>,
    operator: Operator,
    /// The RDS identifiers: primary, secondary, global database.
    id: String,
    eu: String,
    gid: String,
    /// The primary's connection Secret.
    us: std::collections::BTreeMap<String, String>,
    /// The secondary's status once Ready.
    made: rds_operator::dbcluster::DBClusterStatus,
}

async fn global_database(prefix: &str) -> Global {
    let (client, ns, instances, _rds) = setup(prefix).await;
    let (id, eu, gid, eu_reader) = (
        unique("gdb-us"),
        unique("gdb-eu"),
        unique("gdb-g"),
        unique("gdb-eur"),
    );
    let (password, mut primary, global, secondary) = examples(&id, &eu, &gid);
    primary.spec.tags.push(Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    let mut reader: DBInstance = example("coffee-manage-aurora-global/reader-eu.yaml");
    reader.spec.db_instance_identifier = Some(eu_reader.clone());

    let operator = Operator::start(&ns);
    let pp = PostParams::default();
    let clusters = primary_ready(&client, &ns, &password, &primary).await;
    let us = secret_data(&client, &ns, "coffee-aurora-connection")
        .await
        .expect("the primary's Secret");
    let sql = "CREATE TABLE suppliers (name VARCHAR(40)); INSERT INTO suppliers VALUES ('Beans');";
    let (ok, out) = mariadb_keys(&us, &us["password"], sql);
    assert!(ok, "a row written through the primary's Secret: {out}");

    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), &ns);
    (globals.create(&pp, &global).await).expect("the example GlobalCluster");
    wait_object(&globals, "coffee-global", "Ready", ready).await;
    (clusters.create(&pp, &secondary).await).expect("the example secondary");
    (instances.create(&pp, &reader).await).expect("the example secondary's instance");
    let made = wait_object(
        &clusters,
        "coffee-aurora-eu",
        "the secondary Ready",
        cluster_ready,
    )
    .await;
    wait_dbi(
        &instances,
        "coffee-aurora-eu-reader",
        "Ready",
        TIMEOUT,
        is_ready,
    )
    .await;
    let made = made.status.expect("a status");
    Global {
        client,
        ns,
        instances,
        clusters,
        globals,
        operator,
        id,
        eu,
        gid,
        us,
        made,
    }
}

/// Deletes them all: each member is detached first (RDS refuses to delete a member), then deleted.
async fn delete_all(g: &Global) {
    let dp = DeleteParams::default();
    (g.instances.delete("coffee-aurora-eu-reader", &dp).await).expect("delete the instance");
    (g.clusters.delete("coffee-aurora-eu", &dp).await).expect("delete the secondary");
    (g.clusters.delete("coffee-aurora", &dp).await).expect("delete the primary");
    (g.globals.delete("coffee-global", &dp).await).expect("delete the GlobalCluster");
    wait_object_gone(&g.clusters, "coffee-aurora-eu").await;
    wait_object_gone(&g.clusters, "coffee-aurora").await;
    wait_object_gone(&g.globals, "coffee-global").await;
    assert_eq!(common::calls(&g.gid, "DeleteGlobalCluster"), 1);
}

/// A DBUser of the secondary: made through the global writer endpoint as the primary's master
/// user, it reaches the secondary by replication and reads there through its own Secret (the
/// global writer and the secondary's reader endpoint, as the secondary's Secret has them); dropped
/// with the object.
async fn secondary_user(g: &Global, cluster_secret: &BTreeMap<String, String>) {
    let users: Api<DBUser> = Api::namespaced(g.client.clone(), &g.ns);
    let user: DBUser = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBUser",
        "metadata": {"name": "eu-reader"},
        "spec": {"dbClusterRef": {"name": "coffee-aurora-eu"},
                 "grants": [{"database": "COFFEE", "preset": "ReadOnly"}],
                 "connectionSecret": {"name": "eu-reader-db"}},
    }))
    .expect("a DBUser");
    (users.create(&PostParams::default(), &user).await).expect("create the DBUser");
    let made = wait_object(&users, "eu-reader", "the secondary's user Ready", |u| {
        object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True")
    })
    .await;
    let database = made.status.and_then(|s| s.database);
    assert_eq!(database.as_deref(), Some(g.eu.as_str()));
    let s = secret_data(&g.client, &g.ns, "eu-reader-db")
        .await
        .expect("the user's Secret");
    assert_eq!(s["host"], cluster_secret["host"], "the global writer");
    assert_eq!(
        s["readerHost"], cluster_secret["readerHost"],
        "the secondary's reader"
    );
    let select = "SELECT name FROM suppliers";
    let (ok, out) = wait_sql(&s, &s["readerHost"], select, "Beans", TEN).await;
    assert!(ok, "the user reads in eu-west-1: {out}");
    let insert = "INSERT INTO suppliers VALUES ('eu-reader')";
    let (ok, out) = mariadb_keys(&s, &s["password"], insert);
    assert!(!ok && out.contains("denied"), "ReadOnly: {out}");
    (users.delete("eu-reader", &DeleteParams::default()).await).expect("delete the DBUser");
    wait_object_gone(&users, "eu-reader").await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT 1");
    assert!(!ok && out.contains("denied"), "dropped: {out}");
}

#[tokio::test]
async fn a_secondary_in_another_region_serves_the_primarys_rows_read_only_and_was_sent_no_password()
{
    let g = global_database("gdbsec").await;
    let Global {
        client,
        ns,
        globals,
        id,
        eu,
        gid,
        us,
        made,
        ..
    } = &g;
    assert_eq!(made.secondary_of.as_deref(), Some(gid.as_str()));
    assert_eq!(
        made.global_cluster_identifier.as_deref(),
        Some(gid.as_str())
    );
    assert_eq!(
        made.common.placement.as_ref().map(|p| p.region.as_str()),
        Some("eu-west-1")
    );
    let gs = wait_object(globals, "coffee-global", "two members", |g| {
        g.status.as_ref().is_some_and(|s| s.members.len() == 2)
    })
    .await
    .status
    .expect("a status");
    let roles: Vec<(&str, &str, &str)> = (gs.members.iter())
        .map(|m| {
            (
                m.db_cluster_identifier.as_str(),
                m.region.as_str(),
                m.role.as_str(),
            )
        })
        .collect();
    assert!(
        roles.contains(&(id.as_str(), "us-east-1", "writer")),
        "{roles:?}"
    );
    assert!(
        roles.contains(&(eu.as_str(), "eu-west-1", "reader")),
        "{roles:?}"
    );

    // No master user, password or database name reached RDS for the secondary.
    let sent = common::call_parameters(eu, "CreateDBCluster");
    assert_eq!(sent.len(), 1, "one CreateDBCluster: {sent:?}");
    assert!(
        sent[0].iter().any(|p| p == "global_cluster_identifier"),
        "{sent:?}"
    );
    for refused in ["master_user_password", "master_username", "database_name"] {
        assert!(
            !sent[0].iter().any(|p| p == refused),
            "{refused} was sent: {sent:?}"
        );
    }

    // Its Secret: the global writer endpoint, its own reader endpoint, the primary's credentials.
    let s = secret_data(client, ns, "coffee-aurora-eu-connection")
        .await
        .expect("the secondary's Secret");
    assert_eq!(
        Some(&s["host"]),
        gs.endpoint.as_ref(),
        "host is the global writer"
    );
    assert_eq!(Some(&s["readerHost"]), made.reader_endpoint.as_ref());
    assert_eq!(s["APP_DB_HOST"], s["host"]);
    assert_eq!(
        (
            s["username"].as_str(),
            s["password"].as_str(),
            s["dbname"].as_str()
        ),
        (us["username"].as_str(), us["password"].as_str(), "COFFEE")
    );
    // The primary's row, read in eu-west-1; a write there is refused as on a read-only secondary.
    let select = "SELECT name FROM suppliers";
    let (ok, out) = wait_sql(&s, &s["readerHost"], select, "Beans", TEN).await;
    assert!(
        ok && out.contains("Beans"),
        "read through the secondary: {out}"
    );
    let insert = "INSERT INTO suppliers VALUES ('in eu')";
    let (ok, out) = wait_sql(&s, &s["readerHost"], insert, "", Duration::ZERO).await;
    assert!(
        !ok && out.contains("read-only"),
        "the secondary refuses writes: {out}"
    );
    // Through the global writer endpoint a write reaches the primary, and comes back to eu.
    let insert = "INSERT INTO suppliers VALUES ('through the global writer')";
    let (ok, out) = mariadb_keys(&s, &s["password"], insert);
    assert!(ok, "a write through the global writer endpoint: {out}");
    let (ok, out) = wait_sql(us, &us["host"], select, "through the global writer", TEN).await;
    assert!(ok, "on the primary: {out}");
    let (ok, out) = wait_sql(
        &s,
        &s["readerHost"],
        select,
        "through the global writer",
        TEN,
    )
    .await;
    assert!(ok, "replicated to the secondary: {out}");
    secondary_user(&g, &s).await;

    // Removing globalClusterRef detaches it (one RemoveFromGlobalCluster): a standalone cluster
    // that takes writes, with a password of its own (generated, sent once) in its Secret, which
    // now names its own writer endpoint.
    let detach = json!({"spec": {"globalClusterRef": null}});
    (g.clusters.patch(
        "coffee-aurora-eu",
        &PatchParams::default(),
        &Patch::Merge(&detach),
    ))
    .await
    .expect("remove globalClusterRef");
    let alone = wait_object(&g.clusters, "coffee-aurora-eu", "detached", |c| {
        cluster_ready(c)
            && c.status
                .as_ref()
                .unwrap()
                .global_cluster_identifier
                .is_none()
    })
    .await;
    assert_eq!(common::calls(eu, "RemoveFromGlobalCluster"), 1);
    let own = (alone.status.and_then(|s| s.common.endpoint))
        .expect("its endpoint")
        .address;
    let detached = common::wait_for("its own Secret", Duration::from_secs(60), || {
        let (client, ns, own) = (client.clone(), ns.clone(), own.clone());
        async move {
            let s = secret_data(&client, &ns, "coffee-aurora-eu-connection").await?;
            (s["host"] == own).then_some(s)
        }
    })
    .await;
    assert_ne!(
        detached["password"], us["password"],
        "a password of its own"
    );
    let insert = "INSERT INTO suppliers VALUES ('standalone in eu')";
    let (ok, out) = wait_sql(&detached, &own, insert, "", TEN).await;
    assert!(
        ok,
        "the detached cluster takes writes with its own password: {out}"
    );
    let (ok, out) = wait_sql(&detached, &own, select, "through the global writer", TEN).await;
    assert!(ok, "and keeps the global database's rows: {out}");

    delete_all(&g).await;
    assert_eq!(
        common::calls(eu, "RemoveFromGlobalCluster"),
        1,
        "detached once"
    );
    assert_eq!(common::calls(eu, "DeleteDBCluster"), 1);
    // The primary, the last member, is detached before its deletion.
    assert_eq!(common::calls(id, "RemoveFromGlobalCluster"), 1);
}

/// The writer of a GlobalCluster's members, as its status reports it.
fn writer(g: &GlobalCluster) -> Option<String> {
    g.status.as_ref().and_then(|s| s.writer.clone())
}

#[tokio::test]
async fn a_switchover_makes_eu_west_1_the_writer_once_through_a_sigkill_and_a_failover_is_approved()
{
    let mut g = global_database("gdbsw").await;
    let (gid, id, eu) = (g.gid.clone(), g.id.clone(), g.eu.clone());
    let before = (g.globals.get("coffee-global").await).expect("the GlobalCluster");
    let endpoint = before
        .status
        .and_then(|s| s.endpoint)
        .expect("the global writer endpoint");
    let s = secret_data(&g.client, &g.ns, "coffee-aurora-eu-connection")
        .await
        .expect("the secondary's Secret");

    // switchoverTo the secondary; the operator is killed the moment RDS has the call. A client
    // writes every 0.3 s through the global writer endpoint all along.
    let writes = common::Writer::start(&s, Duration::from_millis(300));
    writes.keep_writing(10).await;
    let switch = json!({"spec": {"switchoverTo": {"name": "coffee-aurora-eu"}}});
    let pp = PatchParams::default();
    (g.globals
        .patch("coffee-global", &pp, &Patch::Merge(&switch)))
    .await
    .expect("switchoverTo");
    common::wait_for("SwitchoverGlobalCluster", Duration::from_secs(60), || {
        let gid = gid.clone();
        async move { (common::calls(&gid, "SwitchoverGlobalCluster") >= 1).then_some(()) }
    })
    .await;
    g.operator.kill();
    g.operator = Operator::start(&g.ns);
    let done = wait_object(&g.globals, "coffee-global", "eu-west-1 the writer", |o| {
        ready(o) && writer(o).as_deref() == Some(eu.as_str())
    })
    .await;
    assert_eq!(
        common::calls(&gid, "SwitchoverGlobalCluster"),
        1,
        "sent once"
    );
    let status = done.status.expect("a status");
    let change = status.role_change.expect("the switchover recorded");
    assert!(
        change.completed && change.db_cluster_identifier == eu,
        "{change:?}"
    );
    assert_eq!(
        status.endpoint.as_deref(),
        Some(endpoint.as_str()),
        "the same endpoint"
    );
    let roles: Vec<(&str, &str)> = (status.members.iter())
        .map(|m| (m.region.as_str(), m.role.as_str()))
        .collect();
    assert!(roles.contains(&("eu-west-1", "writer")), "{roles:?}");
    assert!(roles.contains(&("us-east-1", "reader")), "{roles:?}");

    // The row is still there, and a write through the global writer endpoint works after it,
    // landing in eu-west-1 (its cluster endpoint, the writer now) and replicated to us-east-1,
    // which no longer takes writes.
    let select = "SELECT name FROM suppliers";
    let (ok, out) = wait_sql(&s, &s["host"], select, "Beans", TEN).await;
    assert!(
        ok && out.contains("Beans"),
        "the row after the switchover: {out}"
    );
    let insert = "INSERT INTO suppliers VALUES ('after the switchover')";
    let (ok, out) = mariadb_keys(&s, &s["password"], insert);
    assert!(ok, "a write through the global writer endpoint: {out}");
    let eu_cluster = (g.clusters.get("coffee-aurora-eu").await).expect("the secondary");
    let eu_writer = (eu_cluster.status.and_then(|s| s.common.endpoint)).expect("its endpoint");
    let (ok, out) = wait_sql(&s, &eu_writer.address, select, "after the switchover", TEN).await;
    assert!(ok, "written in eu-west-1: {out}");
    let (ok, out) = wait_sql(&g.us, &g.us["host"], select, "after the switchover", TEN).await;
    assert!(ok, "replicated to us-east-1: {out}");
    let (ok, out) = wait_sql(&g.us, &g.us["host"], insert, "", Duration::ZERO).await;
    assert!(
        !ok && out.contains("read-only"),
        "us-east-1 is a secondary now: {out}"
    );
    // Every row the client was told was written is in eu-west-1, the writer now.
    writes.keep_writing(12).await;
    common::no_acknowledged_row_lost(writes, &s, "global switchover");
    // The secondary's Secret still names the global writer endpoint.
    let after = secret_data(&g.client, &g.ns, "coffee-aurora-eu-connection").await;
    assert_eq!(after.as_ref().map(|a| &a["host"]), Some(&endpoint));

    // A failover back without allowDataLoss is refused at apply.
    for failover in [
        json!({"name": "coffee-aurora"}),
        json!({"name": "coffee-aurora", "allowDataLoss": false}),
    ] {
        let patch = json!({"spec": {"switchoverTo": null, "failoverTo": failover}});
        let err = (g
            .globals
            .patch("coffee-global", &pp, &Patch::Merge(&patch))
            .await)
            .expect_err("a failover without allowDataLoss");
        assert!(err.to_string().contains("allowDataLoss"), "{err}");
    }
    // With it, it waits for approval (the primary's region answers), then is sent once.
    let patch = json!({"spec": {"switchoverTo": null,
                                "failoverTo": {"name": "coffee-aurora", "allowDataLoss": true}}});
    (g.globals.patch("coffee-global", &pp, &Patch::Merge(&patch)))
        .await
        .expect("failoverTo with allowDataLoss");
    wait_object(&g.globals, "coffee-global", "awaiting approval", |o| {
        synced_reason(o) == "FailoverAwaitingApproval"
    })
    .await;
    assert_eq!(common::calls(&gid, "FailoverGlobalCluster"), 0);
    let approve = json!({"metadata": {"annotations": {
        rds_operator::globalcluster::FAILOVER_ANNOTATION: "coffee-aurora"}}});
    (g.globals
        .patch("coffee-global", &pp, &Patch::Merge(&approve)))
    .await
    .expect("approve");
    wait_object(
        &g.globals,
        "coffee-global",
        "us-east-1 the writer again",
        |o| ready(o) && writer(o).as_deref() == Some(id.as_str()),
    )
    .await;
    let once = || async { common::calls(&gid, "FailoverGlobalCluster") == 1 };
    common::holds_over_passes(
        &g.operator,
        ("GlobalCluster", "coffee-global"),
        "sent once",
        once,
    )
    .await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "INSERT INTO suppliers VALUES ('back')");
    assert!(
        ok,
        "a write through the global writer endpoint after the failover: {out}"
    );
    // Deleted, each member is detached first (RDS refuses to delete a member), then deleted.
    delete_all(&g).await;
    assert_eq!(common::calls(&eu, "RemoveFromGlobalCluster"), 1);
    assert_eq!(common::calls(&id, "RemoveFromGlobalCluster"), 1);
}
