//! The RDS calls of the EventSubscription kind: DescribeEventSubscriptions (one, with its tags, or
//! every subscription 100 a page), CreateEventSubscription, ModifyEventSubscription,
//! AddSourceIdentifierToSubscription, RemoveSourceIdentifierFromSubscription and
//! DeleteEventSubscription (counted and classified as every call).

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};

use super::ObservedSubscription;
use super::plan::Own;

// The subscriptions as the observer lists them (`observer::listing`), their tags from
// GetResources.
crate::listed_by_name!(
    ObservedSubscription,
    "the event subscriptions",
    "rds:es",
    subscription_pages
);

/// The RDS calls of the EventSubscription kind.
pub(super) trait SubscriptionCalls {
    /// DescribeEventSubscriptions of one subscription, with its tags; None when RDS has none.
    fn subscription(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedSubscription>, AwsError>> + Send;

    /// Every subscription of the account and region, 100 a page, without their tags.
    fn subscription_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedSubscription>, AwsError>> + Send;

    /// The step's call.
    fn subscription_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteEventSubscription; one already gone is deleted.
    fn delete_subscription(&self, name: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl SubscriptionCalls for Rds {
    async fn subscription(&self, name: &str) -> Result<Option<ObservedSubscription>, AwsError> {
        self.described_with_tags(
            || describe_subscription(self, name),
            |o| o.arn.as_deref(),
            |o| &mut o.tags,
        )
        .await
    }

    async fn subscription_pages(&self) -> Result<Vec<ObservedSubscription>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_event_subscriptions())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeEventSubscriptions", e, None));
            let page = self.counted("DescribeEventSubscriptions", page);
            all.extend(page?.event_subscriptions_list().iter().map(observed));
        }
        Ok(all)
    }

    async fn subscription_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create(c) => create(self, c).await,
            Own::Modify {
                name,
                topic,
                categories,
                enabled,
            } => {
                let result = (self.client.modify_event_subscription())
                    .subscription_name(name)
                    .set_sns_topic_arn(topic.clone())
                    .set_event_categories(categories.clone())
                    .set_enabled(*enabled)
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyEventSubscription", e, None));
                let result = self.counted("ModifyEventSubscription", result);
                result.map(|_| ())
            }
            Own::AddSource { name, id } => {
                let result = (self.client.add_source_identifier_to_subscription())
                    .subscription_name(name)
                    .source_identifier(id)
                    .send()
                    .await
                    .map_err(|e| aws_error("AddSourceIdentifierToSubscription", e, None));
                let result = self.counted("AddSourceIdentifierToSubscription", result);
                result.map(|_| ())
            }
            Own::RemoveSource { name, id } => {
                let result = (self.client.remove_source_identifier_from_subscription())
                    .subscription_name(name)
                    .source_identifier(id)
                    .send()
                    .await
                    .map_err(|e| aws_error("RemoveSourceIdentifierFromSubscription", e, None));
                let result = self.counted("RemoveSourceIdentifierFromSubscription", result);
                result.map(|_| ())
            }
        }
    }

    async fn delete_subscription(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_event_subscription())
            .subscription_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteEventSubscription", e, None));
        let result = self.counted("DeleteEventSubscription", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

/// CreateEventSubscription, tagged from its first moment.
async fn create(rds: &Rds, c: &super::plan::Create) -> Result<(), AwsError> {
    let result = (rds.client.create_event_subscription())
        .subscription_name(&c.name)
        .sns_topic_arn(&c.topic)
        .source_type(&c.source_type)
        .set_source_ids(Some(c.source_ids.clone()))
        .set_event_categories((!c.categories.is_empty()).then(|| c.categories.clone()))
        .enabled(c.enabled)
        .set_tags(Some(rds_tags(&c.tags)))
        .send()
        .await
        .map_err(|e| aws_error("CreateEventSubscription", e, None));
    let result = rds.counted("CreateEventSubscription", result);
    result.map(|_| ())
}

async fn describe_subscription(
    rds: &Rds,
    name: &str,
) -> Result<Option<ObservedSubscription>, AwsError> {
    let result = (rds.client.describe_event_subscriptions())
        .subscription_name(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeEventSubscriptions", e, None));
    let result = rds.counted("DescribeEventSubscriptions", result);
    match result {
        Ok(out) => Ok(out.event_subscriptions_list().first().map(observed)),
        Err(e) if e.gone() => Ok(None),
        Err(e) => Err(e),
    }
}

fn observed(s: &aws_sdk_rds::types::EventSubscription) -> ObservedSubscription {
    let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
    ObservedSubscription {
        name: text(s.cust_subscription_id()),
        arn: s.event_subscription_arn().map(str::to_owned),
        topic: text(s.sns_topic_arn()),
        source_type: text(s.source_type()),
        source_ids: s.source_ids_list().to_vec(),
        categories: s.event_categories_list().to_vec(),
        enabled: s.enabled().unwrap_or(false),
        status: text(s.status()),
        tags: BTreeMap::new(),
    }
}
