//! The kubectl plugin (`kubectl-rds`, src/plugin) against the test bed: `status` of a Ready
//! DBInstance on a real engine, as JSON and as a tree, names its Secret's keys and never a value;
//! `connect` runs the MariaDB client through the Secret, TLS verified with its ca.crt, and one
//! SELECT answers; `snapshot --wait` makes a DBSnapshot the operator takes until Ready; `approve`
//! refuses what there is nothing to approve, and writes the maintenance annotation for a pending
//! action only.

use std::process::Command;

use kube::api::Api;
use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use crate::common::{self, dbinstance};
use crate::engines::ready_real_with;

/// Runs the plugin on the test bed's control plane: (succeeded, stdout, stderr).
fn plugin(ns: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-rds"))
        .env("KUBECONFIG", common::kubeconfig())
        .args(["-n", ns])
        .args(args)
        .output()
        .expect("kubectl-rds runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test]
async fn the_plugin_shows_connects_snapshots_and_approves_only_what_is_there() {
    let (_, ca) = crate::tls::ca_file("plugin-ca");
    let spec = crate::engines::real(json!({"engine": "mysql", "engineVersion": "8.0.42",
        "connectionSecret": {"name": "db-connection", "extraKeys": {
            "APP_DB_HOST": "{{ host }}", "APP_DB_USER": "{{ username }}",
            "APP_DB_PASSWORD": "{{ password }}", "APP_DB_NAME": "{{ dbname }}"}}}));
    let args = ["--ca-bundle", ca.to_str().unwrap()];
    let real = ready_real_with("plugin", &args, |id| dbinstance("db", id, spec)).await;
    let ns = real.ns.as_str();
    let password = real.secret["password"].clone();

    // status, as JSON: the instance, Ready, its Secret's keys; no value of the Secret.
    let (ok, out, err) = plugin(ns, &["status", "db", "-o", "json"]);
    assert!(ok, "{err}");
    let view: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(view["kind"], "DBInstance");
    assert_eq!(view["state"], "available");
    let ready = (view["conditions"].as_array().unwrap().iter()).find(|c| c["type"] == "Ready");
    assert_eq!(ready.unwrap()["status"], "True", "{view}");
    let keys = view["secret"]["keys"].as_array().unwrap();
    for key in ["APP_DB_PASSWORD", "ca.crt", "host", "password"] {
        assert!(keys.contains(&key.into()), "{key}: {keys:?}");
    }
    assert!(!out.contains(&password), "no password in status");
    // status, as a tree, piped: plain text.
    let (ok, tree, err) = plugin(ns, &["status", "db"]);
    assert!(ok, "{err}");
    assert!(tree.starts_with(&format!("DBInstance {ns}/db (")), "{tree}");
    assert!(tree.contains("└─ Secret db-connection: "), "{tree}");
    assert!(
        !tree.contains('\x1b') && !tree.contains(&password),
        "{tree}"
    );

    // connect: one SELECT through the Secret, the server verified against its ca.crt.
    let (ok, out, err) = plugin(ns, &["connect", "db", "--", "-N", "-e", "SELECT 41 + 1"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "42", "{err}");
    assert!(!err.contains("not verified"), "verified with ca.crt: {err}");
    let left = std::fs::read_dir(std::env::temp_dir()).unwrap();
    let left: Vec<_> = (left.flatten())
        .filter(|e| e.file_name().to_string_lossy().starts_with("kubectl-rds-"))
        .collect();
    assert!(left.is_empty(), "the private files are removed: {left:?}");

    // approve: nothing to switch over; no such pending action.
    let (ok, _, err) = plugin(ns, &["approve", "db", "switchover"]);
    assert!(!ok && err.contains("no blue/green deployment"), "{err}");
    let (ok, _, err) = plugin(ns, &["approve", "db", "maintenance", "system-update"]);
    assert!(!ok && err.contains("no pending system-update"), "{err}");
    let annotations = (real.api.get("db").await.unwrap().metadata.annotations).unwrap_or_default();
    assert!(
        annotations
            .keys()
            .all(|k| !k.contains("maintenance") && !k.contains("switchover"))
    );

    // snapshot --wait: a DBSnapshot of it, Ready, with its RDS snapshot.
    let (ok, out, err) = plugin(ns, &["snapshot", "db", "--wait"]);
    assert!(ok, "{out}{err}");
    let snapshots: Api<DBSnapshot> = Api::namespaced(real.client.clone(), ns);
    let made = snapshots.list(&Default::default()).await.unwrap().items;
    assert_eq!(made.len(), 1, "{out}");
    let report = &made[0].status.as_ref().expect("status").report;
    assert_eq!(report.state.as_deref(), Some("available"), "{report:?}");
    let name = made[0].metadata.name.clone().unwrap();
    assert!(out.contains(&format!("{name} is Ready")), "{out}");
    (snapshots.delete(&name, &Default::default()).await).expect("delete the snapshot");
    common::delete_and_wait(&real.api, "db").await;
}
