//! The OLM bundle installed by OLM itself, on the node: OLM's olm and catalog operators (v0.36.0,
//! built here from their Go module, tests/env/build.sh olm) run as Pods from OLM's own release
//! manifests (its chart and upstream values); a catalog of bundle/ (`opm render`, served by `opm
//! serve` in a Pod, tests/env/images.sh catalog) is a CatalogSource; a Subscription in an OperatorGroup that targets
//! one namespace installs the CSV. Its phase reaches Succeeded, the operator it runs reconciles the
//! Coffee Manage sample to Ready in the target namespace under the bundle's RBAC, and leaves
//! another namespace's alone.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DynamicObject, GroupVersionKind, PostParams};
use kube::discovery::{self, Scope};
use kube::{Client, ResourceExt};
use rds_operator::dbinstance::DBInstance;
use serde_json::{Value, json};

use crate::common::{self, is_ready, wait_dbi, wait_for};

const TIMEOUT: Duration = Duration::from_secs(240);
const OLM_IMAGE: &str = "rds-operator.test/olm:dev";
const CATALOG_IMAGE: &str = "rds-operator.test/rds-operator-catalog:dev";

fn csv() -> Value {
    let path = format!(
        "{}/bundle/manifests/rds-operator.clusterserviceversion.yaml",
        common::REPO
    );
    serde_yaml::from_str(&std::fs::read_to_string(path).expect("the CSV")).expect("YAML")
}

/// OLM's release manifests, as its release makes them (scripts/package_release.sh): its chart
/// rendered with its upstream values and CRDs, naming the image built here, without cert-manager
/// (which serves only the TLS of OLM's own metrics, and is not built here).
fn olm_manifests() -> Vec<Value> {
    let olm = common::tool("olm");
    let dir = olm.parent().expect("the OLM folder");
    let (chart, values) = (dir.join("chart"), dir.join("values.yaml"));
    let images = format!(
        "olm.image.ref={OLM_IMAGE},catalog.image.ref={OLM_IMAGE},package.image.ref={OLM_IMAGE},\
         certManager.enabled=false"
    );
    let args = [
        "template",
        "olm",
        "-n",
        "olm",
        "--include-crds",
        "-f",
        values.to_str().unwrap(),
        "--set",
        &images,
        chart.to_str().unwrap(),
    ];
    let (ok, out, err) = common::helm(&args);
    assert!(ok, "helm template of OLM's chart: {err}");
    serde_yaml::Deserializer::from_str(&out)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("YAML"))
        .filter(|v: &Value| v.is_object())
        .collect()
}

/// Creates any object, as `kubectl create` does: its kind found by discovery, in its own
/// namespace or else `ns`.
async fn create(client: &Client, ns: Option<&str>, object: &Value) {
    let dynamic: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
    let types = dynamic.types.as_ref().expect("apiVersion and kind");
    let gvk = GroupVersionKind::try_from(types).expect("a group, version and kind");
    let kind = &gvk.kind;
    let (resource, caps) = wait_for(&format!("{kind} to be served"), TIMEOUT, || async {
        discovery::pinned_kind(client, &gvk).await.ok()
    })
    .await;
    let api: Api<DynamicObject> = match caps.scope {
        Scope::Cluster => Api::all_with(client.clone(), &resource),
        Scope::Namespaced => {
            let ns = dynamic.metadata.namespace.as_deref().or(ns).unwrap();
            Api::namespaced_with(client.clone(), ns, &resource)
        }
    };
    match api.create(&PostParams::default(), &dynamic).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("create {kind} {}: {e}", dynamic.name_any()),
    }
}

/// An object of OLM's, read as JSON.
async fn get(client: &Client, ns: &str, kind: &str, plural: &str, name: &str) -> Option<Value> {
    let gvk = GroupVersionKind::gvk("operators.coreos.com", "v1alpha1", kind);
    let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, plural);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns, &resource);
    let o = api.get(name).await.ok()?;
    serde_json::to_value(o).ok()
}

/// OLM as its release installs it: its CRDs, then its namespaces, RBAC, OperatorGroups and the
/// two operators (not the packageserver, which serves OperatorHub's listing API only, nor the
/// operatorhub.io CatalogSource, which no registry here serves).
async fn install_olm(client: &Client) {
    let (docs, others): (Vec<Value>, Vec<Value>) =
        (olm_manifests().into_iter()).partition(|d| d["kind"] == "CustomResourceDefinition");
    for crd in &docs {
        create(client, None, crd).await;
    }
    for crd in &docs {
        common::established(client, crd["metadata"]["name"].as_str().unwrap()).await;
    }
    for doc in others {
        if !matches!(
            doc["kind"].as_str(),
            Some("ClusterServiceVersion" | "CatalogSource")
        ) {
            create(client, Some("olm"), &doc).await;
        }
    }
    for app in ["olm-operator", "catalog-operator"] {
        running(client, "olm", &format!("app={app}")).await;
    }
}

/// The Pod of these labels, once Ready; on a timeout, fails with the Pods' status and logs.
async fn running(client: &Client, ns: &str, selector: &str) -> Pod {
    let start = Instant::now();
    while start.elapsed() < TIMEOUT {
        let pods = common::pods(client, ns, selector).await;
        if let Some(pod) = pods.into_iter().find(common::pod_ready) {
            return pod;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let mut report = String::new();
    for pod in common::pods(client, ns, selector).await {
        let name = pod.name_any();
        report += &format!("{name}: {:?}\n", pod.status);
        report += &common::pod_log(client, ns, &name, true).await;
        report += &common::pod_log(client, ns, &name, false).await;
    }
    panic!("{ns}: no Pod {selector} Ready after {TIMEOUT:?}:\n{report}");
}

/// The catalog of bundle/ served by `opm serve` in a Pod of OLM's namespace, and a CatalogSource
/// of its address (the node has Pod addresses but no cluster DNS), once OLM reads it.
async fn catalog_source(client: &Client, name: &str) {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "olm", "labels": {"olm.catalogSource": name}},
        "spec": {"containers": [{
            "name": "registry-server", "image": CATALOG_IMAGE, "imagePullPolicy": "Never",
            "ports": [{"name": "grpc", "containerPort": 50051}],
            "readinessProbe": {"tcpSocket": {"port": 50051}, "periodSeconds": 1},
            // OLM's namespace enforces the restricted Pod Security Standard.
            "securityContext": {"allowPrivilegeEscalation": false, "runAsNonRoot": true,
                "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
        }]},
    });
    create(client, None, &pod).await;
    let pod = running(client, "olm", &format!("olm.catalogSource={name}")).await;
    let ip = pod
        .status
        .and_then(|s| s.pod_ip)
        .expect("the catalog Pod's address");
    let source = json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
        "metadata": {"name": name, "namespace": "olm"},
        "spec": {"sourceType": "grpc", "address": format!("{ip}:50051"),
                 "displayName": "rds-operator (built here)", "publisher": "rds-operator"},
    });
    create(client, None, &source).await;
    wait_for("OLM to connect to the catalog", TIMEOUT, || async {
        let source = get(client, "olm", "CatalogSource", "catalogsources", name).await?;
        let state = &source["status"]["connectionState"]["lastObservedState"];
        (state == "READY").then_some(())
    })
    .await;
}

/// The CSV's phase, once Succeeded; on a timeout, the last phase and message OLM wrote.
async fn wait_succeeded(client: &Client, ns: &str, name: &str) -> Value {
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < TIMEOUT {
        if let Some(csv) = get(
            client,
            ns,
            "ClusterServiceVersion",
            "clusterserviceversions",
            name,
        )
        .await
        {
            if csv["status"]["phase"] == "Succeeded" {
                return csv;
            }
            last = csv["status"].clone();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let subscription = get(client, ns, "Subscription", "subscriptions", "rds-operator").await;
    panic!(
        "the CSV {ns}/{name} did not succeed in {TIMEOUT:?}: {last}\nsubscription: {}",
        subscription
            .map(|s| s["status"].clone())
            .unwrap_or_default()
    );
}

#[tokio::test]
async fn olm_installs_the_bundle_from_a_catalog_and_it_reconciles_the_sample_in_its_target_namespace()
 {
    let _shared = crate::CLUSTER.read().await;
    common::import_images(&["olm", "catalog"]);
    let csv = csv();
    let name = csv["metadata"]["name"].as_str().unwrap();
    let container = &csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
        [0];
    let image = container["image"].as_str().unwrap();
    // The image the CSV names, as a mirror of its registry would hold it.
    common::tag_image("rds-operator.test/rds-operator:dev", image);
    let client = common::client_with_crd().await;
    install_olm(&client).await;
    let catalog = common::unique("rds-operator-catalog");
    catalog_source(&client, &catalog).await;

    let operator_ns = common::namespace(&client, "olm-operators").await;
    let target = common::namespace(&client, "coffee").await;
    let other = common::namespace(&client, "not-targeted").await;
    common::aws_secret(&client, &operator_ns).await;
    let group = json!({
        "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
        "metadata": {"name": "rds-operator"}, "spec": {"targetNamespaces": [target]},
    });
    create(&client, Some(&operator_ns), &group).await;
    // A Subscription's config reaches the CSV's Deployment: the emulator and its credentials.
    let subscription = json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": "rds-operator"},
        "spec": {
            "name": "rds-operator", "channel": "alpha", "installPlanApproval": "Automatic",
            "source": catalog, "sourceNamespace": "olm",
            "config": {
                "env": [
                    {"name": "AWS_ENDPOINT_URL", "value": common::emulator_from_pods()},
                    {"name": "AWS_REGION", "value": common::region()},
                    {"name": "DRIFT_INTERVAL", "value": "10s"},
                ],
                "envFrom": [{"secretRef": {"name": "aws"}}],
            },
        },
    });
    create(&client, Some(&operator_ns), &subscription).await;
    let installed = wait_succeeded(&client, &operator_ns, name).await;
    assert_eq!(installed["spec"]["version"], csv["spec"]["version"]);
    let sub = get(
        &client,
        &operator_ns,
        "Subscription",
        "subscriptions",
        "rds-operator",
    )
    .await
    .expect("the Subscription");
    assert_eq!(sub["status"]["installedCSV"], name, "{}", sub["status"]);
    let plan = sub["status"]["installPlanRef"]["name"].as_str().unwrap();
    wait_for("the InstallPlan to be Complete", TIMEOUT, || async {
        let plan = get(&client, &operator_ns, "InstallPlan", "installplans", plan).await?;
        (plan["status"]["phase"] == "Complete").then_some(())
    })
    .await;

    // OLM wrote the Deployment: the CSV's image, the OperatorGroup's target in the Pod's
    // olm.targetNamespaces (the operator's WATCH_NAMESPACES), the Subscription's config.
    let deployment_name = csv["spec"]["install"]["spec"]["deployments"][0]["name"]
        .as_str()
        .unwrap();
    common::wait_available(&client, &operator_ns, deployment_name, 1).await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &operator_ns);
    let deployment = deployments.get(deployment_name).await.unwrap();
    let template = deployment.spec.unwrap().template;
    let annotations = template.metadata.unwrap().annotations.unwrap_or_default();
    assert_eq!(annotations.get("olm.targetNamespaces"), Some(&target));
    let pod_spec = template.spec.unwrap();
    assert_eq!(pod_spec.containers[0].image.as_deref(), Some(image));

    crate::node::coffee_manage(&client, &target).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &target);
    wait_dbi(
        &api,
        "coffee-db",
        "Ready, installed by OLM",
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

    // OLM's namespace and operators go, for the CPU of the node tests that run beside this one.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    (namespaces.delete("olm", &Default::default()).await).expect("delete OLM's namespace");
}
