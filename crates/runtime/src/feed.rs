//! The optional event feed (`--events-queue-url`): EventBridge events for RDS, delivered to an SQS
//! queue, wake exactly the DBInstances whose instance an event names, within seconds. Two kinds of
//! event name instances: CloudTrail's records of RDS API calls ("AWS API Call via CloudTrail",
//! source `aws.rds`), and RDS's own notifications ("RDS DB Instance Event"). Either may come
//! wrapped in an SNS notification.
//!
//! The feed only says where to look: the observer reads the named instances with one batched
//! DescribeDBInstances and wakes their DBInstances, and every decision is made on that fresh read.
//! The shared poll goes on as a safety net at a longer interval, so a lost event costs latency,
//! never correctness. Every message is deleted once handled, malformed and foreign ones included
//! (counted and logged, never retried).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::DeleteMessageBatchRequestEntry;
use serde_json::Value;
use tokio::sync::watch;
use tracing::{debug, warn};

use crate::metrics::Metrics;
use crate::observer::Observer;
use crate::rds::{CallCounter, Place};

/// What one message says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// An RDS event naming these DB instance identifiers (lowercase).
    Instances(BTreeSet<String>),
    /// An RDS event that names no DB instance, or a call that failed (changed nothing): a
    /// snapshot, a cluster, a parameter group...
    Ignored,
    /// Valid JSON that is not an RDS event (another source on the same queue).
    Foreign,
    /// Not an event at all.
    Malformed,
}

impl Message {
    /// The metric label of the outcome.
    pub fn outcome(&self) -> &'static str {
        match self {
            Message::Instances(_) => "handled",
            Message::Ignored => "ignored",
            Message::Foreign => "foreign",
            Message::Malformed => "malformed",
        }
    }
}

/// Reads one SQS message body.
pub fn parse(body: &str) -> Message {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return Message::Malformed;
    };
    // Routed through SNS: the event is the notification's message.
    if value.get("Type").and_then(Value::as_str) == Some("Notification") {
        return match value.get("Message").and_then(Value::as_str) {
            Some(inner) => parse(inner),
            None => Message::Malformed,
        };
    }
    let Some(source) = value.get("source").and_then(Value::as_str) else {
        return match value.is_object() {
            true => Message::Foreign,
            false => Message::Malformed,
        };
    };
    if source != "aws.rds" {
        return Message::Foreign;
    }
    let (Some(kind), Some(detail)) = (
        value.get("detail-type").and_then(Value::as_str),
        value.get("detail").filter(|d| d.is_object()),
    ) else {
        return Message::Malformed;
    };
    let mut named = BTreeSet::new();
    match kind {
        "AWS API Call via CloudTrail" => {
            if detail.get("errorCode").is_some_and(|e| !e.is_null())
                || detail.get("readOnly").and_then(Value::as_bool) == Some(true)
            {
                return Message::Ignored;
            }
            for section in ["requestParameters", "responseElements"] {
                let Some(fields) = detail.get(section).and_then(Value::as_object) else {
                    continue;
                };
                for key in [
                    "dBInstanceIdentifier",
                    "newDBInstanceIdentifier",
                    "targetDBInstanceIdentifier",
                ] {
                    if let Some(id) = fields.get(key).and_then(Value::as_str) {
                        named.extend(identifier(id));
                    }
                }
                for key in ["resourceName", "dBInstanceArn"] {
                    if let Some(arn) = fields.get(key).and_then(Value::as_str) {
                        named.extend(from_arn(arn));
                    }
                }
            }
        }
        "RDS DB Instance Event" => {
            if let Some(id) = detail.get("SourceIdentifier").and_then(Value::as_str) {
                named.extend(identifier(id));
            }
            if let Some(arn) = detail.get("SourceArn").and_then(Value::as_str) {
                named.extend(from_arn(arn));
            }
        }
        _ => {}
    }
    for arn in (value.get("resources").and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        named.extend(from_arn(arn));
    }
    match named.is_empty() {
        true => Message::Ignored,
        false => Message::Instances(named),
    }
}

/// A DB instance identifier as RDS keeps it (lowercase), if it can be one.
fn identifier(id: &str) -> Option<String> {
    let id = id.trim();
    let valid = !id.is_empty()
        && id.len() <= 63
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    valid.then(|| id.to_ascii_lowercase())
}

/// The identifier in a DB instance ARN (`arn:aws:rds:REGION:ACCOUNT:db:ID`); None for other ARNs.
fn from_arn(arn: &str) -> Option<String> {
    let mut parts = arn.splitn(7, ':');
    let (Some("arn"), Some(_), Some("rds"), Some(_), Some(_), Some("db"), Some(id)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    identifier(id)
}

/// How long one ReceiveMessage waits for messages (SQS's longest long poll).
const LONG_POLL_SECONDS: i32 = 20;
/// Retry of a failing queue: from one second, doubling to a minute, with jitter.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);

/// The feed: long-polls the queue, hands the named instances to the observer, deletes what it
/// handled.
pub struct Feed {
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    observer: Arc<Observer>,
    metrics: Arc<Metrics>,
    calls: Arc<CallCounter>,
    /// The account and region the queue's calls are counted under.
    place: Place,
    /// Whether it sets `rds_operator_event_feed_up` (the operator's own feed; another account's
    /// feed is seen in its calls' outcomes, labelled by account and region).
    gauge: bool,
}

impl Feed {
    pub fn new(
        config: &aws_config::SdkConfig,
        queue_url: String,
        observer: Arc<Observer>,
        metrics: Arc<Metrics>,
        (calls, place): (Arc<CallCounter>, Place),
    ) -> Self {
        // A long poll waits LONG_POLL_SECONDS for messages: each attempt gets that on top of the
        // operator's own bounds, or every quiet poll would end as a timeout.
        let long_poll = Duration::from_secs(LONG_POLL_SECONDS as u64);
        let bounds = (config.timeout_config().cloned())
            .unwrap_or_else(|| aws_config::timeout::TimeoutConfig::builder().build());
        let mut timeouts = aws_config::timeout::TimeoutConfig::builder()
            .operation_attempt_timeout(
                bounds.operation_attempt_timeout().unwrap_or(long_poll) + long_poll,
            )
            .operation_timeout(bounds.operation_timeout().unwrap_or(long_poll * 3) + long_poll);
        if let Some(connect) = bounds.connect_timeout() {
            timeouts = timeouts.connect_timeout(connect);
        }
        let sqs = aws_sdk_sqs::config::Builder::from(config)
            .timeout_config(timeouts.build())
            .build();
        Feed {
            sqs: aws_sdk_sqs::Client::from_conf(sqs),
            queue_url,
            observer,
            metrics,
            calls,
            place,
            gauge: true,
        }
    }

    /// A feed whose state is not the operator's `rds_operator_event_feed_up`.
    pub fn without_gauge(mut self) -> Self {
        self.gauge = false;
        self
    }

    fn up(&self, up: bool) {
        if self.gauge {
            self.metrics.feed_up(up);
        }
    }

    /// Runs until `shutdown` turns true. While the queue answers, the observer trusts its snapshot
    /// for the safety-net interval; while it fails, the observer polls at the drift interval.
    pub async fn run(&self, mut shutdown: watch::Receiver<bool>) {
        let mut backoff = BACKOFF_FIRST;
        loop {
            let received = tokio::select! {
                r = self.receive() => r,
                _ = shutdown.wait_for(|s| *s) => return,
            };
            match received {
                Ok(messages) => {
                    backoff = BACKOFF_FIRST;
                    self.observer.feed_alive(true);
                    self.up(true);
                    self.handle(messages).await;
                }
                Err(error) => {
                    self.observer.feed_alive(false);
                    self.up(false);
                    let wait = crate::duration::jitter(backoff, 0.5);
                    warn!(%error, ?wait, "reading the event queue failed; polling RDS at the drift interval meanwhile");
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.wait_for(|s| *s) => return,
                    }
                }
            }
        }
    }

    async fn receive(&self) -> Result<Vec<aws_sdk_sqs::types::Message>, String> {
        let result = (self.sqs.receive_message())
            .queue_url(&self.queue_url)
            .max_number_of_messages(10)
            .wait_time_seconds(LONG_POLL_SECONDS)
            .send()
            .await;
        self.calls.record(
            &self.place,
            "ReceiveMessage",
            if result.is_ok() { "ok" } else { "error" },
        );
        result
            .map(|out| out.messages.unwrap_or_default())
            .map_err(|e| aws_sdk_sqs::error::DisplayErrorContext(e).to_string())
    }

    /// Wakes the instances the messages name, then deletes every message.
    async fn handle(&self, messages: Vec<aws_sdk_sqs::types::Message>) {
        if messages.is_empty() {
            return;
        }
        let mut named = BTreeSet::new();
        let mut handles = Vec::with_capacity(messages.len());
        for (i, m) in messages.into_iter().enumerate() {
            let parsed = parse(m.body().unwrap_or_default());
            self.metrics.event(parsed.outcome());
            match parsed {
                Message::Instances(ids) => named.extend(ids),
                Message::Ignored => {}
                other => warn!(
                    message_id = m.message_id().unwrap_or_default(),
                    outcome = other.outcome(),
                    "deleting an event queue message that is not an RDS event"
                ),
            }
            if let Some(handle) = m.receipt_handle {
                handles.push(
                    DeleteMessageBatchRequestEntry::builder()
                        .id(i.to_string())
                        .receipt_handle(handle)
                        .build()
                        .expect("id and receipt handle are set"),
                );
            }
        }
        if !named.is_empty() {
            debug!(instances = named.len(), "events name instances");
            self.observer
                .notified(named.into_iter().collect::<Vec<_>>())
                .await;
        }
        let deleted = (self.sqs.delete_message_batch())
            .queue_url(&self.queue_url)
            .set_entries(Some(handles))
            .send()
            .await;
        self.calls.record(
            &self.place,
            "DeleteMessageBatch",
            if deleted.is_ok() { "ok" } else { "error" },
        );
        if let Err(e) = deleted {
            // They come back after the visibility timeout and are handled again: harmless.
            warn!(error = %aws_sdk_sqs::error::DisplayErrorContext(e), "deleting handled event messages failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(list: &[&str]) -> Message {
        Message::Instances(list.iter().map(|s| s.to_string()).collect())
    }

    fn cloudtrail(name: &str, request: Value, response: Value) -> String {
        json!({
            "version": "0", "id": "e1", "detail-type": "AWS API Call via CloudTrail",
            "source": "aws.rds", "account": "123456789012", "region": "eu-west-1",
            "resources": [],
            "detail": {
                "eventSource": "rds.amazonaws.com", "eventName": name, "readOnly": false,
                "requestParameters": request, "responseElements": response,
            }
        })
        .to_string()
    }

    #[test]
    fn messages_name_the_instances_they_are_about() {
        let arn = "arn:aws:rds:eu-west-1:123456789012:db:Coffee-DB";
        let rds_event = json!({
            "source": "aws.rds", "detail-type": "RDS DB Instance Event",
            "resources": [arn],
            "detail": {"SourceIdentifier": "coffee-db", "SourceArn": arn, "EventID": "RDS-EVENT-0088"}
        })
        .to_string();
        let rows: Vec<(&str, String, Message)> = vec![
            (
                "a console ModifyDBInstance",
                cloudtrail(
                    "ModifyDBInstance",
                    json!({"dBInstanceIdentifier": "Coffee-DB", "dBInstanceClass": "db.t3.large"}),
                    json!({"dBInstanceArn": arn}),
                ),
                ids(&["coffee-db"]),
            ),
            (
                "tags name the instance by ARN",
                cloudtrail(
                    "AddTagsToResource",
                    json!({"resourceName": arn, "tags": []}),
                    Value::Null,
                ),
                ids(&["coffee-db"]),
            ),
            (
                "a rename names both identifiers",
                cloudtrail(
                    "ModifyDBInstance",
                    json!({"dBInstanceIdentifier": "old", "newDBInstanceIdentifier": "new"}),
                    Value::Null,
                ),
                ids(&["new", "old"]),
            ),
            (
                "a restore names its target",
                cloudtrail(
                    "RestoreDBInstanceToPointInTime",
                    json!({"sourceDBInstanceIdentifier": "src", "targetDBInstanceIdentifier": "copy"}),
                    Value::Null,
                ),
                ids(&["copy"]),
            ),
            (
                "a failed call changed nothing",
                json!({
                    "source": "aws.rds", "detail-type": "AWS API Call via CloudTrail",
                    "detail": {"eventName": "DeleteDBInstance", "errorCode": "InvalidDBInstanceState",
                               "requestParameters": {"dBInstanceIdentifier": "coffee-db"}}
                })
                .to_string(),
                Message::Ignored,
            ),
            (
                "a parameter group tag names no instance",
                cloudtrail(
                    "AddTagsToResource",
                    json!({"resourceName": "arn:aws:rds:eu-west-1:1:pg:coffee"}),
                    Value::Null,
                ),
                Message::Ignored,
            ),
            ("an RDS instance event", rds_event.clone(), ids(&["coffee-db"])),
            (
                "an RDS event through SNS",
                json!({"Type": "Notification", "Message": rds_event}).to_string(),
                ids(&["coffee-db"]),
            ),
            (
                "a snapshot event",
                json!({"source": "aws.rds", "detail-type": "RDS DB Snapshot Event",
                       "resources": ["arn:aws:rds:eu-west-1:1:snapshot:s"], "detail": {}})
                .to_string(),
                Message::Ignored,
            ),
            (
                "an EC2 event on the same queue",
                json!({"source": "aws.ec2", "detail-type": "x", "detail": {}}).to_string(),
                Message::Foreign,
            ),
            (
                "some other JSON",
                json!({"hello": "world"}).to_string(),
                Message::Foreign,
            ),
            ("not JSON", "poison".into(), Message::Malformed),
            ("a JSON string", "\"x\"".into(), Message::Malformed),
            (
                "an RDS event without detail",
                json!({"source": "aws.rds", "detail-type": "RDS DB Instance Event"}).to_string(),
                Message::Malformed,
            ),
            (
                "an identifier that cannot be one is not trusted",
                cloudtrail(
                    "ModifyDBInstance",
                    json!({"dBInstanceIdentifier": "a b/../c"}),
                    Value::Null,
                ),
                Message::Ignored,
            ),
        ];
        for (what, body, want) in rows {
            assert_eq!(parse(&body), want, "{what}");
        }
    }
}
