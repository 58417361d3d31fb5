//! The RDS calls of the OptionGroup kind: DescribeOptionGroups (one, with its tags, or every
//! group 100 a page), CreateOptionGroup, ModifyOptionGroup, DeleteOptionGroup (counted and
//! classified as every call, in `rds.rs`).

use std::collections::BTreeMap;

use aws_sdk_rds::types::{OptionConfiguration, OptionSetting};

use crate::aws_error::{AwsError, aws_error};
use crate::rds::{Rds, rds_tags};

use super::plan::Own;
use super::{ObservedOption, ObservedOptionGroup, OptionSpec};

// The option groups as the observer lists them (`observer::listing`, with their options), their
// tags from GetResources.
crate::listed_by_name!(
    ObservedOptionGroup,
    "the option groups",
    "rds:og",
    option_group_pages
);

/// The RDS calls of the OptionGroup kind.
pub(super) trait OptionGroupCalls {
    /// DescribeOptionGroups of one group, with its tags (ListTagsForResource); None when RDS has
    /// none of that name.
    fn option_group(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ObservedOptionGroup>, AwsError>> + Send;

    /// Every option group of the account and region, 100 a page, with their options and without
    /// their tags (GetResources has them: `rds::tagging`).
    fn option_group_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedOptionGroup>, AwsError>> + Send;

    /// CreateOptionGroup (tagged from its first moment) or ModifyOptionGroup.
    fn option_group_call(&self, step: &Own) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteOptionGroup; one already gone is deleted. RDS refuses one an instance uses
    /// (InvalidOptionGroupStateFault): reported, with backoff.
    fn delete_option_group(&self, name: &str) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl OptionGroupCalls for Rds {
    async fn option_group(&self, name: &str) -> Result<Option<ObservedOptionGroup>, AwsError> {
        self.described_with_tags(
            || describe_option_group(self, name),
            |o| o.arn.as_deref(),
            |o| &mut o.tags,
        )
        .await
    }

    async fn option_group_pages(&self) -> Result<Vec<ObservedOptionGroup>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_option_groups())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeOptionGroups", e, None));
            let page = self.counted("DescribeOptionGroups", page);
            all.extend(page?.option_groups_list().iter().map(observed));
        }
        Ok(all)
    }

    async fn option_group_call(&self, step: &Own) -> Result<(), AwsError> {
        match step {
            Own::Create {
                name,
                engine,
                major_version,
                description,
                tags,
            } => {
                let result = (self.client.create_option_group())
                    .option_group_name(name)
                    .engine_name(engine)
                    .major_engine_version(major_version)
                    .option_group_description(description)
                    .set_tags(Some(rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| aws_error("CreateOptionGroup", e, None));
                let result = self.counted("CreateOptionGroup", result);
                result.map(|_| ())
            }
            Own::Modify {
                name,
                include,
                remove,
                apply_immediately,
            } => {
                let include: Vec<OptionConfiguration> = include.iter().map(configuration).collect();
                let result = (self.client.modify_option_group())
                    .option_group_name(name)
                    .set_options_to_include((!include.is_empty()).then_some(include))
                    .set_options_to_remove((!remove.is_empty()).then(|| remove.clone()))
                    .apply_immediately(*apply_immediately)
                    .send()
                    .await
                    .map_err(|e| aws_error("ModifyOptionGroup", e, None));
                let result = self.counted("ModifyOptionGroup", result);
                result.map(|_| ())
            }
        }
    }

    async fn delete_option_group(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_option_group())
            .option_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteOptionGroup", e, None));
        let result = self.counted("DeleteOptionGroup", result);
        match result {
            Err(e) if e.gone() => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

async fn describe_option_group(
    rds: &Rds,
    name: &str,
) -> Result<Option<ObservedOptionGroup>, AwsError> {
    let result = (rds.client.describe_option_groups())
        .option_group_name(name)
        .send()
        .await
        .map_err(|e| aws_error("DescribeOptionGroups", e, None));
    let result = rds.counted("DescribeOptionGroups", result);
    match result {
        Ok(out) => Ok(out.option_groups_list().first().map(observed)),
        Err(e) if e.gone() => Ok(None),
        Err(e) => Err(e),
    }
}

/// The spec's option as RDS's OptionConfiguration.
fn configuration(o: &OptionSpec) -> OptionConfiguration {
    let settings = (o.settings.iter())
        .map(|(k, v)| OptionSetting::builder().name(k).value(v).build())
        .collect();
    let groups = (!o.vpc_security_group_ids.is_empty()).then(|| o.vpc_security_group_ids.clone());
    OptionConfiguration::builder()
        .option_name(&o.name)
        .set_port(o.port)
        .set_option_version(o.version.clone())
        .set_vpc_security_group_memberships(groups)
        .set_option_settings(Some(settings))
        .build()
}

fn observed(g: &aws_sdk_rds::types::OptionGroup) -> ObservedOptionGroup {
    let options = (g.options().iter())
        .map(|o| {
            let settings = (o.option_settings().iter())
                .filter_map(|s| Some((s.name()?.to_owned(), s.value().unwrap_or("").to_owned())))
                .collect();
            let groups = (o.vpc_security_group_memberships().iter())
                .filter_map(|m| m.vpc_security_group_id().map(str::to_owned))
                .collect();
            let option = ObservedOption {
                settings,
                port: o.port(),
                version: o.option_version().map(str::to_owned),
                vpc_security_group_ids: groups,
            };
            (o.option_name().unwrap_or_default().to_owned(), option)
        })
        .collect();
    ObservedOptionGroup {
        name: g.option_group_name().unwrap_or_default().to_owned(),
        arn: g.option_group_arn().map(str::to_owned),
        engine_name: g.engine_name().unwrap_or_default().to_owned(),
        major_engine_version: g.major_engine_version().unwrap_or_default().to_owned(),
        options,
        tags: BTreeMap::new(),
    }
}
