//! One location's health (an AWS account and region), as a circuit breaker. Pure: the caller
//! gives the time. RDS throttles per account and region, so while AWS does not answer there, no
//! object's reconcile may call it: the breaker opens on the first throttling or unavailability
//! answer, refuses every call while open, lets one probe through when its backoff is over, and
//! closes on the probe's answer. A location's breaker never waits on another's.
//!
//! - **Closed:** every call goes. An unavailable answer opens it.
//! - **Open:** every call is refused until `probe_at`; the first call then is the probe.
//! - **Probing:** one call is out; the others are refused. Its answer closes the breaker, its
//!   failure opens it again with a longer backoff. A probe that never answers (a lost reply) is
//!   replaced after [`PROBE_TIMEOUT`].
//!
//! While open, the answers of calls made before it opened are not news and change nothing: only
//! the probe's answer does (else a brown-out that fails half the calls would open and close it
//! with every answer).

use std::time::{Duration, Instant};

/// How long a probe may go unanswered before another call may probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest wait between probes: a location that answers again is found within about as long
/// (with jitter, a quarter more), for about twelve calls a minute while it does not.
pub const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    Open { probe_at: Instant },
    Probing { since: Instant },
}

/// What a call may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// The location is healthy: call.
    Call,
    /// Call: this call is the probe, and its answer decides.
    Probe,
    /// Make no call; the location is tried again at `probe_at` (and its recovery wakes the
    /// caller sooner).
    Refuse { probe_at: Instant },
}

/// What an answer did to the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    None,
    /// It opened (or stayed open after a failed probe): no call until `probe_at`.
    Opened {
        probe_at: Instant,
    },
    /// It closed: AWS answers again.
    Closed,
}

/// One location's breaker.
#[derive(Clone, Debug)]
pub struct Breaker {
    state: State,
    /// Failed probes since it opened (the backoff's exponent).
    failures: u32,
    /// The first backoff, doubled with each failed probe up to [`MAX_BACKOFF`].
    base: Duration,
}

impl Breaker {
    pub fn new(base: Duration) -> Self {
        Breaker {
            state: State::Closed,
            failures: 0,
            base,
        }
    }

    /// The state's name, for the metric: closed, open or probing.
    pub fn state(&self) -> &'static str {
        match self.state {
            State::Closed => "closed",
            State::Open { .. } => "open",
            State::Probing { .. } => "probing",
        }
    }

    /// When the next probe may go, while the breaker is not closed.
    pub fn probe_at(&self) -> Option<Instant> {
        match self.state {
            State::Closed => None,
            State::Open { probe_at } => Some(probe_at),
            State::Probing { since } => Some(since + PROBE_TIMEOUT),
        }
    }

    /// Whether a call may go now.
    pub fn admit(&mut self, now: Instant) -> Admit {
        match self.probe_at() {
            None => Admit::Call,
            Some(at) if now >= at => {
                self.state = State::Probing { since: now };
                Admit::Probe
            }
            Some(probe_at) => Admit::Refuse { probe_at },
        }
    }

    /// AWS answered a call (any answer but throttling or unavailability: a success, or an error
    /// AWS decided).
    pub fn answered(&mut self) -> Change {
        match self.state {
            State::Probing { .. } => {
                self.state = State::Closed;
                self.failures = 0;
                Change::Closed
            }
            State::Closed | State::Open { .. } => Change::None,
        }
    }

    /// A call was throttled, or AWS was unavailable (5xx, no answer). `jitter` (0 to 1) spreads
    /// the probes of many operators over a quarter of the backoff.
    pub fn unavailable(&mut self, now: Instant, jitter: f64) -> Change {
        match self.state {
            State::Open { .. } => return Change::None,
            State::Closed => self.failures = 0,
            State::Probing { .. } => self.failures += 1,
        }
        let backoff = (self.base * 2u32.saturating_pow(self.failures.min(16))).min(MAX_BACKOFF);
        let probe_at = now + backoff.mul_f64(1.0 + jitter.clamp(0.0, 1.0) / 4.0);
        self.state = State::Open { probe_at };
        Change::Opened { probe_at }
    }
}

/// A call the gate did not send: its location's breaker is open.
#[derive(Clone, Debug, thiserror::Error)]
#[error(
    "AWS throttles or does not answer in {place}: no call is made there until it answers again \
     (probed every few seconds, next at {next_probe}); this resource is tried again then"
)]
pub struct Refused {
    /// The location's id (`rds::health`).
    pub location: u64,
    /// "account 123456789012 region us-east-1"
    pub place: String,
    /// When the next probe goes (RFC 3339).
    pub next_probe: String,
}

/// How long an object the breaker refused waits at most before it tries again: the location's
/// recovery wakes it first (`managed::recovery`), so this is only a safety net.
pub const REFUSED_WAIT: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_secs(2);

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn a_closed_breaker_lets_every_call_go_and_ignores_answers() {
        let mut b = Breaker::new(BASE);
        let now = Instant::now();
        assert_eq!(b.admit(now), Admit::Call);
        assert_eq!(b.answered(), Change::None);
        assert_eq!((b.state(), b.probe_at()), ("closed", None));
    }

    #[test]
    fn unavailability_opens_and_refuses_until_one_probe() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BASE);
        assert_eq!(
            b.unavailable(t0, 0.0),
            Change::Opened {
                probe_at: t0 + BASE
            }
        );
        // Every call is refused until the probe is due, each told when.
        for at in [t0, t0 + secs(1)] {
            assert_eq!(
                b.admit(at),
                Admit::Refuse {
                    probe_at: t0 + BASE
                }
            );
        }
        // A second failure of a call made before it opened is not news.
        assert_eq!(b.unavailable(t0 + secs(1), 0.0), Change::None);
        // One probe; the others are refused while it is out.
        assert_eq!(b.admit(t0 + BASE), Admit::Probe);
        assert_eq!(b.state(), "probing");
        assert!(matches!(b.admit(t0 + BASE), Admit::Refuse { .. }));
        // Its answer closes the breaker.
        assert_eq!(b.answered(), Change::Closed);
        assert_eq!(b.admit(t0 + BASE), Admit::Call);
    }

    #[test]
    fn while_open_only_the_probe_decides() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BASE);
        b.unavailable(t0, 0.0);
        assert_eq!(b.answered(), Change::None, "a call from before it opened");
        assert_eq!(b.state(), "open");
    }

    #[test]
    fn failed_probes_back_off_exponentially_up_to_the_cap_with_jitter() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BASE);
        b.unavailable(t0, 0.0);
        let mut now = t0;
        let mut waits = Vec::new();
        for _ in 0..7 {
            now = b.probe_at().unwrap();
            assert_eq!(b.admit(now), Admit::Probe);
            let Change::Opened { probe_at } = b.unavailable(now, 0.0) else {
                panic!("a failed probe opens the breaker again");
            };
            waits.push((probe_at - now).as_secs());
        }
        assert_eq!(waits, vec![4, 5, 5, 5, 5, 5, 5]);
        // Jitter lengthens a wait by up to a quarter.
        assert_eq!(b.admit(b.probe_at().unwrap()), Admit::Probe);
        let Change::Opened { probe_at } = b.unavailable(now, 1.0) else {
            panic!()
        };
        assert_eq!(probe_at - now, Duration::from_millis(6_250));
        // Recovery resets the backoff.
        assert_eq!(b.admit(probe_at), Admit::Probe);
        assert_eq!(b.answered(), Change::Closed);
        assert_eq!(
            b.unavailable(probe_at, 0.0),
            Change::Opened {
                probe_at: probe_at + BASE
            }
        );
    }

    #[test]
    fn a_probe_that_never_answers_is_replaced() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BASE);
        b.unavailable(t0, 0.0);
        assert_eq!(b.admit(t0 + BASE), Admit::Probe);
        let lost = t0 + BASE + PROBE_TIMEOUT;
        assert_eq!(b.admit(lost - secs(1)), Admit::Refuse { probe_at: lost });
        assert_eq!(b.admit(lost), Admit::Probe);
    }
}
