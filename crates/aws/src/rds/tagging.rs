//! The tags of every resource of some types in the account and region, 100 a page (Resource Groups
//! Tagging API GetResources): what the shared listings (`observer::listing`) read instead of a
//! ListTagsForResource per resource.

use std::collections::{BTreeMap, HashMap};

use super::Rds;
use crate::aws_error::{AwsError, aws_error};

impl Rds {
    /// ARN -> tags of every tagged resource of these types, as GetResources' ResourceTypeFilters
    /// name them (`rds:subgrp`, `rds:pg`); an untagged one is absent.
    pub async fn tags_of_types(
        &self,
        types: &[&str],
    ) -> Result<HashMap<String, BTreeMap<String, String>>, AwsError> {
        let mut tags = HashMap::new();
        let mut pages = (self.tagging.get_resources())
            .set_resource_type_filters(Some(types.iter().map(|t| t.to_string()).collect()))
            .resources_per_page(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("GetResources", e, None));
            let page = self.counted("GetResources", page);
            for mapping in page?.resource_tag_mapping_list() {
                let Some(arn) = mapping.resource_arn() else {
                    continue;
                };
                let map = (mapping.tags().iter())
                    .map(|t| (t.key().to_owned(), t.value().to_owned()))
                    .collect();
                tags.insert(arn.to_owned(), map);
            }
        }
        Ok(tags)
    }
}
