//! The RDS calls of the DBParameterGroup kind (counted and classified as every call, in `rds.rs`).

use std::collections::BTreeMap;

use crate::aws_error::{AwsError, aws_error};
use crate::rds::Rds;

use super::{Catalog, ObservedParameterGroup, ParameterInfo};

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

// The parameter groups as the observer lists them (`observer::listing`, without their
// parameters), their tags from GetResources.
crate::listed_by_name!(
    ObservedParameterGroup,
    "the DB parameter groups",
    "rds:pg",
    parameter_group_pages
);

/// The RDS calls of the DBParameterGroup kind.
pub(super) trait ParameterGroupCalls {
    /// The group of this name with its parameters set (source user) and its tags; None when
    /// RDS has none. `known`: the group as the shared poll listed it (its tags with it), so only
    /// its parameters are read.
    fn parameter_group(
        &self,
        name: &str,
        known: Option<ObservedParameterGroup>,
    ) -> impl Future<Output = Result<Option<ObservedParameterGroup>, AwsError>> + Send;

    /// Every DB parameter group of the account and region, 100 a page
    /// (DescribeDBParameterGroups), without parameters or tags.
    fn parameter_group_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<ObservedParameterGroup>, AwsError>> + Send;
}

impl ParameterGroupCalls for Rds {
    async fn parameter_group(
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
                let result = self.counted("DescribeDBParameterGroups", result);
                let group = match result {
                    Ok(out) => out.db_parameter_groups().first().map(summary),
                    Err(e) if e.gone() => None,
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
            let page = self.counted("DescribeDBParameters", page);
            for p in page?.parameters() {
                if let (Some(n), Some(v)) = (p.parameter_name(), p.parameter_value()) {
                    group.parameters.insert(n.to_owned(), v.to_owned());
                }
            }
        }
        Ok(Some(group))
    }

    async fn parameter_group_pages(&self) -> Result<Vec<ObservedParameterGroup>, AwsError> {
        let mut groups = Vec::new();
        let mut pages = (self.client.describe_db_parameter_groups())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribeDBParameterGroups", e, None));
            let page = self.counted("DescribeDBParameterGroups", page);
            groups.extend(page?.db_parameter_groups().iter().map(summary));
        }
        Ok(groups)
    }
}

/// The calls a DB parameter group and a DB cluster parameter group make alike, written once for
/// both: the family's catalog (every page), and create (tagged), modify and reset (at most 20
/// parameters each, as RDS takes them) and delete a group of this name (RDS refuses a deletion
/// while an instance or cluster uses it; a group already gone is no error). Each call is counted
/// and classified under its operation's name.
macro_rules! parameter_group_calls {
    (
        trait: $trait:ident,
        name: $name:ident,
        create: $create:ident = $create_op:ident $create_label:literal,
        modify: $modify:ident = $modify_op:ident $modify_label:literal,
        reset: $reset:ident = $reset_op:ident $reset_label:literal,
        delete: $delete:ident = $delete_op:ident $delete_label:literal $(,)?
    ) => {
        /// The calls of the kind's groups (`parameter_group_calls!`).
        pub(crate) trait $trait {
            async fn $create(
                &self,
                name: &str,
                family: &str,
                description: &str,
                tags: &std::collections::BTreeMap<String, String>,
            ) -> Result<(), $crate::aws_error::AwsError>;
            async fn $modify(
                &self,
                name: &str,
                changes: &[$crate::dbparametergroup::aws::Change],
            ) -> Result<(), $crate::aws_error::AwsError>;
            async fn $reset(
                &self,
                name: &str,
                changes: &[$crate::dbparametergroup::aws::Change],
            ) -> Result<(), $crate::aws_error::AwsError>;
            async fn $delete(&self, name: &str) -> Result<(), $crate::aws_error::AwsError>;
        }

        impl $trait for $crate::rds::Rds {
            async fn $create(
                &self,
                name: &str,
                family: &str,
                description: &str,
                tags: &std::collections::BTreeMap<String, String>,
            ) -> Result<(), $crate::aws_error::AwsError> {
                let result = (self.client.$create_op())
                    .$name(name)
                    .db_parameter_group_family(family)
                    .description(description)
                    .set_tags(Some($crate::rds::rds_tags(tags)))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($create_label, e, None));
                let result = self.counted($create_label, result);
                result.map(|_| ())
            }

            async fn $modify(
                &self,
                name: &str,
                changes: &[$crate::dbparametergroup::aws::Change],
            ) -> Result<(), $crate::aws_error::AwsError> {
                let parameters = changes.iter().map($crate::dbparametergroup::aws::parameter);
                let result = (self.client.$modify_op())
                    .$name(name)
                    .set_parameters(Some(parameters.collect()))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($modify_label, e, None));
                let result = self.counted($modify_label, result);
                result.map(|_| ())
            }

            async fn $reset(
                &self,
                name: &str,
                changes: &[$crate::dbparametergroup::aws::Change],
            ) -> Result<(), $crate::aws_error::AwsError> {
                let parameters = changes.iter().map($crate::dbparametergroup::aws::parameter);
                let result = (self.client.$reset_op())
                    .$name(name)
                    .set_parameters(Some(parameters.collect()))
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($reset_label, e, None));
                let result = self.counted($reset_label, result);
                result.map(|_| ())
            }

            async fn $delete(&self, name: &str) -> Result<(), $crate::aws_error::AwsError> {
                let result = (self.client.$delete_op())
                    .$name(name)
                    .send()
                    .await
                    .map_err(|e| $crate::aws_error::aws_error($delete_label, e, None));
                let result = self.counted($delete_label, result);
                match result {
                    Err(e) if e.gone() => Ok(()),
                    other => other.map(|_| ()),
                }
            }
        }
    };
}
pub(crate) use parameter_group_calls;

parameter_group_calls!(
    trait: ParameterGroupChanges,
    name: db_parameter_group_name,
    create: create_parameter_group = create_db_parameter_group "CreateDBParameterGroup",
    modify: modify_parameters = modify_db_parameter_group "ModifyDBParameterGroup",
    reset: reset_parameters = reset_db_parameter_group "ResetDBParameterGroup",
    delete: delete_parameter_group = delete_db_parameter_group "DeleteDBParameterGroup",
);

/// RDS's catalog of a family for DB parameter groups (DescribeEngineDefaultParameters), or
/// (`cluster`) for DB cluster parameter groups (DescribeEngineDefaultClusterParameters), every page
/// counted: their answers have the same EngineDefaults shape.
pub(crate) async fn catalog(rds: &Rds, family: &str, cluster: bool) -> Result<Catalog, AwsError> {
    catalog_pages(|marker| async move {
        let (label, result) = match cluster {
            true => {
                let request = (rds.client.describe_engine_default_cluster_parameters())
                    .db_parameter_group_family(family)
                    .set_marker(marker);
                let result = request.send().await.map(|o| o.engine_defaults);
                let result = result
                    .map_err(|e| aws_error("DescribeEngineDefaultClusterParameters", e, None));
                ("DescribeEngineDefaultClusterParameters", result)
            }
            false => {
                let request = (rds.client.describe_engine_default_parameters())
                    .db_parameter_group_family(family)
                    .set_marker(marker);
                let result = request.send().await.map(|o| o.engine_defaults);
                let result =
                    result.map_err(|e| aws_error("DescribeEngineDefaultParameters", e, None));
                ("DescribeEngineDefaultParameters", result)
            }
        };
        rds.counted(label, result)
    })
    .await
}

/// A family's catalog, page after page: `page(marker)` is one DescribeEngineDefaultParameters or
/// DescribeEngineDefaultClusterParameters.
async fn catalog_pages<Fut>(
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
