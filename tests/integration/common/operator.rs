//! The operator under test, as a process of its own: start, kill, its logs and /metrics; the
//! tools the chart tests run.

use super::*;

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
        Self::start_with_env(namespace, extra_args, &[])
    }

    /// [`Operator::start_with`], with these environment variables too (its own AWS keys, say).
    pub fn start_with_env(namespace: &str, extra_args: &[&str], env: &[(&str, &str)]) -> Operator {
        Self::spawn(&Self::args(namespace, extra_args), kubeconfig(), env)
    }

    /// The arguments the tests start the operator with: `namespace` watched, a 1 s busy poll, a
    /// 5 s health and drift interval unless `extra_args` give theirs.
    pub fn args(namespace: &str, extra_args: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = ["--namespace", namespace, "--busy-poll-interval", "1s"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        if !extra_args.contains(&"--health-interval") {
            args.extend(["--health-interval".to_string(), "5s".to_string()]);
        }
        if !extra_args.contains(&"--drift-interval") {
            args.extend(["--drift-interval".to_string(), "5s".to_string()]);
        }
        args.extend(extra_args.iter().map(|a| a.to_string()));
        args
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

    /// Sends the operator's process a signal (`-STOP` freezes it, as a frozen node would,
    /// `-CONT` thaws it).
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
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

/// Path of a test tool: "helm", "kstatus", "promtool", or one of the control plane binaries
/// ("kubectl"...), as built (and cached) by tests/env/build.sh.
pub fn tool(name: &str) -> PathBuf {
    let mut cmd = Command::new(format!("{REPO}/tests/env/build.sh"));
    match name {
        "helm" | "kstatus" | "shipcheck" | "olm" | "operator-sdk" | "krew" => cmd.arg(name),
        "promtool" => cmd.arg("prometheus"),
        _ => &mut cmd,
    };
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

/// A client and kubeconfig acting as the ServiceAccount `sa` of `namespace` (a token of an hour).
pub async fn service_account_kubeconfig(
    namespace: &str,
    sa: &str,
    dir: &std::path::Path,
) -> (Client, std::path::PathBuf) {
    let admin = kubeconfig().to_str().unwrap().to_owned();
    let token = kubectl(&["-n", namespace, "create", "token", sa, "--duration", "1h"]);
    let admin_config: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&admin).unwrap()).unwrap();
    // The admin's cluster (its server and CA): the operator verifies the API server's certificate.
    let cluster = admin_config["clusters"][0]["cluster"].clone();
    let kubeconfig = serde_json::json!({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": sa, "user": {"token": token.trim()}}],
        "contexts": [{"name": "sa", "context": {"cluster": "test", "user": sa}}],
        "current-context": "sa",
    });
    let path = dir.join("sa.kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&kubeconfig).unwrap()).unwrap();
    let config = Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&path).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    (Client::try_from(config).unwrap(), path)
}
