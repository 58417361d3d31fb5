//! The RDS calls of the Integration kind: DescribeIntegrations (every integration 100 a page, with
//! its tags), CreateIntegration, ModifyIntegration and DeleteIntegration (counted and
//! classified as every call). RDS names an integration by its ARN in every call but the create:
//! one whose ARN status has not recorded yet is found by its name in the pages.

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags, tag_map};

use super::ObservedIntegration;
use super::plan::{Create, Own};

// The integrations as the observer lists them (`observer::listing`), with the tags their pages
// carry.
crate::listed_by_name!(
    ObservedIntegration,
    "the zero-ETL integrations",
    integration_pages
);

/// The RDS calls of the Integration kind.
pub(super) trait IntegrationCalls {
    /// The integration of this name, with its tags (DescribeIntegrations answers them); None
    /// when RDS has none.
    fn integration(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedIntegration>, AwsError>> + Send;

    /// The integration of this ARN (DescribeIntegrations of one), with its tags; None when RDS
    /// has none.
    fn integration_by_arn(
        &self,
        arn: &str,
    ) -> impl Future<Output = Result<Option<ObservedIntegration>, AwsError>> + Send;

    /// Every integration of the account and region, 100 a page, with their tags.
    fn integration_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedIntegration>, AwsError>> + Send;

    /// The step's call.
    fn integration_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteIntegration of the integration of this name; one already gone is deleted.
    fn delete_integration(&self, name: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl IntegrationCalls for Rds {
    async fn integration(&self, name: &str) -> Result<Option<ObservedIntegration>, AwsError> {
        let all = self.integration_pages().await?;
        Ok(all.into_iter().find(|i| i.name.eq_ignore_ascii_case(name)))
    }

    async fn integration_by_arn(&self, arn: &str) -> Result<Option<ObservedIntegration>, AwsError> {
        let result = (self.client.describe_integrations())
            .integration_identifier(arn)
            .send()
            .await
            .map_err(|e| aws_error("DescribeIntegrations", e, None));
        let result = self.counted("DescribeIntegrations", result);
        match result {
            Ok(out) => Ok(out.integrations().first().map(observed)),
            Err(e) if e.gone() => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn integration_pages(&self) -> Result<Vec<ObservedIntegration>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_integrations())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeIntegrations", e, None));
            let page = self.counted("DescribeIntegrations", page);
            all.extend(page?.integrations().iter().map(observed));
        }
        Ok(all)
    }

    async fn integration_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create(c) => create(self, c).await,
            Own::Modify {
                arn,
                data_filter,
                description,
            } => {
                let result = (self.client.modify_integration())
                    .integration_identifier(arn)
                    .set_data_filter(data_filter.clone())
                    .set_description(description.clone())
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyIntegration", e, None));
                let result = self.counted("ModifyIntegration", result);
                result.map(|_| ())
            }
        }
    }

    async fn delete_integration(&self, name: &str) -> Result<(), AwsError> {
        let Some(arn) = (self.integration_pages().await?.into_iter())
            .find(|i| i.name.eq_ignore_ascii_case(name))
            .and_then(|i| i.arn)
        else {
            return Ok(());
        };
        let result = (self.client.delete_integration())
            .integration_identifier(arn)
            .send()
            .await
            .map_err(|e| aws_error("DeleteIntegration", e, None));
        let result = self.counted("DeleteIntegration", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

/// CreateIntegration, tagged from its first moment.
async fn create(rds: &Rds, c: &Create) -> Result<(), AwsError> {
    let result = (rds.client.create_integration())
        .integration_name(&c.name)
        .source_arn(&c.source_arn)
        .target_arn(&c.target_arn)
        .set_data_filter(c.data_filter.clone())
        .set_description(c.description.clone())
        .set_kms_key_id(c.kms_key_id.clone())
        .set_additional_encryption_context((!c.context.is_empty()).then(|| {
            c.context
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        }))
        .set_tags(Some(rds_tags(&c.tags)))
        .send()
        .await
        .map_err(|e| aws_error("CreateIntegration", e, None));
    let result = rds.counted("CreateIntegration", result);
    result.map(|_| ())
}

fn observed(i: &aws_sdk_rds::types::Integration) -> ObservedIntegration {
    let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
    ObservedIntegration {
        name: text(i.integration_name()),
        arn: i.integration_arn().map(str::to_owned),
        source_arn: text(i.source_arn()),
        target_arn: text(i.target_arn()),
        data_filter: i.data_filter().map(str::to_owned),
        description: i.description().map(str::to_owned),
        kms_key_id: i.kms_key_id().map(str::to_owned),
        status: (i.status()).map_or_else(String::new, |s| s.as_str().to_owned()),
        errors: (i.errors().iter())
            .map(|e| format!("{}: {}", text(e.error_code()), text(e.error_message())))
            .collect(),
        tags: tag_map(i.tags()),
    }
}
