//! The pure plan of a DBParameterGroup: [`Facts`] in, [`Plan`] out. Which parameters to set (and
//! how RDS applies each: `immediate` for a dynamic one, `pending-reboot` for a static one, as the
//! family's catalog says), which to reset, tags, and what deletion does. Table tests below.

use kube::runtime::events::EventType;

use crate::managed::named::{self, NamedKind};
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::aws::Change;
use super::{Catalog, DBParameterGroup, Fields, ObservedParameterGroup, ParameterGroupKind};

/// RDS takes at most this many parameters in one ModifyDBParameterGroup or ResetDBParameterGroup.
pub const PER_CALL: usize = 20;

/// Everything a decision needs (of a DB parameter group; a DB cluster parameter group's are
/// `named::Facts<DBClusterParameterGroup>`, planned by the same rules).
pub type Facts = named::Facts<DBParameterGroup>;

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    Create {
        name: String,
        family: String,
        description: String,
        tags: std::collections::BTreeMap<String, String>,
    },
    /// ModifyDBParameterGroup: at most [`PER_CALL`] parameters, each with its apply method.
    Modify { name: String, changes: Vec<Change> },
    /// ResetDBParameterGroup of at most [`PER_CALL`] parameters.
    Reset { name: String, changes: Vec<Change> },
}

/// One call or write.
pub type Step = named::Step<Own>;

pub type Plan = named::NamedPlan<DBParameterGroup>;

fn status<K: ParameterGroupKind>(
    plan: &mut named::NamedPlan<K>,
    fields: Fields,
    ready: bool,
    synced: ConditionPlan,
) {
    let ready = match ready {
        true => ConditionPlan::new(
            true,
            "Available",
            "the group exists with the spec's parameters",
        ),
        false => synced.clone(),
    };
    // RDS reports no state of a parameter group: Reconciling follows Synced alone.
    plan.status = Some(KindStatus {
        fields: K::status_of(fields),
        ready,
        synced,
        busy: false,
    });
}

/// How RDS applies a change of this parameter: at once when the catalog says it is dynamic,
/// at the next reboot otherwise.
pub fn apply_method(catalog: &Catalog, parameter: &str) -> &'static str {
    match catalog.get(parameter).map(|p| p.apply_type.as_str()) {
        Some("dynamic") => "immediate",
        _ => "pending-reboot",
    }
}

/// The one decision of a reconcile, for either kind of parameter group.
pub fn plan<K: ParameterGroupKind>(f: &named::Facts<K>) -> named::NamedPlan<K> {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

/// Parameters the catalog does not know, or says cannot be changed.
fn refused<K: ParameterGroupKind>(f: &named::Facts<K>) -> Option<String> {
    let g = &f.object;
    let unknown: Vec<&str> = (g.parameters().keys())
        .filter(|k| !f.extra.contains_key(*k))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Some(format!(
            "RDS knows no parameter {} in family {}",
            unknown.join(", "),
            g.family()
        ));
    }
    let fixed: Vec<&str> = (g.parameters().keys())
        .filter(|k| f.extra.get(*k).is_some_and(|p| !p.modifiable))
        .map(String::as_str)
        .collect();
    (!fixed.is_empty()).then(|| format!("RDS does not let {} be changed", fixed.join(", ")))
}

fn apply<K: ParameterGroupKind>(
    f: &named::Facts<K>,
    mut plan: named::NamedPlan<K>,
    desired_tags: std::collections::BTreeMap<String, String>,
) -> named::NamedPlan<K> {
    let g = &f.object;
    let name = g.rds_name_of();
    let previous = NamedKind::status(g).cloned().unwrap_or_default();
    let mut fields = Fields {
        name: name.clone(),
        arn: f.observed.as_ref().and_then(|o| o.arn.clone()),
        applied_parameters: K::applied_parameters(&previous).to_vec(),
        applied_tag_keys: K::applied_tag_keys(&previous).to_vec(),
    };
    if let Some(message) = refused(f) {
        plan.requeue = Requeue::AwaitChange;
        // Counted as DBInstance counts a spec it refuses.
        plan.refusal = Some("InvalidSpec");
        return refuse::<K>(plan, fields, "InvalidParameters", message);
    }
    let empty = ObservedParameterGroup::default();
    let observed = match &f.observed {
        None => {
            plan.step(named::Step::Own(Own::Create {
                name: name.clone(),
                family: g.family().to_owned(),
                description: g.description().to_owned(),
                tags: desired_tags.clone(),
            }));
            plan.event(
                EventType::Normal,
                "Creating",
                "Create",
                format!("creating {} {name}", K::WHAT),
            );
            fields.applied_tag_keys = tags::keys(g.spec_tags());
            &empty
        }
        Some(o) if !named::owned(g, &o.tags) => {
            let message = named::name_in_use(g);
            fields.arn = None;
            return refuse::<K>(plan, fields, "NameInUse", message);
        }
        Some(o) => o,
    };
    let applied = fields.applied_parameters.clone();
    let mut changed = parameter_steps(f, observed, &applied, &mut plan);
    if f.observed.is_some() {
        let (tags_changed, applied) = named::retag(
            &mut plan,
            g,
            (&observed.tags, observed.arn.as_deref()),
            &desired_tags,
        );
        changed.extend(tags_changed);
        fields.applied_tag_keys = applied;
    }
    fields.applied_parameters = g.parameters().keys().cloned().collect();
    finish(f, plan, fields, &changed)
}

/// Refused before any call: Synced=False with `reason`, and a Warning Event.
fn refuse<K: ParameterGroupKind>(
    mut plan: named::NamedPlan<K>,
    fields: Fields,
    reason: &str,
    message: String,
) -> named::NamedPlan<K> {
    plan.event(EventType::Warning, reason, "Reconcile", message.clone());
    status::<K>(
        &mut plan,
        fields,
        false,
        ConditionPlan::new(false, reason, message),
    );
    plan
}

/// The parameters to set (differing from the spec) and to reset (set by the operator before, and
/// gone from the spec), each by the apply method of RDS's catalog, PER_CALL to a call; what
/// changes, in words.
fn parameter_steps<K: ParameterGroupKind>(
    f: &named::Facts<K>,
    observed: &ObservedParameterGroup,
    applied: &[String],
    plan: &mut named::NamedPlan<K>,
) -> Vec<String> {
    let g = &f.object;
    let name = g.rds_name_of();
    let sets: Vec<Change> = (g.parameters().iter())
        .filter(|(k, v)| observed.parameters.get(*k) != Some(v))
        .map(|(k, v)| {
            (
                k.clone(),
                Some(v.clone()),
                apply_method(&f.extra, k).to_owned(),
            )
        })
        .collect();
    let resets: Vec<Change> = (applied.iter())
        .filter(|k| !g.parameters().contains_key(*k) && observed.parameters.contains_key(*k))
        .map(|k| (k.clone(), None, apply_method(&f.extra, k).to_owned()))
        .collect();
    for chunk in sets.chunks(PER_CALL) {
        plan.step(named::Step::Own(Own::Modify {
            name: name.clone(),
            changes: chunk.to_vec(),
        }));
    }
    for chunk in resets.chunks(PER_CALL) {
        plan.step(named::Step::Own(Own::Reset {
            name: name.clone(),
            changes: chunk.to_vec(),
        }));
    }
    let describe = |changes: &[Change]| {
        (changes.iter())
            .map(|(k, v, m)| format!("{k}={} ({m})", v.as_deref().unwrap_or("default")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut changed = Vec::new();
    if !sets.is_empty() {
        changed.push(format!("set {}", describe(&sets)));
    }
    if !resets.is_empty() {
        changed.push(format!("reset {}", describe(&resets)));
    }
    changed
}

/// The status once the steps are planned: Synced when nothing changes, else Updating (Ready once
/// the group exists), looked at again soon.
fn finish<K: ParameterGroupKind>(
    f: &named::Facts<K>,
    mut plan: named::NamedPlan<K>,
    fields: Fields,
    changed: &[String],
) -> named::NamedPlan<K> {
    plan.report_changes(K::status_of(fields), f.observed.is_some(), changed, K::WHAT);
    plan
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::dbparametergroup::{DBParameterGroupSpec, DBParameterGroupStatus, ParameterInfo};
    use crate::managed::named::fixtures::{self, deleting, owner_tags, with};

    fn catalog() -> Arc<Catalog> {
        let info = |apply_type: &str, modifiable: bool| ParameterInfo {
            apply_type: apply_type.into(),
            modifiable,
        };
        let mut c = Catalog::new();
        c.insert("max_connections".into(), info("dynamic", true));
        c.insert("performance_schema".into(), info("static", true));
        c.insert("basedir".into(), info("static", false));
        for i in 0..30 {
            c.insert(format!("p{i:02}"), info("dynamic", true));
        }
        Arc::new(c)
    }

    fn facts() -> Facts {
        let spec = DBParameterGroupSpec {
            db_parameter_group_name: None,
            family: "mysql8.0".into(),
            description: "Coffee Manage".into(),
            parameters: [("max_connections".to_owned(), "200".to_owned())].into(),
            tags: vec![],
            ..Default::default()
        };
        fixtures::facts(DBParameterGroup::new("coffee", spec), catalog())
    }

    fn ours(parameters: &[(&str, &str)]) -> ObservedParameterGroup {
        ObservedParameterGroup {
            name: "coffee".into(),
            arn: Some("arn:aws:rds:us-east-1:123456789012:pg:coffee".into()),
            family: "mysql8.0".into(),
            parameters: parameters
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tags: owner_tags(),
        }
    }

    fn outline(p: &Plan) -> (Vec<&'static str>, String) {
        let names = (p.steps.iter())
            .map(|s| match s {
                Step::AddFinalizer => "AddFinalizer",
                Step::Own(Own::Create { .. }) => "Create",
                Step::Own(Own::Modify { .. }) => "Modify",
                Step::Own(Own::Reset { .. }) => "Reset",
                Step::AddTags { .. } => "AddTags",
                Step::RemoveTags { .. } => "RemoveTags",
                Step::Delete { .. } => "Delete",
                Step::RemoveFinalizer => "RemoveFinalizer",
            })
            .collect();
        (
            names,
            p.status
                .as_ref()
                .map(|s| s.synced.reason.clone())
                .unwrap_or_default(),
        )
    }

    #[test]
    fn rules() {
        let many: BTreeMap<String, String> = (0..30)
            .map(|i| (format!("p{i:02}"), "1".to_owned()))
            .collect();
        let table: Vec<(&str, Facts, Vec<&str>, &str)> = vec![
            (
                "absent: created with its parameters",
                facts(),
                vec!["Create", "Modify"],
                "Updating",
            ),
            (
                "in sync: nothing sent",
                with(facts(), |f| {
                    f.observed = Some(ours(&[("max_connections", "200")]))
                }),
                vec![],
                "Synced",
            ),
            (
                "changed outside the operator: put back",
                with(facts(), |f| {
                    f.observed = Some(ours(&[("max_connections", "50")]))
                }),
                vec!["Modify"],
                "Updating",
            ),
            (
                "30 parameters: two calls of at most 20",
                with(facts(), |f| {
                    f.object.spec.parameters = many.clone();
                    f.observed = Some(ours(&[]));
                }),
                vec!["Modify", "Modify"],
                "Updating",
            ),
            (
                "a parameter that left the spec is reset",
                with(facts(), |f| {
                    f.object.status = Some(DBParameterGroupStatus {
                        applied_parameters: vec![
                            "max_connections".into(),
                            "performance_schema".into(),
                        ],
                        ..Default::default()
                    });
                    f.observed = Some(ours(&[
                        ("max_connections", "200"),
                        ("performance_schema", "1"),
                    ]));
                }),
                vec!["Reset"],
                "Updating",
            ),
            (
                "one set by someone else and never by the operator is left",
                with(facts(), |f| {
                    f.observed = Some(ours(&[
                        ("max_connections", "200"),
                        ("performance_schema", "1"),
                    ]));
                }),
                vec![],
                "Synced",
            ),
            (
                "an unknown parameter is refused, nothing sent",
                with(facts(), |f| {
                    f.object
                        .spec
                        .parameters
                        .insert("max_conections".into(), "1".into());
                    f.observed = Some(ours(&[]));
                }),
                vec![],
                "InvalidParameters",
            ),
            (
                "a parameter RDS does not let change is refused",
                with(facts(), |f| {
                    f.object
                        .spec
                        .parameters
                        .insert("basedir".into(), "/tmp".into());
                }),
                vec![],
                "InvalidParameters",
            ),
            (
                "someone else's group of that name is never touched",
                with(facts(), |f| {
                    let mut o = ours(&[]);
                    o.tags.clear();
                    f.observed = Some(o);
                }),
                vec![],
                "NameInUse",
            ),
            (
                "deleting ours deletes it",
                deleting(with(facts(), |f| f.observed = Some(ours(&[])))),
                vec!["Delete", "RemoveFinalizer"],
                "",
            ),
            (
                "deleting waits while a DBInstance refers to it",
                deleting(with(facts(), |f| {
                    f.observed = Some(ours(&[]));
                    f.referrers = vec!["DBInstance coffee-db".into()];
                })),
                vec![],
                "InUse",
            ),
        ];
        for (name, facts, steps, reason) in table {
            let p = plan(&facts);
            assert_eq!(outline(&p), (steps, reason.to_owned()), "case: {name}");
            // A spec RDS would refuse counts as a refused reconcile, as for DBInstance; a name in
            // use is reported, like IdentifierInUse, without one.
            let refusal = (reason == "InvalidParameters").then_some("InvalidSpec");
            assert_eq!(p.refusal, refusal, "case: {name}");
        }
    }

    #[test]
    fn each_parameter_is_applied_as_the_catalog_says() {
        let f = with(facts(), |f| {
            f.object
                .spec
                .parameters
                .insert("performance_schema".into(), "1".into());
            f.observed = Some(ours(&[]));
        });
        assert_eq!(
            plan(&f).steps,
            vec![Step::Own(Own::Modify {
                name: "coffee".into(),
                changes: vec![
                    (
                        "max_connections".into(),
                        Some("200".into()),
                        "immediate".into()
                    ),
                    (
                        "performance_schema".into(),
                        Some("1".into()),
                        "pending-reboot".into()
                    ),
                ],
            })]
        );
    }
}
