//! The OLM bundle (registry+v1: `manifests/` and `metadata/annotations.yaml`), made from what the
//! chart and the operator already have, so nothing in it is written twice by hand: every
//! registered kind's CRD ([`crate::artifacthub::crds`]); the Deployment, metrics Service and RBAC
//! the chart renders into `deploy/` (`make manifests`); the examples of `deploy/examples/` as
//! `alm-examples`; and a ClusterServiceVersion whose owned CRDs carry each CRD's description, with
//! spec and status descriptors for the fields its printer columns show (the fields a user looks
//! at). Written by `rds-operator olm-bundle` (`make crds`), checked with operator-framework's own
//! validators by `tests/env/shipcheck`.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::artifacthub::{CAPABILITY, crds, describe};

/// The package and its one channel.
pub const PACKAGE: &str = "rds-operator";
pub const CHANNEL: &str = "alpha";

/// What the bundle is made from.
pub struct Sources<'a> {
    /// `deploy/`: the chart rendered with its default values.
    pub deploy: &'a Path,
    /// `deploy/examples/`.
    pub examples: &'a Path,
    /// The operator's version (the chart's appVersion) and the oldest Kubernetes it runs on.
    pub version: &'a str,
    pub min_kube_version: &'a str,
    /// The icon, SVG.
    pub icon: &'a [u8],
}

/// The YAML documents of a file.
fn documents(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(&text) {
        let v = Value::deserialize(doc)?;
        if !v.is_null() {
            out.push(v);
        }
    }
    Ok(out)
}

/// The bundle's files: (path under the bundle, content).
pub fn bundle(s: &Sources) -> anyhow::Result<Vec<(String, String)>> {
    let mut files = Vec::new();
    let crds = crds();
    for crd in &crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        files.push((
            format!("manifests/{name}.yaml"),
            serde_yaml::to_string(crd)?,
        ));
    }
    let operator = documents(&s.deploy.join("operator.yaml"))?;
    for service in operator.iter().filter(|d| d["kind"] == "Service") {
        let name = service["metadata"]["name"].as_str().unwrap_or_default();
        files.push((
            format!("manifests/{name}_v1_service.yaml"),
            serde_yaml::to_string(&without_namespace(service.clone()))?,
        ));
    }
    let csv = csv(s, &crds, &operator)?;
    files.push((
        format!("manifests/{PACKAGE}.clusterserviceversion.yaml"),
        serde_yaml::to_string(&csv)?,
    ));
    let annotations = json!({"annotations": {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": PACKAGE,
        "operators.operatorframework.io.bundle.channels.v1": CHANNEL,
        "operators.operatorframework.io.bundle.channel.default.v1": CHANNEL,
    }});
    files.push((
        "metadata/annotations.yaml".into(),
        serde_yaml::to_string(&annotations)?,
    ));
    Ok(files)
}

fn without_namespace(mut v: Value) -> Value {
    if let Some(meta) = v["metadata"].as_object_mut() {
        meta.remove("namespace");
    }
    v
}

/// The ClusterServiceVersion.
fn csv(
    s: &Sources,
    crds: &[CustomResourceDefinition],
    operator: &[Value],
) -> anyhow::Result<Value> {
    let examples: Vec<Value> = (crate::artifacthub::all_examples(s.examples)?.into_iter())
        .map(without_namespace)
        .collect();
    let deployments: Vec<Value> = (operator.iter())
        .filter(|d| d["kind"] == "Deployment")
        .map(|d| {
            let mut spec = d["spec"].clone();
            watch_target_namespaces(&mut spec);
            json!({"name": d["metadata"]["name"], "spec": spec})
        })
        .collect();
    let image = (deployments.first())
        .and_then(|d| d["spec"]["template"]["spec"]["containers"][0]["image"].as_str())
        .unwrap_or_default()
        .to_owned();
    let (cluster_permissions, permissions) = rbac(&s.deploy.join("role.yaml"))?;
    // Base64, as a ByteString serializes.
    let icon = serde_json::to_value(k8s_openapi::ByteString(s.icon.to_vec()))?;
    let mode = |kind: &str| json!({"type": kind, "supported": true});
    Ok(json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": format!("{PACKAGE}.v{}", s.version),
            "annotations": {
                "alm-examples": serde_json::to_string_pretty(&examples)?,
                "capabilities": CAPABILITY,
                "categories": "Database",
                "containerImage": image,
                "description": "Manage AWS RDS databases (instances, Aurora clusters, snapshots, proxies) from Kubernetes resources.",
                "repository": "https://github.com/rds-operator/rds-operator",
                "support": "rds-operator maintainers",
                "operatorframework.io/suggested-namespace": "rds-system",
            },
        },
        "spec": {
            "displayName": "RDS Operator",
            "description": DESCRIPTION,
            "version": s.version,
            "minKubeVersion": s.min_kube_version,
            "maturity": CHANNEL,
            "provider": {"name": "rds-operator maintainers", "url": "https://rds.operator.rs"},
            "maintainers": [{"name": "rds-operator maintainers", "email": "maintainers@rds.operator.rs"}],
            "links": [
                {"name": "Documentation", "url": "https://rds.operator.rs"},
                {"name": "Source", "url": "https://github.com/rds-operator/rds-operator"},
            ],
            "keywords": ["rds", "aws", "database", "aurora", "mysql", "postgres"],
            "icon": [{"base64data": icon, "mediatype": "image/svg+xml"}],
            // Every mode watchNamespaces supports: its own namespace, one or several others, or all
            // (OLM's olm.targetNamespaces annotation becomes WATCH_NAMESPACES).
            "installModes": [
                mode("OwnNamespace"), mode("SingleNamespace"),
                mode("MultiNamespace"), mode("AllNamespaces"),
            ],
            "customresourcedefinitions": {"owned": crds.iter().map(owned).collect::<Vec<_>>()},
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": deployments,
                    "clusterPermissions": cluster_permissions,
                    "permissions": permissions,
                },
            },
        },
    }))
}

const DESCRIPTION: &str = "rds-operator manages AWS RDS databases from Kubernetes resources: a \
DBInstance (or an Aurora DBCluster with its members) is created, kept as its spec says, reported in \
status, and deleted, kept or snapshotted as the resource says; a connection Secret carries what an \
application needs to reach it. Subnet, parameter and option groups, snapshots, global databases, \
custom endpoints and RDS Proxy are kinds of their own. It holds people's data: a destructive call \
is made only on a fresh read, a resource reaches only what its namespace owns, and blue/green \
upgrades and failovers wait for a person's approval.\n\nSee https://rds.operator.rs for the \
documentation.";

/// OLM puts the namespaces the OperatorGroup targets in the Pod's olm.targetNamespaces annotation
/// (empty for all): the operator watches them (WATCH_NAMESPACES).
fn watch_target_namespaces(spec: &mut Value) {
    let Some(env) = spec["template"]["spec"]["containers"][0]["env"].as_array_mut() else {
        return;
    };
    env.retain(|e| e["name"] != "WATCH_NAMESPACES");
    env.push(json!({
        "name": "WATCH_NAMESPACES",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['olm.targetNamespaces']"}},
    }));
}

/// The chart's RBAC as OLM takes it, for the operator's ServiceAccount: as clusterPermissions
/// only the accounts' ClusterRole (cluster-scoped AWSAccounts, namespaces' metadata, the users of
/// an account listed read-only: no Secret, no write to a namespaced object); everything else,
/// Secrets and the kinds' objects included, as permissions, which OLM grants in the
/// OperatorGroup's target namespaces alone (Roles copied there), cluster-wide only for
/// AllNamespaces (operatorgroups.md, "RBAC").
fn rbac(role_yaml: &Path) -> anyhow::Result<(Vec<Value>, Vec<Value>)> {
    let (mut cluster, mut namespaced) = (Vec::new(), Vec::new());
    for doc in documents(role_yaml)? {
        let rules = doc["rules"].as_array().cloned().unwrap_or_default();
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        // Events too: one about an AWSAccount (cluster-scoped) goes to `default`, which a
        // target namespace seldom is.
        let events = |r: &Value| {
            r["apiGroups"]
                .as_array()
                .is_some_and(|g| g.contains(&json!("events.k8s.io")))
        };
        match doc["kind"].as_str() {
            Some("ClusterRole") if name.ends_with("-accounts") => cluster.extend(rules),
            Some("ClusterRole" | "Role") => {
                let (to_cluster, rest): (Vec<Value>, Vec<Value>) =
                    rules.into_iter().partition(events);
                cluster.extend(to_cluster);
                namespaced.extend(rest);
            }
            _ => {}
        }
    }
    let account = |rules: Vec<Value>| -> Vec<Value> {
        match rules.is_empty() {
            true => Vec::new(),
            false => vec![json!({"serviceAccountName": PACKAGE, "rules": rules})],
        }
    };
    Ok((account(cluster), account(namespaced)))
}

/// An owned CRD of the CSV: its name, version, kind and description, and descriptors for the
/// fields its printer columns show (with the conditions).
fn owned(crd: &CustomResourceDefinition) -> Value {
    let (kind, version, description) = describe(crd);
    let columns = (crd.spec.versions.iter())
        .find(|v| v.served)
        .and_then(|v| v.additional_printer_columns.clone())
        .unwrap_or_default();
    let mut spec = Vec::new();
    let mut status = vec![json!({
        "path": "conditions",
        "displayName": "Conditions",
        "description": "Ready and Synced, with the reason and RDS's words",
        "x-descriptors": ["urn:alm:descriptor:io.kubernetes.conditions"],
    })];
    for c in columns {
        let descriptor = |path: &str| {
            json!({
                "path": path,
                "displayName": c.name,
                "description": c.description.clone().unwrap_or_else(|| c.name.clone()),
            })
        };
        if let Some(path) = c.json_path.strip_prefix(".spec.") {
            spec.push(descriptor(path));
        } else if let Some(path) = c.json_path.strip_prefix(".status.")
            && !path.starts_with("conditions")
        {
            status.push(descriptor(path));
        }
    }
    json!({
        "name": crd.metadata.name,
        "version": version,
        "kind": kind,
        "displayName": kind,
        "description": description,
        "specDescriptors": spec,
        "statusDescriptors": status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_bundle_is_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let chart: Value = serde_yaml::from_str(
            &std::fs::read_to_string(root.join("helm/rds-operator/Chart.yaml")).unwrap(),
        )
        .unwrap();
        let icon = std::fs::read(root.join("docs/icon.svg")).unwrap();
        let sources = Sources {
            deploy: &root.join("deploy"),
            examples: &root.join("deploy/examples"),
            version: chart["appVersion"].as_str().unwrap(),
            min_kube_version: "1.30.0",
            icon: &icon,
        };
        let files = bundle(&sources).unwrap();
        let mut committed = Vec::new();
        for dir in ["manifests", "metadata"] {
            for entry in std::fs::read_dir(root.join("bundle").join(dir)).unwrap() {
                let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                committed.push(format!("{dir}/{name}"));
            }
        }
        committed.sort();
        let mut made: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
        made.sort();
        assert_eq!(committed, made, "bundle/ is stale: run `make manifests`");
        for (path, content) in &files {
            let on_disk = std::fs::read_to_string(root.join("bundle").join(path)).unwrap();
            assert!(
                on_disk == *content,
                "bundle/{path} is stale: run `make manifests`"
            );
        }
    }

    #[test]
    fn the_csv_owns_every_kind_with_descriptors_and_watches_the_target_namespaces() {
        let crds = crds();
        let owned: Vec<Value> = crds.iter().map(owned).collect();
        assert_eq!(owned.len(), crate::kinds::KINDS.len());
        let db = owned.iter().find(|o| o["kind"] == "DBInstance").unwrap();
        let spec: Vec<&str> = (db["specDescriptors"].as_array().unwrap().iter())
            .filter_map(|d| d["path"].as_str())
            .collect();
        assert!(spec.contains(&"engine"), "{spec:?}");
        let status: Vec<&str> = (db["statusDescriptors"].as_array().unwrap().iter())
            .filter_map(|d| d["path"].as_str())
            .collect();
        assert!(status.contains(&"conditions"), "{status:?}");
        let mut deployment = json!({"template": {"spec": {"containers": [{"env": [
            {"name": "WATCH_NAMESPACES", "value": "x"}, {"name": "A", "value": "b"}]}]}}});
        watch_target_namespaces(&mut deployment);
        let env = &deployment["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env.as_array().unwrap().len(), 2);
        assert_eq!(
            env[1]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['olm.targetNamespaces']"
        );
    }

    /// Issue 77: an OwnNamespace, SingleNamespace or MultiNamespace install gets Secrets and the
    /// kinds' objects in its target namespaces alone: no cluster-wide permission names them.
    #[test]
    fn secrets_and_the_kinds_objects_are_namespaced_permissions_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let (cluster, namespaced) = rbac(&root.join("deploy").join("role.yaml")).unwrap();
        let text = |v: &Vec<Value>| serde_json::to_string(v).unwrap();
        assert!(
            !text(&cluster).contains("\"secrets\""),
            "{}",
            text(&cluster)
        );
        // What it writes cluster-wide is the cluster-scoped AWSAccounts alone.
        for rule in cluster
            .iter()
            .flat_map(|a| a["rules"].as_array().unwrap().iter())
        {
            let verbs = rule["verbs"].as_array().unwrap();
            let writes = verbs
                .iter()
                .any(|v| v != "get" && v != "list" && v != "watch");
            let resources = rule["resources"].as_array().unwrap();
            let accounts = resources
                .iter()
                .all(|r| r.as_str().unwrap().starts_with("awsaccounts"));
            let events = rule["apiGroups"] == json!(["events.k8s.io"]);
            assert!(!writes || accounts || events, "{rule}");
        }
        assert!(!text(&cluster).contains("\"apps\""), "{}", text(&cluster));
        assert!(
            text(&namespaced).contains("\"secrets\""),
            "{}",
            text(&namespaced)
        );
        assert!(
            text(&namespaced).contains("\"dbinstances\""),
            "{}",
            text(&namespaced)
        );
    }
}
