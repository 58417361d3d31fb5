//! An OptionGroup and a DBProxy under the chart's RBAC: the group made Ready and referred to by a
//! DBInstance (its `get` by name), a proxy over that instance made Ready, then all deleted; and an
//! EventSubscription of the Coffee Manage DBInstance, an Integration of the Aurora DBCluster, and a
//! DBShardGroup of a limitless DBCluster, each made, changed and deleted.

use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use rds_operator::dbinstance::DBInstance;
use rds_operator::dbproxy::DBProxy;
use rds_operator::optiongroup::OptionGroup;
use serde_json::json;

use crate::common::{self, dbinstance, is_ready, unique, wait_dbi};

const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

pub(crate) async fn option_group_and_proxy_lifecycle(client: &Client, ns: &str) {
    let groups: Api<OptionGroup> = Api::namespaced(client.clone(), ns);
    let group: OptionGroup = serde_json::from_value(json!({
        "metadata": {"name": "coffee-audit"},
        "spec": {
            "optionGroupName": unique("node-og"),
            "engineName": "mysql",
            "majorEngineVersion": "8.0",
            "description": "Coffee Manage audit log",
            "options": [{"name": "MARIADB_AUDIT_PLUGIN",
                         "settings": {"SERVER_AUDIT_EVENTS": "CONNECT"}}],
        }
    }))
    .unwrap();
    groups.create(&PostParams::default(), &group).await.unwrap();
    let ready =
        |g: &OptionGroup| common::object_condition(g, "Ready").is_some_and(|c| c.0 == "True");
    common::wait_object(&groups, "coffee-audit", "Ready", ready).await;
    let instances: Api<DBInstance> = Api::namespaced(client.clone(), ns);
    let spec = json!({
        "optionGroupRef": {"name": "coffee-audit"},
        "deletionPolicy": "Delete",
        "masterUserPassword": {"name": "coffee-db-password", "key": "password"},
    });
    let audited = dbinstance("audited", &unique("node-audited"), spec);
    instances
        .create(&PostParams::default(), &audited)
        .await
        .unwrap();
    wait_dbi(&instances, "audited", "Ready", TIMEOUT, is_ready).await;
    proxy_lifecycle(client, ns).await;
    common::delete_and_wait(&instances, "audited").await;
    groups
        .delete("coffee-audit", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&groups, "coffee-audit").await;
}

/// A DBProxy over the DBInstance `audited`, Ready with its target, then deleted.
async fn proxy_lifecycle(client: &Client, ns: &str) {
    let proxies: Api<DBProxy> = Api::namespaced(client.clone(), ns);
    let subnets = common::coffee_subnets(&common::rds().await).await;
    // The role RDS Proxy reads its secret with (the emulator holds a proxy to it, as RDS does).
    let role = common::create_proxy_role(&unique("node-px-role"), ns);
    let proxy: DBProxy = serde_json::from_value(json!({
        "metadata": {"name": "coffee-proxy"},
        "spec": {
            "dbProxyName": unique("node-px"),
            "engineFamily": "MYSQL",
            "targets": [{"dbInstanceRef": {"name": "audited"}}],
            "vpcSubnetIDs": subnets,
            "roleARN": role,
        }
    }))
    .unwrap();
    proxies
        .create(&PostParams::default(), &proxy)
        .await
        .unwrap();
    let ready = |p: &DBProxy| {
        common::object_condition(p, "Ready").is_some_and(|c| c.0 == "True")
            && p.status.as_ref().is_some_and(|s| s.targets.len() == 1)
    };
    common::wait_object(&proxies, "coffee-proxy", "Ready", ready).await;
    proxies
        .delete("coffee-proxy", &DeleteParams::default())
        .await
        .unwrap();
    common::wait_object_gone(&proxies, "coffee-proxy").await;
}

/// An EventSubscription of the Coffee Manage DBInstance under the chart's RBAC: made Ready with the
/// instance as its source, disabled (one change), then deleted.
pub(crate) async fn event_subscription_lifecycle(client: &Client, ns: &str) {
    use rds_operator::eventsubscription::EventSubscription;
    let (topic, _) = common::topic_with_queue(&unique("node-events")).await;
    let subs: Api<EventSubscription> = Api::namespaced(client.clone(), ns);
    let sub: EventSubscription = serde_json::from_value(json!({
        "metadata": {"name": "coffee-availability"},
        "spec": {"subscriptionName": unique("node-events"), "snsTopicARN": topic,
                 "sourceType": "db-instance", "sourceRefs": [{"name": "coffee-db"}]},
    }))
    .unwrap();
    subs.create(&PostParams::default(), &sub).await.unwrap();
    let synced = |s: &EventSubscription| {
        common::object_condition(s, "Ready").is_some_and(|c| c.0 == "True")
            && common::object_condition(s, "Synced").is_some_and(|c| c.1 == "Synced")
            && (s.status.as_ref()).and_then(|s| s.reported.observed_generation)
                == s.metadata.generation
    };
    common::wait_object(&subs, "coffee-availability", "Ready", synced).await;
    let patch = json!({"spec": {"enabled": false}});
    let params = kube::api::PatchParams::default();
    (subs
        .patch(
            "coffee-availability",
            &params,
            &kube::api::Patch::Merge(&patch),
        )
        .await)
        .unwrap();
    common::wait_object(&subs, "coffee-availability", "disabled", synced).await;
    (subs
        .delete("coffee-availability", &DeleteParams::default())
        .await)
        .unwrap();
    common::wait_object_gone(&subs, "coffee-availability").await;
}

/// An Integration of the Aurora DBCluster `coffee-aurora` under the chart's RBAC: made Ready with
/// the cluster as its source, its data filter changed (one change), then deleted.
pub(crate) async fn integration_lifecycle(client: &Client, ns: &str) {
    use rds_operator::integration::Integration;
    let integrations: Api<Integration> = Api::namespaced(client.clone(), ns);
    let target = "arn:aws:redshift-serverless:us-east-1:123456789012:namespace/6f1b2c3d-4e5f-6789";
    let object: Integration = serde_json::from_value(json!({
        "metadata": {"name": "coffee-to-redshift"},
        "spec": {"integrationName": unique("node-etl"), "dbClusterRef": {"name": "coffee-aurora"},
                 "targetARN": target},
    }))
    .unwrap();
    integrations
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let synced = |i: &Integration| {
        common::object_condition(i, "Ready").is_some_and(|c| c.0 == "True")
            && common::object_condition(i, "Synced").is_some_and(|c| c.1 == "Synced")
            && (i.status.as_ref()).and_then(|s| s.reported.observed_generation)
                == i.metadata.generation
    };
    common::wait_object(&integrations, "coffee-to-redshift", "Ready", synced).await;
    let patch = json!({"spec": {"dataFilter": "include: COFFEE.*"}});
    let params = kube::api::PatchParams::default();
    (integrations
        .patch(
            "coffee-to-redshift",
            &params,
            &kube::api::Patch::Merge(&patch),
        )
        .await)
        .unwrap();
    let filtered = |i: &Integration| {
        synced(i)
            && (i.status.as_ref()).and_then(|s| s.data_filter.as_deref())
                == Some("include: COFFEE.*")
    };
    common::wait_object(&integrations, "coffee-to-redshift", "filtered", filtered).await;
    (integrations
        .delete("coffee-to-redshift", &DeleteParams::default())
        .await)
        .unwrap();
    common::wait_object_gone(&integrations, "coffee-to-redshift").await;
}

/// A DBShardGroup of a limitless Aurora PostgreSQL DBCluster under the chart's RBAC: the cluster
/// and the group made Ready, the group's capacity changed (one change), then both deleted.
pub(crate) async fn shard_group_lifecycle(client: &Client, ns: &str) {
    use rds_operator::dbcluster::DBCluster;
    use rds_operator::dbshardgroup::DBShardGroup;
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), ns);
    let cluster: DBCluster = serde_json::from_value(json!({
        "metadata": {"name": "coffee-limitless"},
        "spec": {"dbClusterIdentifier": unique("node-limitless"), "engine": "aurora-postgresql",
                 "clusterScalabilityType": "limitless", "masterUsername": "admin",
                 "deletionPolicy": "Delete",
                 "masterUserPassword": {"name": "coffee-db-password", "key": "password"}},
    }))
    .unwrap();
    clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
    let groups: Api<DBShardGroup> = Api::namespaced(client.clone(), ns);
    let group: DBShardGroup = serde_json::from_value(json!({
        "metadata": {"name": "coffee-shards"},
        "spec": {"dbShardGroupIdentifier": unique("node-shards"),
                 "dbClusterRef": {"name": "coffee-limitless"}, "maxACU": 768},
    }))
    .unwrap();
    groups.create(&PostParams::default(), &group).await.unwrap();
    let synced = |g: &DBShardGroup| {
        common::object_condition(g, "Ready").is_some_and(|c| c.0 == "True")
            && common::object_condition(g, "Synced").is_some_and(|c| c.1 == "Synced")
            && (g.status.as_ref()).and_then(|s| s.reported.observed_generation)
                == g.metadata.generation
    };
    common::wait_object(&groups, "coffee-shards", "Ready", synced).await;
    let patch = json!({"spec": {"maxACU": 1024}});
    let params = kube::api::PatchParams::default();
    (groups
        .patch("coffee-shards", &params, &kube::api::Patch::Merge(&patch))
        .await)
        .unwrap();
    let grown =
        |g: &DBShardGroup| synced(g) && (g.status.as_ref()).and_then(|s| s.max_acu) == Some(1024.0);
    common::wait_object(&groups, "coffee-shards", "grown", grown).await;
    (groups
        .delete("coffee-shards", &DeleteParams::default())
        .await)
        .unwrap();
    common::wait_object_gone(&groups, "coffee-shards").await;
    (clusters
        .delete("coffee-limitless", &DeleteParams::default())
        .await)
        .unwrap();
    common::wait_object_gone(&clusters, "coffee-limitless").await;
}
