//! The pure plan of an OptionGroup: [`Facts`] in, [`Plan`] out. Which options to include (missing
//! from RDS's group, or different from the spec in a setting the spec names, a port, a version or
//! security groups) and which to remove (set by the operator before and gone from the spec), tags,
//! and what deletion does (the group kinds' rules: wait while a DBInstance refers to it). Table
//! tests below.

use std::collections::BTreeMap;

use kube::runtime::events::EventType;

use crate::managed::named::{self, NamedKind};
use crate::managed::plan::KindStatus;
use crate::managed::tags;

use super::{ObservedOption, ObservedOptionGroup, OptionGroup, OptionGroupStatus, OptionSpec};

pub type Facts = named::Facts<OptionGroup>;

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    /// CreateOptionGroup, tagged (it takes no options: they follow in a Modify).
    Create {
        name: String,
        engine: String,
        major_version: String,
        description: String,
        tags: BTreeMap<String, String>,
    },
    /// ModifyOptionGroup: the options to add or change, whole, and those to remove.
    Modify {
        name: String,
        include: Vec<OptionSpec>,
        remove: Vec<String>,
        apply_immediately: bool,
    },
}

pub type Step = named::Step<Own>;
pub type Plan = named::NamedPlan<OptionGroup>;

/// The one decision of a reconcile.
pub fn plan(f: &Facts) -> Plan {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn apply(f: &Facts, mut plan: Plan, desired_tags: BTreeMap<String, String>) -> Plan {
    let g = &f.object;
    let name = g.name_in_rds();
    let previous = NamedKind::status(g).cloned().unwrap_or_default();
    let mut fields = OptionGroupStatus {
        option_group_name: Some(name.clone()),
        applied_options: previous.applied_options.clone(),
        applied_tag_keys: previous.applied_tag_keys.clone(),
        ..Default::default()
    };
    let empty = ObservedOptionGroup::default();
    let observed = match &f.observed {
        None => {
            plan.step(named::Step::Own(Own::Create {
                name: name.clone(),
                engine: g.spec.engine_name.clone(),
                major_version: g.spec.major_engine_version.clone(),
                description: g.spec.description.clone(),
                tags: desired_tags.clone(),
            }));
            plan.event(
                EventType::Normal,
                "Creating",
                "Create",
                format!("creating option group {name}"),
            );
            fields.applied_tag_keys = tags::keys(&g.spec.tags);
            &empty
        }
        Some(o) if !named::owned(g, &o.tags) => {
            let synced = named::refuse_name_in_use(g, &mut plan);
            plan.status = Some(KindStatus {
                fields,
                ready: synced.clone(),
                synced,
                busy: false,
            });
            return plan;
        }
        Some(o) => o,
    };
    fields.arn = observed.arn.clone();
    fields.options = observed.options.keys().cloned().collect();
    let mut changed = options(g, observed, &previous.applied_options, &mut plan);
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
    fields.applied_options = g.spec.options.iter().map(|o| o.name.clone()).collect();
    plan.report_changes(fields, f.observed.is_some(), &changed, "option group");
    plan
}

/// The ModifyOptionGroup that brings RDS's options to the spec's, if any: what it changes, in
/// words.
fn options(
    g: &OptionGroup,
    observed: &ObservedOptionGroup,
    applied: &[String],
    plan: &mut Plan,
) -> Vec<String> {
    let include: Vec<OptionSpec> = (g.spec.options.iter())
        .filter(|o| differs(observed.options.get(&o.name), o))
        .cloned()
        .collect();
    let remove: Vec<String> = (applied.iter())
        .filter(|name| !g.spec.options.iter().any(|o| &o.name == *name))
        .filter(|name| observed.options.contains_key(*name))
        .cloned()
        .collect();
    let mut changed = Vec::new();
    if !include.is_empty() {
        let names: Vec<&str> = include.iter().map(|o| o.name.as_str()).collect();
        changed.push(format!("include {}", names.join(", ")));
    }
    if !remove.is_empty() {
        changed.push(format!("remove {}", remove.join(", ")));
    }
    if !changed.is_empty() {
        plan.step(named::Step::Own(Own::Modify {
            name: g.name_in_rds(),
            include,
            remove,
            apply_immediately: g.spec.apply_immediately,
        }));
    }
    changed
}

/// Whether RDS's option (None: absent) differs from the spec's in what the spec says: a setting
/// it names, its port, its version, its security groups. Settings the spec leaves out keep RDS's
/// values.
fn differs(observed: Option<&ObservedOption>, want: &OptionSpec) -> bool {
    let Some(o) = observed else {
        return true;
    };
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    (want.settings.iter()).any(|(k, v)| o.settings.get(k) != Some(v))
        || want.port.is_some_and(|p| o.port != Some(p))
        || (want.version.as_ref()).is_some_and(|v| o.version.as_ref() != Some(v))
        || (!want.vpc_security_group_ids.is_empty()
            && sorted(&want.vpc_security_group_ids) != sorted(&o.vpc_security_group_ids))
}

#[cfg(test)]
mod tests;
