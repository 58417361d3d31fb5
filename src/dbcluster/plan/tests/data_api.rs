//! spec.enableHttpEndpoint (plan/data_api.rs), a rule a row.

use super::*;

fn endpoint(wanted: Option<bool>, have: bool) -> Facts {
    with(synced(), |f| {
        f.cluster.spec.enable_http_endpoint = wanted;
        let o = f.observed.as_mut().unwrap();
        o.http_endpoint_enabled = Some(have);
        o.master_user_secret_arn =
            Some("arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-x".into());
    })
}

fn call(p: &Plan) -> Option<bool> {
    p.steps.iter().find_map(|s| match s {
        Step::Own(ClusterStep::HttpEndpoint { enable, .. }) => Some(*enable),
        _ => None,
    })
}

fn data_api(p: &Plan) -> Option<crate::dbcluster::DataApi> {
    p.status.as_ref().and_then(|s| s.fields.data_api.clone())
}

#[test]
fn the_endpoint_follows_the_spec_and_status_names_what_an_app_passes() {
    let on = plan(&endpoint(Some(true), false));
    assert_eq!(call(&on), Some(true));
    assert_eq!(on.events.last().map(|e| e.reason.as_str()), Some("DataAPI"));
    assert_eq!(data_api(&on), None, "not on yet");

    let is_on = plan(&endpoint(Some(true), true));
    assert_eq!(call(&is_on), None);
    let api = data_api(&is_on).expect("status.dataAPI");
    assert_eq!(api.resource_arn, ours().arn.unwrap());
    assert!(api.secret_arn.is_some_and(|s| s.contains("rds!cluster")));

    assert_eq!(call(&plan(&endpoint(Some(false), true))), Some(false));
    let left_out = plan(&endpoint(None, true));
    assert_eq!(call(&left_out), None, "left out: never touched");
    assert!(data_api(&left_out).is_some(), "and reported while on");
}
