"""The Data API's HTTP endpoint of an Aurora cluster (moto_ext/data_api.py, data-api.html,
API_EnableHttpEndpoint.html): on and off for a provisioned cluster through EnableHttpEndpoint and
DisableHttpEndpoint, and refused ExecuteStatement while off. (ExecuteStatement on a real engine is
the integration test's.) Each test failed on plain moto 5.2.5."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)


@pytest.fixture
def clients():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1"), boto3.client("rds-data", region_name="us-east-1")


def enabled(rds, name):
    return rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]["HttpEndpointEnabled"]


def test_a_provisioned_clusters_endpoint_is_turned_on_and_off(clients):
    rds, _ = clients
    arn = rds.create_db_cluster(DBClusterIdentifier="c", Engine="aurora-postgresql", MasterUsername="admin",
                                MasterUserPassword="hunter2hunter2", EnableHttpEndpoint=True)["DBCluster"]["DBClusterArn"]
    assert enabled(rds, "c") is True, "CreateDBCluster's EnableHttpEndpoint is kept"
    assert rds.disable_http_endpoint(ResourceArn=arn)["HttpEndpointEnabled"] is False
    assert enabled(rds, "c") is False
    assert rds.enable_http_endpoint(ResourceArn=arn)["HttpEndpointEnabled"] is True
    with pytest.raises(ClientError) as e:
        rds.enable_http_endpoint(ResourceArn=arn.replace(":c", ":missing"))
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundFault"


def test_execute_statement_is_refused_while_the_endpoint_is_off(clients):
    rds, data = clients
    arn = rds.create_db_cluster(DBClusterIdentifier="c", Engine="aurora-mysql", MasterUsername="admin",
                                MasterUserPassword="hunter2hunter2")["DBCluster"]["DBClusterArn"]
    with pytest.raises(ClientError) as e:
        data.execute_statement(resourceArn=arn, secretArn="arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
                               sql="SELECT 1")
    assert e.value.response["Error"]["Code"] == "BadRequestException"
    assert "not enabled" in e.value.response["Error"]["Message"]
