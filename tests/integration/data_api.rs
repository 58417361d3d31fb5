//! The RDS Data API on a DBCluster (enableHttpEndpoint), on the emulator's real MariaDB: status
//! names the cluster ARN an app passes, the app's ExecuteStatement (boto3's rds-data, as an app
//! would call it) writes a row the connection Secret's client reads, and once the spec turns the
//! endpoint off the Data API refuses.

use std::process::Command;

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use serde_json::{Value, json};

use crate::clusters::{cluster, ready};
use crate::common::{self, *};

/// boto3's rds-data ExecuteStatement (or, with `secret`, Secrets Manager's CreateSecret first): the
/// answer as JSON, or the error's code and message.
fn data_api(args: &[&str]) -> Result<Value, String> {
    let cache = std::env::var("RDS_OPERATOR_CACHE")
        .unwrap_or_else(|_| format!("{}/.cache/rds-operator", std::env::var("HOME").unwrap()));
    let script = r#"
import json, sys, boto3
from botocore.exceptions import ClientError
what, rest = sys.argv[1], sys.argv[2:]
try:
    if what == "secret":
        sm = boto3.client("secretsmanager", region_name="us-east-1")
        out = sm.create_secret(Name=rest[0], SecretString=json.dumps({"username": rest[1], "password": rest[2]}))
        print(json.dumps({"arn": out["ARN"]}))
    else:
        data = boto3.client("rds-data", region_name="us-east-1")
        out = data.execute_statement(resourceArn=rest[0], secretArn=rest[1], database=rest[2], sql=rest[3])
        out.pop("ResponseMetadata", None)
        print(json.dumps(out))
except ClientError as e:
    print(json.dumps({"error": e.response["Error"]["Code"], "message": e.response["Error"]["Message"]}))
"#;
    let out = Command::new(format!("{cache}/moto-venv/bin/python"))
        .arg("-c")
        .arg(script)
        .args(args)
        .env("AWS_ENDPOINT_URL", aws_endpoint())
        .output()
        .expect("run boto3");
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("boto3: {}", String::from_utf8_lossy(&out.stderr)));
    match answer.get("error") {
        Some(code) => Err(format!("{code}: {}", answer["message"])),
        None => Ok(answer),
    }
}

#[tokio::test]
async fn an_apps_execute_statement_writes_a_row_the_secret_reads_until_the_endpoint_goes_off() {
    let (client, ns, _api, _rds) = setup("data-api").await;
    let id = common::unique("dapi");
    let _operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let spec = json!({"enableHttpEndpoint": true,
                      "tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters
        .create(&PostParams::default(), &cluster(&id, spec))
        .await)
        .expect("create");
    let on = wait_object(&clusters, "coffee", "Ready with status.dataAPI", |c| {
        ready(c) && (c.status.as_ref()).is_some_and(|s| s.data_api.is_some())
    })
    .await;
    let status = on.status.unwrap();
    let api = status.data_api.unwrap();
    assert_eq!(Some(&api.resource_arn), status.common.arn.as_ref());

    // The app's own secret of the master user's credentials.
    let keys = (common::secret_data(&client, &ns, "coffee-db").await).expect("the Secret");
    let secret = data_api(&[
        "secret",
        &common::unique("dapi-app"),
        "admin",
        &keys["password"],
    ])
    .expect("CreateSecret");
    let secret = secret["arn"].as_str().unwrap().to_owned();
    let run = |sql: &str| data_api(&["sql", &api.resource_arn, &secret, "COFFEE", sql]);
    run("CREATE TABLE beans (id INT PRIMARY KEY)").expect("CREATE TABLE");
    let inserted = run("INSERT INTO beans VALUES (7)").expect("INSERT");
    assert_eq!(inserted["numberOfRecordsUpdated"], 1, "{inserted}");
    let rows = run("SELECT id FROM beans").expect("SELECT");
    assert_eq!(rows["records"], json!([[{"stringValue": "7"}]]), "{rows}");
    let (read, out) = common::mariadb_keys(&keys, &keys["password"], "SELECT id FROM beans");
    assert!(
        read && out.trim() == "7",
        "the Secret's client reads the app's row: {out}"
    );

    let off = json!({"spec": {"enableHttpEndpoint": false}});
    (clusters
        .patch("coffee", &PatchParams::default(), &Patch::Merge(&off))
        .await)
        .unwrap();
    wait_object(&clusters, "coffee", "status.dataAPI gone", |c| {
        (c.status.as_ref()).is_some_and(|s| s.data_api.is_none())
    })
    .await;
    let refused = run("SELECT id FROM beans").expect_err("refused while off");
    assert!(
        refused.contains("BadRequestException") && refused.contains("not enabled"),
        "{refused}"
    );
    assert_eq!(common::calls(&id, "DisableHttpEndpoint"), 1);
    assert_eq!(
        common::calls(&id, "EnableHttpEndpoint"),
        0,
        "on from the creation"
    );
    (clusters.delete("coffee", &Default::default()).await).unwrap();
    wait_object_gone(&clusters, "coffee").await;
}
