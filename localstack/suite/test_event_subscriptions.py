"""RDS event subscriptions (moto_ext/event_subscriptions.py; USER_Events.html,
API_CreateEventSubscription.html, API_ModifyEventSubscription.html): refused without the topic or the
source; changed and their sources added and removed; an event of a subscribed source, type and
category reaches the topic's SQS queue as RDS's notification message, and no other. Each test failed
on plain moto 5.2.5, which notifies no one and has no Modify, Add or Remove call."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)


@pytest.fixture
def aws():
    with mock_aws():
        rds = boto3.client("rds", region_name="us-east-1")
        sns = boto3.client("sns", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        topic = sns.create_topic(Name="rds-events")["TopicArn"]
        queue = sqs.create_queue(QueueName="rds-events")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn,
                      Attributes={"RawMessageDelivery": "true"})
        for name in ("db", "other"):
            rds.create_db_instance(DBInstanceIdentifier=name, Engine="mysql", DBInstanceClass="db.t3.micro",
                                   MasterUsername="admin", MasterUserPassword="hunter2hunter2", AllocatedStorage=20)
        yield rds, sqs, topic, queue


def received(sqs, queue):
    out = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
    return [json.loads(m["Body"]) for m in out]


def test_a_subscribed_sources_event_reaches_the_queue_and_no_other(aws):
    rds, sqs, topic, queue = aws
    rds.create_event_subscription(SubscriptionName="s", SnsTopicArn=topic, SourceType="db-instance",
                                  SourceIds=["db"], EventCategories=["availability"])
    assert rds.describe_event_subscriptions(SubscriptionName="s")["EventSubscriptionsList"][0]["Enabled"] is True
    rds.reboot_db_instance(DBInstanceIdentifier="other")
    rds.reboot_db_instance(DBInstanceIdentifier="db")
    got = received(sqs, queue)
    assert [(m["Source ID"], m["Event Message"]) for m in got] == [("db", "DB instance restarted")], got
    assert got[0]["Source ARN"].endswith(":db:db") and got[0]["Event Source"] == "db-instance"

    rds.modify_event_subscription(SubscriptionName="s", Enabled=False)
    rds.reboot_db_instance(DBInstanceIdentifier="db")
    assert received(sqs, queue) == [], "a disabled subscription notifies no one"


def test_refusals_changes_and_source_ids(aws):
    rds, _, topic, _ = aws
    for kwargs, code in ((dict(SnsTopicArn=topic + "-missing", SourceType="db-instance"), "SNSTopicArnNotFound"),
                         (dict(SnsTopicArn=topic, SourceType="db-instance", SourceIds=["nope"]), "SourceNotFound"),
                         (dict(SnsTopicArn=topic, SourceType="db-everything"), "InvalidParameterValue")):
        with pytest.raises(ClientError) as e:
            rds.create_event_subscription(SubscriptionName="bad", **kwargs)
        assert e.value.response["Error"]["Code"] == code
    rds.create_event_subscription(SubscriptionName="s", SnsTopicArn=topic, SourceType="db-instance")
    rds.add_source_identifier_to_subscription(SubscriptionName="s", SourceIdentifier="db")
    rds.add_source_identifier_to_subscription(SubscriptionName="s", SourceIdentifier="other")
    rds.remove_source_identifier_from_subscription(SubscriptionName="s", SourceIdentifier="db")
    found = rds.modify_event_subscription(SubscriptionName="s", EventCategories=["backup"])["EventSubscription"]
    assert (found["SourceIdsList"], found["EventCategoriesList"]) == (["other"], ["backup"])
    with pytest.raises(ClientError) as e:
        rds.modify_event_subscription(SubscriptionName="missing", Enabled=True)
    assert e.value.response["Error"]["Code"] == "SubscriptionNotFound"


def test_subscriptions_are_listed_in_pages(aws):
    rds, _, topic, _ = aws
    for i in range(25):
        rds.create_event_subscription(SubscriptionName=f"s{i:02}", SnsTopicArn=topic, SourceType="db-instance")
    first = rds.describe_event_subscriptions(MaxRecords=20)
    assert len(first["EventSubscriptionsList"]) == 20 and first["Marker"]
    rest = rds.describe_event_subscriptions(MaxRecords=20, Marker=first["Marker"])
    assert len(rest["EventSubscriptionsList"]) == 5 and "Marker" not in rest
