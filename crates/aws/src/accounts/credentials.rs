//! The credentials of an AWS account, from its source through its chain of roles (STS AssumeRole,
//! each hop with the credentials of the one before), and the SDK configuration for one of its
//! regions.
//!
//! The hop is written here rather than taken from aws-config's `AssumeRoleProvider`, which has no
//! TransitiveTagKeys and whose calls the operator could not count; the caching and the refresh
//! before expiry stay the SDK's (the lazy identity cache of the configuration).

use std::collections::BTreeMap;
use std::sync::Arc;

use aws_config::Region;
use aws_credential_types::Credentials;
use aws_credential_types::provider::{
    ProvideCredentials, SharedCredentialsProvider, error::CredentialsError, future,
};
use aws_sdk_sts::types::Tag as StsTag;
use secrecy::{ExposeSecret, SecretString};

use super::AssumeRole;
use crate::aws_error::{AwsError, ErrorClass, aws_error};
use crate::rds::{CallCounter, Place, outcome};

/// The session name when a hop gives none.
pub const SESSION_NAME: &str = "rds-operator";

/// Source credentials read from a Secret (access key id, secret key, optional session token).
pub struct SecretKeys {
    pub access_key_id: String,
    pub secret_access_key: SecretString,
    pub session_token: Option<SecretString>,
}

/// The SDK configuration that reaches the account in `region`: `base` (the operator's own
/// configuration: timeouts, endpoint, identity cache) with the source credentials (the Secret's,
/// or the operator's own when None) and each role of the chain assumed in turn.
pub fn config(
    base: &aws_config::SdkConfig,
    region: &str,
    source: Option<SecretKeys>,
    chain: &[AssumeRole],
    calls: &Arc<CallCounter>,
) -> aws_config::SdkConfig {
    let region = Region::new(region.to_owned());
    let mut provider = match source {
        Some(keys) => SharedCredentialsProvider::new(Credentials::new(
            keys.access_key_id,
            keys.secret_access_key.expose_secret(),
            keys.session_token.map(|t| t.expose_secret().to_owned()),
            None,
            "rds-operator-secret",
        )),
        None => base
            .credentials_provider()
            .unwrap_or_else(|| SharedCredentialsProvider::new(Credentials::for_tests())),
    };
    for hop in chain {
        let sts_config = (base.to_builder())
            .region(region.clone())
            .credentials_provider(provider.clone())
            .build();
        provider = SharedCredentialsProvider::new(Hop {
            sts: aws_sdk_sts::Client::new(&sts_config),
            role: hop.clone(),
            place: Place::new("", region.as_ref()),
            calls: calls.clone(),
        });
    }
    (base.to_builder())
        .region(region)
        .credentials_provider(provider)
        .build()
}

/// One role of a chain, assumed with the credentials before it.
#[derive(Debug)]
struct Hop {
    sts: aws_sdk_sts::Client,
    role: AssumeRole,
    place: Place,
    calls: Arc<CallCounter>,
}

impl Hop {
    async fn assume(&self) -> Result<Credentials, AwsError> {
        let role = &self.role;
        let tags = (role.session_tags.iter())
            .filter_map(|(k, v)| StsTag::builder().key(k).value(v).build().ok())
            .collect::<Vec<_>>();
        let result = (self.sts.assume_role())
            .role_arn(&role.role_arn)
            .role_session_name(role.session_name.as_deref().unwrap_or(SESSION_NAME))
            .set_external_id(role.external_id.clone())
            .set_tags((!tags.is_empty()).then_some(tags))
            .set_transitive_tag_keys(
                (!role.transitive_tag_keys.is_empty()).then(|| role.transitive_tag_keys.clone()),
            )
            .send()
            .await
            .map_err(|e| aws_error("AssumeRole", e, None));
        self.calls
            .record(&self.place, "AssumeRole", outcome(&result));
        let issued = result?.credentials.ok_or_else(|| AwsError {
            operation: "AssumeRole",
            class: ErrorClass::Retryable,
            code: "NoCredentials".into(),
            message: "STS answered without credentials".into(),
            wait: None,
            location: None,
        })?;
        let expiry = std::time::SystemTime::try_from(issued.expiration).ok();
        Ok(Credentials::new(
            issued.access_key_id,
            issued.secret_access_key,
            Some(issued.session_token),
            expiry,
            "rds-operator-assume-role",
        ))
    }
}

impl ProvideCredentials for Hop {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            self.assume()
                .await
                .map_err(CredentialsError::provider_error)
        })
    }
}

/// The keys of a source-credentials Secret's data.
pub fn secret_keys(data: &BTreeMap<String, SecretString>) -> Result<SecretKeys, String> {
    let get = |key: &str| data.get(key).cloned();
    let access_key_id = get("AWS_ACCESS_KEY_ID")
        .ok_or("the Secret has no AWS_ACCESS_KEY_ID")?
        .expose_secret()
        .to_owned();
    let secret_access_key =
        get("AWS_SECRET_ACCESS_KEY").ok_or("the Secret has no AWS_SECRET_ACCESS_KEY")?;
    Ok(SecretKeys {
        access_key_id,
        secret_access_key,
        session_token: get("AWS_SESSION_TOKEN"),
    })
}

#[cfg(test)]
mod tests {
    /// The shipped IAM documents of a member account (docs/accounts.md): its role trusts only the
    /// operator's role, only with the external ID, for AssumeRole and the session tags the chain
    /// sends; the operator may assume it only with an external ID and its own session name.
    #[test]
    fn the_member_trust_policy_and_the_assume_policy_ask_for_the_external_id() {
        let trust: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../deploy/iam/member-trust-policy.json"
        ))
        .expect("trust policy JSON");
        let statements = trust["Statement"].as_array().expect("statements");
        for action in ["sts:AssumeRole", "sts:TagSession"] {
            let statement = (statements.iter())
                .find(|s| s["Action"] == action && s["Effect"] == "Allow")
                .unwrap_or_else(|| panic!("{action} is not trusted"));
            assert_eq!(
                statement["Condition"]["StringEquals"]["sts:ExternalId"], "EXTERNAL_ID",
                "{action} without the external ID"
            );
            let principal = statement["Principal"]["AWS"].as_str().unwrap_or_default();
            assert!(principal.ends_with(":role/rds-operator"), "{principal}");
        }
        let assume: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../deploy/iam/operator-assume-roles.json"
        ))
        .expect("assume policy JSON");
        let statement = (assume["Statement"].as_array().expect("statements").iter())
            .find(|s| s["Action"] == "sts:AssumeRole")
            .expect("AssumeRole allowed");
        assert_eq!(statement["Condition"]["Null"]["sts:ExternalId"], "false");
        let session = statement["Condition"]["StringLike"]["sts:RoleSessionName"]
            .as_str()
            .unwrap_or_default();
        assert!(
            super::SESSION_NAME.starts_with(session.trim_end_matches('*')),
            "the default session name {} must match {session}",
            super::SESSION_NAME
        );
    }
}
