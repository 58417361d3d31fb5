//! An EventSubscription of a DBInstance of the namespace, on the emulator (moto_ext/
//! event_subscriptions.py): created with the instance's identifier as its source once the
//! DBInstance is Ready; a restart of the instance arrives on the SQS queue subscribed to the topic
//! as RDS's notification, and one of an instance it does not name does not; nothing is sent in
//! steady state; a change of categories and enabled is one ModifyEventSubscription, after which no
//! notification is sent; deleting the object deletes the subscription.

use kube::api::{Api, Patch, PatchParams, PostParams};
use rds_operator::eventsubscription::EventSubscription;
use serde_json::json;

use crate::common::{self, *};
use crate::snapshots::ready_db;

fn subscription(topic: &str, name: &str, sources: &[&str]) -> EventSubscription {
    let refs: Vec<_> = sources.iter().map(|s| json!({"name": s})).collect();
    serde_json::from_value(json!({
        "apiVersion": "rds.operator.rs/v1alpha1", "kind": "EventSubscription",
        "metadata": {"name": "restarts"},
        "spec": {"subscriptionName": name, "snsTopicARN": topic, "sourceType": "db-instance",
                 "sourceRefs": refs, "eventCategories": ["availability"]},
    }))
    .expect("valid EventSubscription")
}

fn ready(s: &EventSubscription) -> bool {
    common::object_condition(s, "Ready").is_some_and(|r| r.0 == "True")
        && common::object_condition(s, "Synced").is_some_and(|r| r.1 == "Synced")
        && (s.status.as_ref()).and_then(|s| s.reported.observed_generation) == s.metadata.generation
}

/// The Source IDs and messages of RDS notifications on the queue now.
async fn notified(queue: &str) -> Vec<(String, String)> {
    let bodies = common::messages(queue).await;
    (bodies.iter())
        .filter_map(|b| serde_json::from_str::<serde_json::Value>(b).ok())
        .map(|m| {
            (
                m["Source ID"].as_str().unwrap_or_default().to_owned(),
                m["Event Message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_subscriptions_event_arrives_on_sqs_and_the_subscription_is_kept_and_deleted() {
    let (client, ns, api, rds) = setup("events").await;
    let operator = Operator::start(&ns);
    let id = unique("evdb");
    ready_db(&api, &id).await;
    let (topic, queue) = common::topic_with_queue(&unique("rds-events")).await;
    let name = unique("restarts");
    let subs: Api<EventSubscription> = Api::namespaced(client.clone(), &ns);
    (subs
        .create(
            &PostParams::default(),
            &subscription(&topic, &name, &["db"]),
        )
        .await)
        .expect("create the EventSubscription");
    let made = wait_object(&subs, "restarts", "Ready", ready).await;
    assert_eq!(made.status.unwrap().source_ids, vec![id.clone()]);

    // Another instance RDS has, not named by the subscription: its restart is not sent.
    let other = unique("evother");
    (rds.create_db_instance()
        .db_instance_identifier(&other)
        .engine("mysql")
        .db_instance_class("db.t3.micro")
        .allocated_storage(20)
        .master_username("admin")
        .master_user_password("Sup3r-Secret-Passw0rd")
        .send()
        .await)
        .expect("an instance outside the operator");
    common::wait_for("the other instance available", TIMEOUT, || {
        let (rds, other) = (rds.clone(), other.clone());
        async move {
            let out = rds
                .describe_db_instances()
                .db_instance_identifier(&other)
                .send()
                .await;
            let status = out
                .ok()?
                .db_instances()
                .first()?
                .db_instance_status()?
                .to_owned();
            (status == "available").then_some(())
        }
    })
    .await;
    notified(&queue).await;
    for instance in [&other, &id] {
        (rds.reboot_db_instance()
            .db_instance_identifier(instance)
            .send()
            .await)
            .expect("reboot");
    }
    let got = notified(&queue).await;
    assert_eq!(got, vec![(id.clone(), "DB instance restarted".to_owned())]);

    // In sync: no call that changes anything over three passes of the operator's.
    common::steady_state(&operator, ("EventSubscription", "restarts"), &[&name]).await;

    // Disabled, with another category: one ModifyEventSubscription; then nothing is sent.
    let patch = json!({"spec": {"enabled": false, "eventCategories": ["backup"]}});
    (subs
        .patch("restarts", &PatchParams::default(), &Patch::Merge(&patch))
        .await)
        .unwrap();
    wait_object(&subs, "restarts", "Ready again", ready).await;
    assert_eq!(common::calls(&name, "ModifyEventSubscription"), 1);
    (rds.reboot_db_instance()
        .db_instance_identifier(&id)
        .send()
        .await)
        .expect("reboot");
    assert_eq!(
        notified(&queue).await,
        vec![],
        "a disabled subscription sends nothing"
    );

    (subs.delete("restarts", &Default::default()).await).expect("delete");
    common::wait_object_gone(&subs, "restarts").await;
    let gone = rds
        .describe_event_subscriptions()
        .subscription_name(&name)
        .send()
        .await;
    assert!(gone.is_err(), "RDS has no subscription any more");
    (rds.delete_db_instance()
        .db_instance_identifier(&other)
        .skip_final_snapshot(true)
        .send()
        .await)
        .expect("delete the other instance");
    common::delete_and_wait(&api, "db").await;
}
