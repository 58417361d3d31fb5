//! Prometheus metrics, kept and written by the `prometheus-client` crate (the Prometheus text
//! format, 0.0.4). Every label value comes from a fixed set (results, RDS operations and outcomes,
//! RDS states, spec field names, event outcomes): no object names, no error strings.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::lock;
use crate::rds::CallCounter;

const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FieldLabel {
    field: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    operation: &'static str,
    outcome: &'static str,
    /// The AWS account id (never an object's name), and the region.
    account: String,
    region: String,
}

/// What the instance gauge says of one managed instance.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub struct InstanceGauge {
    /// The RDS state (available, creating...).
    pub state: String,
    /// The namespace of the DBInstance.
    pub object_namespace: String,
    /// standalone, replica, or member (of an Aurora cluster).
    pub role: &'static str,
    /// The state of its blue/green deployment (PROVISIONING, AVAILABLE...), or none.
    pub blue_green: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct NamespaceReadLabels {
    /// The namespace of the object (not `namespace`, which Prometheus gives the scraped Pod's).
    object_namespace: String,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VersionLabel {
    version: &'static str,
}

/// The operator's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    reconciles: Family<ResultLabel, Counter>,
    durations: Histogram,
    drift_corrections: Family<FieldLabel, Counter>,
    events: Family<OutcomeLabel, Counter>,
    namespace_reads: Family<NamespaceReadLabels, Counter>,
    states: Arc<Mutex<HashMap<String, InstanceGauge>>>,
    leading: Gauge,
    last_poll: Arc<Mutex<Option<f64>>>,
    feed_up: Gauge,
    locations: LocationPolls,
    /// The databases' health (`health_metrics.rs`).
    pub healths: crate::health_metrics::Healths,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new(Arc::default())
    }
}

impl Metrics {
    pub fn new(rds_calls: Arc<CallCounter>) -> Self {
        let mut registry = Registry::default();
        let reconciles = Family::<ResultLabel, Counter>::default();
        registry.register(
            "rds_operator_reconciles",
            "Reconciles by result (success, or what failed)",
            reconciles.clone(),
        );
        let durations = Histogram::new(BUCKETS);
        registry.register(
            "rds_operator_reconcile_duration_seconds",
            "Time spent in one reconcile",
            durations.clone(),
        );
        registry.register_collector(Box::new(Breakers(rds_calls.clone())));
        registry.register_collector(Box::new(Calls(rds_calls)));
        let states = Arc::<Mutex<HashMap<String, InstanceGauge>>>::default();
        registry.register_collector(Box::new(States(states.clone())));
        let drift_corrections = Family::<FieldLabel, Counter>::default();
        registry.register(
            "rds_operator_drift_corrections",
            "Fields put back to the spec after a change made outside the operator",
            drift_corrections.clone(),
        );
        let events = Family::<OutcomeLabel, Counter>::default();
        for outcome in ["handled", "ignored", "foreign", "malformed"] {
            let _ = events.get_or_create(&OutcomeLabel { outcome });
        }
        registry.register(
            "rds_operator_events",
            "Event feed messages by outcome (handled, ignored, foreign, malformed); all are deleted",
            events.clone(),
        );
        let namespace_reads = Family::<NamespaceReadLabels, Counter>::default();
        registry.register(
            "rds_operator_namespace_reads",
            "Direct RDS reads per namespace: made (direct), or refused by --namespace-read-budget (limited)",
            namespace_reads.clone(),
        );
        let build = Family::<VersionLabel, Gauge>::default();
        build
            .get_or_create(&VersionLabel {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        registry.register("rds_operator_build_info", "The operator's version", build);
        let leading = Gauge::default();
        registry.register(
            "rds_operator_is_leader",
            "1 while this replica reconciles",
            leading.clone(),
        );
        let feed_up = Gauge::default();
        registry.register(
            "rds_operator_event_feed_up",
            "1 while the event feed's queue answers (0 without a feed, or while it fails)",
            feed_up.clone(),
        );
        let last_poll = Arc::<Mutex<Option<f64>>>::default();
        registry.register_collector(Box::new(LastPoll(last_poll.clone())));
        registry.register_collector(Box::new(ProcessCollector));
        let locations = LocationPolls::default();
        registry.register_collector(Box::new(locations.clone()));
        let healths = crate::health_metrics::Healths::default();
        registry.register_collector(Box::new(healths.clone()));
        Metrics {
            registry,
            reconciles,
            durations,
            drift_corrections,
            events,
            namespace_reads,
            states,
            leading,
            last_poll,
            feed_up,
            locations,
            healths,
        }
    }

    /// A location's poll, whose last success (seconds since the epoch, None before the first)
    /// `last_poll` tells at each scrape, under its account id and region.
    pub fn location(
        &self,
        place: crate::rds::Place,
        last_poll: impl Fn() -> Option<f64> + Send + Sync + 'static,
    ) {
        lock(&self.locations.0).push((place, Box::new(last_poll)));
    }

    /// A direct read of a namespace's DBInstance was made ("direct") or refused by the budget
    /// ("limited").
    pub fn namespace_read(&self, namespace: &str, outcome: &'static str) {
        let labels = NamespaceReadLabels {
            object_namespace: namespace.to_owned(),
            outcome,
        };
        self.namespace_reads.get_or_create(&labels).inc();
    }

    /// A reconcile of `kind` ended with `result` ("success" or an error's metric label) after
    /// `elapsed`. Counted by kind too: a test proves the operator made passes of a kind while
    /// nothing happened.
    pub fn reconciled(&self, kind: &'static str, result: &'static str, elapsed: Duration) {
        let labels = ResultLabel { result, kind };
        self.reconciles.get_or_create(&labels).inc();
        self.durations.observe(elapsed.as_secs_f64());
    }

    /// Fields put back to the spec after a change outside the operator.
    pub fn drift_corrected<'a>(&self, fields: impl IntoIterator<Item = &'a str>) {
        for field in fields {
            let field = field.to_owned();
            self.drift_corrections
                .get_or_create(&FieldLabel { field })
                .inc();
        }
    }

    /// One event feed message read, with its outcome (handled, ignored, foreign, malformed).
    pub fn event(&self, outcome: &'static str) {
        self.events.get_or_create(&OutcomeLabel { outcome }).inc();
    }

    /// The event feed's queue answered (true) or failed (false).
    pub fn feed_up(&self, up: bool) {
        self.feed_up.set(i64::from(up));
    }

    /// The instance managed for the DBInstance with this uid (None: no instance).
    pub fn set_state(&self, uid: &str, state: Option<InstanceGauge>) {
        let mut states = lock(&self.states);
        match state {
            Some(s) => {
                states.insert(uid.to_owned(), s);
            }
            None => {
                states.remove(uid);
            }
        }
    }

    /// The metrics page, with what the process knows of its own run.
    pub fn render(&self, runtime: Runtime) -> String {
        self.leading.set(i64::from(runtime.leading));
        *lock(&self.last_poll) = runtime.last_poll;
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry);
        out
    }
}

/// What the process knows of its own run, for the metrics page.
#[derive(Clone, Copy, Debug, Default)]
pub struct Runtime {
    /// This replica leads (or runs without leader election).
    pub leading: bool,
    /// When the shared RDS poll last succeeded (seconds since the epoch).
    pub last_poll: Option<f64>,
}

/// The AWS calls counted by the adapters, read at each scrape.
#[derive(Debug)]
struct Calls(Arc<CallCounter>);

impl Collector for Calls {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "rds_operator_rds_api_calls",
            "AWS API calls (RDS, Secrets Manager, STS, SQS for the event feed) by operation, outcome (ok, throttled, refused: not sent while the location's breaker is open, retryable_error, not_found, already_exists, invalid_input; error for SQS), account id and region",
            None,
            MetricType::Counter,
        )?;
        for ((account, region, operation, outcome), n) in self.0.snapshot() {
            let labels = CallLabels {
                operation,
                outcome,
                account,
                region,
            };
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BreakerLabels {
    account: String,
    region: String,
    state: &'static str,
}

/// Each location's breaker (`crate::breaker`), read at each scrape: 1 for its state, 0 for the
/// others; and how long ago AWS last answered there. Where two adapters serve one location, the
/// worse state and the latest answer are shown.
#[derive(Debug)]
struct Breakers(Arc<CallCounter>);

impl Collector for Breakers {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        const STATES: [&str; 3] = ["closed", "probing", "open"];
        let mut places: BTreeMap<(String, String), (usize, Option<std::time::SystemTime>)> =
            BTreeMap::new();
        for health in self.0.healths().all() {
            let key = (
                health.place().account().to_owned(),
                health.place().region().to_owned(),
            );
            let rank = STATES
                .iter()
                .position(|s| *s == health.state())
                .unwrap_or(0);
            let entry = places.entry(key).or_insert((0, None));
            entry.0 = entry.0.max(rank);
            entry.1 = entry.1.max(health.last_answer());
        }
        let mut family = encoder.encode_descriptor(
            "rds_operator_location_breaker",
            "Each location's (account and region) breaker: 1 for its state (closed, probing, open), 0 for the others. Open: AWS throttled or did not answer, and no call is made there but one probe at a time",
            None,
            MetricType::Gauge,
        )?;
        for ((account, region), (rank, _)) in &places {
            for (i, state) in STATES.iter().enumerate() {
                let labels = BreakerLabels {
                    account: account.clone(),
                    region: region.clone(),
                    state,
                };
                ConstGauge::new(i64::from(i == *rank)).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "rds_operator_location_last_answer_age_seconds",
            "How long ago AWS last answered a call in each location (absent before the first answer)",
            None,
            MetricType::Gauge,
        )?;
        for ((account, region), (_, last)) in places {
            let Some(age) = last.and_then(|t| t.elapsed().ok()) else {
                continue;
            };
            let labels = PlaceLabels { account, region };
            ConstGauge::new(age.as_secs_f64()).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// Managed instances by RDS state, counted at each scrape.
#[derive(Debug)]
struct States(Arc<Mutex<HashMap<String, InstanceGauge>>>);

impl Collector for States {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut counted: BTreeMap<InstanceGauge, i64> = BTreeMap::new();
        for gauge in lock(&self.0).values() {
            *counted.entry(gauge.clone()).or_default() += 1;
        }
        let mut family = encoder.encode_descriptor(
            "rds_operator_managed_instances",
            "Managed RDS instances by RDS state, the namespace of their DBInstance, role (standalone, replica, member of a cluster) and the state of their blue/green deployment (none when there is none)",
            None,
            MetricType::Gauge,
        )?;
        for (labels, n) in counted {
            ConstGauge::new(n).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// When the shared RDS poll last succeeded; absent before the first.
#[derive(Debug)]
struct LastPoll(Arc<Mutex<Option<f64>>>);

impl Collector for LastPoll {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(t) = *lock(&self.0) else {
            return Ok(());
        };
        let gauge = ConstGauge::<f64>::new(t);
        gauge.encode(encoder.encode_descriptor(
            "rds_operator_observer_last_poll_timestamp_seconds",
            "When the shared RDS poll last succeeded",
            None,
            gauge.metric_type(),
        )?)
    }
}

/// Each location's poll: when it last succeeded, by account id and region (one location failing
/// shows here, not in the operator's health).
#[derive(Clone, Default)]
struct LocationPolls(Arc<Mutex<Vec<(crate::rds::Place, LastPollFn)>>>);

type LastPollFn = Box<dyn Fn() -> Option<f64> + Send + Sync>;

impl std::fmt::Debug for LocationPolls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocationPolls")
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PlaceLabels {
    account: String,
    region: String,
}

impl Collector for LocationPolls {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let polled: Vec<(PlaceLabels, f64)> = (lock(&self.0).iter())
            .filter_map(|(place, last_poll)| {
                let labels = PlaceLabels {
                    account: place.account().to_owned(),
                    region: place.region().to_owned(),
                };
                Some((labels, last_poll()?))
            })
            .collect();
        // Absent until a poll succeeded, as the operator's own gauge is.
        if polled.is_empty() {
            return Ok(());
        }
        let mut family = encoder.encode_descriptor(
            "rds_operator_location_last_poll_timestamp_seconds",
            "When each (account, region)'s shared poll last succeeded",
            None,
            MetricType::Gauge,
        )?;
        for (labels, t) in polled {
            ConstGauge::<f64>::new(t).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}

/// The process's resident memory, CPU time, open file descriptors and start time, from /proc as
/// the Prometheus client libraries of other languages export them (prometheus-client has no
/// process collector); absent where /proc is not.
#[derive(Debug)]
struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(p) = process() else {
            return Ok(());
        };
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory",
                p.rss_bytes,
            ),
            ("process_open_fds", "Open file descriptors", p.open_fds),
            (
                "process_start_time_seconds",
                "Start time, since the epoch",
                p.start_time,
            ),
        ];
        for (name, help, value) in gauges {
            let gauge = ConstGauge::<f64>::new(value);
            gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)?;
        }
        let cpu = ConstCounter::new(p.cpu_seconds);
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "User and system CPU time",
            None,
            cpu.metric_type(),
        )?)
    }
}

struct Process {
    rss_bytes: f64,
    cpu_seconds: f64,
    open_fds: f64,
    start_time: f64,
}

/// The process's figures from /proc (Linux; clock ticks at the usual 100 Hz).
fn process() -> Option<Process> {
    const TICKS: f64 = 100.0;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let rss_kib: f64 = (status.lines())
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<f64>().ok());
    let (utime, stime, start) = (field(14)?, field(15)?, field(22)?);
    let boot: f64 = (std::fs::read_to_string("/proc/stat").ok()?.lines())
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(Process {
        rss_bytes: rss_kib * 1024.0,
        cpu_seconds: (utime + stime) / TICKS,
        open_fds: std::fs::read_dir("/proc/self/fd").ok()?.count() as f64,
        start_time: boot + start / TICKS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histogram_and_gauges() {
        let m = Metrics::default();
        m.reconciled("DBInstance", "success", Duration::from_millis(20));
        m.reconciled("DBInstance", "success", Duration::from_millis(700));
        m.reconciled("DBUser", "InvalidInput", Duration::from_millis(3));
        let gauge = |state: &str, role| InstanceGauge {
            state: state.into(),
            object_namespace: "shop".into(),
            role,
            blue_green: "none".into(),
        };
        m.set_state("a", Some(gauge("available", "standalone")));
        m.set_state("b", Some(gauge("available", "standalone")));
        m.set_state("r", Some(gauge("available", "replica")));
        m.set_state("c", Some(gauge("creating", "standalone")));
        m.set_state("c", None);
        m.drift_corrected(["dbInstanceClass", "tags"]);
        m.event("handled");
        m.event("malformed");
        m.event("handled");
        let text = m.render(Runtime::default());
        assert!(
            text.contains(
                "rds_operator_reconciles_total{result=\"success\",kind=\"DBInstance\"} 2"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "rds_operator_reconciles_total{result=\"InvalidInput\",kind=\"DBUser\"} 1"
            )
        );
        assert!(text.contains("rds_operator_reconcile_duration_seconds_bucket{le=\"0.025\"} 2"));
        assert!(text.contains("rds_operator_reconcile_duration_seconds_bucket{le=\"+Inf\"} 3"));
        assert!(text.contains("rds_operator_reconcile_duration_seconds_count 3"));
        let instances =
            "rds_operator_managed_instances{state=\"available\",object_namespace=\"shop\"";
        assert!(
            text.contains(&format!(
                "{instances},role=\"standalone\",blue_green=\"none\"}} 2"
            )),
            "{text}"
        );
        assert!(text.contains(&format!(
            "{instances},role=\"replica\",blue_green=\"none\"}} 1"
        )));
        assert!(!text.contains("state=\"creating\""));
        assert!(text.contains("rds_operator_drift_corrections_total{field=\"tags\"} 1"));
        assert!(text.contains("# TYPE rds_operator_rds_api_calls_total counter"));
        assert!(text.contains("rds_operator_events_total{outcome=\"handled\"} 2"));
        assert!(text.contains("rds_operator_events_total{outcome=\"malformed\"} 1"));
        // Every outcome has a series from the start, so a dashboard shows zeros, not nothing.
        assert!(text.contains("rds_operator_events_total{outcome=\"foreign\"} 0"));
    }

    #[test]
    fn renders_the_process_build_and_leadership() {
        let m = Metrics::default();
        let text = m.render(Runtime {
            leading: true,
            last_poll: Some(1_700_000_000.5),
        });
        assert!(text.contains("rds_operator_is_leader 1"), "{text}");
        assert!(
            text.contains("rds_operator_build_info{version=\""),
            "{text}"
        );
        assert!(text.contains("rds_operator_observer_last_poll_timestamp_seconds 1700000000.5"));
        let value = |name: &str| {
            (text.lines())
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("{name} missing: {text}"))
        };
        assert!(value("process_resident_memory_bytes") > 1e6);
        assert!(value("process_open_fds") >= 3.0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let start = value("process_start_time_seconds");
        assert!(
            start <= now + 1.0 && start > now - 86_400.0,
            "{start} vs {now}"
        );
        let idle = Metrics::default().render(Runtime::default());
        assert!(idle.contains("rds_operator_is_leader 0"));
        let located = Metrics::default();
        located.location(crate::rds::Place::new("111111111111", "eu-west-1"), || {
            Some(1_700_000_000.0)
        });
        located.location(crate::rds::Place::new("222222222222", "us-east-1"), || None);
        let text = located.render(Runtime::default());
        assert!(
            text.contains("rds_operator_location_last_poll_timestamp_seconds{account=\"111111111111\",region=\"eu-west-1\"} 1700000000"),
            "{text}"
        );
        assert!(
            !text.contains("222222222222"),
            "a location not polled yet is absent"
        );
        assert!(!idle.contains("last_poll_timestamp"));
    }
}
