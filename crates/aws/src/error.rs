//! What can go wrong in a reconcile, classified once: each variant names what failed, carries a
//! stable metric label, and says what the user is shown.

use crate::aws_error::{AwsError, ErrorClass};

/// What went wrong in a reconcile.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Aws(#[from] AwsError),
    #[error("kubernetes API, {action}: {source}")]
    Kube {
        action: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("object has no {0}")]
    MissingObjectKey(&'static str),
    /// Where the object lives was refused (the placement rules): no AWS call was made.
    #[error("{message}")]
    Placement {
        reason: &'static str,
        message: String,
    },
    /// The account cannot be reached: its credentials or its chain of roles failed.
    #[error("cannot reach AWS account {account}: {source}")]
    Account {
        account: String,
        #[source]
        source: AwsError,
    },
    /// With `--shards`: another replica leads the object's (account, region) pair.
    #[error("another replica leads this object's shard")]
    Elsewhere,
    /// A database refused a login or a statement (a DBUser's SQL): the engine's message, which
    /// never holds a password.
    #[error("{message}")]
    Database {
        reason: &'static str,
        message: String,
    },
    /// The namespace spent its budget of direct RDS reads (`--namespace-read-budget`).
    #[error("the namespace's budget of {per_minute} direct RDS reads a minute is spent")]
    ReadBudget {
        per_minute: u32,
        wait: std::time::Duration,
    },
}

impl Error {
    /// Stable, low-cardinality label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Aws(e) => e.class.label(),
            Error::Kube { .. } => "Kubernetes",
            Error::MissingObjectKey(_) => "MissingObjectKey",
            Error::ReadBudget { .. } => "ReadBudget",
            Error::Placement { reason, .. } | Error::Database { reason, .. } => reason,
            Error::Account { .. } => "AccountUnavailable",
            Error::Elsewhere => "Elsewhere",
        }
    }

    /// How long to wait before trying again, when the error says (a spent read budget, a
    /// location whose breaker is open).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            Error::ReadBudget { wait, .. } => Some(*wait),
            // Its location's recovery wakes the object sooner.
            Error::Aws(AwsError { wait: Some(_), .. }) => Some(crate::breaker::REFUSED_WAIT),
            // Looked at again in case this replica takes the shard over.
            Error::Elsewhere => Some(std::time::Duration::from_secs(5)),
            _ => None,
        }
    }

    /// Whether only a spec change can help: AWS refused a parameter of the request. The operator
    /// stops retrying until the spec changes (the watch wakes it then).
    pub fn terminal(&self) -> bool {
        match self {
            // The error table (`aws_error::table`) says whether only a spec change can help.
            Error::Aws(e) => e.needs_spec_change(),
            _ => false,
        }
    }

    /// The condition reason and message shown to the user, for errors the user can act on.
    pub fn user_facing(&self) -> Option<(String, String)> {
        match self {
            Error::Aws(e) => {
                let reason = match e.class {
                    ErrorClass::InvalidInput if self.terminal() => "InvalidParameter",
                    ErrorClass::InvalidInput => "InvalidRequest",
                    // In another operation: AWS answered, the resource is busy.
                    ErrorClass::Retryable if e.busy() => "ResourceBusy",
                    ErrorClass::Retryable => "AWSUnavailable",
                    ErrorClass::AlreadyExists => "AlreadyExists",
                    ErrorClass::NotFound => "NotFound",
                };
                Some((
                    reason.into(),
                    format!("{} failed: {}: {}", e.operation, e.code, e.message),
                ))
            }
            Error::ReadBudget { wait, .. } => Some((
                "ReadBudgetSpent".into(),
                format!(
                    "{self} (the operator's --namespace-read-budget, so one namespace cannot spend the AWS \
                     account's RDS API rate); reading again in {} s",
                    wait.as_secs().max(1)
                ),
            )),
            Error::Placement { reason, message } | Error::Database { reason, message } => {
                Some((reason.to_string(), message.clone()))
            }
            Error::Account { account, source } => Some((
                "AccountUnavailable".into(),
                format!(
                    "cannot reach AWS account {account}: {} failed: {}: {}",
                    source.operation, source.code, source.message
                ),
            )),
            // The operator's own permissions refused a write: what a platform admin can grant.
            // The API server's message names the verb, the resource and the namespace, no value.
            Error::Kube {
                action,
                source: kube::Error::Api(status),
            } if status.is_forbidden() => Some((
                "KubernetesForbidden".into(),
                // An admission webhook's message is its own free text: kept short.
                format!(
                    "{action}: {}",
                    status.message.chars().take(300).collect::<String>()
                ),
            )),
            _ => None,
        }
    }
}

impl Error {
    /// The account (an AWSAccount's name; None: the operator's own credentials) cannot be reached.
    pub fn account(name: Option<&str>, source: AwsError) -> Error {
        Error::Account {
            account: name.unwrap_or("the operator's own").to_owned(),
            source,
        }
    }
}

/// Wraps a Kubernetes API error with what was being done.
pub fn kube_err(action: &'static str) -> impl FnOnce(kube::Error) -> Error {
    move |source| Error::Kube { action, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kube(code: u16, reason: &str) -> Error {
        let status = kube::core::Status::failure(
            "secrets is forbidden: User \"op\" cannot create resource \"secrets\"",
            reason,
        )
        .with_code(code);
        Error::Kube {
            action: "create Secret",
            source: kube::Error::Api(Box::new(status)),
        }
    }

    /// The operator's own permissions refusing a write are shown (a platform admin can grant
    /// them); other API server answers (a conflict, an outage) are only retried.
    #[test]
    fn a_forbidden_write_is_shown_and_other_api_errors_are_not() {
        let (reason, message) = kube(403, "Forbidden").user_facing().expect("shown");
        assert_eq!(reason, "KubernetesForbidden");
        assert!(
            message.starts_with("create Secret: secrets is forbidden"),
            "{message}"
        );
        assert_eq!(kube(409, "Conflict").user_facing(), None);
        assert_eq!(kube(503, "ServiceUnavailable").user_facing(), None);
    }
}
