//! The kubectl plugin (`kubectl-rds`, src/plugin) against the test bed: `status` of a Ready
//! DBInstance on a real engine, as JSON and as a tree, names its Secret's keys and never a value;
//! `connect` runs the MariaDB client through the Secret, TLS verified with its ca.crt, and one
//! SELECT answers; `snapshot --wait` makes a DBSnapshot the operator takes until Ready; `approve`
//! refuses what there is nothing to approve; `report` holds the objects, their Events and the
//! Secrets' keys, and no Secret value; `port-ack`'s output of ACK's manifests is accepted under
//! strict field validation.

use std::process::Command;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
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

    // report: the objects, their Events, the Secrets' names (never read whole: their keys no
    // longer go in, changed openly in issue 77), the AWSAccounts granted to the namespace alone
    // with their external IDs masked; no Secret value anywhere.
    let (granted, elsewhere) = (common::unique("acct-ours"), common::unique("acct-theirs"));
    let chain = |external: &str| {
        let role = "arn:aws:iam::123456789012:role/coffee";
        json!({"assumeRoleChain": [{"roleARN": role, "externalID": external}],
            "regions": ["us-east-1"]})
    };
    let mut ours = chain("ext-ours-Qz81");
    ours["namespaceSelector"] = json!({"names": [ns]});
    let mut theirs = chain("ext-theirs-Wk27");
    theirs["namespaceSelector"] = json!({"names": ["someone-else"]});
    // Applied as kubectl apply does: its last-applied copy of the spec holds the external ID too.
    let mut account = common::account(&granted, ours.clone());
    let applied = serde_json::to_string(&json!({"spec": ours})).unwrap();
    account.metadata.annotations = Some(
        [(
            "kubectl.kubernetes.io/last-applied-configuration".to_owned(),
            applied,
        )]
        .into(),
    );
    let accounts: Api<rds_operator::awsaccount::AWSAccount> = Api::all(real.client.clone());
    (accounts.create(&Default::default(), &account).await).expect("the AWSAccount");
    common::create_account(&real.client, &elsewhere, theirs).await;
    let archive = std::env::temp_dir().join(format!("{}.tar.gz", crate::common::unique("report")));
    let (ok, out, err) = plugin(ns, &["report", "-o", archive.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    let files = untar(&archive);
    let _ = std::fs::remove_file(&archive);
    let file = |end: &str| {
        let found = files.iter().find(|(p, _)| p.ends_with(end));
        found
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("{end}: {:?}", files.keys()))
    };
    assert!(file("objects/dbinstances/db.yaml").contains("kind: DBInstance"));
    assert!(file(&format!("objects/dbsnapshots/{name}.yaml")).contains("kind: DBSnapshot"));
    assert!(
        file("events.yaml").contains("name: db"),
        "{}",
        file("events.yaml")
    );
    let secrets = file("secrets.yaml");
    assert!(
        secrets.contains("db-connection") && !secrets.contains("APP_DB_PASSWORD"),
        "{secrets}"
    );
    let account = file(&format!("objects/awsaccounts/{granted}.yaml"));
    assert!(
        account.contains("(masked)") && !account.contains("ext-ours-Qz81"),
        "{account}"
    );
    assert!(
        !files.keys().any(|p| p.contains(&elsewhere)),
        "another namespace's account: {:?}",
        files.keys()
    );
    for name in [&granted, &elsewhere] {
        (accounts.delete(name, &Default::default()).await).expect("delete the AWSAccount");
    }
    assert!(file("operator/NOTE.txt").contains("no operator Pod"));
    for (path, text) in &files {
        assert!(!text.contains(&password), "{path} holds the password");
    }
    (snapshots.delete(&name, &Default::default()).await).expect("delete the snapshot");
    common::delete_and_wait(&real.api, "db").await;
}

/// The files of a gzipped tarball: path -> text.
fn untar(path: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    let file = std::fs::File::open(path).expect("the report");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut files = std::collections::BTreeMap::new();
    for entry in archive.entries().expect("a tarball") {
        let mut entry = entry.expect("an entry");
        let mut text = String::new();
        std::io::Read::read_to_string(&mut entry, &mut text).expect("text");
        files.insert(entry.path().unwrap().display().to_string(), text);
    }
    files
}

/// An ACK DBCluster with its references by `from`, a KMS key and security groups by reference.
const ACK_CLUSTER: &str = r#"
apiVersion: rds.services.k8s.aws/v1alpha1
kind: DBCluster
metadata:
  name: coffee
spec:
  dbClusterIdentifier: coffee
  engine: aurora-mysql
  masterUsername: admin
  masterUserPassword: {name: db-password, key: password}
  dbSubnetGroupRef: {from: {name: coffee-subnets}}
  kmsKeyRef: {from: {name: coffee-key}}
  vpcSecurityGroupRefs: [{from: {name: coffee-sg}}]
"#;

/// port-ack's output of ACK's published DBInstance manifests and of an ACK DBCluster is accepted
/// by the API server under strict field validation (a server-side dry run: nothing is made), and
/// what it left out is listed.
#[tokio::test]
async fn ported_ack_manifests_are_accepted_under_strict_field_validation() {
    let (client, ns, _api, _rds) = crate::common::setup("port-ack").await;
    let dir = std::env::temp_dir().join(crate::common::unique("port-ack"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let fixtures = [
        "db_instance_postgres13_t3_micro.yaml",
        "db_instance_postgres17_adopt.yaml",
    ];
    for (n, fixture) in fixtures.iter().enumerate() {
        let path = dir.join(fixture);
        let text = crate::takeover::ack_text(fixture, &format!("ack{n}"), &ns);
        std::fs::write(&path, text).unwrap();
        files.push(path);
    }
    let cluster = dir.join("cluster.yaml");
    std::fs::write(&cluster, ACK_CLUSTER).unwrap();
    files.push(cluster);
    let mut args = vec!["port-ack"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (ok, out, err) = plugin(&ns, &args);
    assert!(ok, "{err}");
    assert!(
        err.contains("left out: DBCluster coffee: kmsKeyRef: use kmsKeyID"),
        "{err}"
    );
    assert!(err.contains("vpcSecurityGroupRefs"), "{err}");
    let params = PatchParams::apply("kubectl-rds")
        .validation_strict()
        .dry_run();
    let mut applied = 0;
    for document in serde_yaml::Deserializer::from_str(&out) {
        let object: DynamicObject = serde::Deserialize::deserialize(document).expect("an object");
        let kind = object.types.clone().expect("typed").kind;
        let gvk = GroupVersionKind::gvk("rds.operator.rs", "v1alpha1", &kind);
        let resource =
            ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_lowercase()));
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &resource);
        let name = object.metadata.name.clone().unwrap();
        let made = api.patch(&name, &params, &Patch::Apply(&object)).await;
        made.unwrap_or_else(|e| panic!("{kind} {name}: {e}"));
        applied += 1;
    }
    assert_eq!(applied, 3, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The release archive deploy/krew/release.sh makes installs with krew from its manifest (the
/// archive given locally, its SHA-256 checked by krew), and kubectl then runs `kubectl rds`.
#[test]
fn krew_installs_the_plugin_from_its_manifest_and_a_locally_built_archive() {
    let out = std::env::temp_dir().join(crate::common::unique("krew"));
    let release = Command::new(format!("{}/deploy/krew/release.sh", common::REPO))
        .args([env!("CARGO_BIN_EXE_kubectl-rds"), out.to_str().unwrap()])
        .output()
        .expect("release.sh");
    let archive = String::from_utf8_lossy(&release.stdout).trim().to_owned();
    assert!(
        release.status.success(),
        "{}",
        String::from_utf8_lossy(&release.stderr)
    );
    let manifest = std::fs::read_to_string(out.join("rds.yaml")).unwrap();
    assert!(
        !manifest.contains("${"),
        "every placeholder filled: {manifest}"
    );
    let root = out.join("krew-root");
    let krew = common::tool("krew");
    let installed = Command::new(&krew)
        .env("KREW_ROOT", &root)
        .args([
            "install",
            &format!("--manifest={}", out.join("rds.yaml").display()),
        ])
        .arg(format!("--archive={archive}"))
        .output()
        .expect("krew runs");
    let said = String::from_utf8_lossy(&installed.stderr);
    assert!(installed.status.success(), "krew install: {said}");
    // kubectl finds it on the PATH krew manages.
    let kubectl = common::tool("kubectl");
    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let version = Command::new(&kubectl)
        .env("PATH", path)
        .args(["rds", "--version"])
        .output()
        .expect("kubectl runs");
    let text = String::from_utf8_lossy(&version.stdout);
    assert_eq!(
        text.trim(),
        format!("kubectl-rds {}", env!("CARGO_PKG_VERSION"))
    );
    let _ = std::fs::remove_dir_all(&out);
}
