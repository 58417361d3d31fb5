//! The blue/green planning rules both database kinds follow, written once over the shared step
//! vocabulary: a deployment RDS has is reported in each state and switched over once approved and
//! AVAILABLE; one is made only once none was found, no old instance or cluster is kept, RDS
//! supports it and the source is available; a deletion of the object deletes its deployment first.
//! What differs stays with the kind: which changes a deployment carries and its targets, why RDS
//! would refuse one, the old one's retention, and the leftovers' deletion.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::events::EventType;

use super::Noun;
use crate::database::blue_green::{
    self as shared, Call, DeploymentStatus, SWITCHOVER_ANNOTATION, Stage,
};
use crate::database::parts::{FieldDrift, describe_fields};
use crate::database::spec::Upgrade;
use crate::database::step::Step;
use crate::managed::plan::Steps;
use crate::rds_state::{BlueGreenTargets, ObservedDeployment, PollIntervals};

/// Our instance or cluster, as the rules see it.
pub struct Subject<'a> {
    /// Its RDS identifier.
    pub identifier: String,
    pub noun: Noun,
    pub upgrade: &'a Upgrade,
    pub annotations: Option<&'a BTreeMap<String, String>>,
    /// The deployment as status recorded it before this reconcile.
    pub previous: Option<&'a DeploymentStatus>,
    /// The deployment as this reconcile's status is to record it, and the old instance or cluster
    /// it records after the switchover.
    pub current: Option<(&'a DeploymentStatus, Option<&'a str>)>,
    /// Green's replica lag in seconds as CloudWatch last said (None: not known).
    pub green_lag: Option<f64>,
}

impl<'a> Subject<'a> {
    /// The object `meta` (its identifier in RDS, its spec's `upgrade`), with the deployment status
    /// recorded before this reconcile and, with the old one, the one it is to record.
    pub fn new(
        (identifier, noun): (String, Noun),
        upgrade: &'a Upgrade,
        meta: &'a ObjectMeta,
        (previous, current): (
            Option<&'a DeploymentStatus>,
            Option<(&'a DeploymentStatus, Option<&'a str>)>,
        ),
    ) -> Self {
        Subject {
            identifier,
            noun,
            upgrade,
            annotations: meta.annotations.as_ref(),
            previous,
            current,
            green_lag: None,
        }
    }

    /// With green's replica lag as the health poll read it.
    pub fn lagging(mut self, green_lag: Option<f64>) -> Self {
        self.green_lag = green_lag;
        self
    }
}

/// Why an approved switchover waits for green to catch up (None: it may go): with
/// `upgrade.maxLagSeconds` set, while green's replica lag is over it, not known, or -1
/// (`health::lag_hold`).
pub fn lag_hold(max: Option<i32>, lag: Option<f64>) -> Option<String> {
    let what = ("green", "blue", "the approved switchover");
    crate::database::health::lag_hold(max, lag, what)
}

/// What the kind reports while the rules hold its plan: Synced False with `reason`, looked at again
/// at the busy interval, or the settled one when only a person or RDS can move it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub reason: String,
    pub message: String,
    pub busy: bool,
}

impl Report {
    /// When to look again: at the busy interval, or the settled one.
    pub fn after(&self, intervals: &PollIntervals) -> std::time::Duration {
        match self.busy {
            true => intervals.busy,
            false => intervals.settled,
        }
    }

    fn new(reason: impl Into<String>, message: String, busy: bool) -> Self {
        Report {
            reason: reason.into(),
            message,
            busy,
        }
    }
}

/// What a deployment RDS has means for the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// The plan holds: report this.
    Report(Report),
    /// Switched over: the old one's retention is the kind's to plan.
    Completed,
}

/// The rules of a deployment RDS has, up to its switchover: reported in each state (an Event for a
/// failure when it is new), switched over once approved and AVAILABLE (the annotation that
/// approved it removed), else reported as waiting for approval.
pub fn deployment<S, M, O>(
    plan: &mut impl Steps<Step<S, M, O>>,
    who: &Subject,
    d: &ObservedDeployment,
) -> Held {
    let id = &d.identifier;
    let new_state = who.previous.map(|p| p.status.as_str()) != Some(d.status.as_str());
    match shared::stage(d) {
        Stage::Report {
            reason,
            message,
            busy,
            warning,
        } => {
            if warning && new_state {
                plan.event(EventType::Warning, reason, "Update", message.clone());
            }
            Held::Report(Report::new(reason, message, busy))
        }
        Stage::Available if shared::approved(who.upgrade, who.annotations, id) => {
            if let Some(message) = lag_hold(who.upgrade.max_lag_seconds, who.green_lag) {
                let message = format!("blue/green deployment {id}: {message}");
                return Held::Report(Report::new("SwitchoverWaitingForLag", message, true));
            }
            plan.push(Step::BlueGreen {
                identifier: who.identifier.clone(),
                call: Call::Switchover {
                    deployment: id.clone(),
                    timeout: who.upgrade.switchover_timeout,
                },
            });
            if shared::annotation(who.annotations).is_some() {
                plan.push(Step::ClearAnnotation(SWITCHOVER_ANNOTATION));
            }
            let note = format!(
                "switching over blue/green deployment {id}: {}",
                recorded(who)
            );
            plan.event(EventType::Normal, "SwitchingOver", "Update", note.clone());
            Held::Report(Report::new("SwitchingOver", note, true))
        }
        Stage::Available => {
            let message = format!(
                "blue/green deployment {id} is AVAILABLE: green carries {}; approve the switchover \
                 with spec.switchover: {id} or the annotation {SWITCHOVER_ANNOTATION}: \"true\"",
                recorded(who)
            );
            if new_state {
                let note = message.clone();
                plan.event(EventType::Normal, "SwitchoverReady", "Update", note);
            }
            Held::Report(Report::new("SwitchoverAwaitingApproval", message, false))
        }
        Stage::Completed => {
            if new_state {
                let old = who.current.and_then(|(_, old)| old).unwrap_or_default();
                let note = format!(
                    "blue/green deployment {id} switched over; the old {} {old} is kept",
                    who.noun.word
                );
                plan.event(EventType::Normal, "SwitchedOver", "Update", note);
            }
            Held::Completed
        }
    }
}

/// What the source RDS reports, for [`refusal`].
pub struct Source<'a> {
    /// The state RDS reports (available, modifying...).
    pub status: &'a str,
    /// Why RDS would refuse a deployment of it, if it would.
    pub unsupported: Option<&'static str>,
}

/// Why no deployment is made now of the changes it would carry (None: make one): none is made
/// before a read of this reconcile found none (`looked`), while the old one of the last switchover
/// is kept, when RDS would refuse it, or while the source is not available.
pub fn refusal(
    who: &Subject,
    looked: bool,
    source: Source,
    carried: &[FieldDrift],
) -> Option<Report> {
    let (word, changes) = (who.noun.word, describe_fields(carried.iter().cloned()));
    if !looked {
        let message =
            format!("looking for a blue/green deployment of the {word} before making one");
        return Some(Report::new("Waiting", message, true));
    }
    if let Some(old) = who.current.and_then(|(_, old)| old) {
        let title = who.noun.title;
        let message = format!(
            "the old {word} {old} of the last switchover is kept: delete it (or set \
             old{title}Retention) before another blue/green upgrade of {changes}"
        );
        return Some(Report::new(
            format!("BlueGreenOld{title}Kept"),
            message,
            false,
        ));
    }
    if let Some(why) = source.unsupported {
        let message = format!(
            "RDS makes no blue/green deployment of {} ({why}); use upgradePolicy InPlace",
            who.identifier
        );
        return Some(Report::new("BlueGreenUnsupported", message, false));
    }
    (source.status != "available").then(|| {
        let message = format!(
            "RDS is {}; the blue/green deployment of {changes} waits until the {word} is available",
            source.status
        );
        Report::new("Waiting", message, true)
    })
}

/// What a deployment is made of: the source's ARN, green's targets, our tags, and green in words.
pub struct Green {
    pub source: String,
    pub targets: BlueGreenTargets,
    pub tags: BTreeMap<String, String>,
    /// "a green copy", "a green copy of the cluster and its members".
    pub copy: &'static str,
}

/// One CreateBlueGreenDeployment carrying the changes, named for the object's generation: the
/// deployment status records and the report while RDS makes it.
pub fn create<S, M, O>(
    plan: &mut impl Steps<Step<S, M, O>>,
    (identifier, generation): (&str, i64),
    green: Green,
    carried: &[FieldDrift],
) -> (DeploymentStatus, Report) {
    let name = shared::name(identifier, generation);
    plan.push(Step::BlueGreen {
        identifier: identifier.to_owned(),
        call: Call::Create {
            name: name.clone(),
            source: green.source,
            targets: Box::new(green.targets),
            tags: green.tags,
        },
    });
    let note = format!(
        "creating blue/green deployment {name} of {identifier}: {} with {}, switched over once \
         approved",
        green.copy,
        describe_fields(carried.iter().cloned())
    );
    plan.event(
        EventType::Normal,
        "BlueGreenCreating",
        "Update",
        note.clone(),
    );
    let recorded = DeploymentStatus {
        deployment_name: name,
        status: "PROVISIONING".into(),
        changes: carried.to_vec(),
        ..Default::default()
    };
    (recorded, Report::new("BlueGreenProvisioning", note, true))
}

/// At the deletion of the object: its deployment is deleted first, never with its target, and not
/// while RDS switches it over or deletes it.
pub fn delete_first<S, M, O>(
    plan: &mut impl Steps<Step<S, M, O>>,
    who: &Subject,
    d: &ObservedDeployment,
) {
    if matches!(d.status.as_str(), "SWITCHOVER_IN_PROGRESS" | "DELETING") {
        return;
    }
    plan.push(Step::BlueGreen {
        identifier: who.identifier.clone(),
        call: Call::Delete {
            deployment: d.identifier.clone(),
        },
    });
    let note = format!(
        "deleting blue/green deployment {} before the {}",
        d.identifier, who.noun.word
    );
    plan.event(EventType::Normal, "Deleting", "Delete", note);
}

/// What the deployment carries, in words: the changes status records, else the spec's.
fn recorded(who: &Subject) -> String {
    match who.current.map(|(d, _)| &d.changes) {
        Some(changes) if !changes.is_empty() => describe_fields(changes.iter().cloned()),
        _ => "the spec's changes".into(),
    }
}
