//! The snapshots row of the scale benchmark (BENCH_SNAPSHOTS=S): S DBSnapshots of ten
//! DBInstances (`sourced.rs`), their DescribeDBSnapshots against its floor.

use rds_operator::dbsnapshot::DBSnapshot;
use serde_json::json;

use super::Settings;
use super::sourced::{self, Objects, SOURCES};

fn ready(s: &DBSnapshot) -> bool {
    (s.status.iter().flat_map(|s| &s.reported.conditions))
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn snapshot(i: usize, prefix: &str) -> DBSnapshot {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "DBSnapshot",
        "metadata": {"name": format!("s-{i}")},
        "spec": {"dbSnapshotIdentifier": format!("{prefix}-s-{i}"),
                 "source": {"name": format!("db-{}", i % SOURCES)},
                 "deletionPolicy": "Delete"},
    }))
    .unwrap()
}

pub async fn run(client: &kube::Client, settings: &Settings, s: usize) {
    let objects = Objects {
        sources: sourced::Sources::Instances,
        name: "benchs",
        what: "DBSnapshots",
        listing: "DescribeDBSnapshots",
        make: snapshot,
        ready,
    };
    sourced::run(client, settings, s, objects).await;
}
