//! The chart's Artifact Hub annotations (https://artifacthub.io/docs/topics/annotations/helm/),
//! made from what the operator already has, so they never disagree with it: every registered
//! kind's CRD (its kind, version, name, and the description its CRD carries) and one example of
//! each kind from `deploy/examples/`, with the links, license and capability level. Written into
//! `helm/rds-operator/Chart.yaml` by `rds-operator chart-annotations` (`make crds`); a test fails
//! when the committed file differs.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::kinds::KINDS;

/// The capability level (Basic Install, Seamless Upgrades, Full Lifecycle, Deep Insights, Auto
/// Pilot): it installs and upgrades from its chart, runs the whole lifecycle (backups as
/// snapshots, restores, failover and approved blue/green upgrades), and gives metrics, alerts and
/// a dashboard; it does not tune or scale databases on its own.
pub const CAPABILITY: &str = "Deep Insights";

/// Where the annotations begin in Chart.yaml: everything from this line on is generated.
const MARKER: &str = "annotations:";

/// Every registered kind's CRD, parsed.
pub fn crds() -> Vec<CustomResourceDefinition> {
    (KINDS.iter())
        .map(|k| serde_yaml::from_str((k.crd)().as_str()).expect("a registered CRD parses"))
        .collect()
}

/// The CRD's kind, its served version, and its schema's top-level description.
pub fn describe(crd: &CustomResourceDefinition) -> (String, String, String) {
    let version = crd.spec.versions.iter().find(|v| v.served);
    let description = (version.and_then(|v| v.schema.as_ref()))
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .and_then(|s| s.description.clone())
        .unwrap_or_default();
    let version = version.map(|v| v.name.clone()).unwrap_or_default();
    (crd.spec.names.kind.clone(), version, description)
}

/// Every object of a registered kind in the YAML files under `examples`, by path, without its
/// namespace.
pub fn all_examples(examples: &Path) -> std::io::Result<Vec<Value>> {
    let mut files = Vec::new();
    collect(examples, &mut files)?;
    files.sort();
    let kinds: Vec<String> = crds().iter().map(|c| c.spec.names.kind.clone()).collect();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        for doc in serde_yaml::Deserializer::from_str(&text) {
            let Ok(mut v) = Value::deserialize(doc) else {
                continue;
            };
            if kinds.iter().any(|k| v["kind"] == k.as_str()) {
                if let Some(meta) = v["metadata"].as_object_mut() {
                    meta.remove("namespace");
                }
                out.push(v);
            }
        }
    }
    Ok(out)
}

/// One example of each kind (the first found, by path).
pub fn examples(examples: &Path) -> std::io::Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for v in all_examples(examples)? {
        let kind = v["kind"].as_str().unwrap_or_default().to_owned();
        out.entry(kind).or_insert(v);
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
    Ok(())
}

/// The `annotations:` section of Chart.yaml.
pub fn annotations(examples: &BTreeMap<String, Value>) -> String {
    let crds: Vec<Value> = (crds().iter())
        .map(|crd| {
            let (kind, version, description) = describe(crd);
            json!({
                "kind": kind,
                "version": version,
                "name": crd.metadata.name,
                "displayName": kind,
                "description": description,
            })
        })
        .collect();
    let examples: Vec<&Value> = examples.values().collect();
    let links = json!([
        {"name": "Documentation", "url": "https://rds.operator.rs"},
        {"name": "Source", "url": "https://github.com/rds-operator/rds-operator"},
    ]);
    let block = |v: &Value| serde_yaml::to_string(v).expect("YAML");
    let mut out = BTreeMap::new();
    out.insert("artifacthub.io/category", "database".to_owned());
    out.insert("artifacthub.io/crds", block(&Value::from(crds)));
    out.insert("artifacthub.io/crdsExamples", block(&json!(examples)));
    out.insert("artifacthub.io/license", "Apache-2.0".to_owned());
    out.insert("artifacthub.io/links", block(&links));
    out.insert("artifacthub.io/operator", "true".to_owned());
    out.insert("artifacthub.io/operatorCapabilities", CAPABILITY.to_owned());
    let section: BTreeMap<&str, BTreeMap<&str, String>> =
        [(MARKER.trim_end_matches(':'), out)].into();
    serde_yaml::to_string(&section).expect("YAML")
}

/// Chart.yaml with its annotations section made anew (everything from `annotations:` on).
pub fn chart_with_annotations(chart: &str, annotations: &str) -> String {
    let head = match chart.find(&format!("\n{MARKER}")) {
        Some(i) => &chart[..=i],
        None => chart,
    };
    format!(
        "{}{annotations}",
        head.trim_end_matches('\n').to_owned() + "\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn the_committed_chart_carries_the_current_annotations() {
        let examples = examples(&root().join("deploy/examples")).unwrap();
        let chart = std::fs::read_to_string(root().join("helm/rds-operator/Chart.yaml")).unwrap();
        let want = chart_with_annotations(&chart, &annotations(&examples));
        assert!(
            chart == want,
            "helm/rds-operator/Chart.yaml's annotations are stale: run `make crds` and commit"
        );
    }

    #[test]
    fn every_kind_is_listed_with_its_description_and_examples_are_of_listed_kinds() {
        let examples = examples(&root().join("deploy/examples")).unwrap();
        let text = annotations(&examples);
        let parsed: BTreeMap<String, BTreeMap<String, String>> =
            serde_yaml::from_str(&text).unwrap();
        let a = &parsed["annotations"];
        let crds: Vec<Value> = serde_yaml::from_str(&a["artifacthub.io/crds"]).unwrap();
        assert_eq!(crds.len(), KINDS.len());
        for crd in &crds {
            for key in ["kind", "version", "name", "displayName", "description"] {
                assert!(
                    crd[key].as_str().is_some_and(|s| !s.is_empty()),
                    "{key} of {crd}"
                );
            }
        }
        let listed: Vec<&str> = crds.iter().filter_map(|c| c["kind"].as_str()).collect();
        let shown: Vec<Value> = serde_yaml::from_str(&a["artifacthub.io/crdsExamples"]).unwrap();
        assert!(shown.len() >= 5, "{shown:?}");
        for example in &shown {
            let kind = example["kind"].as_str().unwrap_or_default();
            assert!(listed.contains(&kind), "an example of {kind}");
            assert_eq!(example["apiVersion"], "rds.operator.rs/v1alpha1");
        }
        let capabilities = [
            "Basic Install",
            "Seamless Upgrades",
            "Full Lifecycle",
            "Deep Insights",
            "Auto Pilot",
        ];
        assert!(capabilities.contains(&a["artifacthub.io/operatorCapabilities"].as_str()));
    }
}
