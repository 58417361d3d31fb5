//! The DBParameterGroup kind's cache: RDS's parameter catalogs by family. They do not change, so
//! each is read once (DescribeEngineDefaultParameters).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::aws_error::AwsError;
use crate::lock;
use crate::rds::Rds;
use crate::rds_state::Catalog;

/// The catalogs read so far, by family.
#[derive(Default)]
pub struct Catalogs(Mutex<HashMap<String, Arc<Catalog>>>);

impl Catalogs {
    /// RDS's catalog of a DB parameter group family, read once.
    pub async fn get(&self, rds: &Rds, family: &str) -> Result<Arc<Catalog>, AwsError> {
        self.get_of(rds, family, false).await
    }

    /// RDS's catalog of a family for DB parameter groups, or (`cluster`) for DB cluster parameter
    /// groups (DescribeEngineDefaultClusterParameters): the same family name has one of each.
    pub async fn get_of(
        &self,
        rds: &Rds,
        family: &str,
        cluster: bool,
    ) -> Result<Arc<Catalog>, AwsError> {
        let key = format!("{}{family}", if cluster { "cluster:" } else { "" });
        if let Some(c) = lock(&self.0).get(&key) {
            return Ok(c.clone());
        }
        let catalog = Arc::new(super::aws::catalog(rds, family, cluster).await?);
        lock(&self.0).insert(key, catalog.clone());
        Ok(catalog)
    }
}
