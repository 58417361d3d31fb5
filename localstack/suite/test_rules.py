"""RDS's rules, each refused as RDS refuses it (the page is cited beside each rule in moto_ext),
through boto3 against moto's RDS with moto_ext loaded. Each test failed on the emulator before its
rule was written."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def cluster(rds, name):
    rds.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-mysql", MasterUsername="admin",
                          MasterUserPassword="hunter2hunter2")
    return name


def refused(call, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["Error"]


# API_DeleteDBCluster.html, SkipFinalSnapshot and FinalDBSnapshotIdentifier.
def test_delete_db_cluster_needs_skip_final_snapshot_or_a_final_snapshot_and_not_both(rds):
    name = cluster(rds, "c1")
    error = refused(rds.delete_db_cluster, DBClusterIdentifier=name)
    assert error["Code"] == "InvalidParameterCombination"
    assert "FinalDBSnapshotIdentifier is required unless SkipFinalSnapshot" in error["Message"]
    error = refused(rds.delete_db_cluster, DBClusterIdentifier=name, SkipFinalSnapshot=True,
                    FinalDBSnapshotIdentifier="final")
    assert error["Code"] == "InvalidParameterCombination"
    # Refused twice, the cluster is still there; either one alone deletes it.
    assert rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"]
    rds.delete_db_cluster(DBClusterIdentifier=name, SkipFinalSnapshot=True)
    other = cluster(rds, "c2")
    rds.delete_db_cluster(DBClusterIdentifier=other, FinalDBSnapshotIdentifier="c2-final")
    assert rds.describe_db_cluster_snapshots(DBClusterSnapshotIdentifier="c2-final")["DBClusterSnapshots"]


# API_DescribeDBClusterEndpoints.html, Errors: only DBClusterNotFoundFault.
def test_describe_db_cluster_endpoints_of_an_unknown_endpoint_lists_nothing(rds):
    cluster(rds, "c3")
    out = rds.describe_db_cluster_endpoints(DBClusterEndpointIdentifier="nothing-here")
    assert out["DBClusterEndpoints"] == []


# API_CreateDBSubnetGroup.html, Errors: InvalidSubnet (moto let EC2's InvalidSubnetID.NotFound through).
def test_a_subnet_group_of_a_subnet_ec2_lacks_is_invalid_subnet(rds):
    error = refused(rds.create_db_subnet_group, DBSubnetGroupName="g", DBSubnetGroupDescription="g",
                    SubnetIds=["subnet-00000000"])
    assert error["Code"] == "InvalidSubnet"
    assert not rds.describe_db_subnet_groups()["DBSubnetGroups"]
