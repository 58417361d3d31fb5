//! The pure plan of one snapshot of a snapshot kind: [`Facts`] in, [`Plan`] out. Whose snapshot
//! the name is, whether the source may be copied into this namespace and is ready, the one create
//! (or copy) call, what RDS reports while it takes it, its shares, and the tags. Deletion (Delete,
//! or Retain) is the group kinds'. Table tests in `dbsnapshot/tests/plan.rs`.

use std::collections::{BTreeMap, BTreeSet};

use kube::runtime::events::EventType;

use crate::crd::{ADOPTED_TAG, RETAINED_TAG};
use crate::database::choices::AdoptionPolicy;
use crate::database::tenancy::{self, RestoreSource};
use crate::managed::claim::{self, Claim, Claimant};
use crate::managed::named;
use crate::managed::plan::{ConditionPlan, KindStatus, Requeue};
use crate::managed::tags;

use super::{Extra, Fields, ObservedSnapshot, SnapshotKind, SnapshotReport, Source};

/// Everything a decision needs.
pub type Facts<K> = named::Facts<K>;

/// A call only this kind makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Own {
    /// The snapshot of `instance` (an instance or a cluster), tagged.
    Create {
        name: String,
        instance: String,
        tags: BTreeMap<String, String>,
    },
    /// The copy of `source` (an identifier, or an ARN of another region or account), tagged.
    Copy {
        name: String,
        source: String,
        kms_key_id: Option<String>,
        copy_tags: bool,
        tags: BTreeMap<String, String>,
    },
    /// The restore attribute: the accounts allowed to restore it.
    Share {
        name: String,
        add: Vec<String>,
        remove: Vec<String>,
    },
    /// StartExportTask (spec.exportTo).
    Export(super::export::StartExport),
}

/// One call or write.
pub type Step = named::Step<Own>;

/// What one reconcile does and reports.
pub type Plan<K> = named::NamedPlan<K>;

/// The status to write: Ready once RDS reports the snapshot available; Synced whether this
/// reconcile found it as the spec says.
fn status<K: SnapshotKind>(plan: &mut Plan<K>, fields: Fields, synced: ConditionPlan) {
    let r = &fields.report;
    let available = r.state.as_deref() == Some("available");
    let ready = match &r.state {
        Some(_) if available && synced.ok => synced.clone(),
        Some(_) if available => ConditionPlan::new(true, "Available", "the snapshot is available"),
        Some(state) if synced.ok => ConditionPlan::new(
            false,
            "Creating",
            format!(
                "RDS reports the snapshot {state}, {} % taken",
                r.percent_progress.unwrap_or(0)
            ),
        ),
        _ => synced.clone(),
    };
    let busy = r.state.is_some() && !available;
    plan.status = Some(KindStatus {
        fields: K::with_fields(fields),
        ready,
        synced,
        busy,
    });
}

/// The fields the object's status has now.
pub(super) fn recorded<K: SnapshotKind>(s: &K) -> Fields {
    s.status().map(K::fields).unwrap_or_default()
}

/// A refusal or a wait: reported, Ready and Synced False, no call.
fn refuse<K: SnapshotKind>(
    f: &Facts<K>,
    mut plan: Plan<K>,
    reason: &str,
    message: String,
    label: &'static str,
) -> Plan<K> {
    plan.refusal = Some(label);
    if reason != "ReferencesUnresolved" && reason != "SourceNotAvailable" {
        plan.event(EventType::Warning, reason, "Reconcile", message.clone());
    }
    let fields = recorded(&f.object);
    status::<K>(
        &mut plan,
        fields,
        ConditionPlan::new(false, reason, message),
    );
    plan
}

/// The status fields that come from the observed snapshot.
pub(super) fn observed_fields<K: SnapshotKind>(s: &K, o: &ObservedSnapshot) -> Fields {
    Fields {
        name: Some(o.name.clone()),
        source: Some(o.instance.clone()),
        report: SnapshotReport {
            arn: o.arn.clone(),
            state: Some(o.status.clone()),
            percent_progress: o.percent_progress,
            engine: o.engine.clone(),
            engine_version: o.engine_version.clone(),
            allocated_storage: o.allocated_storage,
            encrypted: o.encrypted,
            snapshot_create_time: o.created.clone(),
            ..Default::default()
        },
        applied_tag_keys: recorded(s).applied_tag_keys,
    }
}

/// The one decision of a reconcile of a snapshot object without a schedule (`steps::plan` hands
/// one with a schedule to `schedule::plan`).
pub fn plan<K: SnapshotKind>(f: &Facts<K>) -> Plan<K> {
    named::plan(f, |plan, desired| apply(f, plan, desired))
}

fn apply<K: SnapshotKind>(
    f: &Facts<K>,
    mut plan: Plan<K>,
    desired_tags: BTreeMap<String, String>,
) -> Plan<K> {
    let s = &f.object;
    let Some(o) = f.observed.as_deref() else {
        return absent(f, plan, desired_tags);
    };
    let mut fields = observed_fields(s, o);
    match claim(s, &o.tags, &f.extra) {
        Claim::Ours => {}
        Claim::Adopt => return adopt(f, plan, o, desired_tags, fields),
        Claim::Refused(reason, message) => {
            plan.refusal = (reason == "NotGranted").then_some("NotGranted");
            plan.event(EventType::Warning, reason, "Reconcile", message.clone());
            let refused = ConditionPlan::new(false, reason, message);
            status::<K>(&mut plan, Fields::default(), refused);
            return plan;
        }
    }
    let (mut changed, applied) =
        named::retag(&mut plan, s, (&o.tags, o.arn.as_deref()), &desired_tags);
    fields.applied_tag_keys = applied;
    let busy = o.status != "available";
    if busy {
        plan.requeue = Requeue::After(f.busy_interval);
    }
    fields.report.shared_with = recorded(s).report.shared_with;
    match share(f, o).filter(|_| !busy) {
        None => {}
        Some(Ok((step, shared))) => {
            fields.report.shared_with = shared;
            if let Some(Own::Share { add, remove, .. }) = &step {
                changed.push(format!(
                    "sharedWith: add [{}], remove [{}]",
                    add.join(","),
                    remove.join(",")
                ));
            }
            plan.steps.extend(step.map(Step::Own));
        }
        Some(Err((why, shared))) => {
            fields.report.shared_with = shared;
            plan.refusal = Some("NotGranted");
            plan.event(
                EventType::Warning,
                "ShareNotGranted",
                "Reconcile",
                why.clone(),
            );
            let refused = ConditionPlan::new(false, "ShareNotGranted", why);
            status::<K>(&mut plan, fields, refused);
            return plan;
        }
    }
    let recorded_export = recorded(s).report.export;
    let (export, exporting) = match o.status.as_str() {
        "available" => {
            let arn = o.arn.as_deref().unwrap_or_default();
            super::export::plan(f, &mut plan, arn, recorded_export.as_ref())
        }
        _ => (recorded_export, None),
    };
    fields.report.export = export;
    let synced = match (changed.is_empty(), exporting) {
        (true, Some(export)) => export,
        (true, None) if o.status == "failed" => ConditionPlan::new(
            false,
            "Failed",
            "RDS reports that taking the snapshot failed",
        ),
        (true, None) => ConditionPlan::new(true, "Synced", "the snapshot matches the spec"),
        (false, _) => {
            let note = format!("sent to RDS: {}", changed.join("; "));
            plan.event(EventType::Normal, "Updating", "Update", note.clone());
            plan.requeue = Requeue::After(std::time::Duration::from_secs(1));
            ConditionPlan::new(false, "Updating", note)
        }
    };
    status::<K>(&mut plan, fields, synced);
    plan
}

/// Whose RDS's snapshot of the name is, and whether this object may take it over
/// (`managed::claim`).
fn claim<K: SnapshotKind>(s: &K, tags: &BTreeMap<String, String>, extra: &Extra) -> Claim {
    let uid = s.meta().uid.as_deref().unwrap_or_default();
    let who = Claimant {
        uid,
        namespace: s.meta().namespace.as_deref().unwrap_or_default(),
        name: s.meta().name.as_deref().unwrap_or_default(),
        asked: super::adoption_asked(s.options()),
        granted: &extra.adoption,
        source_tags: extra.instance_tags.as_ref(),
    };
    let what = format!("{} {}", K::WHAT, s.rds_name_of());
    claim::claim(&who, tags, &what, K::NAME_FIELD)
}

/// Take over RDS's snapshot of the name: one AddTagsToResource with the ownership tags, the spec's
/// and the adopted tag (the time), and the retained tag dropped. Nothing else changes; the next
/// reconcile finds it this object's.
fn adopt<K: SnapshotKind>(
    f: &Facts<K>,
    mut plan: Plan<K>,
    o: &ObservedSnapshot,
    mut tags: BTreeMap<String, String>,
    fields: Fields,
) -> Plan<K> {
    let arn = o.arn.clone().unwrap_or_default();
    tags.insert(ADOPTED_TAG.into(), f.now.clone());
    plan.step(Step::AddTags {
        arn: arn.clone(),
        tags,
    });
    if o.tags.contains_key(RETAINED_TAG) {
        let keys = vec![RETAINED_TAG.to_owned()];
        plan.step(Step::RemoveTags { arn, keys });
    }
    let note = format!("adopting {} {}: adding the ownership tags", K::WHAT, o.name);
    plan.event(EventType::Normal, "Adopting", "Adopt", note.clone());
    plan.requeue = Requeue::After(std::time::Duration::from_secs(1));
    status::<K>(
        &mut plan,
        fields,
        ConditionPlan::new(false, "Adopting", note),
    );
    plan
}

/// A share's check and change: the restore attribute's change that brings who may restore the
/// snapshot to spec.sharedWith (None: as it is) and the accounts status then reports, or why
/// nothing is shared (an account neither an AWSAccount granted to the namespace names nor the
/// operator's --grant-share-to lists; `all` for an encrypted snapshot, or for a namespace
/// --grant-public-snapshots does not list) with the accounts RDS has now. None: not read.
pub(super) type Sharing = Result<(Option<Own>, Vec<String>), (String, Vec<String>)>;

pub(super) fn share<K: SnapshotKind>(f: &Facts<K>, o: &ObservedSnapshot) -> Option<Sharing> {
    let shares = f.extra.shares.as_ref()?;
    let s = &f.object;
    let namespace = s.meta().namespace.as_deref().unwrap_or_default();
    let current: BTreeSet<&String> = shares.current.get(&o.name)?.iter().collect();
    let desired: BTreeSet<&String> = s.options().shared_with.iter().collect();
    let granted = |a: &str| {
        (shares.accounts.iter()).any(|g| g == a)
            || (shares.grants.share_to.iter()).any(|g| g == "*" || g == a)
    };
    let mut refused: Vec<String> = (desired.iter())
        .filter(|a| a.as_str() != "all" && !granted(a))
        .map(|a| a.to_string())
        .collect();
    let mut why = format!(
        "{} named by no AWSAccount granted to this namespace nor by the operator's \
         --grant-share-to",
        refused.join(", ")
    );
    if desired.iter().any(|a| a.as_str() == "all") {
        let encrypted = o.encrypted == Some(true);
        if encrypted || !tenancy::listed(&shares.grants.public_snapshots, namespace) {
            refused.insert(0, "all".into());
            why = match encrypted {
                true => "RDS makes no encrypted snapshot public".into(),
                false => "sharedWith all makes the snapshot anyone's: only for a namespace the \
                          operator's --grant-public-snapshots lists"
                    .into(),
            };
        }
    }
    let now: Vec<String> = current.iter().map(|a| a.to_string()).collect();
    if !refused.is_empty() {
        let message = format!("nothing is shared: {why} (refused: {})", refused.join(", "));
        return Some(Err((message, now)));
    }
    let add: Vec<String> = desired
        .difference(&current)
        .map(|a| a.to_string())
        .collect();
    let remove: Vec<String> = current
        .difference(&desired)
        .map(|a| a.to_string())
        .collect();
    if add.is_empty() && remove.is_empty() {
        return Some(Ok((None, now)));
    }
    let name = o.name.clone();
    let want = desired.iter().map(|a| a.to_string()).collect();
    Some(Ok((Some(Own::Share { name, add, remove }), want)))
}

/// RDS has no snapshot of that name: take it once, of a source this namespace may copy that is
/// available; never again once one was taken (a new one would hold other data).
fn absent<K: SnapshotKind>(
    f: &Facts<K>,
    mut plan: Plan<K>,
    tags: BTreeMap<String, String>,
) -> Plan<K> {
    let s = &f.object;
    let name = s.rds_name_of();
    let options = s.options();
    if recorded(s).report.arn.is_some() {
        plan.requeue = Requeue::After(f.drift_interval);
        let message = format!(
            "RDS has no snapshot {name} any more: it was deleted outside the operator; a new one \
             would hold other data, so none is taken in its place (delete this object, or give it \
             another {})",
            K::NAME_FIELD
        );
        return refuse(f, plan, "NotFound", message, "NotFound");
    }
    if options.adoption_policy == Some(AdoptionPolicy::Adopt) {
        plan.requeue = Requeue::After(f.drift_interval);
        let message = format!(
            "RDS has no snapshot {name} to adopt; adoptionPolicy Adopt takes none (AdoptOrCreate \
             would, of the source)"
        );
        return refuse(f, plan, "NotFound", message, "NotFound");
    }
    let identifier = match source_check(f) {
        Ok(identifier) => identifier,
        Err((reason, message, label)) => {
            let wait = matches!(reason, "ReferencesUnresolved" | "SourceNotAvailable");
            plan.requeue = Requeue::After(if wait {
                f.busy_interval
            } else {
                f.drift_interval
            });
            return refuse(f, plan, reason, message, label);
        }
    };
    let copying = s.copy_from().is_some();
    let (step, note) = match copying {
        true => (
            Own::Copy {
                name: name.clone(),
                source: identifier.clone(),
                kms_key_id: options.kms_key_id.clone(),
                copy_tags: options.copy_tags.unwrap_or(false),
                tags,
            },
            format!("copying {} {identifier} to {name}", K::WHAT),
        ),
        false => (
            Own::Create {
                name: name.clone(),
                instance: identifier.clone(),
                tags,
            },
            format!("taking {} {name} of {} {identifier}", K::WHAT, K::SOURCE),
        ),
    };
    plan.step(Step::Own(step));
    plan.event(EventType::Normal, "Creating", "Create", note);
    let fields = Fields {
        name: Some(name),
        source: (!copying).then(|| identifier.clone()),
        report: SnapshotReport {
            state: Some("creating".into()),
            ..Default::default()
        },
        applied_tag_keys: tags::keys(s.spec_tags()),
    };
    plan.requeue = Requeue::After(f.busy_interval);
    status::<K>(
        &mut plan,
        fields,
        ConditionPlan::new(true, "Creating", "the snapshot is being taken"),
    );
    plan
}

/// A refusal or a wait: the condition's reason, its message, and the metric label.
pub type Refusal = (&'static str, String, &'static str);

/// The source's identifier (for a copy, the snapshot's identifier or ARN) when a snapshot of it
/// may be taken now: it is resolved, exists, is this namespace's own or granted to it, and is
/// available.
pub(super) fn source_check<K: SnapshotKind>(f: &Facts<K>) -> Result<String, Refusal> {
    let namespace = f.object.meta().namespace.as_deref().unwrap_or_default();
    let what = match f.object.copy_from() {
        Some(_) => "snapshot",
        None => K::SOURCE,
    };
    match &f.extra.source {
        Source::NotRead => Err((
            "ReferencesUnresolved",
            "the source is not read".into(),
            "Unresolved",
        )),
        Source::Unresolved(why) => Err(("ReferencesUnresolved", why.clone(), "Unresolved")),
        Source::NotFound(identifier) => Err((
            "SourceNotFound",
            format!("RDS has no {what} {identifier} to take a snapshot of"),
            "NotFound",
        )),
        Source::Found {
            identifier,
            tags,
            instance_tags,
            grants,
            ..
        } if !may_copy(tags, instance_tags, namespace, grants) => Err((
            "SourceNotOwned",
            format!(
                "RDS {what} {identifier} is neither this namespace's own nor granted to it \
                 (tag {} on it, or the operator's --grant-restore); a snapshot is a copy of \
                 its data, so none is taken",
                crate::crd::RESTORABLE_BY_TAG
            ),
            "NotOwned",
        )),
        Source::Found {
            identifier, status, ..
        } if status != "available" => Err((
            "SourceNotAvailable",
            format!(
                "RDS reports {what} {identifier} {status}; the snapshot is taken once it is available"
            ),
            "Unresolved",
        )),
        Source::Found { identifier, .. } => Ok(identifier.clone()),
    }
}
/// The tenancy rule of a copy of data: as for a restore of it (a snapshot is also the namespace's
/// when the instance it was taken of is).
fn may_copy(
    tags: &BTreeMap<String, String>,
    instance_tags: &Option<BTreeMap<String, String>>,
    namespace: &str,
    grants: &crate::context::Grants,
) -> bool {
    let found = RestoreSource::Found {
        tags: tags.clone(),
        instance_tags: instance_tags.clone(),
    };
    tenancy::may_restore(Some(&found), namespace, grants)
}
