//! The pure plan of a DBSubnetGroup: [`Facts`] in, [`Plan`] out. Whose group the name is, what
//! differs (description, subnets, tags), and what deletion does. Table tests below.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::runtime::events::EventType;

use crate::managed::named;
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::{DBSubnetGroup, DBSubnetGroupStatus, ObservedSubnetGroup};

/// Everything a decision needs.
pub type Facts = named::Facts<DBSubnetGroup>;

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    Create {
        name: String,
        description: String,
        subnet_ids: Vec<String>,
        tags: BTreeMap<String, String>,
    },
    /// ModifyDBSubnetGroup, with the whole subnet list.
    Modify {
        name: String,
        description: String,
        subnet_ids: Vec<String>,
    },
}

/// One call or write.
pub type Step = named::Step<Own>;

/// What one reconcile does and reports.
pub type Plan = named::NamedPlan<DBSubnetGroup>;

/// The status to write: Ready says whether the group exists as RDS reports it (Complete), Synced
/// whether this reconcile found it as the spec says; Reconciling also while RDS reports the group
/// in another state.
fn status(plan: &mut Plan, fields: DBSubnetGroupStatus, ok: bool, reason: &str, message: String) {
    let synced = ConditionPlan::new(ok, reason, message);
    let ready = match fields.state.as_deref() {
        Some("Complete") if ok => synced.clone(),
        Some("Complete") => ConditionPlan::new(true, "Available", "the group exists"),
        _ => synced.clone(),
    };
    let busy = fields.state.as_deref().is_some_and(|s| s != "Complete");
    plan.status = Some(KindStatus {
        fields,
        ready,
        synced,
        busy,
    });
}

fn sorted(ids: &[String]) -> Vec<String> {
    let mut ids = ids.to_vec();
    ids.sort();
    ids.dedup();
    ids
}

/// The status fields that come from the observed group.
fn observed_fields(g: &DBSubnetGroup, o: &ObservedSubnetGroup) -> DBSubnetGroupStatus {
    DBSubnetGroupStatus {
        db_subnet_group_name: Some(o.name.clone()),
        arn: o.arn.clone(),
        vpc_id: o.vpc_id.clone(),
        state: Some(o.state.clone()),
        subnets: o.subnets.clone(),
        applied_tag_keys: (g.status.as_ref())
            .map(|s| s.applied_tag_keys.clone())
            .unwrap_or_default(),
        ..Default::default()
    }
}

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| {
        apply(&f.object, f.observed.as_ref(), plan, desired)
    })
}

fn apply(
    g: &DBSubnetGroup,
    observed: Option<&ObservedSubnetGroup>,
    mut plan: Plan,
    desired_tags: BTreeMap<String, String>,
) -> Plan {
    let Some(o) = observed else {
        return create(g, plan, desired_tags);
    };
    let mut fields = observed_fields(g, o);
    if !named::owned(g, &o.tags) {
        let message = named::name_in_use(g);
        plan.event(
            EventType::Warning,
            "NameInUse",
            "Reconcile",
            message.clone(),
        );
        fields.state = None;
        status(&mut plan, fields, false, "NameInUse", message);
        return plan;
    }
    let mut changed = modification(g, o, &mut plan);
    let (tags_changed, applied) =
        named::retag(&mut plan, g, (&o.tags, o.arn.as_deref()), &desired_tags);
    changed.extend(tags_changed);
    fields.applied_tag_keys = applied;
    if changed.is_empty() {
        let message = "the DB subnet group matches the spec".into();
        status(&mut plan, fields, true, "Synced", message);
    } else {
        let note = format!("sent to RDS: {}", changed.join("; "));
        plan.event(EventType::Normal, "Updating", "Update", note.clone());
        status(&mut plan, fields, false, "Updating", note);
        plan.requeue = Requeue::After(Duration::from_secs(1));
    }
    plan
}

/// RDS has no group of that name: create it, tagged.
fn create(g: &DBSubnetGroup, mut plan: Plan, tags: BTreeMap<String, String>) -> Plan {
    let name = g.name_in_rds();
    plan.step(Step::Own(Own::Create {
        name: name.clone(),
        description: g.spec.description.clone(),
        subnet_ids: sorted(&g.spec.subnet_ids),
        tags,
    }));
    plan.event(
        EventType::Normal,
        "Creating",
        "Create",
        format!("creating DB subnet group {name}"),
    );
    let fields = DBSubnetGroupStatus {
        db_subnet_group_name: Some(name),
        applied_tag_keys: tags::keys(&g.spec.tags),
        ..Default::default()
    };
    plan.requeue = Requeue::After(Duration::from_secs(1));
    status(
        &mut plan,
        fields,
        false,
        "Creating",
        "the DB subnet group is being created".into(),
    );
    plan
}

/// The ModifyDBSubnetGroup that puts the description and subnets right, when they differ; what
/// changed, in words.
fn modification(g: &DBSubnetGroup, o: &ObservedSubnetGroup, plan: &mut Plan) -> Vec<String> {
    let mut changed = Vec::new();
    let observed_ids = sorted(
        &o.subnets
            .iter()
            .map(|s| s.subnet_id.clone())
            .collect::<Vec<_>>(),
    );
    let subnets_differ = observed_ids != sorted(&g.spec.subnet_ids);
    if subnets_differ {
        changed.push(format!(
            "subnetIDs: {} -> {}",
            observed_ids.join(","),
            sorted(&g.spec.subnet_ids).join(",")
        ));
    }
    if o.description != g.spec.description {
        changed.push(format!(
            "description: {:?} -> {:?}",
            o.description, g.spec.description
        ));
    }
    if !changed.is_empty() {
        plan.step(Step::Own(Own::Modify {
            name: g.name_in_rds(),
            description: g.spec.description.clone(),
            subnet_ids: sorted(&g.spec.subnet_ids),
        }));
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbsubnetgroup::{DBSubnetGroupSpec, SubnetStatus};
    use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

    const ARN: &str = "arn:aws:rds:us-east-1:123456789012:subgrp:coffee";

    fn facts() -> Facts {
        let spec = DBSubnetGroupSpec {
            db_subnet_group_name: None,
            description: "Coffee Manage".into(),
            subnet_ids: vec!["subnet-b".into(), "subnet-a".into()],
            tags: vec![],
            ..Default::default()
        };
        fixtures::facts(DBSubnetGroup::new("coffee", spec), ())
    }

    fn ours() -> ObservedSubnetGroup {
        ObservedSubnetGroup {
            name: "coffee".into(),
            arn: Some(ARN.into()),
            description: "Coffee Manage".into(),
            vpc_id: Some("vpc-1".into()),
            state: "Complete".into(),
            subnets: ["subnet-a", "subnet-b"]
                .map(|s| SubnetStatus {
                    subnet_id: s.into(),
                    availability_zone: "us-east-1a".into(),
                    status: "Active".into(),
                })
                .to_vec(),
            tags: owner_tags(),
        }
    }

    fn names(p: &Plan) -> Vec<&'static str> {
        p.steps
            .iter()
            .map(|s| match s {
                Step::AddFinalizer => "AddFinalizer",
                Step::Own(Own::Create { .. }) => "Create",
                Step::Own(Own::Modify { .. }) => "Modify",
                Step::AddTags { .. } => "AddTags",
                Step::RemoveTags { .. } => "RemoveTags",
                Step::Delete { .. } => "Delete",
                Step::RemoveFinalizer => "RemoveFinalizer",
            })
            .collect()
    }

    fn reason(p: &Plan) -> String {
        p.status
            .as_ref()
            .map(|s| s.synced.reason.clone())
            .unwrap_or_default()
    }

    #[test]
    fn rules() {
        let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
            (
                "absent: created, with the finalizer first",
                with(facts(), |f| f.object.metadata.finalizers = None),
                vec!["AddFinalizer", "Create"],
                "Creating",
            ),
            (
                "in sync: nothing is sent, whatever the subnets' order",
                with(facts(), |f| f.observed = Some(ours())),
                vec![],
                "Synced",
            ),
            (
                "a subnet changed outside: the spec's list is sent",
                with(facts(), |f| {
                    let mut o = ours();
                    o.subnets.pop();
                    f.observed = Some(o);
                }),
                vec!["Modify"],
                "Updating",
            ),
            (
                "a description changed outside: sent",
                with(facts(), |f| {
                    let mut o = ours();
                    o.description = "edited".into();
                    f.observed = Some(o);
                }),
                vec!["Modify"],
                "Updating",
            ),
            (
                "a new spec tag is added; others' tags are left",
                with(facts(), |f| {
                    f.object.spec.tags = vec![crate::dbinstance::Tag {
                        key: "app".into(),
                        value: "coffee".into(),
                    }];
                    let mut o = ours();
                    o.tags.insert("cost-center".into(), "42".into());
                    f.observed = Some(o);
                }),
                vec!["AddTags"],
                "Updating",
            ),
            (
                "a tag the operator applied that left the spec is removed",
                with(facts(), |f| {
                    f.object.status = Some(DBSubnetGroupStatus {
                        applied_tag_keys: vec!["app".into()],
                        ..Default::default()
                    });
                    let mut o = ours();
                    o.tags.insert("app".into(), "coffee".into());
                    f.observed = Some(o);
                }),
                vec!["RemoveTags"],
                "Updating",
            ),
            (
                "someone else's group of that name is never touched",
                with(facts(), |f| {
                    let mut o = ours();
                    o.tags.clear();
                    f.observed = Some(o);
                }),
                vec![],
                "NameInUse",
            ),
            (
                "deleting ours deletes it, then lets go",
                deleting(with(facts(), |f| f.observed = Some(ours()))),
                vec!["Delete", "RemoveFinalizer"],
                "",
            ),
            (
                "deleting waits while a DBInstance refers to it",
                deleting(with(facts(), |f| {
                    f.observed = Some(ours());
                    f.referrers = vec!["DBInstance coffee".into()];
                })),
                vec![],
                "InUse",
            ),
            (
                "deleting someone else's group only lets go",
                deleting(with(facts(), |f| {
                    let mut o = ours();
                    o.tags.clear();
                    f.observed = Some(o);
                })),
                vec!["RemoveFinalizer"],
                "",
            ),
            (
                "deleting a group already gone lets go",
                deleting(facts()),
                vec!["RemoveFinalizer"],
                "",
            ),
        ];
        for (name, facts, steps, expected_reason) in table {
            let p = plan(&facts);
            assert_eq!(
                (names(&p), reason(&p)),
                (steps, expected_reason.to_owned()),
                "case: {name}"
            );
        }
    }

    #[test]
    fn the_modification_carries_the_whole_sorted_subnet_list() {
        let f = with(facts(), |f| {
            let mut o = ours();
            o.subnets.pop();
            f.observed = Some(o);
        });
        assert_eq!(
            plan(&f).steps,
            vec![Step::Own(Own::Modify {
                name: "coffee".into(),
                description: "Coffee Manage".into(),
                subnet_ids: vec!["subnet-a".into(), "subnet-b".into()],
            })]
        );
    }

    /// Reconciling follows RDS's state of the group as well as Synced: (RDS state, Ready, Synced
    /// reason, Reconciling) once settled into conditions.
    #[test]
    fn reconciling_follows_the_state_rds_reports() {
        let table = [
            ("Complete", "True", "Synced", "False"),
            ("Incomplete", "True", "Synced", "True"),
        ];
        for (state, ready, synced, reconciling) in table {
            let f = with(facts(), |f| {
                let mut o = ours();
                o.state = state.into();
                f.observed = Some(o);
            });
            let p = plan(&f);
            let status = crate::managed::named::settled::<DBSubnetGroup>(
                None,
                p.status.as_ref().expect("a status"),
                Some(1),
                &f.now,
            );
            let of = |type_: &str| {
                let c = status
                    .reported
                    .conditions
                    .iter()
                    .find(|c| c.type_ == type_)
                    .unwrap();
                (c.status.clone(), c.reason.clone())
            };
            assert_eq!(
                (of("Ready").0, of("Synced").1, of("Reconciling").0),
                (ready.to_owned(), synced.to_owned(), reconciling.to_owned()),
                "state {state}"
            );
        }
    }
}
