//! The operator as its users run it, on a real node (tests/env/node.sh): installed by helm, from
//! the image built here, as a Pod under the chart's ServiceAccount, RBAC, probes and security
//! context; the Coffee Manage app as a Deployment reading the connection Secret through envFrom
//! and talking to the real database behind the emulator.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{EnvVar, Pod, Secret};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::awsaccount::AWSAccount;
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclusterendpoint::DBClusterEndpoint;
use rds_operator::dbclusterparametergroup::DBClusterParameterGroup;
use rds_operator::dbclustersnapshot::DBClusterSnapshot;
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbparametergroup::DBParameterGroup;
use rds_operator::dbsnapshot::DBSnapshot;
use rds_operator::dbsubnetgroup::DBSubnetGroup;
use rds_operator::dbuser::DBUser;
use rds_operator::globalcluster::GlobalCluster;
use serde_json::json;

use crate::common::{self, is_ready, unique, wait_dbi, wait_for};

const TIMEOUT: Duration = Duration::from_secs(180);
const OPERATOR: &str = "app.kubernetes.io/name=rds-operator";

fn chart() -> String {
    format!("{}/helm/rds-operator", common::REPO)
}

pub(crate) fn read_example<T: serde::de::DeserializeOwned>(file: &str) -> T {
    let path = format!("{}/deploy/examples/coffee-manage/{file}", common::REPO);
    serde_yaml::from_str(&std::fs::read_to_string(path).expect("example file")).expect("YAML")
}

/// `helm install` of the chart into `release_ns` with `extra` values; panics with helm's output.
pub(crate) fn install(release: &str, release_ns: &str, extra: &[String]) {
    let (chart, values) = (chart(), [common::chart_values(), extra.to_vec()].concat());
    let mut args = vec!["install", release, &chart, "--namespace", release_ns];
    for value in &values {
        args.extend(["--set", value]);
    }
    let (ok, out, err) = common::helm(&args);
    assert!(ok, "helm install: {out}{err}");
}

/// The Coffee Manage sample in `ns`, as deploy/examples/coffee-manage/ has it (the emulator's
/// subnets, a unique identifier, a real MariaDB behind it): the password Secret, the DB subnet
/// group and the DBInstance. Returns the RDS identifier.
pub(crate) async fn coffee_manage(client: &Client, ns: &str) -> String {
    let password: Secret = read_example("password-secret.yaml");
    Api::<Secret>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &password)
        .await
        .expect("password Secret");
    let mut group: DBSubnetGroup = read_example("dbsubnetgroup.yaml");
    group.spec.subnet_ids = common::coffee_subnets(&common::rds().await).await;
    group.spec.db_subnet_group_name = Some(unique("coffee-db-subnets"));
    Api::<DBSubnetGroup>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &group)
        .await
        .expect("DBSubnetGroup");
    let mut db: DBInstance = read_example("dbinstance.yaml");
    let identifier = unique("coffee-db");
    db.spec.db_instance_identifier = Some(identifier.clone());
    db.spec.tags.push(rds_operator::dbinstance::Tag {
        key: "moto-ext:real-engine".into(),
        value: "true".into(),
    });
    Api::<DBInstance>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &db)
        .await
        .expect("DBInstance");
    identifier
}

/// The example's app Deployment, running the stand-in Coffee Manage image built here.
async fn app(client: &Client, ns: &str) {
    let deployment = example_app("deployment.yaml", &[]);
    Api::<Deployment>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &deployment)
        .await
        .expect("app Deployment");
}

/// An example's app Deployment with the stand-in Coffee Manage image built here, and these
/// environment variables besides the example's.
pub(crate) fn example_app(file: &str, env: &[(&str, &str)]) -> Deployment {
    let mut deployment: Deployment = read_example(file);
    let pod = deployment.spec.as_mut().unwrap().template.spec.as_mut();
    let container = &mut pod.unwrap().containers[0];
    container.image = Some("rds-operator.test/coffee-manage:dev".into());
    container.image_pull_policy = Some("Never".into());
    let vars = container.env.get_or_insert_default();
    vars.extend(env.iter().map(|(name, value)| EnvVar {
        name: (*name).to_owned(),
        value: Some((*value).to_owned()),
        ..Default::default()
    }));
    deployment
}

/// The suppliers a running app Pod printed (its first JSON line), and the Pod.
async fn app_output(client: &Client, ns: &str) -> (Pod, Vec<String>) {
    wait_for("the app to print the suppliers", TIMEOUT, || async {
        for pod in common::pods(client, ns, "app=coffee-manage").await {
            let name = pod.metadata.name.clone()?;
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let log = common::pod_log(client, ns, &name, false).await;
            let line = log.lines().find(|l| l.starts_with("{\"suppliers\""))?;
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            let names = (v["suppliers"].as_array()?.iter())
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect();
            return Some((pod, names));
        }
        None
    })
    .await
}

async fn operator_logs(client: &Client, ns: &str) -> String {
    let mut all = String::new();
    for pod in common::pods(client, ns, OPERATOR).await {
        let name = pod.metadata.name.clone().unwrap_or_default();
        all.push_str(&common::pod_log(client, ns, &name, true).await);
        all.push_str(&common::pod_log(client, ns, &name, false).await);
    }
    all
}

/// The connection Secret's values.
async fn connection(client: &Client, ns: &str) -> BTreeMap<String, String> {
    (common::secret_data(client, ns, "coffee-db-connection").await).unwrap_or_default()
}

#[tokio::test]
async fn the_chart_runs_the_operator_as_a_pod_and_the_app_reads_its_secret() {
    let _shared = crate::CLUSTER.read().await;
    common::node();
    let client = common::client_with_crd().await;
    let release_ns = common::namespace(&client, "rds-system").await;
    let ns = common::namespace(&client, "coffee").await;
    common::aws_secret(&client, &release_ns).await;
    let started = Instant::now();
    install(
        "rds-operator",
        &release_ns,
        &[format!("watchNamespaces={{{ns}}}")],
    );
    common::wait_available(&client, &release_ns, "rds-operator", 1).await;
    eprintln!(
        "helm install -> operator Pod Ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let pod = &common::pods(&client, &release_ns, OPERATOR).await[0];
    let spec = pod.spec.as_ref().unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some("rds-operator"));

    // The sample reconciles to Ready, through the in-cluster config and the emulator.
    let identifier = coffee_manage(&client, &ns).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    wait_dbi(
        &api,
        "coffee-db",
        "Ready from the operator Pod",
        TIMEOUT,
        is_ready,
    )
    .await;

    // The app reads the four variables from the Secret, creates its table and reads its row back.
    app(&client, &ns).await;
    let (app_pod, suppliers) = app_output(&client, &ns).await;
    let app_pod_name = app_pod.metadata.name.clone().unwrap();
    assert_eq!(suppliers, vec![app_pod_name.clone()]);
    let secret = connection(&client, &ns).await;
    let (ok, rows) =
        common::mariadb_keys(&secret, &secret["password"], "SELECT name FROM suppliers");
    assert!(ok, "the host reads the app's row: {rows}");
    assert_eq!(rows.trim(), app_pod_name, "the row the app inserted");

    // A password rotation restarts nothing; the next Pod connects with the new password.
    let new_password = "Rotated-Coffee-2026";
    Api::<Secret>::namespaced(client.clone(), &ns)
        .patch(
            "coffee-db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": new_password}})),
        )
        .await
        .unwrap();
    wait_for("RDS to take the new password", TIMEOUT, || async {
        (common::rds_master_password(&identifier).as_deref() == Some(new_password)).then_some(())
    })
    .await;
    wait_for("the connection Secret to carry it", TIMEOUT, || async {
        (connection(&client, &ns)
            .await
            .get("APP_DB_PASSWORD")
            .map(String::as_str)
            == Some(new_password))
        .then_some(())
    })
    .await;
    let same = common::pods(&client, &ns, "app=coffee-manage").await;
    assert_eq!(same.len(), 1);
    assert_eq!(
        same[0].metadata.uid, app_pod.metadata.uid,
        "the app Pod is the same"
    );
    assert_eq!(common::restarts(&same[0]), 0, "and was not restarted");
    Api::<Pod>::namespaced(client.clone(), &ns)
        .delete(&app_pod_name, &DeleteParams::default())
        .await
        .unwrap();
    let (next, suppliers) = wait_for("a new app Pod", TIMEOUT, || async {
        let (pod, suppliers) = app_output(&client, &ns).await;
        (pod.metadata.name.as_deref() != Some(app_pod_name.as_str())).then_some((pod, suppliers))
    })
    .await;
    assert_eq!(
        suppliers,
        vec![app_pod_name.clone(), next.metadata.name.clone().unwrap()],
        "the new Pod logged in with the rotated password and found the first row"
    );
    let modifications = common::calls_of(&identifier, &["ModifyDBInstance", "RebootDBInstance"]);

    // The chart's RBAC is enough: no Forbidden anywhere in the operator's log.
    let logs = operator_logs(&client, &release_ns).await;
    assert!(
        !logs.contains("Forbidden") && !logs.contains("forbidden"),
        "{logs}"
    );

    // The liveness probe: a frozen operator is restarted by the kubelet.
    let operator_pod = common::pods(&client, &release_ns, OPERATOR).await.remove(0);
    freeze_operator(&operator_pod);
    let name = operator_pod.metadata.name.clone().unwrap();
    wait_for(
        "the kubelet to restart the frozen operator",
        Duration::from_secs(150),
        || async {
            let pods = common::pods(&client, &release_ns, OPERATOR).await;
            let pod = pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(name.as_str()))?;
            (common::restarts(pod) >= 1 && common::pod_ready(pod)).then_some(())
        },
    )
    .await;

    // helm upgrade to a changed value rolls the Pod; the database stays as it is.
    let started = Instant::now();
    let (ok, out, err) = common::helm(&[
        "upgrade",
        "rds-operator",
        &chart(),
        "--namespace",
        &release_ns,
        "--reuse-values",
        "--set",
        "log.level=debug",
    ]);
    assert!(ok, "helm upgrade: {out}{err}");
    wait_for("the upgraded operator Pod", TIMEOUT, || async {
        let pods = common::pods(&client, &release_ns, OPERATOR).await;
        let pod = pods
            .iter()
            .find(|p| common::pod_ready(p) && p.metadata.name.as_deref() != Some(name.as_str()))?;
        let args = pod.spec.as_ref()?.containers[0].args.clone()?;
        args.contains(&"--log-level=debug".to_owned()).then_some(())
    })
    .await;
    eprintln!(
        "helm upgrade -> new Pod Ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    wait_dbi(
        &api,
        "coffee-db",
        "still Ready after the upgrade",
        TIMEOUT,
        is_ready,
    )
    .await;

    let logs = operator_logs(&client, &release_ns).await;
    // helm uninstall takes the operator away and leaves the database (and the DBInstance) as they
    // are: its deletion policy applies only when the DBInstance is deleted.
    let (ok, out, err) = common::helm(&[
        "uninstall",
        "rds-operator",
        "--namespace",
        &release_ns,
        "--wait",
    ]);
    assert!(ok, "helm uninstall: {out}{err}");
    assert!(
        api.get_opt("coffee-db").await.unwrap().is_some(),
        "the DBInstance stays"
    );
    let rds = common::rds().await;
    let instance = common::describe(&rds, &identifier)
        .await
        .expect("the database stays");
    assert_eq!(
        common::calls_of(&identifier, &["ModifyDBInstance", "RebootDBInstance"]),
        modifications,
        "a restarted, upgraded or uninstalled operator changed nothing (RDS shows {:?}): {}",
        instance.db_instance_status(),
        logs
    );
}

/// Stops the operator's process (SIGSTOP), as a frozen process would be: only the liveness
/// probe notices.
fn freeze_operator(pod: &Pod) {
    let uid = pod.metadata.uid.clone().unwrap();
    // The container's process: an rds-operator whose cgroup is the Pod's.
    let out = std::process::Command::new("pgrep")
        .args(["-x", "rds-operator"])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&out.stdout).into_owned();
    let pod_uid = uid.replace('-', "_");
    let pid = pids
        .lines()
        .find(|pid| {
            let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            cgroup.contains(&uid) || cgroup.contains(&pod_uid)
        })
        .unwrap_or_else(|| panic!("no rds-operator process of Pod {uid} among {pids:?}"))
        .to_owned();
    // The chart's security context, as the kubelet applied it: the nonroot user, no capabilities.
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        (status.lines())
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(
        field("Uid:"),
        "65532 65532 65532 65532",
        "runs as the nonroot user"
    );
    assert_eq!(
        field("CapEff:"),
        "0000000000000000",
        "with every capability dropped"
    );
    assert_eq!(field("NoNewPrivs:"), "1", "and no privilege escalation");
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    let root = (mounts.lines())
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(4) == Some(&"/"))
        .expect("the container's root mount");
    assert!(
        root[5].split(',').any(|o| o == "ro"),
        "on a read-only root filesystem: {root:?}"
    );
    let ok = std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// An Aurora cluster's lifecycle under the chart's RBAC: a DBClusterParameterGroup, a DBCluster
/// that refers to it and a member DBInstance that refers to the cluster, each Ready, an Integration
/// of the cluster made, changed and deleted, then the rest deleted (the member first; the cluster
/// without a final snapshot; the group).
async fn aurora_lifecycle(client: &Client, ns: &str) {
    let groups: Api<DBClusterParameterGroup> = Api::namespaced(client.clone(), ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), ns);
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), ns);
    let group: DBClusterParameterGroup = serde_json::from_value(json!({
        "metadata": {"name": "coffee-aurora-params"},
        "spec": {"dbClusterParameterGroupName": unique("coffee-aurora-params"),
                 "family": "aurora-mysql8.0", "description": "Coffee Manage Aurora settings",
                 "parameters": {"time_zone": "UTC"}},
    }))
    .unwrap();
    groups.create(&PostParams::default(), &group).await.unwrap();
    let cluster: DBCluster = serde_json::from_value(json!({
        "metadata": {"name": "coffee-aurora"},
        "spec": {"dbClusterIdentifier": unique("coffee-aurora"), "engine": "aurora-mysql",
                 "masterUsername": "admin", "deletionPolicy": "Delete",
                 "masterUserPassword": {"name": "coffee-db-password", "key": "password"},
                 "dbClusterParameterGroupRef": {"name": "coffee-aurora-params"}},
    }))
    .unwrap();
    clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
    let member: DBInstance = serde_json::from_value(json!({
        "metadata": {"name": "coffee-aurora-writer"},
        "spec": {"dbInstanceIdentifier": unique("coffee-aurora-w"), "engine": "aurora-mysql",
                 "dbInstanceClass": "db.t3.medium", "dbClusterRef": {"name": "coffee-aurora"}},
    }))
    .unwrap();
    instances
        .create(&PostParams::default(), &member)
        .await
        .unwrap();
    common::wait_object(&clusters, "coffee-aurora", "the cluster Ready", |c| {
        common::object_condition(c, "Ready").is_some_and(|r| r.0 == "True")
    })
    .await;
    wait_dbi(
        &instances,
        "coffee-aurora-writer",
        "the member Ready",
        TIMEOUT,
        is_ready,
    )
    .await;
    crate::options::integration_lifecycle(client, ns).await;
    common::delete_and_wait(&instances, "coffee-aurora-writer").await;
    clusters
        .delete("coffee-aurora", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&clusters, "coffee-aurora").await;
    groups
        .delete("coffee-aurora-params", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&groups, "coffee-aurora-params").await;
}

#[tokio::test]
async fn two_replicas_cluster_wide_and_the_standby_takes_over() {
    // The other tests, which only read the cluster, start at the same time and take the lock
    // first: taken first, this test would hold them all back until it is done.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let _alone = crate::CLUSTER.write().await;
    common::node();
    let client = common::client_with_crd().await;
    let release_ns = common::namespace(&client, "rds-system").await;
    let ns = common::namespace(&client, "coffee").await;
    common::aws_secret(&client, &release_ns).await;
    install(
        "rds-operator-ha",
        &release_ns,
        &[
            "replicaCount=2".to_owned(),
            "leaderElection.leaseDuration=6s".to_owned(),
        ],
    );
    common::wait_available(&client, &release_ns, "rds-operator-ha", 2).await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), &release_ns);
    let holder = |lease: &Lease| lease.spec.as_ref()?.holder_identity.clone();
    let leader = wait_for("a leader", TIMEOUT, || async {
        holder(&leases.get("rds-operator-ha-leader").await.ok()?)
    })
    .await;
    coffee_manage(&client, &ns).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    wait_dbi(&api, "coffee-db", "Ready, cluster-wide", TIMEOUT, is_ready).await;

    // The leader's Pod goes; the standby takes the Lease and acts.
    let started = Instant::now();
    Api::<Pod>::namespaced(client.clone(), &release_ns)
        .delete(&leader, &DeleteParams::default())
        .await
        .expect("delete the leader Pod");
    let next = wait_for("the standby to lead", TIMEOUT, || async {
        let h = holder(&leases.get("rds-operator-ha-leader").await.ok()?)?;
        (h != leader).then_some(h)
    })
    .await;
    let took_over = started.elapsed();
    api.patch(
        "coffee-db",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"dbInstanceClass": "db.t3.small"}})),
    )
    .await
    .unwrap();
    let id = api
        .get("coffee-db")
        .await
        .unwrap()
        .spec
        .db_instance_identifier
        .unwrap();
    common::wait_class(&common::rds().await, &id, "db.t3.small").await;
    eprintln!(
        "leader {leader} deleted: {next} leads after {:.1} s, its first change reached RDS after {:.1} s",
        took_over.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    // The rest of a full lifecycle of the three kinds: a DBParameterGroup made, edited and
    // deleted; the DBInstance and its DBSubnetGroup deleted.
    let groups: Api<DBParameterGroup> = Api::namespaced(client.clone(), &ns);
    let group: DBParameterGroup = serde_json::from_value(json!({
        "metadata": {"name": "coffee-params"},
        "spec": {
            "dbParameterGroupName": unique("coffee-params"),
            "family": "mysql8.0",
            "description": "Coffee Manage MySQL settings",
            "parameters": {"max_connections": "150"},
        }
    }))
    .unwrap();
    groups.create(&PostParams::default(), &group).await.unwrap();
    let ready = |g: &DBParameterGroup| {
        common::object_condition(g, "Ready").is_some_and(|c| c.0 == "True")
            && g.status.as_ref().unwrap().reported.observed_generation == g.metadata.generation
    };
    common::wait_object(&groups, "coffee-params", "Ready", ready).await;
    let patch = json!({"spec": {"parameters": {"max_connections": "200"}}});
    groups
        .patch(
            "coffee-params",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .unwrap();
    common::wait_object(&groups, "coffee-params", "Ready after an edit", ready).await;
    let rds_group = groups.get("coffee-params").await.unwrap().name_in_rds();
    let patch = json!({"spec": {"dbParameterGroupRef": {"name": "coffee-params"}}});
    api.patch("coffee-db", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let rds = common::rds().await;
    wait_for(
        "the instance to use the parameter group",
        TIMEOUT,
        || async {
            let i = common::describe(&rds, &id).await?;
            (i.db_parameter_groups().iter())
                .any(|g| g.db_parameter_group_name() == Some(rds_group.as_str()))
                .then_some(())
        },
    )
    .await;
    // A rotation: the connection Secret is rewritten.
    Api::<Secret>::namespaced(client.clone(), &ns)
        .patch(
            "coffee-db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "Rotated-Coffee-2026"}})),
        )
        .await
        .unwrap();
    wait_for(
        "the connection Secret to carry the new password",
        TIMEOUT,
        || async {
            (connection(&client, &ns)
                .await
                .get("APP_DB_PASSWORD")
                .map(String::as_str)
                == Some("Rotated-Coffee-2026"))
            .then_some(())
        },
    )
    .await;
    aurora_lifecycle(&client, &ns).await;
    // The snapshot kinds', the cluster kinds', the option group's and proxy's, the event
    // subscription's and the shard group's lifecycles, at once: they share nothing.
    tokio::join!(
        snapshot_lifecycle(&client, &ns),
        cluster_kinds_lifecycle(&client, &ns),
        crate::options::option_group_and_proxy_lifecycle(&client, &ns),
        crate::options::event_subscription_lifecycle(&client, &ns),
        crate::options::shard_group_lifecycle(&client, &ns),
        user_lifecycle(&client, &ns)
    );
    common::delete_and_wait(&api, "coffee-db").await;
    groups
        .delete("coffee-params", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&groups, "coffee-params").await;
    let subnets: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    subnets
        .delete("coffee-db-subnets", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&subnets, "coffee-db-subnets").await;

    // Another account, reached from a source Secret in the release's namespace through a role:
    // a DBParameterGroup placed there, the account's status, its deletion.
    let account = unique("node-account");
    let role = common::create_role("111111111111", &account, Some("node-external-id"));
    let accounts: Api<AWSAccount> = Api::all(client.clone());
    let spec = json!({
        "sourceCredentials": {"secretRef": {"name": "aws"}},
        "assumeRoleChain": [{"roleARN": role, "externalID": "node-external-id"}],
        "regions": ["eu-west-1"],
        "namespaceSelector": {"names": [ns]},
    });
    let object: AWSAccount =
        serde_json::from_value(json!({"metadata": {"name": account}, "spec": spec})).unwrap();
    accounts
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let far_name = unique("far-params");
    let far: DBParameterGroup = serde_json::from_value(json!({
        "metadata": {"name": "far-params"},
        "spec": {
            "dbParameterGroupName": far_name,
            "accountRef": {"name": account},
            "region": "eu-west-1",
            "family": "mysql8.0",
            "description": "in another account",
        }
    }))
    .unwrap();
    groups.create(&PostParams::default(), &far).await.unwrap();
    common::wait_object(&groups, "far-params", "Ready in another account", ready).await;
    let there = common::rds_in(&role, Some("node-external-id"), "eu-west-1").await;
    let found = (there.describe_db_parameter_groups())
        .db_parameter_group_name(&far_name)
        .send()
        .await;
    assert!(
        found.is_ok(),
        "the group is in account 111111111111, eu-west-1: {found:?}"
    );
    wait_for("the account's status", TIMEOUT, || async {
        let status = accounts.get(&account).await.ok()?.status?;
        (status.account_id.as_deref() == Some("111111111111") && status.resources == Some(1))
            .then_some(())
    })
    .await;
    groups
        .delete("far-params", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&groups, "far-params").await;
    accounts
        .delete(&account, &DeleteParams::default())
        .await
        .unwrap();
    wait_for("the account gone", TIMEOUT, || async {
        accounts
            .get_opt(&account)
            .await
            .ok()?
            .is_none()
            .then_some(())
    })
    .await;

    // Under the chart's ClusterRole, nothing was refused, and every verb of it was used.
    let requests = common::audited(&release_ns, "rds-operator-ha");
    let refused: Vec<_> = requests.iter().filter(|r| r.code == 403).collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    let used = |group: &str, resource: &str, verb: &str| {
        (requests.iter()).any(|r| r.group == group && r.resource == resource && r.verb == verb)
    };
    let mut unused = Vec::new();
    for (group, resources, verbs) in granted(&release_ns, "rds-operator-ha") {
        for resource in &resources {
            for verb in &verbs {
                if !used(&group, resource, verb)
                    && !admission_only(resource, verb)
                    && !elsewhere(&group, resource, verb)
                {
                    unused.push(format!("{verb} {group}/{resource}"));
                }
            }
        }
    }
    assert!(unused.is_empty(), "granted and never used: {unused:?}");
    let (ok, out, err) =
        common::helm(&["uninstall", "rds-operator-ha", "--namespace", &release_ns]);
    assert!(ok, "helm uninstall: {out}{err}");
}

/// A grant no request uses, only an admission check: `update` of a kind's finalizers
/// subresource lets the operator set blockOwnerDeletion on the Secrets it owns, where the
/// OwnerReferencesPermissionEnforcement admission plugin runs.
fn admission_only(resource: &str, verb: &str) -> bool {
    resource.ends_with("/finalizers") && verb == "update"
}

/// The example's reporting user of the Coffee Manage database, made by the operator's Pod logged
/// in as the master user, Ready with its connection Secret, then dropped with the object, under
/// the chart's RBAC.
async fn user_lifecycle(client: &Client, ns: &str) {
    let users: Api<DBUser> = Api::namespaced(client.clone(), ns);
    let user: DBUser = read_example("dbuser.yaml");
    (users.create(&PostParams::default(), &user).await).expect("create the DBUser");
    let ready =
        |u: &DBUser| common::object_condition(u, "Ready").is_some_and(|(s, _, _)| s == "True");
    common::wait_object(&users, "coffee-reporting", "the DBUser Ready", ready).await;
    let secret = common::secret_data(client, ns, "coffee-reporting-connection")
        .await
        .expect("the DBUser's connection Secret");
    assert_eq!(secret["APP_DB_USER"], "reporting");
    users
        .delete("coffee-reporting", &DeleteParams::default())
        .await
        .expect("delete the DBUser");
    common::wait_object_gone(&users, "coffee-reporting").await;
}

/// A DBSnapshot of the Coffee Manage database and a copy of it (its source read by name), each
/// Ready, then deleted with their snapshots, under the chart's RBAC.
async fn snapshot_lifecycle(client: &Client, ns: &str) {
    let snapshots: Api<DBSnapshot> = Api::namespaced(client.clone(), ns);
    let specs = [
        ("coffee-before", json!({"source": {"name": "coffee-db"}})),
        (
            "coffee-copy",
            json!({"copyFrom": {"name": "coffee-before"}}),
        ),
    ];
    let ready =
        |s: &DBSnapshot| common::object_condition(s, "Ready").is_some_and(|c| c.0 == "True");
    for (name, spec) in specs {
        let mut spec = spec;
        spec["dbSnapshotIdentifier"] = json!(unique(name));
        let object: DBSnapshot =
            serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap();
        snapshots
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        common::wait_object(&snapshots, name, "Ready", ready).await;
    }
    for name in ["coffee-copy", "coffee-before"] {
        snapshots
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
        common::wait_object_gone(&snapshots, name).await;
    }
}

/// A DBClusterSnapshot of a cluster granted to the namespace (its restorable-by tag), a copy of it
/// (its source read by name) and an empty GlobalCluster, each Ready, with a secondary DBCluster
/// that names it (read by name) and waits and a DBClusterEndpoint of that cluster that waits too,
/// then deleted, under the chart's RBAC.
async fn cluster_kinds_lifecycle(client: &Client, ns: &str) {
    let rds = common::rds().await;
    let cluster = unique("node-aurora");
    (rds.create_db_cluster())
        .db_cluster_identifier(&cluster)
        .engine("aurora-mysql")
        .master_username("admin")
        .master_user_password("Node-Aurora-2026")
        .tags(
            aws_sdk_rds::types::Tag::builder()
                .key(rds_operator::crd::RESTORABLE_BY_TAG)
                .value(ns)
                .build(),
        )
        .send()
        .await
        .expect("a cluster granted to the namespace");
    let ready = |c: &Option<(String, String, String)>| c.as_ref().is_some_and(|c| c.0 == "True");
    let snapshots: Api<DBClusterSnapshot> = Api::namespaced(client.clone(), ns);
    let spec = json!({"dbClusterSnapshotIdentifier": unique("node-csnap"),
                      "source": {"dbClusterIdentifier": cluster}});
    let object: DBClusterSnapshot =
        serde_json::from_value(json!({"metadata": {"name": "aurora-before"}, "spec": spec}))
            .unwrap();
    snapshots
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    common::wait_object(&snapshots, "aurora-before", "Ready", |s| {
        ready(&common::object_condition(s, "Ready"))
    })
    .await;
    // A copy of it, its source read by name.
    let spec = json!({"dbClusterSnapshotIdentifier": unique("node-ccopy"),
                      "copyFrom": {"name": "aurora-before"}});
    let object: DBClusterSnapshot =
        serde_json::from_value(json!({"metadata": {"name": "aurora-copy"}, "spec": spec})).unwrap();
    snapshots
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    common::wait_object(&snapshots, "aurora-copy", "Ready", |s| {
        ready(&common::object_condition(s, "Ready"))
    })
    .await;
    (snapshots.delete("aurora-copy", &DeleteParams::default()))
        .await
        .unwrap();
    common::wait_object_gone(&snapshots, "aurora-copy").await;
    let globals: Api<GlobalCluster> = Api::namespaced(client.clone(), ns);
    let spec = json!({"globalClusterIdentifier": unique("node-gdb"), "engine": "aurora-mysql"});
    let object: GlobalCluster =
        serde_json::from_value(json!({"metadata": {"name": "aurora-global"}, "spec": spec}))
            .unwrap();
    globals
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    common::wait_object(&globals, "aurora-global", "Ready", |g| {
        ready(&common::object_condition(g, "Ready"))
    })
    .await;
    // A secondary naming it (read by name): it waits, as an empty global database has no primary
    // whose credentials its Secret would carry, and is deleted having made nothing.
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), ns);
    let spec = json!({"engine": "aurora-mysql", "region": "eu-west-1",
                      "globalClusterRef": {"name": "aurora-global"}});
    let object: DBCluster =
        serde_json::from_value(json!({"metadata": {"name": "aurora-eu"}, "spec": spec})).unwrap();
    clusters
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    common::wait_object(&clusters, "aurora-eu", "waiting for its primary", |c| {
        common::object_condition(c, "Synced").is_some_and(|s| s.1 == "ReferencesUnresolved")
    })
    .await;
    // A custom endpoint of it waits too (its cluster is not Ready), and is deleted.
    let endpoints: Api<DBClusterEndpoint> = Api::namespaced(client.clone(), ns);
    let spec = json!({"dbClusterRef": {"name": "aurora-eu"}, "endpointType": "READER",
                      "region": "eu-west-1"});
    let object: DBClusterEndpoint =
        serde_json::from_value(json!({"metadata": {"name": "aurora-eu-reports"}, "spec": spec}))
            .unwrap();
    endpoints
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    common::wait_object(
        &endpoints,
        "aurora-eu-reports",
        "waiting for its cluster",
        |e| common::object_condition(e, "Synced").is_some_and(|s| s.1 == "ReferencesUnresolved"),
    )
    .await;
    (endpoints.delete("aurora-eu-reports", &DeleteParams::default()))
        .await
        .unwrap();
    common::wait_object_gone(&endpoints, "aurora-eu-reports").await;
    (clusters.delete("aurora-eu", &DeleteParams::default()))
        .await
        .unwrap();
    common::wait_object_gone(&clusters, "aurora-eu").await;
    (snapshots.delete("aurora-before", &DeleteParams::default()))
        .await
        .unwrap();
    common::wait_object_gone(&snapshots, "aurora-before").await;
    globals
        .delete("aurora-global", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&globals, "aurora-global").await;
}

/// A grant used on a path this lifecycle does not take: `get` of a DBInstance, to learn whether
/// the DBInstance that an RDS instance's ownership tags name still exists before another takes
/// the instance over (`read::owner_alive`; the take-over tests cover it); `delete` of a DBCluster
/// and of its member DBInstances, when a clone expires (expireAfter; integration `clones.rs`
/// covers it).
fn elsewhere(group: &str, resource: &str, verb: &str) -> bool {
    matches!(
        (group, resource, verb),
        ("rds.operator.rs", "dbinstances", "get")
            | ("rds.operator.rs", "dbinstances", "delete")
            | ("rds.operator.rs", "dbclusters", "delete")
    )
}

/// The rules the release's ClusterRole and Roles grant (API group, resources, verbs), as
/// `helm get manifest` shows them.
fn granted(release_ns: &str, release: &str) -> Vec<(String, Vec<String>, Vec<String>)> {
    let (ok, out, err) = common::helm(&["get", "manifest", release, "--namespace", release_ns]);
    assert!(ok, "helm get manifest: {err}");
    let mut rules = Vec::new();
    for doc in out.split("\n---") {
        let Ok(v) = serde_yaml::from_str::<serde_json::Value>(doc) else {
            continue;
        };
        if !matches!(v["kind"].as_str(), Some("ClusterRole" | "Role")) {
            continue;
        }
        for rule in v["rules"].as_array().cloned().unwrap_or_default() {
            let list = |key: &str| -> Vec<String> {
                (rule[key].as_array().cloned().unwrap_or_default().iter())
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            };
            for group in list("apiGroups") {
                rules.push((group, list("resources"), list("verbs")));
            }
        }
    }
    assert!(!rules.is_empty(), "the release has RBAC rules");
    rules
}
