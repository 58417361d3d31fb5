"""RDS's CloudWatch metrics from the real engines, and alarms evaluated on them (moto_ext/metrics.py,
rds-metrics.html, API_PutMetricAlarm.html), through boto3 against moto with moto_ext loaded, in
process. Each test failed on plain moto 5.2.5, which publishes no RDS metric and never evaluates
an alarm."""

from __future__ import annotations

import contextlib
import datetime
import subprocess
import time

import boto3
import pytest
from moto import mock_aws

from moto_ext import clusters, engines, metrics, scope

REAL = [{"Key": engines.TAG, "Value": "true"}]
ACCOUNT = "123456789012"
PASSWORD = "hunter2hunter2"


@pytest.fixture
def aws():
    metrics.PAUSED.set()  # the tests take the readings; no background tick between their steps
    with mock_aws():
        try:
            yield boto3.client("rds", region_name="us-east-1"), boto3.client("cloudwatch", region_name="us-east-1")
        finally:
            for identifier in list(clusters.TOPOLOGY):
                clusters.forget(identifier)
            engines.stop_all()
            metrics.SERIES.clear()
            metrics.ALARMED.clear()
            metrics.PAUSED.clear()


def available(rds, identifier, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]["DBInstanceStatus"]
        if status == "available":
            return
        assert status != "failed"
        time.sleep(0.5)
    raise AssertionError(f"{identifier} not available within {timeout} s")


def latest(cloudwatch, identifier, metric, stat="Maximum"):
    now = datetime.datetime.now(datetime.timezone.utc)
    answer = cloudwatch.get_metric_data(
        MetricDataQueries=[{"Id": "m", "MetricStat": {
            "Metric": {"Namespace": "AWS/RDS", "MetricName": metric,
                       "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": identifier}]},
            "Period": 60, "Stat": stat}}],
        StartTime=now - datetime.timedelta(minutes=5), EndTime=now + datetime.timedelta(minutes=1),
        ScanBy="TimestampDescending")
    values = answer["MetricDataResults"][0]["Values"]
    return values[0] if values else None


def mariadb(identifier, sql):
    """`sql` as the master user, through the instance's endpoint."""
    with scope.within(ACCOUNT, "us-east-1"):
        server = engines.get(identifier)
    done = subprocess.run(["mariadb", "--no-defaults", "-h", server.address, "-P", str(server.port), "-uadmin",
                           f"-p{PASSWORD}", "--batch", "--skip-column-names", "-e", sql],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@contextlib.contextmanager
def held_behind(replica, source, seconds=6):
    """`replica` held behind a global read lock its own superuser takes (its SQL thread waits, its
    I/O thread goes on) while a row is written to `source`; yields once the replica has been
    behind for 2.5 s."""
    holder = subprocess.Popen(["mariadb", "--no-defaults", "-uroot", f"--socket={replica.socket}",
                               "-e", f"FLUSH TABLES WITH READ LOCK; SELECT SLEEP({seconds});"])
    try:
        time.sleep(0.5)
        source.query("INSERT INTO app.t VALUES (1);")
        time.sleep(2.5)
        yield
    finally:
        holder.wait(timeout=30)


def primary(rds, name, storage=20):
    rds.create_db_instance(DBInstanceIdentifier=name, Engine="mysql", DBInstanceClass="db.t3.micro",
                           AllocatedStorage=storage, MasterUsername="admin", MasterUserPassword=PASSWORD,
                           DBName="app", BackupRetentionPeriod=1, Tags=REAL)
    available(rds, name)


def test_an_instance_publishes_free_storage_connections_and_cpu_and_writes_take_storage(aws):
    rds, cloudwatch = aws
    primary(rds, "m")
    metrics.publish_once()
    time.sleep(0.2)
    metrics.publish_once()
    free = latest(cloudwatch, "m", "FreeStorageSpace", "Minimum")
    assert 19 * 2**30 < free < 20 * 2**30, free
    assert latest(cloudwatch, "m", "DatabaseConnections") == 0, "the reading's own session is not counted"
    assert latest(cloudwatch, "m", "CPUUtilization") is not None
    assert latest(cloudwatch, "m", "ReplicaLag") is None, "a source has no replica lag"
    mariadb("m", "USE app; CREATE TABLE fill (b LONGBLOB); "
                 "INSERT INTO fill SELECT REPEAT('x', 8388608) FROM seq_1_to_4;")
    metrics.publish_once()
    assert metrics.SERIES[(ACCOUNT, "us-east-1", "FreeStorageSpace", "m")][-1][1] < free - 30 * 2**20


def test_a_replica_kept_from_applying_reports_a_growing_lag_then_zero_once_it_catches_up(aws):
    rds, cloudwatch = aws
    primary(rds, "p")
    rds.create_db_instance_read_replica(DBInstanceIdentifier="r", SourceDBInstanceIdentifier="p")
    available(rds, "r")
    mariadb("p", "CREATE TABLE app.t (n INT PRIMARY KEY)")
    time.sleep(1)
    metrics.publish_once()
    assert latest(cloudwatch, "r", "ReplicaLag") == 0
    with scope.within(ACCOUNT, "us-east-1"):
        replica = engines.get("r")
    # A session on the replica holds a global read lock (the master user has RELOAD): the
    # replication's SQL thread waits behind it, as behind any long query on a replica.
    holder = subprocess.Popen(["mariadb", "--no-defaults", "-h", replica.address, "-P", str(replica.port), "-uadmin",
                               f"-p{PASSWORD}", "-e", "FLUSH TABLES WITH READ LOCK; SELECT SLEEP(8);"])
    try:
        time.sleep(1)
        mariadb("p", "INSERT INTO app.t VALUES (1)")
        time.sleep(2)
        metrics.publish_once()
        first = metrics.SERIES[(ACCOUNT, "us-east-1", "ReplicaLag", "r")][-1][1]
        time.sleep(2)
        metrics.publish_once()
        second = metrics.SERIES[(ACCOUNT, "us-east-1", "ReplicaLag", "r")][-1][1]
        assert 1 <= first < second, (first, second)
    finally:
        holder.wait(timeout=30)
    time.sleep(2)
    metrics.publish_once()
    assert latest(cloudwatch, "r", "ReplicaLag", "Minimum") == 0


def test_an_alarm_starts_without_data_goes_to_alarm_past_its_threshold_and_notifies_its_topic(aws):
    rds, cloudwatch = aws
    sns = boto3.client("sns", region_name="us-east-1")
    sqs = boto3.client("sqs", region_name="us-east-1")
    topic = sns.create_topic(Name="db-alarms")["TopicArn"]
    queue = sqs.create_queue(QueueName="db-alarms")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    primary(rds, "a")
    metrics.publish_once()
    free = metrics.SERIES[(ACCOUNT, "us-east-1", "FreeStorageSpace", "a")][-1][1]
    cloudwatch.put_metric_alarm(
        AlarmName="a-storage", Namespace="AWS/RDS", MetricName="FreeStorageSpace", Statistic="Minimum",
        Dimensions=[{"Name": "DBInstanceIdentifier", "Value": "a"}], Period=60, EvaluationPeriods=1,
        Threshold=free - 16 * 2**20, ComparisonOperator="LessThanThreshold", AlarmActions=[topic],
        Tags=[{"Key": "owner", "Value": "test"}])
    state = cloudwatch.describe_alarms(AlarmNames=["a-storage"])["MetricAlarms"][0]["StateValue"]
    assert state == "INSUFFICIENT_DATA"
    metrics.evaluate_all()
    assert cloudwatch.describe_alarms(AlarmNames=["a-storage"])["MetricAlarms"][0]["StateValue"] == "OK"
    mariadb("a", "USE app; CREATE TABLE fill (b LONGBLOB); "
                 "INSERT INTO fill SELECT REPEAT('x', 8388608) FROM seq_1_to_4;")
    metrics.SERIES.clear()  # only the reading after the fill in the alarm's period
    metrics.publish_once()
    metrics.evaluate_all()
    alarm = cloudwatch.describe_alarms(AlarmNames=["a-storage"])["MetricAlarms"][0]
    assert alarm["StateValue"] == "ALARM", alarm["StateReason"]
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
    assert any("a-storage" in m["Body"] and "ALARM" in m["Body"] for m in messages), (messages, alarm)
    # An update keeps the state (API_PutMetricAlarm.html).
    cloudwatch.put_metric_alarm(
        AlarmName="a-storage", Namespace="AWS/RDS", MetricName="FreeStorageSpace", Statistic="Minimum",
        Dimensions=[{"Name": "DBInstanceIdentifier", "Value": "a"}], Period=60, EvaluationPeriods=1,
        Threshold=1.0, ComparisonOperator="LessThanThreshold", AlarmActions=[topic])
    assert cloudwatch.describe_alarms(AlarmNames=["a-storage"])["MetricAlarms"][0]["StateValue"] == "ALARM"


def test_cloudwatch_answers_the_smithy_rpc_v2_cbor_protocol_the_sdks_speak(aws):
    """CloudWatch's own protocol (botocore's model lists smithy-rpc-v2-cbor first; the Rust SDK
    speaks nothing else), through the emulator's WSGI front: a request at
    /service/GraniteServiceVersion20100801/operation/<op> is served, its answer in CBOR, an error
    a CBOR map of __type and message (moto_ext/rpc_cbor.py). moto 5.2.5 answered 404."""
    import botocore.session
    from botocore.parsers import RpcV2CBORParser
    from botocore.serialize import RpcV2CBORSerializer
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.test import Client

    import moto_ext

    model = botocore.session.get_session().get_service_model("cloudwatch")
    client = Client(moto_ext.ControlMiddleware(DomainDispatcherApplication(create_backend_app)))

    def call(operation, params):
        op = model.operation_model(operation)
        request = RpcV2CBORSerializer().serialize_to_request(params, op)
        headers = dict(request["headers"])
        headers["Authorization"] = ("AWS4-HMAC-SHA256 Credential=test/20261206/us-east-1/monitoring/aws4_request, "
                                    "SignedHeaders=host, Signature=0")
        answer = client.post(request["url_path"], data=request["body"], headers=headers)
        assert answer.headers["smithy-protocol"] == "rpc-v2-cbor"
        parsed = RpcV2CBORParser().parse({"body": answer.data, "headers": dict(answer.headers),
                                         "status_code": answer.status_code}, op.output_shape)
        return answer.status_code, parsed

    code, _ = call("PutMetricAlarm", {
        "AlarmName": "rds-operator:c:CPUUtilization", "Namespace": "AWS/RDS", "MetricName": "CPUUtilization",
        "Statistic": "Average", "Period": 60, "EvaluationPeriods": 1, "Threshold": 90.0,
        "ComparisonOperator": "GreaterThanThreshold", "Tags": [{"Key": "owner", "Value": "x"}]})
    assert code == 200
    code, listed = call("DescribeAlarms", {"AlarmNamePrefix": "rds-operator:"})
    assert [a["StateValue"] for a in listed["MetricAlarms"]] == ["INSUFFICIENT_DATA"]
    metrics.record(ACCOUNT, "us-east-1", "c", {"CPUUtilization": 42.0})
    now = datetime.datetime.now(datetime.timezone.utc)
    code, data = call("GetMetricData", {
        "MetricDataQueries": [{"Id": "m0", "MetricStat": {"Metric": {
            "Namespace": "AWS/RDS", "MetricName": "CPUUtilization",
            "Dimensions": [{"Name": "DBInstanceIdentifier", "Value": "c"}]}, "Period": 60, "Stat": "Average"}}],
        "StartTime": now - datetime.timedelta(minutes=2), "EndTime": now + datetime.timedelta(minutes=1)})
    assert data["MetricDataResults"][0]["Values"] == [42.0]
    assert isinstance(data["MetricDataResults"][0]["Timestamps"][0], datetime.datetime), "a timestamp (tag 1)"
    code, error = call("SetAlarmState", {"AlarmName": "nope", "StateValue": "OK", "StateReason": "x"})
    assert code == 404 and error["Error"]["Code"] == "ResourceNotFound", error


def test_describe_alarms_pages_by_max_records_as_cloudwatch_does(aws):
    """API_DescribeAlarms.html: MaxRecords 1 to 100 (default 50) and NextToken; moto 5.2.5 answered
    every alarm in one page."""
    _, cloudwatch = aws
    for i in range(130):
        cloudwatch.put_metric_alarm(
            AlarmName=f"rds-operator:i{i:03}:CPUUtilization", Namespace="AWS/RDS", MetricName="CPUUtilization",
            Statistic="Average", Period=60, EvaluationPeriods=1, Threshold=90.0,
            ComparisonOperator="GreaterThanThreshold")
    first = cloudwatch.describe_alarms(AlarmNamePrefix="rds-operator:", MaxRecords=100)
    assert len(first["MetricAlarms"]) == 100 and first["NextToken"]
    second = cloudwatch.describe_alarms(AlarmNamePrefix="rds-operator:", MaxRecords=100, NextToken=first["NextToken"])
    assert len(second["MetricAlarms"]) == 30 and "NextToken" not in second
    names = [a["AlarmName"] for a in first["MetricAlarms"] + second["MetricAlarms"]]
    assert len(set(names)) == 130
    assert len(cloudwatch.describe_alarms()["MetricAlarms"]) == 50, "50 by default"


def test_a_global_secondary_held_behind_publishes_aurora_global_db_replication_lag_in_its_region(aws):
    """A global database's secondary, its writer held behind a read lock while the primary is
    written to: its lag is the cluster's AuroraGlobalDBReplicationLag (ms, dimension
    DBClusterIdentifier) in the secondary's region, 0 once caught up (rds-metrics.html, Aurora)."""
    from test_engines import aurora_mysql, available as all_available

    rds, _ = aws
    aurora_mysql(rds, "gp", readers=0)
    arn = rds.describe_db_clusters(DBClusterIdentifier="gp")["DBClusters"][0]["DBClusterArn"]
    rds.create_global_cluster(GlobalClusterIdentifier="g", SourceDBClusterIdentifier=arn)
    west = boto3.client("rds", region_name="us-west-2")
    west.create_db_cluster(DBClusterIdentifier="gs", Engine="aurora-mysql", GlobalClusterIdentifier="g")
    west.create_db_instance(DBInstanceIdentifier="gs-0", DBClusterIdentifier="gs", Engine="aurora-mysql",
                            DBInstanceClass="db.r6g.large")
    all_available(west, ["gs-0"])
    with scope.within(ACCOUNT, "us-east-1"):
        primary = clusters.server_of("gp")
    with scope.within(ACCOUNT, "us-west-2"):
        secondary = clusters.server_of("gs")
    primary.query("CREATE TABLE app.t (n INT PRIMARY KEY);")
    assert secondary.caught_up(primary.position(), 10)
    key = metrics.series_key(ACCOUNT, "us-west-2", metrics.GLOBAL_LAG, "gs", metrics.CLUSTER_DIMENSION)
    metrics.publish_once()
    assert metrics.SERIES[key][-1][1] == 0
    with held_behind(secondary, primary):
        metrics.publish_once()
        assert metrics.SERIES[key][-1][1] >= 1000, metrics.SERIES[key]
    assert not any(k[2] in ("ReplicaLag", "AuroraReplicaLag") and k[3] == "gs-0" for k in metrics.SERIES), \
        "the secondary's writer's lag is the cluster's global lag"


def aurora_with_a_reader(rds, name):
    """An Aurora MySQL cluster of a writer and a reader on real engines, with the table app.t the
    reader has caught up with: (writer, reader, the writer's server, the reader's)."""
    from test_engines import aurora_mysql

    writer, reader = aurora_mysql(rds, name, readers=1)
    with scope.within(ACCOUNT, "us-east-1"):
        primary = clusters.server_of(name)
        replica = engines.get(clusters.TOPOLOGY[name]["members"][reader])
    primary.query("CREATE TABLE app.t (n INT PRIMARY KEY);")
    assert replica.caught_up(primary.position(), 10)
    return writer, reader, primary, replica


def test_an_aurora_reader_held_behind_publishes_aurora_replica_lag_and_no_storage(aws):
    """An Aurora reader, held behind a read lock while its writer is written to: its lag is
    AuroraReplicaLag in milliseconds (published for readers only), and no Aurora instance has a
    FreeStorageSpace of its own (rds-metrics.html, "Amazon Aurora metrics")."""
    rds, _ = aws
    writer, reader, primary, replica = aurora_with_a_reader(rds, "ar")
    with held_behind(replica, primary):
        metrics.publish_once()
        lag = metrics.SERIES[(ACCOUNT, "us-east-1", "AuroraReplicaLag", reader)][-1][1]
        assert lag >= 1000, lag
    assert (ACCOUNT, "us-east-1", "AuroraReplicaLag", writer) not in metrics.SERIES, "a writer has none"
    assert not any(k[2] == "FreeStorageSpace" and k[3] in (writer, reader) for k in metrics.SERIES)
    assert (ACCOUNT, "us-east-1", "DatabaseConnections", writer) in metrics.SERIES


def cluster_series(identifier, metric):
    return metrics.SERIES.get(metrics.series_key(ACCOUNT, "us-east-1", metric, identifier,
                                                 metrics.CLUSTER_DIMENSION)) or []


def test_a_cluster_shows_its_instances_figures_and_its_furthest_readers_lag_and_alarms_on_them(aws):
    """The cluster's dimension (DBClusterIdentifier) has a datapoint of each instance's CPU and
    connections (dimensions.html), and AuroraReplicaLagMaximum, the furthest reader's lag
    (Aurora.AuroraMonitoring.Metrics.html); an alarm on the cluster's dimension is evaluated on
    them, and an instance of the cluster's name is not."""
    rds, cloudwatch = aws
    writer, reader, primary, replica = aurora_with_a_reader(rds, "cl")
    alarm = dict(AlarmName="cl-lag", Namespace="AWS/RDS", MetricName="AuroraReplicaLagMaximum",
                 Statistic="Maximum", Dimensions=[{"Name": "DBClusterIdentifier", "Value": "cl"}],
                 Period=60, EvaluationPeriods=1, Threshold=500.0,
                 ComparisonOperator="GreaterThanThreshold")
    cloudwatch.put_metric_alarm(**alarm)
    on_instance = dict(alarm, AlarmName="cl-instance", MetricName="DatabaseConnections",
                       Dimensions=[{"Name": "DBInstanceIdentifier", "Value": "cl"}], Threshold=-1.0)
    cloudwatch.put_metric_alarm(**on_instance)
    with held_behind(replica, primary):
        metrics.publish_once()
        reader_lag = metrics.SERIES[(ACCOUNT, "us-east-1", "AuroraReplicaLag", reader)][-1][1]
        assert cluster_series("cl", "AuroraReplicaLagMaximum")[-1][1] == reader_lag >= 1000
        metrics.evaluate_all()
    states = {a["AlarmName"]: a["StateValue"] for a in cloudwatch.describe_alarms()["MetricAlarms"]}
    assert states == {"cl-lag": "ALARM", "cl-instance": "INSUFFICIENT_DATA"}, states
    assert len(cluster_series("cl", "DatabaseConnections")) == 2, "a datapoint per instance"
    metrics.publish_once()  # CPU is a share over the time between two readings
    assert len(cluster_series("cl", "CPUUtilization")) == 2, "a datapoint per instance"
    assert cluster_series("cl", "FreeStorageSpace") == [], "an Aurora volume grows by itself"


def test_a_multi_az_db_clusters_instances_publish_their_storage_and_standby_lag(aws):
    """A Multi-AZ DB cluster's instances are not Aurora's: each has the cluster's allocated
    storage (FreeStorageSpace) and a standby its ReplicaLag, shown of the cluster too
    (multi-az-db-clusters-concepts.html; rds-metrics.html)."""
    from test_multi_az import BASE

    rds, _ = aws
    rds.create_db_cluster(DBClusterIdentifier="mz", DatabaseName="app", Tags=REAL, **BASE)
    members = ["mz-instance-1", "mz-instance-2", "mz-instance-3"]
    for member in members:
        available(rds, member)
    metrics.publish_once()
    for member in members:
        free = metrics.SERIES[(ACCOUNT, "us-east-1", "FreeStorageSpace", member)][-1][1]
        assert 0 < free < 20 * 2**30, free
        assert (ACCOUNT, "us-east-1", "AuroraReplicaLag", member) not in metrics.SERIES
    lags = [k[3] for k in metrics.SERIES if k[2] == "ReplicaLag" and len(k) == 4]
    assert sorted(lags) == members[1:], lags
    assert len(cluster_series("mz", "FreeStorageSpace")) == 3
    assert len(cluster_series("mz", "ReplicaLag")) == 2
    assert cluster_series("mz", "AuroraReplicaLagMaximum") == []


def test_a_green_clusters_writer_publishes_its_binlog_lag_behind_blue(aws):
    """A blue/green deployment's green cluster replicates blue's writer by binlog: the green writer's
    lag is AuroraBinlogReplicaLag, in seconds, of the writer and of the cluster, not a reader's
    AuroraReplicaLag (Aurora.AuroraMonitoring.Metrics.html)."""
    from test_rules import cluster_group

    rds, _ = aws
    cluster_group(rds, "binlog", "aurora-mysql8.0", "binlog_format", "ROW")
    arn = rds.create_db_cluster(DBClusterIdentifier="bb", Engine="aurora-mysql", MasterUsername="admin",
                                MasterUserPassword=PASSWORD, DatabaseName="app",
                                DBClusterParameterGroupName="binlog", Tags=REAL)["DBCluster"]["DBClusterArn"]
    rds.create_db_instance(DBInstanceIdentifier="bb-1", DBClusterIdentifier="bb", Engine="aurora-mysql",
                           DBInstanceClass="db.r6g.large")
    available(rds, "bb-1")
    deadline = time.monotonic() + 120
    while rds.describe_db_clusters(DBClusterIdentifier="bb")["DBClusters"][0]["Status"] != "available":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    made = rds.create_blue_green_deployment(BlueGreenDeploymentName="bg", Source=arn)["BlueGreenDeployment"]
    deadline = time.monotonic() + 120
    while True:
        bg = rds.describe_blue_green_deployments(
            BlueGreenDeploymentIdentifier=made["BlueGreenDeploymentIdentifier"])["BlueGreenDeployments"][0]
        if bg["Status"] == "AVAILABLE":
            break
        assert time.monotonic() < deadline, bg
        time.sleep(0.5)
    green = bg["Target"].rsplit(":", 1)[-1]
    with scope.within(ACCOUNT, "us-east-1"):
        blue_server, green_server = clusters.server_of("bb"), clusters.server_of(green)
        green_writer = next(iter(clusters.TOPOLOGY[green]["members"]))
    blue_server.query("CREATE TABLE app.t (n INT PRIMARY KEY);")
    assert green_server.caught_up(blue_server.position(), 10)
    with held_behind(green_server, blue_server):
        metrics.publish_once()
        lag = cluster_series(green, "AuroraBinlogReplicaLag")[-1][1]
        assert lag >= 1, lag
        assert metrics.SERIES[(ACCOUNT, "us-east-1", "AuroraBinlogReplicaLag", green_writer)][-1][1] == lag
    assert (ACCOUNT, "us-east-1", "AuroraReplicaLag", green_writer) not in metrics.SERIES
    assert cluster_series(green, "AuroraReplicaLagMaximum") == [], "green has no reader"
    time.sleep(1)
    metrics.publish_once()
    assert cluster_series(green, "AuroraBinlogReplicaLag")[-1][1] == 0, "caught up once released"
