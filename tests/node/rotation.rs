//! A rotation under load (issue 55): the Coffee Manage app on the node, two replicas connecting
//! and writing every second through coffee-rotated-connection (deploy/examples/coffee-manage/
//! dbuser-rotated.yaml and deployment-rotated.yaml), while its DBUser's password rotates between
//! two logins and the operator, installed with rollSecretReaders, rolls the app. The refused logins
//! are counted by the database server itself (Aborted_connects) over the whole rotation, from
//! before it starts until the old login is retired; the goal is none, and no app Pod fails in that
//! window either (a restart before it, such as a first connection made before the Pod's network
//! was up, is not the rotation's). The chart's workload RBAC is audited: every verb it grants was
//! used, none refused.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbuser::DBUser;
use serde_json::json;

use crate::common::{self, wait_for};
use crate::node::{coffee_manage, example_app, install, read_example};

const TIMEOUT: Duration = Duration::from_secs(240);
const SELECTOR: &str = "app=coffee-manage-rotated";

/// The database server's count of failed logins (Aborted_connects: a wrong password, a locked
/// account, no privilege on the database; Access_denied_errors misses a locked account), read as
/// the master user.
fn refused_logins(master: &std::collections::BTreeMap<String, String>) -> u64 {
    let sql = "SHOW GLOBAL STATUS LIKE 'Aborted_connects'";
    let (ok, out) = common::mariadb_keys(master, &master["password"], sql);
    assert!(ok, "{out}");
    (out.split_whitespace().last().and_then(|n| n.parse().ok())).expect("a count")
}

/// The app's Pods: the Deployment's and the DaemonSet's.
async fn app_pods(client: &kube::Client, ns: &str) -> Vec<k8s_openapi::api::core::v1::Pod> {
    let mut pods = common::pods(client, ns, SELECTOR).await;
    pods.extend(common::pods(client, ns, "app=coffee-rotated-reader").await);
    pods
}

/// Each app Pod's restarts.
async fn restarts(client: &kube::Client, ns: &str) -> BTreeMap<String, i32> {
    (app_pods(client, ns).await.iter())
        .map(|p| {
            (
                p.metadata.name.clone().unwrap_or_default(),
                common::restarts(p),
            )
        })
        .collect()
}

/// The app's Pods that failed since `before` (a restart more, or a failure printed), with what
/// they said.
async fn failures(client: &kube::Client, ns: &str, before: &BTreeMap<String, i32>) -> Vec<String> {
    let mut failed = Vec::new();
    for pod in app_pods(client, ns).await {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let log = common::pod_log(client, ns, &name, false).await;
        let previous = common::pod_log(client, ns, &name, true).await;
        let restarted = common::restarts(&pod) > before.get(&name).copied().unwrap_or(0);
        if restarted || log.contains("coffee-manage:") {
            let said = (previous.lines().chain(log.lines()))
                .filter(|l| l.starts_with("coffee-manage:"))
                .collect::<Vec<_>>()
                .join("; ");
            failed.push(format!(
                "{name} ({} restarts): {said}",
                common::restarts(&pod)
            ));
        }
    }
    failed
}

/// A StatefulSet and a DaemonSet of the app reading the Secret too, so that every verb of the
/// workload RBAC is used: the DaemonSet's Pod runs on the node; the StatefulSet has none.
async fn other_readers(client: &kube::Client, ns: &str) {
    let app = example_app("deployment-rotated.yaml", &[("APP_EVERY", "1")]);
    let template = serde_json::to_value(&app.spec.unwrap().template).unwrap();
    let mut template = template;
    template["metadata"]["labels"] = json!({"app": "coffee-rotated-reader"});
    let selector = json!({"matchLabels": {"app": "coffee-rotated-reader"}});
    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "coffee-rotated-set"},
        "spec": {"replicas": 0, "serviceName": "coffee", "selector": selector, "template": template},
    }))
    .unwrap();
    let pp = PostParams::default();
    Api::<StatefulSet>::namespaced(client.clone(), ns)
        .create(&pp, &set)
        .await
        .unwrap();
    let daemons: DaemonSet = serde_json::from_value(json!({
        "metadata": {"name": "coffee-rotated-daemon"},
        "spec": {"selector": selector, "template": template},
    }))
    .unwrap();
    Api::<DaemonSet>::namespaced(client.clone(), ns)
        .create(&pp, &daemons)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_coffee_manage_app_keeps_logging_in_through_an_alternating_rotation() {
    let _shared = crate::CLUSTER.read().await;
    common::node();
    let client = common::client_with_crd().await;
    let release_ns = common::namespace(&client, "rds-rotation").await;
    let ns = common::namespace(&client, "coffee-rotation").await;
    common::aws_secret(&client, &release_ns).await;
    let release = "rds-operator-rotation";
    install(
        release,
        &release_ns,
        &[
            format!("watchNamespaces={{{ns}}}"),
            "rollSecretReaders=true".to_owned(),
        ],
    );
    common::wait_available(&client, &release_ns, release, 1).await;
    coffee_manage(&client, &ns).await;
    let master = wait_for("the master's connection Secret", TIMEOUT, || async {
        common::secret_data(&client, &ns, "coffee-db-connection").await
    })
    .await;
    let users: Api<DBUser> = Api::namespaced(client.clone(), &ns);
    let mut user: DBUser = read_example("dbuser-rotated.yaml");
    let rotation = user.spec.password_rotation.as_mut().unwrap();
    rotation.retire_after = Some("20s".parse().unwrap());
    (users.create(&PostParams::default(), &user).await).expect("create the DBUser");
    let ready =
        |u: &DBUser| common::object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True");
    common::wait_object(&users, "coffee-rotated", "the DBUser Ready", ready).await;

    let apps: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let app = example_app("deployment-rotated.yaml", &[("APP_EVERY", "1")]);
    apps.create(&PostParams::default(), &app)
        .await
        .expect("the app");
    other_readers(&client, &ns).await;
    common::wait_available(&client, &ns, "coffee-manage-rotated", 2).await;
    let before = refused_logins(&master);
    let restarted_before = restarts(&client, &ns).await;

    // Rotate now, with the app writing every second from both replicas.
    let started = Instant::now();
    let patch = json!({"metadata": {"annotations": {"rds.operator.rs/rotate-now": "1"}}});
    (users
        .patch(
            "coffee-rotated",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await)
        .expect("rotate now");
    let rotated = |u: &DBUser| {
        let r = u.status.as_ref().and_then(|s| s.rotation.clone());
        r.is_some_and(|r| r.active == "coffee_rotated_clone" && r.retiring.is_none())
    };
    let u = common::wait_object(&users, "coffee-rotated", "rotated and retired", rotated).await;
    let took = started.elapsed();
    // A few cycles more on the new login alone.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let refused = refused_logins(&master) - before;
    let failed = failures(&client, &ns, &restarted_before).await;
    let readers = (u.status.as_ref().and_then(|s| s.secret_readers.clone())).expect("readers");
    let names: Vec<String> = (readers.readers.iter())
        .map(|r| format!("{:?} {} {:?}", r.kind, r.name, r.state))
        .collect();
    eprintln!(
        "rotation under load: {refused} refused logins, {} failed app Pods, rotated and the old \
         login retired in {:.1} s; readers: {names:?}",
        failed.len(),
        took.as_secs_f64()
    );
    assert_eq!(
        refused, 0,
        "no login refused during the rotation: {failed:?}"
    );
    assert!(failed.is_empty(), "no app Pod failed: {failed:?}");
    assert_eq!(readers.readers.len(), 3, "{names:?}");
    let secret = common::secret_data(&client, &ns, "coffee-rotated-connection")
        .await
        .unwrap();
    assert_eq!(secret["APP_DB_USER"], "coffee_rotated_clone");
    for pod in common::pods(&client, &ns, SELECTOR).await {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let log = common::pod_log(&client, &ns, &name, false).await;
        assert!(log.contains("{\"suppliers\""), "{name} serves");
    }

    // Under the chart's workload RBAC nothing was refused, and each verb it grants was used.
    let requests = common::audited(&release_ns, release);
    let apps_requests: Vec<_> = requests.iter().filter(|r| r.group == "apps").collect();
    assert!(
        !apps_requests.iter().any(|r| r.code == 403),
        "refused: {apps_requests:?}"
    );
    for resource in ["deployments", "statefulsets", "daemonsets"] {
        for verb in ["list", "patch"] {
            let used = apps_requests
                .iter()
                .any(|r| r.resource == resource && r.verb == verb);
            assert!(used, "{verb} apps/{resource} granted and never used");
        }
    }

    apps.delete("coffee-manage-rotated", &DeleteParams::default())
        .await
        .unwrap();
    let daemons: Api<DaemonSet> = Api::namespaced(client.clone(), &ns);
    daemons
        .delete("coffee-rotated-daemon", &DeleteParams::default())
        .await
        .unwrap();
    users
        .delete("coffee-rotated", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&users, "coffee-rotated").await;
    let dbs: Api<rds_operator::dbinstance::DBInstance> = Api::namespaced(client.clone(), &ns);
    common::delete_and_wait(&dbs, "coffee-db").await;
    let (ok, out, err) = common::helm(&["uninstall", release, "--namespace", &release_ns]);
    assert!(ok, "helm uninstall: {out}{err}");
}
