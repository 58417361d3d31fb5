//! One location's health as its RDS clients see it: the location's [`Breaker`], the gate every
//! call of the location's clients passes (an SDK interceptor, so no call site can forget it), and
//! the news of its recovery. The answers are recorded where every call is counted
//! (`Rds::count`); a throttled or unavailable answer opens the breaker, and while it is open the
//! gate refuses each attempt before it is sent, with an error that says when the next probe goes
//! ([`Refused`]). While it is open, one prober per location (`Rds::probe`) sends a small
//! DescribeDBInstances when each probe is due; objects do not probe. When the probe's answer
//! closes the breaker, the location's id is sent to
//! [`Healths::recoveries`], which wakes the objects that waited (`managed::skeleton`).
//!
//! The SDK's own retries are off for these clients (one attempt a call): a throttled call opens
//! the breaker, and the only retries are the probe and the objects' requeues, so the SDK's
//! retries never multiply the skeleton's. The clients share the SDK's adaptive rate limiter
//! (one retry partition per location, which the gate puts in every call's config): once AWS
//! throttles, every call of the location is slowed by one budget. When a probe closes the breaker,
//! the location gets a fresh limiter: the breaker stood for the throttling the old one remembered,
//! and the old one, which measured the probes' trickle, would let the woken objects through at
//! a fraction of a call a second, growing back over seconds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use aws_sdk_rds::config::retry::RetryPartition;
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::{
    BeforeTransmitInterceptorContextMut, BeforeTransmitInterceptorContextRef,
};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use tokio::sync::broadcast;

use super::Place;
use crate::breaker::{Admit, Breaker, Change, Refused};
use crate::lock;
use crate::silence::{Heard, Silence, Unanswered};

/// The first wait before a probe; doubled with each failed probe, up to `breaker::MAX_BACKOFF`.
pub const FIRST_PROBE: Duration = Duration::from_secs(2);

/// Every location's health, for the metrics and for the news of recoveries.
#[derive(Debug)]
pub struct Healths {
    /// Held weakly: a location's health goes with its last adapter.
    all: Mutex<Vec<Weak<Health>>>,
    next_id: AtomicU64,
    recovered: broadcast::Sender<u64>,
}

impl Default for Healths {
    fn default() -> Self {
        Healths {
            all: Mutex::default(),
            next_id: AtomicU64::new(1),
            recovered: broadcast::channel(1024).0,
        }
    }
}

impl Healths {
    /// A new location's health.
    pub fn add(&self, place: &Place) -> Arc<Health> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let health = Arc::new(Health {
            id,
            place: place.clone(),
            breaker: Mutex::new(Breaker::new(FIRST_PROBE)),
            silence: Mutex::default(),
            last_answer: Mutex::new(None),
            probing: AtomicBool::new(false),
            recovered: self.recovered.clone(),
            budget: Mutex::new(Budget::fresh(id, 0)),
        });
        let mut all = lock(&self.all);
        all.retain(|h| h.strong_count() > 0);
        all.push(Arc::downgrade(&health));
        health
    }

    /// Every location's health.
    pub fn all(&self) -> Vec<Arc<Health>> {
        lock(&self.all).iter().filter_map(Weak::upgrade).collect()
    }

    /// Whether the location of this id holds its calls back now (its breaker open or probing).
    pub fn held(&self, id: u64) -> bool {
        (self.all().iter()).any(|h| h.id == id && h.state() != "closed")
    }

    /// The ids of the locations that recover, as they do.
    pub fn recoveries(&self) -> broadcast::Receiver<u64> {
        self.recovered.subscribe()
    }
}

/// One location's health.
#[derive(Debug)]
pub struct Health {
    id: u64,
    place: Place,
    breaker: Mutex<Breaker>,
    /// Since when no call here got an answer (a throttle is one): a failover's evidence.
    silence: Mutex<Silence>,
    last_answer: Mutex<Option<SystemTime>>,
    /// A prober runs (`Rds::probe`).
    probing: AtomicBool,
    recovered: broadcast::Sender<u64>,
    /// The location's call budget: the retry partition of its clients' calls.
    budget: Mutex<Budget>,
}

/// The retry partition a location's calls are made in, which holds its adaptive rate limiter;
/// a new one (the next generation) after each recovery.
#[derive(Debug)]
struct Budget {
    generation: u64,
    partition: RetryPartition,
}

impl Budget {
    /// A partition with a new limiter, which slows nothing until AWS throttles again.
    fn fresh(location: u64, generation: u64) -> Self {
        let name = format!("rds-operator-location-{location}-{generation}");
        Budget {
            generation,
            partition: RetryPartition::custom(name).build(),
        }
    }
}

impl Health {
    /// The location's id (unique in this process), which its recovery is announced by.
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn place(&self) -> &Place {
        &self.place
    }

    /// closed, open or probing.
    pub fn state(&self) -> &'static str {
        lock(&self.breaker).state()
    }

    /// How long no call here got any answer, throttles included (`crate::silence`); None while
    /// the location answers.
    pub fn unanswered(&self) -> Option<Unanswered> {
        lock(&self.silence).unanswered(SystemTime::now())
    }

    /// The last answer heard here (a throttle is one) and when; None if none ever came.
    pub fn answered(&self) -> Option<(Heard, SystemTime)> {
        lock(&self.silence).answered()
    }

    /// What a call's outcome says of the location (`code`: its error code), for its silence.
    pub(crate) fn hear(&self, heard: Heard, code: &str) {
        lock(&self.silence).heard(heard, code, SystemTime::now());
    }

    /// When AWS last answered a call here.
    pub fn last_answer(&self) -> Option<SystemTime> {
        *lock(&self.last_answer)
    }

    /// Whether a call may be sent now: Err says when the location is tried again.
    fn admit(&self) -> Result<(), Refused> {
        let now = Instant::now();
        match lock(&self.breaker).admit(now) {
            Admit::Call | Admit::Probe => Ok(()),
            Admit::Refuse { probe_at } => Err(self.refusal(probe_at)),
        }
    }

    /// While the breaker holds the location's calls back: what a refused call is told (where,
    /// and when the next probe goes).
    pub fn holding(&self) -> Option<Refused> {
        let probe_at = lock(&self.breaker).probe_at()?;
        Some(self.refusal(probe_at))
    }

    fn refusal(&self, probe_at: Instant) -> Refused {
        let next = SystemTime::now() + probe_at.saturating_duration_since(Instant::now());
        Refused {
            location: self.id,
            place: format!("account {} region {}", self.account(), self.place.region()),
            next_probe: crate::duration::rfc3339(next),
        }
    }

    fn account(&self) -> &str {
        match self.place.account() {
            "" => "(not yet known)",
            account => account,
        }
    }

    /// A call's outcome: AWS answered (`available`), or it throttled or did not answer. True when
    /// the breaker opened and nothing probes it yet: the caller starts the prober.
    pub(crate) fn record(&self, available: bool) -> bool {
        let change = {
            let mut breaker = lock(&self.breaker);
            if available {
                breaker.answered()
            } else {
                breaker.unavailable(Instant::now(), rand::random::<f64>())
            }
        };
        if available {
            *lock(&self.last_answer) = Some(SystemTime::now());
        }
        match change {
            Change::Closed => {
                let mut budget = lock(&self.budget);
                *budget = Budget::fresh(self.id, budget.generation + 1);
                drop(budget);
                tracing::info!(place = %self.place.region(), account = self.account(), "AWS answers again: the location's breaker closed");
                let _ = self.recovered.send(self.id);
            }
            Change::Opened { probe_at } => {
                tracing::warn!(
                    place = %self.place.region(),
                    account = self.account(),
                    retry_in_ms = probe_at.saturating_duration_since(Instant::now()).as_millis()
                        as u64,
                    "AWS throttles or does not answer: no call to this location until a probe's answer"
                );
                return !self.probing.swap(true, Ordering::AcqRel);
            }
            Change::None => {}
        }
        false
    }

    /// The retry partition the location's calls are made in now.
    fn partition(&self) -> RetryPartition {
        lock(&self.budget).partition.clone()
    }

    /// When the next probe is due; None once the breaker is closed (the prober stops then).
    pub(crate) fn next_probe(&self) -> Option<Instant> {
        let next = lock(&self.breaker).probe_at();
        if next.is_none() {
            self.probing.store(false, Ordering::Release);
        }
        next
    }
}

/// The interceptor every attempt of a location's clients passes.
#[derive(Debug)]
pub(crate) struct Gate(pub Arc<Health>);

impl Intercept for Gate {
    fn name(&self) -> &'static str {
        "LocationBreaker"
    }

    /// The location's budget, put in the call's config before the SDK's retry strategy reads it
    /// (the first attempt's permit is asked for after this hook).
    fn modify_before_retry_loop(
        &self,
        _context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        cfg.interceptor_state().store_put(self.0.partition());
        Ok(())
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0
            .admit()
            .map_err(|refused| Box::new(refused) as BoxError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A location's health whose probes are due at once.
    fn health() -> Arc<Health> {
        let health = Healths::default().add(&Place::new("111111111111", "us-east-1"));
        *lock(&health.breaker) = Breaker::new(Duration::ZERO);
        health
    }

    #[test]
    fn a_recovery_starts_the_location_budget_afresh_and_nothing_else_does() {
        let health = health();
        let first = health.partition();
        assert!(!health.record(true));
        assert_eq!(health.partition(), first);
        // The breaker opens: the budget is kept (it slows the probes as AWS throttles).
        assert!(health.record(false), "the caller starts the prober");
        assert!(!health.record(true), "an answer sent before it opened");
        assert_eq!(health.partition(), first);
        // The probe's answer closes it: a new limiter, which slows nothing yet.
        assert!(health.admit().is_ok());
        health.record(true);
        assert_eq!(health.state(), "closed");
        let second = health.partition();
        assert_ne!(second, first);
        assert_eq!(
            second.to_string(),
            format!("rds-operator-location-{}-1", health.id())
        );
        // Calls in the closed location keep it.
        health.record(true);
        assert_eq!(health.partition(), second);
    }
}
