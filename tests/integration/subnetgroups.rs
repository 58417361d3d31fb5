//! The DBSubnetGroup kind: lifecycle, drift, references from DBInstance, and deletion while in use.

use std::time::Duration;

use kube::api::{Api, PostParams};
use rds_operator::dbsubnetgroup::DBSubnetGroup;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{self, Operator, calls, is_ready, setup, unique, wait_dbi, wait_for};

pub(crate) use crate::common::coffee_subnets;

/// A DBSubnetGroup `name` of the RDS group `rds_name` over `subnets`.
pub(crate) fn group(name: &str, rds_name: &str, subnets: &[String]) -> DBSubnetGroup {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBSubnetGroup",
        "metadata": {"name": name},
        "spec": {
            "dbSubnetGroupName": rds_name,
            "dbSubnetGroupDescription": "Coffee Manage database subnets",
            "subnetIDs": subnets,
            "tags": [{"key": "app", "value": "coffee-manage"}],
        }
    }))
    .expect("valid DBSubnetGroup")
}

fn group_ready(g: &DBSubnetGroup) -> bool {
    common::object_condition(g, "Ready").is_some_and(|c| c.0 == "True")
        && common::object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
}

async fn describe_group(
    rds: &aws_sdk_rds::Client,
    name: &str,
) -> Option<aws_sdk_rds::types::DbSubnetGroup> {
    let out = (rds.describe_db_subnet_groups())
        .db_subnet_group_name(name)
        .send()
        .await
        .ok()?;
    out.db_subnet_groups().first().cloned()
}

#[tokio::test]
async fn a_subnet_group_is_created_kept_as_the_spec_says_and_deleted() {
    let (client, ns, _api, rds) = setup("subnets").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let subnets = coffee_subnets(&rds).await;
    let name = unique("subnets");
    groups
        .create(&PostParams::default(), &group("coffee", &name, &subnets))
        .await
        .expect("create");
    let g = common::wait_object(&groups, "coffee", "Ready", group_ready).await;
    let status = g.status.expect("status");
    assert!(
        status
            .vpc_id
            .as_deref()
            .is_some_and(|v| v.starts_with("vpc-")),
        "{status:?}"
    );
    assert_eq!(status.subnets.len(), subnets.len());
    assert!(
        status
            .subnets
            .iter()
            .all(|s| !s.availability_zone.is_empty()),
        "{status:?}"
    );
    assert!(
        status
            .arn
            .as_deref()
            .is_some_and(|a| a.contains(":subgrp:")),
        "{status:?}"
    );
    let tags = rds
        .list_tags_for_resource()
        .resource_name(status.arn.clone().unwrap())
        .send()
        .await
        .expect("tags");
    assert!(tags.tag_list().iter().any(|t| t.key() == Some("app")));

    // Steady state: no call changes anything (the emulator counted the one that made the group).
    assert_eq!(calls(&name, "CreateDBSubnetGroup"), 1);
    common::steady_state(&operator, ("DBSubnetGroup", "coffee"), &[&name]).await;

    // Changed outside the operator: put back.
    (rds.modify_db_subnet_group())
        .db_subnet_group_name(&name)
        .db_subnet_group_description("edited in the console")
        .set_subnet_ids(Some(subnets[..2].to_vec()))
        .send()
        .await
        .expect("out-of-band modify");
    wait_for("the description put back", TIMEOUT, || {
        let (rds, name) = (rds.clone(), name.clone());
        async move {
            let g = describe_group(&rds, &name).await?;
            (g.db_subnet_group_description() == Some("Coffee Manage database subnets"))
                .then_some(())
        }
    })
    .await;
    // The Event follows the ModifyDBSubnetGroup whose effect was just seen.
    common::wait_event(&client, &ns, "coffee", "Updating").await;

    groups
        .delete("coffee", &Default::default())
        .await
        .expect("delete");
    common::wait_object_gone(&groups, "coffee").await;
    assert!(
        describe_group(&rds, &name).await.is_none(),
        "deleted in RDS"
    );
}

#[tokio::test]
async fn a_dbinstance_waits_for_its_subnet_group_which_waits_for_it_on_deletion() {
    let (client, ns, api, rds) = setup("subnetref").await;
    let operator = Operator::start(&ns);
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let name = unique("subnetref");
    let id = unique("subnetref");
    // The DBInstance first: it waits.
    let spec = json!({"dbSubnetGroupRef": {"name": "coffee-subnets"}, "deletionPolicy": "Delete"});
    common::create_waiting_for_a_reference(&api, &id, spec).await;
    assert!(
        common::describe(&rds, &id).await.is_none(),
        "nothing created while the group is missing"
    );

    // The group appears: the DBInstance proceeds by itself, in that group.
    let subnets = coffee_subnets(&rds).await;
    groups
        .create(
            &PostParams::default(),
            &group("coffee-subnets", &name, &subnets),
        )
        .await
        .expect("create group");
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let i = common::describe(&rds, &id).await.expect("instance");
    assert_eq!(
        i.db_subnet_group().and_then(|g| g.db_subnet_group_name()),
        Some(name.as_str())
    );

    // The group cannot go while the DBInstance refers to it.
    groups
        .delete("coffee-subnets", &Default::default())
        .await
        .expect("delete group");
    let g = common::wait_object(&groups, "coffee-subnets", "InUse", |g| {
        common::object_condition(g, "Synced").is_some_and(|c| c.1 == "InUse")
    })
    .await;
    assert!(
        common::object_condition(&g, "Synced")
            .unwrap()
            .2
            .contains("db")
    );
    let untried = || async { calls(&name, "DeleteDBSubnetGroup") == 0 };
    common::holds_over_passes(
        &operator,
        ("DBSubnetGroup", "coffee-subnets"),
        "not even tried",
        untried,
    )
    .await;
    assert!(describe_group(&rds, &name).await.is_some());

    // Once the DBInstance is gone, so is the group.
    common::delete_and_wait(&api, "db").await;
    common::wait_object_gone(&groups, "coffee-subnets").await;
    assert!(describe_group(&rds, &name).await.is_none());
}

#[tokio::test]
async fn deleting_a_group_rds_says_is_in_use_waits_without_a_hot_loop() {
    let (client, ns, _api, rds) = setup("subnetbusy").await;
    let _operator = Operator::start(&ns);
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let subnets = coffee_subnets(&rds).await;
    let name = unique("subnetbusy");
    groups
        .create(&PostParams::default(), &group("coffee", &name, &subnets))
        .await
        .expect("create");
    common::wait_object(&groups, "coffee", "Ready", group_ready).await;
    // An instance made outside the operator uses the group by name.
    let id = unique("subnetuser");
    (rds.create_db_instance())
        .db_instance_identifier(&id)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .master_username("admin")
        .master_user_password("Sup3r-Secret-Passw0rd")
        .db_subnet_group_name(&name)
        .send()
        .await
        .expect("an instance in the group");
    groups
        .delete("coffee", &Default::default())
        .await
        .expect("delete");
    let g = common::wait_object(&groups, "coffee", "AWS's refusal", |g| {
        common::object_condition(g, "Synced").is_some_and(|c| c.2.contains("still using it"))
    })
    .await;
    assert_eq!(common::object_condition(&g, "Synced").unwrap().0, "False");
    // Backoff: 2 s, 4 s, 8 s... a handful of attempts in 10 s, not hundreds.
    let first = calls(&name, "DeleteDBSubnetGroup");
    tokio::time::sleep(Duration::from_secs(10)).await;
    let attempts = calls(&name, "DeleteDBSubnetGroup") - first;
    assert!((1..=4).contains(&attempts), "{attempts} attempts in 10 s");
    // The instance goes: so does the group.
    (rds.delete_db_instance())
        .db_instance_identifier(&id)
        .skip_final_snapshot(true)
        .send()
        .await
        .expect("delete instance");
    common::wait_object_gone(&groups, "coffee").await;
    assert!(describe_group(&rds, &name).await.is_none());
}

/// A group deleted outside the operator whose re-creation fails is not Ready: Ready says whether
/// the group exists and is usable, as it does for instances.
#[tokio::test]
async fn a_subnet_group_gone_whose_recreation_fails_is_not_ready() {
    let (client, ns, _api, rds) = setup("subnetsgone").await;
    let _operator = Operator::start_with(&ns, &["--drift-interval", "2s"]);
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let subnets = coffee_subnets(&rds).await;
    let name = unique("subnetsgone");
    groups
        .create(&PostParams::default(), &group("coffee", &name, &subnets))
        .await
        .expect("create");
    common::wait_object(&groups, "coffee", "Ready", group_ready).await;
    // The spec now names a subnet that does not exist, and the group is deleted in the console.
    let patch = json!({"spec": {"subnetIDs": ["subnet-00000000000000000"]}});
    groups
        .patch(
            "coffee",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .expect("patch");
    // RDS refuses the modification first; then the group goes.
    let modify_refused = |g: &DBSubnetGroup| {
        common::object_condition(g, "Synced").is_some_and(|c| c.2.contains("ModifyDBSubnetGroup"))
    };
    common::wait_object(
        &groups,
        "coffee",
        "the refused modification",
        modify_refused,
    )
    .await;
    (rds.delete_db_subnet_group())
        .db_subnet_group_name(&name)
        .send()
        .await
        .expect("deleted outside the operator");
    // Not Ready, with AWS's refusal of the recreation. (In between, for as long as the create
    // call is out, it is not Ready either: Synced says `Creating`.)
    let refused = |g: &DBSubnetGroup| {
        common::object_condition(g, "Synced").is_some_and(|c| c.2.contains("CreateDBSubnetGroup"))
    };
    let g = common::wait_object(&groups, "coffee", "AWS's refusal", refused).await;
    let ready = common::object_condition(&g, "Ready").expect("Ready");
    assert_eq!(ready.0, "False", "{ready:?}");
    let synced = common::object_condition(&g, "Synced").expect("Synced");
    assert_eq!(synced.0, "False", "{synced:?}");
    let status = g.status.expect("status");
    assert_ne!(status.state.as_deref(), Some("Complete"), "{status:?}");
    assert!(describe_group(&rds, &name).await.is_none());
    groups
        .delete("coffee", &kube::api::DeleteParams::default())
        .await
        .expect("delete");
    common::wait_object_gone(&groups, "coffee").await;
}

/// The operator's calls of one operation (its /metrics), whatever the outcome and place.
fn operator_calls(operator: &Operator, operation: &str) -> f64 {
    common::operator_metric(
        operator,
        &format!("rds_operator_rds_api_calls_total{{operation=\"{operation}\","),
    )
}

#[tokio::test]
async fn groups_in_sync_cost_a_shared_listing_per_interval_not_reads_of_each() {
    let (client, ns, _api, rds) = setup("grouppoll").await;
    let operator = Operator::start_with(&ns, &["--drift-interval", "5s"]);
    let groups: Api<DBSubnetGroup> = Api::namespaced(client.clone(), &ns);
    let subnets = coffee_subnets(&rds).await;
    for i in 0..4 {
        let g = group(&format!("g{i}"), &unique("listed"), &subnets);
        groups
            .create(&PostParams::default(), &g)
            .await
            .expect("create");
    }
    for i in 0..4 {
        common::wait_object(&groups, &format!("g{i}"), "Ready", group_ready).await;
    }
    // Settle: a listing made after the last change.
    tokio::time::sleep(Duration::from_secs(12)).await;
    let ops = [
        "DescribeDBSubnetGroups",
        "ListTagsForResource",
        "GetResources",
    ];
    let before: Vec<f64> = ops.iter().map(|op| operator_calls(&operator, op)).collect();
    tokio::time::sleep(Duration::from_secs(15)).await;
    let spent: Vec<f64> = (ops.iter().zip(before))
        .map(|(op, b)| operator_calls(&operator, op) - b)
        .collect();
    // Three polls: a page of subnet groups and a page of tags each, for all four groups; no
    // describe or tag list of one group (four groups would cost 4 + 4 per interval).
    assert!(
        (2.0..=4.0).contains(&spent[0]),
        "DescribeDBSubnetGroups {}: {spent:?}",
        spent[0]
    );
    assert_eq!(spent[1], 0.0, "no ListTagsForResource: {spent:?}");
    assert!((2.0..=4.0).contains(&spent[2]), "GetResources: {spent:?}");
    for i in 0..4 {
        groups
            .delete(&format!("g{i}"), &Default::default())
            .await
            .expect("delete");
    }
    for i in 0..4 {
        common::wait_object_gone(&groups, &format!("g{i}")).await;
    }
}
