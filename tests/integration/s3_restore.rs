//! A DBInstance restored from a backup in S3 (spec.restoreFrom.s3, RestoreDBInstanceFromS3), on
//! the emulator's real MariaDB (moto_ext/s3_import.py takes a SQL dump, not RDS's Percona
//! XtraBackup): the backup's row is in the new instance, read through its connection Secret, and
//! the instance is Ready with the spec's settings. An ingestion role that is not the namespace's
//! (another namespace's IAM path) is refused before any call reaches RDS.

use kube::api::PostParams;
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{self, *};
use crate::connection::coffee_connection;
use crate::users::{as_master, real};

const BACKUP: &str = "CREATE DATABASE IF NOT EXISTS COFFEE;\nUSE COFFEE;\n\
    CREATE TABLE suppliers (id INT PRIMARY KEY, name VARCHAR(40));\n\
    INSERT INTO suppliers VALUES (1, 'Beans from the backup');\n";

/// A Coffee Manage DBInstance on a real server, restored from the backup under s3://bucket/coffee/.
fn restored(name: &str, identifier: &str, bucket: &str, role: &str) -> DBInstance {
    let mut spec = real();
    spec["restoreFrom"] = json!({"s3": {
        "bucket": bucket, "prefix": "coffee/", "ingestionRole": role,
        "sourceEngine": "mysql", "sourceEngineVersion": "8.0.42"}});
    spec["deletionPolicy"] = json!("Delete");
    spec["connectionSecret"] = coffee_connection();
    spec["connectionSecret"]["name"] = json!(format!("{name}-connection"));
    dbinstance(name, identifier, spec)
}

#[tokio::test]
async fn a_restore_from_s3_has_the_backups_rows_and_a_role_of_another_namespace_is_refused() {
    let (client, ns, api, _rds) = setup("s3import").await;
    let _operator = Operator::start(&ns);
    let bucket = unique("backups");
    common::create_bucket(&bucket);
    common::put_object(&bucket, "coffee/2026-12-06/backup.sql", BACKUP);
    let account = "123456789012";
    let own = common::create_role_at(
        account,
        &format!("/rds-operator/{ns}/"),
        &unique("import"),
        None,
    );
    let theirs = common::create_role_at(account, "/rds-operator/team-b/", &unique("import"), None);

    let (refused_id, id) = (unique("s3no"), unique("s3db"));
    let pp = PostParams::default();
    (api.create(&pp, &restored("refused", &refused_id, &bucket, &theirs))
        .await)
        .expect("create the DBInstance naming another namespace's role");
    (api.create(&pp, &restored("db", &id, &bucket, &own)).await)
        .expect("create the DBInstance naming its own role");

    let refused = wait_dbi(&api, "refused", "RoleNotGranted", TIMEOUT, |db| {
        synced_reason(db) == "RoleNotGranted"
    })
    .await;
    let message = common::condition(&refused, "Synced").unwrap().2;
    assert!(
        message.contains(&format!("/rds-operator/{ns}/")),
        "{message}"
    );
    assert!(
        event_reasons(&client, &ns, "refused")
            .await
            .contains(&"RoleNotGranted".to_owned())
    );

    let db = wait_dbi(&api, "db", "restored from S3 and Ready", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let (read, out) = as_master(&db, "SELECT name FROM suppliers WHERE id = 1");
    assert!(read && out.contains("Beans from the backup"), "{out}");
    let source = db.status.as_ref().and_then(|s| s.restore.clone());
    assert_eq!(
        source.map(|r| r.source),
        Some(format!("s3://{bucket}/coffee/"))
    );
    assert_eq!(common::calls(&id, "RestoreDBInstanceFromS3"), 1);
    // The Coffee Manage app reads the row with its four variables, as from a new instance.
    let app = secret_data(&client, &ns, "db-connection")
        .await
        .expect("the connection Secret");
    let port = db
        .status
        .as_ref()
        .and_then(|s| s.common.endpoint.clone())
        .unwrap()
        .port;
    let (read, out) = mariadb(
        &app["APP_DB_HOST"],
        Some(&port.to_string()),
        &app["APP_DB_USER"],
        &app["APP_DB_PASSWORD"],
        &app["APP_DB_NAME"],
        "SELECT COUNT(*) FROM suppliers",
    );
    assert!(read && out.contains('1'), "{out}");

    // The refused one: still nothing sent, nothing made.
    assert_eq!(common::calls(&refused_id, "RestoreDBInstanceFromS3"), 0);
    assert!(common::calls(&refused_id, "CreateDBInstance") == 0);
    for name in ["db", "refused"] {
        api.delete(name, &Default::default()).await.expect("delete");
    }
    wait_object_gone(&api, "db").await;
    common::delete_bucket(&bucket);
}

#[tokio::test]
async fn an_aurora_mysql_cluster_restored_from_s3_serves_the_backups_rows() {
    let (client, ns, _api, _rds) = setup("s3aurora").await;
    let _operator = Operator::start(&ns);
    let bucket = unique("aurora-backups");
    common::create_bucket(&bucket);
    common::put_object(&bucket, "coffee/2026-12-06/backup.sql", BACKUP);
    let path = format!("/rds-operator/{ns}/");
    let role = common::create_role_at("123456789012", &path, &unique("import"), None);
    let id = unique("s3aur");
    let from = json!({"s3": {"bucket": bucket, "prefix": "coffee/", "ingestionRole": role,
                             "sourceEngine": "mysql", "sourceEngineVersion": "8.0.42"}});
    let extra = json!({"restoreFrom": from, "deletionPolicy": "Delete",
                       "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    let clusters: kube::Api<rds_operator::dbcluster::DBCluster> =
        kube::Api::namespaced(client.clone(), &ns);
    (clusters
        .create(
            &PostParams::default(),
            &crate::clusters::cluster(&id, extra),
        )
        .await)
        .expect("create the DBCluster");
    let made = wait_object(
        &clusters,
        "coffee",
        "restored from S3 and Ready",
        crate::clusters::ready,
    )
    .await;
    let restored = made.status.as_ref().and_then(|s| s.restored_from.clone());
    assert_eq!(restored, Some(format!("s3://{bucket}/coffee/")));
    assert_eq!(common::calls(&id, "RestoreDBClusterFromS3"), 1);
    let s = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the cluster's Secret");
    let (read, out) = mariadb_keys(
        &s,
        &s["password"],
        "SELECT name FROM suppliers WHERE id = 1",
    );
    assert!(read && out.contains("Beans from the backup"), "{out}");
    (clusters.delete("coffee", &Default::default()).await).expect("delete");
    wait_object_gone(&clusters, "coffee").await;
    common::delete_bucket(&bucket);
}
