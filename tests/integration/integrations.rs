//! An Integration (zero-ETL) of a DBCluster of the namespace, on the emulator (moto_ext/
//! integrations.py, which moves no data): created once the DBCluster is Ready with the cluster's
//! ARN as its source, reported `active` with that source in status; nothing is sent in steady
//! state; a new data filter is one ModifyIntegration; deleting the object deletes it in RDS. One
//! whose target is in an account the namespace is not granted is refused with nothing sent.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::integration::Integration;
use serde_json::json;

use crate::clusters::{cluster, ready as cluster_ready};
use crate::common::{self, *};

const TARGET: &str = "arn:aws:redshift-serverless:us-east-1:123456789012:namespace/6f1b2c3d-4e5f-6789-abcd-ef01234567";
const ELSEWHERE: &str = "arn:aws:redshift-serverless:us-east-1:999999999999:namespace/6f1b2c3d-4e5f-6789-abcd-ef01234567";

fn integration(object: &str, name: &str, target: &str) -> Integration {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "Integration",
        "metadata": {"name": object},
        "spec": {"integrationName": name, "dbClusterRef": {"name": "coffee"}, "targetARN": target,
                 "dataFilter": "include: COFFEE.*", "tags": [{"key": "team", "value": "coffee"}]},
    }))
    .expect("valid Integration")
}

fn ready(i: &Integration) -> bool {
    common::object_condition(i, "Ready").is_some_and(|r| r.0 == "True")
        && common::object_condition(i, "Synced").is_some_and(|r| r.1 == "Synced")
        && (i.status.as_ref()).and_then(|s| s.reported.observed_generation) == i.metadata.generation
}

#[tokio::test]
async fn an_integration_of_a_namespaces_cluster_is_created_changed_kept_and_deleted() {
    let (client, ns, _instances, rds) = setup("zeroetl").await;
    let operator = Operator::start(&ns);
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let source = unique("etl");
    (clusters
        .create(&PostParams::default(), &cluster(&source, json!({})))
        .await)
        .expect("create the DBCluster");
    let integrations: Api<Integration> = Api::namespaced(client.clone(), &ns);
    let (name, refused) = (unique("coffee-etl"), unique("elsewhere"));
    let pp = PostParams::default();
    (integrations
        .create(&pp, &integration("etl", &name, TARGET))
        .await)
        .expect("create the Integration");
    (integrations
        .create(&pp, &integration("elsewhere", &refused, ELSEWHERE))
        .await)
        .expect("create the Integration to another account");

    let made = wait_object(&integrations, "etl", "Ready", ready).await;
    wait_object(&clusters, "coffee", "the DBCluster Ready", cluster_ready).await;
    let status = made.status.expect("status");
    assert_eq!(status.status.as_deref(), Some("active"));
    assert!(
        (status.source_arn.as_deref()).is_some_and(|a| a.ends_with(&format!(":cluster:{source}"))),
        "{status:?}"
    );
    assert_eq!(status.data_filter.as_deref(), Some("include: COFFEE.*"));
    let arn = status.arn.clone().expect("its ARN");
    let tags = (rds
        .list_tags_for_resource()
        .resource_name(&arn)
        .send()
        .await)
        .expect("its tags")
        .tag_list()
        .iter()
        .map(|t| {
            (
                t.key().unwrap_or_default().to_owned(),
                t.value().unwrap_or_default().to_owned(),
            )
        })
        .collect::<std::collections::BTreeMap<_, _>>();
    assert_eq!(tags.get("team").map(String::as_str), Some("coffee"));
    assert!(tags.contains_key("rds.operator.rs/owner-uid"), "{tags:?}");

    // Another account's target: refused, never sent.
    let elsewhere = wait_object(&integrations, "elsewhere", "TargetNotGranted", |i| {
        common::object_condition(i, "Synced").is_some_and(|r| r.1 == "TargetNotGranted")
    })
    .await;
    let message = common::object_condition(&elsewhere, "Synced").unwrap().2;
    assert!(message.contains("999999999999"), "{message}");
    assert_eq!(common::calls(&refused, "CreateIntegration"), 0);

    // In sync: no call that changes anything over three passes of the operator's.
    common::steady_state(&operator, ("Integration", "etl"), &[&name]).await;
    assert_eq!(common::calls(&name, "CreateIntegration"), 1);

    // A new data filter: one ModifyIntegration, reported once RDS has it.
    let patch = json!({"spec": {"dataFilter": "include: COFFEE.suppliers"}});
    (integrations
        .patch("etl", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .unwrap();
    let changed = wait_object(&integrations, "etl", "the new filter reported", |i| {
        ready(i)
            && (i.status.as_ref()).and_then(|s| s.data_filter.as_deref())
                == Some("include: COFFEE.suppliers")
    })
    .await;
    assert_eq!(common::calls(&name, "ModifyIntegration"), 1);
    assert_eq!(changed.status.unwrap().status.as_deref(), Some("active"));

    for object in ["etl", "elsewhere"] {
        (integrations.delete(object, &Default::default()).await).expect("delete");
    }
    common::wait_object_gone(&integrations, "etl").await;
    common::wait_object_gone(&integrations, "elsewhere").await;
    // RDS deletes it (deleting, then gone).
    common::wait_for("RDS has the integration no more", TIMEOUT, || {
        let (rds, name) = (rds.clone(), name.clone());
        async move {
            let left = rds.describe_integrations().send().await.ok()?;
            let named = |i: &&aws_sdk_rds::types::Integration| i.integration_name() == Some(&name);
            left.integrations()
                .iter()
                .find(named)
                .is_none()
                .then_some(())
        }
    })
    .await;
    assert_eq!(common::calls(&name, "DeleteIntegration"), 1);
    (clusters.delete("coffee", &Default::default()).await).expect("delete the DBCluster");
    common::wait_object_gone(&clusters, "coffee").await;
}
