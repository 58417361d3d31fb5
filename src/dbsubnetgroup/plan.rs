//! The pure plan of a DBSubnetGroup: [`Facts`] in, [`Plan`] out. Whose group the name is, what
//! differs (description, subnets, tags), and what deletion does. Table tests below.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::runtime::events::EventType;

use crate::dbinstance::has_finalizer;
use crate::dbinstance::plan::{ConditionPlan, Requeue};
use crate::managed::{self, KindPlan};
use crate::tags;

use super::{DBSubnetGroup, DBSubnetGroupStatus, ObservedSubnetGroup};

/// Everything a decision needs.
#[derive(Clone, Debug)]
pub struct Facts {
    pub group: DBSubnetGroup,
    /// The group with that name in RDS, with its tags.
    pub observed: Option<ObservedSubnetGroup>,
    /// At deletion: the DBInstances of the namespace whose dbSubnetGroupRef names this group.
    pub referrers: Vec<String>,
    /// How often to look again once in sync.
    pub drift_interval: Duration,
}

/// One call or write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    AddFinalizer,
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
    AddTags {
        arn: String,
        tags: BTreeMap<String, String>,
    },
    RemoveTags {
        arn: String,
        keys: Vec<String>,
    },
    Delete {
        name: String,
    },
    RemoveFinalizer,
}

/// What one reconcile does and reports.
pub type Plan = KindPlan<Step, DBSubnetGroupStatus>;

/// The status to write: Ready says whether the group exists as RDS reports it (Complete), Synced
/// whether this reconcile found it as the spec says.
fn status(plan: &mut Plan, fields: DBSubnetGroupStatus, ok: bool, reason: &str, message: String) {
    let synced = ConditionPlan::new(ok, reason, message);
    let ready = match fields.state.as_deref() {
        Some("Complete") if ok => synced.clone(),
        Some("Complete") => ConditionPlan::new(true, "Available", "the group exists"),
        _ => synced.clone(),
    };
    plan.status = Some((fields, ready, synced));
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
    match f.group.metadata.deletion_timestamp.is_some() {
        true => delete(f),
        false => apply(f),
    }
}

fn owned(f: &Facts, o: &ObservedSubnetGroup) -> bool {
    tags::owned_by(&o.tags, f.group.metadata.uid.as_deref().unwrap_or_default())
}

fn apply(f: &Facts) -> Plan {
    let g = &f.group;
    let name = g.group_name();
    let mut plan = Plan::new(Requeue::After(f.drift_interval));
    if !has_finalizer(&g.metadata) {
        plan.steps.push(Step::AddFinalizer);
    }
    let uid = g.metadata.uid.as_deref().unwrap_or_default();
    let namespace = g.metadata.namespace.as_deref().unwrap_or_default();
    let desired_tags = tags::with_owner(
        &g.spec.tags,
        uid,
        namespace,
        &g.metadata.name.clone().unwrap_or_default(),
    );
    let Some(o) = &f.observed else {
        return create(g, plan, desired_tags);
    };
    let mut fields = observed_fields(g, o);
    if !owned(f, o) {
        let message = format!(
            "a DB subnet group named {name} already exists and is not managed by this DBSubnetGroup; \
             choose another dbSubnetGroupName"
        );
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
    let managed = (g.status.as_ref())
        .map(|s| s.applied_tag_keys.clone())
        .unwrap_or_default();
    let arn = o.arn.clone().unwrap_or_default();
    changed.extend(managed::tag_steps(
        &mut plan,
        &o.tags,
        &desired_tags,
        &managed,
        |tags| Step::AddTags {
            arn: arn.clone(),
            tags,
        },
        |keys| Step::RemoveTags {
            arn: arn.clone(),
            keys,
        },
    ));
    fields.applied_tag_keys = tags::applied(&g.spec.tags, &o.tags, &managed);
    if changed.is_empty() {
        status(
            &mut plan,
            fields,
            true,
            "Synced",
            "the DB subnet group matches the spec".into(),
        );
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
    let name = g.group_name();
    plan.steps.push(Step::Create {
        name: name.clone(),
        description: g.spec.description.clone(),
        subnet_ids: sorted(&g.spec.subnet_ids),
        tags,
    });
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
        plan.steps.push(Step::Modify {
            name: g.group_name(),
            description: g.spec.description.clone(),
            subnet_ids: sorted(&g.spec.subnet_ids),
        });
    }
    changed
}

fn delete(f: &Facts) -> Plan {
    // RDS refuses while an instance uses the group (InvalidDBSubnetGroupStateFault):
    // reported, with backoff, and retried.
    let ours = f.observed.as_ref().map(|o| owned(f, o));
    let steps = (
        Step::Delete {
            name: f.group.group_name(),
        },
        Step::RemoveFinalizer,
    );
    let (what, drift) = ("DB subnet group", f.drift_interval);
    managed::deletion(&f.group, &f.referrers, ours, steps, what, drift)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dbinstance::{FINALIZER, OWNER_NAME_TAG, OWNER_TAG};
    use crate::dbsubnetgroup::{DBSubnetGroupSpec, SubnetStatus};

    const UID: &str = "uid-1";
    const ARN: &str = "arn:aws:rds:us-east-1:123456789012:subgrp:coffee";

    fn facts() -> Facts {
        let mut group = DBSubnetGroup::new(
            "coffee",
            DBSubnetGroupSpec {
                db_subnet_group_name: None,
                description: "Coffee Manage".into(),
                subnet_ids: vec!["subnet-b".into(), "subnet-a".into()],
                tags: vec![],
            },
        );
        group.metadata.namespace = Some("shop".into());
        group.metadata.uid = Some(UID.into());
        group.metadata.finalizers = Some(vec![FINALIZER.into()]);
        Facts {
            group,
            observed: None,
            referrers: vec![],
            drift_interval: Duration::from_secs(60),
        }
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
            tags: [
                (OWNER_TAG.to_owned(), UID.to_owned()),
                (OWNER_NAME_TAG.to_owned(), "shop/coffee".to_owned()),
            ]
            .into(),
        }
    }

    fn with(mut f: Facts, change: impl FnOnce(&mut Facts)) -> Facts {
        change(&mut f);
        f
    }

    fn names(p: &Plan) -> Vec<&'static str> {
        p.steps
            .iter()
            .map(|s| match s {
                Step::AddFinalizer => "AddFinalizer",
                Step::Create { .. } => "Create",
                Step::Modify { .. } => "Modify",
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
            .map(|s| s.2.reason.clone())
            .unwrap_or_default()
    }

    #[test]
    fn rules() {
        let deleting = |f: Facts| {
            with(f, |f| {
                f.group.metadata.deletion_timestamp =
                    Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
                    ))
            })
        };
        let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
            (
                "absent: created, with the finalizer first",
                with(facts(), |f| f.group.metadata.finalizers = None),
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
                    f.group.spec.tags = vec![crate::dbinstance::Tag {
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
                    f.group.status = Some(DBSubnetGroupStatus {
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
                    f.referrers = vec!["coffee".into()];
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
            vec![Step::Modify {
                name: "coffee".into(),
                description: "Coffee Manage".into(),
                subnet_ids: vec!["subnet-a".into(), "subnet-b".into()],
            }]
        );
    }
}
