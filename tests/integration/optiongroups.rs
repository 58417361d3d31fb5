//! The OptionGroup kind: MariaDB's audit plugin for the Coffee Manage database, referred to by a
//! DBInstance (optionGroupRef) on a real server, which then runs the plugin with the option's
//! settings; an option removed from the spec is sent in OptionsToRemove and leaves the server;
//! the group's deletion waits while the DBInstance refers to it.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::optiongroup::OptionGroup;
use serde_json::json;

use crate::common::{
    self, Operator, TIMEOUT, calls, dbinstance, is_ready, mariadb_keys, object_condition,
    secret_data, setup, unique, wait_dbi, wait_for, wait_object, wait_object_gone,
};
use crate::engines::real;

const AUDIT: &str = "MARIADB_AUDIT_PLUGIN";

fn group(name: &str, rds_name: &str) -> OptionGroup {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "OptionGroup",
        "metadata": {"name": name},
        "spec": {
            "optionGroupName": rds_name,
            "engineName": "mysql",
            "majorEngineVersion": "8.0",
            "description": "Coffee Manage audit log",
            "options": [{"name": AUDIT, "settings": {"SERVER_AUDIT_EVENTS": "CONNECT,QUERY"}}],
        },
    }))
    .expect("valid OptionGroup")
}

fn synced(g: &OptionGroup) -> bool {
    object_condition(g, "Ready").is_some_and(|c| c.0 == "True")
        && object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
        && g.status.as_ref().unwrap().reported.observed_generation == g.metadata.generation
}

/// The options of the group in RDS, by name.
async fn rds_options(rds: &aws_sdk_rds::Client, name: &str) -> Vec<String> {
    let out = (rds.describe_option_groups())
        .option_group_name(name)
        .send()
        .await
        .expect("DescribeOptionGroups");
    let group = out.option_groups_list().first().expect("the group");
    (group.options().iter())
        .filter_map(|o| o.option_name().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn the_audit_plugin_reaches_the_server_leaves_it_with_options_to_remove_and_the_group_waits_for_its_instance()
 {
    let (client, ns, api, rds) = setup("og").await;
    let _operator = Operator::start(&ns);
    let (og, id) = (unique("og"), unique("og-db"));
    let groups: Api<OptionGroup> = Api::namespaced(client.clone(), &ns);
    groups
        .create(&PostParams::default(), &group("audit", &og))
        .await
        .expect("create OptionGroup");
    let spec = real(json!({"optionGroupRef": {"name": "audit"}, "deletionPolicy": "Delete"}));
    api.create(&PostParams::default(), &dbinstance("db", &id, spec))
        .await
        .expect("create DBInstance");
    wait_object(&groups, "audit", "Synced", synced).await;
    wait_dbi(&api, "db", "ready", TIMEOUT, is_ready).await;
    let instance = common::describe(&rds, &id).await.expect("the instance");
    let membership = instance.option_group_memberships().first();
    assert_eq!(
        membership.and_then(|m| m.option_group_name()),
        Some(og.as_str()),
        "the instance was made in the group"
    );
    assert_eq!(rds_options(&rds, &og).await, vec![AUDIT]);

    // The server runs the plugin with the option's settings.
    let secret = wait_for("the connection Secret", TIMEOUT, || async {
        secret_data(&client, &ns, "db-connection").await
    })
    .await;
    let audit = "SELECT PLUGIN_STATUS, @@server_audit_events FROM information_schema.PLUGINS \
                 WHERE PLUGIN_NAME = 'SERVER_AUDIT'";
    wait_for("the audit plugin on the server", TIMEOUT, || async {
        let (ok, out) = mariadb_keys(&secret, &secret["password"], audit);
        (ok && out.contains("ACTIVE\tCONNECT,QUERY")).then_some(())
    })
    .await;

    // Removing the option from the spec sends it in OptionsToRemove, once, and the server lets go
    // of the plugin.
    let patch = json!({"spec": {"options": []}});
    (groups
        .patch("audit", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .expect("remove the option");
    wait_object(&groups, "audit", "Synced without options", |g| {
        synced(g) && g.status.as_ref().unwrap().options.is_empty()
    })
    .await;
    assert_eq!(rds_options(&rds, &og).await, Vec::<String>::new());
    let modifies = common::call_parameters(&og, "ModifyOptionGroup");
    let removing: Vec<_> = (modifies.iter())
        .filter(|names| names.iter().any(|n| n == "options_to_remove"))
        .collect();
    assert_eq!(
        removing.len(),
        1,
        "one ModifyOptionGroup removed it: {modifies:?}"
    );
    // MariaDB uninstalls a plugin that was logging at its next start (DELETED until then); it
    // logs no more from now.
    let plugin =
        "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'SERVER_AUDIT'";
    wait_for("the plugin uninstalled", TIMEOUT, || async {
        let (ok, out) = mariadb_keys(&secret, &secret["password"], plugin);
        let gone = ok && !out.contains("ACTIVE");
        if !gone {
            eprintln!("the audit plugin: {out}");
        }
        gone.then_some(())
    })
    .await;

    // The group waits for the DBInstance before it goes; RDS is not asked to delete it meanwhile.
    (groups.delete("audit", &Default::default()).await).expect("delete group");
    wait_object(&groups, "audit", "InUse", |g| {
        object_condition(g, "Synced").is_some_and(|c| c.1 == "InUse")
    })
    .await;
    assert_eq!(calls(&og, "DeleteOptionGroup"), 0);
    rds_options(&rds, &og).await;
    common::delete_and_wait(&api, "db").await;
    wait_object_gone(&groups, "audit").await;
    assert_eq!(calls(&og, "DeleteOptionGroup"), 1);
    let gone = rds
        .describe_option_groups()
        .option_group_name(&og)
        .send()
        .await;
    let code = gone.expect_err("the group is gone").into_service_error();
    assert!(code.is_option_group_not_found_fault(), "{code:?}");
}
