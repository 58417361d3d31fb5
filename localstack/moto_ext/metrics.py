"""RDS's CloudWatch metrics, read from the real engines (``engines.py``), and CloudWatch alarms
evaluated on them, where moto 5.2.5 publishes no RDS metric and never evaluates an alarm.

Every ``MOTO_RDS_METRICS_EVERY`` seconds (5) each running server's figures go into moto's
CloudWatch of the instance's account and region, in the namespace ``AWS/RDS`` with the dimension
``DBInstanceIdentifier``, under RDS's names and units ("Amazon CloudWatch metrics for Amazon RDS",
rds-metrics.html):

* ``ReplicaLag`` (Seconds), for a replica (a read replica, a blue/green deployment's green): "the
  value of the Seconds_Behind_Master field of the SHOW REPLICA STATUS command ... If the
  ReplicaLag metric returns -1, then replication is currently not active. ReplicaLag = -1 is
  equivalent to Seconds_Behind_Master = NULL" (USER_MariaDB.Replication.ReadReplicas.Monitor.html);
  on PostgreSQL the time since the last transaction the standby replayed while it has WAL left to
  replay (0 when it has replayed all it received), -1 when its WAL receiver is not running;
* ``FreeStorageSpace`` (Bytes): the allocated storage less what the server's directory holds
  (its data, logs and binlogs);
* ``DatabaseConnections`` (Count): the server's client sessions, less the one reading them;
* ``CPUUtilization`` (Percent): the CPU time of the server's processes over the interval, of all
  the host's CPUs.

Datapoints older than ``KEEP`` seconds are dropped, so moto's GetMetricData, which scans every
datapoint, stays quick (CloudWatch keeps them for 15 days; nothing here reads that far back).

Alarms on ``AWS/RDS`` metrics (PutMetricAlarm, API_PutMetricAlarm.html) are evaluated at the same
pace, as CloudWatch does ("Evaluating an alarm", AlarmThatSendsEmail.html#alarm-evaluation): a new
alarm starts in ``INSUFFICIENT_DATA`` ("When this operation creates an alarm, the alarm state is
immediately set to INSUFFICIENT_DATA. The alarm is then evaluated and its state is set
appropriately"); the alarm's Statistic over its last Period (its latest EvaluationPeriods periods
when they hold data) is compared with its Threshold by its ComparisonOperator; a change of state
is recorded with its reason, and, when the alarm's actions are enabled, published to the SNS
topics of its AlarmActions (to ALARM) or OKActions (to OK), as CloudWatch's notification
("Using Amazon SNS to notify", Notify_Users_Alarm_Changes.html).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from typing import Any

from . import engines, scope

EVERY = float(os.environ.get("MOTO_RDS_METRICS_EVERY", "5") or 5)
KEEP = 900.0
NAMESPACE = "AWS/RDS"
DIMENSION = "DBInstanceIdentifier"
UNITS = {"ReplicaLag": "Seconds", "FreeStorageSpace": "Bytes", "DatabaseConnections": "Count",
         "CPUUtilization": "Percent", "AuroraReplicaLag": "Milliseconds",
         "AuroraGlobalDBReplicationLag": "Milliseconds", "AuroraReplicaLagMaximum": "Milliseconds",
         "AuroraBinlogReplicaLag": "Seconds"}
# An instance's metrics CloudWatch also shows of its cluster (dimension DBClusterIdentifier: "the
# data ... for a specific Aurora DB cluster", dimensions.html), a datapoint per instance.
CLUSTER_METRICS = ("CPUUtilization", "DatabaseConnections", "FreeStorageSpace", "ReplicaLag")
CLUSTER_DIMENSION = "DBClusterIdentifier"
GLOBAL_LAG = "AuroraGlobalDBReplicationLag"
BINLOG_LAG = "AuroraBinlogReplicaLag"
COMPARE = {
    "GreaterThanOrEqualToThreshold": lambda v, t: v >= t,
    "GreaterThanThreshold": lambda v, t: v > t,
    "LessThanThreshold": lambda v, t: v < t,
    "LessThanOrEqualToThreshold": lambda v, t: v <= t,
}

# series_key(...) -> deque of (monotonic time, value): what alarms evaluate.
SERIES: dict[tuple[str, ...], deque[tuple[float, float]]] = {}
# The (account, region) pairs that have alarms.
ALARMED: set[tuple[str, str]] = set()
# Server directory -> (monotonic time, CPU seconds) at the last reading.
_CPU: dict[str, tuple[float, float]] = {}
_STARTED = threading.Event()
# Set by in-process tests that take the readings themselves (suite/test_metrics.py).
PAUSED = threading.Event()
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _dir_bytes(path: str) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _cpu_seconds(pid: int) -> float:
    """The CPU time of the process and its children (PostgreSQL's backends)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state, ppid (fields 3, 4), ... utime, stime (fields 14, 15).
        if int(entry) == pid or int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    return total / _TICK


def _cpu_percent(server: Any) -> float | None:
    process = server.process
    if process is None or process.poll() is not None:
        return None
    now, used = time.monotonic(), _cpu_seconds(process.pid)
    last = _CPU.get(server.dir)
    _CPU[server.dir] = (now, used)
    if last is None or now <= last[0]:
        return None
    return max(0.0, min(100.0, 100.0 * (used - last[1]) / (now - last[0]) / (os.cpu_count() or 1)))


def _replica_lag(server: Any) -> float:
    if server.family == "postgres":
        answer = server.query(
            "SELECT CASE WHEN (SELECT count(*) FROM pg_stat_wal_receiver) = 0 THEN -1 "
            "WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 "
            "ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END").strip()
        return float(answer or -1)
    lines = server.query("SHOW SLAVE STATUS", names=True).splitlines()
    rows = dict(zip(lines[0].split("\t"), lines[1].split("\t"))) if len(lines) > 1 else {}
    behind = rows.get("Seconds_Behind_Master")
    return float(behind) if behind not in (None, "", "NULL") else -1.0


def _connections(server: Any) -> float:
    if server.family == "postgres":
        sql = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
    else:
        sql = "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_CONNECTED'"
    return max(0.0, float(server.query(sql, timeout=10).strip() or 1) - 1)


def figures(server: Any, allocated_gib: int | None, aurora: bool = False) -> dict[str, float]:
    """The server's metrics now, by RDS's names. An Aurora instance has no storage of its own
    (the cluster volume grows by itself: no FreeStorageSpace), and a reader's lag is
    ``AuroraReplicaLag`` in milliseconds (rds-metrics.html, "Amazon Aurora metrics")."""
    found: dict[str, float] = {}
    if allocated_gib and not aurora:
        found["FreeStorageSpace"] = float(max(0, allocated_gib * 2**30 - _dir_bytes(server.dir)))
    cpu = _cpu_percent(server)
    if cpu is not None:
        found["CPUUtilization"] = round(cpu, 2)
    try:
        found["DatabaseConnections"] = _connections(server)
        if server.source is not None:
            lag = _replica_lag(server)
            if aurora:
                found["AuroraReplicaLag"] = lag * 1000 if lag >= 0 else lag
            else:
                found["ReplicaLag"] = lag
    except engines.EngineError:
        pass  # a server restarting: its figures come next time
    return found


def _instance(account: str, region: str, identifier: str) -> Any:
    from moto.rds.models import rds_backends

    return rds_backends[account][region].databases.get(identifier)


def series_key(account: str, region: str, metric: str, identifier: str,
               dimension: str = DIMENSION) -> tuple[str, ...]:
    """The key of a series in ``SERIES``: an instance's by its identifier, a cluster's by its
    identifier and its dimension (an instance and a cluster may share an identifier)."""
    if dimension == DIMENSION:
        return (account, region, metric, identifier)
    return (account, region, metric, identifier, dimension)


def record(account: str, region: str, identifier: str, found: dict[str, float],
           dimension: str = DIMENSION) -> None:
    """Takes the figures into moto's CloudWatch and into the series the alarms read."""
    record_points(account, region, identifier, list(found.items()), dimension)


def record_points(account: str, region: str, identifier: str, points: list[tuple[str, float]],
                  dimension: str = DIMENSION) -> None:
    """Takes datapoints (several of one metric, for a cluster's instances) into moto's CloudWatch
    and into the series the alarms read."""
    from moto.cloudwatch.models import cloudwatch_backends

    if not points:
        return
    now = time.monotonic()
    backend = cloudwatch_backends[account][region]
    dimensions = [{"Name": dimension, "Value": identifier}]
    backend.put_metric_data(NAMESPACE, [
        {"MetricName": name, "Value": value, "Unit": UNITS[name], "Dimensions": dimensions}
        for name, value in points])
    for name, value in points:
        series = SERIES.setdefault(series_key(account, region, name, identifier, dimension), deque())
        series.append((now, value))
        while series and series[0][0] < now - KEEP:
            series.popleft()


def _prune(account: str, region: str) -> None:
    from moto.cloudwatch.models import cloudwatch_backends
    from moto.core.utils import utcnow

    backend = cloudwatch_backends[account][region]
    oldest = utcnow().timestamp() - KEEP
    backend.metric_data = [m for m in backend.metric_data
                           if m.namespace != NAMESPACE or m.timestamp.timestamp() >= oldest]


def _aurora_servers() -> dict[str, tuple[str | None, str, bool]]:
    """An Aurora cluster's servers (``clusters.TOPOLOGY``), by their scoped key: (the member
    instance it serves, None for a writer no member names yet; the cluster; whether it is the
    writer)."""
    from . import clusters

    found: dict[str, tuple[str | None, str, bool]] = {}
    for key, topology in list(dict.items(clusters.TOPOLOGY)):
        account, region, cluster = key.split(scope.SEP, 2)
        prefix = f"{account}{scope.SEP}{region}{scope.SEP}"
        primary = prefix + topology["primary"]
        for instance, server in list(topology["members"].items()):
            found[prefix + server] = (instance, cluster, prefix + server == primary)
        found.setdefault(primary, (None, cluster, True))
    return found


def _cluster(account: str, region: str, identifier: str) -> Any:
    from moto.rds.models import rds_backends

    return rds_backends[account][region].clusters.get(identifier)


def publish_once() -> None:
    """One reading of every server that serves, and of each cluster what its instances show."""
    with engines.LOCK:
        servers = [(k, s) for k, s in dict.items(engines.SERVERS) if s.ready and s.error is None]
    places = set()
    regions = {id(s): k.split(scope.SEP, 2)[1] for k, s in servers}
    aurora = _aurora_servers()
    # (account, region, cluster) -> the datapoints of its instances, and its readers' lags (ms).
    clusters: dict[tuple[str, str, str], tuple[list[tuple[str, float]], list[float]]] = {}
    for key, server in servers:
        account, region, identifier = key.split(scope.SEP, 2)
        writer = False
        if key in aurora:
            identifier, cluster, writer = aurora[key]
            found = _member_figures(server, _cluster(account, region, cluster))
        else:
            instance = _instance(account, region, identifier)
            if instance is None:
                continue
            cluster = None
            found = figures(server, getattr(instance, "allocated_storage", None))
        # A global database's secondary: its writer replicates the primary's, in another region.
        # Its lag is the cluster's AuroraGlobalDBReplicationLag, in milliseconds, in its own region
        # (rds-metrics.html, "Amazon Aurora metrics"; aurora-global-database-monitoring.html).
        source_region = regions.get(id(server.source)) if server.source is not None else None
        if cluster and source_region and source_region != region:
            lag = found.pop("AuroraReplicaLag", None)
            if lag is not None:
                record(account, region, cluster, {GLOBAL_LAG: lag}, CLUSTER_DIMENSION)
        # A writer that replicates another cluster's in its own region (a blue/green deployment's
        # green, by binlog replication): its lag is AuroraBinlogReplicaLag, in seconds, -1 when
        # replication is not running (Aurora.AuroraMonitoring.Metrics.html; AuroraMySQL.
        # Replication.MySQL.html, "Monitoring": "the same as the Seconds_Behind_Master field").
        elif writer and "AuroraReplicaLag" in found:
            lag = found.pop("AuroraReplicaLag")
            found[BINLOG_LAG] = lag / 1000 if lag >= 0 else lag
        if cluster:
            points, lags = clusters.setdefault((account, region, cluster), ([], []))
            points.extend((n, v) for n, v in found.items() if n in CLUSTER_METRICS + (BINLOG_LAG,))
            lags.extend(v for n, v in found.items() if n == "AuroraReplicaLag")
        if found and identifier is not None:
            record(account, region, identifier, found)
        places.add((account, region))
    for (account, region, cluster), (points, lags) in clusters.items():
        # AuroraReplicaLagMaximum: "the maximum amount of lag between the primary instance and
        # each Aurora DB instance in the DB cluster" (Aurora.AuroraMonitoring.Metrics.html).
        if lags:
            points.append(("AuroraReplicaLagMaximum", max(lags)))
        record_points(account, region, cluster, points, CLUSTER_DIMENSION)
    for account, region in places:
        _prune(account, region)


def _member_figures(server: Any, cluster: Any) -> dict[str, float]:
    """A cluster's instance's figures: an Aurora one's (no storage of its own, AuroraReplicaLag),
    or a Multi-AZ DB cluster's, whose instances have the cluster's allocated storage and a
    standby's ReplicaLag (multi-az-db-clusters-concepts.html: their replication is the engine's)."""
    engine = getattr(cluster, "engine", "") or ""
    if engine in ("mysql", "postgres"):
        return figures(server, getattr(cluster, "allocated_storage", None))
    return figures(server, None, True)


def _statistic(values: list[float], statistic: str) -> float:
    if statistic == "Minimum":
        return min(values)
    if statistic == "Maximum":
        return max(values)
    if statistic == "Sum":
        return sum(values)
    if statistic == "SampleCount":
        return float(len(values))
    return sum(values) / len(values)


def evaluate(account: str, region: str, alarm: Any, now: float) -> tuple[str, str] | None:
    """The state the alarm's data puts it in, with the reason; None when it has no data."""
    dimension = next((d for d in alarm.dimensions if d.name in (DIMENSION, CLUSTER_DIMENSION)), None)
    if alarm.namespace != NAMESPACE or dimension is None or alarm.comparison_operator not in COMPARE:
        return None
    key = series_key(account, region, alarm.metric_name, dimension.value, dimension.name)
    series = SERIES.get(key) or ()
    period = max(float(alarm.period or 60), EVERY)
    latest = [v for t, v in series if t >= now - period]
    if not latest:
        return None
    value = _statistic(latest, alarm.statistic or "Average")
    breached = COMPARE[alarm.comparison_operator](value, float(alarm.threshold))
    state = "ALARM" if breached else "OK"
    word = "" if breached else "not "
    reason = (f"Threshold Crossed: 1 datapoint [{value}] was {word}{alarm.comparison_operator} "
              f"the threshold ({alarm.threshold}).")
    return state, reason


def _notify(account: str, region: str, alarm: Any, state: str, reason: str) -> None:
    if not alarm.actions_enabled:
        return
    topics = alarm.alarm_actions if state == "ALARM" else alarm.ok_actions if state == "OK" else []
    if not topics:
        return
    from moto.sns.models import sns_backends

    message = json.dumps({"AlarmName": alarm.name, "AlarmArn": alarm.alarm_arn, "NewStateValue": state,
                          "NewStateReason": reason, "Region": region, "AWSAccountId": account,
                          "Trigger": {"MetricName": alarm.metric_name, "Namespace": alarm.namespace,
                                      "Threshold": alarm.threshold}})
    for topic in topics:
        if not str(topic).startswith("arn:aws:sns:"):
            continue
        parts = str(topic).split(":")
        try:
            sns_backends[parts[4]][parts[3]].publish(message, arn=topic, subject=f'ALARM: "{alarm.name}"'
                                                     if state == "ALARM" else f'OK: "{alarm.name}"')
        except Exception as e:  # a topic gone: CloudWatch records the failed action and goes on
            print(f"moto_ext: alarm {alarm.name} could not notify {topic}: {e}", flush=True)


def evaluate_all() -> None:
    from moto.cloudwatch.models import cloudwatch_backends

    now = time.monotonic()
    for account, region in list(ALARMED):
        backend = cloudwatch_backends[account][region]
        for alarm in list(backend.alarms.values()):
            found = evaluate(account, region, alarm, now)
            if found is None or found[0] == alarm.state_value:
                continue
            state, reason = found
            alarm.update_state(reason, json.dumps({"version": "1.0"}), state)
            _notify(account, region, alarm, state, reason)


def _run() -> None:
    while True:
        time.sleep(EVERY)
        if PAUSED.is_set():
            continue
        try:
            publish_once()
            evaluate_all()
        except Exception as e:  # the publisher outlives a bad reading
            print(f"moto_ext: publishing RDS metrics failed: {e!r}", flush=True)


def start() -> None:
    """Starts the publisher once (a server or an alarm asks for it)."""
    if not _STARTED.is_set():
        _STARTED.set()
        threading.Thread(target=_run, name="rds-metrics", daemon=True).start()


def install() -> None:
    from moto.cloudwatch.models import CloudWatchBackend
    from moto.cloudwatch.responses import CloudWatchResponse
    from moto.core.responses import ActionResult

    orig_describe = CloudWatchResponse.describe_alarms

    def describe_alarms(self: Any) -> Any:
        # Paged as CloudWatch pages it: "MaxRecords: The maximum number of alarm descriptions to
        # retrieve. Valid Range: Minimum value of 1. Maximum value of 100", and NextToken
        # (API_DescribeAlarms.html); moto 5.2.5 answers every alarm at once. Alarms in name order.
        answer = orig_describe(self)
        result = dict(answer.result)
        size = max(1, min(100, int(self._get_param("MaxRecords") or 50)))
        start = int(self._get_param("NextToken") or 0)
        alarms = sorted(result["MetricAlarms"], key=lambda a: a.name)
        result["MetricAlarms"] = alarms[start:start + size]
        if start + size < len(alarms):
            result["NextToken"] = str(start + size)
        return ActionResult(result)

    CloudWatchResponse.describe_alarms = describe_alarms

    orig_put = CloudWatchBackend.put_metric_alarm

    def put_metric_alarm(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        old = self.alarms.get(name)
        alarm = orig_put(self, name, *args, **kwargs)
        if old is None:
            # API_PutMetricAlarm.html: "the alarm state is immediately set to INSUFFICIENT_DATA".
            alarm.state_value = "INSUFFICIENT_DATA"
            alarm.state_reason = "Unchecked: Initial alarm creation"
        else:
            # "When you update an existing alarm, its state is left unchanged, but the update
            # completely overwrites the previous configuration of the alarm" (the same page).
            alarm.state_value, alarm.state_reason = old.state_value, old.state_reason
            alarm.state_reason_data, alarm.history = old.state_reason_data, old.history
        ALARMED.add((self.account_id, self.region_name))
        start()
        return alarm

    CloudWatchBackend.put_metric_alarm = put_metric_alarm
    start()
