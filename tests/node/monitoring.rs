//! Prometheus, as the seed architecture has it: the Prometheus Operator and Prometheus (built
//! from their Go modules, tests/env/build.sh prometheus) run on the node; the chart's
//! ServiceMonitor makes Prometheus discover and scrape the operator's Pod, its PrometheusRule
//! loads, and an alert fires when its condition holds.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DynamicObject};
use serde_json::{Value, json};

use crate::common::{self, is_ready, wait_dbi, wait_for};
use rds_operator::dbinstance::DBInstance;

const TIMEOUT: Duration = Duration::from_secs(240);
const CRDS: &str = "monitoring.coreos.com_";

/// The Prometheus Operator's CRDs, from its Go module (example/prometheus-operator-crd/).
fn operator_crds() -> Vec<std::path::PathBuf> {
    let out = std::process::Command::new("go")
        .args([
            "list",
            "-m",
            "-f",
            "{{.Dir}}",
            "github.com/prometheus-operator/prometheus-operator",
        ])
        .current_dir(format!("{}/tests/env/prometheus-operator", common::REPO))
        .output()
        .expect("go list");
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let dir = std::path::Path::new(&dir).join("example/prometheus-operator-crd");
    let mut files: Vec<_> = (std::fs::read_dir(&dir).expect("the module's CRDs"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(CRDS))
        })
        .collect();
    files.sort();
    files
}

/// Applies YAML or JSON documents by server-side apply, as `kubectl apply --server-side` does.
fn kubectl_apply(manifest: &str) {
    let path = std::env::temp_dir().join(format!("{}.yaml", common::unique("manifest")));
    std::fs::write(&path, manifest).unwrap();
    common::kubectl(&[
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        path.to_str().unwrap(),
    ]);
}

/// The Prometheus Operator in `ns` (cluster-admin: test infrastructure, not under test), and a
/// Prometheus selecting every ServiceMonitor and PrometheusRule, scraping and evaluating every 5 s.
fn prometheus(ns: &str) {
    for file in operator_crds() {
        common::kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            file.to_str().unwrap(),
        ]);
    }
    let image = |name: &str| format!("rds-operator.test/{name}:dev");
    let manifests = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "prometheus-operator", "namespace": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "prometheus", "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": format!("{ns}-monitoring")},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
         "subjects": [
            {"kind": "ServiceAccount", "name": "prometheus-operator", "namespace": ns},
            {"kind": "ServiceAccount", "name": "prometheus", "namespace": ns}]},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "prometheus-operator", "namespace": ns},
         "spec": {"selector": {"matchLabels": {"app": "prometheus-operator"}},
          "template": {"metadata": {"labels": {"app": "prometheus-operator"}},
           "spec": {"serviceAccountName": "prometheus-operator",
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65534},
            "containers": [{"name": "operator", "image": image("prometheus-operator"),
             "imagePullPolicy": "Never",
             "args": [format!("--prometheus-config-reloader={}", image("prometheus-config-reloader")),
                      "--log-level=info"]}]}}}},
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
         "metadata": {"name": "test", "namespace": ns},
         "spec": {"image": image("prometheus"), "version": "v3.7.0", "replicas": 1,
          "serviceAccountName": "prometheus",
          "serviceMonitorSelector": {}, "serviceMonitorNamespaceSelector": {},
          "ruleSelector": {}, "ruleNamespaceSelector": {},
          "scrapeInterval": "5s", "evaluationInterval": "5s",
          "securityContext": {"runAsNonRoot": true, "runAsUser": 65534, "fsGroup": 65534}}}
    ]});
    kubectl_apply(&manifests.to_string());
}

/// Prometheus's HTTP API on its Pod: GET `path` with `params` (URL-encoded), the JSON `data` once
/// the answer is a success.
async fn prom_get(client: &Client, ns: &str, path: &str, params: &[String]) -> Option<Value> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
    let pod = pods.get("prometheus-test-0").await.ok()?;
    let ip = pod.status?.pod_ip?;
    let url = format!("http://{ip}:9090{path}");
    let mut args = vec!["-sf", "--max-time", "5", "-G"];
    for p in params {
        args.extend(["--data-urlencode", p.as_str()]);
    }
    args.push(&url);
    let out = std::process::Command::new("curl")
        .args(&args)
        .output()
        .ok()?;
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    (v["status"] == "success").then(|| v["data"].clone())
}

/// The chart's Grafana dashboard, and each query of each of its panels as Prometheus takes it
/// (`$__rate_interval` 1m, `$__range` as given): (panel, target, PromQL).
fn dashboard_queries(range: &str) -> (Value, Vec<(Value, Value, String)>) {
    let file = format!(
        "{}/helm/rds-operator/dashboards/rds-operator.json",
        common::REPO
    );
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            let promql = (expr.replace("$__rate_interval", "1m")).replace("$__range", range);
            queries.push((panel.clone(), target.clone(), promql));
        }
    }
    (dashboard, queries)
}

/// Every query of every panel of the chart's Grafana dashboard, run on Prometheus as Grafana runs
/// it (`$__rate_interval` and `$__range` given values), returns series: a panel that would show
/// nothing fails.
async fn dashboard_panels_return_series(client: &Client, monitoring: &str) {
    let (_, queries) = dashboard_queries("1h");
    for (panel, target, promql) in &queries {
        let what = format!("panel {:?}: {}", panel["title"], target["expr"]);
        let query = [format!("query={promql}")];
        let series = wait_for(&what, TIMEOUT, || async {
            let data = prom_get(client, monitoring, "/api/v1/query", &query).await?;
            let result = data["result"].as_array()?.clone();
            (!result.is_empty()).then_some(result)
        })
        .await;
        println!("{what}: {} series", series.len());
    }
    assert!(queries.len() >= 25, "{} queries", queries.len());
}

/// The dashboard drawn with the last ten minutes of every panel's series (crate::picture).
async fn picture(client: &Client, monitoring: &str, path: &str) {
    let (dashboard, queries) = dashboard_queries("10m");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Each non-row panel's series, in panel order.
    let mut data: Vec<(Value, crate::picture::Series)> = Vec::new();
    for (panel, target, promql) in queries {
        let params = [
            format!("query={promql}"),
            format!("start={}", now - 600),
            format!("end={now}"),
            "step=5".to_owned(),
        ];
        if data.last().is_none_or(|(p, _)| *p != panel) {
            data.push((panel.clone(), Vec::new()));
        }
        let series = &mut data.last_mut().unwrap().1;
        let answer = prom_get(client, monitoring, "/api/v1/query_range", &params).await;
        let results = answer.and_then(|a| a["result"].as_array().cloned());
        for r in results.unwrap_or_default() {
            let format = target["legendFormat"].as_str().unwrap_or_default();
            let points = (r["values"].as_array().cloned().unwrap_or_default().iter())
                .filter_map(|p| Some((p[0].as_f64()?, p[1].as_str()?.parse().ok()?)))
                .collect();
            series.push((crate::picture::legend(format, &r["metric"]), points));
        }
    }
    let data: Vec<_> = data.into_iter().map(|(_, s)| s).collect();
    std::fs::write(path, crate::picture::svg(&dashboard, &data)).unwrap();
    println!("the dashboard's picture: {path}");
}

#[tokio::test]
async fn prometheus_discovers_and_scrapes_the_operator_and_its_alerts_fire() {
    let _shared = crate::CLUSTER.read().await;
    common::node();
    common::import_images(&[
        "prometheus-operator",
        "prometheus",
        "prometheus-config-reloader",
    ]);
    let client = common::client_with_crd().await;
    let monitoring = common::namespace(&client, "monitoring").await;
    let release_ns = common::namespace(&client, "rds-system").await;
    let ns = common::namespace(&client, "coffee").await;
    prometheus(&monitoring);
    common::aws_secret(&client, &release_ns).await;
    let values = [
        format!("watchNamespaces={{{ns}}}"),
        "metrics.serviceMonitor.enabled=true".into(),
        "metrics.serviceMonitor.interval=5s".into(),
        "metrics.prometheusRule.enabled=true".into(),
        "metrics.prometheusRule.notAvailableFor=5s".into(),
        "healthInterval=10s".into(),
    ];
    crate::node::install("rds-operator-mon", &release_ns, &values);
    common::wait_available(&client, &release_ns, "rds-operator-mon", 1).await;

    // The rule file the chart renders is valid for promtool.
    let rules = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        &release_ns,
        &kube::discovery::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "monitoring.coreos.com",
            "v1",
            "PrometheusRule",
        )),
    )
    .get("rds-operator-mon")
    .await
    .expect("the chart's PrometheusRule");
    let file = std::env::temp_dir().join(format!("{}.yaml", common::unique("rules")));
    std::fs::write(&file, serde_yaml::to_string(&rules.data["spec"]).unwrap()).unwrap();
    let promtool = common::tool("promtool");
    let (ok, out, err) = common::run(&promtool, &["check", "rules", file.to_str().unwrap()]);
    assert!(ok, "promtool check rules: {out}{err}");

    // A database, so the operator reports one.
    let identifier = crate::node::coffee_manage(&client, &ns).await;
    let api: Api<DBInstance> = Api::namespaced(client.clone(), &ns);
    wait_dbi(&api, "coffee-db", "Ready", TIMEOUT, is_ready).await;

    // Prometheus found the operator through the ServiceMonitor and scrapes it.
    let query = "/api/v1/query?query=rds_operator_managed_instances";
    let sample = wait_for("Prometheus to scrape the operator", TIMEOUT, || async {
        let data = prom_get(&client, &monitoring, query, &[]).await?;
        let result = data["result"].as_array()?.clone();
        result.into_iter().find(|r| {
            r["metric"]["state"] == "available" && r["metric"]["namespace"] == release_ns.as_str()
        })
    })
    .await;
    assert_eq!(sample["value"][1], "1", "{sample}");

    // The database health panels: the database's alarms, and a read replica of it whose lag the
    // health poll reads.
    let alarms = json!({"spec": {"alarms": {}}});
    let params = kube::api::PatchParams::default();
    (api.patch("coffee-db", &params, &kube::api::Patch::Merge(&alarms))
        .await)
        .unwrap();
    let replica: DBInstance = serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBInstance",
        "metadata": {"name": "coffee-replica"},
        "spec": {"engine": "mysql", "dbInstanceClass": "db.t3.micro", "deletionPolicy": "Delete",
                 "dbInstanceIdentifier": common::unique("coffee-replica"),
                 "replicaOf": {"name": "coffee-db"},
                 "tags": [{"key": "moto-ext:real-engine", "value": "true"}]},
    }))
    .unwrap();
    (api.create(&Default::default(), &replica).await).expect("the replica");
    wait_dbi(&api, "coffee-replica", "Ready", TIMEOUT, is_ready).await;

    // A change made outside the operator, put back: the drift panel has something to show.
    let rds = common::rds().await;
    let fast = serde_json::json!({"spec": {"driftInterval": "10s"}});
    (api.patch("coffee-db", &params, &kube::api::Patch::Merge(&fast))
        .await)
        .unwrap();
    (rds.modify_db_instance()
        .db_instance_identifier(&identifier)
        .db_instance_class("db.t3.small")
        .apply_immediately(true)
        .send()
        .await)
        .expect("change the class outside the operator");
    dashboard_panels_return_series(&client, &monitoring).await;
    // RDS stops no source with a read replica (below, the instance is stopped).
    common::delete(&api, "coffee-replica").await;
    common::wait_gone(&api, "coffee-replica", TIMEOUT).await;
    if let Ok(path) = std::env::var("RDS_OPERATOR_DASHBOARD_PICTURE") {
        // Time for the lines to have a shape.
        tokio::time::sleep(Duration::from_secs(120)).await;
        picture(&client, &monitoring, &path).await;
    }

    // The chart's rules loaded with no error.
    let groups = wait_for("the rds-operator rule group", TIMEOUT, || async {
        let data = prom_get(&client, &monitoring, "/api/v1/rules", &[]).await?;
        let groups = data["groups"].as_array()?.clone();
        let ours: Vec<Value> = groups
            .into_iter()
            .filter(|g| g["name"] == "rds-operator")
            .collect();
        (!ours.is_empty()).then_some(ours)
    })
    .await;
    for rule in groups[0]["rules"].as_array().unwrap() {
        assert_eq!(rule["health"], "ok", "{rule}");
    }

    // An instance RDS reports stopped: RdsOperatorInstancesNotAvailable fires.
    rds.stop_db_instance()
        .db_instance_identifier(&identifier)
        .send()
        .await
        .expect("stop the instance");
    wait_for("the alert to fire", TIMEOUT, || async {
        let data = prom_get(&client, &monitoring, "/api/v1/alerts", &[]).await?;
        (data["alerts"].as_array()?.iter()).find(|a| {
            a["labels"]["alertname"] == "RdsOperatorInstancesNotAvailable" && a["state"] == "firing"
        })?;
        Some(())
    })
    .await;
}
