"""Stopping and starting DB instances and clusters as RDS does (moto_ext/activation.py,
USER_StopInstance.html, aurora-cluster-stop-start.html): the states on the way, what cannot be
stopped, a stopped database that cannot be modified, and the start RDS makes by itself after 7 days
(here auto_start_after). Each test failed on plain moto 5.2.5."""

from __future__ import annotations

import time

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def instance(rds, name, **extra):
    rds.create_db_instance(DBInstanceIdentifier=name, Engine=extra.pop("Engine", "mysql"),
                           DBInstanceClass="db.t3.micro", AllocatedStorage=20,
                           MasterUsername="admin", MasterUserPassword="hunter2hunter2", **extra)
    return name


def status(rds, name):
    return rds.describe_db_instances(DBInstanceIdentifier=name)["DBInstances"][0]["DBInstanceStatus"]


def refused(call, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["Error"]


def test_a_stop_goes_through_stopping_and_a_start_through_starting(rds, monkeypatch):
    monkeypatch.setitem(moto_ext.CONFIG, "modify_delay", 30.0)
    db = instance(rds, "db")
    moto_ext.CONFIG["modify_delay"] = 0.0
    stopped = rds.stop_db_instance(DBInstanceIdentifier=db)["DBInstance"]
    assert stopped["DBInstanceStatus"] == "stopping"
    assert status(rds, db) == "stopped"
    started = rds.start_db_instance(DBInstanceIdentifier=db)["DBInstance"]
    assert started["DBInstanceStatus"] == "starting"
    assert status(rds, db) == "available"


def test_a_read_replica_and_its_source_cannot_be_stopped(rds):
    source = instance(rds, "source")
    rds.create_db_instance_read_replica(DBInstanceIdentifier="replica",
                                        SourceDBInstanceIdentifier=source)
    for name in ["replica", "source"]:
        error = refused(rds.stop_db_instance, DBInstanceIdentifier=name)
        assert error["Code"] == "InvalidDBInstanceState", (name, error)
    assert "read replica" in refused(rds.stop_db_instance, DBInstanceIdentifier="replica")["Message"]


def test_a_multi_az_sql_server_instance_cannot_be_stopped(rds):
    db = instance(rds, "mssql", Engine="sqlserver-se", MultiAZ=True, LicenseModel="license-included")
    error = refused(rds.stop_db_instance, DBInstanceIdentifier=db)
    assert error["Code"] == "InvalidDBInstanceState"
    assert "SQL Server" in error["Message"]


def test_a_stopped_instance_cannot_be_modified_and_only_a_stopped_one_started(rds):
    db = instance(rds, "db")
    assert refused(rds.start_db_instance, DBInstanceIdentifier=db)["Code"] == "InvalidDBInstanceState"
    rds.stop_db_instance(DBInstanceIdentifier=db)
    assert status(rds, db) == "stopped"
    error = refused(rds.modify_db_instance, DBInstanceIdentifier=db, BackupRetentionPeriod=3,
                    ApplyImmediately=True)
    assert error["Code"] == "InvalidDBInstanceState"
    assert refused(rds.stop_db_instance, DBInstanceIdentifier=db)["Code"] == "InvalidDBInstanceState"
    rds.delete_db_instance(DBInstanceIdentifier=db, SkipFinalSnapshot=True)


def test_a_stopped_instance_starts_by_itself_after_auto_start_after(rds, monkeypatch):
    db = instance(rds, "db")
    monkeypatch.setitem(moto_ext.CONFIG, "auto_start_after", 0.5)
    rds.stop_db_instance(DBInstanceIdentifier=db)
    assert status(rds, db) == "stopped"
    time.sleep(0.6)
    # The start RDS makes, seen by the next look.
    assert status(rds, db) in ("starting", "available")
    assert status(rds, db) == "available"


def cluster(rds, name, **extra):
    rds.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-mysql", MasterUsername="admin",
                          MasterUserPassword="hunter2hunter2", **extra)
    rds.create_db_instance(DBInstanceIdentifier=f"{name}-1", DBClusterIdentifier=name,
                           Engine="aurora-mysql", DBInstanceClass="db.r6g.large")
    return name


def cluster_status(rds, name):
    return rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]["Status"]


def test_a_cluster_stops_through_stopping_with_its_members(rds, monkeypatch):
    c = cluster(rds, "c")
    monkeypatch.setitem(moto_ext.CONFIG, "modify_delay", 30.0)
    rds.stop_db_cluster(DBClusterIdentifier=c)
    assert (cluster_status(rds, c), status(rds, "c-1")) == ("stopping", "stopping")


def test_a_cluster_stops_with_its_members_and_starts_through_starting(rds, monkeypatch):
    c = cluster(rds, "c")
    monkeypatch.setitem(moto_ext.CONFIG, "modify_delay", 0.0)
    # The reply still shows it available (moto's test_stop_db_cluster, checked against AWS).
    assert rds.stop_db_cluster(DBClusterIdentifier=c)["DBCluster"]["Status"] == "available"
    assert (cluster_status(rds, c), status(rds, "c-1")) == ("stopped", "stopped")
    assert rds.start_db_cluster(DBClusterIdentifier=c)["DBCluster"]["Status"] == "starting"
    assert (cluster_status(rds, c), status(rds, "c-1")) == ("available", "available")


def test_a_stopped_cluster_cannot_be_modified_and_only_a_stopped_one_started(rds):
    c = cluster(rds, "c")
    assert refused(rds.start_db_cluster, DBClusterIdentifier=c)["Code"] == "InvalidDBClusterStateFault"
    rds.stop_db_cluster(DBClusterIdentifier=c)
    error = refused(rds.modify_db_cluster, DBClusterIdentifier=c, BackupRetentionPeriod=3,
                    ApplyImmediately=True)
    assert (error["Code"], "stop" in error["Message"]) == ("InvalidDBClusterStateFault", True)
    assert refused(rds.stop_db_cluster, DBClusterIdentifier=c)["Code"] == "InvalidDBClusterStateFault"


def test_a_member_of_a_global_database_cannot_be_stopped(rds):
    rds.create_global_cluster(GlobalClusterIdentifier="g", Engine="aurora-mysql")
    c = cluster(rds, "c", GlobalClusterIdentifier="g")
    error = refused(rds.stop_db_cluster, DBClusterIdentifier=c)
    assert (error["Code"], "global database" in error["Message"]) == ("InvalidDBClusterStateFault", True)


def test_a_stopped_cluster_starts_by_itself_after_auto_start_after(rds, monkeypatch):
    c = cluster(rds, "c")
    monkeypatch.setitem(moto_ext.CONFIG, "auto_start_after", 0.5)
    rds.stop_db_cluster(DBClusterIdentifier=c)
    assert cluster_status(rds, c) == "stopped"
    time.sleep(0.6)
    # The start Aurora makes, seen by the next look.
    assert cluster_status(rds, c) in ("starting", "available")
    assert (cluster_status(rds, c), status(rds, "c-1")) == ("available", "available")
