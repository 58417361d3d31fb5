//! When a database is to run, pure and shared by both database kinds: `spec.activation` says it
//! outright; `spec.activationSchedule` says it by windows (a start cron and a stop cron each, read
//! in a time zone), so a dev database runs on weekdays from 08:00 to 20:00 and costs nothing at
//! night. The annotation `rds.operator.rs/activation: Running | Stopped` overrides the schedule
//! until its next boundary (a window opening or closing): the override is then over, and the
//! annotation is removed. Table tests in `tests.rs`.
//!
//! The schedule's state at a time is the kind of the latest boundary at or before it: after a
//! start the database runs, after a stop it is stopped (a start and a stop at the same instant:
//! it runs). A schedule that cannot be read (a cron or a time zone the operator does not know)
//! decides nothing: the database is left as it is and the spec is reported.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds};
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::database::choices::Activation;

/// The annotation that overrides spec.activationSchedule until the schedule's next boundary.
pub const OVERRIDE_ANNOTATION: &str = "rds.operator.rs/activation";

/// Whether the database runs: the spec fields both kinds have (flattened into their specs).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivationSpec {
    /// Running or Stopped: the database is stopped (StopDBInstance, StopDBCluster) while this
    /// says Stopped, and started when it says Running. Left out, it is never stopped or started
    /// by the operator (one stopped by hand is reported as stopped). RDS starts a stopped database
    /// by itself after 7 days: the operator stops it again, and says so (Event StoppedAgain).
    /// What RDS cannot stop (a read replica, an instance with read replicas, a Multi-AZ SQL Server
    /// instance, an Aurora member, a member of a global database) is refused with its reason.
    /// Changes to the spec wait while it is stopped.
    pub activation: Option<Activation>,
    /// When the database runs: windows (a start cron and a stop cron each) read in a time zone,
    /// such as weekdays from 08:00 to 20:00 in Europe/Berlin; outside them it is stopped. The
    /// annotation rds.operator.rs/activation: Running (or Stopped) overrides the schedule until
    /// its next window opens or closes, then is removed. Not with activation.
    pub activation_schedule: Option<ActivationSchedule>,
}

/// When the database runs: windows read in a time zone. Outside every window it is stopped.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivationSchedule {
    /// The IANA time zone the crons are read in, such as Europe/Berlin (default UTC). Daylight
    /// saving time is followed.
    #[schemars(length(min = 1, max = 64))]
    pub time_zone: Option<String>,
    /// The windows in which the database runs.
    #[schemars(length(min = 1, max = 8))]
    pub running: Vec<RunningWindow>,
}

/// One window: it opens at each time of `start` (the database is started) and closes at each time
/// of `stop` (it is stopped).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunningWindow {
    /// A cron (five fields, or six with seconds first), such as "0 8 * * 1-5".
    #[schemars(length(min = 1, max = 128))]
    pub start: String,
    /// A cron, such as "0 20 * * 1-5".
    #[schemars(length(min = 1, max = 128))]
    pub stop: String,
}

/// An override of the schedule the operator has seen (status.activationOverride).
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverrideStatus {
    /// What the annotation says.
    pub activation: Activation,
    /// When it ends: the schedule's next boundary after it was seen (RFC 3339).
    pub until: Option<String>,
}

/// What the spec, the schedule and the override make of a pass at `now`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Whether the database is to run (None: the operator never stops or starts it).
    pub wanted: Option<Activation>,
    /// The schedule's next boundary (or the override's end): the pass is looked at again then.
    pub next: Option<DateTime<Utc>>,
    /// What status records of the override.
    pub recorded: Option<OverrideStatus>,
    /// The override has ended: its annotation is to be removed.
    pub clear_override: bool,
    /// Why the schedule or the annotation cannot be read (nothing is decided from it).
    pub invalid: Option<String>,
}

/// What a pass knows of activation.
pub struct Inputs<'a> {
    pub spec: &'a ActivationSpec,
    /// The override annotation's value.
    pub annotation: Option<&'a str>,
    /// The override status recorded.
    pub recorded: Option<&'a OverrideStatus>,
    /// The read step's time (RFC 3339): a plan never reads the clock.
    pub now: &'a str,
}

impl<'a> Inputs<'a> {
    /// The inputs of an object: its spec's fields, its annotations and the override its status
    /// recorded.
    pub fn of(
        spec: &'a ActivationSpec,
        annotations: Option<&'a std::collections::BTreeMap<String, String>>,
        status: Option<&'a crate::database::status::DatabaseStatus>,
        now: &'a str,
    ) -> Self {
        Inputs {
            spec,
            annotation: annotations
                .and_then(|a| a.get(OVERRIDE_ANNOTATION))
                .map(String::as_str),
            recorded: status.and_then(|s| s.activation_override.as_ref()),
            now,
        }
    }
}

/// The decision of a pass.
pub fn decide(i: &Inputs) -> Decision {
    let Some(schedule) = i.spec.activation_schedule.as_ref() else {
        return Decision {
            wanted: i.spec.activation,
            ..Decision::default()
        };
    };
    let now = match DateTime::parse_from_rfc3339(i.now) {
        Ok(t) => t.to_utc(),
        Err(e) => return invalid(format!("the time {:?} cannot be read: {e}", i.now)),
    };
    let windows = match parse(schedule) {
        Ok(w) => w,
        Err(e) => return invalid(e),
    };
    let (scheduled, next) = windows.state(now);
    let mut d = Decision {
        wanted: scheduled,
        next,
        ..Decision::default()
    };
    let Some(value) = i.annotation else {
        return d;
    };
    let activation = match value {
        "Running" => Activation::Running,
        "Stopped" => Activation::Stopped,
        other => {
            d.invalid = Some(format!(
                "annotation {OVERRIDE_ANNOTATION}: {other:?} is neither Running nor Stopped"
            ));
            return d;
        }
    };
    let fresh = OverrideStatus {
        activation,
        until: next.map(|t| rfc3339(&t)),
    };
    let recorded = (i.recorded.cloned()).filter(|r| r.activation == activation);
    let record = recorded.unwrap_or(fresh);
    let until = (record.until.as_deref()).and_then(|u| DateTime::parse_from_rfc3339(u).ok());
    match until {
        Some(until) if until.to_utc() <= now => d.clear_override = true,
        _ => {
            d.wanted = Some(activation);
            d.next = until.map(|u| u.to_utc()).or(next);
        }
    }
    d.recorded = Some(record);
    d
}

impl Decision {
    /// What says the database is to run or stop, for Events: the override, the schedule, or
    /// spec.activation (`scheduled`: the spec has a schedule).
    pub fn said_by(&self, scheduled: bool) -> &'static str {
        match (scheduled, &self.recorded) {
            (true, Some(_)) if !self.clear_override => "the rds.operator.rs/activation annotation",
            (true, _) => "spec.activationSchedule",
            (false, _) => "spec.activation",
        }
    }
}

fn invalid(why: String) -> Decision {
    Decision {
        invalid: Some(why),
        ..Decision::default()
    }
}

fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A schedule, read: its time zone and each window's two crons.
pub struct Windows {
    zone: Tz,
    crons: Vec<(Cron, Activation)>,
}

/// The schedule read, or why it cannot be.
pub fn parse(schedule: &ActivationSchedule) -> Result<Windows, String> {
    let zone = match schedule.time_zone.as_deref() {
        None => Tz::UTC,
        Some(name) => (name.parse::<Tz>()).map_err(|_| {
            format!("activationSchedule.timeZone {name:?} is not an IANA time zone")
        })?,
    };
    let parser = CronParser::builder().seconds(Seconds::Optional).build();
    let mut crons = Vec::new();
    for (n, w) in schedule.running.iter().enumerate() {
        for (field, cron, activation) in [
            ("start", &w.start, Activation::Running),
            ("stop", &w.stop, Activation::Stopped),
        ] {
            let parsed = parser.parse(cron).map_err(|e| {
                format!("activationSchedule.running[{n}].{field} {cron:?} is not a cron: {e}")
            })?;
            crons.push((parsed, activation));
        }
    }
    Ok(Windows { zone, crons })
}

impl Windows {
    /// The state at `now` (the kind of the latest boundary at or before it; None: none is known)
    /// and the next boundary after it.
    pub fn state(&self, now: DateTime<Utc>) -> (Option<Activation>, Option<DateTime<Utc>>) {
        let local = now.with_timezone(&self.zone);
        let mut latest: Option<(DateTime<Utc>, Activation)> = None;
        let mut next: Option<DateTime<Utc>> = None;
        for (cron, activation) in &self.crons {
            if let Ok(t) = cron.find_previous_occurrence(&local, true) {
                let t = t.to_utc();
                latest = match latest {
                    // A start and a stop at the same instant: it runs.
                    Some((l, a)) if l > t || (l == t && a == Activation::Running) => Some((l, a)),
                    _ => Some((t, *activation)),
                };
            }
            if let Ok(t) = cron.find_next_occurrence(&local, false) {
                let t = t.to_utc();
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        (latest.map(|(_, a)| a), next)
    }
}

#[cfg(test)]
mod tests;
