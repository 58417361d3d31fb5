//! The event subscriptions row of the scale benchmark (BENCH_SUBSCRIPTIONS=N): N
//! EventSubscriptions, each of one of ten DBInstances (`sourced.rs`), to one SNS topic; their
//! DescribeEventSubscriptions against its floor.

use rds_operator::eventsubscription::EventSubscription;
use serde_json::json;

use super::Settings;
use super::sourced::{self, Objects, SOURCES};

/// The topic every subscription sends to (made once per row).
static TOPIC: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn ready(s: &EventSubscription) -> bool {
    (s.status.iter().flat_map(|s| &s.reported.conditions))
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

fn subscription(i: usize, prefix: &str) -> EventSubscription {
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "EventSubscription",
        "metadata": {"name": format!("e-{i}")},
        "spec": {"subscriptionName": format!("{prefix}-e-{i}"),
                 "snsTopicARN": TOPIC.get().expect("the topic"), "sourceType": "db-instance",
                 "sourceRefs": [{"name": format!("db-{}", i % SOURCES)}],
                 "eventCategories": ["availability"]},
    }))
    .unwrap()
}

pub async fn run(client: &kube::Client, settings: &Settings, n: usize) {
    let (topic, _) = super::common::topic_with_queue(&super::common::unique("bench-events")).await;
    TOPIC.set(topic).expect("one row a run");
    let objects = Objects {
        sources: sourced::Sources::Instances,
        name: "benche",
        what: "EventSubscriptions",
        listing: "DescribeEventSubscriptions",
        make: subscription,
        ready,
    };
    sourced::run(client, settings, n, objects).await;
}
