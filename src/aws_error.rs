//! The AWS error classes every kind's SDK calls share: an RDS error, classified once, with AWS's
//! code and its message (passwords scrubbed).

use aws_sdk_rds::error::{ProvideErrorMetadata, SdkError};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use secrecy::{ExposeSecret, SecretString};

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
    let http_status = err.raw_response().map(|r| r.status().as_u16());
    let code = err.code().map(str::to_owned);
    let raw = match (err.message(), &code) {
        (Some(m), _) => m.to_owned(),
        (None, Some(_)) => String::new(),
        (None, None) => describe_transport_error(&err),
    };
    AwsError {
        operation,
        class: classify(code.as_deref(), http_status),
        code: code.unwrap_or_else(|| "NoResponse".to_owned()),
        message: scrub(&raw, secret),
    }
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
