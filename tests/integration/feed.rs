//! The event feed: EventBridge events for RDS on an SQS queue wake the DBInstances they name. In
//! the test bed moto_ext puts CloudTrail's event on moto's bus after each mutating RDS call, and a
//! rule delivers it to a queue of each test's own (localstack/init/coffee_network.py
//! --event-feed), as docs/events.md tells a user to set up.

use std::time::{Duration, Instant};

use kube::api::PostParams;
use serde_json::json;

use crate::common::TIMEOUT;
use crate::common::{
    self, Operator, dbinstance, is_ready, patch_spec, setup, synced_reason, unique, wait_dbi,
    wait_for,
};

/// A queue and an EventBridge rule of their own, named `name`, removed again at the end of the
/// test: a queue nobody reads would get every event of the tests after it, and moto's SendMessage
/// slows down with each message a queue holds.
struct Feed {
    name: String,
    queue: String,
}

fn event_feed(name: &str) -> Feed {
    let queue = common::coffee_network(&["--event-feed", name]);
    Feed {
        name: name.to_owned(),
        queue,
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            common::coffee_network(&["--no-event-feed", &self.name]);
        }
    }
}

/// The operator's count of feed messages with this outcome (0 until it serves its metrics).
fn events(operator: &Operator, outcome: &str) -> u64 {
    let line = format!("rds_operator_events_total{{outcome=\"{outcome}\"}} ");
    common::operator_metric(operator, &line) as u64
}

/// When the operator's shared RDS poll last succeeded (0 before the first).
fn last_poll(operator: &Operator) -> f64 {
    common::operator_metric(
        operator,
        "rds_operator_observer_last_poll_timestamp_seconds ",
    )
}

fn in_sync(db: &rds_operator::dbinstance::DBInstance) -> bool {
    is_ready(db)
        && synced_reason(db) == "Synced"
        && db
            .status
            .as_ref()
            .and_then(|s| s.reported.observed_generation)
            == db.metadata.generation
}

/// Times of the ModifyDBInstance calls naming `id` since `since` (epoch seconds), from moto_ext.
fn modifies_since(id: &str, since: f64) -> Vec<f64> {
    let body = common::moto_ext_get(&format!("/_rds_ext/mutations?since={since}"))
        .expect("moto_ext mutations");
    let rows: Vec<(f64, String, String)> = serde_json::from_str(&body).expect("mutations JSON");
    (rows.into_iter())
        .filter(|(_, action, who)| action == "ModifyDBInstance" && who == id)
        .map(|(t, _, _)| t)
        .collect()
}

/// With the feed, a change made in the console is put back within seconds although the drift
/// interval is ten minutes; the operator's own changes wake reconciles that change nothing.
#[tokio::test]
async fn with_the_feed_drift_is_corrected_in_seconds_and_own_changes_cost_nothing() {
    let (_client, ns, api, rds) = setup("feed").await;
    let feed = event_feed(&unique("feed"));
    let queue = feed.queue.clone();
    let id = unique("feed");
    let operator = Operator::start_with(
        &ns,
        &["--drift-interval", "10m", "--events-queue-url", &queue],
    );
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(&api, "db", "in sync", TIMEOUT, in_sync).await;

    // The user's own edit: one ModifyDBInstance, whose events wake reconciles that send nothing.
    patch_spec(&api, "db", json!({"backupRetentionPeriod": 3})).await;
    wait_dbi(&api, "db", "the edit in sync", TIMEOUT, |db| {
        in_sync(db)
            && db
                .status
                .as_ref()
                .and_then(|s| s.db_instance_status.as_deref())
                == Some("available")
    })
    .await;
    wait_for(
        "the feed to see the operator's own calls",
        TIMEOUT,
        || async { (events(&operator, "handled") >= 2).then_some(()) },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let own = common::server_calls(&id);
    let mutating: u64 = (own.iter())
        .filter(|(action, _)| !action.starts_with("Describe"))
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        (own.get("CreateDBInstance"), own.get("ModifyDBInstance")),
        (Some(&1), Some(&1)),
        "{own:?}"
    );
    assert_eq!(
        mutating, 2,
        "no call besides the create and the edit: {own:?}"
    );

    // A console user changes the class. The drift interval is ten minutes.
    let changed_at = common::epoch();
    let started = Instant::now();
    common::console_modify(&rds, &id, |m| m.db_instance_class("db.t3.large")).await;
    // The first ModifyDBInstance since then is the console's; the second is the operator's.
    let corrected = wait_for("the operator's correction", TIMEOUT, || {
        let id = id.clone();
        async move { modifies_since(&id, changed_at).get(1).copied() }
    })
    .await;
    let latency = corrected - changed_at;
    println!("drift corrected {latency:.2} s after the console change (moto modify delay 2 s)");
    assert!(
        latency < 5.0,
        "corrected {latency:.2} s after the change, at a 10-minute drift interval"
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    common::wait_class(&rds, &id, "db.t3.micro").await;
    common::delete_and_wait(&api, "db").await;
}

/// An event that never arrives costs latency, not correctness: the safety-net poll finds the
/// change.
#[tokio::test]
async fn a_dropped_event_is_caught_by_the_safety_net_poll() {
    let (_client, ns, api, rds) = setup("dropped").await;
    let feed = event_feed(&unique("dropped"));
    let queue = feed.queue.clone();
    let id = unique("dropped");
    let operator = Operator::start_with(
        &ns,
        &[
            "--drift-interval",
            "5s",
            "--safety-net-interval",
            "30s",
            "--events-queue-url",
            &queue,
        ],
    );
    api.create(&PostParams::default(), &dbinstance("db", &id, json!({})))
        .await
        .expect("create");
    wait_dbi(&api, "db", "in sync", TIMEOUT, in_sync).await;
    // Let the operator's own events settle, so the next event is the console's.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(common::moto_ext_post(&format!(
        "/_rds_ext/drop-events?identifier={id}&count=1"
    )));
    // Right after a safety-net poll, so the next one is 30 s away.
    let polled = last_poll(&operator);
    wait_for("a safety-net poll", TIMEOUT, || async {
        (last_poll(&operator) > polled).then_some(())
    })
    .await;
    let changed_at = common::epoch();
    common::console_modify(&rds, &id, |m| {
        m.deletion_protection(true).db_instance_class("db.t3.large")
    })
    .await;
    // Without the event the five-second drift interval does not help: the snapshot is trusted
    // while the feed is alive.
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(
        modifies_since(&id, changed_at).len(),
        1,
        "nothing but the console's change before the safety-net poll"
    );
    let corrected = wait_for("the safety net's correction", TIMEOUT, || async {
        modifies_since(&id, changed_at).get(1).copied()
    })
    .await;
    let latency = corrected - changed_at;
    println!("dropped event: corrected after {latency:.1} s (safety net 30 s)");
    assert!(latency < 45.0, "{latency:.1} s");
    common::wait_class(&rds, &id, "db.t3.micro").await;
    let i = common::describe(&rds, &id).await.unwrap();
    assert_eq!(
        i.deletion_protection(),
        Some(true),
        "protection someone added is kept, as without the feed"
    );
    common::console_modify(&rds, &id, |m| m.deletion_protection(false)).await;
    common::delete_and_wait(&api, "db").await;
}

/// A quiet queue keeps the feed up (a long poll that ends empty is no failure); a message that is
/// not an RDS event is counted and deleted, never retried.
#[tokio::test]
async fn quiet_polls_keep_the_feed_up_and_poison_is_counted_and_deleted() {
    let (_client, ns, _api, _rds) = setup("poison").await;
    // A queue no rule sends to: it holds only what this test puts there.
    let sqs = common::sqs().await;
    let queue = (sqs.create_queue())
        .queue_name(unique("poison"))
        .send()
        .await
        .expect("create queue")
        .queue_url
        .expect("queue URL");
    let operator = Operator::start_with(&ns, &["--events-queue-url", &queue]);
    // Longer than one long poll (20 s) and the AWS attempt timeout (20 s): quiet polls succeed.
    tokio::time::sleep(Duration::from_secs(27)).await;
    let metric = |line: &str| {
        (operator
            .get("/metrics")
            .map(|(_, m)| m)
            .unwrap_or_default()
            .lines())
        .find_map(|l| l.strip_prefix(line).map(|v| v.trim().to_owned()))
    };
    assert_eq!(
        metric("rds_operator_event_feed_up ").as_deref(),
        Some("1"),
        "a quiet queue is an answering queue"
    );
    // The last RDS poll was at the start, over four drift intervals (5 s) ago: with the feed up the
    // poll is a safety net (50 s), and its wait is no reason for the kubelet to restart the pod.
    let (status, body) = operator.get("/healthz").expect("/healthz");
    assert_eq!(status, 200, "{body}");
    assert!(
        metric("rds_operator_rds_api_calls_total{operation=\"ReceiveMessage\",outcome=\"error\",")
            .is_none(),
        "no failed ReceiveMessage: {}",
        operator.logs()
    );
    for body in [
        "poison: not JSON".to_owned(),
        json!({"source": "aws.ec2", "detail-type": "EC2 Instance State-change Notification", "detail": {}})
            .to_string(),
        json!({"source": "aws.rds", "detail-type": "RDS DB Snapshot Event", "detail": {"SourceIdentifier": "s"}})
            .to_string(),
    ] {
        sqs.send_message()
            .queue_url(&queue)
            .message_body(body)
            .send()
            .await
            .expect("send");
    }
    wait_for("the three counted", TIMEOUT, || async {
        (events(&operator, "malformed") == 1
            && events(&operator, "foreign") == 1
            && events(&operator, "ignored") >= 1)
            .then_some(())
    })
    .await;
    wait_for("the queue empty", TIMEOUT, || {
        let sqs = sqs.clone();
        let queue = queue.clone();
        async move {
            let attributes = (sqs.get_queue_attributes())
                .queue_url(&queue)
                .attribute_names(aws_sdk_sqs::types::QueueAttributeName::All)
                .send()
                .await
                .ok()?;
            let count = |name: aws_sdk_sqs::types::QueueAttributeName| {
                (attributes.attributes())
                    .and_then(|a| a.get(&name))
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(u64::MAX)
            };
            (count(aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessages) == 0
                && count(
                    aws_sdk_sqs::types::QueueAttributeName::ApproximateNumberOfMessagesNotVisible,
                ) == 0)
                .then_some(())
        }
    })
    .await;
    // Nothing is in flight either: the poison was deleted, not left to come back and be retried.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(events(&operator, "malformed"), 1);
    assert_eq!(events(&operator, "foreign"), 1);
    assert!(
        operator.logs().contains("not an RDS event"),
        "the poison is logged"
    );
    assert!(
        !operator.logs().contains("poison: not JSON"),
        "a message's body is never logged"
    );
}
