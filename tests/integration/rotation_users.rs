//! Password rotation between two logins (DBUser passwordRotation, AlternatingUsers) on the
//! emulator's real MariaDB: both logins valid until retireAfter, then only the new one; a
//! rotation whose new password cannot log in changes nothing.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbuser::DBUser;
use serde_json::json;

use crate::common::{self, *};
use crate::users::{as_master, as_user, delete_user, ready_user, real, user_of};

fn rotation(u: &DBUser) -> Option<rds_operator::dbuser::RotationStatus> {
    u.status.as_ref()?.rotation.clone()
}

async fn rotate_now(users: &Api<DBUser>, value: &str) {
    let patch = json!({"metadata": {"annotations": {"rds.operator.rs/rotate-now": value}}});
    (users
        .patch("app", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("annotate rotate-now");
}

/// An app that reads the connection Secret app-db from its environment (no replicas: no node
/// here).
fn reader() -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": "coffee-app"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "coffee"}}, "template": {
            "metadata": {"labels": {"app": "coffee"}},
            "spec": {"containers": [{"name": "app", "image": "coffee-app:local",
                "envFrom": [{"secretRef": {"name": "app-db"}}]}]}}},
    }))
    .unwrap()
}

/// The connection Secret as stored: its data byte for byte and its version.
async fn stored(client: &kube::Client, ns: &str) -> (BTreeMap<String, Vec<u8>>, Option<String>) {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let s = api.get("app-db").await.expect("the connection Secret");
    let version = s
        .annotations()
        .get("rds.operator.rs/secret-version")
        .cloned();
    let data = (s.data.unwrap_or_default().into_iter())
        .map(|(k, v)| (k, v.0))
        .collect();
    (data, version)
}

#[tokio::test]
async fn an_alternating_rotation_keeps_both_logins_until_retire_after_then_only_the_new_one() {
    let (client, ns, api, _rds) = setup("rotusers").await;
    let id = common::unique("rotusers");
    let operator = Operator::start_with(&ns, &["--roll-secret-readers"]);
    api.create(&PostParams::default(), &dbinstance("db", &id, real()))
        .await
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let (made, out) = as_master(&db, "CREATE TABLE suppliers (id INT PRIMARY KEY)");
    assert!(made, "{out}");
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let rotated =
        json!({"passwordRotation": {"strategy": "AlternatingUsers", "retireAfter": "10s"}});
    let user = user_of("app", "ReadWrite", rotated);
    (users.create(&PostParams::default(), &user).await).expect("create DBUser");
    ready_user(&users, "app").await;
    // An app that reads the Secret (no replicas: no node here).
    let app = reader();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    deployments
        .create(&PostParams::default(), &app)
        .await
        .unwrap();
    let first = secret_data(&client, &ns, "app-db").await.unwrap();
    assert_eq!(first["username"], "app");
    assert!(as_user(&first, "INSERT INTO suppliers VALUES (1)").0);

    // Rotate now: the Secret moves to app_clone, with a new password and the same grants; app
    // still logs in with its password.
    rotate_now(&users, "1").await;
    let u = wait_object(&users, "app", "rotated to app_clone", |u| {
        rotation(u).is_some_and(|r| r.active == "app_clone")
    })
    .await;
    let second = secret_data(&client, &ns, "app-db").await.unwrap();
    assert_eq!(second["username"], "app_clone");
    assert_ne!(second["password"], first["password"]);
    let r = rotation(&u).unwrap();
    assert_eq!(r.retiring.as_deref(), Some("app"));
    let (wrote, out) = as_user(&second, "INSERT INTO suppliers VALUES (2)");
    assert!(wrote, "the clone has the grants: {out}");
    let (old, out) = as_user(&first, "SELECT COUNT(*) FROM suppliers");
    assert!(old, "the old login logs in until retireAfter: {out}");
    // Its reader rolled to the new version.
    let version = stored(&client, &ns).await.1.expect("a version");
    wait_for("the reader rolled", TIMEOUT, || async {
        let d = deployments.get("coffee-app").await.ok()?;
        let a = d.spec?.template.metadata?.annotations?;
        (a.get("secret.rds.operator.rs/app-db") == Some(&version)).then_some(())
    })
    .await;

    // Then app is locked: only the new login logs in.
    wait_object(&users, "app", "app retired", |u| {
        rotation(u).is_some_and(|r| r.retiring.is_none())
    })
    .await;
    let (old, out) = as_user(&first, "SELECT 1");
    assert!(!old, "the retired login is refused: {out}");
    assert!(as_user(&second, "SELECT 1").0, "the new one logs in");
    assert!(
        common::event_reasons(&client, &ns, "app")
            .await
            .contains(&"LoginRetired".into())
    );

    // A rotation whose new password cannot log in (an app@10.% account shadows app@% for the
    // operator's logins) changes nothing, and says why.
    let shadow = "CREATE USER 'app'@'10.%' IDENTIFIED BY 'Shad0w-pw'; \
                  CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'Shad0w-pw'; \
                  CREATE USER 'app'@'localhost' IDENTIFIED BY 'Shad0w-pw'";
    let (made, out) = as_master(&db, shadow);
    assert!(made, "{out}");
    let before = stored(&client, &ns).await;
    rotate_now(&users, "2").await;
    let failed = wait_object(&users, "app", "RotationFailed", |u| {
        object_condition(u, "Synced").is_some_and(|(_, reason, _)| reason == "RotationFailed")
    })
    .await;
    let (_, _, message) = object_condition(&failed, "Synced").unwrap();
    assert!(message.contains("does not log in"), "{message}");
    let ready = object_condition(&failed, "Ready").unwrap();
    assert_eq!(ready.0, "True", "the Secret's login still logs in");
    assert_eq!(
        stored(&client, &ns).await,
        before,
        "the Secret unchanged, byte for byte"
    );
    assert!(
        as_user(&second, "SELECT 1").0,
        "and its login still logs in"
    );

    // The shadow gone, the rotation completes: back to app, with a new password.
    let drop = "DROP USER 'app'@'10.%'; DROP USER 'app'@'127.0.0.1'; DROP USER 'app'@'localhost'";
    let (dropped, out) = as_master(&db, drop);
    assert!(dropped, "{out}");
    wait_object(&users, "app", "rotated back to app", |u| {
        rotation(u).is_some_and(|r| r.active == "app")
    })
    .await;
    let third = secret_data(&client, &ns, "app-db").await.unwrap();
    assert_eq!(third["username"], "app");
    assert_ne!(third["password"], first["password"], "a new password");
    assert!(as_user(&third, "SELECT COUNT(*) FROM suppliers").0);

    let logs = operator.logs();
    for s in [&first, &second, &third] {
        assert!(
            !logs.contains(&s["password"]),
            "a password in the operator's log"
        );
    }
    delete_user(&users, "app").await;
    let (_, users_left) = as_master(&db, "SELECT User FROM mysql.user WHERE User LIKE 'app%'");
    assert_eq!(users_left.trim(), "", "both logins dropped");
    common::delete_and_wait(&api, "db").await;
}

/// Scales the reader `coffee-app` to `replicas` (with no node here, one replica never becomes
/// available: its rollout never ends).
async fn scale(deployments: &Api<Deployment>, replicas: i32) {
    let patch = json!({"spec": {"replicas": replicas}});
    (deployments
        .patch("coffee-app", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("scale the reader");
}

/// retireAfter 0s, readers rolled: the login a rotation leaves is never locked in the pass that
/// switches the Secret, nor while a reader of the Secret is still rolling, however long that
/// takes; only once it has rolled out. A first rotation leaves the reader rolled out on the
/// Secret's version; the reader is then scaled to one replica (no node: it never becomes
/// available), and a second rotation is asked for. The login the app read at start keeps logging
/// in over passes of the operator's while the reader rolls; scaled to none, it is locked.
#[tokio::test]
async fn retire_after_zero_never_locks_a_login_before_the_secret_switched_and_a_slow_reader_rolled()
{
    let (client, ns, api, _rds) = setup("rotzero").await;
    let id = common::unique("rotzero");
    let operator = Operator::start_with(&ns, &["--roll-secret-readers"]);
    (api.create(&PostParams::default(), &dbinstance("db", &id, real()))
        .await)
        .expect("create DBInstance");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let rotated =
        json!({"passwordRotation": {"strategy": "AlternatingUsers", "retireAfter": "0s"}});
    (users
        .create(
            &PostParams::default(),
            &user_of("app", "ReadWrite", rotated),
        )
        .await)
        .expect("create DBUser");
    ready_user(&users, "app").await;
    let app = reader();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    (deployments.create(&PostParams::default(), &app).await).expect("the reader");

    // A first rotation: to app_clone, the reader rolled out on it, app retired.
    rotate_now(&users, "1").await;
    wait_object(&users, "app", "app_clone active, app retired", |u| {
        rotation(u).is_some_and(|r| r.active == "app_clone" && r.retiring.is_none())
    })
    .await;
    let clone = secret_data(&client, &ns, "app-db").await.unwrap();
    assert_eq!(clone["username"], "app_clone");

    // The reader now rolls slowly; a second rotation, back to app.
    scale(&deployments, 1).await;
    rotate_now(&users, "2").await;
    wait_object(&users, "app", "app active", |u| {
        rotation(u).is_some_and(|r| r.active == "app")
    })
    .await;
    assert_eq!(
        secret_data(&client, &ns, "app-db").await.unwrap()["username"],
        "app"
    );
    holds_over_passes(
        &operator,
        ("DBUser", "app"),
        "the app's login logs in while its reader rolls",
        || {
            let clone = clone.clone();
            async move { as_user(&clone, "SELECT 1").0 }
        },
    )
    .await;
    let u = users.get("app").await.expect("the DBUser");
    assert_eq!(
        rotation(&u).and_then(|r| r.retiring).as_deref(),
        Some("app_clone")
    );

    // Rolled out (scaled to none): app_clone is locked, app logs in.
    scale(&deployments, 0).await;
    wait_object(&users, "app", "app_clone retired", |u| {
        rotation(u).is_some_and(|r| r.retiring.is_none())
    })
    .await;
    let (old, out) = as_user(&clone, "SELECT 1");
    assert!(!old, "the retired login is refused: {out}");
    let now = secret_data(&client, &ns, "app-db").await.unwrap();
    assert!(as_user(&now, "SELECT 1").0, "the Secret's login logs in");
    drop(db);
    delete_user(&users, "app").await;
    common::delete_and_wait(&api, "db").await;
}
