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
//! (one retry partition per location, `Rds::new`): once AWS throttles, every call of the location
//! is slowed by one budget.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;
use tokio::sync::broadcast;

use super::Place;
use crate::breaker::{Admit, Breaker, Change, Refused};
use crate::lock;

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
        let health = Arc::new(Health {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            place: place.clone(),
            breaker: Mutex::new(Breaker::new(FIRST_PROBE)),
            last_answer: Mutex::new(None),
            probing: AtomicBool::new(false),
            recovered: self.recovered.clone(),
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
    last_answer: Mutex<Option<SystemTime>>,
    /// A prober runs (`Rds::probe`).
    probing: AtomicBool,
    recovered: broadcast::Sender<u64>,
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

    /// When AWS last answered a call here.
    pub fn last_answer(&self) -> Option<SystemTime> {
        *lock(&self.last_answer)
    }

    /// Whether a call may be sent now: Err says when the location is tried again.
    fn admit(&self) -> Result<(), Refused> {
        let now = Instant::now();
        match lock(&self.breaker).admit(now) {
            Admit::Call | Admit::Probe => Ok(()),
            Admit::Refuse { probe_at } => {
                let next = SystemTime::now() + probe_at.saturating_duration_since(now);
                Err(Refused {
                    location: self.id,
                    place: format!("account {} region {}", self.account(), self.place.region()),
                    next_probe: crate::duration::rfc3339(next),
                })
            }
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
