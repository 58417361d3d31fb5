//! The Integration reconcile: what it reads (the integration, from the shared listing while it may
//! serve, else from RDS; its source, the DBCluster of the namespace it names, resolved to its ARN
//! once Ready; the accounts its data may go to) and how it acts; the shell, the deletion and the tag
//! steps are the group kinds' (`managed::named`).

use kube::ResourceExt;

use crate::dbcluster::DBCluster;
use crate::error::Error;
use crate::locations::Location;
use crate::managed::named::{NamedKind, Shared};
use crate::managed::references::resolve;

use super::aws::IntegrationCalls;
use super::plan::Own;
use super::{Integration, IntegrationStatus, ObservedIntegration, Source};

impl NamedKind for Integration {
    type Observed = ObservedIntegration;
    type Extra = Source;
    type Own = Own;
    type Status = IntegrationStatus;
    const LABEL: &'static str = "Integration";
    const WHAT: &'static str = "zero-ETL integration";
    const NAME_FIELD: &'static str = "integrationName";

    async fn observe(
        &self,
        shared: &Shared,
        at: &Location,
    ) -> Result<(Option<ObservedIntegration>, Source), Error> {
        let (name, deleting) = (
            self.name_in_rds(),
            self.metadata.deletion_timestamp.is_some(),
        );
        let listed = (at.observer.listing::<ObservedIntegration>())
            .get(&name, shared.drift_interval)
            .filter(|_| !deleting);
        // Read directly: by the ARN status recorded (one DescribeIntegrations), else by name
        // (every page: RDS finds an integration by its ARN only).
        let arn = NamedKind::status(self).and_then(|s| s.arn.clone());
        let by_arn = match (&listed, arn) {
            (None, Some(arn)) => at.rds.integration_by_arn(&arn).await?,
            _ => None,
        };
        let observed = match (listed, by_arn) {
            (Some(found), _) | (None, Some(found)) => Some(found),
            (None, None) => at.rds.integration(&name).await?,
        };
        let source = match deleting {
            true => Source::default(),
            false => source(shared, at, self).await?,
        };
        Ok((observed, source))
    }

    async fn act(&self, _: &Shared, at: &Location, step: &Own) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedIntegration>()).changing(&self.name_in_rds());
        Ok(at.rds.integration_call(step).await?)
    }

    async fn delete(&self, _: &Shared, at: &Location, name: &str) -> Result<(), Error> {
        let _stale = (at.observer.listing::<ObservedIntegration>()).changing(name);
        Ok(at.rds.delete_integration(name).await?)
    }

    crate::named_fields!(IntegrationStatus, integration_name);
}

/// The source DBCluster's ARN once it is Ready, and the accounts the data may go to: the
/// cluster's own, the AWSAccounts' granted to the namespace, the operator's --grant-share-to.
async fn source(shared: &Shared, at: &Location, i: &Integration) -> Result<Source, Error> {
    let (ctx, namespace) = (&shared.ctx, i.namespace().unwrap_or_default());
    let me = at.identity().await?;
    let mut accounts = vec![me.account.clone()];
    accounts.extend(ctx.directory.granted_accounts(&namespace));
    accounts.extend(ctx.grants.share_to.iter().cloned());
    let resolved =
        resolve::<DBCluster>(&ctx.client, &namespace, &i.spec.db_cluster_ref.name).await?;
    Ok(match resolved {
        Ok(id) => Source {
            arn: Some(format!(
                "arn:aws:rds:{}:{}:cluster:{id}",
                me.region, me.account
            )),
            unresolved: None,
            accounts,
        },
        Err(why) => Source {
            arn: None,
            unresolved: Some(why),
            accounts,
        },
    })
}
