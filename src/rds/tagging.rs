//! The tags of every DB subnet group and DB parameter group of the account and region, 100 a page
//! (Resource Groups Tagging API GetResources): what the shared poll of the groups reads instead of
//! a ListTagsForResource per group.

use std::collections::{BTreeMap, HashMap};

use super::Rds;
use crate::managed::aws_error::{AwsError, aws_error};

/// The resource types of the groups, as GetResources' ResourceTypeFilters name them.
const GROUP_TYPES: [&str; 2] = ["rds:subgrp", "rds:pg"];

impl Rds {
    /// ARN -> tags of every tagged DB subnet and parameter group (an untagged one is absent).
    pub async fn group_tags(&self) -> Result<HashMap<String, BTreeMap<String, String>>, AwsError> {
        let mut tags = HashMap::new();
        let mut pages = (self.tagging.get_resources())
            .set_resource_type_filters(Some(GROUP_TYPES.map(String::from).to_vec()))
            .resources_per_page(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("GetResources", e, None));
            self.count("GetResources", &page);
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
