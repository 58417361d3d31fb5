//! Blue/green deployments in the RDS adapter: CreateBlueGreenDeployment with the targets the spec
//! asks for, DescribeBlueGreenDeployments (by identifier, or by source), and the switchover and
//! deletion; and the read step's look at a deployment with its green and old instance or cluster
//! ([`read`]), for both database kinds.

use std::collections::BTreeMap;

use aws_sdk_rds::types::{BlueGreenDeployment, Filter};

use crate::rds_state::{BlueGreenTargets as Targets, ObservedDeployment};

use tracing::info;

use super::{Call, Facts, Read};
use crate::aws_error::{AwsError, ErrorClass, aws_error};
use crate::error::Error;
use crate::rds::{Rds, rds_tags};

/// The deployment `read` names, and the identifiers of the green instance or cluster (before the
/// switchover) and the old one (after it) for the kind to read directly: the facts, but for those
/// two.
pub async fn read(rds: &Rds, read: &Read) -> Result<(Facts<()>, [Option<String>; 2]), Error> {
    let (deployment, mut green, mut old) = match read {
        Read::Recorded {
            deployment,
            green,
            old,
        } => {
            let found = rds.describe_blue_green(Some(deployment), None).await?;
            (found, green.clone(), old.clone())
        }
        Read::OfSource(arn) => (rds.describe_blue_green(None, Some(arn)).await?, None, None),
    };
    if let Some(d) = &deployment {
        match d.status.as_str() {
            "SWITCHOVER_COMPLETED" => old = Some(super::identifier_of(&d.source)),
            _ => green = d.target.as_deref().map(super::identifier_of),
        }
    }
    let facts = Facts {
        deployment,
        ..Default::default()
    };
    Ok((facts, [green, old]))
}

/// Makes a blue/green call of the instance or cluster `identifier`.
pub async fn act(rds: &Rds, identifier: &str, call: &Call) -> Result<(), Error> {
    match call {
        Call::Create {
            name,
            source,
            targets,
            tags,
        } => {
            let made = rds.create_blue_green(name, source, targets, tags).await?;
            let deployment = made.identifier;
            info!(identifier, deployment, "creating blue/green deployment");
        }
        Call::Switchover {
            deployment,
            timeout,
        } => {
            rds.switchover_blue_green(deployment, *timeout).await?;
            info!(
                identifier,
                deployment, "switching over blue/green deployment"
            );
        }
        Call::Delete { deployment } => {
            rds.delete_blue_green(deployment).await?;
            info!(identifier, deployment, "deleting blue/green deployment");
        }
    }
    Ok(())
}

/// A deployment as RDS describes it, as the plans read it.
fn observed(d: &BlueGreenDeployment) -> ObservedDeployment {
    let s = |v: Option<&str>| v.unwrap_or_default().to_owned();
    ObservedDeployment {
        identifier: s(d.blue_green_deployment_identifier()),
        name: s(d.blue_green_deployment_name()),
        source: s(d.source()),
        target: d.target().map(str::to_owned),
        status: s(d.status()),
        status_details: d.status_details().map(str::to_owned),
        switchover_details: (d.switchover_details().iter())
            .map(|m| (s(m.source_member()), s(m.target_member()), s(m.status())))
            .collect(),
        tasks: (d.tasks().iter())
            .map(|t| (s(t.name()), s(t.status())))
            .collect(),
    }
}

/// The RDS calls of a blue/green deployment, either kind's.
trait BlueGreenCalls {
    /// CreateBlueGreenDeployment of the instance or cluster `source` (its ARN), tagged like it.
    fn create_blue_green(
        &self,
        name: &str,
        source: &str,
        targets: &Targets,
        tags: &BTreeMap<String, String>,
    ) -> impl Future<Output = Result<ObservedDeployment, AwsError>> + Send;

    /// The deployment with this identifier, or the one whose source is this ARN (RDS
    /// allows one per source); None when RDS has none.
    fn describe_blue_green(
        &self,
        identifier: Option<&str>,
        source: Option<&str>,
    ) -> impl Future<Output = Result<Option<ObservedDeployment>, AwsError>> + Send;

    /// SwitchoverBlueGreenDeployment, with the timeout RDS rolls back after.
    fn switchover_blue_green(
        &self,
        identifier: &str,
        timeout: Option<i32>,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;

    /// DeleteBlueGreenDeployment, never with its target: green's data goes only through the
    /// final snapshot rule. A missing deployment is success.
    fn delete_blue_green(
        &self,
        identifier: &str,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl BlueGreenCalls for Rds {
    async fn create_blue_green(
        &self,
        name: &str,
        source: &str,
        targets: &Targets,
        tags: &BTreeMap<String, String>,
    ) -> Result<ObservedDeployment, AwsError> {
        let result = (self.client.create_blue_green_deployment())
            .blue_green_deployment_name(name)
            .source(source)
            .set_target_engine_version(targets.engine_version.clone())
            .set_target_db_parameter_group_name(targets.db_parameter_group_name.clone())
            .set_target_db_cluster_parameter_group_name(
                targets.db_cluster_parameter_group_name.clone(),
            )
            .set_target_db_instance_class(targets.db_instance_class.clone())
            .set_target_storage_type(targets.storage_type.clone())
            .set_tags(Some(rds_tags(tags)))
            .send()
            .await
            .map_err(|e| aws_error("CreateBlueGreenDeployment", e, None));
        let result = self.counted("CreateBlueGreenDeployment", result);
        Ok(result?
            .blue_green_deployment()
            .map(observed)
            .unwrap_or_default())
    }

    async fn describe_blue_green(
        &self,
        identifier: Option<&str>,
        source: Option<&str>,
    ) -> Result<Option<ObservedDeployment>, AwsError> {
        let filter = source.map(|s| Filter::builder().name("source").values(s).build());
        let result = (self.client.describe_blue_green_deployments())
            .set_blue_green_deployment_identifier(identifier.map(str::to_owned))
            .set_filters(filter.map(|f| vec![f]))
            .send()
            .await
            .map_err(|e| aws_error("DescribeBlueGreenDeployments", e, None));
        let result = self.counted("DescribeBlueGreenDeployments", result);
        match result {
            Ok(out) => Ok((out.blue_green_deployments().first()).map(observed)),
            Err(e) if e.class == ErrorClass::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn switchover_blue_green(
        &self,
        identifier: &str,
        timeout: Option<i32>,
    ) -> Result<(), AwsError> {
        let result = (self.client.switchover_blue_green_deployment())
            .blue_green_deployment_identifier(identifier)
            .set_switchover_timeout(timeout)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("SwitchoverBlueGreenDeployment", e, None));
        self.counted("SwitchoverBlueGreenDeployment", result)
    }

    async fn delete_blue_green(&self, identifier: &str) -> Result<(), AwsError> {
        let result = (self.client.delete_blue_green_deployment())
            .blue_green_deployment_identifier(identifier)
            .delete_target(false)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| aws_error("DeleteBlueGreenDeployment", e, None));
        let result = self.counted("DeleteBlueGreenDeployment", result);
        match result {
            Err(e) if e.class == ErrorClass::NotFound => Ok(()),
            other => other,
        }
    }
}
