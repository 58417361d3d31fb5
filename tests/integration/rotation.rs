//! Rotations that running apps survive: the readers of a connection Secret rolled when its data
//! changes (`--roll-secret-readers`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use rds_operator::database::readers::{ReaderState, SECRET_VERSION, SecretReaders, WorkloadKind};
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::common::{self, Operator, TIMEOUT, dbinstance, is_ready, setup, wait_dbi, wait_for};

/// A pod template whose one container reads the Secret as `how` says.
fn template(how: &str, secret: &str) -> serde_json::Value {
    let mut container = json!({"name": "app", "image": "coffee-app:local"});
    let mut spec = json!({});
    match how {
        "envFrom" => container["envFrom"] = json!([{"secretRef": {"name": secret}}]),
        "env" => {
            container["env"] = json!([{"name": "APP_DB_PASSWORD",
                "valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}}])
        }
        "volume" => spec["volumes"] = json!([{"name": "db", "secret": {"secretName": secret}}]),
        _ => {}
    }
    spec["containers"] = json!([container]);
    json!({"metadata": {"labels": {"app": "reader"}}, "spec": spec})
}

/// A workload of `kind` named `name` (no replicas: the test bed's control plane has no node here,
/// and a rollout of none is done as soon as its controller sees it).
async fn workload(
    client: &Client,
    ns: &str,
    (kind, name): (WorkloadKind, &str),
    annotations: serde_json::Value,
    template: serde_json::Value,
) {
    let selector = json!({"matchLabels": {"app": "reader"}});
    let meta = json!({"name": name, "annotations": annotations});
    let pp = PostParams::default();
    match kind {
        WorkloadKind::Deployment => {
            let d: Deployment = serde_json::from_value(json!({"metadata": meta, "spec": {
                "replicas": 0, "selector": selector, "template": template}}))
            .unwrap();
            let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
            api.create(&pp, &d).await.expect("create the Deployment");
        }
        WorkloadKind::StatefulSet => {
            let s: StatefulSet = serde_json::from_value(json!({"metadata": meta, "spec": {
                "replicas": 0, "serviceName": name, "selector": selector, "template": template}}))
            .unwrap();
            let api: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
            api.create(&pp, &s).await.expect("create the StatefulSet");
        }
        WorkloadKind::DaemonSet => {
            // On no node: desired 0, rolled out once seen.
            let d: DaemonSet = serde_json::from_value(json!({"metadata": meta, "spec": {
                "selector": selector, "template": template}}))
            .unwrap();
            let api: Api<DaemonSet> = Api::namespaced(client.clone(), ns);
            api.create(&pp, &d).await.expect("create the DaemonSet");
        }
    }
}

/// The pod template annotations of a workload.
async fn template_annotations(
    client: &Client,
    ns: &str,
    (kind, name): (WorkloadKind, &str),
) -> BTreeMap<String, String> {
    let meta = match kind {
        WorkloadKind::Deployment => {
            let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
            api.get(name).await.unwrap().spec.unwrap().template.metadata
        }
        WorkloadKind::StatefulSet => {
            let api: Api<StatefulSet> = Api::namespaced(client.clone(), ns);
            api.get(name).await.unwrap().spec.unwrap().template.metadata
        }
        WorkloadKind::DaemonSet => {
            let api: Api<DaemonSet> = Api::namespaced(client.clone(), ns);
            api.get(name).await.unwrap().spec.unwrap().template.metadata
        }
    };
    meta.and_then(|m| m.annotations).unwrap_or_default()
}

fn readers(db: &DBInstance) -> Option<SecretReaders> {
    db.status.as_ref()?.common.secret_readers.clone()
}

/// A password rotated in the referenced Secret reaches the connection Secret, whose version rises
/// from 1 to 2; then every Deployment, StatefulSet and DaemonSet of the namespace that reads it
/// (by envFrom, env, a volume, or its reads-secrets annotation) has version 2 in its pod
/// template, and status lists them rolled out. A workload that opted out, one that reads another
/// Secret, and one of another namespace reading a Secret of the same name are untouched; none was
/// rolled when the Secret was first written.
#[tokio::test]
async fn a_rotated_password_rolls_the_workloads_of_the_namespace_that_read_the_secret() {
    let (client, ns, api, _rds) = setup("readers").await;
    let elsewhere = common::namespace(&client, "readers-other").await;
    let id = common::unique("readers");
    let operator = Operator::start_with(&ns, &["--roll-secret-readers"]);
    let key = "secret.rds.operator.rs/db-connection";
    let rolled = [
        (
            WorkloadKind::Deployment,
            "by-env-from",
            json!({}),
            "envFrom",
        ),
        (WorkloadKind::Deployment, "by-env", json!({}), "env"),
        (WorkloadKind::StatefulSet, "by-volume", json!({}), "volume"),
        (
            WorkloadKind::DaemonSet,
            "by-annotation",
            json!({"rds.operator.rs/reads-secrets": "db-connection"}),
            "none",
        ),
    ];
    for (kind, name, annotations, how) in &rolled {
        let t = template(how, "db-connection");
        workload(&client, &ns, (*kind, name), annotations.clone(), t).await;
    }
    let opted_out = json!({"rds.operator.rs/roll-on-secret-change": "false"});
    let t = template("envFrom", "db-connection");
    workload(
        &client,
        &ns,
        (WorkloadKind::Deployment, "opted-out"),
        opted_out,
        t,
    )
    .await;
    let t = template("envFrom", "another-secret");
    workload(
        &client,
        &ns,
        (WorkloadKind::Deployment, "reads-another"),
        json!({}),
        t,
    )
    .await;
    let t = template("envFrom", "db-connection");
    let other = (WorkloadKind::Deployment, "other-namespace");
    workload(&client, &elsewhere, other, json!({}), t).await;

    let spec = json!({"connectionSecret": {"name": "db-connection"}});
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create");
    wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let version = |s: &Secret| s.annotations().get(SECRET_VERSION).cloned();
    let first = secrets.get("db-connection").await.unwrap();
    assert_eq!(version(&first).as_deref(), Some("1"));
    for (kind, name, _, _) in &rolled {
        let annotations = template_annotations(&client, &ns, (*kind, name)).await;
        assert_eq!(
            annotations.get(key),
            None,
            "{name}: a new Secret rolls no reader"
        );
    }

    secrets
        .patch(
            "db-password",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"password": "Rotated-Passw0rd-1"}})),
        )
        .await
        .unwrap();
    let db = wait_dbi(&api, "db", "the readers rolled out", TIMEOUT, |db| {
        readers(db).is_some_and(|r| r.version == 2 && r.rolled_out() && r.readers.len() == 5)
    })
    .await;
    let changed = secrets.get("db-connection").await.unwrap();
    assert_eq!(version(&changed).as_deref(), Some("2"));
    let data = changed.data.unwrap();
    assert_eq!(data["password"].0, b"Rotated-Passw0rd-1");
    for (kind, name, _, _) in &rolled {
        let annotations = template_annotations(&client, &ns, (*kind, name)).await;
        assert_eq!(
            annotations.get(key).map(String::as_str),
            Some("2"),
            "{name}"
        );
    }
    let mut states: Vec<(String, ReaderState)> = (readers(&db).unwrap().readers.into_iter())
        .map(|r| (r.name, r.state))
        .collect();
    states.sort();
    let want = [
        ("by-annotation", ReaderState::RolledOut),
        ("by-env", ReaderState::RolledOut),
        ("by-env-from", ReaderState::RolledOut),
        ("by-volume", ReaderState::RolledOut),
        ("opted-out", ReaderState::OptedOut),
    ];
    let want: Vec<(String, ReaderState)> = want.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    assert_eq!(states, want);
    for (namespace, name) in [
        (&ns, "opted-out"),
        (&ns, "reads-another"),
        (&elsewhere, "other-namespace"),
    ] {
        let annotations =
            template_annotations(&client, namespace, (WorkloadKind::Deployment, name)).await;
        assert_eq!(
            annotations.get(key),
            None,
            "{namespace}/{name} is not touched"
        );
    }
    let notes = common::event_notes(&client, &ns, "db").await;
    assert!(notes.contains("rolled Deployment by-env"), "{notes}");

    // Nothing changes: no reader is rolled again (its template is as it was).
    let by_env = (WorkloadKind::Deployment, "by-env");
    let before = template_annotations(&client, &ns, by_env).await;
    let unrolled = || async { template_annotations(&client, &ns, by_env).await == before };
    common::holds_over_polls(&operator, "no reader is rolled again", unrolled).await;
    common::delete_and_wait(&api, "db").await;
}

/// A DBInstance whose master password RDS manages, with its secret's KMS key and rotation rules:
/// the key reaches RDS, the rules Secrets Manager (and a change of them); rds.operator.rs/rotate-now has RDS rotate the password once per value (a
/// new password in Secrets Manager, set on the real server); the connection Secret follows, and
/// its reader is rolled; the new password logs in and the old one no longer does.
#[tokio::test]
async fn a_managed_password_has_its_kms_key_and_rotation_rules_rotates_now_and_the_secret_follows()
{
    let (client, ns, api, rds) = setup("managed-rotation").await;
    let id = common::unique("managed-rotation");
    let operator = Operator::start_with(&ns, &["--roll-secret-readers"]);
    let (key_id, key_arn) = common::create_kms_key("coffee master secret");
    let t = template("envFrom", "db-connection");
    workload(
        &client,
        &ns,
        (WorkloadKind::Deployment, "coffee-app"),
        json!({}),
        t,
    )
    .await;
    let spec = json!({
        "masterUserPassword": null,
        "manageMasterUserPassword": true,
        "masterUserSecretKmsKeyId": key_id,
        "masterUserSecretRotation": {"scheduleExpression": "rate(4 days)", "duration": "3h"},
        "connectionSecret": {"name": "db-connection"},
        "tags": [{"key": "moto-ext:real-engine", "value": "true"}],
    });
    (api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await)
        .expect("create");
    let db = wait_dbi(&api, "db", "Ready", TIMEOUT, is_ready).await;
    let described = common::describe(&rds, &id).await.expect("the instance");
    let secret = described.master_user_secret().expect("a managed secret");
    assert_eq!(
        secret.kms_key_id(),
        Some(key_arn.as_str()),
        "the key reached RDS"
    );
    let status_secret = db
        .status
        .as_ref()
        .unwrap()
        .common
        .master_user_secret
        .clone()
        .unwrap();
    assert_eq!(status_secret.kms_key_id.as_deref(), Some(key_arn.as_str()));
    // Secrets Manager rotates it as the spec says, and follows the spec's changes.
    let sm = aws_sdk_secretsmanager::Client::new(&common::emulator_sdk_config().await);
    let arn = secret.secret_arn().unwrap().to_owned();
    let rules = |sm: aws_sdk_secretsmanager::Client, arn: String| async move {
        let d = sm.describe_secret().secret_id(arn).send().await.ok()?;
        let r = d.rotation_rules()?;
        let rules = (
            r.schedule_expression()?.to_owned(),
            r.duration().map(str::to_owned),
        );
        (d.rotation_enabled() == Some(true)).then_some(rules)
    };
    wait_for("the secret's rotation rules", TIMEOUT, || async {
        let r = rules(sm.clone(), arn.clone()).await?;
        (r == ("rate(4 days)".to_owned(), Some("3h".to_owned()))).then_some(())
    })
    .await;
    let every =
        json!({"spec": {"masterUserSecretRotation": {"scheduleExpression": "rate(10 days)"}}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&every))
        .await)
        .unwrap();
    wait_for("the new rotation schedule", TIMEOUT, || async {
        let r = rules(sm.clone(), arn.clone()).await?;
        (r.0 == "rate(10 days)").then_some(())
    })
    .await;
    let first = common::secret_data(&client, &ns, "db-connection")
        .await
        .unwrap();
    let login = |s: &BTreeMap<String, String>, password: &str| {
        common::mariadb_keys(s, password, "SELECT 1").0
    };
    assert!(
        login(&first, &first["password"]),
        "the managed password logs in"
    );

    let patch = json!({"metadata": {"annotations": {"rds.operator.rs/rotate-now": "1"}}});
    (api.patch("db", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .unwrap();
    let second = wait_for("the rotated password in the Secret", TIMEOUT, || async {
        let data = common::secret_data(&client, &ns, "db-connection").await?;
        (data["password"] != first["password"]).then_some(data)
    })
    .await;
    assert!(
        login(&second, &second["password"]),
        "the new password logs in"
    );
    assert!(
        !login(&second, &first["password"]),
        "the old one no longer does"
    );
    let db = wait_dbi(&api, "db", "the reader rolled", TIMEOUT, |db| {
        readers(db).is_some_and(|r| r.version >= 2 && r.rolled_out() && r.readers.len() == 1)
    })
    .await;
    let status = db.status.unwrap();
    assert_eq!(status.common.last_rotate_request.as_deref(), Some("1"));
    let rotations = common::calls_of(&id, &["ModifyDBInstance"]);
    // Looked at again and again: the value acted on is not acted on twice.
    let once = || async { common::calls_of(&id, &["ModifyDBInstance"]) == rotations };
    common::holds_over_polls(&operator, "one rotation per value", once).await;
    common::delete_and_wait(&api, "db").await;
}
