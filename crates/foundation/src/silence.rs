//! How long a location (an AWS account and region) has answered nothing: the evidence a data-loss
//! failover may be approved on. Pure: the caller gives the time.
//!
//! The location's breaker (`crate::breaker`) opens on the first throttling answer, which is right
//! for sparing AWS but says nothing about whether the region is down: a throttle is an answer, from
//! a region that is up. A silence counts only calls that got no answer or a 5xx, and any answer,
//! a throttle included, ends it. So a region that keeps throttling is never silent, and a region
//! that is silent must have failed every call made there (the breaker's probes, while it is open)
//! for the whole time.

use std::time::{Duration, SystemTime};

/// What one call's outcome says of its location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heard {
    /// AWS answered: a success, or an error AWS decided (a refusal, a busy resource).
    Answer,
    /// AWS throttled the call: it is up, and busy.
    Throttled,
    /// No answer came, or a 5xx did.
    Nothing,
}

/// A location's current silence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Silence {
    since: Option<SystemTime>,
    calls: u32,
    last: String,
    /// The last answer (a throttle is one), and when: kept through a silence, for the evidence.
    answered: Option<(Heard, SystemTime)>,
}

/// A silence as evidence: since when, for how long, how many calls it swallowed and the last one's
/// error code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unanswered {
    pub since: SystemTime,
    pub silent_for: Duration,
    pub calls: u32,
    pub last: String,
}

impl Silence {
    /// A call's outcome (`code`: its error code, for the evidence).
    pub fn heard(&mut self, heard: Heard, code: &str, now: SystemTime) {
        match heard {
            Heard::Answer | Heard::Throttled => {
                *self = Silence {
                    answered: Some((heard, now)),
                    ..Silence::default()
                }
            }
            Heard::Nothing => {
                self.since.get_or_insert(now);
                self.calls += 1;
                code.clone_into(&mut self.last);
            }
        }
    }

    /// The last answer heard here (a success, a refusal or a throttle) and when; None if no call
    /// here was ever answered.
    pub fn answered(&self) -> Option<(Heard, SystemTime)> {
        self.answered
    }

    /// The silence as of `now`, if the location is silent.
    pub fn unanswered(&self, now: SystemTime) -> Option<Unanswered> {
        let since = self.since?;
        Some(Unanswered {
            since,
            silent_for: now.duration_since(since).unwrap_or_default(),
            calls: self.calls,
            last: self.last.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + secs)
    }

    #[test]
    fn ten_minutes_of_throttling_is_no_silence() {
        let mut s = Silence::default();
        for second in (0..600).step_by(5) {
            s.heard(Heard::Throttled, "Throttling", at(second));
            assert_eq!(s.unanswered(at(second)), None, "at {second} s");
        }
    }

    #[test]
    fn a_silence_lasts_while_every_call_goes_unanswered_and_any_answer_ends_it() {
        let mut s = Silence::default();
        s.heard(Heard::Answer, "", at(0));
        s.heard(Heard::Nothing, "NoResponse", at(0));
        s.heard(Heard::Nothing, "InternalFailure", at(5));
        let found = s.unanswered(at(30)).expect("silent");
        assert_eq!(
            (
                found.since,
                found.silent_for,
                found.calls,
                found.last.as_str()
            ),
            (at(0), Duration::from_secs(30), 2, "InternalFailure")
        );
        // The last answer before the silence is kept through it.
        assert_eq!(s.answered(), Some((Heard::Answer, at(0))));
        for ending in [Heard::Answer, Heard::Throttled] {
            let mut ended = s.clone();
            ended.heard(ending, "", at(31));
            assert_eq!(ended.unanswered(at(31)), None, "{ending:?} ends it");
            assert_eq!(
                ended.answered(),
                Some((ending, at(31))),
                "and is remembered"
            );
            // A new silence starts afresh.
            ended.heard(Heard::Nothing, "NoResponse", at(40));
            assert_eq!(ended.unanswered(at(40)).map(|u| u.since), Some(at(40)));
        }
    }
}
