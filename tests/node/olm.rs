//! The OLM bundle installed as OLM installs a ClusterServiceVersion, on the node: the CSV's
//! ServiceAccount, its clusterPermissions as a ClusterRole bound to it, its permissions as a Role
//! in the operator's namespace, its Deployment with the OperatorGroup's target namespace in the
//! Pod's `olm.targetNamespaces` annotation and the Subscription's `config` (the emulator's
//! endpoint, the credentials Secret), and the bundle's Service. (OLM itself is not run here:
//! docs/olm.md says why.) The operator runs under the bundle's RBAC only, reconciles the Coffee
//! Manage sample to Ready in the target namespace, and leaves another namespace's alone.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Service, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, PostParams};
use rds_operator::dbinstance::DBInstance;
use serde_json::{Value, json};

use crate::common::{self, is_ready, wait_dbi};

const TIMEOUT: Duration = Duration::from_secs(180);

fn bundle_file(name: &str) -> Value {
    let path = format!("{}/bundle/manifests/{name}", common::REPO);
    serde_yaml::from_str(&std::fs::read_to_string(path).expect("bundle file")).expect("YAML")
}

async fn create<K>(api: Api<K>, v: Value) -> K
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let object: K = serde_json::from_value(v).expect("a valid object");
    (api.create(&PostParams::default(), &object).await).expect("create")
}

#[tokio::test]
async fn the_bundle_installs_as_olm_installs_it_and_reconciles_the_sample_in_its_target_namespace()
{
    let _shared = crate::CLUSTER.read().await;
    common::node();
    let client = common::client_with_crd().await;
    let operator_ns = common::namespace(&client, "olm-operators").await;
    let target = common::namespace(&client, "coffee").await;
    let other = common::namespace(&client, "not-targeted").await;
    common::aws_secret(&client, &operator_ns).await;
    let csv = bundle_file("rds-operator.clusterserviceversion.yaml");
    let install = &csv["spec"]["install"]["spec"];
    let modes: Vec<&str> = (csv["spec"]["installModes"].as_array().unwrap().iter())
        .filter(|m| m["supported"] == true)
        .filter_map(|m| m["type"].as_str())
        .collect();
    assert!(modes.contains(&"SingleNamespace"), "{modes:?}");

    let account = install["clusterPermissions"][0]["serviceAccountName"]
        .as_str()
        .unwrap();
    let sa = json!({"metadata": {"name": account}});
    create::<ServiceAccount>(Api::namespaced(client.clone(), &operator_ns), sa).await;
    let subject = json!([{"kind": "ServiceAccount", "name": account, "namespace": operator_ns}]);
    let cluster_role = common::unique("olm-rds-operator");
    let rules = &install["clusterPermissions"][0]["rules"];
    let role = json!({"metadata": {"name": cluster_role}, "rules": rules});
    create::<ClusterRole>(Api::all(client.clone()), role).await;
    let binding = json!({"metadata": {"name": cluster_role}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_role}});
    create::<ClusterRoleBinding>(Api::all(client.clone()), binding).await;
    let rules = &install["permissions"][0]["rules"];
    let role = json!({"metadata": {"name": "rds-operator-olm"}, "rules": rules});
    create::<Role>(Api::namespaced(client.clone(), &operator_ns), role).await;
    let binding = json!({"metadata": {"name": "rds-operator-olm"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "rds-operator-olm"}});
    create::<RoleBinding>(Api::namespaced(client.clone(), &operator_ns), binding).await;
    let service = bundle_file("rds-operator-metrics_v1_service.yaml");
    create::<Service>(Api::namespaced(client.clone(), &operator_ns), service).await;

    // The Deployment as OLM writes it: the CSV's, its Pod annotated with the target namespaces, and
    // the Subscription's config (image of the catalog built here, the emulator, its credentials).
    let deployment = &install["deployments"][0];
    let name = deployment["name"].as_str().unwrap();
    let mut spec = deployment["spec"].clone();
    spec["template"]["metadata"]["annotations"]["olm.targetNamespaces"] = target.clone().into();
    let container = &mut spec["template"]["spec"]["containers"][0];
    container["image"] = "rds-operator.test/rds-operator:dev".into();
    container["imagePullPolicy"] = "Never".into();
    let env = container["env"].as_array_mut().unwrap();
    env.retain(|e| e["name"] != "AWS_REGION");
    env.extend([
        json!({"name": "AWS_ENDPOINT_URL", "value": common::emulator_from_pods()}),
        json!({"name": "AWS_REGION", "value": common::region()}),
        json!({"name": "DRIFT_INTERVAL", "value": "10s"}),
    ]);
    container["envFrom"] = json!([{"secretRef": {"name": "aws"}}]);
    let deployment = json!({"metadata": {"name": name}, "spec": spec});
    create::<Deployment>(Api::namespaced(client.clone(), &operator_ns), deployment).await;
    common::wait_available(&client, &operator_ns, name, 1).await;

    crate::node::coffee_manage(&client, &target).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &target);
    wait_dbi(
        &api,
        "coffee-db",
        "Ready under the bundle's RBAC",
        TIMEOUT,
        is_ready,
    )
    .await;

    // A namespace the OperatorGroup does not target is not watched.
    let mut db: DBInstance = crate::node::read_example("dbinstance.yaml");
    db.metadata.namespace = None;
    let elsewhere: Api<DBInstance> = Api::namespaced(client.clone(), &other);
    (elsewhere.create(&PostParams::default(), &db).await).expect("a DBInstance elsewhere");
    tokio::time::sleep(Duration::from_secs(15)).await;
    let untouched = elsewhere.get("coffee-db").await.unwrap();
    assert!(
        untouched.status.is_none() && untouched.metadata.finalizers.is_none(),
        "a namespace outside olm.targetNamespaces is reconciled: {:?}",
        untouched.status
    );
}
