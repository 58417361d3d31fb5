//! `kubectl rds report` on a real node (issue 77): the logs of the operator's Pods go into the
//! tarball through the redactor. A Pod labelled as the operator's writes a password, its base64,
//! an AWS secret access key and key id, an RDS IAM token and a bearer token into its log; none
//! of them, in any form, is in the report, and the lines around them are.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;

use crate::common::{self, wait_for};

const PASSWORD: &str = "Sup3r-Secret-Passw0rd-77";
const SECRET_KEY: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const SIGNATURE: &str = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
const SESSION: &str = "FwoGZXIvYXdzEJr8SESSIONtokenQz";
const BEARER: &str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJvcGVyYXRvciJ9.c2lnbmF0dXJl";

/// The log lines the stand-in operator Pod writes: each secret in a shape a log line could hold.
fn seeded() -> Vec<String> {
    let b64 = base64(PASSWORD);
    vec![
        "seeded: the lines that follow each hold a secret".into(),
        format!("login failed for admin password={PASSWORD}"),
        format!(r#"{{"level":"debug","masterUserPassword":"{PASSWORD}"}}"#),
        // The chart's JSON log format: a message holding JSON, its quotes escaped.
        format!(
            r#"{{"level":"DEBUG","fields":{{"message":"sent {{\"password\":\"{PASSWORD}\"}}"}}}}"#
        ),
        format!("read Secret data {{password: {b64}}}"),
        format!("read {} from the volume", base64(SECRET_KEY)),
        format!("mysql://admin:{PASSWORD}@db.example:3306/coffee"),
        format!("aws_secret_access_key {SECRET_KEY} access key {KEY_ID}"),
        format!(
            "token db.example:3306/?Action=connect&DBUser=app&X-Amz-Credential={KEY_ID}%2F20261207%2Fus-east-1%2Frds-db%2Faws4_request&X-Amz-Security-Token={SESSION}&X-Amz-Signature={SIGNATURE}"
        ),
        format!("Authorization: Bearer {BEARER}"),
        "seeded: done".into(),
    ]
}

fn base64(text: &str) -> String {
    aws_smithy_types::base64::encode(text)
}

#[tokio::test]
async fn the_report_holds_no_secret_an_operator_pod_logged() {
    let _shared = crate::CLUSTER.read().await;
    common::node();
    let client = common::client_with_crd().await;
    let ns = common::namespace(&client, "report").await;
    let script = format!(
        "for (const l of {}) console.log(l); setInterval(() => {{}}, 1e9);",
        serde_json::to_string(&seeded()).unwrap()
    );
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "rds-operator-standin",
                     "labels": {"app.kubernetes.io/name": "rds-operator"}},
        "spec": {"containers": [{"name": "operator",
                  "image": "rds-operator.test/coffee-manage:dev", "imagePullPolicy": "Never",
                  "command": ["node", "-e", script]}],
                 "terminationGracePeriodSeconds": 0}
    }))
    .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    (pods.create(&PostParams::default(), &pod).await).expect("the stand-in Pod");
    wait_for("its log written", Duration::from_secs(120), || async {
        let log = common::pod_log(&client, &ns, "rds-operator-standin", false).await;
        log.contains("seeded: done").then_some(())
    })
    .await;

    let archive = std::env::temp_dir().join(format!("{}.tar.gz", common::unique("report")));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-rds"))
        .env("KUBECONFIG", common::kubeconfig())
        .args(["-n", &ns, "report", "--operator-namespace", &ns, "-o"])
        .arg(&archive)
        .output()
        .expect("kubectl-rds runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tarball = std::fs::read(&archive).expect("the report");
    let _ = std::fs::remove_file(&archive);
    let mut files = tar::Archive::new(flate2::read::GzDecoder::new(&tarball[..]));
    let mut log = None;
    let mut everything = String::new();
    for file in files.entries().expect("a tarball") {
        let mut file = file.expect("an entry");
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).expect("text");
        if file.path().unwrap().ends_with("rds-operator-standin.log") {
            log = Some(text.clone());
        }
        everything.push_str(&text);
    }
    let log = log.expect("the operator Pod's log is in the report");
    assert!(
        log.contains("seeded: done") && log.contains("login failed for admin"),
        "{log}"
    );
    assert!(log.contains("[redacted]"), "{log}");
    for secret in [
        PASSWORD,
        &base64(PASSWORD),
        SECRET_KEY,
        &base64(SECRET_KEY),
        KEY_ID,
        SIGNATURE,
        SESSION,
        BEARER,
        "Sup3r-Secret",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} is in the report:\n{log}"
        );
    }
}
