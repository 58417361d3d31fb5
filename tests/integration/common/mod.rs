//! The test bed: a real kube-apiserver (tests/env/controlplane.sh) and moto (localstack/moto.sh),
//! shared by every test in this binary; each test gets its own namespace and RDS identifiers.

#![allow(dead_code)] // each test module uses a different part of the bed

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use rds_operator::crd::DBInstance;

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

/// A client with the DBInstance CRD (and its admission policy) installed and established.
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
    for file in [
        "dbinstance.yaml",
        "dbsubnetgroup.yaml",
        "dbparametergroup.yaml",
    ] {
        install_one_crd(client, file).await;
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
    wait_for("CRD established", Duration::from_secs(30), || async {
        let crd = crds.get(&name).await.ok()?;
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

/// Polls `check` until it returns Some, or panics naming `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The AWS endpoint the tests use (moto from localstack/moto.sh, or LocalStack).
pub fn aws_endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL")
        .expect("AWS_ENDPOINT_URL must name the AWS emulator: start one with `localstack/moto.sh start` (see README)")
}

/// An RDS client of the emulator, independent of the operator's (plays the console user).
pub async fn rds() -> aws_sdk_rds::Client {
    aws_sdk_rds::Client::new(&emulator_config().await)
}

/// An SQS client of the emulator (plays EventBridge's sender, and looks into queues).
pub async fn sqs() -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::new(&emulator_config().await)
}

async fn emulator_config() -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(aws_endpoint())
        .region(aws_config::Region::new(region()))
        .credentials_provider(aws_sdk_rds::config::Credentials::new(
            std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".into()),
            std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".into()),
            None,
            None,
            "tests",
        ))
        .load()
        .await
}

pub fn region() -> String {
    std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into())
}

/// Runs localstack/init/coffee_network.py (the test bed's AWS set-up) with these arguments against
/// the emulator, and returns what it prints.
pub fn coffee_network(args: &[&str]) -> String {
    let cache = std::env::var("RDS_OPERATOR_CACHE")
        .unwrap_or_else(|_| format!("{}/.cache/rds-operator", std::env::var("HOME").unwrap()));
    let out = Command::new(format!("{cache}/moto-venv/bin/python"))
        .arg(format!("{REPO}/localstack/init/coffee_network.py"))
        .args(args)
        .env("AWS_ENDPOINT_URL", aws_endpoint())
        .output()
        .expect("run coffee_network.py");
    assert!(
        out.status.success(),
        "coffee_network.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A change made in the console: one ModifyDBInstance of `id`, applied at once.
pub async fn console_modify(
    rds: &aws_sdk_rds::Client,
    id: &str,
    change: impl FnOnce(
        aws_sdk_rds::operation::modify_db_instance::builders::ModifyDBInstanceFluentBuilder,
    ) -> aws_sdk_rds::operation::modify_db_instance::builders::ModifyDBInstanceFluentBuilder,
) {
    change(rds.modify_db_instance().db_instance_identifier(id))
        .apply_immediately(true)
        .send()
        .await
        .expect("out-of-band ModifyDBInstance");
}

/// Waits until RDS reports the instance's class as `class`.
pub async fn wait_class(rds: &aws_sdk_rds::Client, id: &str, class: &str) {
    wait_for(
        &format!("{id} at {class} in RDS"),
        Duration::from_secs(90),
        || async {
            let i = describe(rds, id).await?;
            (i.db_instance_class() == Some(class)).then_some(())
        },
    )
    .await;
}

/// Whether the endpoint is moto with moto_ext (which counts calls); LocalStack is not.
pub fn has_moto_ext() -> bool {
    moto_ext_get("/_rds_ext/config").is_some()
}

/// RDS API calls the emulator served for one identifier, by action (moto_ext's count).
pub fn server_calls(identifier: &str) -> BTreeMap<String, u64> {
    let body = moto_ext_get(&format!("/_rds_ext/calls?identifier={identifier}"))
        .expect("the emulator counts calls (moto with localstack/moto_ext)");
    serde_json::from_str(&body).expect("calls JSON")
}

pub fn moto_ext_get(path: &str) -> Option<String> {
    // A busy emulator may drop one request of many: ask up to three times.
    (0..3).find_map(|attempt| {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        match http(&emulator_host(), "GET", path)? {
            (200, body) => Some(body),
            _ => None,
        }
    })
}

/// POST to moto_ext's (or moto's) control API; true on 200.
pub fn moto_ext_post(path: &str) -> bool {
    matches!(http(&emulator_host(), "POST", path), Some((200, _)))
}

fn emulator_host() -> String {
    aws_endpoint()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned()
}

/// A bodyless HTTP/1.0 request: (status code, body), or None when nothing answers.
fn http(host: &str, method: &str, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(host).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, body.to_owned()))
}

/// The operator under test: the real binary, as a local process watching one namespace.
pub struct Operator {
    child: Child,
    /// Its POD_NAME: the identity it holds a leader election Lease under.
    pub name: String,
    pub log: PathBuf,
    /// Where it serves /metrics, /healthz and /readyz.
    pub http: String,
}

impl Operator {
    pub fn start(namespace: &str) -> Operator {
        Self::start_with(namespace, &[])
    }

    pub fn start_with(namespace: &str, extra_args: &[&str]) -> Operator {
        let mut args: Vec<String> = ["--namespace", namespace, "--busy-poll-interval", "1s"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        if !extra_args.contains(&"--drift-interval") {
            args.extend(["--drift-interval".to_string(), "5s".to_string()]);
        }
        args.extend(extra_args.iter().map(|a| a.to_string()));
        Self::spawn(&args, kubeconfig(), &[])
    }

    /// The operator binary with exactly these arguments (plus --metrics-addr on a free port), this
    /// kubeconfig, and the emulator's AWS settings.
    pub fn spawn(args: &[String], kubeconfig: &Path, env: &[(&str, &str)]) -> Operator {
        let name = unique("operator");
        let log = std::env::temp_dir().join(format!("{name}.log"));
        let file = std::fs::File::create(&log).expect("operator log file");
        let http = format!("127.0.0.1:{}", free_port());
        let binary = std::env::var("RDS_OPERATOR_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_rds-operator").to_owned());
        let mut command = Command::new(binary);
        command
            .args(args)
            .args(["--metrics-addr", &http])
            .env("KUBECONFIG", kubeconfig)
            .env("POD_NAME", &name)
            .env("AWS_ENDPOINT_URL", aws_endpoint())
            .env("AWS_REGION", region())
            .env(
                "AWS_ACCESS_KEY_ID",
                std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "test".into()),
            )
            .env(
                "AWS_SECRET_ACCESS_KEY",
                std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "test".into()),
            )
            .env("RUST_LOG", "info,rds_operator=debug")
            .stdout(file.try_clone().expect("log file"))
            .stderr(file);
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().expect("start the rds-operator binary");
        Operator {
            child,
            name,
            log,
            http,
        }
    }

    /// Kills the process at once (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// GET one of the operator's HTTP endpoints: (status code, body), None while it does not answer.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        http(&self.http, "GET", path)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let logs = self.logs();
            let tail: Vec<&str> = logs.lines().rev().take(40).collect();
            eprintln!("---- last operator log lines ({}) ----", self.log.display());
            for line in tail.into_iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}

/// A TCP port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The DBInstance, once its status satisfies `check`.
pub async fn wait_dbi(
    api: &Api<DBInstance>,
    name: &str,
    what: &str,
    timeout: Duration,
    check: impl Fn(&DBInstance) -> bool,
) -> DBInstance {
    let start = Instant::now();
    loop {
        let db = api.get_opt(name).await.ok().flatten();
        if let Some(db) = db.as_ref().filter(|db| check(db)) {
            return db.clone();
        }
        if start.elapsed() > timeout {
            let conditions = db.and_then(|d| d.status).map(|s| s.conditions);
            panic!("timed out after {timeout:?} waiting for {what}; conditions: {conditions:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The status of the named condition, with its reason.
pub fn condition(db: &DBInstance, type_: &str) -> Option<(String, String, String)> {
    db.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

pub fn is_ready(db: &DBInstance) -> bool {
    condition(db, "Ready").is_some_and(|c| c.0 == "True")
}

/// Waits until the named object is gone from the API.
pub async fn wait_gone(api: &Api<DBInstance>, name: &str, timeout: Duration) {
    wait_for(
        &format!("DBInstance {name} to be gone"),
        timeout,
        || async { matches!(api.get_opt(name).await, Ok(None)).then_some(()) },
    )
    .await
}

/// Deletes the DBInstance and waits (90 s at most) until the operator has let it go.
pub async fn delete_and_wait(api: &Api<DBInstance>, name: &str) {
    delete(api, name).await;
    wait_gone(api, name, Duration::from_secs(90)).await;
}

pub async fn delete(api: &Api<DBInstance>, name: &str) {
    api.delete(name, &DeleteParams::default())
        .await
        .expect("delete DBInstance");
}

/// The Events recorded for an object.
pub async fn events(
    client: &Client,
    ns: &str,
    name: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    let api: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), ns);
    api.list(&Default::default())
        .await
        .expect("list events")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .collect()
}

/// Reasons of the Events recorded for an object.
pub async fn event_reasons(client: &Client, ns: &str, name: &str) -> Vec<String> {
    events(client, ns, name)
        .await
        .into_iter()
        .filter_map(|e| e.reason)
        .collect()
}

/// The instance as RDS reports it, or None.
pub async fn describe(
    rds: &aws_sdk_rds::Client,
    identifier: &str,
) -> Option<aws_sdk_rds::types::DbInstance> {
    match rds
        .describe_db_instances()
        .db_instance_identifier(identifier)
        .send()
        .await
    {
        Ok(out) => out.db_instances().first().cloned(),
        Err(e) => {
            let code = aws_sdk_rds::error::ProvideErrorMetadata::code(&e).map(str::to_owned);
            assert_eq!(
                code.as_deref(),
                Some("DBInstanceNotFound"),
                "describe {identifier}: {e:?}"
            );
            None
        }
    }
}

/// A Secret's data as text, or None when it does not exist.
pub async fn secret_data(
    client: &Client,
    ns: &str,
    name: &str,
) -> Option<BTreeMap<String, String>> {
    let api: Api<Secret> = Api::namespaced(client.clone(), ns);
    let secret = api.get_opt(name).await.expect("read Secret")?;
    Some(
        secret
            .data
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, String::from_utf8(v.0).expect("UTF-8 Secret value")))
            .collect(),
    )
}

/// The master password the emulator's instance was last given (moto_ext introspection).
pub fn rds_master_password(identifier: &str) -> Option<String> {
    let body = moto_ext_get(&format!(
        "/_rds_ext/master-password?identifier={identifier}"
    ))?;
    let value: serde_json::Value = serde_json::from_str(&body).ok()?;
    value["password"].as_str().map(str::to_owned)
}

/// Every Event note for an object, joined.
pub async fn event_notes(client: &Client, ns: &str, name: &str) -> String {
    let notes: Vec<String> = events(client, ns, name)
        .await
        .into_iter()
        .filter_map(|e| e.note)
        .collect();
    notes.join("\n")
}

/// Path of a test tool: "helm", "kstatus", or one of the control plane binaries ("kubectl"...), as
/// built (and cached) by tests/env/build.sh.
pub fn tool(name: &str) -> PathBuf {
    let mut cmd = Command::new(format!("{REPO}/tests/env/build.sh"));
    if name == "helm" || name == "kstatus" {
        cmd.arg(name);
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .expect("run tests/env/build.sh");
    assert!(
        out.status.success(),
        "tests/env/build.sh failed (see above)"
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join(name)
}

/// Runs a command, returning (success, stdout, stderr).
pub fn run(program: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(program)
        .args(args)
        .output()
        .expect("run command");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A DBInstance like the Coffee Manage one (MySQL 8.0.42, db.t3.micro, 20 GiB gp2, password from the
/// Secret `db-password`), with `extra` merged into its spec.
pub fn dbinstance(name: &str, identifier: &str, extra: serde_json::Value) -> DBInstance {
    let mut spec = serde_json::json!({
        "dbInstanceIdentifier": identifier,
        "engine": "mysql",
        "engineVersion": "8.0.42",
        "dbInstanceClass": "db.t3.micro",
        "allocatedStorage": 20,
        "storageType": "gp2",
        "masterUsername": "admin",
        "masterUserPassword": {"name": "db-password", "key": "password"},
        "dbName": "COFFEE",
        "tags": [{"key": "app", "value": "coffee-manage"}],
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            spec.insert(k.clone(), v.clone());
        }
    }
    serde_json::from_value(serde_json::json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBInstance",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid DBInstance")
}

/// A fresh namespace holding the password Secret `db-password`, with clients of the API server
/// and the emulator.
pub async fn setup(prefix: &str) -> (Client, String, Api<DBInstance>, aws_sdk_rds::Client) {
    let client = client_with_crd().await;
    let ns = namespace(&client, prefix).await;
    secret(
        &client,
        &ns,
        "db-password",
        "password",
        "Sup3r-Secret-Passw0rd",
    )
    .await;
    let api = Api::namespaced(client.clone(), &ns);
    (client, ns, api, rds().await)
}

/// A TCP proxy that forwards to `target` until told to hang; hanging, it accepts connections and
/// never answers, and stops forwarding on the connections it already has (as a network partition
/// that leaves sockets open would). Lives as long as the test process.
pub struct Proxy {
    pub port: u16,
    pub hang: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Proxy {
    pub fn start(target: String, hanging: bool) -> Proxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().unwrap().port();
        let hang = std::sync::Arc::new(AtomicBool::new(hanging));
        let flag = hang.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for client in listener.incoming().flatten() {
                if flag.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                pipe(
                    client.try_clone().unwrap(),
                    server.try_clone().unwrap(),
                    flag.clone(),
                );
                pipe(server, client, flag.clone());
            }
        });
        Proxy { port, hang }
    }
}

fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    hang: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            // Hanging: keep the socket, forward nothing more.
            while hang.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}

/// The reason of the Synced condition, or "".
pub fn synced_reason(db: &DBInstance) -> String {
    condition(db, "Synced").map(|c| c.1).unwrap_or_default()
}

/// Calls of one action the emulator served for an identifier (moto_ext's count).
/// How long a test waits for one thing the operator does.
pub const TIMEOUT: Duration = Duration::from_secs(90);

/// The calls of these actions the emulator served for one identifier, added up.
pub fn calls_of(identifier: &str, actions: &[&str]) -> u64 {
    actions.iter().map(|a| calls(identifier, a)).sum()
}

/// An instance's tags as RDS reports them.
pub fn tags_of(i: &aws_sdk_rds::types::DbInstance) -> std::collections::BTreeMap<String, String> {
    (i.tag_list().iter())
        .map(|t| {
            (
                t.key().unwrap_or_default().into(),
                t.value().unwrap_or_default().into(),
            )
        })
        .collect()
}

pub fn calls(identifier: &str, action: &str) -> u64 {
    server_calls(identifier).get(action).copied().unwrap_or(0)
}

/// RDS calls of one operation the operator itself counted (its /metrics), all outcomes.
pub fn operator_calls(operator: &Operator, operation: &str) -> u64 {
    let prefix = format!("rds_operator_rds_api_calls_total{{operation=\"{operation}\"");
    operator_metric(operator, &prefix) as u64
}

/// The operator's metric lines that start with `prefix`, summed (0 until it serves /metrics).
pub fn operator_metric(operator: &Operator, prefix: &str) -> f64 {
    let Some((_, page)) = operator.get("/metrics") else {
        return 0.0;
    };
    (page.lines())
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Now, in seconds since the epoch (as moto_ext's call log writes times).
pub fn epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Merges `spec` into a DBInstance's spec.
pub async fn patch_spec(api: &Api<DBInstance>, name: &str, spec: serde_json::Value) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(&serde_json::json!({ "spec": spec })),
    )
    .await
    .expect("patch spec");
}

/// An object of one of the group kinds, once it satisfies `check` (90 s at most).
pub async fn wait_object<K: rds_operator::managed::Reconciled>(
    api: &Api<K>,
    name: &str,
    what: &str,
    check: impl Fn(&K) -> bool,
) -> K {
    wait_for(what, Duration::from_secs(90), || async {
        let obj = api.get_opt(name).await.ok()??;
        check(&obj).then_some(obj)
    })
    .await
}

/// A condition of an object of one of the group kinds: (status, reason, message).
pub fn object_condition<K: rds_operator::managed::Reconciled>(
    obj: &K,
    type_: &str,
) -> Option<(String, String, String)> {
    let mut status = obj.status()?.clone();
    (K::conditions(&mut status).iter())
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// Waits until an object of one of the group kinds is gone from the API.
pub async fn wait_object_gone<K: rds_operator::managed::Reconciled>(api: &Api<K>, name: &str) {
    wait_for(
        &format!("{name} to be gone"),
        Duration::from_secs(120),
        || async { api.get_opt(name).await.ok()?.is_none().then_some(()) },
    )
    .await
}
