//! The RDS adapter every kind shares: the client for an account and region, where its calls are
//! counted, tags, times, and the calls more than one kind makes. Each kind's own calls are in its
//! folder (`dbinstance/aws/`, `dbcluster/aws.rs`, ...), behind a trait of its own. AWS errors are
//! classified in `managed::aws_error`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use aws_sdk_rds::types::Tag as RdsTag;
use secrecy::SecretString;

use crate::aws_error::{AwsError, ErrorClass, aws_error};
use crate::lock;
use crate::rds_state::AwsIdentity;
use crate::silence::Heard;

pub mod cloudwatch;
mod data_api;
pub mod export;
pub mod health;
mod presign;
mod roles;
mod shared;
mod tagging;

use health::{Gate, Health, Healths};

/// spec.restoreFrom.restoreTime (RFC 3339) as AWS takes it; None: the latest restorable time.
pub fn restore_time(
    operation: &'static str,
    time: Option<&str>,
) -> Result<Option<aws_smithy_types::DateTime>, AwsError> {
    let Some(t) = time else {
        return Ok(None);
    };
    let format = aws_smithy_types::date_time::Format::DateTime;
    aws_smithy_types::DateTime::from_str(t, format)
        .map(Some)
        .map_err(|e| AwsError {
            operation,
            class: ErrorClass::InvalidInput,
            code: "InvalidRestoreTime".into(),
            message: format!("restoreTime {t:?} is not an RFC 3339 time: {e}"),
            wait: None,
            location: None,
        })
}

/// The account and region an adapter's calls are counted under (the metrics' `account` and
/// `region` labels): the account id once STS told it, empty before.
#[derive(Clone, Debug, Default)]
pub struct Place {
    account: Arc<std::sync::OnceLock<String>>,
    region: Arc<str>,
}

impl Place {
    pub fn new(account: &str, region: &str) -> Self {
        let place = Place {
            account: Arc::default(),
            region: region.into(),
        };
        if !account.is_empty() {
            let _ = place.account.set(account.to_owned());
        }
        place
    }

    /// The account id, once known.
    pub fn account(&self) -> &str {
        self.account.get().map(String::as_str).unwrap_or_default()
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    /// STS said which account this is.
    fn learned(&self, account: &str) {
        let _ = self.account.set(account.to_owned());
    }
}

/// (account, region, operation, outcome): the key calls are counted by.
pub type CallKey = (String, String, &'static str, &'static str);

/// Counts AWS API calls by account, region, operation and outcome; the source of the call metrics.
/// What the adapters report: their calls, counted, and their locations' health.
#[derive(Debug, Default)]
pub struct CallCounter {
    counts: Mutex<BTreeMap<CallKey, u64>>,
    healths: Healths,
}

impl CallCounter {
    /// One more call of `operation` in this place that ended with `outcome`.
    pub fn record(&self, place: &Place, operation: &'static str, outcome: &'static str) {
        let key = (
            place.account().to_owned(),
            place.region().to_owned(),
            operation,
            outcome,
        );
        *lock(&self.counts).entry(key).or_default() += 1;
    }

    /// Every location's health.
    pub fn healths(&self) -> &Healths {
        &self.healths
    }

    /// (account, region, operation, outcome) -> calls so far.
    pub fn snapshot(&self) -> BTreeMap<CallKey, u64> {
        lock(&self.counts).clone()
    }

    /// Calls of one operation, wherever and whatever their outcome.
    pub fn total(&self, operation: &str) -> u64 {
        self.snapshot()
            .iter()
            .filter(|((_, _, op, _), _)| *op == operation)
            .map(|(_, n)| n)
            .sum()
    }
}

/// The outcome label of an AWS call's result.
pub fn outcome<T>(result: &Result<T, AwsError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(e) if e.wait.is_some() => "refused",
        Err(e) if e.throttled() => "throttled",
        Err(e) => match e.class {
            ErrorClass::Retryable => "retryable_error",
            ErrorClass::NotFound => "not_found",
            ErrorClass::AlreadyExists => "already_exists",
            ErrorClass::InvalidInput => "invalid_input",
        },
    }
}

/// RDS's tags.
pub fn rds_tags(tags: &BTreeMap<String, String>) -> Vec<RdsTag> {
    (tags.iter())
        .map(|(k, v)| RdsTag::builder().key(k).value(v).build())
        .collect()
}

/// RDS's tags as a map (a tag without a key is dropped).
pub fn tag_map(tags: &[RdsTag]) -> BTreeMap<String, String> {
    (tags.iter())
        .filter_map(|t| {
            Some((
                t.key()?.to_owned(),
                t.value().unwrap_or_default().to_owned(),
            ))
        })
        .collect()
}

/// Part `n` of `source` when it is an ARN (`arn:PARTITION:SERVICE:REGION:ACCOUNT:...`: 3 is the
/// region, 4 the account); None for an identifier.
pub fn arn_part(source: &str, n: usize) -> Option<&str> {
    source
        .starts_with("arn:")
        .then(|| source.split(':').nth(n))
        .flatten()
}

/// An AWS time as RFC 3339.
pub fn rfc3339(t: &aws_smithy_types::DateTime) -> Option<String> {
    t.fmt(aws_smithy_types::date_time::Format::DateTime).ok()
}

/// The RDS API as the operator uses it.
#[derive(Clone)]
pub struct Rds {
    pub client: aws_sdk_rds::Client,
    pub secrets: aws_sdk_secretsmanager::Client,
    /// RDS's metrics and the databases' alarms (`cloudwatch.rs`).
    cloudwatch: aws_sdk_cloudwatch::Client,
    sts: aws_sdk_sts::Client,
    tagging: aws_sdk_resourcegroupstagging::Client,
    /// The location's credentials, which sign a PreSignedUrl (`presign`).
    credentials: Option<aws_credential_types::provider::SharedCredentialsProvider>,
    place: Place,
    calls: Arc<CallCounter>,
    health: Arc<Health>,
    /// An adapter of another region made from this location's (`in_region`): its calls pass
    /// this location's gate (they are held back with it) but say nothing of its health, which is
    /// this region's only: another region's silence must never read as this one's (it approves a
    /// failover), nor start this location's prober.
    foreign: bool,
}

/// How long a probe may wait for its answer: a small DescribeDBInstances answers in well under a
/// second when the location is up.
pub const PROBE_ATTEMPT: std::time::Duration = std::time::Duration::from_secs(5);

impl Rds {
    /// The adapter for the account and region of `config`, its calls counted in `calls`.
    /// The location's RDS, Secrets Manager and tagging clients pass its breaker (`health`), each
    /// call one attempt.
    pub fn new(config: &aws_config::SdkConfig, calls: Arc<CallCounter>) -> Self {
        let region = config.region().map(ToString::to_string).unwrap_or_default();
        let place = Place::new("", &region);
        let health = calls.healths().add(&place);
        // One attempt a call, and the SDK's adaptive client-side rate limiter, which slows the
        // location's calls once AWS throttles them: one limiter for the location's three
        // clients, spent by every call, the objects' retries included. The gate puts it in each
        // call's config (`health::Gate`), and starts it afresh when the location recovers.
        let once = aws_config::retry::RetryConfig::adaptive().with_max_attempts(1);
        let rds = (aws_sdk_rds::config::Builder::from(config))
            .interceptor(Gate(health.clone()))
            .retry_config(once.clone());
        let secrets = (aws_sdk_secretsmanager::config::Builder::from(config))
            .interceptor(Gate(health.clone()))
            .retry_config(once.clone());
        let cloudwatch = (aws_sdk_cloudwatch::config::Builder::from(config))
            .interceptor(Gate(health.clone()))
            .retry_config(once.clone());
        let tagging = (aws_sdk_resourcegroupstagging::config::Builder::from(config))
            .interceptor(Gate(health.clone()))
            .retry_config(once);
        Rds {
            cloudwatch: aws_sdk_cloudwatch::Client::from_conf(cloudwatch.build()),
            client: aws_sdk_rds::Client::from_conf(rds.build()),
            secrets: aws_sdk_secretsmanager::Client::from_conf(secrets.build()),
            sts: aws_sdk_sts::Client::new(config),
            tagging: aws_sdk_resourcegroupstagging::Client::from_conf(tagging.build()),
            credentials: config.credentials_provider(),
            place,
            calls,
            health,
            foreign: false,
        }
    }

    /// The location's health.
    pub fn health(&self) -> &Arc<Health> {
        &self.health
    }

    /// The account (STS GetCallerIdentity, through the credentials' chain of roles) and region
    /// the adapter works in.
    pub async fn identity(&self) -> Result<AwsIdentity, AwsError> {
        let result = (self.sts.get_caller_identity().send().await)
            .map_err(|e| aws_error("GetCallerIdentity", e, None));
        if let Ok(answer) = &result {
            self.place.learned(answer.account().unwrap_or_default());
        }
        let result = self.counted("GetCallerIdentity", result);
        let answer = result?;
        Ok(AwsIdentity {
            account: answer.account().unwrap_or_default().to_owned(),
            region: self.place.region().to_owned(),
            caller_arn: answer.arn().unwrap_or_default().to_owned(),
        })
    }

    /// Where the adapter's calls are counted.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The same account's adapter in another region, with the same credentials, its calls counted
    /// there.
    pub fn in_region(&self, region: &str) -> Rds {
        let config = (self.client.config().to_builder())
            .region(aws_sdk_rds::config::Region::new(region.to_owned()))
            .build();
        Rds {
            client: aws_sdk_rds::Client::from_conf(config),
            place: Place::new(self.place.account(), region),
            foreign: true,
            ..self.clone()
        }
    }

    /// The adapter of the region an ARN names (`source`: an ARN of another region of the account,
    /// with the same credentials); this one for an identifier or an ARN of its own region. A
    /// resource is described by its ARN only in its own region.
    pub fn for_region_of(&self, source: &str) -> Rds {
        match arn_part(source, 3) {
            Some(region) if region != self.place.region() => self.in_region(region),
            _ => self.clone(),
        }
    }

    /// RebootDBInstance (static parameter changes apply at the reboot).
    pub async fn reboot(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.reboot_db_instance())
            .db_instance_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("RebootDBInstance", e, None));
        let result = self.counted("RebootDBInstance", result);
        result.map(|_| ())
    }

    /// StopDBInstance: RDS keeps the instance's storage, endpoint and groups, and starts it by
    /// itself after 7 days (API_StopDBInstance.html).
    pub async fn stop_instance(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.stop_db_instance())
            .db_instance_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("StopDBInstance", e, None));
        let result = self.counted("StopDBInstance", result);
        result.map(|_| ())
    }

    /// StartDBInstance of a stopped instance (API_StartDBInstance.html).
    pub async fn start_instance(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.start_db_instance())
            .db_instance_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("StartDBInstance", e, None));
        let result = self.counted("StartDBInstance", result);
        result.map(|_| ())
    }

    /// StopDBCluster: RDS stops the cluster and its instances, keeps its storage and endpoints,
    /// and starts it by itself after 7 days (API_StopDBCluster.html).
    pub async fn stop_cluster(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.stop_db_cluster())
            .db_cluster_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("StopDBCluster", e, None));
        let result = self.counted("StopDBCluster", result);
        result.map(|_| ())
    }

    /// StartDBCluster of a stopped cluster (API_StartDBCluster.html).
    pub async fn start_cluster(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.start_db_cluster())
            .db_cluster_identifier(identifier)
            .send()
            .await
            .map_err(|e| aws_error("StartDBCluster", e, None));
        let result = self.counted("StartDBCluster", result);
        result.map(|_| ())
    }

    /// RDS rotates the master password it manages in Secrets Manager, at once: ModifyDBInstance
    /// (`resource` db) or ModifyDBCluster (cluster) with RotateMasterUserPassword, which requires
    /// ApplyImmediately (API_ModifyDBInstance.html, RotateMasterUserPassword).
    pub async fn rotate_master_password(
        &self,
        resource: &str,
        identifier: &str,
    ) -> Result<(), AwsError> {
        if resource == "cluster" {
            let result = (self.client.modify_db_cluster())
                .db_cluster_identifier(identifier)
                .rotate_master_user_password(true)
                .apply_immediately(true)
                .send()
                .await
                .map_err(|e| aws_error("ModifyDBCluster", e, None));
            let result = self.counted("ModifyDBCluster", result);
            return result.map(|_| ());
        }
        let result = (self.client.modify_db_instance())
            .db_instance_identifier(identifier)
            .rotate_master_user_password(true)
            .apply_immediately(true)
            .send()
            .await
            .map_err(|e| aws_error("ModifyDBInstance", e, None));
        let result = self.counted("ModifyDBInstance", result);
        result.map(|_| ())
    }

    /// The rotation rules of an RDS-managed master user secret (Secrets Manager DescribeSecret):
    /// (schedule expression, automatically after days, duration); None when rotation is off.
    pub async fn secret_rotation(
        &self,
        secret_arn: &str,
    ) -> Result<Option<(Option<String>, Option<i64>, Option<String>)>, AwsError> {
        let result = (self.secrets.describe_secret())
            .secret_id(secret_arn)
            .send()
            .await
            .map_err(|e| aws_error("DescribeSecret", e, None));
        let result = self.counted("DescribeSecret", result);
        let out = result?;
        let Some(rules) = out
            .rotation_rules()
            .filter(|_| out.rotation_enabled() == Some(true))
        else {
            return Ok(None);
        };
        Ok(Some((
            rules.schedule_expression().map(str::to_owned),
            rules.automatically_after_days(),
            rules.duration().map(str::to_owned),
        )))
    }

    /// Sets the rotation rules of an RDS-managed master user secret, without rotating it now
    /// (Secrets Manager RotateSecret, RotateImmediately false: "Rotating the master user password
    /// secret", rds-secrets-manager.html).
    pub async fn set_secret_rotation(
        &self,
        secret_arn: &str,
        (schedule, days, duration): (Option<&str>, Option<i64>, Option<&str>),
    ) -> Result<(), AwsError> {
        let rules = aws_sdk_secretsmanager::types::RotationRulesType::builder()
            .set_schedule_expression(schedule.map(str::to_owned))
            .set_automatically_after_days(days)
            .set_duration(duration.map(str::to_owned))
            .build();
        let result = (self.secrets.rotate_secret())
            .secret_id(secret_arn)
            .rotation_rules(rules)
            .rotate_immediately(false)
            .send()
            .await
            .map_err(|e| aws_error("RotateSecret", e, None));
        let result = self.counted("RotateSecret", result);
        result.map(|_| ())
    }

    /// The current password of an RDS-managed master user secret (Secrets Manager
    /// GetSecretValue; RDS stores `{"username": ..., "password": ...}`).
    pub async fn managed_password(&self, secret_arn: &str) -> Result<SecretString, AwsError> {
        let result = self
            .secrets
            .get_secret_value()
            .secret_id(secret_arn)
            .send()
            .await
            .map_err(|e| aws_error("GetSecretValue", e, None));
        let result = self.counted("GetSecretValue", result);
        let text = result?.secret_string().unwrap_or_default().to_owned();
        let parsed: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let password = parsed["password"].as_str().ok_or_else(|| AwsError {
            operation: "GetSecretValue",
            class: ErrorClass::InvalidInput,
            code: "UnexpectedSecretFormat".into(),
            message: format!("secret {secret_arn} has no \"password\" field"),
            wait: None,
            location: None,
        })?;
        Ok(SecretString::from(password.to_owned()))
    }

    pub fn calls(&self) -> &Arc<CallCounter> {
        &self.calls
    }

    /// [`Rds::count`], and a call its location did not answer (or throttled) names the location,
    /// whose breaker is open now: its object waits for the location's recovery.
    pub fn counted<T>(
        &self,
        operation: &'static str,
        mut result: Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.count(operation, &result);
        if let Err(e) = &mut result
            && e.wait.is_none()
            && e.unavailable()
            && !self.foreign
        {
            e.location = Some(self.health.id());
            // What was heard, then what follows from it: the location held back until it answers.
            if let Some(held) = self.health.holding() {
                e.message = format!("{}; {held}", e.message);
            }
        }
        result
    }

    /// Counts a call, and tells the location's health whether AWS answered it (a call the gate
    /// refused tells it nothing). Every call site goes through [`Rds::counted`]; the prober,
    /// whose result nobody waits on, counts directly.
    fn count<T>(&self, operation: &'static str, result: &Result<T, AwsError>) {
        let outcome = outcome(result);
        self.calls.record(&self.place, operation, outcome);
        if outcome != "refused" && !self.foreign {
            // Classified once: a throttle or no answer opens the breaker (`AwsError::unavailable`),
            // and only no answer makes a silence; a request never sent says nothing of AWS.
            let error = result.as_ref().err();
            let heard = error.map_or(Some(Heard::Answer), AwsError::heard);
            let unavailable = matches!(heard, Some(Heard::Throttled | Heard::Nothing));
            if self.health.record(!unavailable) {
                tokio::spawn(self.clone().probe());
            }
            if let Some(heard) = heard {
                self.health
                    .hear(heard, error.map_or("", |e| e.code.as_str()));
            }
        }
    }

    /// The location's prober, while its breaker is open: when each probe is due, one small
    /// DescribeDBInstances (through the gate, which lets it go as the probe), until an answer
    /// closes the breaker.
    async fn probe(self) {
        while let Some(due) = self.health.next_probe() {
            tokio::time::sleep_until(due.into()).await;
            if self.health.next_probe().is_none() {
                break; // an object's call closed it meanwhile
            }
            // A probe held open by a location that does not answer fails after PROBE_ATTEMPT,
            // not the calls' attempt timeout: the next probe, which may find AWS back, is not
            // put off by the last one's wait.
            let timeouts = aws_sdk_rds::config::timeout::TimeoutConfig::builder()
                .operation_attempt_timeout(PROBE_ATTEMPT)
                .operation_timeout(PROBE_ATTEMPT)
                .build();
            let result = (self.client.describe_db_instances())
                .max_records(20)
                .customize()
                .config_override(aws_sdk_rds::config::Builder::default().timeout_config(timeouts))
                .send()
                .await
                .map_err(|e| aws_error("DescribeDBInstances", e, None));
            self.count("DescribeDBInstances", &result);
        }
    }

    /// ListTagsForResource.
    pub async fn tags_of(&self, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let result = (self.client.list_tags_for_resource())
            .resource_name(arn)
            .send()
            .await
            .map_err(|e| aws_error("ListTagsForResource", e, None));
        let result = self.counted("ListTagsForResource", result);
        Ok(tag_map(result?.tag_list()))
    }

    /// One resource as `describe` reads it (None: RDS has none), with its tags
    /// (ListTagsForResource of its ARN). ListTagsForResource of a resource deleted since it was
    /// described answers no tags, not an error: one found untagged is described again, so one
    /// deleted meanwhile reads as absent and not as someone else's.
    pub async fn described_with_tags<T, F>(
        &self,
        describe: impl Fn() -> F,
        arn: impl Fn(&T) -> Option<&str>,
        tags: impl Fn(&mut T) -> &mut BTreeMap<String, String>,
    ) -> Result<Option<T>, AwsError>
    where
        F: Future<Output = Result<Option<T>, AwsError>>,
    {
        let Some(mut found) = describe().await? else {
            return Ok(None);
        };
        if let Some(arn) = arn(&found).map(str::to_owned) {
            *tags(&mut found) = self.tags_of(&arn).await?;
        }
        if tags(&mut found).is_empty() && describe().await?.is_none() {
            return Ok(None);
        }
        Ok(Some(found))
    }

    /// AddTagsToResource.
    pub async fn add_tags(
        &self,
        arn: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let tags = rds_tags(tags);
        let result = self
            .client
            .add_tags_to_resource()
            .resource_name(arn)
            .set_tags(Some(tags))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("AddTagsToResource", e, None));
        self.counted("AddTagsToResource", result)
    }

    /// RemoveTagsFromResource.
    pub async fn remove_tags(&self, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        let result = self
            .client
            .remove_tags_from_resource()
            .resource_name(arn)
            .set_tag_keys(Some(keys.to_vec()))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("RemoveTagsFromResource", e, None));
        self.counted("RemoveTagsFromResource", result)
    }
}

#[cfg(test)]
mod tests {
    use super::{CallCounter, Rds};
    use aws_sdk_rds::config::retry::{RetryMode, RetryPartition};
    use aws_smithy_runtime_api::box_error::BoxError;
    use aws_smithy_runtime_api::client::interceptors::Intercept;
    use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
    use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
    use aws_smithy_types::config_bag::ConfigBag;

    /// Records the retry partition each call is made in, and stops the call there (before it is
    /// signed or sent).
    #[derive(Debug, Default, Clone)]
    struct Capture(std::sync::Arc<std::sync::Mutex<Vec<RetryPartition>>>);

    impl Intercept for Capture {
        fn name(&self) -> &'static str {
            "Capture"
        }
        fn read_before_attempt(
            &self,
            _: &BeforeTransmitInterceptorContextRef<'_>,
            _: &RuntimeComponents,
            cfg: &mut ConfigBag,
        ) -> Result<(), BoxError> {
            let partition = cfg.load::<RetryPartition>().expect("a partition").clone();
            crate::lock(&self.0).push(partition);
            Err("captured".into())
        }
    }

    /// An SDK configuration in us-east-1, no credentials, no endpoint: nothing here is sent.
    fn config() -> aws_config::SdkConfig {
        aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new("us-east-1"))
            .build()
    }

    /// A location's clients make one attempt a call, and every call of the three is made in the
    /// location's retry partition (one adaptive rate limiter); another location has its own, and
    /// a recovery starts the location's afresh (`health`).
    #[tokio::test]
    async fn a_locations_clients_share_one_rate_limiter_and_make_one_attempt() {
        let config = config();
        let calls = std::sync::Arc::new(CallCounter::default());
        let (here, there) = (Rds::new(&config, calls.clone()), Rds::new(&config, calls));
        for retry in [
            here.client.config().retry_config(),
            here.secrets.config().retry_config(),
            here.tagging.config().retry_config(),
        ] {
            let retry = retry.expect("a retry config");
            assert_eq!(
                (retry.mode(), retry.max_attempts()),
                (RetryMode::Adaptive, 1)
            );
        }
        let capture = Capture::default();
        let rds = |rds: &Rds| {
            let config = rds
                .client
                .config()
                .to_builder()
                .interceptor(capture.clone());
            aws_sdk_rds::Client::from_conf(config.build())
        };
        let secrets = (here.secrets.config().to_builder()).interceptor(capture.clone());
        let secrets = aws_sdk_secretsmanager::Client::from_conf(secrets.build());
        let tagging = (here.tagging.config().to_builder()).interceptor(capture.clone());
        let tagging = aws_sdk_resourcegroupstagging::Client::from_conf(tagging.build());
        let _ = rds(&here).describe_db_instances().send().await;
        let _ = secrets.list_secrets().send().await;
        let _ = tagging.get_resources().send().await;
        let _ = rds(&there).describe_db_instances().send().await;
        let seen = crate::lock(&capture.0).clone();
        assert_eq!(seen.len(), 4, "each call reached the capture once");
        assert!(seen[0] == seen[1] && seen[1] == seen[2], "{seen:?}");
        assert_ne!(seen[0], seen[3], "another location's");
    }

    /// An ARN's region and account are read only from an ARN; the adapter for one of another
    /// region works there, and an identifier (even an automated snapshot's, rds:...) stays here.
    #[test]
    fn an_arn_names_its_region_and_account_and_is_described_there() {
        let arn = "arn:aws:rds:eu-west-1:111111111111:snapshot:coffee";
        assert_eq!(super::arn_part(arn, 3), Some("eu-west-1"));
        assert_eq!(super::arn_part(arn, 4), Some("111111111111"));
        assert_eq!(super::arn_part("rds:coffee-2026-12-01-03-00", 3), None);
        let config = config();
        let rds = Rds::new(&config, std::sync::Arc::new(CallCounter::default()));
        assert_eq!(rds.for_region_of(arn).place().region(), "eu-west-1");
        let here = "arn:aws:rds:us-east-1:111111111111:snapshot:coffee";
        for source in [here, "rds:coffee-2026-12-01-03-00", "coffee"] {
            assert_eq!(rds.for_region_of(source).place().region(), "us-east-1");
        }
    }

    /// An unanswered call names its location, whose breaker it opened, and says when the location
    /// is probed next; an answer, a refusal or a never-sent request names none; and a call made
    /// from this location's adapter in another region says nothing of this location's health
    /// (another region's silence must never read as this one's: it approves a failover).
    #[tokio::test]
    async fn an_unanswered_call_names_its_location_and_another_regions_says_nothing_of_it() {
        use crate::aws_error::{AwsError, ErrorClass};
        let config = config();
        let rds = Rds::new(&config, std::sync::Arc::new(CallCounter::default()));
        let error = |code: &str, class| AwsError {
            operation: "ModifyDBInstance",
            class,
            code: code.into(),
            message: "connection closed before message completed".into(),
            wait: None,
            location: None,
        };
        // Another region's: counted, but this location's breaker and silence are untouched.
        let elsewhere = rds.in_region("eu-west-1");
        let failed = elsewhere.counted::<()>(
            "ModifyDBInstance",
            Err(error("NoResponse", ErrorClass::Retryable)),
        );
        assert_eq!(failed.unwrap_err().location, None);
        assert_eq!(rds.health().state(), "closed");
        assert!(rds.health().unanswered().is_none());
        // Not news of AWS: an answer, a refusal, a request never sent.
        for (code, class) in [
            ("InvalidParameterValue", ErrorClass::InvalidInput),
            ("InvalidDBInstanceState", ErrorClass::Retryable),
            ("RequestNotSent", ErrorClass::Retryable),
        ] {
            let e = rds.counted::<()>("ModifyDBInstance", Err(error(code, class)));
            assert_eq!(e.unwrap_err().location, None, "{code}");
        }
        assert_eq!(rds.health().state(), "closed");
        // No answer here: the location's breaker opens, and the error names it and its probe.
        let e = rds
            .counted::<()>(
                "ModifyDBInstance",
                Err(error("NoResponse", ErrorClass::Retryable)),
            )
            .unwrap_err();
        assert_eq!(e.location, Some(rds.health().id()));
        assert_eq!(rds.health().state(), "open");
        assert!(
            e.message
                .starts_with("connection closed before message completed; "),
            "{}",
            e.message
        );
        assert!(
            e.message
                .contains("no call is made there until it answers again"),
            "{}",
            e.message
        );
        assert!(rds.health().unanswered().is_some(), "a silence began");
    }
}
