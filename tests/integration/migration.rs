//! The Coffee Manage migration guide (docs/coffee-manage-migration.md), step by step: the lab's
//! CloudFormation-made MySQL instance is taken over by a DBInstance without losing data, the app's
//! Secret connects, and deleting the DBInstance with Retain leaves the database.

use std::time::Duration;

use kube::api::PostParams;
use rds_operator::dbinstance::ADOPTABLE_BY_TAG;
use serde_json::json;

use crate::common::{
    self, Operator, dbinstance, is_ready, setup, synced_reason, unique, wait_dbi, wait_for,
};
use crate::engines::{SUPPLIERS, mariadb, mysql2, real};

const TIMEOUT: Duration = Duration::from_secs(120);
const PASSWORD: &str = "Sup3r-Secret-Passw0rd";

#[tokio::test]
async fn the_coffee_manage_database_is_taken_over_without_losing_data() {
    let (client, ns, api, rds) = setup("migrate").await;
    let _operator = Operator::start(&ns);
    let id = unique("coffee");

    // The stack's instance: MySQL 8.0.42, db.t3.micro, 20 GiB gp2, no automated backups, admin.
    // (The moto-ext tag puts a real MariaDB server behind it.)
    let tag = |k: &str, v: &str| aws_sdk_rds::types::Tag::builder().key(k).value(v).build();
    (rds.create_db_instance())
        .db_instance_identifier(&id)
        .engine("mysql")
        .engine_version("8.0.42")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .storage_type("gp2")
        .backup_retention_period(0)
        .master_username("admin")
        .master_user_password(PASSWORD)
        .db_name("COFFEE")
        .tags(tag("app", "coffee-manage"))
        .tags(tag("moto-ext:real-engine", "true"))
        // Step 2 of the guide: the platform admin grants the team's namespace its adoption.
        .tags(tag(ADOPTABLE_BY_TAG, &ns))
        .send()
        .await
        .expect("the stack creates the instance");
    let endpoint = wait_for("the stack's instance", TIMEOUT, || {
        let (rds, id) = (rds.clone(), id.clone());
        async move {
            let i = common::describe(&rds, &id).await?;
            let e = i.endpoint()?;
            (i.db_instance_status() == Some("available")).then(|| {
                (
                    e.address().unwrap_or_default().to_owned(),
                    e.port().unwrap_or_default().to_string(),
                )
            })
        }
    })
    .await;
    // The lab's data.
    let (ok, out) = mariadb(
        &endpoint.0,
        Some(&endpoint.1),
        "admin",
        PASSWORD,
        "COFFEE",
        SUPPLIERS,
    );
    assert!(ok, "{out}");

    // Steps 3 and 4 of the guide: the password Secret (setup made db-password), and a DBInstance
    // that adopts the instance, keeps it on deletion, and writes the app's Secret (the APP_DB_*
    // keys of engines::real).
    let spec = real(json!({
        "adoptionPolicy": "Adopt",
        "deletionPolicy": "Retain",
        "backupRetentionPeriod": 0,
    }));
    api.create(&PostParams::default(), &dbinstance("coffee", &id, spec))
        .await
        .expect("apply the DBInstance");
    wait_dbi(&api, "coffee", "adopted and in sync", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let reasons = common::event_reasons(&client, &ns, "coffee").await;
    assert!(reasons.contains(&"Adopted".into()), "{reasons:?}");
    assert_eq!(
        common::calls(&id, "ModifyDBInstance"),
        0,
        "nothing about the database changed"
    );

    // Step 5: the app's Secret connects, and the row survived.
    let s = wait_for("the connection Secret", TIMEOUT, || async {
        common::secret_data(&client, &ns, "db-connection").await
    })
    .await;
    let (ok, out) = mariadb(
        &s["APP_DB_HOST"],
        None,
        &s["APP_DB_USER"],
        &s["APP_DB_PASSWORD"],
        &s["APP_DB_NAME"],
        "SELECT name FROM suppliers WHERE id = 1",
    );
    assert!(ok && out.contains("Coffee Beans Ltd"), "{out}");
    let (ok, out) = mysql2(&s["uri"], "SELECT COUNT(*) AS n FROM suppliers");
    assert!(ok && out.contains("\"n\":1"), "{out}");

    // Deleting the DBInstance with Retain leaves the database, data and all.
    common::delete_and_wait(&api, "coffee").await;
    let i = common::describe(&rds, &id)
        .await
        .expect("the instance is still there");
    assert_eq!(i.db_instance_status(), Some("available"));
    let (ok, out) = mariadb(
        &endpoint.0,
        Some(&endpoint.1),
        "admin",
        PASSWORD,
        "COFFEE",
        "SELECT COUNT(*) FROM suppliers",
    );
    assert!(ok && out.trim() == "1", "{out}");
    // The test's own cleanup: the emulator runs few real servers at once.
    (rds.delete_db_instance())
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("delete the retained instance");
}
