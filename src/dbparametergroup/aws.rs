//! The RDS calls of the DBParameterGroup kind (counted and classified as every call, in `rds.rs`).

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::observer::listing::Listed;
use crate::rds::{Rds, rds_tags};

use super::{Catalog, ObservedParameterGroup, ParameterInfo};

/// RDS's code for a group that does not exist.
const GROUP_NOT_FOUND: &str = "DBParameterGroupNotFound";

/// One parameter to set or reset: name, value (None: reset), apply method.
pub type Change = (String, Option<String>, String);

pub(crate) fn parameter(change: &Change) -> aws_sdk_rds::types::Parameter {
    let (name, value, method) = change;
    aws_sdk_rds::types::Parameter::builder()
        .parameter_name(name)
        .set_parameter_value(value.clone())
        .apply_method(aws_sdk_rds::types::ApplyMethod::from(method.as_str()))
        .build()
}

/// The parameter groups as the observer lists them (`observer::listing`, without their
/// parameters), their tags from GetResources.
impl Listed for ObservedParameterGroup {
    const WHAT: &'static str = "the DB parameter groups";
    const TAGGED_AS: Option<&'static str> = Some("rds:pg");
    fn key(&self) -> String {
        self.name.to_lowercase()
    }
    fn arn(&self) -> Option<&str> {
        self.arn.as_deref()
    }
    fn set_tags(&mut self, tags: BTreeMap<String, String>) {
        self.tags = tags;
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        rds.parameter_group_pages().await
    }
}

impl Rds {
    /// The group of this name with its parameters set (source user) and its tags; None when
    /// RDS has none. `known`: the group as the shared poll listed it (its tags with it), so only
    /// its parameters are read.
    pub async fn parameter_group(
        &self,
        name: &str,
        known: Option<ObservedParameterGroup>,
    ) -> Result<Option<ObservedParameterGroup>, AwsError> {
        let mut group = match known {
            Some(group) => group,
            None => {
                let result = (self.client.describe_db_parameter_groups())
                    .db_parameter_group_name(name)
                    .send()
                    .await
                    .map_err(|e| aws_error("DescribeDBParameterGroups", e, None));
                self.count("DescribeDBParameterGroups", &result);
                let group = match result {
                    Ok(out) => out.db_parameter_groups().first().map(summary),
                    Err(e) if e.code == GROUP_NOT_FOUND => None,
                    Err(e) => return Err(e),
                };
                let Some(mut group) = group else {
                    return Ok(None);
                };
                if let Some(arn) = &group.arn {
                    group.tags = self.tags_of(arn).await?;
                }
                group
            }
        };
        let mut pages = (self.client.describe_db_parameters())
            .db_parameter_group_name(name)
            .source("user")
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBParameters", e, None));
            self.count("DescribeDBParameters", &page);
            for p in page?.parameters() {
                if let (Some(n), Some(v)) = (p.parameter_name(), p.parameter_value()) {
                    group.parameters.insert(n.to_owned(), v.to_owned());
                }
            }
        }
        Ok(Some(group))
    }

    /// Every DB parameter group of the account and region, 100 a page
    /// (DescribeDBParameterGroups), without parameters or tags.
    pub async fn parameter_group_pages(&self) -> Result<Vec<ObservedParameterGroup>, AwsError> {
        let mut groups = Vec::new();
        let mut pages = (self.client.describe_db_parameter_groups())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBParameterGroups", e, None));
            self.count("DescribeDBParameterGroups", &page);
            groups.extend(page?.db_parameter_groups().iter().map(summary));
        }
        Ok(groups)
    }

    /// RDS's catalog of a family (DescribeEngineDefaultParameters, every page).
    pub async fn parameter_catalog(&self, family: &str) -> Result<Catalog, AwsError> {
        catalog_pages(|marker| async move {
            let result = (self.client.describe_engine_default_parameters())
                .db_parameter_group_family(family)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| aws_error("DescribeEngineDefaultParameters", e, None));
            self.count("DescribeEngineDefaultParameters", &result);
            Ok(result?.engine_defaults().cloned())
        })
        .await
    }

    /// CreateDBParameterGroup, tagged.
    pub async fn create_parameter_group(
        &self,
        name: &str,
        family: &str,
        description: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let result = (self.client.create_db_parameter_group())
            .db_parameter_group_name(name)
            .db_parameter_group_family(family)
            .description(description)
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateDBParameterGroup", e, None));
        self.count("CreateDBParameterGroup", &result);
        result.map(|_| ())
    }

    /// ModifyDBParameterGroup with at most 20 parameters (as RDS takes them).
    pub async fn modify_parameters(&self, name: &str, changes: &[Change]) -> Result<(), AwsError> {
        let result = (self.client.modify_db_parameter_group())
            .db_parameter_group_name(name)
            .set_parameters(Some(changes.iter().map(parameter).collect()))
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBParameterGroup", e, None));
        self.count("ModifyDBParameterGroup", &result);
        result.map(|_| ())
    }

    /// ResetDBParameterGroup of these parameters (at most 20).
    pub async fn reset_parameters(&self, name: &str, changes: &[Change]) -> Result<(), AwsError> {
        let result = (self.client.reset_db_parameter_group())
            .db_parameter_group_name(name)
            .set_parameters(Some(changes.iter().map(parameter).collect()))
            .send()
            .await
            .map_err(|e| aws_error("ResetDBParameterGroup", e, None));
        self.count("ResetDBParameterGroup", &result);
        result.map(|_| ())
    }

    /// DeleteDBParameterGroup; RDS refuses it while an instance uses the group.
    pub async fn delete_parameter_group(&self, name: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_db_parameter_group())
            .db_parameter_group_name(name)
            .send()
            .await
            .map_err(|e| aws_error("DeleteDBParameterGroup", e, None));
        self.count("DeleteDBParameterGroup", &result);
        match result {
            Err(e) if e.code == GROUP_NOT_FOUND => Ok(()),
            other => other.map(|_| ()),
        }
    }
}

/// A family's catalog, page after page: `page(marker)` is one DescribeEngineDefaultParameters or
/// DescribeEngineDefaultClusterParameters (their answers have the same EngineDefaults shape).
pub(crate) async fn catalog_pages<Fut>(
    mut page: impl FnMut(Option<String>) -> Fut,
) -> Result<Catalog, AwsError>
where
    Fut: Future<Output = Result<Option<aws_sdk_rds::types::EngineDefaults>, AwsError>>,
{
    let mut catalog = Catalog::new();
    let mut marker = None;
    while let Some(defaults) = page(marker.take()).await? {
        marker = absorb(&defaults, &mut catalog);
        if marker.is_none() {
            break;
        }
    }
    Ok(catalog)
}

/// Takes one page of a family's engine defaults into the catalog; the marker of the next page.
fn absorb(defaults: &aws_sdk_rds::types::EngineDefaults, catalog: &mut Catalog) -> Option<String> {
    for p in defaults.parameters() {
        if let Some(name) = p.parameter_name() {
            let info = ParameterInfo {
                apply_type: p.apply_type().unwrap_or("static").to_owned(),
                modifiable: p.is_modifiable().unwrap_or(false),
            };
            catalog.insert(name.to_owned(), info);
        }
    }
    defaults
        .marker()
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
}

/// A group as RDS describes it, without its parameters or tags.
fn summary(g: &aws_sdk_rds::types::DbParameterGroup) -> ObservedParameterGroup {
    ObservedParameterGroup {
        name: g.db_parameter_group_name().unwrap_or_default().to_owned(),
        arn: g.db_parameter_group_arn().map(str::to_owned),
        family: g.db_parameter_group_family().unwrap_or_default().to_owned(),
        parameters: BTreeMap::new(),
        tags: BTreeMap::new(),
    }
}
