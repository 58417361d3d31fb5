//! Moving the primary: spec.switchoverTo (SwitchoverGlobalCluster, no data lost) or
//! spec.failoverTo (FailoverGlobalCluster with AllowDataLoss, approved). Each is sent once per
//! target: decided on a direct read (RDS reports the global database available, every member
//! connected, the target a member and not yet the writer), recorded in status.roleChange, and
//! never sent again while RDS is busy with it or once RDS shows the target the writer. A writer
//! that moves away afterwards is reported, not moved back: the spec names a target again for that.

use kube::ResourceExt;
use kube::runtime::events::EventType;

use super::{Facts, Own, Plan, Step};
use crate::globalcluster::{
    DEFAULT_FAILOVER_AFTER, FAILOVER_ANNOTATION, GlobalCluster, GlobalClusterStatus, GlobalMember,
    MIN_FAILOVER_AFTER, ObservedGlobalCluster, RoleChange,
};
use crate::managed::plan::{ConditionPlan, Requeue};

/// The role change the spec asks for: (action, the DBCluster's name).
pub fn asked(g: &GlobalCluster) -> Option<(&'static str, &str)> {
    match (&g.spec.switchover_to, &g.spec.failover_to) {
        (Some(r), _) => Some(("Switchover", r.name.as_str())),
        (None, Some(f)) => Some(("Failover", f.name.as_str())),
        (None, None) => None,
    }
}

/// Whether the annotation approves the failover the spec asks for (its value names the target).
pub fn annotated(g: &GlobalCluster) -> bool {
    let target = g.spec.failover_to.as_ref().map(|f| f.name.as_str());
    target.is_some_and(|t| g.annotations().get(FAILOVER_ANNOTATION).map(String::as_str) == Some(t))
}

/// Whether a role change is asked and not yet seen done: the global database is then read
/// directly (a switchover is decided on fresh knowledge).
pub fn pending(g: &GlobalCluster) -> bool {
    let Some((action, target)) = asked(g) else {
        return false;
    };
    let done = (g.status.as_ref().and_then(|s| s.role_change.as_ref()))
        .is_some_and(|r| r.action == action && r.target == target && r.completed);
    !done
}

/// Plans the role change the spec asks for on the observed global database; records it in
/// `fields`. Returns the Synced condition when the role change decides it (waiting, sent,
/// refused), None when there is nothing to do or it is done.
pub(super) fn plan(
    f: &Facts,
    plan: &mut Plan,
    o: &ObservedGlobalCluster,
    fields: &mut GlobalClusterStatus,
) -> Option<ConditionPlan> {
    let g = &f.object;
    let Some((action, target)) = asked(g) else {
        fields.role_change = None;
        return None;
    };
    let previous = (g.status.as_ref().and_then(|s| s.role_change.clone()))
        .filter(|r| r.action == action && r.target == target);
    fields.role_change = previous.clone();
    let (identifier, member) = match member(f, o, target) {
        Ok(found) => found,
        Err(reason_message) => return Some(wait(plan, f, reason_message.0, reason_message.1)),
    };
    let record = |completed| RoleChange {
        action: action.to_owned(),
        target: target.to_owned(),
        db_cluster_identifier: identifier.clone(),
        completed,
        approved_by: previous.as_ref().and_then(|p| p.approved_by.clone()),
    };
    if member.role == "writer" {
        // Done, whether this reconcile saw it sent or not (an operator killed between sending it
        // and recording it finds RDS done): recorded, so a writer that moves away later is
        // reported, not moved back.
        if previous.as_ref().is_none_or(|p| !p.completed) {
            let note = format!(
                "{target} ({identifier}, {}) is the primary now",
                member.region
            );
            let reason = format!("{action}Completed");
            plan.event(EventType::Normal, &reason, "Update", note);
        }
        fields.role_change = Some(record(true));
        return None;
    }
    match previous {
        Some(p) if p.completed => {
            let message = format!(
                "the {} to {target} was done; the writer has moved since ({}): it is not moved \
                 back; name another target, or remove and set {} again",
                action.to_lowercase(),
                fields.writer.as_deref().unwrap_or("none"),
                field(action)
            );
            return Some(ConditionPlan::new(true, "WriterMoved", message));
        }
        Some(_) => {
            let message = format!(
                "{action} to {target} sent; RDS reports the global database {}",
                o.status
            );
            return Some(wait(plan, f, "SwitchingOver", message));
        }
        None => {}
    }
    if let Some(why) = not_ready(o) {
        return Some(wait(plan, f, "RoleChangeWaiting", why));
    }
    if let Some(why) = lag_wait(f, action, target, &identifier) {
        return Some(wait(plan, f, "SwitchoverWaitingForLag", why));
    }
    let mut change = record(false);
    if action == "Failover" {
        match approval(f, o, &member.region) {
            Ok(evidence) => change.approved_by = Some(evidence),
            Err(why) => return Some(awaiting_approval(f, plan, target, &why)),
        }
    }
    fields.role_change = Some(change);
    Some(send(f, plan, o, (action, target), member))
}

/// Why a switchover waits for its target to catch up: with maxLagSeconds set, while the target's
/// AuroraGlobalDBReplicationLag is over it or not known (`health::lag_hold`). A failover never
/// waits on it: the writer's region is down.
fn lag_wait(f: &Facts, action: &str, target: &str, identifier: &str) -> Option<String> {
    if action != "Switchover" {
        return None;
    }
    let lag = f.extra.target_lag_ms.map(|ms| ms as f64 / 1000.0);
    let who = format!("{target} ({identifier})");
    let what = (who.as_str(), "the primary", "the switchover");
    crate::database::health::lag_hold(f.object.spec.max_lag_seconds, lag, what)
}

/// The target's RDS identifier and its membership; Err: (reason, message) to wait with.
fn member<'o>(
    f: &Facts,
    o: &'o ObservedGlobalCluster,
    target: &str,
) -> Result<(String, &'o GlobalMember), (&'static str, String)> {
    let identifier = match &f.extra.target {
        Some(Ok(identifier)) => identifier.clone(),
        Some(Err(why)) => return Err(("ReferencesUnresolved", why.clone())),
        None => return Err(("ReferencesUnresolved", format!("{target} not read"))),
    };
    match (o.members.iter()).find(|m| m.db_cluster_identifier == identifier) {
        Some(member) => Ok((identifier, member)),
        None => Err((
            "NotAMember",
            format!(
                "DBCluster {target} (RDS cluster {identifier}) is not a member of global database \
                 {}; nothing is sent",
                o.identifier
            ),
        )),
    }
}

/// The one SwitchoverGlobalCluster or FailoverGlobalCluster, and its Event.
fn send(
    f: &Facts,
    plan: &mut Plan,
    o: &ObservedGlobalCluster,
    (action, target): (&str, &str),
    member: &GlobalMember,
) -> ConditionPlan {
    let arn = member.db_cluster_arn.clone().unwrap_or_default();
    let (name, region) = (f.object.name_in_rds(), member.region.clone());
    plan.step(Step::Own(match action {
        "Switchover" => Own::Switchover {
            name,
            target_arn: arn,
        },
        _ => Own::Failover {
            name,
            target_arn: arn,
            region,
        },
    }));
    let loss = match action {
        "Switchover" => "",
        _ => ": writes it has not received are lost",
    };
    let note = format!(
        "{action} of global database {} to {target} ({}, {}){loss}",
        o.identifier, member.db_cluster_identifier, member.region,
    );
    plan.event(EventType::Normal, action, "Update", note.clone());
    wait(plan, f, "SwitchingOver", note)
}

fn field(action: &str) -> &'static str {
    match action {
        "Switchover" => "switchoverTo",
        _ => "failoverTo",
    }
}

/// Why RDS is not ready for a role change: the global database busy, or a member not connected.
fn not_ready(o: &ObservedGlobalCluster) -> Option<String> {
    if o.status != "available" {
        return Some(format!("RDS reports the global database {}", o.status));
    }
    let behind: Vec<String> = (o.members.iter())
        .filter(|m| m.role != "writer")
        .filter(|m| (m.synchronization_status.as_deref()).is_some_and(|s| s != "connected"))
        .map(|m| format!("{} ({})", m.db_cluster_identifier, m.region))
        .collect();
    (!behind.is_empty()).then(|| {
        format!(
            "members not connected to the primary yet: {}",
            behind.join(", ")
        )
    })
}

/// A failover not yet approved, and why: looked at again soon while a region is silent, to
/// approve on time.
fn awaiting_approval(f: &Facts, plan: &mut Plan, target: &str, why: &str) -> ConditionPlan {
    let message = format!(
        "failoverTo {target} waits for approval: {why}; set the annotation \
         {FAILOVER_ANNOTATION}: {target} to fail over anyway (writes {target} has not received \
         are lost)"
    );
    let silent = (f.extra.regions.values()).any(|r| r.silence.is_some());
    plan.requeue = Requeue::After(match silent {
        true => f.busy_interval,
        false => f.drift_interval,
    });
    ConditionPlan::new(false, "FailoverAwaitingApproval", message)
}

/// What approves a failover, with its evidence, or why it waits: the annotation naming the
/// target; or the region RDS reports the writer in (read fresh, in the target's region), not the
/// GlobalCluster's own, silent (no answer, a broken connection or a 5xx to every call, never a
/// throttle: `crate::silence`) for failoverAfter, while the target's region answered in that same
/// window (else the operator's own network may be what failed, and nothing is sent into a region
/// that does not answer). An open breaker alone approves nothing: one throttle opens it, and a
/// throttling region is up, holding writes the target lacks.
fn approval(f: &Facts, o: &ObservedGlobalCluster, target_region: &str) -> Result<String, String> {
    if annotated(&f.object) {
        return Ok(format!("the annotation {FAILOVER_ANNOTATION}"));
    }
    // The floor holds for an object stored before CEL held it there too.
    let after = (f.object.spec.failover_to.as_ref())
        .and_then(|t| t.failover_after.map(std::time::Duration::from))
        .unwrap_or(DEFAULT_FAILOVER_AFTER)
        .max(MIN_FAILOVER_AFTER);
    let Some(writer) = o.members.iter().find(|m| m.role == "writer") else {
        return Err("RDS reports no writer in the global database".into());
    };
    let heard = |region: &str| f.extra.regions.get(region).cloned().unwrap_or_default();
    let (w, t) = (heard(&writer.region), heard(target_region));
    let region = &writer.region;
    let Some(s) = &w.silence else {
        return Err(format!("the writer's region {region} {}", answers(&w)));
    };
    let (silent, needed) = (s.silent_for.as_secs(), after.as_secs());
    if s.silent_for < after {
        return Err(format!(
            "the writer's region {region} has answered no call for {silent} s of the {needed} s \
             failoverAfter asks"
        ));
    }
    if let Some(ts) = &t.silence {
        return Err(format!(
            "the writer's region {region} answered no call for {silent} s, but the target's \
             region {target_region} has answered none for {} s either: the operator's own \
             network may be what fails, and nothing is sent into a region that does not answer",
            ts.silent_for.as_secs()
        ));
    }
    let ago = match t.answered_ago {
        Some((ago, _)) if ago <= s.silent_for => ago.as_secs(),
        _ => {
            return Err(format!(
                "the writer's region {region} answered no call for {silent} s, but the target's \
                 region {target_region} has not answered since: nothing is sent before it does"
            ));
        }
    };
    Ok(format!(
        "the writer's region {region} answered no call for {silent} s (failoverAfter {needed} \
         s): {} calls since {} went unanswered, the last with {}; the target's region \
         {target_region} answered {ago} s ago",
        s.calls, s.since, s.last
    ))
}

/// What a region that is not silent said last (no age: a message that changed every pass would
/// rewrite the status, and wake another pass, each time).
fn answers(heard: &crate::globalcluster::RegionHeard) -> String {
    match heard.answered_ago {
        Some((_, true)) => {
            "answers: it throttled its last call (a throttle is an answer from a region that is \
             up)"
            .into()
        }
        Some((_, false)) => "answers: its last call was answered".into(),
        None => "has not been heard from yet: no call there has gone unanswered".into(),
    }
}

/// Waits for the role change: Synced False with `reason`, looked at again soon.
fn wait(plan: &mut Plan, f: &Facts, reason: &str, message: String) -> ConditionPlan {
    plan.requeue = Requeue::After(f.busy_interval);
    ConditionPlan::new(false, reason, message)
}
