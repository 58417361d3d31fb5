//! moto's SNS, as an event subscription publishes to it: a topic made, with an SQS queue
//! subscribed to it (SNS's query API on the emulator's endpoint).

use super::emulator::{aws_request, region, sqs};

/// One SNS Query call, asserted to succeed; its answer.
fn sns_call(body: &str) -> String {
    let headers = "Content-Type: application/x-www-form-urlencoded\r\n";
    let (code, answer) = aws_request(("POST", "/"), (&region(), "sns"), headers, body);
    assert_eq!(code, 200, "{body}: {answer}");
    answer
}

/// A topic and an SQS queue subscribed to it, raw (the message is RDS's JSON): (topic ARN, queue
/// URL).
pub async fn topic_with_queue(name: &str) -> (String, String) {
    let created = sns_call(&format!(
        "Action=CreateTopic&Version=2010-03-31&Name={name}"
    ));
    let topic = (created.split("<TopicArn>").nth(1))
        .and_then(|s| s.split("</TopicArn>").next())
        .expect("CreateTopic's ARN")
        .to_owned();
    let sqs = sqs().await;
    let queue = (sqs.create_queue().queue_name(name).send().await).expect("CreateQueue");
    let url = queue.queue_url().unwrap_or_default().to_owned();
    let attributes = (sqs.get_queue_attributes())
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .expect("the queue's ARN");
    let arn = (attributes.attributes())
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
        .cloned()
        .unwrap_or_default();
    let encode = rds_operator::dbinstance::connection::encode;
    sns_call(&format!(
        "Action=Subscribe&Version=2010-03-31&TopicArn={}&Protocol=sqs&Endpoint={}\
         &Attributes.entry.1.key=RawMessageDelivery&Attributes.entry.1.value=true",
        encode(&topic),
        encode(&arn)
    ));
    (topic, url)
}

/// The bodies of the messages the queue holds now (waiting up to 2 s), taken off it.
pub async fn messages(url: &str) -> Vec<String> {
    let sqs = sqs().await;
    let out = (sqs.receive_message())
        .queue_url(url)
        .max_number_of_messages(10)
        .wait_time_seconds(2)
        .send()
        .await
        .expect("ReceiveMessage");
    out.messages()
        .iter()
        .filter_map(|m| m.body().map(str::to_owned))
        .collect()
}
