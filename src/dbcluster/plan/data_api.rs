//! spec.enableHttpEndpoint, pure: the RDS Data API's HTTP endpoint turned on or off as the spec
//! says (EnableHttpEndpoint, DisableHttpEndpoint; API_EnableHttpEndpoint.html), once the cluster
//! is available and nothing else is sent; left out, never touched. While it is on,
//! status.dataAPI names what an app passes to ExecuteStatement: the cluster's ARN, and the secret
//! RDS manages for the master user.

use kube::runtime::events::EventType;

use super::super::observed::ObservedCluster;
use super::{ClusterStep, Facts, Plan, Step};
use crate::dbcluster::DataApi;

/// The endpoint's call of a pass, and status.dataAPI.
pub(super) fn plan(f: &Facts, mut plan: Plan, o: &ObservedCluster) -> Plan {
    let have = o.http_endpoint_enabled == Some(true);
    let others = plan.steps.iter().any(|s| !matches!(s, Step::Secret(_)));
    let wanted = f.cluster.spec.enable_http_endpoint.filter(|w| *w != have);
    if let (Some(enable), Some(arn)) = (wanted, o.arn.clone())
        && !others
        && o.status == "available"
    {
        let note = match enable {
            true => "turning the Data API's HTTP endpoint on, as spec.enableHttpEndpoint says",
            false => "turning the Data API's HTTP endpoint off, as spec.enableHttpEndpoint says",
        };
        plan.event(EventType::Normal, "DataAPI", "Update", note.to_owned());
        let identifier = f.cluster.identifier();
        let step = ClusterStep::HttpEndpoint {
            identifier,
            arn,
            enable,
        };
        plan.step(Step::Own(step));
        plan.look_again_within(f.intervals.busy);
    }
    if let Some(status) = plan.status.as_mut() {
        status.fields.data_api = (o.arn.clone())
            .filter(|_| have)
            .map(|resource_arn| DataApi {
                resource_arn,
                secret_arn: o.master_user_secret_arn.clone(),
            });
    }
    plan
}
