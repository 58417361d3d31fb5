//! The pure plan of a snapshot object with a schedule: a snapshot per cron tick since the object was
//! made, named after the object and the tick, so a tick is taken once whatever crashes (the name
//! says it was); only the last tick is taken after a gap; none while the previous one is still
//! being taken; the `keep` newest available snapshots this object made are kept and older ones
//! it made deleted, never any other. Deletion keeps them (the default with a schedule) or deletes
//! each one it made. Table tests in `dbsnapshot/tests/schedule.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use kube::runtime::events::EventType;

use crate::crd::has_finalizer;
use crate::managed::named;
use crate::managed::plan::{ConditionPlan, KindPlan, KindStatus, Requeue};

use super::plan::{Facts, Own, Plan, Step, observed_fields, recorded, share, source_check};
use super::{Fields, ObservedSnapshot, ScheduleStatus, SnapshotKind, SnapshotSchedule, Source};

/// The cron expression, parsed (five fields, or six with seconds first).
pub fn parse(cron: &str) -> Result<Cron, String> {
    let parser = CronParser::builder().seconds(Seconds::Optional).build();
    (parser.parse(cron))
        .map_err(|e| format!("schedule.cron {cron:?} is not a cron expression: {e}"))
}

/// The name of the snapshot of a tick: the object's RDS name and the tick, to the second.
pub fn tick_name(base: &str, tick: &DateTime<Utc>) -> String {
    format!("{base}-{}", tick.format("%Y%m%d%H%M%S"))
}

fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The snapshots of the source this object made, newest first (by name: the tick is in it).
fn ours<K: SnapshotKind>(f: &Facts<K>) -> Vec<&ObservedSnapshot> {
    let series = f.extra.series.as_deref().unwrap_or_default();
    let mut ours: Vec<_> = (series.iter())
        .filter(|o| named::owned(&f.object, &o.tags))
        .collect();
    ours.sort_by(|a, b| b.name.cmp(&a.name));
    ours
}

/// The one decision of a reconcile of a scheduled snapshot object.
pub fn plan<K: SnapshotKind>(f: &Facts<K>, schedule: &SnapshotSchedule) -> Plan<K> {
    if f.object.meta().deletion_timestamp.is_some() {
        return deletion(f);
    }
    named::plan(f, |plan, desired| apply(f, schedule, plan, desired))
}

/// What is known of the ticks: the last one since the object was made (None: none yet), and the
/// next.
struct Ticks {
    last: Option<DateTime<Utc>>,
    next: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
}

fn ticks<K: SnapshotKind>(f: &Facts<K>, cron: &Cron) -> Ticks {
    // The read step's time: a plan never reads the clock. An unreadable one knows no tick, so
    // nothing is taken and the schedule is looked at again after the busy interval.
    let Ok(now) = DateTime::parse_from_rfc3339(&f.now).map(|t| t.to_utc()) else {
        return Ticks {
            last: None,
            next: None,
            now: DateTime::UNIX_EPOCH,
        };
    };
    let made = (f.object.meta().creation_timestamp.as_ref())
        .and_then(|t| DateTime::from_timestamp(t.0.as_second(), 0))
        .unwrap_or(now);
    Ticks {
        last: (cron.find_previous_occurrence(&now, true).ok()).filter(|t| *t >= made),
        next: cron.find_next_occurrence(&now, false).ok(),
        now,
    }
}

fn apply<K: SnapshotKind>(
    f: &Facts<K>,
    schedule: &SnapshotSchedule,
    mut plan: Plan<K>,
    tags: BTreeMap<String, String>,
) -> Plan<K> {
    let cron = match parse(&schedule.cron) {
        Ok(cron) => cron,
        Err(why) => {
            plan.requeue = Requeue::AwaitChange;
            plan.refusal = Some("InvalidSpec");
            plan.event(
                EventType::Warning,
                "InvalidSchedule",
                "Reconcile",
                why.clone(),
            );
            let problem = ConditionPlan::new(false, "InvalidSchedule", why);
            return report::<K>(plan, status_fields(f, Vec::new(), None), problem);
        }
    };
    let ticks = ticks(f, &cron);
    let ours = ours(f);
    let mut kept: Vec<String> = ours.iter().map(|o| o.name.clone()).collect();
    let busy = ours.iter().any(|o| o.status == "creating");
    let problem = match ticks.last.filter(|_| !busy) {
        Some(tick) => take(f, &mut plan, &tick, &mut kept, tags).err(),
        None => None,
    };
    let available = retention::<K>(&mut plan, &ours, &mut kept, schedule.keep);
    let creating = busy || (plan.steps.iter()).any(|s| matches!(s, Step::Own(Own::Create { .. })));
    let shared = share_kept::<K>(f, &mut plan, &available, &kept);
    plan.requeue = Requeue::After(match (creating, ticks.next) {
        (true, _) | (_, None) => f.busy_interval,
        (false, Some(next)) => {
            let until = (next - ticks.now).to_std().unwrap_or_default() + Duration::from_secs(1);
            until.min(f.drift_interval)
        }
    });
    let newest = available.first().copied();
    let mut fields = status_fields(f, kept, newest);
    fields.report.schedule = Some(ScheduleStatus {
        last_tick: ticks.last.as_ref().map(rfc3339),
        next_tick: ticks.next.as_ref().map(rfc3339),
        ..fields.report.schedule.unwrap_or_default()
    });
    let condition = match (problem, shared) {
        (Some((reason, message, label)), _) => {
            plan.refusal = Some(label);
            ConditionPlan::new(false, reason, message)
        }
        (None, Err(why)) => {
            plan.refusal = Some("NotGranted");
            plan.event(
                EventType::Warning,
                "ShareNotGranted",
                "Reconcile",
                why.clone(),
            );
            ConditionPlan::new(false, "ShareNotGranted", why)
        }
        (None, Ok(shared)) => {
            fields.report.shared_with = shared;
            ConditionPlan::new(true, "Scheduled", "the schedule is kept")
        }
    };
    report::<K>(plan, fields, condition)
}

/// With a share asked or recorded (its restore attributes read): each kept available snapshot
/// shared as spec.sharedWith says, one change each that differs, and the accounts status then
/// reports; or why nothing is shared (as for one snapshot: `plan::share`), and no change.
fn share_kept<K: SnapshotKind>(
    f: &Facts<K>,
    plan: &mut Plan<K>,
    available: &[&ObservedSnapshot],
    kept: &[String],
) -> Result<Vec<String>, String> {
    let mut changes = Vec::new();
    let mut shared = Vec::new();
    for o in available.iter().filter(|o| kept.contains(&o.name)) {
        match share(f, o) {
            None => {}
            Some(Err((why, _))) => return Err(why),
            Some(Ok((change, accounts))) => {
                changes.extend(change.map(Step::Own));
                shared = accounts;
            }
        }
    }
    if !changes.is_empty() {
        let note = format!("sharing {} snapshot(s) as sharedWith says", changes.len());
        plan.event(EventType::Normal, "Updating", "Update", note);
    }
    plan.steps.extend(changes);
    Ok(shared)
}

/// The snapshot of the tick, unless taken already (its name says so): one create, of a source
/// that may be copied and is available; else why not.
fn take<K: SnapshotKind>(
    f: &Facts<K>,
    plan: &mut Plan<K>,
    tick: &DateTime<Utc>,
    kept: &mut Vec<String>,
    tags: BTreeMap<String, String>,
) -> Result<(), super::plan::Refusal> {
    let name = tick_name(&f.object.rds_name_of(), tick);
    if kept.contains(&name) {
        return Ok(());
    }
    let instance = source_check(f)?;
    let note = format!(
        "taking {} {name} of {} {instance} (tick {})",
        K::WHAT,
        K::SOURCE,
        rfc3339(tick)
    );
    plan.step(Step::Own(Own::Create {
        name: name.clone(),
        instance,
        tags,
    }));
    plan.event(EventType::Normal, "Creating", "Create", note);
    kept.insert(0, name);
    Ok(())
}

/// The keep newest available snapshots stay; older available ones this object made go (one
/// being taken counts once it is available, so a failed one never costs a kept one). The
/// available ones, newest first.
fn retention<'a, K: SnapshotKind>(
    plan: &mut Plan<K>,
    ours: &[&'a ObservedSnapshot],
    kept: &mut Vec<String>,
    keep: u32,
) -> Vec<&'a ObservedSnapshot> {
    let available: Vec<_> = (ours.iter().copied())
        .filter(|o| o.status == "available")
        .collect();
    let old: Vec<_> = available.iter().skip(keep as usize).collect();
    for o in &old {
        plan.step(Step::Delete {
            name: o.name.clone(),
        });
        kept.retain(|k| *k != o.name);
    }
    if !old.is_empty() {
        let note = format!("deleting {} snapshot(s) beyond the {keep} kept", old.len());
        plan.event(EventType::Normal, "Deleting", "Delete", note);
    }
    available
}

/// The status fields: the source, the snapshots kept, and the newest available one as the
/// object's snapshot (what a DBInstance's dbSnapshotRef restores).
fn status_fields<K: SnapshotKind>(
    f: &Facts<K>,
    kept: Vec<String>,
    newest: Option<&ObservedSnapshot>,
) -> Fields {
    let s = &f.object;
    let instance = match &f.extra.source {
        Source::Found { identifier, .. } => Some(identifier.clone()),
        _ => recorded(s).source,
    };
    let mut fields = match newest {
        Some(o) => observed_fields(s, o),
        None => Fields::default(),
    };
    fields.source = instance;
    fields.applied_tag_keys = crate::managed::tags::keys(s.spec_tags());
    fields.report.schedule = Some(ScheduleStatus {
        kept,
        ..Default::default()
    });
    fields
}

/// Ready while an available snapshot is kept; Synced as the condition says.
fn report<K: SnapshotKind>(mut plan: Plan<K>, fields: Fields, synced: ConditionPlan) -> Plan<K> {
    let ready = match (&fields.name, synced.ok) {
        (Some(name), true) => ConditionPlan::new(
            true,
            "Available",
            format!("the newest snapshot kept, {name}, is available"),
        ),
        (Some(_), false) => {
            ConditionPlan::new(true, "Available", "the newest snapshot kept is available")
        }
        (None, _) if synced.ok => {
            ConditionPlan::new(false, "Scheduled", "no snapshot is available yet")
        }
        (None, _) => synced.clone(),
    };
    plan.status = Some(KindStatus {
        fields: K::with_fields(fields),
        ready,
        synced,
        busy: false,
    });
    plan
}

/// Deleting a scheduled snapshot object: its snapshots stay (Retain, the default), or each one it made
/// is deleted (Delete), once none is still being taken.
fn deletion<K: SnapshotKind>(f: &Facts<K>) -> Plan<K> {
    let s = &f.object;
    let mut plan = KindPlan::new(Requeue::AwaitChange);
    if !has_finalizer(s.meta()) {
        return plan;
    }
    let ours = ours(f);
    if s.retained(false) {
        let note = format!(
            "deletionPolicy Retain: its {} snapshot(s) stay in RDS",
            ours.len()
        );
        plan.event(EventType::Normal, "Retained", "Delete", note);
        plan.step(Step::RemoveFinalizer);
        return plan;
    }
    for o in ours.iter().filter(|o| o.status == "available") {
        plan.step(Step::Delete {
            name: o.name.clone(),
        });
    }
    if ours.iter().any(|o| o.status == "creating") {
        plan.requeue = Requeue::After(f.busy_interval);
        let waiting = ConditionPlan::new(
            false,
            "Deleting",
            "a snapshot is still being taken; it is deleted once available",
        );
        return report::<K>(plan, recorded(s), waiting);
    }
    plan.step(Step::RemoveFinalizer);
    plan
}
