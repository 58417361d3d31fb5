//! The vocabulary of every kind's plan: when to look again, an Event to publish after its steps,
//! one condition to report; and the plan of a group kind ([`KindPlan`]).

use std::time::Duration;

use kube::runtime::events::EventType;

/// An Event to publish once the first `after` steps have succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedEvent {
    pub type_: EventType,
    pub reason: String,
    pub action: &'static str,
    pub note: String,
    pub after: usize,
}

/// When to look again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requeue {
    After(Duration),
    /// Only when the DBInstance (or a watched Secret) changes.
    AwaitChange,
    /// The per-object error backoff (2 s, 4 s, 8 s... up to 5 min).
    Backoff,
}

/// One condition to report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionPlan {
    pub ok: bool,
    pub reason: String,
    pub message: String,
}

impl ConditionPlan {
    pub fn new(ok: bool, reason: &str, message: impl Into<String>) -> Self {
        ConditionPlan {
            ok,
            reason: reason.to_owned(),
            message: message.into(),
        }
    }
}

/// What shared planning rules write into a kind's plan, whatever its type: steps, and Events that
/// follow the steps planned so far.
pub trait Steps<S> {
    fn push(&mut self, step: S);
    fn event(&mut self, type_: EventType, reason: &str, action: &'static str, note: String);
    fn requeue(&mut self, requeue: Requeue);
}

impl<S, St, X> Steps<S> for KindPlan<S, St, X> {
    fn push(&mut self, step: S) {
        self.steps.push(step);
    }
    fn event(&mut self, type_: EventType, reason: &str, action: &'static str, note: String) {
        KindPlan::event(self, type_, reason, action, note);
    }
    fn requeue(&mut self, requeue: Requeue) {
        self.requeue = requeue;
    }
}

/// The plan of a kind: the steps in order, the status to write (`St`: a group kind's
/// [`KindStatus`], DBInstance's own), the Events (each after the steps it follows), when to look
/// again, the metric label of what it refuses (None for success), and what the kind reports
/// besides (`X`: DBInstance's gauge, drift counter and log line; nothing for the others).
#[derive(Clone, Debug, PartialEq)]
pub struct KindPlan<S, St, X = ()> {
    pub steps: Vec<S>,
    pub status: Option<St>,
    pub events: Vec<PlannedEvent>,
    pub requeue: Requeue,
    pub refusal: Option<&'static str>,
    pub ext: X,
}

/// What a kind's plan reports besides its steps and status (`KindPlan`'s `X`).
pub trait Extension: Default {
    /// A line for the operator's log only (what users of the object must not see).
    fn log(&self) -> Option<&str> {
        None
    }
}

impl Extension for () {}

impl<S, St, X: Extension> KindPlan<S, St, X> {
    pub fn new(requeue: Requeue) -> Self {
        KindPlan {
            steps: Vec::new(),
            status: None,
            events: Vec::new(),
            requeue,
            refusal: None,
            ext: X::default(),
        }
    }
}

impl<S, St, X> KindPlan<S, St, X> {
    /// Adds a step; returns how many steps an Event after it waits for.
    pub fn step(&mut self, step: S) -> usize {
        self.steps.push(step);
        self.steps.len()
    }

    /// An Event published once the steps so far have succeeded.
    pub fn event(&mut self, type_: EventType, reason: &str, action: &'static str, note: String) {
        self.events.push(PlannedEvent {
            type_,
            reason: reason.into(),
            action,
            note,
            after: self.steps.len(),
        });
    }

    /// Looks again within `interval` (sooner if it was to look sooner, or to back off).
    pub fn look_again_within(&mut self, interval: Duration) {
        self.requeue = match self.requeue {
            Requeue::After(d) => Requeue::After(d.min(interval)),
            Requeue::AwaitChange => Requeue::After(interval),
            Requeue::Backoff => Requeue::Backoff,
        };
    }

    /// Waits for something the object refers to, or RDS: nothing sent, counted as unresolved,
    /// looked at again after `interval`; the Synced condition to report.
    pub fn waiting(&mut self, interval: Duration, reason: &str, message: String) -> ConditionPlan {
        self.requeue = Requeue::After(interval);
        self.refusal = Some("Unresolved");
        ConditionPlan::new(false, reason, message)
    }

    /// The Synced condition of a group RDS reports a state of, once its steps are planned: in sync
    /// when nothing changes (`what` matches the spec), else Updating with an Event of what is sent,
    /// looked at again after `interval`.
    pub fn synced_after(
        &mut self,
        changed: &[String],
        interval: Duration,
        what: &str,
    ) -> ConditionPlan {
        if changed.is_empty() {
            return ConditionPlan::new(true, "Synced", format!("{what} matches the spec"));
        }
        let note = format!("sent to AWS: {}", changed.join("; "));
        self.event(EventType::Normal, "Updating", "Update", note.clone());
        self.requeue = Requeue::After(interval);
        ConditionPlan::new(false, "Updating", note)
    }

    /// A connection Secret of the name that is not the object's: refused, never written; the
    /// Synced condition to report.
    pub fn secret_conflict(&mut self, message: String) -> ConditionPlan {
        self.refusal = Some("SecretConflict");
        ConditionPlan::new(false, "ConnectionSecretConflict", message)
    }
}

impl<S, T, X> KindPlan<S, KindStatus<T>, X> {
    /// A group's status once its steps are planned (`changed`: what they change, in words). One
    /// that exists and changes nothing is Ready and Synced; otherwise it is Updating (with an
    /// Event when something is sent), Ready once it exists, and looked at again in a second.
    pub fn report_changes(&mut self, fields: T, exists: bool, changed: &[String], what: &str) {
        if changed.is_empty() && exists {
            self.status = Some(KindStatus {
                fields,
                ready: ConditionPlan::new(true, "Available", format!("the {what} exists")),
                synced: ConditionPlan::new(true, "Synced", format!("the {what} matches the spec")),
                busy: false,
            });
            return;
        }
        let note = match changed.is_empty() {
            true => "created".to_owned(),
            false => format!("sent to RDS: {}", changed.join("; ")),
        };
        if !changed.is_empty() {
            self.event(EventType::Normal, "Updating", "Update", note.clone());
        }
        self.requeue = Requeue::After(Duration::from_secs(1));
        let synced = ConditionPlan::new(false, "Updating", note);
        let ready = match exists {
            true => ConditionPlan::new(true, "Available", format!("the {what} exists")),
            false => synced.clone(),
        };
        self.status = Some(KindStatus {
            fields,
            ready,
            synced,
            busy: false,
        });
    }
}

/// The status a group kind's plan reports.
#[derive(Clone, Debug, PartialEq)]
pub struct KindStatus<T> {
    /// Every field but conditions and observedGeneration.
    pub fields: T,
    pub ready: ConditionPlan,
    pub synced: ConditionPlan,
    /// RDS is in the middle of something with the group: Reconciling says so.
    pub busy: bool,
}

impl<S, St, X: Extension> super::Planned<S> for KindPlan<S, St, X> {
    fn steps(&self) -> &[S] {
        &self.steps
    }
    fn events(&self) -> &[PlannedEvent] {
        &self.events
    }
    fn requeue(&self) -> Requeue {
        self.requeue
    }
    fn refusal(&self) -> Option<&'static str> {
        self.refusal
    }
    fn log(&self) -> Option<&str> {
        self.ext.log()
    }
}
