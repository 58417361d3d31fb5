//! The presigned URL an RDS call across regions needs where RDS reads it: `PreSignedUrl` of
//! CopyDBSnapshot and CopyDBClusterSnapshot from another AWS GovCloud (US) Region, and of
//! CreateDBInstanceReadReplica from another GovCloud or China Region ("This setting applies only
//! to AWS GovCloud (US) Regions [and China Regions]. It's ignored in other AWS Regions":
//! https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBSnapshot.html,
//! API_CopyDBClusterSnapshot.html, API_CreateDBInstanceReadReplica.html). botocore makes it from
//! `SourceRegion`; the Rust SDK makes none, so it is made here with the SDK's own signer
//! (`aws-sigv4`): the same call, with `DestinationRegion`, signed in the query string for the
//! source region with the location's credentials, valid for an hour.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;

use crate::aws_error::{AwsError, ErrorClass};

use super::{Rds, arn_part};

/// Whether `action` into `region` of a source in `source_region` needs a PreSignedUrl: a source
/// in another region of the partitions where RDS reads it.
pub fn needed(action: &str, source_region: &str, region: &str) -> bool {
    let gov = |r: &str| r.starts_with("us-gov-");
    let china = |r: &str| r.starts_with("cn-");
    let both = |p: &dyn Fn(&str) -> bool| p(source_region) && p(region);
    source_region != region
        && match action {
            "CreateDBInstanceReadReplica" => both(&gov) || both(&china),
            _ => both(&gov),
        }
}

/// The request the URL stands for: `action` with `params` and `DestinationRegion`, at the RDS
/// endpoint of `source_region`.
pub fn request_url(
    action: &str,
    source_region: &str,
    region: &str,
    params: &[(&str, &str)],
) -> String {
    let domain = match source_region.starts_with("cn-") {
        true => "amazonaws.com.cn",
        false => "amazonaws.com",
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("Action", action)
        .append_pair("Version", "2014-10-31")
        .append_pair("DestinationRegion", region);
    for (key, value) in params {
        query.append_pair(key, value);
    }
    format!("https://rds.{source_region}.{domain}/?{}", query.finish())
}

/// `url` signed (SigV4, in the query string) for RDS in `source_region` at `now`, valid an hour;
/// its payload the empty one's hash, as botocore's presigned RDS URLs (SigV4QueryAuth).
pub fn presign(
    url: &str,
    source_region: &str,
    credentials: Credentials,
    now: SystemTime,
) -> Result<String, String> {
    let identity = credentials.into();
    let mut settings = SigningSettings::default();
    settings.signature_location = SignatureLocation::QueryParams;
    settings.expires_in = Some(Duration::from_secs(3600));
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(source_region)
        .name("rds")
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| e.to_string())?
        .into();
    let body = SignableBody::Bytes(&[]);
    let request =
        SignableRequest::new("GET", url, std::iter::empty(), body).map_err(|e| e.to_string())?;
    let (instructions, _) = sign(request, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    let mut signed = form_urlencoded::Serializer::new(String::new());
    for (key, value) in instructions.params() {
        signed.append_pair(key, value);
    }
    Ok(format!("{url}&{}", signed.finish()))
}

impl Rds {
    /// The PreSignedUrl of `action` from `source` (an ARN) into this location, when RDS reads one
    /// (`needed`); None otherwise.
    pub async fn pre_signed_url(
        &self,
        action: &'static str,
        source: &str,
        params: &[(&str, &str)],
    ) -> Result<Option<String>, AwsError> {
        let region = self.place.region();
        let Some(source_region) = arn_part(source, 3).filter(|r| needed(action, r, region)) else {
            return Ok(None);
        };
        let failed = |message: String| AwsError {
            operation: action,
            class: ErrorClass::Retryable,
            code: "PreSignedUrl".into(),
            message,
            wait: None,
            location: None,
        };
        let provider = (self.credentials.as_ref())
            .ok_or_else(|| failed("no credentials to sign the PreSignedUrl with".into()))?;
        let credentials = (provider.provide_credentials().await)
            .map_err(|e| failed(format!("the credentials to sign the PreSignedUrl: {e}")))?;
        let url = request_url(action, source_region, region, params);
        (presign(&url, source_region, credentials, SystemTime::now()).map(Some)).map_err(failed)
    }
}

impl Rds {
    /// An IAM authentication token: `user` at `host:port` in this location's region, presigned
    /// with its credentials for `rds-db` `connect` and valid 15 minutes, as `aws rds
    /// generate-db-auth-token` makes it (the SDK's own `AuthTokenGenerator`;
    /// https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.IAMDBAuth.Connecting.html).
    /// Made locally: no call reaches AWS.
    pub async fn auth_token(
        &self,
        host: &str,
        port: i32,
        user: &str,
    ) -> Result<crate::sensitive::Sensitive, AwsError> {
        use aws_sdk_rds::auth_token::{AuthTokenGenerator, Config};
        let failed = |message: String| AwsError {
            operation: "GenerateDBAuthToken",
            class: ErrorClass::Retryable,
            code: "AuthToken".into(),
            message,
            wait: None,
            location: None,
        };
        let provider = (self.credentials.clone())
            .ok_or_else(|| failed("no credentials to sign the token with".into()))?;
        let config = Config::builder()
            .hostname(host)
            .port(u64::try_from(port).unwrap_or_default())
            .username(user)
            .region(aws_sdk_rds::config::Region::new(
                self.place.region().to_owned(),
            ))
            .credentials(provider)
            .expires_in(900)
            .build()
            .map_err(|e| failed(e.to_string()))?;
        let mut sdk = aws_config::SdkConfig::builder();
        if let Some(clock) = self.client.config().time_source() {
            sdk = sdk.time_source(clock);
        }
        let token = (AuthTokenGenerator::new(config).auth_token(&sdk.build()))
            .await
            .map_err(|e| failed(e.to_string()))?;
        Ok(crate::sensitive::Sensitive::new(token.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_presigned_url_is_made_only_across_regions_where_rds_reads_it() {
        let cases = [
            ("CopyDBSnapshot", "us-gov-east-1", "us-gov-west-1", true),
            (
                "CopyDBClusterSnapshot",
                "us-gov-east-1",
                "us-gov-west-1",
                true,
            ),
            ("CopyDBSnapshot", "us-gov-west-1", "us-gov-west-1", false),
            ("CopyDBSnapshot", "us-east-1", "us-west-2", false),
            ("CopyDBSnapshot", "cn-north-1", "cn-northwest-1", false),
            (
                "CreateDBInstanceReadReplica",
                "cn-north-1",
                "cn-northwest-1",
                true,
            ),
            (
                "CreateDBInstanceReadReplica",
                "us-gov-east-1",
                "us-gov-west-1",
                true,
            ),
            (
                "CreateDBInstanceReadReplica",
                "eu-west-1",
                "us-east-1",
                false,
            ),
        ];
        for (action, source, here, want) in cases {
            assert_eq!(
                needed(action, source, here),
                want,
                "{action} {source} -> {here}"
            );
        }
    }

    /// botocore's PreSignedUrl of this copy (SourceRegion us-gov-east-1, credentials test/test,
    /// at 2026-12-03T03:52:16Z): the same URL, to the signature.
    #[test]
    fn the_url_is_botocores_to_the_signature() {
        let arn = "arn:aws-us-gov:rds:us-gov-east-1:123456789012:snapshot:gov-probe-s";
        let params = [
            ("SourceDBSnapshotIdentifier", arn),
            ("TargetDBSnapshotIdentifier", "gov-probe-w"),
            ("KmsKeyId", "alias/aws/rds"),
        ];
        let url = request_url("CopyDBSnapshot", "us-gov-east-1", "us-gov-west-1", &params);
        let credentials = Credentials::new("test", "test", None, None, "test");
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_269_936);
        let signed = presign(&url, "us-gov-east-1", credentials, at).expect("signed");
        let query = signed.split_once('?').expect("a query").1;
        let pairs: std::collections::BTreeMap<String, String> =
            form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
        assert_eq!(pairs["X-Amz-Date"], "20261203T035216Z");
        assert_eq!(pairs["X-Amz-SignedHeaders"], "host");
        assert_eq!(
            pairs["X-Amz-Signature"],
            "db36d78dc940c61db4c2b0cda2c017863aae829edadbecb721c0431c205e2059"
        );
    }

    #[test]
    fn the_url_is_the_call_in_the_source_region_signed_there_for_an_hour() {
        let arn = "arn:aws-us-gov:rds:us-gov-east-1:123456789012:snapshot:coffee";
        let params = [
            ("SourceDBSnapshotIdentifier", arn),
            ("TargetDBSnapshotIdentifier", "coffee-west"),
            ("KmsKeyId", "alias/west"),
        ];
        let url = request_url("CopyDBSnapshot", "us-gov-east-1", "us-gov-west-1", &params);
        let credentials = Credentials::new("AKIDEXAMPLE", "secret-key", None, None, "test");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_000_000);
        let signed = presign(&url, "us-gov-east-1", credentials, now).expect("signed");
        let (base, query) = signed.split_once('?').expect("a query");
        assert_eq!(base, "https://rds.us-gov-east-1.amazonaws.com/");
        let pairs: std::collections::BTreeMap<String, String> =
            form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
        assert_eq!(pairs["Action"], "CopyDBSnapshot");
        assert_eq!(pairs["DestinationRegion"], "us-gov-west-1");
        assert_eq!(pairs["SourceDBSnapshotIdentifier"], arn);
        assert_eq!(pairs["KmsKeyId"], "alias/west");
        assert_eq!(pairs["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
        assert!(
            pairs["X-Amz-Credential"].ends_with("/us-gov-east-1/rds/aws4_request"),
            "signed for RDS in the source region: {}",
            pairs["X-Amz-Credential"]
        );
        assert_eq!(pairs["X-Amz-Expires"], "3600");
        assert_eq!(pairs["X-Amz-Signature"].len(), 64);
        assert!(!signed.contains("secret-key"), "no secret in the URL");
        // Another time, another signature: it is computed, not fixed.
        let later = now + Duration::from_secs(60);
        let credentials = Credentials::new("AKIDEXAMPLE", "secret-key", None, None, "test");
        let again = presign(&url, "us-gov-east-1", credentials, later).expect("signed");
        assert_ne!(again, signed);
    }
}
