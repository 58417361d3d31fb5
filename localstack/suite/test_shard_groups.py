"""Aurora PostgreSQL Limitless DB shard groups (moto_ext/shard_groups.py; limitless.html,
API_CreateDBShardGroup.html, API_ModifyDBShardGroup.html, API_DeleteDBShardGroup.html,
API_RebootDBShardGroup.html, API_DBShardGroup.html): made only in a limitless Aurora PostgreSQL
cluster, one per cluster, with its own endpoint; changed, rebooted and deleted only while available;
the cluster is not deleted before it; paged and tagged by ARN. moto 5.2.5 makes one in any cluster
and has no Modify, Reboot or Delete call."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext


@pytest.fixture
def rds():
    with mock_aws():
        client = boto3.client("rds", region_name="us-east-1")
        for name, scalability in (("limitless", "limitless"), ("standard", "standard")):
            client.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-postgresql",
                                     MasterUsername="admin", MasterUserPassword="hunter2hunter2",
                                     ClusterScalabilityType=scalability)
        yield client


def code(call, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["Error"]["Code"]


def test_a_shard_group_of_a_limitless_cluster_is_made_changed_tagged_and_deleted(rds):
    cluster = rds.describe_db_clusters(DBClusterIdentifier="limitless")["DBClusters"][0]
    assert cluster["ClusterScalabilityType"] == "limitless"
    made = rds.create_db_shard_group(DBShardGroupIdentifier="shards", DBClusterIdentifier="limitless",
                                     MaxACU=768, MinACU=16, ComputeRedundancy=0,
                                     Tags=[{"Key": "team", "Value": "coffee"}])
    assert made["Endpoint"].startswith("limitless.limitless-") and made["Endpoint"] != cluster["Endpoint"]
    assert code(rds.delete_db_cluster, DBClusterIdentifier="limitless", SkipFinalSnapshot=True) == \
        "InvalidDBClusterStateFault"
    rds.modify_db_shard_group(DBShardGroupIdentifier="shards", MaxACU=1024, ComputeRedundancy=1)
    group = rds.describe_db_shard_groups(DBShardGroupIdentifier="shards")["DBShardGroups"][0]
    assert (group["MaxACU"], group["ComputeRedundancy"]) == (1024, 1)
    rds.reboot_db_shard_group(DBShardGroupIdentifier="shards")
    tags = rds.list_tags_for_resource(ResourceName=made["DBShardGroupArn"])["TagList"]
    assert tags == [{"Key": "team", "Value": "coffee"}]
    rds.delete_db_shard_group(DBShardGroupIdentifier="shards")
    assert code(rds.delete_db_shard_group, DBShardGroupIdentifier="shards") in (
        "InvalidDBShardGroupState", "DBShardGroupNotFound")


def test_a_standard_cluster_a_second_group_and_a_change_while_busy_are_refused(rds):
    assert code(rds.create_db_shard_group, DBShardGroupIdentifier="s", DBClusterIdentifier="standard",
                MaxACU=768) == "InvalidDBClusterStateFault"
    rds.create_db_shard_group(DBShardGroupIdentifier="one", DBClusterIdentifier="limitless", MaxACU=768)
    assert code(rds.create_db_shard_group, DBShardGroupIdentifier="two", DBClusterIdentifier="limitless",
                MaxACU=768) == "MaxDBShardGroupLimitReached"
    moto_ext.CONFIG["modify_delay"], before = 30.0, moto_ext.CONFIG["modify_delay"]
    try:
        rds.modify_db_shard_group(DBShardGroupIdentifier="one", MaxACU=1024)
        group = rds.describe_db_shard_groups(DBShardGroupIdentifier="one")["DBShardGroups"][0]
        assert group["Status"] == "modifying"
        assert code(rds.modify_db_shard_group, DBShardGroupIdentifier="one", MaxACU=2048) == \
            "InvalidDBClusterStateFault"
        assert code(rds.delete_db_shard_group, DBShardGroupIdentifier="one") == "InvalidDBShardGroupState"
    finally:
        moto_ext.CONFIG["modify_delay"] = before
    by_cluster = rds.describe_db_shard_groups(Filters=[{"Name": "db-cluster-id", "Values": ["limitless"]}])
    assert [g["DBShardGroupIdentifier"] for g in by_cluster["DBShardGroups"]] == ["one"]
