//! The DBClusterEndpoint kind: a custom READER endpoint over one static member of an Aurora
//! cluster served by real servers, its own connection Secret whose host reaches that member and
//! no other, kept in sync with one ModifyDBClusterEndpoint, and deleted with the object.

use std::collections::BTreeMap;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rds_operator::dbcluster::DBCluster;
use rds_operator::dbclusterendpoint::DBClusterEndpoint;
use rds_operator::dbinstance::DBInstance;
use serde_json::json;

use crate::clusters::{cluster, member, ready as cluster_ready};
use crate::common::{
    self, Operator, TIMEOUT, is_ready, mariadb_keys, object_condition, secret_data, setup, unique,
    wait_dbi, wait_object, wait_object_gone,
};

fn endpoint(name: &str, identifier: &str, static_member: &str) -> DBClusterEndpoint {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1",
        "kind": "DBClusterEndpoint",
        "metadata": {"name": name},
        "spec": {
            "dbClusterEndpointIdentifier": identifier,
            "dbClusterRef": {"name": "coffee"},
            "endpointType": "READER",
            "staticMembers": [{"name": static_member}],
            "connectionSecret": {"name": "reports-db", "extraKeys": {"APP_DB_HOST": "{{ host }}"}},
        },
    }))
    .expect("valid DBClusterEndpoint")
}

fn ready(e: &DBClusterEndpoint) -> bool {
    object_condition(e, "Ready").is_some_and(|c| c.0 == "True")
        && object_condition(e, "Synced").is_some_and(|c| c.1 == "Synced")
        && e.status.as_ref().unwrap().reported.observed_generation == e.metadata.generation
}

/// The server a connection through `host` lands on (MariaDB's server_id), with the Secret's
/// credentials.
fn server_id(s: &BTreeMap<String, String>, host: &str) -> String {
    let mut keys = s.clone();
    keys.insert("host".into(), host.to_owned());
    let (ok, out) = mariadb_keys(&keys, &s["password"], "SELECT @@server_id");
    assert!(ok, "log in through {host}: {out}");
    out.trim().to_owned()
}

#[tokio::test]
async fn a_reader_endpoint_over_one_static_member_reaches_that_member_and_follows_the_spec() {
    let (client, ns, instances, _rds) = setup("dbce").await;
    let _operator = Operator::start(&ns);
    let (id, endpoint_id) = (unique("dbce-c"), unique("dbce-e"));
    let names = [
        ("writer", unique("dbce-w")),
        ("reader-1", unique("dbce-r1")),
        ("reader-2", unique("dbce-r2")),
    ];
    let pp = PostParams::default();
    let clusters: Api<DBCluster> = Api::namespaced(client.clone(), &ns);
    let real = json!({"tags": [{"key": "moto-ext:real-engine", "value": "true"}]});
    (clusters.create(&pp, &cluster(&id, real)).await).expect("the DBCluster");
    wait_object(&clusters, "coffee", "the cluster Ready", cluster_ready).await;
    // The writer first, then the two readers.
    for (name, identifier) in &names {
        (instances
            .create(&pp, &member(name, identifier, json!({})))
            .await)
            .expect("a member");
        wait_dbi(&instances, name, "Ready", TIMEOUT, is_ready).await;
    }
    let own = |db: &DBInstance| {
        db.status
            .as_ref()
            .and_then(|s| s.common.endpoint.clone())
            .unwrap()
            .address
    };
    let r1 = own(&(instances.get("reader-1").await).expect("reader-1"));
    let r2 = own(&(instances.get("reader-2").await).expect("reader-2"));

    let endpoints: Api<DBClusterEndpoint> = Api::namespaced(client.clone(), &ns);
    (endpoints
        .create(&pp, &endpoint("reports", &endpoint_id, "reader-1"))
        .await)
        .expect("the DBClusterEndpoint");
    let made = wait_object(&endpoints, "reports", "Ready", ready).await;
    let status = made.status.expect("a status");
    assert_eq!(status.static_members, [names[1].1.clone()]);
    assert_eq!(common::calls(&endpoint_id, "CreateDBClusterEndpoint"), 1);
    let s = secret_data(&client, &ns, "reports-db")
        .await
        .expect("its Secret");
    assert_eq!(Some(&s["host"]), status.endpoint.as_ref());
    assert_eq!(s["APP_DB_HOST"], s["host"]);
    let cluster_secret = secret_data(&client, &ns, "coffee-db")
        .await
        .expect("the cluster's Secret");
    assert_eq!(
        (
            s["username"].as_str(),
            s["password"].as_str(),
            s["dbname"].as_str()
        ),
        (
            cluster_secret["username"].as_str(),
            cluster_secret["password"].as_str(),
            "COFFEE"
        )
    );
    // Every connection through the endpoint lands on reader-1, never reader-2 or the writer.
    let (one, two) = (server_id(&s, &r1), server_id(&s, &r2));
    assert_ne!(one, two);
    for _ in 0..4 {
        assert_eq!(
            server_id(&s, &s["host"]),
            one,
            "the endpoint reaches reader-1 only"
        );
    }

    // Pointed at reader-2: one ModifyDBClusterEndpoint, and its connections land there.
    let patch = json!({"spec": {"staticMembers": [{"name": "reader-2"}]}});
    (endpoints.patch("reports", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("staticMembers");
    wait_object(&endpoints, "reports", "reader-2", |e| {
        ready(e) && e.status.as_ref().unwrap().static_members == [names[2].1.clone()]
    })
    .await;
    assert_eq!(common::calls(&endpoint_id, "ModifyDBClusterEndpoint"), 1);
    for _ in 0..4 {
        assert_eq!(
            server_id(&s, &s["host"]),
            two,
            "the endpoint reaches reader-2 only"
        );
    }

    // Over every reader but both: RDS reports it available, and it reaches no instance, so it is
    // not Ready (issue 76: no vacuous truth over a list).
    let patch = json!({"spec": {"staticMembers": null,
        "excludedMembers": [{"name": "reader-1"}, {"name": "reader-2"}]}});
    (endpoints.patch("reports", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("excludedMembers");
    let none = wait_object(&endpoints, "reports", "NoMembers", |e| {
        let status = e.status.as_ref().unwrap();
        let ready = common::object_condition(e, "Ready");
        status.excluded_members.len() == 2
            && status.state.as_deref() == Some("available")
            && ready.is_some_and(|r| r.0 == "False" && r.1 == "NoMembers")
    })
    .await;
    let message = common::object_condition(&none, "Ready").unwrap().2;
    assert!(message.contains("reaches no reader"), "{message}");
    assert_eq!(common::calls(&endpoint_id, "ModifyDBClusterEndpoint"), 2);
    // One reader let back in: Ready again.
    let patch = json!({"spec": {"excludedMembers": [{"name": "reader-1"}]}});
    (endpoints.patch("reports", &PatchParams::default(), &Patch::Merge(&patch)))
        .await
        .expect("excludedMembers");
    wait_object(&endpoints, "reports", "Ready over reader-2", |e| {
        ready(e) && e.status.as_ref().unwrap().excluded_members == [names[1].1.clone()]
    })
    .await;

    // Deleted with the object.
    (endpoints.delete("reports", &DeleteParams::default()).await).expect("delete it");
    wait_object_gone(&endpoints, "reports").await;
    assert_eq!(common::calls(&endpoint_id, "DeleteDBClusterEndpoint"), 1);
    for (name, _) in &names {
        (instances.delete(name, &DeleteParams::default()).await).expect("delete a member");
    }
    (clusters.delete("coffee", &DeleteParams::default()).await).expect("delete the cluster");
    wait_object_gone(&clusters, "coffee").await;
}
