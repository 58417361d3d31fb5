//! The AWSAccount plan, pure: the finalizer, what status says of the account (reached or not,
//! with AWS's message), and its deletion, which waits while resources use it.

use std::time::Duration;

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{AWSAccount, AWSAccountStatus};
use crate::crd::has_finalizer;
use crate::managed::plan::{ConditionPlan, KindPlan, KindStatus, Requeue};
use crate::rds_state::AwsIdentity;

/// What an AWSAccount's decision needs.
#[derive(Clone, Debug)]
pub struct Facts {
    pub account: AWSAccount,
    /// What STS answered through the chain in the account's first region (Err: AWS's message);
    /// None at deletion, where it is not asked.
    pub reached: Option<Result<AwsIdentity, String>>,
    /// The DBInstances, DBSubnetGroups and DBParameterGroups that use it (name it, or live in it).
    pub users: Vec<String>,
    pub drift_interval: Duration,
    pub now: String,
}

/// A step of the AWSAccount kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    AddFinalizer,
    /// Stop every location reached through it (their polls and cached credentials).
    Forget,
    RemoveFinalizer,
}

pub type Plan = KindPlan<Step, KindStatus<AWSAccountStatus>>;

/// The plan: while the account exists, the finalizer, and Ready from STS's answer; at deletion,
/// wait with InUse while anything uses it (no step), else forget its locations and let go.
pub fn plan(f: &Facts) -> Plan {
    let account = &f.account;
    let previous = account.status.clone().unwrap_or_default();
    let users = i64::try_from(f.users.len()).unwrap_or(i64::MAX);
    let mut fields = AWSAccountStatus {
        resources: Some(users),
        ..previous.clone()
    };
    if account.metadata.deletion_timestamp.is_some() {
        return deletion(f, fields, &previous);
    }
    let mut plan = Plan::new(Requeue::After(f.drift_interval));
    if !has_finalizer(&account.metadata) {
        plan.step(Step::AddFinalizer);
    }
    let (ready, synced) = match &f.reached {
        Some(Ok(identity)) => {
            fields.account_id = Some(identity.account.clone());
            fields.caller_arn = Some(identity.caller_arn.clone());
            let message = format!(
                "reached account {} as {}",
                identity.account, identity.caller_arn
            );
            (
                ConditionPlan::new(true, "Reached", message),
                ConditionPlan::new(true, "Synced", "the account is as the spec says"),
            )
        }
        Some(Err(message)) => {
            plan.requeue = Requeue::Backoff;
            plan.refusal = Some("AccountUnavailable");
            if previous
                .reported
                .conditions
                .iter()
                .all(|c| c.reason != "AccountUnavailable")
            {
                plan.event(
                    EventType::Warning,
                    "AccountUnavailable",
                    "Assume",
                    message.clone(),
                );
            }
            (
                ConditionPlan::new(false, "AccountUnavailable", message.clone()),
                ConditionPlan::new(false, "AccountUnavailable", message.clone()),
            )
        }
        None => return plan,
    };
    plan.status = Some(KindStatus {
        fields,
        ready,
        synced,
        busy: false,
    });
    plan
}

/// At deletion: wait with InUse while anything uses the account (no step), else forget its
/// locations and let go.
fn deletion(f: &Facts, fields: AWSAccountStatus, previous: &AWSAccountStatus) -> Plan {
    let account = &f.account;
    let users = f.users.len();
    let mut plan = Plan::new(Requeue::After(f.drift_interval));
    if !has_finalizer(&account.metadata) {
        return plan;
    }
    if !f.users.is_empty() {
        let shown = f
            .users
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let message = format!(
            "{users} resources use AWSAccount {}: {shown}{}; it is deleted once none does",
            account.name_any(),
            if f.users.len() > 5 { ", ..." } else { "" }
        );
        plan.refusal = Some("InUse");
        if previous
            .reported
            .conditions
            .iter()
            .all(|c| c.reason != "InUse")
        {
            plan.event(EventType::Warning, "InUse", "Delete", message.clone());
        }
        let ready = crate::managed::conditions::last(&previous.reported.conditions, "Ready")
            .unwrap_or_else(|| ConditionPlan::new(false, "InUse", message.clone()));
        plan.status = Some(KindStatus {
            fields,
            ready,
            synced: ConditionPlan::new(false, "InUse", message),
            busy: false,
        });
        return plan;
    }
    plan.steps = vec![Step::Forget, Step::RemoveFinalizer];
    plan.requeue = Requeue::AwaitChange;
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::awsaccount::AWSAccountSpec;
    use crate::crd::FINALIZER;

    fn facts(reached: Option<Result<AwsIdentity, String>>, users: &[&str]) -> Facts {
        let mut account = AWSAccount::new(
            "prod",
            AWSAccountSpec {
                regions: vec!["us-east-1".into()],
                ..Default::default()
            },
        );
        account.metadata.finalizers = Some(vec![FINALIZER.into()]);
        Facts {
            account,
            reached,
            users: users.iter().map(|u| u.to_string()).collect(),
            drift_interval: Duration::from_secs(60),
            now: "2026-12-01T00:00:00Z".into(),
        }
    }

    fn reached() -> Option<Result<AwsIdentity, String>> {
        Some(Ok(AwsIdentity {
            account: "111111111111".into(),
            region: "us-east-1".into(),
            caller_arn: "arn:aws:sts::111111111111:assumed-role/rds/rds-operator".into(),
        }))
    }

    fn deleting(mut f: Facts) -> Facts {
        f.account.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        f
    }

    #[test]
    fn what_an_account_reports_and_how_it_is_let_go() {
        let denied = Some(Err("AssumeRole failed: AccessDenied: no".to_string()));
        let mut new = facts(reached(), &[]);
        new.account.metadata.finalizers = None;
        type Row<'a> = (
            &'a str,
            Facts,
            Vec<Step>,
            Option<(bool, &'a str)>,
            Option<&'a str>,
        );
        let rows: Vec<Row> = vec![
            (
                "new: the finalizer first",
                new,
                vec![Step::AddFinalizer],
                Some((true, "Reached")),
                None,
            ),
            (
                "reached: Ready with the account id",
                facts(reached(), &["shop/coffee"]),
                vec![],
                Some((true, "Reached")),
                None,
            ),
            (
                "not reached: Ready False with AWS's message, backoff",
                facts(denied, &[]),
                vec![],
                Some((false, "AccountUnavailable")),
                Some("AccountUnavailable"),
            ),
            (
                "deleted while in use: waits, nothing done",
                deleting(facts(None, &["shop/coffee"])),
                vec![],
                Some((true, "Reached")),
                Some("InUse"),
            ),
            (
                "deleted and unused: forget it, then let go",
                deleting(facts(None, &[])),
                vec![Step::Forget, Step::RemoveFinalizer],
                None,
                None,
            ),
        ];
        for (name, mut f, steps, ready, refusal) in rows {
            if name.starts_with("deleted while") {
                f.account.status = Some(AWSAccountStatus {
                    reported: crate::crd::Reported {
                        conditions: vec![crate::managed::conditions::condition(
                            "Ready",
                            &ConditionPlan::new(true, "Reached", "ok"),
                            None,
                        )],
                        ..Default::default()
                    },
                    ..Default::default()
                });
            }
            let p = plan(&f);
            assert_eq!(p.steps, steps, "{name}");
            assert_eq!(p.refusal, refusal, "{name}");
            let got = p
                .status
                .as_ref()
                .map(|s| (s.ready.ok, s.ready.reason.as_str()));
            assert_eq!(got, ready, "{name}");
        }
    }

    #[test]
    fn status_counts_the_users_and_shows_the_account_reached() {
        let p = plan(&facts(reached(), &["a/x", "b/y"]));
        let status = p.status.unwrap();
        assert_eq!(status.fields.resources, Some(2));
        assert_eq!(status.fields.account_id.as_deref(), Some("111111111111"));
        let waiting = plan(&deleting(facts(None, &["a/x"])));
        let synced = waiting.status.unwrap().synced;
        assert_eq!((synced.ok, synced.reason.as_str()), (false, "InUse"));
        assert!(synced.message.contains("a/x"), "{}", synced.message);
    }
}
