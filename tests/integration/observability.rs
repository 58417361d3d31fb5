//! What ships for the places operators are watched and found: the Grafana dashboard (valid for
//! Grafana's own SDK at its schema version, in the chart behind a value, and its copy in deploy/),
//! and the chart's README, which documents every value its schema allows and no other. (Each
//! panel's PromQL returning series is tested on the node, against Prometheus: tests/node/.)

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common;

const DASHBOARD: &str = "helm/rds-operator/dashboards/rds-operator.json";

fn read(path: &str) -> String {
    std::fs::read_to_string(format!("{}/{path}", common::REPO)).expect(path)
}

/// shipcheck's answer on a dashboard: (accepted, what it said).
fn check(dashboard: &Value) -> (bool, String) {
    let file = std::env::temp_dir().join(format!("{}.json", common::unique("dashboard")));
    std::fs::write(&file, serde_json::to_vec_pretty(dashboard).unwrap()).unwrap();
    let tool = common::tool("shipcheck");
    let (ok, out, err) = common::run(&tool, &["dashboard", file.to_str().unwrap()]);
    (ok, out + &err)
}

#[test]
fn the_grafana_dashboard_is_valid_for_grafana_and_ships_in_the_chart() {
    let dashboard: Value = serde_json::from_str(&read(DASHBOARD)).expect("JSON");
    let (ok, said) = check(&dashboard);
    assert!(ok, "Grafana's SDK refuses the dashboard: {said}");
    // The check can fail: an older schema version, a field no panel has, a panel option its
    // plugin does not know.
    let mut older = dashboard.clone();
    older["schemaVersion"] = 36.into();
    let mut unknown = dashboard.clone();
    unknown["panels"][1]["colour"] = "red".into();
    let mut option = dashboard.clone();
    option["panels"][1]["options"]["legend"]["size"] = "huge".into();
    for (what, broken) in [("schema", older), ("field", unknown), ("option", option)] {
        let (ok, said) = check(&broken);
        assert!(!ok, "a dashboard with a wrong {what} passes: {said}");
    }

    let helm = common::tool("helm");
    let chart = format!("{}/helm/rds-operator", common::REPO);
    let render = |values: &[&str]| {
        let mut args = vec![
            "template",
            "rds-operator",
            chart.as_str(),
            "-n",
            "rds-system",
        ];
        for v in values {
            args.extend(["--set", v]);
        }
        let (ok, out, err) = common::run(&helm, &args);
        assert!(ok, "helm template: {err}");
        out
    };
    let config_maps = |rendered: &str| -> Vec<Value> {
        (rendered.split("\n---\n"))
            .filter_map(|doc| serde_yaml::from_str::<Value>(doc).ok())
            .filter(|doc| doc["kind"] == "ConfigMap")
            .collect()
    };
    assert!(
        config_maps(&render(&[])).is_empty(),
        "no dashboard by default"
    );
    let on = render(&[
        "metrics.grafanaDashboard.enabled=true",
        "metrics.grafanaDashboard.namespace=monitoring",
        "metrics.grafanaDashboard.annotations.grafana_folder=Databases",
    ]);
    let maps = config_maps(&on);
    assert_eq!(maps.len(), 1, "{on}");
    let map = &maps[0];
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    assert_eq!(map["metadata"]["namespace"], "monitoring");
    assert_eq!(
        map["metadata"]["annotations"]["grafana_folder"],
        "Databases"
    );
    let shipped: Value =
        serde_json::from_str(map["data"]["rds-operator.json"].as_str().unwrap()).unwrap();
    assert_eq!(shipped, dashboard, "the ConfigMap carries the dashboard");
    let copy: Value = serde_json::from_str(&read("deploy/grafana-dashboard.json")).unwrap();
    assert_eq!(copy, dashboard, "deploy/ has the chart's dashboard");
}

/// The paths of a values schema: every property (`all`), and the leaves: each property that is
/// not an object with properties of its own (a map of strings, a list, a scalar).
fn paths(schema: &Value, prefix: &str, all: &mut BTreeSet<String>, leaves: &mut BTreeSet<String>) {
    let Some(properties) = schema["properties"].as_object() else {
        leaves.insert(prefix.to_owned());
        return;
    };
    for (name, sub) in properties {
        let path = match prefix {
            "" => name.clone(),
            p => format!("{p}.{name}"),
        };
        all.insert(path.clone());
        paths(sub, &path, all, leaves);
    }
}

/// The value paths the README's Values table names: a row's first cell lists `a.b.c`, then `.d`
/// for a sibling of `c` (`a.b.d`).
fn documented(readme: &str) -> BTreeSet<String> {
    let values = readme.split("\n## Values").nth(1).unwrap_or_default();
    let table = values.split("\n## ").next().unwrap_or_default();
    let mut out = BTreeSet::new();
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('|').nth(1).unwrap_or_default();
        let mut parent = String::new();
        for name in cell.split('`').skip(1).step_by(2) {
            let path = match name.strip_prefix('.') {
                Some(sibling) => format!("{parent}.{sibling}"),
                None => name.to_owned(),
            };
            parent = path
                .rsplit_once('.')
                .map(|(p, _)| p.to_owned())
                .unwrap_or_default();
            out.insert(path);
        }
    }
    out
}

#[test]
fn the_chart_readme_documents_every_value_of_its_schema_and_no_other() {
    let schema: Value =
        serde_json::from_str(&read("helm/rds-operator/values.schema.json")).unwrap();
    let (mut all, mut leaves) = (BTreeSet::new(), BTreeSet::new());
    paths(&schema, "", &mut all, &mut leaves);
    let readme = documented(&read("helm/rds-operator/README.md"));
    // A value is documented by its own row or by one of the object it belongs to.
    let covered = |leaf: &String| {
        let mut path = leaf.as_str();
        loop {
            if readme.contains(path) {
                return true;
            }
            match path.rsplit_once('.') {
                Some((parent, _)) => path = parent,
                None => return false,
            }
        }
    };
    let undocumented: Vec<_> = leaves.iter().filter(|l| !covered(l)).collect();
    let unknown: Vec<_> = readme.difference(&all).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "values the README does not document: {undocumented:?}; values it documents that the \
         schema does not have: {unknown:?}"
    );
    assert!(readme.len() > 30, "{readme:?}");
}

/// shipcheck's answer on a bundle folder: (accepted, what it said).
fn check_bundle(dir: &std::path::Path) -> (bool, String) {
    let tool = common::tool("shipcheck");
    let (ok, out, err) = common::run(&tool, &["bundle", dir.to_str().unwrap()]);
    (ok, out + &err)
}

/// `operator-sdk bundle validate DIR --select-optional suite=operatorframework` (built from its
/// module, tests/env/build.sh operator-sdk): (accepted, what it said).
fn operator_sdk_validate(dir: &std::path::Path) -> (bool, String) {
    let tool = common::tool("operator-sdk");
    let dir = dir.to_str().unwrap();
    let args = [
        "bundle",
        "validate",
        dir,
        "--select-optional",
        "suite=operatorframework",
    ];
    let (ok, out, err) = common::run(&tool, &args);
    (ok, out + &err)
}

/// A change of the CSV.
type Change = Box<dyn FnOnce(&mut Value)>;

/// A copy of bundle/ with its CSV changed by `change`.
fn broken_bundle(change: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["manifests", "metadata"] {
        let from = format!("{}/bundle/{sub}", common::REPO);
        std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.path().join(sub).join(path.file_name().unwrap())).unwrap();
        }
    }
    let csv = dir
        .path()
        .join("manifests/rds-operator.clusterserviceversion.yaml");
    let mut v: Value = serde_yaml::from_str(&std::fs::read_to_string(&csv).unwrap()).unwrap();
    change(&mut v);
    std::fs::write(&csv, serde_yaml::to_string(&v).unwrap()).unwrap();
    dir
}

#[tokio::test]
async fn the_olm_bundle_passes_operator_frameworks_validators_and_its_examples_apply() {
    let bundle = std::path::PathBuf::from(format!("{}/bundle", common::REPO));
    let (ok, said) = operator_sdk_validate(&bundle);
    assert!(
        ok && said.contains("All validation tests have completed successfully"),
        "operator-sdk bundle validate refuses the bundle: {said}"
    );
    let (ok, said) = check_bundle(&bundle);
    assert!(
        ok,
        "operator-framework's validators refuse the bundle: {said}"
    );
    // The validators can fail: no provider (OperatorHub), a capability level that is none of the
    // five (errors, which fail operator-sdk too), an owned CRD without its description (good
    // practices: a warning, which operator-sdk reports and shipcheck fails on).
    let cases: [(&str, Change, &str); 3] = [
        (
            "provider",
            Box::new(|v| v["spec"]["provider"] = serde_json::json!({})),
            "csv.Spec.Provider.Name not specified",
        ),
        (
            "capabilities",
            Box::new(|v| v["metadata"]["annotations"]["capabilities"] = "Everything".into()),
            "is not a valid capabilities level",
        ),
        (
            "description",
            Box::new(|v| {
                v["spec"]["customresourcedefinitions"]["owned"][0]["description"] = "".into()
            }),
            "has an empty description",
        ),
    ];
    for (what, change, words) in cases {
        let broken = broken_bundle(change);
        let (ok, said) = check_bundle(broken.path());
        assert!(!ok, "a bundle with a wrong {what} passes: {said}");
        let (ok, said) = operator_sdk_validate(broken.path());
        assert!(
            said.contains(words),
            "operator-sdk on a wrong {what}: {said}"
        );
        assert_eq!(
            ok,
            what == "description",
            "operator-sdk on a wrong {what}: {said}"
        );
    }

    // Every alm-example is an object the API server accepts (server-side dry run).
    let csv: Value = serde_yaml::from_str(
        &std::fs::read_to_string(bundle.join("manifests/rds-operator.clusterserviceversion.yaml"))
            .unwrap(),
    )
    .unwrap();
    let examples: Vec<Value> = serde_json::from_str(
        csv["metadata"]["annotations"]["alm-examples"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let owned = csv["spec"]["customresourcedefinitions"]["owned"]
        .as_array()
        .unwrap()
        .len();
    let kinds: BTreeSet<&str> = examples.iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(
        kinds.len(),
        owned,
        "an example of every owned kind: {kinds:?}"
    );
    let client = common::client_with_crd().await;
    let ns = common::namespace(&client, "olm-examples").await;
    let file = std::env::temp_dir().join(format!("{}.json", common::unique("examples")));
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": examples});
    std::fs::write(&file, serde_json::to_vec(&list).unwrap()).unwrap();
    common::kubectl(&[
        "apply",
        "--dry-run=server",
        "-n",
        &ns,
        "-f",
        file.to_str().unwrap(),
    ]);
}
