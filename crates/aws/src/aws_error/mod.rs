//! The AWS error classes every kind's SDK calls share: an RDS error, classified once, with AWS's
//! code and its message (passwords scrubbed).

use aws_sdk_rds::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use secrecy::{ExposeSecret, SecretString};

use crate::breaker::Refused;

pub mod table;

pub use table::Meaning;

/// How an AWS error should be handled: decided once, here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// Throttling, server errors, network trouble, an instance busy in another operation: try again soon.
    Retryable,
    /// The instance does not exist.
    NotFound,
    /// An instance with this identifier exists already.
    AlreadyExists,
    /// AWS refuses the request as asked (invalid parameter, quota, missing subnet group...): the spec
    /// must change before a retry can succeed, so retry with backoff.
    InvalidInput,
}

impl ErrorClass {
    /// Stable, low-cardinality label for metrics and condition reasons.
    pub fn label(self) -> &'static str {
        match self {
            ErrorClass::Retryable => "Retryable",
            ErrorClass::NotFound => "NotFound",
            ErrorClass::AlreadyExists => "AlreadyExists",
            ErrorClass::InvalidInput => "InvalidInput",
        }
    }
}

/// An error from an RDS call, classified, with AWS's code and message (passwords scrubbed).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{operation}: {code}: {message}")]
pub struct AwsError {
    pub operation: &'static str,
    pub class: ErrorClass,
    pub code: String,
    pub message: String,
    /// Set when no call was sent: the location's breaker is open (`crate::breaker`), and the
    /// object waits for its probe.
    pub wait: Option<Box<Refused>>,
    /// Set when the call was sent and its location did not answer it (or throttled it): the id
    /// of the location, whose breaker that opened (`rds::Rds::counted`). The object then waits
    /// for the location's recovery, as the objects the breaker refused do, not on a backoff of
    /// its own: an outage ends for every object at once.
    pub location: Option<u64>,
}

impl AwsError {
    /// What its code means as the answer to its operation (`table`); None for a code the table
    /// does not know.
    pub fn meaning(&self) -> Option<Meaning> {
        table::meaning(self.operation, &self.code)
    }

    /// Whether the resource the call is about is not there (the table's Gone): a read finds
    /// nothing, a deletion is done. The one way to ask; no code is compared outside the table.
    pub fn gone(&self) -> bool {
        self.meaning() == Some(Meaning::Gone)
    }

    /// Whether the resource the call would make is there already (the table's Exists).
    pub fn exists(&self) -> bool {
        self.meaning() == Some(Meaning::Exists)
    }

    /// Whether only a change of the spec can help: Stalled, not sent again until it changes.
    pub fn needs_spec_change(&self) -> bool {
        self.class == ErrorClass::InvalidInput && matches!(self.meaning(), Some(Meaning::Spec(_)))
    }

    /// Whether AWS throttled the call (the table's throttling codes, whichever service answers).
    pub fn throttled(&self) -> bool {
        self.class == ErrorClass::Retryable && self.meaning() == Some(Meaning::Throttled)
    }

    /// Whether the resource is in another operation (an answer: AWS is up).
    pub fn busy(&self) -> bool {
        self.class == ErrorClass::Retryable && self.meaning() == Some(Meaning::Busy)
    }

    /// Whether AWS throttled the call or did not answer it (a 5xx, no response): what opens the
    /// location's breaker. An instance busy in another operation is an answer, and a request that
    /// was never sent (no credentials) says nothing of AWS.
    pub fn unavailable(&self) -> bool {
        self.class == ErrorClass::Retryable && !self.busy() && self.code != "RequestNotSent"
    }

    /// What this error says of its location: throttled (AWS is up), nothing (no answer, a 5xx),
    /// or an answer (anything AWS decided, a busy resource included); None for a request that was
    /// never sent, which says nothing of AWS.
    pub fn heard(&self) -> Option<crate::silence::Heard> {
        use crate::silence::Heard;
        match self.unavailable() {
            _ if self.code == "RequestNotSent" => None,
            true if self.throttled() => Some(Heard::Throttled),
            true => Some(Heard::Nothing),
            false => Some(Heard::Answer),
        }
    }
}

/// Classifies an AWS error code as the answer to `operation` (no code: the request never got an
/// AWS answer).
pub fn classify(operation: &str, code: Option<&str>, http_status: Option<u16>) -> ErrorClass {
    let Some(code) = code else {
        return ErrorClass::Retryable;
    };
    match table::meaning(operation, code) {
        Some(meaning) => meaning.class(),
        // A code the table does not know: a 5xx is AWS's failure, anything else its refusal.
        None if http_status.is_some_and(|s| s >= 500) => ErrorClass::Retryable,
        None => ErrorClass::InvalidInput,
    }
}

pub fn aws_error<E>(
    operation: &'static str,
    err: SdkError<E, HttpResponse>,
    secret: Option<&SecretString>,
) -> AwsError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    if let Some(refused) = refused(&err) {
        return AwsError {
            operation,
            class: ErrorClass::Retryable,
            code: "LocationUnavailable".to_owned(),
            message: refused.to_string(),
            wait: Some(Box::new(refused)),
            location: None,
        };
    }
    let http_status = err.raw_response().map(|r| r.status().as_u16());
    let code = err.code().map(str::to_owned);
    let raw = match (err.message(), &code) {
        (Some(m), _) => m.to_owned(),
        (None, Some(_)) => String::new(),
        (None, None) => describe_transport_error(&err),
    };
    let message = scrub(&raw, secret);
    let (class, message) = match &code {
        None => (ErrorClass::Retryable, message),
        Some(c) => match table::meaning(operation, c) {
            // What to change, where AWS's message may not say it.
            Some(Meaning::Spec(Some(field))) if !message.contains(field) => {
                (ErrorClass::InvalidInput, format!("{message} ({field})"))
            }
            Some(meaning) => (meaning.class(), message),
            None => (classify(operation, Some(c), http_status), message),
        },
    };
    AwsError {
        operation,
        class,
        code: code.unwrap_or_else(|| no_answer(&err).to_owned()),
        message,
        wait: None,
        location: None,
    }
}

/// The code of an error that carries none. `NoResponse` whenever the request may have left: a
/// timeout, a connection refused, reset or closed before the answer (hyper's "connection closed
/// before message completed" is a dispatch failure of kind "other", transient), or any failure of
/// the connection the SDK cannot name. A location that answers so is unavailable, and a mutating
/// call so answered may have been taken: it is decided again from a fresh read, never re-sent
/// blindly. `RequestNotSent` only when the request provably never left: it could not be built,
/// the SDK refused it as a user error, or its credentials could not be had (the identity is
/// resolved before the request is sent); that says nothing of AWS.
fn no_answer<E: std::error::Error + 'static, R: std::fmt::Debug>(
    err: &SdkError<E, R>,
) -> &'static str {
    match err {
        SdkError::ConstructionFailure(_) => "RequestNotSent",
        SdkError::DispatchFailure(d) if d.is_user() || credentials_failed(err) => "RequestNotSent",
        _ => "NoResponse",
    }
}

/// Whether the call failed because its credentials could not be loaded (before it was sent).
fn credentials_failed<E: std::error::Error + 'static, R: std::fmt::Debug>(
    err: &SdkError<E, R>,
) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if s.is::<aws_credential_types::provider::error::CredentialsError>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The breaker's refusal, when the call was not sent for it.
fn refused<E: std::error::Error + 'static, R: std::fmt::Debug>(
    err: &SdkError<E, R>,
) -> Option<Refused> {
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if let Some(refused) = s.downcast_ref::<Refused>() {
            return Some(refused.clone());
        }
        source = s.source();
    }
    None
}

fn describe_transport_error<E: std::error::Error + 'static, R: std::fmt::Debug>(
    err: &SdkError<E, R>,
) -> String {
    let mut text = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Removes a secret's value from a message that is about to be shown.
pub fn scrub(message: &str, secret: Option<&SecretString>) -> String {
    match secret.map(|s| s.expose_secret()) {
        Some(s) if !s.is_empty() => message.replace(s, "****"),
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each call site that finds its resource absent (a read: None; a deletion: done), or
    /// already made, asks: `gone()` and `exists()`, from the table, for every code it was written
    /// against (both spellings where RDS has two). A code of another resource is not gone.
    #[test]
    fn what_the_call_sites_take_as_gone_and_as_there() {
        let error = |operation: &'static str, code: &str| AwsError {
            operation,
            class: classify(operation, Some(code), Some(404)),
            code: code.into(),
            message: String::new(),
            wait: None,
            location: None,
        };
        for (operation, code) in [
            ("DeleteDBSubnetGroup", "DBSubnetGroupNotFoundFault"),
            ("DescribeDBSubnetGroups", "DBSubnetGroupNotFoundFault"),
            ("DeleteOptionGroup", "OptionGroupNotFoundFault"),
            ("DescribeOptionGroups", "OptionGroupNotFoundFault"),
            ("DeleteDBClusterEndpoint", "DBClusterEndpointNotFoundFault"),
            (
                "DescribeDBClusterEndpoints",
                "DBClusterEndpointNotFoundFault",
            ),
            (
                "DescribeDBClusterSnapshots",
                "DBClusterSnapshotNotFoundFault",
            ),
            ("DeleteDBClusterSnapshot", "DBClusterSnapshotNotFoundFault"),
            ("DescribeDBSnapshots", "DBSnapshotNotFound"),
            ("DescribeDBSnapshots", "DBSnapshotNotFoundFault"),
            ("DeleteDBSnapshot", "DBSnapshotNotFound"),
            ("DescribeIntegrations", "IntegrationNotFoundFault"),
            ("DeleteIntegration", "IntegrationNotFoundFault"),
            ("DescribeDBShardGroups", "DBShardGroupNotFound"),
            ("DeleteDBShardGroup", "DBShardGroupNotFound"),
            ("DescribeGlobalClusters", "GlobalClusterNotFoundFault"),
            ("DeleteGlobalCluster", "GlobalClusterNotFoundFault"),
            ("DescribeDBParameterGroups", "DBParameterGroupNotFound"),
            ("DeleteDBParameterGroup", "DBParameterGroupNotFound"),
            (
                "DescribeDBClusterParameterGroups",
                "DBParameterGroupNotFound",
            ),
            ("DeleteDBClusterParameterGroup", "DBParameterGroupNotFound"),
            ("DescribeDBProxies", "DBProxyNotFoundFault"),
            ("DeleteDBProxy", "DBProxyNotFoundFault"),
            ("DeleteDBProxyEndpoint", "DBProxyEndpointNotFoundFault"),
            ("GetSecretValue", "ResourceNotFoundException"),
            ("DeleteSecret", "ResourceNotFoundException"),
            (
                "StopDBInstanceAutomatedBackupsReplication",
                "DBInstanceAutomatedBackupNotFound",
            ),
            ("DescribeDBInstances", "DBInstanceNotFound"),
            ("DescribeDBInstances", "DBInstanceNotFoundFault"),
            ("DeleteEventSubscription", "SubscriptionNotFound"),
            ("DescribeEventSubscriptions", "SubscriptionNotFound"),
            ("DescribeExportTasks", "ExportTaskNotFound"),
            ("RemoveRoleFromDBInstance", "DBInstanceRoleNotFound"),
            ("RemoveRoleFromDBCluster", "DBClusterRoleNotFound"),
        ] {
            assert!(error(operation, code).gone(), "{operation}: {code}");
        }
        assert!(error("StartExportTask", "ExportTaskAlreadyExists").exists());
        // Another resource the call names is not the call's own, and not gone.
        assert!(!error("CreateDBInstance", "DBSubnetGroupNotFoundFault").gone());
        let stop = "StopDBInstanceAutomatedBackupsReplication";
        assert!(
            !error(stop, "DBInstanceNotFound").gone(),
            "the instance, not its replication"
        );
        assert!(!error("DescribeDBInstances", "DBSnapshotNotFound").gone());
    }

    #[test]
    fn what_opens_a_locations_breaker() {
        let error = |code: &str, status: Option<u16>| AwsError {
            operation: "ModifyDBInstance",
            // An error with no code (no answer came) is classified as such.
            class: classify("ModifyDBInstance", status.map(|_| code), status),
            code: code.into(),
            message: String::new(),
            wait: None,
            location: None,
        };
        for (code, status, opens) in [
            ("Throttling", Some(400), true),
            ("RequestLimitExceeded", Some(400), true),
            ("ServiceUnavailable", Some(503), true),
            ("InternalFailure", Some(500), true),
            ("NoResponse", None, true),
            // Answers: the instance is busy, the request is wrong, it is not there.
            ("InvalidDBInstanceState", Some(400), false),
            ("InvalidParameterValue", Some(400), false),
            ("DBInstanceNotFound", Some(404), false),
            // Never sent (its credentials could not be loaded): nothing said of AWS.
            ("RequestNotSent", None, false),
        ] {
            assert_eq!(error(code, status).unavailable(), opens, "{code}");
        }
    }

    /// Every way a call can go without an answer, as the SDK reports it -> the code it gets and
    /// what it says of its location: anything that may have left is silence (it opens the
    /// breaker and counts toward a failover's evidence); only a request that provably never left
    /// says nothing. Before, a connection closed before the answer (hyper's IncompleteMessage, a
    /// dispatch failure of kind "other") was `RequestNotSent`: no breaker, no silence.
    #[test]
    fn every_kind_of_network_failure_is_silence_and_only_a_request_never_built_is_not() {
        use crate::silence::Heard;
        use aws_sdk_rds::operation::describe_db_instances::DescribeDBInstancesError;
        use aws_smithy_runtime_api::client::result::ConnectorError;
        use aws_smithy_types::retry::ErrorKind;
        type Sdk = SdkError<DescribeDBInstancesError, HttpResponse>;
        let io = |kind: std::io::ErrorKind| -> aws_smithy_runtime_api::box_error::BoxError {
            Box::new(std::io::Error::new(kind, format!("{kind:?}")))
        };
        let credentials = || -> aws_smithy_runtime_api::box_error::BoxError {
            Box::new(
                aws_credential_types::provider::error::CredentialsError::not_loaded(
                    "no credentials in the chain",
                ),
            )
        };
        let rows: Vec<(&str, Sdk, &str, Option<Heard>)> = vec![
            (
                "connection reset",
                SdkError::dispatch_failure(ConnectorError::io(io(
                    std::io::ErrorKind::ConnectionReset,
                ))),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "connection refused",
                SdkError::dispatch_failure(ConnectorError::io(io(
                    std::io::ErrorKind::ConnectionRefused,
                ))),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "connection closed before the answer (hyper IncompleteMessage)",
                SdkError::dispatch_failure(ConnectorError::other(
                    "connection closed before message completed".into(),
                    Some(ErrorKind::TransientError),
                )),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "a connector failure the SDK cannot name",
                SdkError::dispatch_failure(ConnectorError::other("unknown".into(), None)),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "connect timeout",
                SdkError::dispatch_failure(ConnectorError::timeout(io(
                    std::io::ErrorKind::TimedOut,
                ))),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "held open past the attempt timeout",
                SdkError::timeout_error(io(std::io::ErrorKind::TimedOut)),
                "NoResponse",
                Some(Heard::Nothing),
            ),
            (
                "credentials that could not be loaded: never sent",
                SdkError::dispatch_failure(ConnectorError::other(credentials(), None)),
                "RequestNotSent",
                None,
            ),
            (
                "the SDK refused the request as built: never sent",
                SdkError::dispatch_failure(ConnectorError::user("bad header".into())),
                "RequestNotSent",
                None,
            ),
            (
                "a request that could not be built: never sent",
                SdkError::construction_failure("no region"),
                "RequestNotSent",
                None,
            ),
        ];
        for (case, err, code, heard) in rows {
            let e = aws_error("DescribeDBInstances", err, None);
            assert_eq!((e.code.as_str(), e.heard()), (code, heard), "{case}");
            assert_eq!(
                e.unavailable(),
                heard.is_some(),
                "{case}: opens the breaker"
            );
            assert_eq!(e.class, ErrorClass::Retryable, "{case}");
        }
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify("ModifyDBInstance", Some("DBInstanceNotFound"), None),
            ErrorClass::NotFound
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("DBInstanceAlreadyExists"), None),
            ErrorClass::AlreadyExists
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("Throttling"), None),
            ErrorClass::Retryable
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("InvalidDBInstanceState"), None),
            ErrorClass::Retryable
        );
        assert_eq!(
            classify("ModifyDBInstance", None, None),
            ErrorClass::Retryable
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("InternalFailure"), None),
            ErrorClass::Retryable
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("InvalidParameterValue"), None),
            ErrorClass::InvalidInput
        );
        assert_eq!(
            classify(
                "ModifyDBInstance",
                Some("InvalidParameterCombination"),
                None
            ),
            ErrorClass::InvalidInput
        );
        // A group the instance names, which another object may yet make.
        assert_eq!(
            classify("ModifyDBInstance", Some("DBSubnetGroupNotFoundFault"), None),
            ErrorClass::InvalidInput
        );
        // A code the table does not know: AWS's refusal, or its failure (a 5xx).
        assert_eq!(
            classify("ModifyDBInstance", Some("NoSuchCode"), Some(400)),
            ErrorClass::InvalidInput
        );
        assert_eq!(
            classify("ModifyDBInstance", Some("NoSuchCode"), Some(503)),
            ErrorClass::Retryable
        );
    }

    #[test]
    fn scrub_hides_the_secret() {
        let secret = SecretString::from("hunter2-long");
        assert_eq!(
            scrub("password hunter2-long is too weak", Some(&secret)),
            "password **** is too weak"
        );
        assert_eq!(scrub("nothing here", None), "nothing here");
    }
}
