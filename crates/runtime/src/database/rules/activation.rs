//! The stop and start rules both database kinds follow, written once: a database that is to be
//! stopped is stopped once it is available and nothing else is sent in the pass; one that is to
//! run is started when it is stopped; one the operator stopped that RDS started by itself after 7
//! days (API_StopDBInstance.html, API_StopDBCluster.html) is stopped again, and said so. What RDS
//! cannot stop is refused with its reason and nothing is sent, until the spec changes. A stopped
//! database is not Ready (it serves no one) and Synced while it is stopped as it is to be. Whether
//! it is to run is `activation::decide`'s (the spec, or its schedule and the override); the kind
//! says what RDS would refuse, and runs the call.

use std::time::Duration;

use kube::runtime::events::EventType;

use super::Noun;
use crate::database::activation::{Decision, OVERRIDE_ANNOTATION};
use crate::database::choices::Activation;
use crate::database::step::Step;
use crate::managed::plan::{ConditionPlan, KindPlan, Requeue};

/// What the rules read of a pass.
pub struct Subject<'a> {
    pub noun: Noun,
    pub decision: &'a Decision,
    /// The spec has a schedule (for what Events say decided).
    pub scheduled: bool,
    /// RDS's state of the database.
    pub state: &'a str,
    /// When the operator stopped it, as status recorded (it is to stay stopped since).
    pub stopped_before: Option<&'a str>,
    /// Not observe-only, not held.
    pub may_act: bool,
    /// Other steps are planned in this pass (they go first).
    pub others: bool,
    /// Why RDS cannot stop it (None: it can), in the kind's words.
    pub not_stoppable: Option<&'static str>,
    /// The Synced condition last reported (its reason and message).
    pub previous_synced: Option<(&'a str, &'a str)>,
    /// The read step's time (RFC 3339).
    pub now: &'a str,
}

/// The call to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Stop,
    Start,
}

/// What the rules make of a pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub call: Option<Call>,
    /// Events: type, reason, note.
    pub events: Vec<(EventType, &'static str, String)>,
    /// The Ready condition to report instead of the kind's (a stopped database).
    pub ready: Option<ConditionPlan>,
    /// The Synced condition to report instead of the kind's (what cannot be stopped, a schedule
    /// that cannot be read).
    pub synced: Option<ConditionPlan>,
    /// Nothing is tried again until the spec changes (what RDS cannot stop).
    pub await_change: bool,
    /// status.stoppedAt.
    pub stopped_at: Option<String>,
    /// The override's annotation is to be removed (it has ended).
    pub clear_override: bool,
    /// The pass is to be looked at again within this (the schedule's next boundary, a second
    /// past it; the busy interval after a call is the kind's).
    pub look_again: Option<Duration>,
}

impl Outcome {
    /// Writes the outcome's steps into a kind's plan (the call as the kind's own step, then the
    /// override annotation's removal), its Events, and when to look again: within the busy
    /// interval after a call, not before the spec changes for what RDS cannot stop, and by the
    /// schedule's next boundary. The conditions and status fields are the kind's to write.
    pub fn write<Spec, M, Own, St, X>(
        &self,
        plan: &mut KindPlan<Step<Spec, M, Own>, St, X>,
        own: impl FnOnce(Call) -> Own,
        busy: Duration,
    ) {
        if let Some(call) = self.call {
            plan.step(Step::Own(own(call)));
            plan.look_again_within(busy);
        }
        if self.clear_override {
            plan.step(Step::ClearAnnotation(OVERRIDE_ANNOTATION));
        }
        for (type_, reason, note) in &self.events {
            plan.event(*type_, reason, "Update", note.clone());
        }
        if self.await_change {
            plan.refusal = Some("CannotStop");
            plan.requeue = Requeue::AwaitChange;
        }
        if let Some(wait) = self.look_again {
            plan.look_again_within(wait);
        }
    }
}

/// The rules of a pass.
pub fn plan(s: &Subject) -> Outcome {
    let d = s.decision;
    let mut out = Outcome {
        clear_override: d.clear_override && s.may_act,
        look_again: next_boundary(d, s.now),
        synced: invalid(d),
        ..Outcome::default()
    };
    if out.clear_override {
        let note = format!(
            "the {} override has ended at the schedule's boundary: the schedule says again",
            crate::database::activation::OVERRIDE_ANNOTATION
        );
        out.events.push((EventType::Normal, "OverrideEnded", note));
    }
    if let Some(c) = &out.synced
        && s.previous_synced != Some((c.reason.as_str(), c.message.as_str()))
    {
        out.events
            .push((EventType::Warning, "InvalidActivation", c.message.clone()));
    }
    let Some(wanted) = d.wanted else {
        return out;
    };
    let by = d.said_by(s.scheduled);
    let word = s.noun.word;
    out.stopped_at = s.stopped_before.map(str::to_owned);
    match (wanted, s.state) {
        (Activation::Stopped, "available") if s.may_act && !s.others => {
            if let Some(why) = s.not_stoppable {
                out.synced = Some(ConditionPlan::new(false, "CannotStop", why));
                out.await_change = true;
                return out;
            }
            out.call = Some(Call::Stop);
            let (reason, note) = match s.stopped_before {
                Some(at) => (
                    "StoppedAgain",
                    format!(
                        "RDS started the {word} by itself (it stops for 7 days at most; stopped \
                         since {at}): stopped again as {by} says"
                    ),
                ),
                None => ("Stopping", format!("stopping the {word} as {by} says")),
            };
            out.events.push((EventType::Normal, reason, note));
            out.stopped_at = Some(s.now.to_owned());
        }
        (Activation::Running, "stopped") if s.may_act => {
            out.call = Some(Call::Start);
            let note = format!("starting the {word} as {by} says");
            out.events.push((EventType::Normal, "Starting", note));
            out.stopped_at = None;
        }
        (Activation::Stopped, "stopped") => {
            let message = format!("stopped as {by} says");
            out.ready = Some(ConditionPlan::new(false, "Stopped", message));
            out.stopped_at = out.stopped_at.or(Some(s.now.to_owned()));
        }
        (Activation::Running, _) => out.stopped_at = None,
        _ => {}
    }
    out
}

/// A second past the next boundary, so the pass reads the state after it.
fn next_boundary(d: &Decision, now: &str) -> Option<Duration> {
    let now = chrono::DateTime::parse_from_rfc3339(now).ok()?.to_utc();
    let wait = (d.next? - now).to_std().unwrap_or_default();
    Some(wait + Duration::from_secs(1))
}

/// The Synced condition of a schedule or an annotation that cannot be read.
fn invalid(d: &Decision) -> Option<ConditionPlan> {
    (d.invalid.as_ref()).map(|why| ConditionPlan::new(false, "InvalidActivation", why.clone()))
}
