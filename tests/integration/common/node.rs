//! The node (tests/env/node.sh: kubelet, containerd, kube-scheduler) beside the shared control
//! plane, started on first use by the tests that run Pods, with the images they run
//! (tests/env/images.sh); the chart installed by helm, and what the tests read of Pods.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, LogParams};

use super::*;

static NODE: OnceLock<()> = OnceLock::new();

/// How a Pod on the node reaches the emulator: the host's side of the pod bridge, which the node
/// maps to 127.0.0.1.
pub fn emulator_from_pods() -> String {
    let port = aws_endpoint()
        .rsplit(':')
        .next()
        .unwrap_or("4566")
        .to_owned();
    format!("http://10.88.0.1:{port}")
}

/// The node, Ready, with the operator's and the stand-in app's images imported.
pub fn node() {
    NODE.get_or_init(|| {
        let cp = kubeconfig()
            .parent()
            .expect("control plane folder")
            .to_owned();
        let started = Instant::now();
        let ok = Command::new(format!("{REPO}/tests/env/node.sh"))
            .arg("start")
            .arg(&cp)
            .stderr(Stdio::inherit())
            .status()
            .expect("run tests/env/node.sh");
        assert!(ok.success(), "the test node did not start (see above)");
        eprintln!("node Ready in {:.1} s", started.elapsed().as_secs_f64());
        let started = Instant::now();
        import(&["operator", "app"]);
        eprintln!(
            "images built and imported in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    });
}

/// Builds these images (tests/env/images.sh) and imports them into the node.
pub fn import_images(names: &[&str]) {
    node();
    import(names);
}

/// Gives an image on the node a second name, as a mirror of a registry would hold it.
pub fn tag_image(image: &str, name: &str) {
    node();
    let socket = containerd_socket().to_string_lossy().into_owned();
    let args = [
        "-a", &socket, "-n", "k8s.io", "images", "tag", "--force", image, name,
    ];
    let (ok, out, err) = run(Path::new("ctr"), &args);
    assert!(ok, "ctr {args:?}: {out}{err}");
}

fn containerd_socket() -> PathBuf {
    kubeconfig()
        .parent()
        .expect("control plane folder")
        .join("node/containerd.sock")
}

fn import(names: &[&str]) {
    let socket = containerd_socket();
    let ok = Command::new(format!("{REPO}/tests/env/images.sh"))
        .arg("import")
        .arg(&socket)
        .args(names)
        .stderr(Stdio::inherit())
        .status()
        .expect("run tests/env/images.sh");
    assert!(
        ok.success(),
        "the images {names:?} were not built or imported (see above)"
    );
}

/// Runs helm against the control plane; (succeeded, stdout, stderr).
pub fn helm(args: &[&str]) -> (bool, String, String) {
    on_the_cluster("helm", args)
}

/// Runs kubectl against the control plane; its output, once it succeeded.
pub fn kubectl(args: &[&str]) -> String {
    let (ok, out, err) = on_the_cluster("kubectl", args);
    assert!(ok, "kubectl {args:?}: {out}{err}");
    out
}

/// Runs a test tool with the control plane's kubeconfig; (succeeded, stdout, stderr).
fn on_the_cluster(name: &str, args: &[&str]) -> (bool, String, String) {
    let kubeconfig = kubeconfig().to_string_lossy().into_owned();
    let mut all = vec!["--kubeconfig", kubeconfig.as_str()];
    all.extend_from_slice(args);
    run(&tool(name), &all)
}

/// The chart's values that run the operator from the image built here against the emulator,
/// with AWS credentials from the Secret `aws` of its namespace.
pub fn chart_values() -> Vec<String> {
    [
        "image.repository=rds-operator.test/rds-operator",
        "image.tag=dev",
        "image.pullPolicy=Never",
        "aws.credentials.secretName=aws",
        "driftInterval=10s",
        "busyPollInterval=1s",
        // Cluster-scoped: one release of the tests that run at once may own it (ship.rs checks it).
        "admissionPolicy.enabled=false",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        format!("aws.endpointUrl={}", emulator_from_pods()),
        format!("aws.region={}", region()),
    ])
    .collect()
}

/// The AWS credentials Secret the chart's Deployment reads (`aws.credentials.secretName`).
pub async fn aws_secret(client: &Client, ns: &str) {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret: Secret = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "aws"},
        "stringData": {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"},
    }))
    .expect("secret");
    api.create(&PostParams::default(), &secret)
        .await
        .expect("create the AWS credentials Secret");
}

/// The Pods of a namespace with this label selector.
pub async fn pods(client: &Client, ns: &str, selector: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    (api.list(&ListParams::default().labels(selector)).await)
        .map(|l| l.items)
        .unwrap_or_default()
}

/// Whether the Pod's Ready condition is True.
pub fn pod_ready(pod: &Pod) -> bool {
    (pod.status.as_ref().and_then(|s| s.conditions.as_ref()))
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Restarts of the Pod's first container.
pub fn restarts(pod: &Pod) -> i32 {
    (pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref()))
    .and_then(|c| c.first().map(|c| c.restart_count))
    .unwrap_or_default()
}

/// The log of a Pod's container (through the kubelet, as `kubectl logs` reads it); empty when it
/// cannot be read yet.
pub async fn pod_log(client: &Client, ns: &str, pod: &str, previous: bool) -> String {
    let api: Api<Pod> = Api::namespaced(client.clone(), ns);
    let params = LogParams {
        previous,
        ..Default::default()
    };
    api.logs(pod, &params).await.unwrap_or_default()
}

/// Waits until the Deployment has `n` available replicas.
pub async fn wait_available(client: &Client, ns: &str, name: &str, n: i32) {
    let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
    wait_for(
        &format!("Deployment {ns}/{name} to have {n} available replicas"),
        Duration::from_secs(180),
        || async {
            let d = api.get(name).await.ok()?;
            let available = d.status?.available_replicas.unwrap_or_default();
            (available == n).then_some(())
        },
    )
    .await;
}

/// One request the API server's audit log recorded (tests/env/controlplane.sh logs every request
/// of a ServiceAccount): (verb, API group, resource with its subresource, response code).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Audited {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub code: i64,
}

/// The requests of a ServiceAccount, as the API server's audit log has them.
pub fn audited(namespace: &str, service_account: &str) -> Vec<Audited> {
    let user = format!("system:serviceaccount:{namespace}:{service_account}");
    let path = kubeconfig()
        .parent()
        .expect("control plane folder")
        .join("audit.log");
    let log = std::fs::read_to_string(path).unwrap_or_default();
    (log.lines())
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|e| e["user"]["username"] == user.as_str())
        .map(|e| {
            let o = &e["objectRef"];
            let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_owned();
            let mut resource = text(&o["resource"]);
            if let Some(sub) = o["subresource"].as_str() {
                resource = format!("{resource}/{sub}");
            }
            Audited {
                verb: text(&e["verb"]),
                group: text(&o["apiGroup"]),
                resource,
                code: e["responseStatus"]["code"].as_i64().unwrap_or_default(),
            }
        })
        .collect()
}
