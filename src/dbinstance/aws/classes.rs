//! The DB instance classes RDS offers for an engine and version in a location
//! (DescribeOrderableDBInstanceOptions, API_DescribeOrderableDBInstanceOptions.html), read once per
//! (account, region, engine, version) and kept for a day: a create is checked against them before
//! it is sent, so a class RDS does not offer is refused naming the field, with no CreateDBInstance.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::aws_error::{AwsError, aws_error};
use crate::rds::Rds;

/// How long an answer is kept: RDS adds classes rarely, and a class it stops offering is refused
/// by CreateDBInstance anyway.
const KEEP: Duration = Duration::from_secs(24 * 3600);

/// (account, region, engine, version).
type Key = (String, String, String, String);

/// The answers read, by [`Key`], each with when it was read.
#[derive(Default)]
pub struct OfferedClasses {
    answers: Mutex<BTreeMap<Key, (Instant, BTreeSet<String>)>>,
}

impl OfferedClasses {
    /// The classes `rds`'s location offers for `engine` at `version`, from the cache while it is
    /// a day old or younger; an empty set when RDS lists none (an engine or version it does not
    /// have, which CreateDBInstance then answers for).
    pub async fn of(
        &self,
        rds: &Rds,
        engine: &str,
        version: &str,
    ) -> Result<BTreeSet<String>, AwsError> {
        let key = (
            rds.place().account().to_owned(),
            rds.place().region().to_owned(),
            engine.to_owned(),
            version.to_owned(),
        );
        if let Some((at, classes)) = crate::lock(&self.answers).get(&key)
            && at.elapsed() < KEEP
        {
            return Ok(classes.clone());
        }
        let classes = rds.offered_classes(engine, version).await?;
        crate::lock(&self.answers).insert(key, (Instant::now(), classes.clone()));
        Ok(classes)
    }
}

/// DescribeOrderableDBInstanceOptions' classes, every page (100 a page).
pub(crate) trait ClassCalls {
    async fn offered_classes(
        &self,
        engine: &str,
        version: &str,
    ) -> Result<BTreeSet<String>, AwsError>;
}

impl ClassCalls for Rds {
    async fn offered_classes(
        &self,
        engine: &str,
        version: &str,
    ) -> Result<BTreeSet<String>, AwsError> {
        let mut classes = BTreeSet::new();
        let mut marker: Option<String> = None;
        loop {
            let result = (self.client.describe_orderable_db_instance_options())
                .engine(engine)
                .engine_version(version)
                .max_records(100)
                .set_marker(marker.clone())
                .send()
                .await
                .map_err(|e| aws_error("DescribeOrderableDBInstanceOptions", e, None));
            let out = self.counted("DescribeOrderableDBInstanceOptions", result)?;
            let options = out.orderable_db_instance_options();
            classes.extend(
                options
                    .iter()
                    .filter_map(|o| o.db_instance_class().map(str::to_owned)),
            );
            marker = out.marker().map(str::to_owned).filter(|m| !m.is_empty());
            if marker.is_none() {
                return Ok(classes);
            }
        }
    }
}
