"""Database Insights, Performance Insights and Enhanced Monitoring as RDS shows them
(moto_ext/insights.py; API_CreateDBInstance.html, API_CreateDBCluster.html, DatabaseInsightsMode):
the Standard mode by default, the cluster's settings kept, and advanced refused without 465 days of
Performance Insights. Each test failed on plain moto 5.2.5."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def instance(rds, name, **extra):
    return rds.create_db_instance(DBInstanceIdentifier=name, Engine="mysql", DBInstanceClass="db.t3.micro",
                                  AllocatedStorage=20, MasterUsername="admin",
                                  MasterUserPassword="hunter2hunter2", **extra)["DBInstance"]


def cluster(rds, name, **extra):
    return rds.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-mysql", MasterUsername="admin",
                                 MasterUserPassword="hunter2hunter2", **extra)["DBCluster"]


def described(rds, name):
    return rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]


def test_database_insights_is_standard_by_default_and_performance_insights_off(rds):
    instance(rds, "db")
    db = rds.describe_db_instances(DBInstanceIdentifier="db")["DBInstances"][0]
    assert db["DatabaseInsightsMode"] == "standard"
    cluster(rds, "c")
    c = described(rds, "c")
    assert (c["DatabaseInsightsMode"], c["PerformanceInsightsEnabled"], c["MonitoringInterval"]) == (
        "standard", False, 0)


def test_a_clusters_insights_and_monitoring_are_kept_at_create_and_modify(rds):
    role = "arn:aws:iam::123456789012:role/rds-monitoring"
    cluster(rds, "c", EnablePerformanceInsights=True, PerformanceInsightsRetentionPeriod=465,
            DatabaseInsightsMode="advanced", MonitoringInterval=30, MonitoringRoleArn=role)
    c = described(rds, "c")
    assert (c["DatabaseInsightsMode"], c["PerformanceInsightsEnabled"],
            c["PerformanceInsightsRetentionPeriod"], c["MonitoringInterval"], c["MonitoringRoleArn"]) == (
        "advanced", True, 465, 30, role)
    rds.modify_db_cluster(DBClusterIdentifier="c", DatabaseInsightsMode="standard", MonitoringInterval=60,
                          PerformanceInsightsRetentionPeriod=31, ApplyImmediately=True)
    c = described(rds, "c")
    assert (c["DatabaseInsightsMode"], c["PerformanceInsightsRetentionPeriod"], c["MonitoringInterval"]) == (
        "standard", 31, 60)


def test_advanced_without_465_days_of_performance_insights_is_refused(rds):
    with pytest.raises(ClientError) as e:
        instance(rds, "db", DatabaseInsightsMode="advanced")
    assert e.value.response["Error"]["Code"] == "InvalidParameterCombination"
    cluster(rds, "c", EnablePerformanceInsights=True)
    with pytest.raises(ClientError) as e:
        rds.modify_db_cluster(DBClusterIdentifier="c", DatabaseInsightsMode="advanced", ApplyImmediately=True)
    assert e.value.response["Error"]["Code"] == "InvalidParameterCombination"
    assert described(rds, "c")["DatabaseInsightsMode"] == "standard"
