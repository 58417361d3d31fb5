//! The IAM role rules both database kinds follow, written once and pure: a role the spec lists
//! that RDS does not show is associated; one the operator associated that the spec no longer lists
//! is removed; one associated outside the operator is reported and kept (ACK and Crossplane take
//! the spec as the whole list: a role someone added by hand for an S3 export would go). One call
//! a pass, removals first (RDS refuses a second association of a role ARN), only while the
//! database is available and nothing else is sent.

use crate::database::parts::RoleStatus;
use crate::database::spec::AssociatedRole;
use crate::rds_state::ObservedRole;

/// The call to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleCall {
    Add {
        role_arn: String,
        feature_name: Option<String>,
    },
    Remove {
        role_arn: String,
        feature_name: Option<String>,
    },
}

impl RoleCall {
    /// The Event's reason.
    pub fn reason(&self) -> &'static str {
        match self {
            RoleCall::Add { .. } => "AssociatingRole",
            RoleCall::Remove { .. } => "RemovingRole",
        }
    }

    /// The Event's note.
    pub fn note(&self) -> String {
        match self {
            RoleCall::Add {
                role_arn,
                feature_name,
            } => format!(
                "associating IAM role {role_arn} ({}) as spec.associatedRoles says",
                feature_name.as_deref().unwrap_or("no feature")
            ),
            RoleCall::Remove { role_arn, .. } => {
                format!("removing IAM role {role_arn}: spec.associatedRoles no longer lists it")
            }
        }
    }
}

/// What the rules make of a pass: the call, and the roles status is to list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RolePlan {
    pub call: Option<RoleCall>,
    pub status: Vec<RoleStatus>,
}

/// The roles of a pass: the spec's, what RDS shows, what status recorded, and whether a call may
/// be sent (available, not observe-only, nothing else sent).
pub fn plan(
    wanted: &[AssociatedRole],
    observed: &[ObservedRole],
    previous: &[RoleStatus],
    may_call: bool,
) -> RolePlan {
    let managed_before =
        |arn: &str| (previous.iter()).any(|r| r.role_arn == arn && r.managed == Some(true));
    let listed = |arn: &str| wanted.iter().find(|w| w.role_arn == arn);
    let same_feature = |w: &AssociatedRole, o: &ObservedRole| {
        w.feature_name.is_none() || w.feature_name == o.feature_name
    };
    let status = (observed.iter())
        .map(|o| RoleStatus {
            role_arn: o.role_arn.clone(),
            feature_name: o.feature_name.clone(),
            status: o.status.clone(),
            managed: (listed(&o.role_arn).is_some() || managed_before(&o.role_arn)).then_some(true),
        })
        .collect();
    // A role of ours the spec no longer lists, or lists for another feature, goes first.
    let remove = (observed.iter()).find(|o| {
        managed_before(&o.role_arn) && !listed(&o.role_arn).is_some_and(|w| same_feature(w, o))
    });
    let add = (wanted.iter())
        .find(|w| !(observed.iter()).any(|o| o.role_arn == w.role_arn && same_feature(w, o)));
    let call = match (remove, add) {
        _ if !may_call => None,
        (Some(o), _) => Some(RoleCall::Remove {
            role_arn: o.role_arn.clone(),
            feature_name: o.feature_name.clone(),
        }),
        (None, Some(w)) => Some(RoleCall::Add {
            role_arn: w.role_arn.clone(),
            feature_name: w.feature_name.clone(),
        }),
        (None, None) => None,
    };
    RolePlan { call, status }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "arn:aws:iam::123456789012:role/s3-import";
    const B: &str = "arn:aws:iam::123456789012:role/s3-export";

    fn want(arn: &str, feature: &str) -> AssociatedRole {
        AssociatedRole {
            role_arn: arn.into(),
            feature_name: Some(feature.into()),
        }
    }

    fn seen(arn: &str, feature: &str) -> ObservedRole {
        ObservedRole {
            role_arn: arn.into(),
            feature_name: Some(feature.into()),
            status: Some("ACTIVE".into()),
        }
    }

    fn ours(arn: &str) -> RoleStatus {
        RoleStatus {
            role_arn: arn.into(),
            managed: Some(true),
            ..Default::default()
        }
    }

    fn add(arn: &str, feature: &str) -> Option<RoleCall> {
        Some(RoleCall::Add {
            role_arn: arn.into(),
            feature_name: Some(feature.into()),
        })
    }

    fn remove(arn: &str, feature: &str) -> Option<RoleCall> {
        Some(RoleCall::Remove {
            role_arn: arn.into(),
            feature_name: Some(feature.into()),
        })
    }

    /// A row: its name, the spec's roles, RDS's, status's, whether a call may go, the call.
    type Case = (
        &'static str,
        Vec<AssociatedRole>,
        Vec<ObservedRole>,
        Vec<RoleStatus>,
        bool,
        Option<RoleCall>,
    );

    #[test]
    fn each_rule_decides_its_call() {
        let cases: Vec<Case> = vec![
            (
                "a listed role RDS lacks is added",
                vec![want(A, "s3Import")],
                vec![],
                vec![],
                true,
                add(A, "s3Import"),
            ),
            (
                "in sync: nothing",
                vec![want(A, "s3Import")],
                vec![seen(A, "s3Import")],
                vec![ours(A)],
                true,
                None,
            ),
            (
                "one at a time: the next pass adds the second",
                vec![want(A, "s3Import"), want(B, "s3Export")],
                vec![],
                vec![],
                true,
                add(A, "s3Import"),
            ),
            (
                "a role of ours the spec dropped is removed",
                vec![],
                vec![seen(A, "s3Import")],
                vec![ours(A)],
                true,
                remove(A, "s3Import"),
            ),
            (
                "a role added outside the operator is kept",
                vec![],
                vec![seen(B, "s3Export")],
                vec![],
                true,
                None,
            ),
            (
                "removals go first",
                vec![want(B, "s3Export")],
                vec![seen(A, "s3Import")],
                vec![ours(A)],
                true,
                remove(A, "s3Import"),
            ),
            (
                "another feature for our role: removed, then added",
                vec![want(A, "Lambda")],
                vec![seen(A, "s3Import")],
                vec![ours(A)],
                true,
                remove(A, "s3Import"),
            ),
            (
                "nothing is sent while RDS is busy or another call goes first",
                vec![want(A, "s3Import")],
                vec![],
                vec![],
                false,
                None,
            ),
        ];
        for (name, wanted, observed, previous, may_call, call) in cases {
            assert_eq!(
                plan(&wanted, &observed, &previous, may_call).call,
                call,
                "{name}"
            );
        }
    }

    #[test]
    fn status_lists_what_rds_shows_and_marks_the_operators() {
        let p = plan(
            &[want(A, "s3Import")],
            &[seen(A, "s3Import"), seen(B, "s3Export")],
            &[],
            true,
        );
        let managed: Vec<_> = p
            .status
            .iter()
            .map(|r| (r.role_arn.as_str(), r.managed))
            .collect();
        assert_eq!(managed, [(A, Some(true)), (B, None)]);
    }
}
