//! DBUser: users inside the database of a DBInstance, logged in to through their connection
//! Secrets only, on the emulator's real MariaDB and PostgreSQL.

use std::collections::BTreeMap;

use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbuser::DBUser;
use serde_json::json;

use crate::common::{self, *};
use crate::engines::psql;

pub(crate) const MASTER_PASSWORD: &str = "Sup3r-Secret-Passw0rd";

/// The instance runs on one of the emulator's real MariaDB servers.
pub(crate) fn real() -> serde_json::Value {
    json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]})
}

pub(crate) fn dbuser(name: &str, spec: serde_json::Value) -> DBUser {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBUser",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("a valid DBUser")
}

/// A user of the database `db` with a preset on COFFEE and a connection Secret `<name>-db`.
pub(crate) fn user_of(name: &str, preset: &str, extra: serde_json::Value) -> DBUser {
    let mut spec = json!({
        "dbInstanceRef": {"name": "db"},
        "grants": [{"database": "COFFEE", "preset": preset}],
        "connectionSecret": {"name": format!("{name}-db")},
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    dbuser(name, spec)
}

/// Runs SQL as the database's master user.
pub(crate) fn as_master(db: &DBInstance, sql: &str) -> (bool, String) {
    let endpoint = (db.status.as_ref())
        .and_then(|s| s.common.endpoint.clone())
        .expect("the instance's endpoint");
    let port = endpoint.port.to_string();
    mariadb(
        &endpoint.address,
        Some(&port),
        "admin",
        MASTER_PASSWORD,
        "COFFEE",
        sql,
    )
}

/// Runs SQL as the user whose connection Secret is `secret`, with the Secret's password.
pub(crate) fn as_user(secret: &BTreeMap<String, String>, sql: &str) -> (bool, String) {
    mariadb_keys(secret, &secret["password"], sql)
}

/// Deletes a DBUser and waits until it is gone.
pub(crate) async fn delete_user(api: &Api<DBUser>, name: &str) {
    api.delete(name, &kube::api::DeleteParams::default())
        .await
        .expect("delete DBUser");
    wait_object_gone(api, name).await;
}

pub(crate) async fn ready_user(api: &Api<DBUser>, name: &str) -> DBUser {
    wait_object(api, name, &format!("DBUser {name} Ready"), |u| {
        object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True")
            && object_condition(u, "Synced").is_some_and(|(s, _, _)| s == "True")
    })
    .await
}

#[tokio::test]
async fn a_read_only_user_cannot_write_a_read_write_one_can_and_a_grant_added_by_hand_is_revoked() {
    let (client, ns, api, _rds) = setup("users").await;
    let id = common::unique("users");
    let _operator = Operator::start(&ns);
    api.create(&PostParams::default(), &dbinstance("db", &id, real()))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let (made, out) = as_master(
        &db,
        "CREATE TABLE suppliers (id INT PRIMARY KEY, name VARCHAR(40))",
    );
    assert!(made, "{out}");
    secret(
        &client,
        &ns,
        "writer-password",
        "password",
        "Wr1ter's \\ pass",
    )
    .await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    for user in [
        user_of("reader", "ReadOnly", json!({})),
        // A password of the user's own choosing, with a quote and a backslash in it.
        user_of(
            "writer",
            "ReadWrite",
            json!({"passwordSecretRef": {"name": "writer-password", "key": "password"}}),
        ),
    ] {
        users
            .create(&PostParams::default(), &user)
            .await
            .expect("create DBUser");
    }
    ready_user(&users, "reader").await;
    ready_user(&users, "writer").await;
    let reader = secret_data(&client, &ns, "reader-db")
        .await
        .expect("reader's Secret");
    let writer = secret_data(&client, &ns, "writer-db")
        .await
        .expect("writer's Secret");
    assert_eq!(reader["username"], "reader");
    assert_ne!(reader["password"], MASTER_PASSWORD, "a password of its own");
    assert_eq!(
        writer["password"], "Wr1ter's \\ pass",
        "the one its Secret names"
    );
    let (wrote, out) = as_user(&writer, "INSERT INTO suppliers VALUES (1, 'Beans')");
    assert!(wrote, "the read-write user writes: {out}");
    let (read, out) = as_user(&reader, "SELECT name FROM suppliers");
    assert!(
        read && out.contains("Beans"),
        "the read-only user reads: {out}"
    );
    let (wrote, out) = as_user(&reader, "INSERT INTO suppliers VALUES (2, 'Milk')");
    assert!(
        !wrote && out.contains("denied"),
        "the read-only user cannot write: {out}"
    );
    // A grant added by hand is reported and revoked.
    let (granted, out) = as_master(&db, "GRANT INSERT ON COFFEE.* TO reader@'%'");
    assert!(granted, "{out}");
    let drifted = wait_object(&users, "reader", "the hand grant reported", |u| {
        (u.status.as_ref()).is_some_and(|s| {
            s.last_drift
                .as_deref()
                .is_some_and(|d| d.contains("INSERT on COFFEE"))
        })
    })
    .await;
    assert!(
        !drifted
            .status
            .unwrap()
            .grants
            .iter()
            .any(|g| g.starts_with("INSERT")),
        "status lists what the user holds once it was revoked"
    );
    assert!(
        event_reasons(&client, &ns, "reader")
            .await
            .contains(&"GrantDrift".to_owned())
    );
    let (wrote, out) = as_user(&reader, "INSERT INTO suppliers VALUES (3, 'Sugar')");
    assert!(!wrote && out.contains("denied"), "revoked: {out}");
    // A new password in the user's Secret is set on the user, and its connection Secret follows.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), &ns);
    let rotated = json!({"stringData": {"password": "N3w-writer-pass"}});
    (secrets.patch(
        "writer-password",
        &Default::default(),
        &kube::api::Patch::Merge(&rotated),
    ))
    .await
    .expect("rotate the writer's password");
    let writer = wait_for("the rotated password in writer-db", TIMEOUT, || async {
        let data = secret_data(&client, &ns, "writer-db").await?;
        (data["password"] == "N3w-writer-pass").then_some(data)
    })
    .await;
    let (read, out) = as_user(&writer, "SELECT COUNT(*) FROM suppliers");
    assert!(read, "the new password logs in: {out}");
    // Deleting a DBUser drops its user; Retain keeps it, and its login.
    let retain = json!({"spec": {"deletionPolicy": "Retain"}});
    let patch = kube::api::Patch::Merge(&retain);
    (users.patch("writer", &kube::api::PatchParams::default(), &patch))
        .await
        .expect("patch DBUser");
    wait_object(&users, "writer", "Retain seen", |u| {
        u.metadata.generation
            == u.status
                .as_ref()
                .and_then(|s| s.reported.observed_generation)
    })
    .await;
    delete_user(&users, "reader").await;
    delete_user(&users, "writer").await;
    let (_, out) = as_master(
        &db,
        "SELECT User FROM mysql.user WHERE User IN ('reader', 'writer')",
    );
    assert_eq!(out.trim(), "writer", "reader dropped, writer kept");
    let (read, out) = as_user(&writer, "SELECT COUNT(*) FROM suppliers");
    assert!(read, "the kept user still logs in: {out}");
    assert!(
        secret_data(&client, &ns, "writer-db").await.is_some(),
        "and its Secret is kept with it"
    );
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_dbuser_reaches_only_a_database_of_its_own_namespace() {
    let (client, ns, api, _rds) = setup("userns").await;
    let id = common::unique("userns");
    let other = common::namespace(&client, "userns-other").await;
    let _operator = Operator::start_with(&ns, &["--namespace", &other]);
    api.create(&PostParams::default(), &dbinstance("db", &id, real()))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &other);
    // Naming the other namespace is not in the schema: the API server refuses it at apply.
    let mut foreign = user_of("intruder", "ReadWrite", json!({}));
    let mut value = serde_json::to_value(&foreign).unwrap();
    value["spec"]["dbInstanceRef"]["namespace"] = json!(ns);
    // As `kubectl apply --server-side` sends it (kubectl validates strictly by default).
    let strict = kube::api::PatchParams::apply("kubectl").validation_strict();
    let raw: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        &other,
        &kube::api::ApiResource::erase::<DBUser>(&()),
    );
    let dynamic: kube::api::DynamicObject = serde_json::from_value(value).unwrap();
    let error = raw
        .patch("intruder", &strict, &kube::api::Patch::Apply(&dynamic))
        .await
        .expect_err("refused at apply");
    assert!(error.to_string().contains("namespace"), "{error}");
    // By name only, it finds no database there, and makes no login: the user never appears.
    foreign.metadata.name = Some("intruder".into());
    users
        .create(&PostParams::default(), &foreign)
        .await
        .expect("create DBUser");
    let waiting = wait_object(&users, "intruder", "the database reported missing", |u| {
        object_condition(u, "Synced").is_some_and(|(_, reason, message)| {
            reason == "DatabaseNotReady" && message.contains("does not exist")
        })
    })
    .await;
    assert!(waiting.status.unwrap().owner.is_none());
    let (_, out) = as_master(
        &db,
        "SELECT COUNT(*) FROM mysql.user WHERE User = 'intruder'",
    );
    assert_eq!(out.trim(), "0");
    delete_user(&users, "intruder").await;
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_user_of_an_aurora_cluster_is_made_through_its_writer_and_reaches_it() {
    use crate::clusters::{cluster, member, ready as cluster_ready};
    use rds_operator::dbcluster::DBCluster;
    let (client, ns, instances, _rds) = setup("auser").await;
    let _operator = Operator::start(&ns);
    let pp = PostParams::default();
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    (clusters
        .create(&pp, &cluster(&common::unique("auser-c"), real()))
        .await)
        .expect("the DBCluster");
    wait_object(&clusters, "coffee", "the cluster Ready", cluster_ready).await;
    let writer = member("writer", &common::unique("auser-w"), json!({}));
    (instances.create(&pp, &writer).await).expect("the writer");
    wait_dbi(&instances, "writer", "Ready", TIMEOUT, is_ready).await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let user = dbuser(
        "app",
        json!({
            "dbClusterRef": {"name": "coffee"},
            "grants": [{"database": "COFFEE", "privileges": ["SELECT", "INSERT", "CREATE"]}],
            "connectionSecret": {"name": "app-db"},
        }),
    );
    (users.create(&pp, &user).await).expect("the DBUser");
    ready_user(&users, "app").await;
    let app = secret_data(&client, &ns, "app-db")
        .await
        .expect("its Secret");
    let cluster_secret = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the cluster's Secret");
    assert_eq!(
        app["host"], cluster_secret["host"],
        "the cluster's writer endpoint"
    );
    let (made, out) = as_user(&app, "CREATE TABLE orders (id INT PRIMARY KEY)");
    assert!(made, "the user writes through the writer: {out}");
    let (wrote, out) = as_user(&app, "INSERT INTO orders VALUES (1)");
    assert!(wrote, "{out}");
    let (dropped, out) = as_user(&app, "DROP TABLE orders");
    assert!(
        !dropped && out.contains("denied"),
        "no DROP was granted: {out}"
    );
    delete_user(&users, "app").await;
    let (found, out) = mariadb_keys(
        &cluster_secret,
        &cluster_secret["password"],
        "SELECT COUNT(*) FROM mysql.user WHERE User = 'app'",
    );
    assert!(found && out.trim() == "0", "dropped: {out}");
}

/// A psql connection string for the Secret's keys (and `password`).
fn pg_keys(s: &BTreeMap<String, String>, password: &str) -> String {
    format!(
        "host={} port={} user={} password={password} dbname={} sslmode=require",
        s["host"], s["port"], s["username"], s["dbname"]
    )
}

#[tokio::test]
async fn a_postgresql_user_has_its_grants_an_iam_one_logs_in_with_its_token_and_both_are_dropped() {
    assert!(moto_ext_post("/_rds_ext/config?iam_token_life=20"));
    let (client, ns, api, _rds) = setup("pgusers").await;
    let id = common::unique("pgusers");
    // The operator verifies the server against the test bed's CA bundle.
    let (_, ca) = crate::tls::ca_file("ca-pgusers");
    let args = [
        "--iam-token-refresh",
        "10s",
        "--ca-bundle",
        ca.to_str().unwrap(),
    ];
    let _operator = Operator::start_with(&ns, &args);
    let spec = json!({"engine": "postgres", "engineVersion": "16.3",
                      "enableIAMDatabaseAuthentication": true,
                      "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let endpoint = (db.status.as_ref())
        .and_then(|s| s.common.endpoint.clone())
        .expect("the endpoint");
    let master = format!(
        "host={} port={} user=admin password={MASTER_PASSWORD} dbname=COFFEE sslmode=require",
        endpoint.address, endpoint.port
    );
    let (made, out) = psql(
        &master,
        "CREATE TABLE suppliers (id INT PRIMARY KEY, name TEXT); INSERT INTO suppliers VALUES (1, 'Beans')",
    );
    assert!(made, "{out}");
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    for user in [
        user_of("reader", "ReadOnly", json!({})),
        user_of("writer", "ReadWrite", json!({"auth": "IAM"})),
    ] {
        (users.create(&PostParams::default(), &user).await).expect("create DBUser");
    }
    ready_user(&users, "reader").await;
    ready_user(&users, "writer").await;
    let reader = secret_data(&client, &ns, "reader-db")
        .await
        .expect("reader-db");
    let writer = secret_data(&client, &ns, "writer-db")
        .await
        .expect("writer-db");
    let (read, out) = psql(
        &pg_keys(&reader, &reader["password"]),
        "SELECT name FROM suppliers",
    );
    assert!(read && out.contains("Beans"), "the reader reads: {out}");
    let (wrote, out) = psql(
        &pg_keys(&reader, &reader["password"]),
        "INSERT INTO suppliers VALUES (2, 'Milk')",
    );
    assert!(
        !wrote && out.contains("permission denied"),
        "the reader cannot write: {out}"
    );
    assert!(
        writer["password"].contains("Action=connect&DBUser=writer&"),
        "a token"
    );
    let (wrote, out) = psql(
        &pg_keys(&writer, &writer["password"]),
        "INSERT INTO suppliers VALUES (3, 'Sugar')",
    );
    assert!(
        wrote,
        "the IAM writer writes with its Secret's token: {out}"
    );
    // A table the master user makes later is the reader's to read (default privileges).
    let (made, out) = psql(
        &master,
        "CREATE TABLE beans (name TEXT); INSERT INTO beans VALUES ('arabica')",
    );
    assert!(made, "{out}");
    let (read, out) = psql(
        &pg_keys(&reader, &reader["password"]),
        "SELECT name FROM beans",
    );
    assert!(read && out.contains("arabica"), "a later table: {out}");
    // A grant added by hand is reported and revoked.
    let (granted, out) = psql(&master, "GRANT DELETE ON suppliers TO reader");
    assert!(granted, "{out}");
    wait_object(&users, "reader", "the hand grant reported", |u| {
        (u.status.as_ref())
            .and_then(|s| s.last_drift.as_deref())
            .is_some_and(|d| d.contains("DELETE on COFFEE"))
    })
    .await;
    let reverted = common::wait_for("the hand grant revoked", TIMEOUT, || async {
        let (deleted, out) = psql(
            &pg_keys(&reader, &reader["password"]),
            "DELETE FROM suppliers WHERE id = 3",
        );
        (!deleted && out.contains("permission denied")).then_some(out)
    })
    .await;
    assert!(reverted.contains("permission denied"));
    // Deleted: both roles are dropped, and the rows stay.
    delete_user(&users, "reader").await;
    delete_user(&users, "writer").await;
    let (_, out) = psql(
        &master,
        "SELECT count(*) FROM pg_roles WHERE rolname IN ('reader', 'writer')",
    );
    assert_eq!(out.trim(), "0", "dropped: {out}");
    let (_, out) = psql(&master, "SELECT count(*) FROM suppliers");
    assert_eq!(out.trim(), "2", "{out}");
}
