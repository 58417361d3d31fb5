//! The RDS calls of pending maintenance: DescribePendingMaintenanceActions of the whole account
//! and region, 100 a page, as the observer lists it once per interval (`observer::listing`), and
//! ApplyPendingMaintenanceAction (counted and classified as every call, in `rds.rs`).

use crate::aws_error::{AwsError, aws_error};
use crate::observer::listing::Listed;
use crate::rds::Rds;

use super::{Apply, PendingAction};

/// The pending actions of one resource, as the listing has them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    /// `db:<identifier>` or `cluster:<identifier>` ([`key`]).
    pub key: String,
    pub arn: String,
    pub actions: Vec<PendingAction>,
}

/// What a resource's pending actions are listed under: its ARN's resource type and name
/// (`db:coffee`, `cluster:coffee`), lower case.
pub fn key(resource_type: &str, identifier: &str) -> String {
    format!("{resource_type}:{}", identifier.to_lowercase())
}

fn key_of(arn: &str) -> String {
    let parts: Vec<&str> = arn.splitn(7, ':').collect();
    match parts.as_slice() {
        [_, _, _, _, _, kind, name] => key(kind, name),
        _ => arn.to_lowercase(),
    }
}

/// A resource's pending actions from the location's listing while it is fresh (no call): None
/// while it is not; none for a resource RDS does not have yet.
pub fn listed(
    at: &crate::locations::Location,
    resource_type: &str,
    identifier: &str,
    exists: bool,
    interval: std::time::Duration,
) -> Option<Vec<PendingAction>> {
    if !exists {
        return Some(Vec::new());
    }
    let listing = at.observer.listing::<Pending>();
    let found = listing.complete(&key(resource_type, identifier), interval)?;
    Some(found.map(|p| p.actions).unwrap_or_default())
}

/// ApplyPendingMaintenanceAction of a resource's action; the listing is stale for it until one
/// that starts after this, so nothing is sent again on it.
pub async fn apply(
    at: &crate::locations::Location,
    resource_type: &str,
    step: &super::ApplyStep,
) -> Result<(), AwsError> {
    let (identifier, Apply { action, opt_in }) = (&step.identifier, &step.apply);
    let listing = at.observer.listing::<Pending>();
    let _stale = listing.changing(&key(resource_type, identifier));
    at.rds.apply_maintenance(&step.arn, action, opt_in).await?;
    tracing::info!(identifier, action, opt_in, "pending maintenance applied");
    Ok(())
}

impl Listed for Pending {
    const WHAT: &'static str = "the pending maintenance actions";
    fn key(&self) -> String {
        self.key.clone()
    }
    /// A new, changed or gone action of an instance is news to its DBInstance.
    fn instance(&self) -> Option<&str> {
        self.key.strip_prefix("db:")
    }
    async fn list(rds: &Rds) -> Result<Vec<Self>, AwsError> {
        rds.pending_maintenance_pages().await
    }
}

/// The RDS calls of pending maintenance.
trait MaintenanceCalls {
    /// Every resource of the account and region with pending maintenance, 100 a page.
    fn pending_maintenance_pages(
        &self,
    ) -> impl Future<Output = Result<Vec<Pending>, AwsError>> + Send;

    /// ApplyPendingMaintenanceAction of one action of the resource with this ARN.
    fn apply_maintenance(
        &self,
        arn: &str,
        action: &str,
        opt_in: &str,
    ) -> impl Future<Output = Result<(), AwsError>> + Send;
}

impl MaintenanceCalls for Rds {
    async fn pending_maintenance_pages(&self) -> Result<Vec<Pending>, AwsError> {
        let mut all = Vec::new();
        let mut pages = (self.client.describe_pending_maintenance_actions())
            .max_records(100)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| aws_error("DescribePendingMaintenanceActions", e, None));
            let page = self.counted("DescribePendingMaintenanceActions", page);
            for r in page?.pending_maintenance_actions() {
                let arn = r.resource_identifier().unwrap_or_default().to_owned();
                let actions = (r.pending_maintenance_action_details().iter())
                    .map(|a| {
                        let date = |d: Option<&aws_sdk_rds::primitives::DateTime>| {
                            d.and_then(|d| {
                                d.fmt(aws_sdk_rds::primitives::DateTimeFormat::DateTime)
                                    .ok()
                            })
                        };
                        PendingAction {
                            action: a.action().unwrap_or_default().to_owned(),
                            description: a.description().map(str::to_owned),
                            auto_applied_after_date: date(a.auto_applied_after_date()),
                            forced_apply_date: date(a.forced_apply_date()),
                            current_apply_date: date(a.current_apply_date()),
                            opt_in_status: a.opt_in_status().map(str::to_owned),
                        }
                    })
                    .collect();
                all.push(Pending {
                    key: key_of(&arn),
                    arn,
                    actions,
                });
            }
        }
        Ok(all)
    }

    async fn apply_maintenance(
        &self,
        arn: &str,
        action: &str,
        opt_in: &str,
    ) -> Result<(), AwsError> {
        let result = (self.client.apply_pending_maintenance_action())
            .resource_identifier(arn)
            .apply_action(action)
            .opt_in_type(opt_in)
            .send()
            .await
            .map_err(|e| aws_error("ApplyPendingMaintenanceAction", e, None));
        let result = self.counted("ApplyPendingMaintenanceAction", result);
        result.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_resource_is_listed_under_its_arns_type_and_name() {
        let arn = "arn:aws:rds:us-east-1:123456789012:db:Coffee";
        assert_eq!(super::key_of(arn), "db:coffee");
        assert_eq!(super::key("cluster", "Aurora"), "cluster:aurora");
    }
}
