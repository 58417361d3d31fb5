//! The DBParameterGroup kind: parameters set with the catalog's apply method, drift, resets,
//! references from DBInstance, pending reboot and the reboot policy.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbparametergroup::DBParameterGroup;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{
    self, Operator, calls, dbinstance, is_ready, patch_spec, setup, synced_reason, unique,
    wait_dbi, wait_for,
};

fn group(name: &str, rds_name: &str, parameters: serde_json::Value) -> DBParameterGroup {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBParameterGroup",
        "metadata": {"name": name},
        "spec": {
            "dbParameterGroupName": rds_name,
            "family": "mysql8.0",
            "description": "Coffee Manage MySQL settings",
            "parameters": parameters,
        }
    }))
    .expect("valid DBParameterGroup")
}

fn synced(g: &DBParameterGroup) -> bool {
    common::object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
        && g.status.as_ref().unwrap().reported.observed_generation == g.metadata.generation
}

/// Merges `parameters` into the spec's (a null removes one).
async fn patch_parameters(api: &Api<DBParameterGroup>, name: &str, parameters: serde_json::Value) {
    let patch = json!({"spec": {"parameters": parameters}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch parameters");
}

/// The group's user-set parameters in RDS, with their apply methods.
async fn parameters(rds: &aws_sdk_rds::Client, name: &str) -> BTreeMap<String, (String, String)> {
    let out = (rds.describe_db_parameters())
        .db_parameter_group_name(name)
        .source("user")
        .send()
        .await
        .expect("parameters");
    (out.parameters().iter())
        .map(|p| {
            let method = p
                .apply_method()
                .map(|m| m.as_str().to_owned())
                .unwrap_or_default();
            (
                p.parameter_name().unwrap_or_default().to_owned(),
                (p.parameter_value().unwrap_or_default().to_owned(), method),
            )
        })
        .collect()
}

#[tokio::test]
async fn parameters_are_set_as_the_catalog_says_kept_and_reset() {
    let (client, ns, _api, rds) = setup("params").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let groups: Api<DBParameterGroup> = Api::namespaced(client.clone(), &ns);
    let name = unique("params");
    let spec = json!({"max_connections": "200", "performance_schema": "1"});
    groups
        .create(&PostParams::default(), &group("coffee", &name, spec))
        .await
        .expect("create");
    common::wait_object(&groups, "coffee", "in sync", synced).await;
    let set = parameters(&rds, &name).await;
    assert_eq!(
        set["max_connections"],
        ("200".into(), "immediate".into()),
        "dynamic: at once"
    );
    assert_eq!(
        set["performance_schema"],
        ("1".into(), "pending-reboot".into()),
        "static: at the reboot"
    );

    // Steady state: no mutating call (the emulator counted the ones that made the group).
    assert!(
        calls(&name, "CreateDBParameterGroup") == 1 && calls(&name, "ModifyDBParameterGroup") >= 1
    );
    common::steady_state(&operator, ("DBParameterGroup", "coffee"), &[&name]).await;

    // Changed outside the operator: put back.
    (rds.modify_db_parameter_group())
        .db_parameter_group_name(&name)
        .parameters(
            aws_sdk_rds::types::Parameter::builder()
                .parameter_name("max_connections")
                .parameter_value("50")
                .apply_method(aws_sdk_rds::types::ApplyMethod::Immediate)
                .build(),
        )
        .send()
        .await
        .expect("out-of-band modify");
    wait_for("max_connections put back", TIMEOUT, || {
        let (rds, name) = (rds.clone(), name.clone());
        async move { (parameters(&rds, &name).await["max_connections"].0 == "200").then_some(()) }
    })
    .await;

    // A parameter that leaves the spec is reset; an unknown one is refused without a call.
    let parameters_patch = json!({"performance_schema": null, "max_conections": "10"});
    patch_parameters(&groups, "coffee", parameters_patch).await;
    let refused = common::wait_object(&groups, "coffee", "InvalidParameters", |g| {
        common::object_condition(g, "Synced").is_some_and(|c| c.1 == "InvalidParameters")
    })
    .await;
    assert!(
        common::object_condition(&refused, "Synced")
            .unwrap()
            .2
            .contains("max_conections")
    );
    patch_parameters(&groups, "coffee", json!({"max_conections": null})).await;
    common::wait_object(&groups, "coffee", "in sync", synced).await;
    let set = parameters(&rds, &name).await;
    assert!(!set.contains_key("performance_schema"), "{set:?}");
    assert_eq!(calls(&name, "ResetDBParameterGroup"), 1);

    groups
        .delete("coffee", &Default::default())
        .await
        .expect("delete");
    common::wait_object_gone(&groups, "coffee").await;
    let gone = rds
        .describe_db_parameter_groups()
        .db_parameter_group_name(&name)
        .send()
        .await;
    // RDS answers DBParameterGroupNotFound; moto an empty list.
    assert!(
        gone.map_or(true, |out| out.db_parameter_groups().is_empty()),
        "deleted in RDS"
    );
}

#[tokio::test]
async fn a_static_change_shows_pending_reboot_and_the_policy_reboots_once() {
    let (client, ns, api, rds) = setup("reboot").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let groups: Api<DBParameterGroup> = Api::namespaced(client.clone(), &ns);
    let name = unique("reboot");
    let id = unique("reboot");
    groups
        .create(
            &PostParams::default(),
            &group("coffee-params", &name, json!({"max_connections": "200"})),
        )
        .await
        .expect("create group");
    let spec =
        json!({"dbParameterGroupRef": {"name": "coffee-params"}, "deletionPolicy": "Delete"});
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    wait_dbi(&api, "db", "ready and synced", TIMEOUT, |db| {
        is_ready(db) && synced_reason(db) == "Synced"
    })
    .await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(
        i.db_parameter_groups()[0].db_parameter_group_name(),
        Some(name.as_str())
    );

    // A static parameter: the instance waits for a reboot, and says so.
    patch_parameters(&groups, "coffee-params", json!({"performance_schema": "1"})).await;
    let db = wait_dbi(&api, "db", "PendingReboot", TIMEOUT, |db| {
        synced_reason(db) == "PendingReboot"
    })
    .await;
    assert_eq!(
        db.status.unwrap().parameter_apply_status.as_deref(),
        Some("pending-reboot")
    );
    let none = || async { calls(&id, "RebootDBInstance") == 0 };
    let what = "Report (the default) never reboots";
    common::holds_over_polls(&operator, what, none).await;

    // The policy says reboot: exactly one RebootDBInstance, then in sync.
    patch_spec(&api, "db", json!({"pendingRebootPolicy": "Reboot"})).await;
    wait_dbi(&api, "db", "in sync after the reboot", TIMEOUT, |db| {
        synced_reason(db) == "Synced"
            && db
                .status
                .as_ref()
                .unwrap()
                .parameter_apply_status
                .as_deref()
                == Some("in-sync")
    })
    .await;
    let once = || async { calls(&id, "RebootDBInstance") == 1 };
    common::holds_over_polls(&operator, "exactly one reboot", once).await;
    let reasons = common::event_reasons(&client, &ns, "db").await;
    assert!(reasons.contains(&"Rebooting".into()), "{reasons:?}");

    // The group waits for the DBInstance before it goes.
    groups
        .delete("coffee-params", &Default::default())
        .await
        .expect("delete group");
    common::wait_object(&groups, "coffee-params", "InUse", |g| {
        common::object_condition(g, "Synced").is_some_and(|c| c.1 == "InUse")
    })
    .await;
    common::delete_and_wait(&api, "db").await;
    common::wait_object_gone(&groups, "coffee-params").await;
}

/// A DBInstance waiting for its DBParameterGroup proceeds as soon as the group is Ready, not at its
/// next drift interval (a minute here).
#[tokio::test]
async fn a_parameter_group_turning_ready_wakes_the_dbinstance_waiting_for_it() {
    let (client, ns, api, rds) = setup("pgwake").await;
    let _operator = Operator::start_with(&ns, &["--drift-interval", "60s"]);
    let groups: Api<DBParameterGroup> = Api::namespaced(client.clone(), &ns);
    let (id, name) = (unique("pgwake"), unique("pgwake"));
    let spec =
        json!({"dbParameterGroupRef": {"name": "coffee-params"}, "deletionPolicy": "Delete"});
    common::create_waiting_for_a_reference(&api, &id, spec).await;
    // Let the DBInstance settle into its minute-long wait.
    tokio::time::sleep(Duration::from_secs(3)).await;
    groups
        .create(
            &PostParams::default(),
            &group("coffee-params", &name, json!({"max_connections": "150"})),
        )
        .await
        .expect("create group");
    let started = std::time::Instant::now();
    wait_for(
        "the instance being created",
        Duration::from_secs(30),
        || async { common::describe(&rds, &id).await.map(|_| ()) },
    )
    .await;
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(30),
        "woken by the group, not by the drift interval: {waited:?}"
    );
    let i = common::describe(&rds, &id).await.expect("instance");
    let group_of = |i: &aws_sdk_rds::types::DbInstance| {
        (i.db_parameter_groups().first())
            .and_then(|g| g.db_parameter_group_name().map(str::to_owned))
    };
    assert_eq!(group_of(&i), Some(name.clone()));
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    common::delete_and_wait(&api, "db").await;
    groups
        .delete("coffee-params", &Default::default())
        .await
        .expect("delete group");
    common::wait_object_gone(&groups, "coffee-params").await;
}
