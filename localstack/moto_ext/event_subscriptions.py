"""RDS event subscriptions as RDS runs them, on moto's.

moto 5.2.5 stores a subscription and never notifies anyone; it has no ModifyEventSubscription,
AddSourceIdentifierToSubscription or RemoveSourceIdentifierFromSubscription, and takes any topic,
source type and category. RDS ("Working with Amazon RDS event notification", USER_Events.html;
API_CreateEventSubscription.html, API_ModifyEventSubscription.html, API_EventSubscription.html):

- **Refusals.** A topic moto's SNS does not have is SNSTopicArnNotFound; a source type outside
  API_CreateEventSubscription.html's list is InvalidParameterValue; a source identifier that is not
  an instance, cluster, parameter group, snapshot or cluster snapshot of the account and region is
  SourceNotFound; an unknown subscription is SubscriptionNotFound.
- **Pages.** DescribeEventSubscriptions pages with MaxRecords (20 to 100, default 100) and Marker
  (API_DescribeEventSubscriptions.html); moto answers every subscription at once.
- **Changes.** ModifyEventSubscription changes the topic, source type, categories and Enabled;
  AddSourceIdentifierToSubscription and RemoveSourceIdentifierFromSubscription the source IDs.
- **Notifications.** Every RDS event moto records (``add_event``: an instance created, backed up,
  its credentials reset, a snapshot taken; here also an instance rebooted, RDS-EVENT-0006
  "DB instance restarted", category availability) is published to the topic of each enabled subscription
  whose source type is the event's, whose source IDs are empty or name its source, and whose
  categories are empty or share one of its categories; moto's SNS delivers it to the topic's
  subscribers (an SQS queue). The message is the JSON of "Amazon RDS event notification" messages
  (USER_Events.Messages.html): Event Source, Event Time, Identifier Link, Source ID, Source ARN,
  Event ID, Event Message.
"""

from __future__ import annotations

import json
from typing import Any

from . import paging

# API_CreateEventSubscription.html, SourceType.
SOURCE_TYPES = ("db-instance", "db-cluster", "db-parameter-group", "db-security-group", "db-snapshot",
                "db-cluster-snapshot", "db-proxy", "custom-engine-version", "blue-green-deployment")


def matches(subscription: Any, event: Any) -> bool:
    """Whether `event` goes to `subscription`'s topic."""
    if not subscription.enabled or subscription.source_type != event.source_type:
        return False
    ids = list(subscription.source_ids or [])
    categories = list(subscription.event_categories or [])
    return (not ids or event.source_identifier in ids) and (
        not categories or any(c in categories for c in event.event_categories))


def message(event: Any) -> str:
    """The event as RDS's notification message (USER_Events.Messages.html)."""
    return json.dumps({
        "Event Source": event.source_type,
        "Event Time": event.date.strftime("%Y-%m-%d %H:%M:%S.%f"),
        "Identifier Link": f"https://console.aws.amazon.com/rds/home#{event.source_identifier}",
        "Source ID": event.source_identifier,
        "Source ARN": event.source_arn,
        "Event ID": "http://docs.amazonwebservices.com/AmazonRDS/latest/UserGuide/USER_Events.html",
        "Event Message": event.message,
    })


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import Event, RDSBackend as Backend
    from moto.rds.responses import RDSResponse
    from moto.sns.models import sns_backends

    def region_of(backend: Any, arn: str) -> str:
        parts = str(arn or "").split(":")
        return parts[3] if len(parts) > 5 and parts[3] else backend.region_name

    def topic_exists(backend: Any, arn: str) -> bool:
        return arn in sns_backends[backend.account_id][region_of(backend, arn)].topics

    def source_exists(backend: Any, source_type: str, identifier: str) -> bool:
        tables = {"db-instance": backend.databases, "db-cluster": backend.clusters,
                  "db-parameter-group": backend.db_parameter_groups,
                  "db-snapshot": backend.database_snapshots, "db-cluster-snapshot": backend.cluster_snapshots}
        table = tables.get(source_type)
        return table is None or identifier in table

    def check(backend: Any, topic: str | None, source_type: str | None, ids: list[str]) -> None:
        if topic is not None and not topic_exists(backend, topic):
            raise RDSClientError("SNSTopicArnNotFound", f"The SNS topic {topic} does not exist.")
        if source_type is not None and source_type not in SOURCE_TYPES:
            raise RDSClientError("InvalidParameterValue", f"Invalid source type: {source_type}.")
        for identifier in ids:
            if not source_exists(backend, source_type or "", identifier):
                raise RDSClientError("SourceNotFound", f"Could not find source {identifier} of type {source_type}.")

    def found(backend: Any, name: str) -> Any:
        subscription = backend.event_subscriptions.get(name)
        if subscription is None:
            raise RDSClientError("SubscriptionNotFound", f"Subscription {name} not found.")
        return subscription

    orig_create = Backend.create_event_subscription
    orig_add_event = Backend.add_event

    def create_event_subscription(self: Any, kwargs: Any) -> Any:
        check(self, kwargs.get("sns_topic_arn"), kwargs.get("source_type"), list(kwargs.get("source_ids") or []))
        with lock:
            subscription = orig_create(self, kwargs)
            # "Enabled ... By default, it's true" (API_CreateEventSubscription.html); moto's is false.
            enabled = kwargs.get("enabled")
            subscription.enabled = True if enabled is None else str(enabled).lower() == "true"
            subscription.source_ids = list(subscription.source_ids or [])
            return subscription

    def modify(self: Any) -> Any:
        p = self.params
        with lock:
            subscription = found(self.backend, p.get("SubscriptionName"))
            source_type = p.get("SourceType") or subscription.source_type
            check(self.backend, p.get("SnsTopicArn"), source_type, [])
            if p.get("SnsTopicArn"):
                subscription.sns_topic_arn = p["SnsTopicArn"]
            subscription.source_type = source_type
            if p.get("EventCategories") is not None:
                subscription.event_categories = list(p["EventCategories"])
            if p.get("Enabled") is not None:
                subscription.enabled = str(p["Enabled"]).lower() == "true"
            return ActionResult({"EventSubscription": subscription})

    def source_ids(self: Any, add: bool) -> Any:
        p = self.params
        with lock:
            subscription = found(self.backend, p.get("SubscriptionName"))
            identifier = p.get("SourceIdentifier")
            if add:
                check(self.backend, None, subscription.source_type, [identifier])
                if identifier not in subscription.source_ids:
                    subscription.source_ids = [*subscription.source_ids, identifier]
            else:
                if identifier not in subscription.source_ids:
                    raise RDSClientError("SourceNotFound", f"Could not find source {identifier}.")
                subscription.source_ids = [i for i in subscription.source_ids if i != identifier]
            return ActionResult({"EventSubscription": subscription})

    def add_event(self: Any, event_type: str, resource: Any) -> None:
        orig_add_event(self, event_type, resource)
        event = self.events[-1]
        for subscription in list(self.event_subscriptions.values()):
            if matches(subscription, event) and topic_exists(self, subscription.sns_topic_arn):
                region = region_of(self, subscription.sns_topic_arn)
                sns_backends[self.account_id][region].publish(
                    message(event), arn=subscription.sns_topic_arn, subject="RDS Notification Message")

    # RDS's events moto has no entry for (USER_Events.Messages.html): RDS-EVENT-0006, -0087, -0088.
    Event.EVENT_MAP.update({
        "DB_INSTANCE_RESTARTED": {"Categories": ["availability"], "Message": "DB instance restarted"},
        "DB_INSTANCE_STOPPED": {"Categories": ["notification"], "Message": "DB instance stopped"},
        "DB_INSTANCE_STARTED": {"Categories": ["notification"], "Message": "DB instance started"},
    })
    orig_reboot = Backend.reboot_db_instance

    def reboot_db_instance(self: Any, db_instance_identifier: str, *args: Any, **kwargs: Any) -> Any:
        db = orig_reboot(self, db_instance_identifier, *args, **kwargs)
        self.add_event("DB_INSTANCE_RESTARTED", self.databases[db_instance_identifier])
        return db

    Backend.reboot_db_instance = reboot_db_instance
    Backend.create_event_subscription = create_event_subscription
    Backend.add_event = add_event
    def describe(self: Any) -> Any:
        # MaxRecords (20 to 100, default 100) and Marker (API_DescribeEventSubscriptions.html);
        # moto answers every subscription in one page.
        paging.size(self.params)
        name = self.params.get("SubscriptionName")
        with lock:
            subs = [found(self.backend, name)] if name else list(self.backend.event_subscriptions.values())
            subs = sorted(subs, key=lambda s: s.subscription_name)
        return ActionResult(paging.page(self.params, "EventSubscriptionsList", subs))

    RDSResponse.describe_event_subscriptions = describe
    RDSResponse.modify_event_subscription = modify
    RDSResponse.add_source_identifier_to_subscription = lambda self: source_ids(self, True)
    RDSResponse.remove_source_identifier_from_subscription = lambda self: source_ids(self, False)
