"""IAM roles of a DB instance or cluster (moto_ext/roles.py, API_RemoveRoleFromDBInstance.html,
API_RemoveRoleFromDBCluster.html): added, listed, removed; removing one that is not there is
RoleNotFound; an instance's role needs its feature. Each test failed on plain moto 5.2.5."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)

ROLE = "arn:aws:iam::123456789012:role/rds-s3"


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def test_an_instances_role_is_added_listed_and_removed(rds):
    rds.create_db_instance(DBInstanceIdentifier="db", Engine="postgres", DBInstanceClass="db.t3.micro",
                           AllocatedStorage=20, MasterUsername="admin", MasterUserPassword="hunter2hunter2")
    with pytest.raises(ClientError) as e:
        rds.add_role_to_db_instance(DBInstanceIdentifier="db", RoleArn=ROLE, FeatureName="")
    assert e.value.response["Error"]["Code"] == "InvalidParameterValue"
    rds.add_role_to_db_instance(DBInstanceIdentifier="db", RoleArn=ROLE, FeatureName="s3Import")
    roles = rds.describe_db_instances(DBInstanceIdentifier="db")["DBInstances"][0]["AssociatedRoles"]
    assert [(r["RoleArn"], r["FeatureName"]) for r in roles] == [(ROLE, "s3Import")]
    rds.remove_role_from_db_instance(DBInstanceIdentifier="db", RoleArn=ROLE, FeatureName="s3Import")
    assert rds.describe_db_instances(DBInstanceIdentifier="db")["DBInstances"][0].get("AssociatedRoles", []) == []
    with pytest.raises(ClientError) as e:
        rds.remove_role_from_db_instance(DBInstanceIdentifier="db", RoleArn=ROLE, FeatureName="s3Import")
    assert e.value.response["Error"]["Code"] == "DBInstanceRoleNotFound"


def test_a_clusters_role_is_added_and_removed(rds):
    rds.create_db_cluster(DBClusterIdentifier="c", Engine="aurora-postgresql", MasterUsername="admin",
                          MasterUserPassword="hunter2hunter2")
    rds.add_role_to_db_cluster(DBClusterIdentifier="c", RoleArn=ROLE, FeatureName="s3Import")
    rds.remove_role_from_db_cluster(DBClusterIdentifier="c", RoleArn=ROLE, FeatureName="s3Import")
    assert rds.describe_db_clusters(DBClusterIdentifier="c")["DBClusters"][0].get("AssociatedRoles", []) == []
    with pytest.raises(ClientError) as e:
        rds.remove_role_from_db_cluster(DBClusterIdentifier="c", RoleArn=ROLE)
    assert e.value.response["Error"]["Code"] == "DBClusterRoleNotFound"
