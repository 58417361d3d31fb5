//! The operator's HTTP endpoints: `/metrics` (Prometheus), `/healthz` (the process is alive: the
//! shared RDS poll keeps succeeding and no reconcile is stuck) and `/readyz` (the controller's
//! caches are synced, or the replica is a ready standby).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::lock;
use crate::metrics::Metrics;

/// When the process counts as stuck.
#[derive(Clone, Copy, Debug)]
pub struct Liveness {
    /// How often the shared poll runs at first: the drift interval (the observer says when it
    /// polls less often, as a safety net behind the event feed).
    pub poll_interval: Duration,
    /// Polls in a row that may fail (or hang) before /healthz fails.
    pub stale_polls: u32,
    /// How long one reconcile may run before /healthz fails.
    pub reconcile_limit: Duration,
}

impl Default for Liveness {
    fn default() -> Self {
        Liveness {
            poll_interval: Duration::from_secs(60),
            stale_polls: 3,
            reconcile_limit: Duration::from_secs(300),
        }
    }
}

/// Readiness, set by the process as it starts, syncs its caches, gains or loses leadership; and
/// liveness, from the shared poll's successes and the reconciles under way.
#[derive(Debug, Default)]
pub struct Health {
    ready: AtomicBool,
    leading: AtomicBool,
    liveness: Liveness,
    state: Mutex<LiveState>,
}

#[derive(Debug, Default)]
struct LiveState {
    /// How often the shared poll runs now, and since when (None: `Liveness::poll_interval`).
    poll_every: Option<(Duration, Instant)>,
    polling_since: Option<Instant>,
    poll_ok_at: Option<Instant>,
    poll_ok_wall: Option<std::time::SystemTime>,
    reconciles: HashMap<u64, Instant>,
    next: u64,
}

/// A reconcile under way; dropping it ends it.
pub struct Running<'a> {
    health: &'a Health,
    id: u64,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        lock(&self.health.state).reconciles.remove(&self.id);
    }
}

impl Health {
    pub fn new(liveness: Liveness) -> Self {
        Health {
            liveness,
            ..Default::default()
        }
    }

    /// The shared poll starts (a standby replica does not poll).
    pub fn polling_started(&self) {
        lock(&self.state)
            .polling_since
            .get_or_insert_with(Instant::now);
    }

    /// The shared poll now runs every `every` (the event feed came up, or went down). The time
    /// the poll may take to succeed counts from now.
    pub fn poll_interval(&self, every: Duration) {
        let mut state = lock(&self.state);
        if state.poll_every.map(|(d, _)| d) != Some(every) {
            state.poll_every = Some((every, Instant::now()));
        }
    }

    pub fn poll_succeeded(&self) {
        let mut state = lock(&self.state);
        state.poll_ok_at = Some(Instant::now());
        state.poll_ok_wall = Some(std::time::SystemTime::now());
    }

    /// This replica leads (or runs without leader election).
    pub fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::SeqCst);
    }

    /// What the metrics page reports of this run.
    pub fn runtime(&self) -> crate::metrics::Runtime {
        let last_poll = (lock(&self.state).poll_ok_wall)
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_secs_f64());
        crate::metrics::Runtime {
            leading: self.leading.load(Ordering::SeqCst),
            last_poll,
        }
    }

    /// A reconcile starts; it counts until the returned value is dropped.
    pub fn reconcile_started(&self) -> Running<'_> {
        let mut state = lock(&self.state);
        state.next += 1;
        let id = state.next;
        state.reconciles.insert(id, Instant::now());
        Running { health: self, id }
    }

    /// Ok while the process works; else what is stuck.
    pub fn live(&self) -> Result<(), String> {
        let state = lock(&self.state);
        // The polls that may fail, plus the interval of the one under way.
        let (every, changed) = state.poll_every.unzip();
        let limit = every.unwrap_or(self.liveness.poll_interval) * (self.liveness.stale_polls + 1);
        if let Some(since) = state.polling_since {
            let last = (state.poll_ok_at.unwrap_or(since)).max(changed.unwrap_or(since));
            if last.elapsed() > limit {
                return Err(format!(
                    "the RDS poll has not succeeded for {}s ({} drift intervals or more)",
                    last.elapsed().as_secs(),
                    self.liveness.stale_polls
                ));
            }
        }
        if let Some(oldest) = state.reconciles.values().min()
            && oldest.elapsed() > self.liveness.reconcile_limit
        {
            return Err(format!(
                "a reconcile has been running for {}s",
                oldest.elapsed().as_secs()
            ));
        }
        Ok(())
    }

    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

#[derive(Clone)]
struct AppState {
    metrics: Arc<Metrics>,
    health: Arc<Health>,
}

/// Serves the endpoints until the process ends.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/metrics", get(metrics_page))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(AppState { metrics, health });
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "serving /metrics, /healthz and /readyz");
    axum::serve(listener, app).await
}

async fn metrics_page(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.render(state.health.runtime()),
    )
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if state.health.is_ready() {
        (StatusCode::OK, "ready")
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: caches not synced yet",
        )
    }
}

async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    match state.health.live() {
        Ok(()) => (StatusCode::OK, "ok".to_owned()),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("unhealthy: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_that_stops_succeeding_or_a_stuck_reconcile_fails_liveness() {
        let health = Health::new(Liveness {
            poll_interval: Duration::from_millis(3),
            stale_polls: 1,
            reconcile_limit: Duration::from_millis(30),
        });
        assert!(
            health.live().is_ok(),
            "a standby that does not poll is live"
        );
        health.polling_started();
        health.poll_succeeded();
        assert!(health.live().is_ok());
        std::thread::sleep(Duration::from_millis(12));
        assert!(health.live().unwrap_err().contains("poll"));
        health.poll_succeeded();
        let running = health.reconcile_started();
        assert!(health.live().is_ok());
        std::thread::sleep(Duration::from_millis(40));
        health.poll_succeeded();
        assert!(health.live().unwrap_err().contains("reconcile"));
        drop(running);
        assert!(health.live().is_ok());
    }

    #[test]
    fn a_safety_net_poll_is_not_a_stale_poll() {
        let health = Health::new(Liveness {
            poll_interval: Duration::from_millis(3),
            stale_polls: 1,
            reconcile_limit: Duration::from_secs(30),
        });
        health.polling_started();
        health.poll_succeeded();
        // The event feed is up: the poll runs every second.
        health.poll_interval(Duration::from_secs(1));
        std::thread::sleep(Duration::from_millis(12));
        assert!(health.live().is_ok(), "within the safety-net interval");
        // The feed goes down: the poll is due every 3 ms again, counted from now.
        health.poll_interval(Duration::from_millis(3));
        assert!(health.live().is_ok(), "the poll due at once has its time");
        std::thread::sleep(Duration::from_millis(12));
        assert!(health.live().unwrap_err().contains("poll"));
    }
}
