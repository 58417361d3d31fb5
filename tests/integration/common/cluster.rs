//! The control plane: the kubeconfig of the one started for this test binary, clients, the CRDs
//! and admission policy, namespaces, names and Secrets.

use super::*;

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

static CONTROL_PLANE: OnceLock<PathBuf> = OnceLock::new();

static CRD_INSTALLED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();

/// The kubeconfig of the shared control plane, started on first use. RDS_OPERATOR_TEST_KUBECONFIG
/// points the tests at a control plane that is already running instead.
pub fn kubeconfig() -> &'static Path {
    CONTROL_PLANE.get_or_init(|| {
        if let Ok(path) = std::env::var("RDS_OPERATOR_TEST_KUBECONFIG") {
            return PathBuf::from(path);
        }
        let dir =
            std::env::temp_dir().join(format!("rds-operator-controlplane-{}", std::process::id()));
        let out = Command::new(format!("{REPO}/tests/env/controlplane.sh"))
            .arg("start")
            .arg(&dir)
            .env("CONTROLPLANE_WATCH_PID", std::process::id().to_string())
            .stderr(Stdio::inherit())
            .output()
            .expect("run tests/env/controlplane.sh");
        assert!(
            out.status.success(),
            "the test control plane did not start (see above)"
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// A client of the control plane as its admin.
pub async fn client() -> Client {
    let kubeconfig = Kubeconfig::read_from(kubeconfig()).expect("read kubeconfig");
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kubeconfig is usable");
    Client::try_from(config).expect("client")
}

/// A client with every kind's CRD (and the DBInstance admission policy) installed and established.
pub async fn client_with_crd() -> Client {
    let client = client().await;
    CRD_INSTALLED
        .get_or_init(|| async {
            let c = self::client().await;
            install_crd(&c).await;
        })
        .await;
    client
}

async fn install_crd(client: &Client) {
    // Every kind's CRD, as `make crds` wrote it.
    for kind in rds_operator::kinds::KINDS {
        install_one_crd(client, &format!("{}.yaml", (kind.name)())).await;
    }
    install_policy(client).await;
}

async fn install_one_crd(client: &Client, file: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let yaml = std::fs::read_to_string(format!("{REPO}/crds/{file}")).expect("read a CRD of crds/");
    let crd: CustomResourceDefinition = serde_yaml::from_str(&yaml).expect("CRD YAML parses");
    let name = crd.metadata.name.clone().expect("CRD has a name");
    crds.patch(
        &name,
        &PatchParams::apply("rds-operator-tests").force(),
        &Patch::Apply(&crd),
    )
    .await
    .expect("apply CRD");
    established(client, &name).await;
}

/// Waits for the CRD of this name to be established (its kind served).
pub async fn established(client: &Client, name: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    wait_for("CRD established", Duration::from_secs(30), || async {
        let crd = crds.get(name).await.ok()?;
        crd.status?
            .conditions?
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
            .then_some(())
    })
    .await;
}

async fn install_policy(client: &Client) {
    for doc in std::fs::read_to_string(format!("{REPO}/crds/dbinstance-policy.yaml"))
        .expect("read policy")
        .split("\n---\n")
    {
        let obj: kube::api::DynamicObject = serde_yaml::from_str(doc).expect("policy YAML parses");
        let gvk =
            kube::api::GroupVersionKind::try_from(obj.types.as_ref().expect("typed")).expect("gvk");
        let (ar, _) = kube::discovery::pinned_kind(client, &gvk)
            .await
            .expect("policy kind is served");
        let api: Api<kube::api::DynamicObject> = Api::all_with(client.clone(), &ar);
        api.patch(
            obj.metadata.name.as_deref().expect("named"),
            &PatchParams::apply("rds-operator-tests").force(),
            &Patch::Apply(&obj),
        )
        .await
        .expect("apply admission policy");
    }
}

/// A fresh namespace for one test.
pub async fn namespace(client: &Client, prefix: &str) -> String {
    let name = unique(prefix);
    let api: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("namespace");
    api.create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
    name
}

/// A name no other test (or earlier run against the same moto) uses.
pub fn unique(prefix: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    format!(
        "{prefix}-{:06x}",
        (nanos ^ (std::process::id() as u128) << 20) & 0xff_ffff
    )
}

/// A Secret holding one key.
pub async fn secret(client: &Client, ns: &str, name: &str, key: &str, value: &str) {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "stringData": {key: value},
    }))
    .expect("secret");
    api.create(&PostParams::default(), &secret)
        .await
        .expect("create secret");
}

/// An AWSAccount (cluster-scoped) of this name and spec.
pub fn account(name: &str, spec: serde_json::Value) -> rds_operator::awsaccount::AWSAccount {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "AWSAccount",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid AWSAccount")
}

/// Creates that AWSAccount; the AWSAccounts API.
pub async fn create_account(
    client: &kube::Client,
    name: &str,
    spec: serde_json::Value,
) -> kube::Api<rds_operator::awsaccount::AWSAccount> {
    let api: kube::Api<rds_operator::awsaccount::AWSAccount> = kube::Api::all(client.clone());
    api.create(&kube::api::PostParams::default(), &account(name, spec))
        .await
        .expect("create AWSAccount");
    api
}
