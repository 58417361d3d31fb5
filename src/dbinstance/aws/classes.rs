//! Whether RDS offers a DB instance class for an engine (and version) in a location
//! (DescribeOrderableDBInstanceOptions, API_DescribeOrderableDBInstanceOptions.html), asked with
//! the class as a filter, 20 options at most: a create is checked before it is sent, so a class RDS
//! does not offer is refused naming the field, with no CreateDBInstance.
//!
//! An answer listing the class: offered. None listed, but some for the engine (and version): not
//! offered. None at all (an engine or version RDS does not list, an emulator that does not know
//! it), or a failed read (an IAM policy without the action): not known, and CreateDBInstance
//! answers for the class. Kept by (account, region, engine, version, class): a day when offered,
//! an hour when not (a class RDS adds is found again), ten minutes when not known; one read at a
//! time, so a burst of new objects costs one read a key.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::aws_error::{AwsError, aws_error};
use crate::rds::Rds;

/// (account, region, engine, version or "", class).
type Key = (String, String, String, String, String);

/// The answers read, each with when it was read.
#[derive(Default)]
pub struct OfferedClasses {
    answers: tokio::sync::Mutex<BTreeMap<Key, (Instant, Option<bool>)>>,
}

/// How long an answer is kept.
fn kept(answer: Option<bool>) -> Duration {
    match answer {
        Some(true) => Duration::from_secs(24 * 3600),
        Some(false) => Duration::from_secs(3600),
        None => Duration::from_secs(600),
    }
}

impl OfferedClasses {
    /// Whether `rds`'s location offers `class` for `engine` (at `version`, when given): Some(true)
    /// or Some(false), or None when it cannot be known.
    pub async fn offered(
        &self,
        rds: &Rds,
        engine: &str,
        version: Option<&str>,
        class: &str,
    ) -> Option<bool> {
        let place = rds.place();
        let key = (
            place.account().to_owned(),
            place.region().to_owned(),
            engine.to_owned(),
            version.unwrap_or_default().to_owned(),
            class.to_owned(),
        );
        let mut answers = self.answers.lock().await;
        if let Some((at, answer)) = answers.get(&key)
            && at.elapsed() < kept(*answer)
        {
            return *answer;
        }
        let answer = match ask(rds, engine, version, class).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(error = %e, engine, class, "cannot learn whether RDS offers the class; CreateDBInstance will answer for it");
                None
            }
        };
        answers.insert(key, (Instant::now(), answer));
        answer
    }
}

/// The class asked for first; when RDS lists none of it, the engine alone.
async fn ask(
    rds: &Rds,
    engine: &str,
    version: Option<&str>,
    class: &str,
) -> Result<Option<bool>, AwsError> {
    if rds.any_orderable(engine, version, Some(class)).await? {
        return Ok(Some(true));
    }
    match rds.any_orderable(engine, version, None).await? {
        true => Ok(Some(false)),
        false => Ok(None),
    }
}

/// Whether DescribeOrderableDBInstanceOptions lists any option for these filters (one page of
/// 20, the least it takes).
pub(crate) trait ClassCalls {
    async fn any_orderable(
        &self,
        engine: &str,
        version: Option<&str>,
        class: Option<&str>,
    ) -> Result<bool, AwsError>;
}

impl ClassCalls for Rds {
    async fn any_orderable(
        &self,
        engine: &str,
        version: Option<&str>,
        class: Option<&str>,
    ) -> Result<bool, AwsError> {
        let result = (self.client.describe_orderable_db_instance_options())
            .engine(engine)
            .set_engine_version(version.map(str::to_owned))
            .set_db_instance_class(class.map(str::to_owned))
            .max_records(20)
            .send()
            .await
            .map_err(|e| aws_error("DescribeOrderableDBInstanceOptions", e, None));
        let out = self.counted("DescribeOrderableDBInstanceOptions", result)?;
        Ok(!out.orderable_db_instance_options().is_empty())
    }
}
