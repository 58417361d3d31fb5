//! Real databases behind the emulator: the connection Secret connects. The instances carry the tag
//! `moto-ext:real-engine=true`, so moto_ext backs them with a real MariaDB or PostgreSQL server on a
//! loopback address of their own; the tests log in with the engines' own clients (`mariadb`,
//! `psql`), using only what the Secret holds.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::common::{self, Operator, dbinstance, is_ready, setup, unique, wait_dbi, wait_for};

const TIMEOUT: Duration = Duration::from_secs(120);

pub(crate) fn real(extra: serde_json::Value) -> serde_json::Value {
    let mut spec = json!({
        "tags": [
            {"key": "app", "value": "coffee-manage"},
            {"key": "moto-ext:real-engine", "value": "true"}
        ],
        "connectionSecret": {
            "name": "db-connection",
            "extraKeys": {
                "APP_DB_HOST": "{{ host }}",
                "APP_DB_USER": "{{ username }}",
                "APP_DB_PASSWORD": "{{ password }}",
                "APP_DB_NAME": "{{ dbname }}"
            }
        }
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    spec
}

pub(crate) use crate::common::{mariadb, mariadb_keys, run_client as run};

/// Runs SQL with Node's mysql2, the Coffee Manage app's own driver, on a `mysql://` URI (installed
/// by tests/env/clients.sh); (succeeded, rows as JSON or the error).
pub(crate) fn mysql2(uri: &str, sql: &str) -> (bool, String) {
    let script = format!("{}/tests/env/node/query.js", common::REPO);
    run(
        Command::new("node").args([script.as_str(), uri, sql]),
        "node",
    )
}

/// Runs SQL with `psql` on a connection string; (succeeded, output).
pub(crate) fn psql(conninfo: &str, sql: &str) -> (bool, String) {
    let args = [conninfo, "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql];
    run(
        Command::new("psql").args(args),
        "psql (Debian postgresql-client)",
    )
}

pub(crate) const SUPPLIERS: &str = "CREATE TABLE suppliers (id INT PRIMARY KEY, name VARCHAR(100), address VARCHAR(200), \
     city VARCHAR(100), state VARCHAR(50), email VARCHAR(100), phone VARCHAR(30)); \
     INSERT INTO suppliers VALUES (1, 'Coffee Beans Ltd', '1 Bean St', 'Seattle', 'WA', 'beans@example.com', '555-0100');";

async fn connection_secret(
    client: &kube::Client,
    ns: &str,
    until: impl Fn(&BTreeMap<String, String>) -> bool,
) -> BTreeMap<String, String> {
    wait_for("the connection Secret", TIMEOUT, || async {
        common::secret_data(client, ns, "db-connection")
            .await
            .filter(|d| until(d))
    })
    .await
}

/// A namespace, an operator, and the DBInstance `db` (built by `make` from a new identifier) Ready
/// on a real server, with its connection Secret written. Bind `_operator` when taking it apart:
/// dropped, it kills the operator.
pub(crate) struct Real {
    pub client: kube::Client,
    pub ns: String,
    pub api: Api<rds_operator::dbinstance::DBInstance>,
    pub rds: aws_sdk_rds::Client,
    pub secret: BTreeMap<String, String>,
    pub _operator: Operator,
}

async fn ready_real(
    prefix: &str,
    make: impl FnOnce(&str) -> rds_operator::dbinstance::DBInstance,
) -> Real {
    ready_real_with(prefix, &[], make).await
}

/// The same, with the operator given `operator_args` too.
pub(crate) async fn ready_real_with(
    prefix: &str,
    operator_args: &[&str],
    make: impl FnOnce(&str) -> rds_operator::dbinstance::DBInstance,
) -> Real {
    let (client, ns, api, rds) = setup(prefix).await;
    let operator = Operator::start_with(&ns, operator_args);
    let id = unique(prefix);
    api.create(&PostParams::default(), &make(&id))
        .await
        .expect("create");
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let secret = connection_secret(&client, &ns, |_| true).await;
    Real {
        client,
        ns,
        api,
        rds,
        secret,
        _operator: operator,
    }
}

#[tokio::test]
async fn the_mysql_connection_secret_connects_and_follows_rotation_and_port() {
    let Real {
        client,
        ns,
        api,
        secret: s,
        _operator,
        ..
    } = ready_real("realmysql", |id| dbinstance("db", id, real(json!({})))).await;

    // The standard keys: create the Coffee Manage table, write a row, read it back.
    let (ok, out) = mariadb_keys(&s, &s["password"], SUPPLIERS);
    assert!(ok, "{out}");
    let (ok, out) = mariadb_keys(
        &s,
        &s["password"],
        "SELECT name, city FROM suppliers WHERE id = 1",
    );
    assert!(ok && out.contains("Coffee Beans Ltd\tSeattle"), "{out}");
    // The uri key alone, with the app's own driver.
    let (ok, out) = mysql2(&s["uri"], "SELECT name FROM suppliers WHERE id = 1");
    assert!(ok && out.contains("Coffee Beans Ltd"), "{out}");
    // As the Coffee Manage app does: the four APP_DB_* variables, no port.
    let (ok, out) = mariadb(
        &s["APP_DB_HOST"],
        None,
        &s["APP_DB_USER"],
        &s["APP_DB_PASSWORD"],
        &s["APP_DB_NAME"],
        "SELECT COUNT(*) FROM suppliers",
    );
    assert!(ok && out.trim() == "1", "{out}");

    // Rotation: the new password logs in, the old one is refused, the Secret holds the new one.
    let old = s["password"].clone();
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), &ns);
    secrets
        .patch(
            "db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "Rotated-Passw0rd-2026"}})),
        )
        .await
        .expect("rotate");
    let s = connection_secret(&client, &ns, |d| d["password"] == "Rotated-Passw0rd-2026").await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT 1");
    assert!(ok, "the new password logs in: {out}");
    let (ok, out) = mariadb_keys(&s, &old, "SELECT 1");
    assert!(
        !ok && out.contains("Access denied"),
        "the old one is refused: {out}"
    );

    // Port change: the Secret's port connects, and the data is still there.
    api.patch(
        "db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"port": 3307}})),
    )
    .await
    .expect("port");
    let s = connection_secret(&client, &ns, |d| d["port"] == "3307").await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT COUNT(*) FROM suppliers");
    assert!(ok && out.trim() == "1", "{out}");
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn the_postgres_connection_secret_connects_by_keys_and_by_uri() {
    let spec = real(json!({"engine": "postgres", "engineVersion": "16.3"}));
    let Real {
        api,
        secret: s,
        _operator,
        ..
    } = ready_real("realpg", |id| dbinstance("db", id, spec)).await;
    assert_eq!(s["port"], "5432");
    let keys = format!(
        "host={} port={} user={} password={} dbname={}",
        s["host"], s["port"], s["username"], s["password"], s["dbname"]
    );
    let (ok, out) = psql(&keys, SUPPLIERS);
    assert!(ok, "{out}");
    // The uri key alone.
    let (ok, out) = psql(&s["uri"], "SELECT name FROM suppliers WHERE id = 1");
    assert!(ok && out.trim() == "Coffee Beans Ltd", "{out}");
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_wrong_password_is_refused_by_the_real_server() {
    // The test can fail: a server that accepted any password would fail it.
    let Real {
        api,
        secret: s,
        _operator,
        ..
    } = ready_real("realpw", |id| dbinstance("db", id, real(json!({})))).await;
    let (ok, out) = mariadb_keys(&s, "not-the-password", "SELECT 1");
    assert!(!ok && out.contains("Access denied"), "{out}");
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn an_rds_managed_password_in_the_connection_secret_logs_in() {
    let Real {
        api,
        secret: s,
        _operator,
        ..
    } = ready_real("realmanaged", |id| {
        let mut db = dbinstance("db", id, real(json!({"manageMasterUserPassword": true})));
        db.spec.password.master_user_password = None;
        db
    })
    .await;
    let (ok, out) = mariadb_keys(&s, &s["password"], "SELECT 1");
    assert!(
        ok,
        "the password RDS keeps in Secrets Manager is the server's: {out}"
    );
    common::delete_and_wait(&api, "db").await;
}

#[tokio::test]
async fn a_row_written_before_deletion_is_there_after_restoring_the_final_snapshot() {
    let mut id = String::new();
    let Real {
        client,
        ns,
        api,
        rds,
        secret: s,
        _operator,
    } = ready_real("realsnap", |new| {
        id = new.to_owned();
        dbinstance("db", new, real(json!({})))
    })
    .await;
    let (ok, out) = mariadb_keys(&s, &s["password"], SUPPLIERS);
    assert!(ok, "{out}");
    // The default deletion policy leaves a final snapshot.
    common::delete_and_wait(&api, "db").await;
    let snapshots = (rds.describe_db_snapshots())
        .db_instance_identifier(&id)
        .snapshot_type("manual")
        .send()
        .await
        .expect("DescribeDBSnapshots");
    let snapshot = snapshots.db_snapshots()[0]
        .db_snapshot_identifier()
        .unwrap()
        .to_owned();
    // The way back: a new DBInstance restored from that snapshot (spec.restoreFrom), with a
    // password of its own, which the follow-up ModifyDBInstance sends.
    common::secret(
        &client,
        &ns,
        "restored-password",
        "password",
        "An0ther-Passw0rd-2026",
    )
    .await;
    let restored = unique("restored");
    let spec = real(json!({
        "restoreFrom": {"dbSnapshotIdentifier": snapshot},
        "masterUserPassword": {"name": "restored-password", "key": "password"},
        "deletionPolicy": "Delete",
    }));
    api.create(
        &PostParams::default(),
        &dbinstance("restored", &restored, spec),
    )
    .await
    .expect("create the restored DBInstance");
    wait_dbi(&api, "restored", "restored and in sync", TIMEOUT, |db| {
        is_ready(db) && common::synced_reason(db) == "Synced"
    })
    .await;
    let r = connection_secret(&client, &ns, |d| {
        d.get("password").map(String::as_str) == Some("An0ther-Passw0rd-2026")
    })
    .await;
    let (ok, out) = mariadb(
        &r["APP_DB_HOST"],
        None,
        &r["APP_DB_USER"],
        &r["APP_DB_PASSWORD"],
        &r["APP_DB_NAME"],
        "SELECT name FROM suppliers WHERE id = 1",
    );
    assert!(
        ok && out.trim() == "Coffee Beans Ltd",
        "the row survived, and the spec's password logs in: {out}"
    );
    // The snapshot's own password no longer does.
    let (ok, _) = mariadb_keys(&r, &s["password"], "SELECT 1");
    assert!(!ok, "the source's password was replaced");
    common::delete_and_wait(&api, "restored").await;
}
