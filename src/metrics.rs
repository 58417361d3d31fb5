//! Prometheus metrics, in the text exposition format. Every label value comes from a fixed set
//! (results, RDS operations and outcomes, RDS states, spec field names): no object names, no error
//! strings.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::lock;
use crate::rds::CallCounter;

const BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];

/// The operator's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    reconciles: Mutex<BTreeMap<&'static str, u64>>,
    durations: Mutex<Histogram>,
    drift_corrections: Mutex<BTreeMap<String, u64>>,
    events: Mutex<BTreeMap<&'static str, u64>>,
    states: Mutex<HashMap<String, String>>,
    rds_calls: Arc<CallCounter>,
}

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Metrics {
    pub fn new(rds_calls: Arc<CallCounter>) -> Self {
        Metrics {
            rds_calls,
            ..Default::default()
        }
    }

    /// A reconcile ended with `result` ("success" or an error's metric label) after `elapsed`.
    pub fn reconciled(&self, result: &'static str, elapsed: Duration) {
        *lock(&self.reconciles).entry(result).or_default() += 1;
        let mut h = lock(&self.durations);
        let secs = elapsed.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                h.counts[i] += 1;
            }
        }
        h.sum += secs;
        h.count += 1;
    }

    /// Fields put back to the spec after a change outside the operator.
    pub fn drift_corrected<'a>(&self, fields: impl IntoIterator<Item = &'a str>) {
        let mut map = lock(&self.drift_corrections);
        for field in fields {
            *map.entry(field.to_owned()).or_default() += 1;
        }
    }

    /// One event feed message read, with its outcome (handled, ignored, foreign, malformed).
    pub fn event(&self, outcome: &'static str) {
        *lock(&self.events).entry(outcome).or_default() += 1;
    }

    /// The RDS state of the instance managed for the DBInstance with this uid (None: no instance).
    pub fn set_state(&self, uid: &str, state: Option<&str>) {
        let mut states = lock(&self.states);
        match state {
            Some(s) => {
                states.insert(uid.to_owned(), s.to_owned());
            }
            None => {
                states.remove(uid);
            }
        }
    }

    /// The metrics page.
    pub fn render(&self) -> String {
        let mut out = String::new();
        header(
            &mut out,
            "rds_operator_reconciles_total",
            "counter",
            "Reconciles by result (success, or what failed).",
        );
        for (result, n) in lock(&self.reconciles).iter() {
            let _ = writeln!(
                out,
                "rds_operator_reconciles_total{{result=\"{result}\"}} {n}"
            );
        }
        self.render_durations(&mut out);
        header(
            &mut out,
            "rds_operator_rds_api_calls_total",
            "counter",
            "RDS, Secrets Manager and SQS (event feed) API calls by operation and outcome (ok, throttled, retryable_error, not_found, already_exists, invalid_input; error for SQS).",
        );
        for ((operation, outcome), n) in self.rds_calls.snapshot() {
            let _ = writeln!(
                out,
                "rds_operator_rds_api_calls_total{{operation=\"{operation}\",outcome=\"{outcome}\"}} {n}"
            );
        }
        header(
            &mut out,
            "rds_operator_managed_instances",
            "gauge",
            "Managed RDS instances by RDS state.",
        );
        let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
        for state in lock(&self.states).values() {
            *by_state.entry(state.clone()).or_default() += 1;
        }
        for (state, n) in by_state {
            let _ = writeln!(
                out,
                "rds_operator_managed_instances{{state=\"{state}\"}} {n}"
            );
        }
        header(
            &mut out,
            "rds_operator_drift_corrections_total",
            "counter",
            "Fields put back to the spec after a change made outside the operator.",
        );
        for (field, n) in lock(&self.drift_corrections).iter() {
            let _ = writeln!(
                out,
                "rds_operator_drift_corrections_total{{field=\"{field}\"}} {n}"
            );
        }
        header(
            &mut out,
            "rds_operator_events_total",
            "counter",
            "Event feed messages by outcome (handled, ignored, foreign, malformed); all are deleted.",
        );
        for (outcome, n) in lock(&self.events).iter() {
            let _ = writeln!(
                out,
                "rds_operator_events_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        out
    }

    fn render_durations(&self, out: &mut String) {
        header(
            out,
            "rds_operator_reconcile_duration_seconds",
            "histogram",
            "Time spent in one reconcile.",
        );
        {
            let h = lock(&self.durations);
            for (i, bound) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "rds_operator_reconcile_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "rds_operator_reconcile_duration_seconds_bucket{{le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "rds_operator_reconcile_duration_seconds_sum {}", h.sum);
            let _ = writeln!(
                out,
                "rds_operator_reconcile_duration_seconds_count {}",
                h.count
            );
        }
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

/// The process and build metrics: build info, leadership, the last successful poll, and the
/// process's resident memory, CPU time, open file descriptors and start time (from /proc, as the
/// Prometheus client libraries export them; absent where /proc is not).
pub fn render_runtime(runtime: Runtime) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "rds_operator_build_info",
        "gauge",
        "The operator's version.",
    );
    let _ = writeln!(
        out,
        "rds_operator_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    header(
        &mut out,
        "rds_operator_is_leader",
        "gauge",
        "1 while this replica reconciles.",
    );
    let _ = writeln!(out, "rds_operator_is_leader {}", u8::from(runtime.leading));
    if let Some(t) = runtime.last_poll {
        let name = "rds_operator_observer_last_poll_timestamp_seconds";
        header(
            &mut out,
            name,
            "gauge",
            "When the shared RDS poll last succeeded.",
        );
        let _ = writeln!(out, "{name} {t:.3}");
    }
    let Some(p) = process() else {
        return out;
    };
    let gauges = [
        (
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory.",
            p.rss_bytes,
        ),
        (
            "process_cpu_seconds_total",
            "counter",
            "User and system CPU time.",
            p.cpu_seconds,
        ),
        (
            "process_open_fds",
            "gauge",
            "Open file descriptors.",
            p.open_fds,
        ),
        (
            "process_start_time_seconds",
            "gauge",
            "Start time, since the epoch.",
            p.start_time,
        ),
    ];
    for (name, kind, help, value) in gauges {
        header(&mut out, name, kind, help);
        let _ = writeln!(out, "{name} {value}");
    }
    out
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

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histogram_and_gauges() {
        let m = Metrics::default();
        m.reconciled("success", Duration::from_millis(20));
        m.reconciled("success", Duration::from_millis(700));
        m.reconciled("InvalidInput", Duration::from_millis(3));
        m.set_state("a", Some("available"));
        m.set_state("b", Some("available"));
        m.set_state("c", Some("creating"));
        m.set_state("c", None);
        m.drift_corrected(["dbInstanceClass", "tags"]);
        m.event("handled");
        m.event("malformed");
        m.event("handled");
        let text = m.render();
        assert!(
            text.contains("rds_operator_reconciles_total{result=\"success\"} 2"),
            "{text}"
        );
        assert!(text.contains("rds_operator_reconciles_total{result=\"InvalidInput\"} 1"));
        assert!(text.contains("rds_operator_reconcile_duration_seconds_bucket{le=\"0.025\"} 2"));
        assert!(text.contains("rds_operator_reconcile_duration_seconds_bucket{le=\"+Inf\"} 3"));
        assert!(text.contains("rds_operator_reconcile_duration_seconds_count 3"));
        assert!(text.contains("rds_operator_managed_instances{state=\"available\"} 2"));
        assert!(!text.contains("state=\"creating\""));
        assert!(text.contains("rds_operator_drift_corrections_total{field=\"tags\"} 1"));
        assert!(text.contains("# TYPE rds_operator_rds_api_calls_total counter"));
        assert!(text.contains("rds_operator_events_total{outcome=\"handled\"} 2"));
        assert!(text.contains("rds_operator_events_total{outcome=\"malformed\"} 1"));
    }

    #[test]
    fn renders_the_process_build_and_leadership() {
        let text = render_runtime(Runtime {
            leading: true,
            last_poll: Some(1_700_000_000.5),
        });
        assert!(text.contains("rds_operator_is_leader 1"), "{text}");
        assert!(
            text.contains("rds_operator_build_info{version=\""),
            "{text}"
        );
        assert!(text.contains("rds_operator_observer_last_poll_timestamp_seconds 1700000000.500"));
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
        let idle = render_runtime(Runtime::default());
        assert!(idle.contains("rds_operator_is_leader 0"));
        assert!(!idle.contains("last_poll_timestamp"));
    }
}
