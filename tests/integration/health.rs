//! What GitOps tools read from status objects the operator wrote in this test (creating, Ready,
//! Stalled and paused): the Argo CD health script (docs/argocd-health.lua, run by Debian's lua5.4,
//! tests/env/clients.sh), and kstatus, the library behind Flux's health checks (docs/flux.md; built
//! by tests/env/build.sh from sigs.k8s.io/cli-utils).

use std::process::Command;

use kube::api::{Patch, PatchParams, PostParams};
use rds_operator::dbinstance::{DBInstance, PAUSED_ANNOTATION};
use serde_json::{Value, json};

use crate::common::TIMEOUT;
use crate::common::{self, Operator, dbinstance, is_ready, setup, synced_reason, unique, wait_dbi};

/// A JSON value as a Lua table constructor.
fn lua(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => format!(
            "{{{}}}",
            items.iter().map(lua).collect::<Vec<_>>().join(",")
        ),
        Value::Object(fields) => format!(
            "{{{}}}",
            (fields.iter())
                .map(|(k, v)| format!("[{k:?}]={}", lua(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// Argo CD's verdict on the object: (status, message).
fn health(db: &DBInstance) -> (String, String) {
    let script = std::fs::read_to_string(format!("{}/docs/argocd-health.lua", common::REPO))
        .expect("docs/argocd-health.lua");
    let object = serde_json::to_value(db).expect("JSON");
    let program = format!(
        "obj = {}\nlocal function health()\n{script}\nend\nlocal hs = health()\nio.write(hs.status, \"\\n\", hs.message or \"\")",
        lua(&object)
    );
    let out = Command::new("lua5.4")
        .args(["-e", &program])
        .output()
        .expect("lua5.4 (Debian package lua5.4; tests/env/clients.sh installs it)");
    verdict("lua", out)
}

/// A checker's "status\nmessage" answer.
fn verdict(checker: &str, out: std::process::Output) -> (String, String) {
    assert!(
        out.status.success(),
        "{checker}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (status, message) = text.split_once('\n').unwrap_or((&text, ""));
    (status.to_owned(), message.to_owned())
}

/// kstatus's verdict on the object, as Flux's `wait: true` and `healthChecks` read it:
/// (Current | InProgress | Failed | ..., message).
fn kstatus(db: &DBInstance) -> (String, String) {
    use std::io::Write;
    let mut child = Command::new(common::tool("kstatus"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kstatus");
    (child.stdin.take().unwrap())
        .write_all(&serde_json::to_vec(db).unwrap())
        .unwrap();
    verdict("kstatus", child.wait_with_output().expect("kstatus"))
}

#[tokio::test]
async fn argo_cd_and_flux_health_follow_the_conditions() {
    let (_client, ns, api, _rds) = setup("argo").await;
    let _operator = Operator::start(&ns);
    let id = unique("argo");
    api.create(
        &PostParams::default(),
        &dbinstance("db", &id, json!({"deletionPolicy": "Delete"})),
    )
    .await
    .expect("create");
    // Creating: Reconciling.
    let creating = wait_dbi(&api, "db", "creating", TIMEOUT, |db| {
        db.status
            .as_ref()
            .and_then(|s| s.db_instance_status.as_deref())
            == Some("creating")
    })
    .await;
    assert_eq!(
        common::condition(&creating, "Reconciling")
            .map(|c| c.0)
            .as_deref(),
        Some("True")
    );
    assert_eq!(health(&creating).0, "Progressing");
    assert_eq!(kstatus(&creating).0, "InProgress");
    // Available: Healthy.
    let ready = wait_dbi(&api, "db", "ready and synced", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    assert_eq!(
        common::condition(&ready, "Reconciling")
            .map(|c| c.0)
            .as_deref(),
        Some("False")
    );
    assert_eq!(
        health(&ready),
        ("Healthy".into(), "the RDS instance is available".into())
    );
    assert_eq!(kstatus(&ready).0, "Current");

    // A spec only a spec change can fix: Stalled, Degraded; Ready stays True (the database is up).
    let bad = json!({"spec": {"connectionSecret": {"name": "db-password"}}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&bad))
        .await
        .expect("patch");
    let stalled = wait_dbi(&api, "db", "Stalled", TIMEOUT, |db| {
        common::condition(db, "Stalled").is_some_and(|c| c.0 == "True")
    })
    .await;
    assert!(
        is_ready(&stalled),
        "an invalid spec does not make the database unavailable"
    );
    let (status, message) = health(&stalled);
    assert_eq!(status, "Degraded");
    assert!(message.contains("connectionSecret.name"), "{message}");
    let (status, message) = kstatus(&stalled);
    assert_eq!(status, "Failed", "Flux stops waiting: {message}");
    assert!(message.contains("connectionSecret.name"), "{message}");
    let fix = json!({"spec": {"connectionSecret": null}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&fix))
        .await
        .expect("patch");
    wait_dbi(&api, "db", "synced again", TIMEOUT, |db| {
        synced_reason(db) == "Synced"
    })
    .await;

    // Paused: Suspended.
    let pause = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: "true"}}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&pause))
        .await
        .expect("pause");
    let paused = wait_dbi(&api, "db", "paused", TIMEOUT, |db| {
        synced_reason(db) == "ReconcilePaused"
    })
    .await;
    assert_eq!(health(&paused).0, "Suspended");
    assert_eq!(
        kstatus(&paused).0,
        "Current",
        "a paused database that serves is no reason to hold a Flux rollout"
    );
    let resume = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: null}}});
    api.patch("db", &PatchParams::default(), &Patch::Merge(&resume))
        .await
        .expect("resume");
    common::delete_and_wait(&api, "db").await;
}

#[test]
fn the_lua_table_writer_escapes_strings() {
    assert_eq!(
        lua(&json!({"a": [1, "x\"y"], "b": null})),
        r#"{["a"]={1,"x\"y"},["b"]=nil}"#
    );
}
