//! The RDS Data API's HTTP endpoint of an Aurora cluster: EnableHttpEndpoint and
//! DisableHttpEndpoint (API_EnableHttpEndpoint.html), by the cluster's ARN.

use super::Rds;
use crate::aws_error::{AwsError, aws_error};

impl Rds {
    /// Turns the cluster's Data API endpoint on or off.
    pub async fn set_http_endpoint(&self, arn: &str, enable: bool) -> Result<(), AwsError> {
        if enable {
            let result = (self.client.enable_http_endpoint())
                .resource_arn(arn)
                .send()
                .await
                .map(|_| ())
                .map_err(|e| aws_error("EnableHttpEndpoint", e, None));
            let result = self.counted("EnableHttpEndpoint", result);
            return result;
        }
        let result = (self.client.disable_http_endpoint())
            .resource_arn(arn)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("DisableHttpEndpoint", e, None));
        self.counted("DisableHttpEndpoint", result)
    }
}
