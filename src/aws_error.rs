//! The AWS error classes every kind's SDK calls share: an RDS error, classified once, with AWS's
//! code and its message (passwords scrubbed).

use aws_sdk_rds::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use secrecy::{ExposeSecret, SecretString};

use crate::breaker::Refused;

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
}

impl AwsError {
    /// Whether AWS throttled the call or did not answer it (a 5xx, no response): what opens the
    /// location's breaker. An instance busy in another operation is an answer, and a request that
    /// was never sent (no credentials) says nothing of AWS.
    pub fn unavailable(&self) -> bool {
        let code = self.code.as_str();
        self.class == ErrorClass::Retryable && !BUSY.contains(&code) && code != "RequestNotSent"
    }

    /// What this error says of its location: throttled (AWS is up), nothing (no answer, a 5xx),
    /// or an answer (anything AWS decided, a busy resource included); None for a request that was
    /// never sent, which says nothing of AWS.
    pub fn heard(&self) -> Option<crate::silence::Heard> {
        use crate::silence::Heard;
        match self.unavailable() {
            _ if self.code == "RequestNotSent" => None,
            true if THROTTLING.contains(&self.code.as_str()) => Some(Heard::Throttled),
            true => Some(Heard::Nothing),
            false => Some(Heard::Answer),
        }
    }
}

pub(crate) const THROTTLING: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "PriorRequestNotComplete",
];
const BUSY: &[&str] = &[
    "InvalidDBInstanceState",
    "InvalidDBInstanceStateFault",
    "InvalidDBClusterStateFault",
    "InvalidBlueGreenDeploymentStateFault",
];
const NOT_FOUND: &[&str] = &[
    "DBInstanceNotFound",
    "DBInstanceNotFoundFault",
    "DBClusterNotFoundFault",
    "BlueGreenDeploymentNotFoundFault",
];
const ALREADY_EXISTS: &[&str] = &[
    "DBInstanceAlreadyExists",
    "DBInstanceAlreadyExistsFault",
    "DBClusterAlreadyExistsFault",
];

/// Classifies an AWS error code (None: the request never got an AWS answer).
pub fn classify(code: Option<&str>, http_status: Option<u16>) -> ErrorClass {
    match code {
        Some(c) if NOT_FOUND.contains(&c) => ErrorClass::NotFound,
        Some(c) if ALREADY_EXISTS.contains(&c) => ErrorClass::AlreadyExists,
        Some(c) if THROTTLING.contains(&c) || BUSY.contains(&c) => ErrorClass::Retryable,
        _ if http_status.is_some_and(|s| s >= 500) => ErrorClass::Retryable,
        Some(c) if c.starts_with("InternalFailure") || c == "ServiceUnavailable" => {
            ErrorClass::Retryable
        }
        Some(_) => ErrorClass::InvalidInput,
        None => ErrorClass::Retryable,
    }
}

pub(crate) fn aws_error<E>(
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
        };
    }
    let http_status = err.raw_response().map(|r| r.status().as_u16());
    let code = err.code().map(str::to_owned);
    let raw = match (err.message(), &code) {
        (Some(m), _) => m.to_owned(),
        (None, Some(_)) => String::new(),
        (None, None) => describe_transport_error(&err),
    };
    let mut class = classify(code.as_deref(), http_status);
    let mut message = scrub(&raw, secret);
    if let Some(field) = (code.as_deref()).and_then(|c| refused_as_busy(c, &message)) {
        class = ErrorClass::InvalidInput;
        message = format!("{message} ({field})");
    }
    AwsError {
        operation,
        class,
        code: code.unwrap_or_else(|| no_answer(&err).to_owned()),
        message,
        wait: None,
    }
}

/// Refusals RDS answers with a code that otherwise means "busy, try again"
/// (InvalidDBInstanceState): its message tells them apart, and names what must change; no wait
/// helps them.
const REFUSED_AS_BUSY: &[(&str, &str)] = &[
    // CreateDBInstanceReadReplica of a source without automated backups.
    (
        "Automated backups are not enabled",
        "the source DB instance's backupRetentionPeriod must be above 0",
    ),
    // RegisterDBProxyTargets of a database of another engine family.
    (
        "is not of engine family",
        "the target's engine must be of the DBProxy's engineFamily",
    ),
];

/// What must change, when a busy code's message says the request can never succeed as asked.
pub fn refused_as_busy(code: &str, message: &str) -> Option<&'static str> {
    if !BUSY.contains(&code) {
        return None;
    }
    (REFUSED_AS_BUSY.iter())
        .find(|(words, _)| message.contains(words))
        .map(|(_, field)| *field)
}

/// The code of an error that carries none: `NoResponse` when the request went out and no answer
/// came (a timeout, a broken connection), `RequestNotSent` when it never left (its credentials
/// could not be loaded, say): only the first says that AWS is unavailable.
fn no_answer<E, R>(err: &SdkError<E, R>) -> &'static str {
    match err {
        SdkError::DispatchFailure(d) if !d.is_io() && !d.is_timeout() => "RequestNotSent",
        SdkError::ConstructionFailure(_) => "RequestNotSent",
        _ => "NoResponse",
    }
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

    #[test]
    fn what_opens_a_locations_breaker() {
        let error = |code: &str, status: Option<u16>| AwsError {
            operation: "ModifyDBInstance",
            // An error with no code (no answer came) is classified as such.
            class: classify(status.map(|_| code), status),
            code: code.into(),
            message: String::new(),
            wait: None,
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

    #[test]
    fn a_busy_code_whose_message_says_the_spec_is_wrong_names_the_field() {
        let backups = "Automated backups are not enabled for this database instance. To enable \
                       automated backups, use ModifyDBInstance to set the backup retention period \
                       to a non-zero value.";
        let family = "DB instance coffee is not of engine family POSTGRESQL.";
        for (code, message, field) in [
            (
                "InvalidDBInstanceState",
                backups,
                Some("the source DB instance's backupRetentionPeriod must be above 0"),
            ),
            (
                "InvalidDBInstanceStateFault",
                family,
                Some("the target's engine must be of the DBProxy's engineFamily"),
            ),
            // The same code for a busy instance is still busy.
            (
                "InvalidDBInstanceState",
                "Instance coffee is not in available state.",
                None,
            ),
            // Only busy codes are read so.
            ("InvalidParameterValue", backups, None),
        ] {
            assert_eq!(refused_as_busy(code, message), field, "{code}: {message}");
        }
    }

    #[test]
    fn classification() {
        assert_eq!(
            classify(Some("DBInstanceNotFound"), None),
            ErrorClass::NotFound
        );
        assert_eq!(
            classify(Some("DBInstanceAlreadyExists"), None),
            ErrorClass::AlreadyExists
        );
        assert_eq!(classify(Some("Throttling"), None), ErrorClass::Retryable);
        assert_eq!(
            classify(Some("InvalidDBInstanceState"), None),
            ErrorClass::Retryable
        );
        assert_eq!(classify(None, None), ErrorClass::Retryable);
        assert_eq!(
            classify(Some("InternalFailure"), None),
            ErrorClass::Retryable
        );
        assert_eq!(
            classify(Some("InvalidParameterValue"), None),
            ErrorClass::InvalidInput
        );
        assert_eq!(
            classify(Some("InvalidParameterCombination"), None),
            ErrorClass::InvalidInput
        );
        assert_eq!(
            classify(Some("DBSubnetGroupNotFoundFault"), None),
            ErrorClass::InvalidInput
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
