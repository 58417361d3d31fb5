//! The DBProxy kind: the Coffee Manage database (a real server) behind an RDS Proxy made with its
//! targets in one object. A row written through the proxy's connection Secret is read through the
//! instance's; a password rotation reaches the proxy's Secrets Manager secret, and the next
//! connection through the proxy logs in with the new password; a target removed from the spec is
//! deregistered once; deleting the proxy deletes its secret and leaves the databases.

use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbproxy::DBProxy;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, calls, dbinstance, is_ready, mariadb_keys, object_condition,
    secret_data, setup, unique, wait_dbi, wait_for, wait_object, wait_object_gone,
};
use crate::engines::{SUPPLIERS, real};

const ROTATED: &str = "Rotated-Proxy-Passw0rd-2026";

/// The DBProxy `name` over the DBInstances db and other, with an IAM role of its own that may
/// read its secret (the emulator holds a proxy to it, as RDS does).
fn proxy(ns: &str, name: &str, subnets: &[String]) -> DBProxy {
    let role = common::create_proxy_role(&unique("px-role"), ns);
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBProxy",
        "metadata": {"name": "coffee-proxy"},
        "spec": {
            "dbProxyName": name,
            "engineFamily": "MYSQL",
            "targets": [{"dbInstanceRef": {"name": "db"}}, {"dbInstanceRef": {"name": "other"}}],
            "vpcSubnetIDs": subnets,
            "roleARN": role,
            "connectionSecret": {
                "name": "proxy-connection",
                "extraKeys": {"APP_DB_HOST": "{{ host }}", "APP_DB_PASSWORD": "{{ password }}"},
            },
        },
    }))
    .expect("valid DBProxy")
}

fn synced(p: &DBProxy) -> bool {
    object_condition(p, "Ready").is_some_and(|c| c.0 == "True")
        && object_condition(p, "Synced").is_some_and(|c| c.1 == "Synced")
        && p.status.as_ref().unwrap().reported.observed_generation == p.metadata.generation
}

/// The proxy's Secrets Manager secret's username and password, as the emulator holds them.
async fn secret_value(name: &str) -> Option<(String, String)> {
    let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(common::aws_endpoint())
        .region(aws_config::Region::new(common::region()))
        .load()
        .await;
    let sm = aws_sdk_secretsmanager::Client::new(&config);
    let out = sm.get_secret_value().secret_id(name).send().await.ok()?;
    let parsed: serde_json::Value = serde_json::from_str(out.secret_string()?).ok()?;
    Some((
        parsed["username"].as_str()?.to_owned(),
        parsed["password"].as_str()?.to_owned(),
    ))
}

#[tokio::test]
async fn the_coffee_manage_database_behind_a_proxy_follows_rotation_and_its_targets() {
    let (client, ns, api, rds) = setup("proxy").await;
    let _operator = Operator::start(&ns);
    let (id, other, name) = (unique("px-db"), unique("px-other"), unique("px"));
    api.create(
        &PostParams::default(),
        &dbinstance("db", &id, real(json!({}))),
    )
    .await
    .expect("create db");
    api.create(
        &PostParams::default(),
        &dbinstance("other", &other, json!({})),
    )
    .await
    .expect("create other");
    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), &ns);
    let subnets = common::coffee_subnets(&rds).await;
    (proxies
        .create(&PostParams::default(), &proxy(&ns, &name, &subnets))
        .await)
        .expect("create DBProxy");
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let ready = wait_object(&proxies, "coffee-proxy", "Ready with its targets", |p| {
        synced(p) && p.status.as_ref().unwrap().targets.len() == 2
    })
    .await;
    // Ready means the connection Secret holds what status reports: read at once, not waited for.
    let at_ready = (secret_data(&client, &ns, "proxy-connection").await)
        .expect("the proxy's connection Secret, once it is Ready");
    assert_eq!(
        Some(&at_ready["host"]),
        ready.status.as_ref().unwrap().endpoint.as_ref()
    );
    let sm_name = format!("rds-operator/{ns}/{name}");
    let value = secret_value(&sm_name).await.expect("the proxy's secret");
    assert_eq!(value, ("admin".into(), "Sup3r-Secret-Passw0rd".into()));

    // A row written through the proxy's Secret is read through the instance's.
    let through_proxy = wait_for("the proxy's connection Secret", TIMEOUT, || async {
        secret_data(&client, &ns, "proxy-connection").await
    })
    .await;
    let instance = secret_data(&client, &ns, "db-connection")
        .await
        .expect("the instance's Secret");
    assert_ne!(
        through_proxy["host"], instance["host"],
        "the proxy's own endpoint"
    );
    let (ok, out) = mariadb_keys(&through_proxy, &through_proxy["APP_DB_PASSWORD"], SUPPLIERS);
    assert!(ok, "write through the proxy: {out}");
    let (ok, out) = mariadb_keys(
        &instance,
        &instance["password"],
        "SELECT city FROM suppliers",
    );
    assert!(
        ok && out.trim() == "Seattle",
        "read through the instance: {out}"
    );

    // The instance's password rotates: the proxy's secret follows, and the next connection
    // through the proxy logs in with the new password.
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client.clone(), &ns);
    let rotate = json!({"stringData": {"password": ROTATED}});
    (secrets
        .patch(
            "db-password",
            &PatchParams::default(),
            &Patch::Merge(rotate),
        )
        .await)
        .expect("rotate");
    wait_for(
        "the proxy's secret to hold the new password",
        TIMEOUT,
        || async {
            let v = secret_value(&sm_name).await?;
            (v.1 == ROTATED).then_some(())
        },
    )
    .await;
    let s = wait_for(
        "the proxy's Secret to hold the new password",
        TIMEOUT,
        || async {
            let s = secret_data(&client, &ns, "proxy-connection").await?;
            (s["password"] == ROTATED).then_some(s)
        },
    )
    .await;
    wait_for("a login through the proxy", TIMEOUT, || async {
        let (ok, out) = mariadb_keys(&s, ROTATED, "SELECT COUNT(*) FROM suppliers");
        (ok && out.trim() == "1").then_some(())
    })
    .await;

    // A target removed from the spec is deregistered, once; the instance stays.
    let patch = json!({"spec": {"targets": [{"dbInstanceRef": {"name": "db"}}]}});
    (proxies
        .patch(
            "coffee-proxy",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await)
        .expect("remove a target");
    wait_object(&proxies, "coffee-proxy", "one target", |p| {
        synced(p) && p.status.as_ref().unwrap().targets.len() == 1
    })
    .await;
    assert_eq!(calls(&name, "DeregisterDBProxyTargets"), 1);
    assert!(common::describe(&rds, &other).await.is_some());

    // Deleting the proxy deletes it and its secret; the databases stay.
    (proxies
        .delete("coffee-proxy", &DeleteParams::default())
        .await)
        .expect("delete");
    wait_object_gone(&proxies, "coffee-proxy").await;
    assert_eq!(calls(&name, "DeleteDBProxy"), 1);
    assert_eq!(secret_value(&sm_name).await, None, "its secret is gone");
    assert!(common::describe(&rds, &id).await.is_some());
    common::delete_and_wait(&api, "other").await;
    common::delete_and_wait(&api, "db").await;
}

/// The server a connection through `host` lands on (MariaDB's server_id) and whether it takes
/// writes (@@read_only), with the Secret's credentials.
fn server(s: &std::collections::BTreeMap<String, String>, host: &str) -> (String, String) {
    let mut keys = s.clone();
    keys.insert("host".into(), host.to_owned());
    let (ok, out) = mariadb_keys(&keys, &s["password"], "SELECT @@server_id, @@read_only");
    assert!(ok, "log in through {host}: {out}");
    let mut parts = out.split_whitespace().map(str::to_owned);
    (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    )
}

#[tokio::test]
async fn an_aurora_proxy_has_a_read_only_endpoint_of_its_own_that_reaches_a_reader() {
    use crate::clusters::{cluster, member, ready as cluster_ready};
    let (client, ns, instances, rds) = setup("pxro").await;
    let _operator = Operator::start(&ns);
    let (id, name) = (unique("pxro-c"), unique("pxro"));
    let pp = PostParams::default();
    let clusters: Api<rds_operator::dbcluster::DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters.create(&pp, &cluster(&id, real)).await).expect("the DBCluster");
    wait_object(&clusters, "coffee", "the cluster Ready", cluster_ready).await;
    for (member_name, identifier) in [("writer", unique("pxro-w")), ("reader", unique("pxro-r"))] {
        (instances
            .create(&pp, &member(member_name, &identifier, json!({})))
            .await)
            .expect("a member");
        wait_dbi(&instances, member_name, "Ready", TIMEOUT, is_ready).await;
    }
    let subnets = common::coffee_subnets(&rds).await;
    let mut p = proxy(&ns, &name, &subnets);
    p.spec.targets = serde_json::from_value(json!([{"dbClusterRef": {"name": "coffee"}}])).unwrap();
    p.spec.endpoints = serde_json::from_value(json!([{
        "name": format!("{name}-reports"),
        "targetRole": "READ_ONLY",
        "connectionSecret": {"name": "reports-db"},
    }]))
    .unwrap();
    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), &ns);
    (proxies.create(&pp, &p).await).expect("create DBProxy");
    let made = wait_object(&proxies, "coffee-proxy", "Ready with its endpoint", |p| {
        synced(p)
            && (p.status.as_ref().unwrap().endpoints.iter())
                .any(|e| e.state.as_deref() == Some("available"))
    })
    .await;
    assert_eq!(calls(&name, "CreateDBProxyEndpoint"), 1);
    let status = made.status.expect("status");
    let reports = wait_for("the endpoint's Secret", TIMEOUT, || async {
        secret_data(&client, &ns, "reports-db").await
    })
    .await;
    let writes = secret_data(&client, &ns, "proxy-connection")
        .await
        .expect("the proxy's Secret");
    assert_eq!(
        Some(&reports["host"]),
        status.endpoints[0].endpoint.as_ref()
    );
    assert_ne!(reports["host"], writes["host"]);
    // The read/write endpoint reaches the writer, the read-only one a reader.
    let (writer, writer_ro) = server(&writes, &writes["host"]);
    let (reader, reader_ro) = server(&reports, &reports["host"]);
    assert_ne!(
        writer, reader,
        "the read-only endpoint reaches another server"
    );
    assert_eq!((writer_ro.as_str(), reader_ro.as_str()), ("0", "1"));

    // Removed from the spec, the endpoint is deleted; so is the proxy with the object.
    let patch = json!({"spec": {"endpoints": []}});
    (proxies
        .patch(
            "coffee-proxy",
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await)
        .expect("remove the endpoint");
    wait_object(&proxies, "coffee-proxy", "no endpoint", |p| {
        synced(p) && p.status.as_ref().unwrap().endpoints.is_empty()
    })
    .await;
    (proxies
        .delete("coffee-proxy", &DeleteParams::default())
        .await)
        .expect("delete");
    wait_object_gone(&proxies, "coffee-proxy").await;
    for member_name in ["reader", "writer"] {
        common::delete_and_wait(&instances, member_name).await;
    }
    (clusters.delete("coffee", &DeleteParams::default()).await).expect("delete the cluster");
    wait_object_gone(&clusters, "coffee").await;
}

/// A DBProxy of engineFamily POSTGRESQL over a MySQL DBInstance: RDS would refuse the target
/// with a code that otherwise means "busy" (InvalidDBInstanceStateFault, "is not of engine
/// family"), which the operator once told apart by those words. Now it reads the target's engine
/// from its DBInstance and asks for nothing: InvalidSpec naming the target and engineFamily,
/// Stalled, and no RegisterDBProxyTargets reaches the emulator while the operator polls on.
/// Changed: it was InvalidParameter after one refused RegisterDBProxyTargets.
#[tokio::test]
async fn a_target_of_another_engine_family_is_a_spec_error_that_names_the_field() {
    let OneTarget {
        api,
        proxies,
        operator,
        name,
        mut p,
    } = over_one_ready_db("pxf").await;
    p.spec.engine_family = rds_operator::dbproxy::EngineFamily::Postgresql;
    let message = refused_as(&proxies, &p, "InvalidSpec").await;
    assert!(
        message.contains("targets[0]") && message.contains("is not of engineFamily POSTGRESQL"),
        "{message}"
    );
    let tried = common::not_retried(&operator, &name, "RegisterDBProxyTargets").await;
    assert_eq!(tried, 0, "no RegisterDBProxyTargets");

    (proxies.delete("coffee-proxy", &DeleteParams::default()))
        .await
        .expect("delete the proxy");
    wait_object_gone(&proxies, "coffee-proxy").await;
    common::delete_and_wait(&api, "db").await;
}

/// Creates the DBProxy `p` (coffee-proxy) and waits for it to be refused for `reason`, Stalled;
/// Synced's message.
async fn refused_as(proxies: &Api<DBProxy>, p: &DBProxy, reason: &str) -> String {
    (proxies.create(&PostParams::default(), p))
        .await
        .expect("create the proxy");
    let refused = wait_object(proxies, "coffee-proxy", reason, |p| {
        object_condition(p, "Synced").is_some_and(|c| c.1 == reason)
    })
    .await;
    let stalled = object_condition(&refused, "Stalled").map(|c| c.0);
    assert_eq!(stalled.as_deref(), Some("True"), "{reason}: Stalled");
    object_condition(&refused, "Synced").unwrap().2
}

/// A namespace with the DBInstance db Ready under its operator, and a DBProxy (not made yet)
/// over it alone, of RDS name `name`.
struct OneTarget {
    api: Api<DBInstance>,
    proxies: Api<DBProxy>,
    operator: Operator,
    name: String,
    p: DBProxy,
}

async fn over_one_ready_db(prefix: &str) -> OneTarget {
    let (client, ns, api, rds) = setup(&format!("proxy-{prefix}")).await;
    let operator = Operator::start(&ns);
    let (id, name) = (unique(&format!("{prefix}-db")), unique(prefix));
    (api.create(&PostParams::default(), &dbinstance("db", &id, json!({}))))
        .await
        .expect("create db");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), &ns);
    let mut p = proxy(&ns, &name, &common::coffee_subnets(&rds).await);
    p.spec.targets.truncate(1);
    OneTarget {
        api,
        proxies,
        operator,
        name,
        p,
    }
}

/// A roleARN that is not the namespace's (no /rds-operator/<namespace>/ path, no --grant-roles)
/// is refused before any call, as exportTo.iamRole is (issue 77): RoleNotGranted naming roleARN,
/// Stalled, and no CreateDBProxy reaches the emulator while the operator looks at it again.
#[tokio::test]
async fn a_role_that_is_not_the_namespaces_is_refused_with_no_call() {
    let OneTarget {
        api,
        proxies,
        operator,
        name,
        mut p,
    } = over_one_ready_db("pxo").await;
    // Another team's role: it trusts RDS and reads secrets, but it is not under this namespace.
    p.spec.role_arn = common::create_proxy_role(&unique("px-role"), "payroll");
    let message = refused_as(&proxies, &p, "RoleNotGranted").await;
    assert!(
        message.contains("roleARN") && message.contains("payroll"),
        "{message}"
    );
    let none = || async { common::calls(&name, "CreateDBProxy") == 0 };
    let object = ("DBProxy", "coffee-proxy");
    common::holds_over_pokes(&operator, &proxies, object, "no CreateDBProxy", none).await;

    (proxies.delete("coffee-proxy", &DeleteParams::default()))
        .await
        .expect("delete the proxy");
    wait_object_gone(&proxies, "coffee-proxy").await;
    common::delete_and_wait(&api, "db").await;
}

/// A DBProxy `meta` (RDS name `name`) over the DBInstance `db` alone, its connection Secret `secret`.
fn one_target_proxy(
    ns: &str,
    (meta, name): (&str, &str),
    secret: &str,
    subnets: &[String],
) -> DBProxy {
    let mut p = proxy(ns, name, subnets);
    p.metadata.name = Some(meta.to_owned());
    p.spec.targets.truncate(1);
    (p.spec
        .connection_secret
        .as_mut()
        .expect("a connection Secret"))
    .name = secret.to_owned();
    p
}

/// Ready means a connection goes through: ten proxies in front of one database, each connected to
/// through its Secret once, the moment it turns Ready (read every 100 ms), with no retry. A proxy
/// RDS reports available before its target registered refused that connection.
#[tokio::test]
async fn ten_proxies_each_take_a_connection_the_moment_they_turn_ready() {
    let (client, ns, api, rds) = setup("proxy-ready").await;
    let _operator = Operator::start(&ns);
    let id = unique("pxr-db");
    (api.create(
        &PostParams::default(),
        &dbinstance("db", &id, real(json!({}))),
    ))
    .await
    .expect("create db");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), &ns);
    let subnets = common::coffee_subnets(&rds).await;
    let names: Vec<String> = (0..10).map(|i| format!("proxy-{i}")).collect();
    for meta in &names {
        let secret = format!("{meta}-connection");
        let p = one_target_proxy(&ns, (meta, &unique("pxr")), &secret, &subnets);
        (proxies.create(&PostParams::default(), &p).await).expect("create a DBProxy");
    }
    let mut connected = BTreeMap::new();
    let start = std::time::Instant::now();
    while connected.len() < names.len() && start.elapsed() < TIMEOUT {
        for p in (proxies.list(&Default::default()).await)
            .expect("list")
            .items
        {
            let meta = p.metadata.name.clone().unwrap_or_default();
            let ready = object_condition(&p, "Ready").is_some_and(|c| c.0 == "True");
            if !ready || connected.contains_key(&meta) {
                continue;
            }
            let secret = secret_data(&client, &ns, &format!("{meta}-connection"))
                .await
                .expect("a Ready proxy's connection Secret");
            // Connected at once, beside the polling of the others (the client blocks).
            let attempt = tokio::task::spawn_blocking(move || {
                common::mariadb_keys(&secret, &secret["password"], "SELECT 1")
            });
            connected.insert(meta, attempt);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        connected.len(),
        10,
        "ten proxies turned Ready: {:?}",
        connected.keys()
    );
    let mut outcomes = BTreeMap::new();
    for (meta, attempt) in connected {
        outcomes.insert(meta, attempt.await.expect("the connection attempt"));
    }
    let refused: Vec<_> = (outcomes.iter()).filter(|(_, (ok, _))| !ok).collect();
    assert!(refused.is_empty(), "refused at Ready: {refused:?}");
    for meta in &names {
        (proxies.delete(meta, &DeleteParams::default()).await).expect("delete a proxy");
    }
    for meta in &names {
        wait_object_gone(&proxies, meta).await;
    }
    common::delete_and_wait(&api, "db").await;
}

/// The operator's Kubernetes permissions as shipped (deploy/role.yaml's ClusterRoles), with
/// `secrets` verbs as given, bound to the ServiceAccount `sa` of `own` (which also may read and
/// make the hash key Secret there); the ClusterRole names, to change or remove.
async fn shipped_rbac(client: &kube::Client, own: &str, sa: &str, secrets: &[&str]) -> Vec<String> {
    use k8s_openapi::api::core::v1::ServiceAccount;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use serde::Deserialize;
    let pp = PostParams::default();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), own);
    let account = serde_json::from_value(json!({"metadata": {"name": sa}})).unwrap();
    accounts
        .create(&pp, &account)
        .await
        .expect("a ServiceAccount");
    let subject = json!([{"kind": "ServiceAccount", "name": sa, "namespace": own}]);
    let text = std::fs::read_to_string("deploy/role.yaml").expect("deploy/role.yaml");
    let (roles, bindings) = (
        Api::<ClusterRole>::all(client.clone()),
        Api::<ClusterRoleBinding>::all(client.clone()),
    );
    let mut names = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let doc = serde_yaml::Value::deserialize(doc).expect("YAML");
        if doc["kind"].as_str() != Some("ClusterRole") {
            continue;
        }
        let mut role: ClusterRole = serde_yaml::from_value(doc).expect("a ClusterRole");
        let name = unique("rds-operator-rbac");
        role.metadata = serde_json::from_value(json!({"name": name})).unwrap();
        for rule in role.rules.iter_mut().flatten() {
            if rule.resources.as_ref().is_some_and(|r| r == &["secrets"]) {
                rule.verbs = secrets.iter().map(|v| v.to_string()).collect();
            }
        }
        roles.create(&pp, &role).await.expect("a ClusterRole");
        let binding = json!({"metadata": {"name": name}, "subjects": subject,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}});
        let binding = serde_json::from_value(binding).unwrap();
        bindings
            .create(&pp, &binding)
            .await
            .expect("a ClusterRoleBinding");
        names.push(name);
    }
    let role = json!({"metadata": {"name": "hash-key"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "create"]}]});
    let role: Role = serde_json::from_value(role).unwrap();
    (Api::<Role>::namespaced(client.clone(), own)
        .create(&pp, &role)
        .await)
        .expect("a Role");
    let binding = json!({"metadata": {"name": "hash-key"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "hash-key"}});
    let binding: RoleBinding = serde_json::from_value(binding).unwrap();
    (Api::<RoleBinding>::namespaced(client.clone(), own)
        .create(&pp, &binding)
        .await)
        .expect("a RoleBinding");
    names
}

/// The proxy's connection Secret cannot be made (the operator's RBAC grants no `create` on
/// Secrets): the proxy is never Ready, says why (ConnectionSecretNotWritten, naming the Secret),
/// and stays so while the operator goes on reading it; once `create` is granted, the Secret is
/// written and the proxy is Ready.
#[tokio::test]
async fn a_proxy_whose_connection_secret_rbac_refuses_is_not_ready() {
    let (client, ns, api, rds) = setup("proxy-rbac").await;
    let id = unique("pxb-db");
    // The database first, with the operator's usual rights (its own Secret is made then).
    let admin = Operator::start(&ns);
    (api.create(&PostParams::default(), &dbinstance("db", &id, json!({}))))
        .await
        .expect("create db");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    drop(admin);
    let own = common::namespace(&client, "proxy-rbac-own").await;
    let roles = shipped_rbac(
        &client,
        &own,
        "rds-operator",
        &["get", "list", "watch", "patch", "delete"],
    )
    .await;
    let dir = tempfile::tempdir().expect("a directory");
    let (_, kubeconfig) =
        common::service_account_kubeconfig(&own, "rds-operator", dir.path()).await;
    let args = Operator::args(&ns, &[]);
    let operator = Operator::spawn(&args, &kubeconfig, &[("POD_NAMESPACE", own.as_str())]);

    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), &ns);
    let subnets = common::coffee_subnets(&rds).await;
    let p = one_target_proxy(
        &ns,
        ("coffee-proxy", &unique("pxb")),
        "proxy-connection",
        &subnets,
    );
    (proxies.create(&PostParams::default(), &p).await).expect("create the proxy");
    // Every status the proxy shows on its way is read: none is Ready.
    let seen = std::cell::RefCell::new(Vec::new());
    let refused = wait_for("Ready=False ConnectionSecretNotWritten", TIMEOUT, || {
        let (proxies, seen) = (proxies.clone(), &seen);
        async move {
            let p = proxies.get("coffee-proxy").await.ok()?;
            let ready = object_condition(&p, "Ready")?;
            seen.borrow_mut().push(ready.clone());
            (ready.1 == "ConnectionSecretNotWritten").then_some(ready)
        }
    })
    .await;
    assert!(
        refused.2.contains("proxy-connection") && refused.2.contains("forbidden"),
        "{refused:?}"
    );
    let failed = proxies.get("coffee-proxy").await.expect("the proxy");
    let synced_reason = object_condition(&failed, "Synced").map(|c| c.1);
    assert_eq!(synced_reason.as_deref(), Some("KubernetesForbidden"));
    // Two more passes of the proxy's, each woken by an edit and each failing again (the
    // operator's count of reconciles the API server refused moves), and still not Ready, no Secret.
    let refusals = || {
        common::operator_metric(
            &operator,
            "rds_operator_reconciles_total{result=\"Kubernetes\",kind=\"DBProxy\"",
        )
    };
    for pass in 0..2 {
        let before = refusals();
        common::annotate(&proxies, "coffee-proxy", "test/pass", &pass.to_string()).await;
        wait_for("one more pass", TIMEOUT, || {
            let (proxies, seen) = (proxies.clone(), &seen);
            let done = refusals() > before;
            async move {
                let p = proxies.get("coffee-proxy").await.ok()?;
                seen.borrow_mut().push(object_condition(&p, "Ready")?);
                done.then_some(())
            }
        })
        .await;
    }
    let seen = seen.into_inner();
    assert!(seen.iter().all(|c| c.0 == "False"), "never Ready: {seen:?}");
    assert!(
        secret_data(&client, &ns, "proxy-connection")
            .await
            .is_none()
    );

    // Granted: the Secret is written, and the proxy is Ready.
    use k8s_openapi::api::rbac::v1::ClusterRole;
    let cluster_roles = Api::<ClusterRole>::all(client.clone());
    for name in &roles {
        let mut role = cluster_roles.get(name).await.expect("the ClusterRole");
        for rule in role.rules.iter_mut().flatten() {
            if rule.resources.as_ref().is_some_and(|r| r == &["secrets"]) {
                rule.verbs.push("create".into());
            }
        }
        (cluster_roles
            .replace(name, &PostParams::default(), &role)
            .await)
            .expect("grant create");
    }
    // Woken at once (a failed pass is otherwise tried again after a backoff of up to 5 minutes).
    common::annotate(&proxies, "coffee-proxy", "test/granted", "create").await;
    let ready = wait_object(&proxies, "coffee-proxy", "Ready", synced).await;
    let secret =
        (secret_data(&client, &ns, "proxy-connection").await).expect("the Secret, at Ready");
    assert_eq!(
        Some(&secret["host"]),
        ready.status.as_ref().unwrap().endpoint.as_ref()
    );

    drop(operator);
    let _operator = Operator::start(&ns);
    (proxies
        .delete("coffee-proxy", &DeleteParams::default())
        .await)
        .expect("delete the proxy");
    wait_object_gone(&proxies, "coffee-proxy").await;
    common::delete_and_wait(&api, "db").await;
    for name in roles {
        let _ = cluster_roles.delete(&name, &DeleteParams::default()).await;
        let _ = Api::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>::all(client.clone())
            .delete(&name, &DeleteParams::default())
            .await;
    }
}
