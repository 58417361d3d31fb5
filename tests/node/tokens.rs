//! The Coffee Manage app on the node, logging in as an IAM DBUser (deploy/examples/coffee-manage/
//! dbuser-iam.yaml and deployment-iam.yaml): the token it reads from the mounted connection Secret
//! at each connection stays valid past two token lives, the operator replacing it in the Secret
//! and the kubelet in the volume. The emulator's tokens live `TOKEN_LIFE` seconds here, the chart
//! replaces them every 10 s, the kubelet syncs every 10 s (tests/env/node.sh).

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbuser::DBUser;
use serde_json::json;

use crate::common::{self, is_ready, wait_dbi, wait_for};
use crate::node::{coffee_manage, example_app, install, read_example};

const TIMEOUT: Duration = Duration::from_secs(180);
/// How long the emulator lets a token log in, in seconds.
const TOKEN_LIFE: u64 = 45;
/// How often the app connects again, in seconds.
const EVERY: u64 = 5;

#[tokio::test]
async fn the_app_logs_in_through_an_iam_dbusers_secret_past_two_token_lives() {
    let _shared = crate::CLUSTER.read().await;
    common::node();
    assert!(
        common::moto_ext_post(&format!("/_rds_ext/config?iam_token_life={TOKEN_LIFE}")),
        "set the emulator's token life"
    );
    let client = common::client_with_crd().await;
    let release_ns = common::namespace(&client, "rds-iam").await;
    let ns = common::namespace(&client, "coffee-iam").await;
    common::aws_secret(&client, &release_ns).await;
    install(
        "rds-operator-iam",
        &release_ns,
        &[
            format!("watchNamespaces={{{ns}}}"),
            "iamTokenRefresh=10s".to_owned(),
        ],
    );
    common::wait_available(&client, &release_ns, "rds-operator-iam", 1).await;
    coffee_manage(&client, &ns).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    let iam = json!({"spec": {"enableIAMDatabaseAuthentication": true}});
    (api.patch("coffee-db", &PatchParams::default(), &Patch::Merge(&iam)))
        .await
        .expect("IAM authentication on");
    wait_dbi(&api, "coffee-db", "Ready with IAM", TIMEOUT, |db| {
        is_ready(db)
            && (db.status.as_ref())
                .and_then(|s| s.common.iam_database_authentication_enabled)
                .unwrap_or(false)
    })
    .await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let user: DBUser = read_example("dbuser-iam.yaml");
    (users.create(&PostParams::default(), &user).await).expect("create the DBUser");
    let ready =
        |u: &DBUser| common::object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True");
    common::wait_object(&users, "coffee-app", "the IAM DBUser Ready", ready).await;
    let first = common::secret_data(&client, &ns, "coffee-app-connection")
        .await
        .expect("the DBUser's connection Secret");
    assert!(
        first["APP_DB_PASSWORD"].contains("Action=connect&DBUser=coffee_app&"),
        "a token in place of a password"
    );

    // The app, reading the token from the mounted Secret at each connection.
    let every = EVERY.to_string();
    let deployment = example_app("deployment-iam.yaml", &[("APP_EVERY", &every)]);
    Api::<Deployment>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &deployment)
        .await
        .expect("the app Deployment");
    let selector = "app=coffee-manage-iam";
    let started = wait_for("the app's first login", TIMEOUT, || async {
        let pod = common::pods(&client, &ns, selector).await.pop()?;
        let log = common::pod_log(&client, &ns, pod.metadata.name.as_deref()?, false).await;
        log.contains("{\"suppliers\"").then(Instant::now)
    })
    .await;
    // Past two token lives, every connection logs in: the app never fails (a failure ends it, and
    // the kubelet would restart it), and it added a supplier each time: two lives' worth of logins
    // (2 * TOKEN_LIFE / EVERY), waited for past the two lives, however slow a login is on a loaded
    // machine (its loop waits EVERY seconds after each: a fixed sleep counted 17 of 18 on a fresh
    // CI run).
    let wanted = usize::try_from(2 * TOKEN_LIFE / EVERY).unwrap();
    let count = |log: &str| {
        (log.lines())
            .filter(|l| l.starts_with("{\"suppliers\""))
            .count()
    };
    let lives = Duration::from_secs(2 * TOKEN_LIFE + EVERY);
    let (pod, log) = wait_for("two token lives of logins", lives + TIMEOUT, || async {
        let pod = common::pods(&client, &ns, selector).await.pop()?;
        let log = common::pod_log(&client, &ns, pod.metadata.name.as_deref()?, false).await;
        let failed = common::restarts(&pod) > 0 || log.contains("coffee-manage:");
        let lived = started.elapsed() >= lives;
        ((count(&log) >= wanted && lived) || failed).then_some((pod, log))
    })
    .await;
    assert_eq!(common::restarts(&pod), 0, "the app never failed: {log}");
    assert!(!log.contains("coffee-manage:"), "{log}");
    let logins = count(&log);
    assert!(
        logins >= wanted,
        "{logins} logins in two token lives: {log}"
    );
    let last = common::secret_data(&client, &ns, "coffee-app-connection")
        .await
        .expect("the Secret");
    assert_ne!(
        last["APP_DB_PASSWORD"], first["APP_DB_PASSWORD"],
        "the token was replaced"
    );
    let (ok, out) =
        common::mariadb_keys(&last, &last["password"], "SELECT COUNT(*) FROM suppliers");
    assert!(ok, "the Secret's token logs in from the host too: {out}");
    assert!(out.trim().parse::<usize>().unwrap_or(0) >= logins, "{out}");
    eprintln!(
        "IAM DBUser: {logins} logins of the app over {:.0} s, token life {TOKEN_LIFE} s",
        started.elapsed().as_secs_f64()
    );

    Api::<Deployment>::namespaced(client.clone(), &ns)
        .delete("coffee-manage-iam", &DeleteParams::default())
        .await
        .expect("delete the app");
    users
        .delete("coffee-app", &DeleteParams::default())
        .await
        .expect("delete the DBUser");
    common::wait_object_gone(&users, "coffee-app").await;
    common::delete_and_wait(&api, "coffee-db").await;
    let (ok, out, err) =
        common::helm(&["uninstall", "rds-operator-iam", "--namespace", &release_ns]);
    assert!(ok, "helm uninstall: {out}{err}");
}
