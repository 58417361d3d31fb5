//! Pending maintenance (OS patches, certificate rotations, engine updates RDS schedules) of a DB
//! instance or cluster, shared by both kinds and knowing neither: what RDS reports
//! (DescribePendingMaintenanceActions, listed once per location and interval by the observer:
//! `aws.rs`), what the spec's `maintenancePolicy` and the approval annotation make of it (pure,
//! [`decide`], table-tested), and the ApplyPendingMaintenanceAction that follows.
//!
//! - `Report` (the default): every action is listed in status; none is applied, but the one an
//!   annotation `rds.operator.rs/apply-maintenance: <action>` approves, at once.
//! - `NextWindow`: every action is opted in for the next maintenance window (`next-maintenance`);
//!   RDS applies it inside the window.
//! - `Immediate`: every action is applied at once (`immediate`), never while RDS is busy with the
//!   resource.
//!
//! An action is sent once: one RDS reports opted in already (`OptInStatus` next-maintenance or
//! immediate) is not sent again, whatever the operator recorded or lost.

pub mod aws;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The annotation that approves one pending action (its name, e.g. `system-update`) under
/// `maintenancePolicy: Report`: it is applied at once.
pub const APPROVE_ANNOTATION: &str = "rds.operator.rs/apply-maintenance";

/// What the operator does with the pending maintenance RDS schedules.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum MaintenancePolicy {
    /// List the actions in status; apply only one an annotation approves.
    #[default]
    Report,
    /// Opt every action in for the next maintenance window.
    NextWindow,
    /// Apply every action at once.
    Immediate,
}

/// One pending maintenance action, as RDS reports it (PendingMaintenanceAction).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    /// What RDS will do: system-update, db-upgrade, hardware-maintenance, ca-certificate-rotation.
    pub action: String,
    pub description: Option<String>,
    /// When RDS applies it in a maintenance window by itself (RFC 3339).
    pub auto_applied_after_date: Option<String>,
    /// When RDS applies it whatever the windows (RFC 3339).
    pub forced_apply_date: Option<String>,
    /// When it is applied, as things stand (RFC 3339).
    pub current_apply_date: Option<String>,
    /// immediate, next-maintenance, or none yet.
    pub opt_in_status: Option<String>,
}

/// One ApplyPendingMaintenanceAction to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Apply {
    pub action: String,
    /// `immediate` or `next-maintenance`.
    pub opt_in: &'static str,
}

/// An [`Apply`] of one resource (its identifier and ARN): a kind's step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyStep {
    pub identifier: String,
    pub arn: String,
    pub apply: Apply,
}

impl Apply {
    /// What the Event says of it.
    pub fn note(&self) -> String {
        match self.opt_in {
            "immediate" => format!("applying pending maintenance {} now", self.action),
            _ => format!(
                "pending maintenance {} opted in for the next maintenance window",
                self.action
            ),
        }
    }
}

/// A resource's pending maintenance as a kind's read and spec give it.
pub struct Resource<'a> {
    pub identifier: String,
    pub arn: Option<&'a str>,
    /// RDS's state of it: only `available` lets an action be applied at once.
    pub status: &'a str,
    pub annotations: Option<&'a BTreeMap<String, String>>,
    pub policy: MaintenancePolicy,
    /// RDS's actions as the location's listing has them (None: it is not fresh), and as status
    /// last listed them.
    pub listed: Option<&'a Vec<PendingAction>>,
    pub previous: Option<&'a Vec<PendingAction>>,
    /// Whether the operator may act on it (not observe-only, not held).
    pub may_act: bool,
    /// Why nothing is applied at once now though the policy would (a replica further behind than
    /// maxLagSeconds: `health::lag_hold`); opting in for the next window goes on.
    pub held: Option<String>,
}

/// What a reconcile does with a resource's pending maintenance: the actions its status lists (as
/// last listed while the listing is not fresh) and the calls to make with their Events' notes,
/// decided only on a fresh listing, for a resource the operator may act on, with the approval of
/// its annotations.
pub fn plan(r: &Resource) -> (Vec<PendingAction>, Vec<(ApplyStep, String)>) {
    let Some(actions) = r.listed else {
        return (r.previous.cloned().unwrap_or_default(), Vec::new());
    };
    let Some(arn) = r.arn.filter(|_| r.may_act) else {
        return (actions.clone(), Vec::new());
    };
    let approved = r.annotations.and_then(|a| a.get(APPROVE_ANNOTATION));
    let busy = r.status != "available" || r.held.is_some();
    let applies = decide(r.policy, approved.map(String::as_str), actions, busy);
    let steps = (applies.into_iter())
        .map(|apply| {
            let note = apply.note();
            let step = ApplyStep {
                identifier: r.identifier.clone(),
                arn: arn.to_owned(),
                apply,
            };
            (step, note)
        })
        .collect();
    (actions.clone(), steps)
}

/// Whether RDS reports the action opted in already (sent before, by the operator or anyone).
fn opted_in(a: &PendingAction, opt_in: &str) -> bool {
    match a.opt_in_status.as_deref() {
        Some("immediate") => true,
        Some("next-maintenance") => opt_in == "next-maintenance",
        _ => false,
    }
}

/// The ApplyPendingMaintenanceAction calls the policy and the approval make of RDS's pending
/// actions (`busy`: RDS works on the resource, so nothing is applied at once now).
pub fn decide(
    policy: MaintenancePolicy,
    approved: Option<&str>,
    actions: &[PendingAction],
    busy: bool,
) -> Vec<Apply> {
    let mut out = Vec::new();
    for a in actions {
        let opt_in = match policy {
            MaintenancePolicy::Immediate => Some("immediate"),
            _ if approved == Some(a.action.as_str()) => Some("immediate"),
            MaintenancePolicy::NextWindow => Some("next-maintenance"),
            MaintenancePolicy::Report => None,
        };
        let Some(opt_in) = opt_in else { continue };
        if opted_in(a, opt_in) || (busy && opt_in == "immediate") {
            continue;
        }
        out.push(Apply {
            action: a.action.clone(),
            opt_in,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use MaintenancePolicy::*;

    fn action(name: &str, opt_in: Option<&str>) -> PendingAction {
        PendingAction {
            action: name.into(),
            opt_in_status: opt_in.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn rules() {
        let patch = || vec![action("system-update", None)];
        type Row = (
            &'static str,
            MaintenancePolicy,
            Option<&'static str>,
            Vec<PendingAction>,
            bool,
            Vec<(&'static str, &'static str)>,
        );
        let table: Vec<Row> = vec![
            (
                "Report lists and applies nothing",
                Report,
                None,
                patch(),
                false,
                vec![],
            ),
            (
                "Report applies the approved action at once",
                Report,
                Some("system-update"),
                patch(),
                false,
                vec![("system-update", "immediate")],
            ),
            (
                "an approval names one action: the others wait",
                Report,
                Some("db-upgrade"),
                patch(),
                false,
                vec![],
            ),
            (
                "NextWindow opts it in for the window",
                NextWindow,
                None,
                patch(),
                false,
                vec![("system-update", "next-maintenance")],
            ),
            (
                "NextWindow: opted in already (sent before, or a crash lost the record): not sent again",
                NextWindow,
                None,
                vec![action("system-update", Some("next-maintenance"))],
                false,
                vec![],
            ),
            (
                "NextWindow while RDS is busy: an opt-in for the window is still sent",
                NextWindow,
                None,
                patch(),
                true,
                vec![("system-update", "next-maintenance")],
            ),
            (
                "Immediate applies it at once",
                Immediate,
                None,
                patch(),
                false,
                vec![("system-update", "immediate")],
            ),
            (
                "Immediate waits while RDS is busy",
                Immediate,
                None,
                patch(),
                true,
                vec![],
            ),
            (
                "Immediate over an opt-in for the window: applied at once",
                Immediate,
                None,
                vec![action("system-update", Some("next-maintenance"))],
                false,
                vec![("system-update", "immediate")],
            ),
            (
                "Immediate: applying already, not sent again",
                Immediate,
                None,
                vec![action("system-update", Some("immediate"))],
                false,
                vec![],
            ),
            (
                "nothing pending: nothing sent",
                Immediate,
                None,
                vec![],
                false,
                vec![],
            ),
        ];
        for (name, policy, approved, actions, busy, want) in table {
            let got: Vec<(String, &str)> = decide(policy, approved, &actions, busy)
                .into_iter()
                .map(|a| (a.action, a.opt_in))
                .collect();
            let want: Vec<(String, &str)> =
                want.into_iter().map(|(a, o)| (a.to_owned(), o)).collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn nothing_is_decided_without_a_fresh_listing_and_status_keeps_the_last_one() {
        let last = vec![action("system-update", None)];
        let approved: BTreeMap<String, String> =
            [(APPROVE_ANNOTATION.to_owned(), "system-update".to_owned())].into();
        let resource = |listed, may_act| Resource {
            identifier: "coffee".into(),
            arn: Some("arn:aws:rds:us-east-1:1:db:coffee"),
            status: "available",
            annotations: Some(&approved),
            policy: Report,
            listed,
            previous: Some(&last),
            may_act,
            held: None,
        };
        let (listed, steps) = plan(&resource(None, true));
        assert_eq!(
            (listed, steps.len()),
            (last.clone(), 0),
            "not fresh: nothing"
        );
        let (_, steps) = plan(&resource(Some(&last), true));
        assert_eq!(steps.len(), 1, "approved, with a fresh listing");
        assert_eq!(steps[0].0.arn, "arn:aws:rds:us-east-1:1:db:coffee");
        let (listed, steps) = plan(&resource(Some(&last), false));
        assert_eq!(
            (listed, steps.len()),
            (last, 0),
            "held: listed, never applied"
        );
    }

    /// (policy, held for lag) -> the opt-in sent: a hold (a replica too far behind) stops what
    /// would be applied at once, and nothing else.
    #[test]
    fn a_lag_hold_stops_only_what_would_be_applied_at_once() {
        let listed = vec![action("system-update", None)];
        let rows = [
            (Immediate, None, Some("immediate")),
            (Immediate, Some("the replica is 40 s behind"), None),
            (
                NextWindow,
                Some("the replica is 40 s behind"),
                Some("next-maintenance"),
            ),
            (Report, Some("the replica is 40 s behind"), None),
        ];
        for (policy, held, sent) in rows {
            let resource = Resource {
                identifier: "coffee".into(),
                arn: Some("arn:aws:rds:us-east-1:1:db:coffee"),
                status: "available",
                annotations: None,
                policy,
                listed: Some(&listed),
                previous: None,
                may_act: true,
                held: held.map(str::to_owned),
            };
            let (_, steps) = plan(&resource);
            let opt_in = steps.first().map(|(s, _)| s.apply.opt_in);
            assert_eq!(opt_in, sent, "{policy:?} {held:?}");
        }
    }
}
