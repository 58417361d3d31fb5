"""Aurora Standard and I/O-Optimized (moto_ext/storage.py, Aurora.Overview.StorageReliability.html):
an Aurora cluster's storage is `aurora` by default, takes only `aurora` and `aurora-iopt1`, and
switches to I/O-Optimized once every 30 days, back to Standard at any time; a copy-on-write clone
shares its source's CloneGroupId (moto_ext/clones.py). Each test failed on plain
moto 5.2.5."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def cluster(rds, name, **extra):
    rds.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-postgresql", MasterUsername="admin",
                          MasterUserPassword="hunter2hunter2", **extra)
    return name


def storage(rds, name):
    return rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]["StorageType"]


def switch(rds, name, storage_type):
    rds.modify_db_cluster(DBClusterIdentifier=name, StorageType=storage_type, ApplyImmediately=True)


def test_an_aurora_cluster_is_standard_by_default_and_takes_only_auroras_types(rds):
    assert storage(rds, cluster(rds, "c")) == "aurora"
    assert storage(rds, cluster(rds, "io", StorageType="aurora-iopt1")) == "aurora-iopt1"
    with pytest.raises(ClientError) as e:
        cluster(rds, "gp", StorageType="gp3")
    assert e.value.response["Error"]["Code"] == "InvalidParameterValue"


def test_the_second_switch_to_io_optimized_within_30_days_is_refused(rds):
    c = cluster(rds, "c")
    switch(rds, c, "aurora-iopt1")
    switch(rds, c, "aurora")
    assert storage(rds, c) == "aurora", "back to Standard at any time"
    with pytest.raises(ClientError) as e:
        switch(rds, c, "aurora-iopt1")
    error = e.value.response["Error"]
    assert error["Code"] == "InvalidParameterCombination"
    assert "30 days" in error["Message"]
    assert storage(rds, c) == "aurora"


def test_a_switch_is_taken_again_after_the_30_days(rds, monkeypatch):
    monkeypatch.setitem(moto_ext.CONFIG, "iopt_switch_after", 0.0)
    c = cluster(rds, "c")
    for storage_type in ["aurora-iopt1", "aurora", "aurora-iopt1"]:
        switch(rds, c, storage_type)
    assert storage(rds, c) == "aurora-iopt1"


def test_a_copy_on_write_clone_shares_its_sources_clone_group(rds):
    source = cluster(rds, "source")
    assert rds.describe_db_clusters(DBClusterIdentifier=source)["DBClusters"][0].get("CloneGroupId") is None
    rds.restore_db_cluster_to_point_in_time(DBClusterIdentifier="clone", SourceDBClusterIdentifier=source,
                                            RestoreType="copy-on-write", UseLatestRestorableTime=True)
    groups = [rds.describe_db_clusters(DBClusterIdentifier=c)["DBClusters"][0].get("CloneGroupId")
              for c in (source, "clone")]
    assert groups[0] is not None and groups[0] == groups[1]
    rds.restore_db_cluster_to_point_in_time(DBClusterIdentifier="copy", SourceDBClusterIdentifier=source,
                                            UseLatestRestorableTime=True)
    assert rds.describe_db_clusters(DBClusterIdentifier="copy")["DBClusters"][0].get("CloneGroupId") is None
