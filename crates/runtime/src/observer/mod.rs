//! How the operator learns what RDS holds. Every read of RDS state goes through [`Observer`]: one
//! shared, paginated poll per drift interval (ceil(N/100) DescribeDBInstances for N instances),
//! which wakes exactly the DBInstances whose instance changed, and targeted describes only where
//! the snapshot cannot be trusted. With the event feed (`feed.rs`) the instances an event names
//! are read at once, and the shared poll becomes a safety net at a longer interval while the feed's
//! queue answers.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::Stream;
use tokio::sync::{Notify, broadcast, watch};
use tracing::{debug, warn};

mod health;
pub mod listing;

use crate::aws_error::AwsError;
use crate::crd::{OWNER_NAME_TAG, OWNER_TAG};
use crate::http::Health;
use crate::lock;
use crate::rds::Rds;
use crate::rds_state::{
    Observation, ObservedInstance, PollIntervals, is_transitional, restorable_time,
};
use listing::{Listed, Listing, Listings};

/// How an instance as RDS describes it is read into what the plans observe: DBInstance's reading
/// (`dbinstance::aws::observed`), handed in by whoever makes the observer, since the plumbing does
/// not know the kind's field table.
pub type ReadInstance = fn(&aws_sdk_rds::types::DbInstance) -> ObservedInstance;

/// The object an RDS instance belongs to, by its ownership tags (`namespace/name`): what a poll
/// wakes. The observer names no kind; the kind that owns instances turns it into its own object
/// reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Owner {
    pub namespace: Option<String>,
    pub name: String,
}

/// What a broadcast receiver hears, as a stream: the wakes of the polls, the names of changed
/// accounts. Missed messages are skipped (the periodic requeue catches them).
pub fn wakes<T: Clone + Send + 'static>(
    rx: broadcast::Receiver<T>,
) -> impl Stream<Item = T> + Send + 'static {
    futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(r) => return Some((r, rx)),
                // Missed wakes are caught by the periodic requeue.
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

/// A channel of wakes, for the observers of every location.
pub fn wake_channel() -> broadcast::Sender<Owner> {
    broadcast::channel(WAKE_CAPACITY).0
}

/// Reads RDS state for the reconciler: one shared, paginated DescribeDBInstances poll per drift
/// interval for the whole account and region, and a targeted describe only where the snapshot
/// cannot be trusted (right after a mutation, while RDS is busy, for an identifier it lacks, or
/// when the snapshot is older than the caller accepts).
pub struct Observer {
    rds: Rds,
    pub intervals: PollIntervals,
    /// How an instance RDS describes is read into what the plans observe (DBInstance's reading).
    pub read: ReadInstance,
    state: Mutex<State>,
    loaded: watch::Sender<bool>,
    wake: broadcast::Sender<Owner>,
    feed: Option<Feed>,
    /// The shared listings of what is not an instance (`listing.rs`), each made once a reconcile
    /// asks.
    listings: Listings,
    /// What the health poll found in CloudWatch (`health.rs`).
    health: Mutex<health::HealthState>,
    /// How often the health poll reads CloudWatch; zero: never.
    health_every: Duration,
}

/// The event feed as the observer sees it.
struct Feed {
    /// The shared poll's interval while the feed's queue answers.
    safety_net: Duration,
    alive: AtomicBool,
    changed: Notify,
}

#[derive(Default)]
struct State {
    /// Every instance of the account and region by identifier, ours or not (a foreign one must be
    /// seen to be refused).
    snapshot: HashMap<String, Entry>,
    /// When the last full poll started.
    polled_at: Option<Instant>,
    /// Identifiers mutated since their last targeted describe: the snapshot is stale for them.
    dirty: HashSet<String>,
    /// Identifiers direct reads have found absent, since when (cleared when one is found).
    absent_since: HashMap<String, Instant>,
}

struct Entry {
    instance: ObservedInstance,
    /// When this entry was read (a poll's start, or a targeted describe).
    read_at: Instant,
}

impl Observer {
    pub fn new(rds: Rds, intervals: PollIntervals, read: ReadInstance) -> Self {
        Observer {
            rds,
            intervals,
            read,
            state: Mutex::default(),
            loaded: watch::channel(false).0,
            wake: broadcast::channel(WAKE_CAPACITY).0,
            feed: None,
            listings: Listings::default(),
            health: Mutex::default(),
            health_every: health::DEFAULT_EVERY,
        }
    }

    /// With the health poll every `every` (zero: none; `health.rs`).
    pub fn health_every(mut self, every: Duration) -> Self {
        self.health_every = every;
        self
    }

    /// How often the health poll reads CloudWatch (zero: never).
    pub fn health_interval(&self) -> Duration {
        self.health_every
    }

    /// Wakes through `wake`, which every location's observer shares (see `locations.rs`).
    pub fn waking(mut self, wake: broadcast::Sender<Owner>) -> Self {
        self.wake = wake;
        self
    }

    /// With an event feed: while its queue answers, the shared poll runs every `safety_net`.
    pub fn with_event_feed(mut self, safety_net: Duration) -> Self {
        self.feed = Some(Feed {
            safety_net,
            alive: AtomicBool::new(false),
            changed: Notify::new(),
        });
        self
    }

    /// The feed's queue answered (true) or failed (false). A failing feed brings the shared poll
    /// back to the drift interval at once.
    pub fn feed_alive(&self, alive: bool) {
        if let Some(feed) = &self.feed
            && feed.alive.swap(alive, Ordering::SeqCst) != alive
        {
            feed.changed.notify_one();
        }
    }

    /// How often the shared poll runs now: the drift interval, or the safety net while the event
    /// feed is alive.
    pub fn poll_every(&self) -> Duration {
        match &self.feed {
            Some(feed) if feed.alive.load(Ordering::SeqCst) => {
                feed.safety_net.max(self.intervals.settled)
            }
            _ => self.intervals.settled,
        }
    }

    /// The shared listing of `T` (the clusters, the subnet groups, the parameter groups).
    pub fn listing<T: Listed>(&self) -> Arc<Listing<T>> {
        self.listings.of::<T>()
    }

    /// The DBInstances to reconcile because what RDS holds for them changed, as the polls find them.
    pub fn changes(&self) -> impl Stream<Item = Owner> + Send + 'static {
        wakes(self.wake.subscribe())
    }

    /// The instance with this identifier, or None when RDS has none. `max_age` is how old a
    /// snapshot entry may be (a DBInstance's own drift interval).
    pub async fn observe(
        &self,
        identifier: &str,
        max_age: Duration,
    ) -> Result<Observation, AwsError> {
        match self.cached(identifier, max_age, true).await {
            Some(observation) => Ok(observation),
            None => self.observe_directly(identifier).await,
        }
    }

    /// The shared poll's entry for the identifier when it may serve (fresh enough, not mutated by
    /// the operator since, not busy); None when a direct read is needed.
    pub async fn cached(
        &self,
        identifier: &str,
        max_age: Duration,
        wait: bool,
    ) -> Option<Observation> {
        if wait {
            self.wait_loaded().await;
        }
        {
            let state = lock(&self.state);
            // The shared poll keeps entries as fresh as the drift interval; a DBInstance asking for
            // a shorter one, or a poll that stopped coming, needs a direct read.
            let polls_alive = state
                .polled_at
                .is_some_and(|t| t.elapsed() <= self.poll_every() * 3);
            let fresh_enough = |entry: &Entry| {
                max_age >= self.intervals.settled || entry.read_at.elapsed() <= max_age
            };
            if !state.dirty.contains(identifier)
                && polls_alive
                && let Some(entry) = state.snapshot.get(identifier)
                && fresh_enough(entry)
                && !is_transitional(&entry.instance.status)
            {
                return Some(Observation {
                    instance: Some(entry.instance.clone()),
                    direct: false,
                });
            }
        }
        None
    }

    /// The shared poll's last entry for the identifier however old, unless the operator changed
    /// the instance since (then the entry is known stale): what a reconcile whose namespace spent
    /// its read budget sees.
    pub fn last_polled(&self, identifier: &str) -> Option<Observation> {
        let state = lock(&self.state);
        if state.dirty.contains(identifier) {
            return None;
        }
        let entry = state.snapshot.get(identifier)?;
        Some(Observation {
            instance: Some(entry.instance.clone()),
            direct: false,
        })
    }

    /// The instance with this identifier, read by a DescribeDBInstances of its own: what a
    /// destructive decision is made on.
    pub async fn observe_directly(&self, identifier: &str) -> Result<Observation, AwsError> {
        let read_at = Instant::now();
        let fresh = (self.rds.db_instance(identifier).await?).map(|i| (self.read)(&i));
        let mut state = lock(&self.state);
        match &fresh {
            Some(instance) => {
                if !is_transitional(&instance.status) {
                    state.dirty.remove(identifier);
                }
                state.absent_since.remove(identifier);
                state.snapshot.insert(
                    identifier.to_owned(),
                    Entry {
                        instance: instance.clone(),
                        read_at,
                    },
                );
            }
            None => {
                state.dirty.remove(identifier);
                state.snapshot.remove(identifier);
                state
                    .absent_since
                    .entry(identifier.to_owned())
                    .or_insert(read_at);
            }
        }
        Ok(Observation {
            instance: fresh,
            direct: true,
        })
    }

    /// How long direct reads have found no instance with this identifier.
    pub fn absent_for(&self, identifier: &str) -> Option<Duration> {
        lock(&self.state)
            .absent_since
            .get(identifier)
            .map(Instant::elapsed)
    }

    /// Whether RDS reports any instance of the account and region as renaming.
    pub fn rename_in_progress(&self) -> bool {
        let state = lock(&self.state);
        state
            .snapshot
            .values()
            .any(|e| e.instance.status == "renaming")
    }

    /// The operator changed this instance: read it directly until it settles.
    pub fn mutated(&self, identifier: &str) {
        lock(&self.state).dirty.insert(identifier.to_owned());
    }

    /// Waits for the first poll (at most one drift interval), so a start with N DBInstances costs
    /// ceil(N/100) calls rather than N.
    async fn wait_loaded(&self) {
        let mut loaded = self.loaded.subscribe();
        let _ = tokio::time::timeout(self.intervals.settled, loaded.wait_for(|l| *l)).await;
    }

    /// Polls every drift interval (the safety net while the event feed is alive) until `shutdown`
    /// turns true; each poll is bounded by [`POLL_BOUND_INTERVALS`] drift intervals (and each call
    /// by the SDK's timeouts), and `health` hears of each that succeeds.
    pub async fn run(&self, shutdown: watch::Receiver<bool>, health: Arc<Health>) {
        tokio::join!(
            self.run_instances(shutdown.clone(), health),
            self.run_health(shutdown)
        );
    }

    /// The instance poll and the listings, every drift interval (the safety net while the event
    /// feed is alive).
    async fn run_instances(&self, mut shutdown: watch::Receiver<bool>, health: Arc<Health>) {
        health.polling_started();
        loop {
            let started = Instant::now();
            let bound = (self.intervals.settled * POLL_BOUND_INTERVALS).max(POLL_BOUND_FLOOR);
            let mut poll = Poll::new(started);
            let pages = (self.rds).db_instance_pages(|page| {
                self.absorb_page(&mut poll, page.iter().map(self.read).collect())
            });
            let finished = match tokio::time::timeout(bound, pages).await {
                Ok(Ok(())) => true,
                Ok(Err(e)) => {
                    warn!(error = %e, "polling RDS failed; trying again next interval");
                    false
                }
                Err(_) => {
                    warn!(
                        ?bound,
                        "polling RDS did not finish in time; trying again next interval"
                    );
                    false
                }
            };
            self.end_poll(poll, finished);
            if finished {
                health.poll_succeeded();
            }
            self.poll_listings(bound).await;
            // Until the next poll is due; the feed starting or stopping changes when that is.
            loop {
                health.poll_interval(self.poll_every());
                let next = self.poll_every().saturating_sub(started.elapsed());
                if next.is_zero() {
                    break;
                }
                let feed_changed = async {
                    match &self.feed {
                        Some(feed) => feed.changed.notified().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = tokio::time::sleep(next) => break,
                    _ = feed_changed => {}
                    _ = shutdown.wait_for(|s| *s) => return,
                }
            }
        }
    }

    /// One listing of each type a reconcile asked for, each bounded by `bound`; the tags of the
    /// types whose pages lack them come from one GetResources for all of them.
    async fn poll_listings(&self, bound: Duration) {
        let wanted = self.listings.wanted();
        let types: Vec<&str> = wanted.iter().filter_map(|l| l.tagged_as()).collect();
        let tags = match types.is_empty() {
            true => Ok(Default::default()),
            false => match tokio::time::timeout(bound, self.rds.tags_of_types(&types)).await {
                Ok(result) => result.map_err(|e| e.to_string()),
                Err(_) => Err(format!("GetResources did not finish within {bound:?}")),
            },
        };
        for listing in wanted {
            let what = listing.what();
            let tags = match (&tags, listing.tagged_as()) {
                (Err(e), Some(_)) => {
                    warn!(error = %e, "listing {what} failed; their reconciles read them");
                    continue;
                }
                (Ok(tags), _) => tags,
                (Err(_), None) => &Default::default(),
            };
            match tokio::time::timeout(bound, listing.poll(&self.rds, tags)).await {
                Ok(Ok(instances)) => self.wake_instances(&instances),
                Ok(Err(e)) => {
                    warn!(error = %e, "listing {what} failed; their reconciles read them")
                }
                Err(_) => warn!(?bound, "listing {what} did not finish in time"),
            }
        }
    }

    /// Events named these instances: reads them (one DescribeDBInstances per 100), takes what it
    /// finds into the snapshot, and wakes their DBInstances. When the read fails, the named
    /// instances are read directly by their own reconciles instead.
    pub async fn notified(&self, identifiers: Vec<String>) {
        for chunk in identifiers.chunks(100) {
            let started = Instant::now();
            match self.rds.db_instances(chunk).await {
                Ok(found) => {
                    let found = found.iter().map(self.read).collect();
                    self.absorb_named(chunk, found, started)
                }
                Err(e) => {
                    warn!(error = %e, "reading the instances events named failed; their reconciles read them");
                    let mut state = lock(&self.state);
                    let owners: Vec<_> = (chunk.iter())
                        .filter_map(|id| state.snapshot.get(id).and_then(|e| owner(&e.instance)))
                        .collect();
                    state.dirty.extend(chunk.iter().cloned());
                    drop(state);
                    owners.into_iter().for_each(|o| {
                        let _ = self.wake.send(o);
                    });
                }
            }
        }
    }

    /// Takes a read of the named instances: each found one replaces its entry (unless a newer
    /// targeted read holds it), each named one RDS no longer has leaves the snapshot, and the
    /// DBInstances of all of them are woken.
    fn absorb_named(&self, named: &[String], found: Vec<ObservedInstance>, started: Instant) {
        let mut state = lock(&self.state);
        let mut woken = Vec::new();
        let mut seen = HashSet::new();
        for instance in found {
            let id = instance.identifier.clone();
            seen.insert(id.clone());
            woken.extend(owner(&instance));
            state.absent_since.remove(&id);
            if state.snapshot.get(&id).is_some_and(|e| e.read_at > started) {
                continue;
            }
            state.snapshot.insert(
                id,
                Entry {
                    instance,
                    read_at: started,
                },
            );
        }
        for id in named.iter().filter(|id| !seen.contains(*id)) {
            if let Some(old) = state.snapshot.remove(id) {
                woken.extend(owner(&old.instance));
            }
        }
        drop(state);
        debug!(woken = woken.len(), "events absorbed");
        for target in woken {
            let _ = self.wake.send(target);
        }
    }

    /// Takes a poll's page into the snapshot as it comes, so a poll never holds a second copy of
    /// all N (at N = 10 000 that copy was the operator's peak memory). An entry read directly
    /// after the poll started is newer and stays.
    fn absorb_page(&self, poll: &mut Poll, page: Vec<ObservedInstance>) {
        let mut state = lock(&self.state);
        for mut instance in page {
            let id = instance.identifier.clone();
            state.absent_since.remove(&id);
            poll.seen.insert(id.clone());
            let changed = match state.snapshot.get(&id) {
                // A targeted describe newer than this poll wins.
                Some(old) if old.read_at > poll.started => continue,
                // RDS moves the latest restorable time every few minutes (moto on every read):
                // kept as last seen until it moves as far as status shows it, so its ticking
                // alone wakes no reconcile (it woke all N every few polls).
                Some(old) => {
                    instance.latest_restorable_time = restorable_time(
                        old.instance.latest_restorable_time.as_deref(),
                        instance.latest_restorable_time.as_deref(),
                    );
                    old.instance != instance
                }
                None => true,
            };
            if changed {
                poll.woken.extend(owner(&instance));
            }
            state.snapshot.insert(
                id,
                Entry {
                    instance,
                    read_at: poll.started,
                },
            );
        }
    }

    /// Ends a poll. One that read every page says what it did not see is gone (unless read
    /// directly after the poll started). Either way the DBInstances whose instance its pages showed
    /// changed are woken: the snapshot holds the change now, so no later poll would.
    fn end_poll(&self, poll: Poll, finished: bool) {
        let Poll {
            started,
            seen,
            mut woken,
        } = poll;
        if !finished {
            self.wake_all(woken);
            return;
        }
        let mut state = lock(&self.state);
        state.snapshot.retain(|id, old| {
            let kept = seen.contains(id) || old.read_at > started;
            if !kept {
                woken.extend(owner(&old.instance));
            }
            kept
        });
        state.polled_at = Some(started);
        drop(state);
        self.loaded.send_replace(true);
        debug!(woken = woken.len(), "RDS poll absorbed");
        self.wake_all(woken);
    }

    /// Wakes the DBInstances of these instances (those the snapshot knows an owner of).
    fn wake_instances(&self, identifiers: &[String]) {
        let state = lock(&self.state);
        let owners = (identifiers.iter())
            .filter_map(|id| state.snapshot.get(id).and_then(|e| owner(&e.instance)))
            .collect();
        drop(state);
        self.wake_all(owners);
    }

    fn wake_all(&self, woken: Vec<Owner>) {
        for target in woken {
            let _ = self.wake.send(target);
        }
    }

    /// A whole poll's result at once (tests).
    #[cfg(test)]
    fn absorb(&self, all: Vec<ObservedInstance>, started: Instant) {
        let mut poll = Poll::new(started);
        self.absorb_page(&mut poll, all);
        self.end_poll(poll, true);
    }
}

/// A poll under way: when it started, the identifiers its pages held so far, and the DBInstances
/// to wake once it ends.
struct Poll {
    started: Instant,
    seen: HashSet<String>,
    woken: Vec<Owner>,
}

impl Poll {
    fn new(started: Instant) -> Self {
        Poll {
            started,
            seen: HashSet::new(),
            woken: Vec::new(),
        }
    }
}

/// The object an instance belongs to, from its ownership tags.
fn owner(instance: &ObservedInstance) -> Option<Owner> {
    instance.tags.get(OWNER_TAG)?;
    let (namespace, name) = instance.tags.get(OWNER_NAME_TAG)?.split_once('/')?;
    Some(Owner {
        namespace: Some(namespace.to_owned()),
        name: name.to_owned(),
    })
}

const WAKE_CAPACITY: usize = 16 * 1024;
/// How many drift intervals one poll may take. More than one: at N = 10 000 a poll is 100 calls, and
/// a poll cut off at one interval under load was never absorbed, so every reconcile read its
/// instance directly, which slowed the next poll further (seen in the benchmark: 23 polls cut off
/// in a row). Two keeps the time between two successful polls within three intervals, inside
/// /healthz's default four and the snapshot's trust of three.
const POLL_BOUND_INTERVALS: u32 = 2;
/// The least time one poll may take, however short the drift interval (tests use 200 ms).
const POLL_BOUND_FLOOR: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(id: &str, status: &str, owner: Option<&str>) -> ObservedInstance {
        let mut tags = std::collections::BTreeMap::new();
        if let Some(o) = owner {
            tags.insert(OWNER_TAG.to_owned(), "uid".to_owned());
            tags.insert(OWNER_NAME_TAG.to_owned(), o.to_owned());
        }
        ObservedInstance {
            identifier: id.into(),
            status: status.into(),
            tags,
            ..Default::default()
        }
    }

    /// The observer's tests take instances as read; none is described.
    fn unread(_: &aws_sdk_rds::types::DbInstance) -> ObservedInstance {
        ObservedInstance::default()
    }

    fn observer() -> Observer {
        let config = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        Observer::new(
            Rds::new(&config, Default::default()),
            PollIntervals::default(),
            unread,
        )
    }

    fn drain(rx: &mut broadcast::Receiver<Owner>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(r) = rx.try_recv() {
            out.push(format!("{}/{}", r.namespace.unwrap_or_default(), r.name));
        }
        out.sort();
        out
    }

    #[test]
    fn polls_wake_exactly_the_changed_instances_of_ours() {
        let o = observer();
        let mut rx = o.wake.subscribe();
        let t0 = Instant::now();
        o.absorb(
            vec![
                instance("a", "available", Some("shop/a")),
                instance("b", "available", Some("shop/b")),
                instance("foreign", "available", None),
            ],
            t0,
        );
        assert_eq!(
            drain(&mut rx),
            vec!["shop/a", "shop/b"],
            "first sight wakes ours only"
        );
        let mut b = instance("b", "available", Some("shop/b"));
        b.db_instance_class = Some("db.t3.large".into());
        o.absorb(
            vec![
                instance("a", "available", Some("shop/a")),
                b,
                instance("foreign", "stopped", None),
            ],
            Instant::now(),
        );
        assert_eq!(drain(&mut rx), vec!["shop/b"], "only the changed one");
        o.absorb(
            vec![instance("b", "available", Some("shop/b"))],
            Instant::now(),
        );
        assert_eq!(
            drain(&mut rx),
            vec!["shop/a", "shop/b"],
            "a disappeared, b changed back"
        );
        o.absorb(
            vec![instance("b", "available", Some("shop/b"))],
            Instant::now(),
        );
        assert!(drain(&mut rx).is_empty(), "nothing changed, nobody woken");
        // The restorable time ticking wakes nobody until it is as far ahead as status shows it.
        let at = |t: &str| {
            let mut b = instance("b", "available", Some("shop/b"));
            b.latest_restorable_time = Some(t.into());
            b
        };
        // (RDS's restorable time, woken)
        let rows = [
            ("2026-11-30T10:00:00Z", true),
            ("2026-11-30T10:05:00Z", false),
            ("2026-11-30T10:14:59Z", false),
            ("2026-11-30T10:15:00Z", true),
            ("2026-11-30T10:20:00Z", false),
            ("2026-11-30T10:01:00Z", true),
        ];
        for (time, woken) in rows {
            o.absorb(vec![at(time)], Instant::now());
            assert_eq!(!drain(&mut rx).is_empty(), woken, "{time}");
        }
    }

    #[test]
    fn a_listing_change_about_an_instance_wakes_its_dbinstance_only() {
        let o = observer();
        let seen =
            ["a", "foreign"].map(|id| instance(id, "available", (id == "a").then_some("shop/a")));
        o.absorb(seen.to_vec(), Instant::now());
        let mut rx = o.wake.subscribe();
        let named = ["a", "foreign", "unknown"].map(str::to_owned);
        o.wake_instances(&named);
        assert_eq!(drain(&mut rx), vec!["shop/a"]);
        o.wake_instances(&[]);
        assert!(drain(&mut rx).is_empty());
    }

    #[test]
    fn a_poll_is_taken_page_by_page_and_only_a_finished_one_says_what_is_gone() {
        let o = observer();
        let mut rx = o.wake.subscribe();
        let a = || instance("a", "available", Some("shop/a"));
        let b = || instance("b", "available", Some("shop/b"));
        o.absorb(vec![a(), b()], Instant::now());
        drain(&mut rx);
        // Two pages: b only in the second is not gone.
        let mut poll = Poll::new(Instant::now());
        o.absorb_page(&mut poll, vec![a()]);
        o.absorb_page(&mut poll, vec![b()]);
        o.end_poll(poll, true);
        assert!(drain(&mut rx).is_empty(), "nothing changed, nothing gone");
        // A poll cut off after its first page: what it read is kept, and its changes wake their
        // DBInstances (the snapshot holds them now, so no later poll would), but nothing is called
        // gone.
        let mut poll = Poll::new(Instant::now());
        let mut changed = a();
        changed.db_instance_class = Some("db.t3.large".into());
        o.absorb_page(&mut poll, vec![changed]);
        o.end_poll(poll, false);
        assert_eq!(drain(&mut rx), vec!["shop/a"]);
        let state = lock(&o.state);
        assert!(state.snapshot.contains_key("b"), "b is not gone");
        assert_eq!(
            state.snapshot["a"].instance.db_instance_class.as_deref(),
            Some("db.t3.large"),
            "a is as read"
        );
    }

    #[tokio::test]
    async fn settled_snapshot_entries_are_served_without_a_call() {
        let o = observer();
        o.absorb(
            vec![instance("a", "available", Some("shop/a"))],
            Instant::now(),
        );
        let got = o
            .observe("a", Duration::from_secs(60))
            .await
            .expect("no AWS call needed");
        assert_eq!(got.instance.map(|i| i.status), Some("available".into()));
        assert!(!got.direct);
        assert_eq!(o.rds.calls().total("DescribeDBInstances"), 0);
    }

    #[test]
    fn events_wake_the_named_instances_of_ours_and_drop_the_gone() {
        let o = observer();
        o.absorb(
            vec![
                instance("a", "available", Some("shop/a")),
                instance("b", "available", Some("shop/b")),
                instance("c", "available", Some("shop/c")),
            ],
            Instant::now(),
        );
        let mut rx = o.wake.subscribe();
        let mut a = instance("a", "available", Some("shop/a"));
        a.db_instance_class = Some("db.t3.large".into());
        let named = ["a", "b", "foreign", "new"].map(String::from);
        o.absorb_named(
            &named,
            vec![
                a,
                instance("foreign", "available", None),
                instance("new", "creating", Some("shop/new")),
            ],
            Instant::now(),
        );
        assert_eq!(
            drain(&mut rx),
            vec!["shop/a", "shop/b", "shop/new"],
            "every named instance of ours, changed or not, and the one RDS no longer has"
        );
        let state = lock(&o.state);
        assert_eq!(
            state.snapshot["a"].instance.db_instance_class.as_deref(),
            Some("db.t3.large")
        );
        assert!(!state.snapshot.contains_key("b"), "b is gone from RDS");
        assert!(state.snapshot.contains_key("c"), "c was not named");
        assert!(state.snapshot.contains_key("foreign"));
    }

    #[test]
    fn the_poll_is_a_safety_net_only_while_the_feed_is_alive() {
        let intervals = PollIntervals {
            busy: Duration::from_secs(5),
            settled: Duration::from_secs(60),
        };
        let config = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let plain = Observer::new(Rds::new(&config, Default::default()), intervals, unread);
        plain.feed_alive(true);
        assert_eq!(plain.poll_every(), Duration::from_secs(60), "no feed");
        let fed = Observer::new(Rds::new(&config, Default::default()), intervals, unread)
            .with_event_feed(Duration::from_secs(600));
        assert_eq!(
            fed.poll_every(),
            Duration::from_secs(60),
            "until the queue first answers"
        );
        fed.feed_alive(true);
        assert_eq!(fed.poll_every(), Duration::from_secs(600));
        fed.feed_alive(false);
        assert_eq!(fed.poll_every(), Duration::from_secs(60), "queue failing");
    }

    #[test]
    fn a_targeted_read_newer_than_the_poll_wins() {
        let o = observer();
        let poll_started = Instant::now();
        {
            let mut state = lock(&o.state);
            state.snapshot.insert(
                "a".into(),
                Entry {
                    instance: instance("a", "modifying", Some("shop/a")),
                    read_at: Instant::now() + Duration::from_millis(5),
                },
            );
        }
        o.absorb(
            vec![instance("a", "available", Some("shop/a"))],
            poll_started,
        );
        assert_eq!(lock(&o.state).snapshot["a"].instance.status, "modifying");
    }
}
