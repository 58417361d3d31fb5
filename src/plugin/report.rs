//! `kubectl rds report [-o FILE] [--operator-namespace NS]`: a tarball for a support request. It
//! holds every rds.operator.rs object of the namespace, the AWSAccounts granted to that namespace
//! (their external IDs masked), the Events about them, the names and owners of the namespace's
//! Secrets, the operator Pods' logs passed through the redactor (`redact`), and the versions.
//! Secret values are never read: the Secrets are listed by their metadata alone
//! (PartialObjectMeta), and the objects only name Secrets.

use std::io::Write;

use k8s_openapi::api::core::v1::{Event, Namespace, Pod, Secret};
use kube::api::{Api, DynamicObject, ListParams, LogParams};
use kube::discovery::{Discovery, Scope};
use kube::{Client, ResourceExt};

const GROUP: &str = "rds.operator.rs";

/// One file of the report: its path in the archive and its contents.
pub type Entry = (String, String);

/// What goes into the report of `namespace`.
pub async fn gather(
    client: &Client,
    namespace: &str,
    operator_namespace: &str,
) -> anyhow::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    let discovery = Discovery::new(client.clone())
        .filter(&[GROUP])
        .run()
        .await?;
    let labels = namespace_labels(client, namespace).await;
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            let api: Api<DynamicObject> = match capabilities.scope {
                Scope::Namespaced => Api::namespaced_with(client.clone(), namespace, &resource),
                Scope::Cluster => Api::all_with(client.clone(), &resource),
            };
            for mut object in api.list(&ListParams::default()).await?.items {
                // kubectl's last-applied copy of the spec (an AWSAccount's external ID, a
                // password a spec held inline) and the field managers go with nothing.
                rds_operator::managed::apiserver::lean(&mut object);
                // A cluster-scoped object (an AWSAccount) goes in only if granted to this
                // namespace, and with what lets someone use its roles masked.
                if capabilities.scope == Scope::Cluster {
                    let Some(labels) = labels.as_ref() else {
                        continue;
                    };
                    if !granted(&object, namespace, labels) {
                        continue;
                    }
                    mask_external_ids(&mut object.data);
                }
                let path = format!("objects/{}/{}.yaml", resource.plural, object.name_any());
                entries.push((path, serde_yaml::to_string(&object)?));
            }
        }
    }
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let ours: Vec<Event> = (events.list(&ListParams::default()).await?.items.into_iter())
        .filter(|e| {
            (e.involved_object.api_version.as_deref()).is_some_and(|a| a.starts_with(GROUP))
        })
        .map(|mut e| {
            rds_operator::managed::apiserver::lean(&mut e);
            e
        })
        .collect();
    entries.push(("events.yaml".into(), serde_yaml::to_string(&ours)?));
    entries.push((
        "secrets.yaml".into(),
        secret_names(client, namespace).await?,
    ));
    entries.extend(logs(client, operator_namespace).await);
    let version = client.apiserver_version().await?;
    let versions = format!(
        "kubectl-rds {}\nkube-apiserver {}\nnamespace {namespace}\n",
        env!("CARGO_PKG_VERSION"),
        version.git_version
    );
    entries.push(("versions.txt".into(), versions));
    Ok(entries)
}

/// The namespace's Secrets: name and owners, from their metadata alone (the API server sends no
/// data: PartialObjectMeta).
async fn secret_names(client: &Client, namespace: &str) -> anyhow::Result<String> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let listed = api.list_metadata(&ListParams::default()).await?;
    let listed: Vec<serde_json::Value> = (listed.items.iter())
        .map(|s| {
            let owners: Vec<String> = (s.owner_references().iter())
                .map(|o| format!("{}/{}", o.kind, o.name))
                .collect();
            serde_json::json!({"name": s.name_any(), "owners": owners})
        })
        .collect();
    Ok(serde_yaml::to_string(&listed)?)
}

/// The namespace's labels (an AWSAccount's namespaceSelector matches them); None when they
/// cannot be read, and then no AWSAccount goes in.
async fn namespace_labels(
    client: &Client,
    namespace: &str,
) -> Option<std::collections::BTreeMap<String, String>> {
    let api: Api<Namespace> = Api::all(client.clone());
    let ns = api.get_opt(namespace).await.ok()??;
    Some(ns.metadata.labels.unwrap_or_default())
}

/// Whether an AWSAccount's namespaceSelector selects `namespace`, as the operator decides it.
fn granted(
    account: &DynamicObject,
    namespace: &str,
    labels: &std::collections::BTreeMap<String, String>,
) -> bool {
    let selector = account.data.pointer("/spec/namespaceSelector").cloned();
    let selector: Option<rds_operator::awsaccount::NamespaceSelector> =
        selector.and_then(|s| serde_json::from_value(s).ok());
    selector.is_some_and(|s| s.selects(namespace, labels))
}

/// Every `externalID` under `value`, masked: the secret a role's trust policy asks of whoever
/// assumes it.
fn mask_external_ids(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match key.eq_ignore_ascii_case("externalID") && v.is_string() {
                    true => *v = serde_json::Value::String("(masked)".into()),
                    false => mask_external_ids(v),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(mask_external_ids),
        _ => {}
    }
}

/// The operator Pods' logs (their last 5,000 lines each), or a note of why there are none.
async fn logs(client: &Client, operator_namespace: &str) -> Vec<Entry> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), operator_namespace);
    let selector = ListParams::default().labels("app.kubernetes.io/name=rds-operator");
    let listed = match pods.list(&selector).await {
        Ok(l) => l.items,
        Err(e) => return vec![("operator/NOTE.txt".into(), format!("no logs: {e}\n"))],
    };
    if listed.is_empty() {
        let note = format!(
            "no operator Pod (app.kubernetes.io/name=rds-operator) in namespace \
             {operator_namespace}; name its namespace with --operator-namespace\n"
        );
        return vec![("operator/NOTE.txt".into(), note)];
    }
    let mut entries = Vec::new();
    for pod in listed {
        let params = LogParams {
            tail_lines: Some(5000),
            ..Default::default()
        };
        let name = pod.name_any();
        let text = match pods.logs(&name, &params).await {
            Ok(t) => super::redact::redact(&t),
            Err(e) => format!("no logs: {e}\n"),
        };
        entries.push((format!("operator/{name}.log"), text));
    }
    entries
}

/// The entries as a gzipped tarball, under `root/`.
pub fn tarball(root: &str, entries: &[Entry], out: impl Write) -> anyhow::Result<()> {
    let gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, contents) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(contents.len() as u64);
        header.set_mode(0o600);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, format!("{root}/{path}"), contents.as_bytes())?;
    }
    tar.into_inner()?.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tarball_holds_each_entry_under_its_root() {
        let entries = vec![
            (
                "objects/dbinstances/db.yaml".to_owned(),
                "kind: DBInstance\n".to_owned(),
            ),
            ("events.yaml".to_owned(), "[]\n".to_owned()),
        ];
        let mut bytes = Vec::new();
        tarball("report", &entries, &mut bytes).unwrap();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(&bytes[..]));
        let mut found = Vec::new();
        for file in archive.entries().unwrap() {
            let mut file = file.unwrap();
            let mut text = String::new();
            std::io::Read::read_to_string(&mut file, &mut text).unwrap();
            found.push((file.path().unwrap().display().to_string(), text));
        }
        assert_eq!(
            found,
            [
                (
                    "report/objects/dbinstances/db.yaml".to_owned(),
                    "kind: DBInstance\n".to_owned()
                ),
                ("report/events.yaml".to_owned(), "[]\n".to_owned()),
            ]
        );
    }
}
