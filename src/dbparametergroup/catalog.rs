//! The DBParameterGroup kind's cache: RDS's parameter catalogs by family. They do not change, so
//! each is read once (DescribeEngineDefaultParameters).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::lock;
use crate::managed::aws_error::AwsError;
use crate::rds::Rds;
use crate::rds_state::Catalog;

/// The catalogs read so far, by family.
#[derive(Default)]
pub struct Catalogs(Mutex<HashMap<String, Arc<Catalog>>>);

impl Catalogs {
    /// RDS's catalog of a parameter group family, read once.
    pub async fn get(&self, rds: &Rds, family: &str) -> Result<Arc<Catalog>, AwsError> {
        if let Some(c) = lock(&self.0).get(family) {
            return Ok(c.clone());
        }
        let catalog = Arc::new(rds.parameter_catalog(family).await?);
        lock(&self.0).insert(family.to_owned(), catalog.clone());
        Ok(catalog)
    }
}
