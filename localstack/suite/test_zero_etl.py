"""Zero-ETL integrations (moto_ext/integrations.py; API_CreateIntegration.html,
API_DescribeIntegrations.html, API_ModifyIntegration.html, API_DeleteIntegration.html,
API_Integration.html): made of an Aurora cluster to a Redshift namespace, reported, changed,
tagged and deleted; refused for a bad name, a missing or unsupported
source, a target that is not a namespace, a taken name or pair, and a change while one runs. moto
5.2.5 has no integrations at all (its test_integrations.py is about managed master passwords)."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)

TARGET = "arn:aws:redshift-serverless:us-east-1:123456789012:namespace/6f1b2c3d-4e5f-6789-abcd-ef0123456789"


@pytest.fixture
def rds():
    with mock_aws():
        client = boto3.client("rds", region_name="us-east-1")
        for name, engine in (("coffee", "aurora-mysql"), ("plain", "mysql")):
            extra = {} if engine.startswith("aurora") else dict(
                DBClusterInstanceClass="db.m6gd.large", AllocatedStorage=100, StorageType="io1", Iops=1000)
            client.create_db_cluster(DBClusterIdentifier=name, Engine=engine, MasterUsername="admin",
                                     MasterUserPassword="hunter2hunter2", **extra)
        yield client


def arn(rds, cluster):
    return rds.describe_db_clusters(DBClusterIdentifier=cluster)["DBClusters"][0]["DBClusterArn"]


def code(call, **kwargs):
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["Error"]["Code"]


def test_an_integration_is_made_reported_changed_tagged_and_deleted(rds):
    made = rds.create_integration(IntegrationName="coffee-to-redshift", SourceArn=arn(rds, "coffee"),
                                  TargetArn=TARGET, Tags=[{"Key": "team", "Value": "coffee"}])
    assert made["Status"] in ("creating", "active")
    assert made["DataFilter"] == "include: *.*"
    assert ":integration:" in made["IntegrationArn"]
    one = rds.describe_integrations(IntegrationIdentifier=made["IntegrationArn"])["Integrations"]
    assert [(i["IntegrationName"], i["SourceArn"], i["TargetArn"]) for i in one] == \
        [("coffee-to-redshift", arn(rds, "coffee"), TARGET)]
    rds.modify_integration(IntegrationIdentifier=made["IntegrationArn"], DataFilter="include: COFFEE.*",
                           Description="the suppliers")
    changed = rds.describe_integrations()["Integrations"][0]
    assert (changed["DataFilter"], changed["Description"]) == ("include: COFFEE.*", "the suppliers")
    tags = rds.list_tags_for_resource(ResourceName=made["IntegrationArn"])["TagList"]
    assert tags == [{"Key": "team", "Value": "coffee"}]
    rds.add_tags_to_resource(ResourceName=made["IntegrationArn"], Tags=[{"Key": "env", "Value": "dev"}])
    listed = rds.describe_integrations(IntegrationIdentifier=made["IntegrationArn"])["Integrations"]
    assert listed[0]["Tags"] == [{"Key": "team", "Value": "coffee"}, {"Key": "env", "Value": "dev"}]
    rds.delete_integration(IntegrationIdentifier=made["IntegrationArn"])
    assert code(rds.describe_integrations, IntegrationIdentifier=made["IntegrationArn"]) == \
        "IntegrationNotFoundFault"


@pytest.mark.parametrize("change, expected", [
    (dict(IntegrationName="2fast"), "InvalidParameterValue"),
    (dict(IntegrationName="ends-"), "InvalidParameterValue"),
    (dict(SourceArn="arn:aws:rds:us-east-1:123456789012:cluster:nope"), "DBClusterNotFoundFault"),
    (dict(SourceArn="plain"), "InvalidParameterValue"),
    (dict(TargetArn="arn:aws:redshift:us-east-1:123456789012:cluster:warehouse"), "InvalidParameterValue"),
])
def test_what_rds_refuses_is_refused_and_nothing_is_made(rds, change, expected):
    params = dict(IntegrationName="coffee-to-redshift", SourceArn=arn(rds, "coffee"), TargetArn=TARGET)
    params.update(change)
    if params["SourceArn"] == "plain":
        params["SourceArn"] = arn(rds, "plain")
    assert code(rds.create_integration, **params) == expected
    assert rds.describe_integrations()["Integrations"] == []


def test_a_taken_name_or_pair_and_a_change_while_one_runs_are_refused(rds, monkeypatch):
    source = arn(rds, "coffee")
    made = rds.create_integration(IntegrationName="one", SourceArn=source, TargetArn=TARGET)
    assert code(rds.create_integration, IntegrationName="one", SourceArn=source,
                TargetArn=TARGET + "0") == "IntegrationAlreadyExistsFault"
    assert code(rds.create_integration, IntegrationName="two", SourceArn=source,
                TargetArn=TARGET) == "IntegrationConflictOperationFault"
    moto_ext.CONFIG["modify_delay"], before = 30.0, moto_ext.CONFIG["modify_delay"]
    try:
        rds.modify_integration(IntegrationIdentifier=made["IntegrationArn"], Description="x")
        assert rds.describe_integrations()["Integrations"][0]["Status"] == "modifying"
        assert code(rds.modify_integration, IntegrationIdentifier=made["IntegrationArn"],
                    Description="y") == "InvalidIntegrationStateFault"
        assert code(rds.delete_integration, IntegrationIdentifier=made["IntegrationArn"]) == \
            "InvalidIntegrationStateFault"
    finally:
        moto_ext.CONFIG["modify_delay"] = before


def test_integrations_are_paged(rds):
    source = arn(rds, "coffee")
    for n in range(25):
        rds.create_integration(IntegrationName=f"i{n:02d}", SourceArn=source, TargetArn=f"{TARGET[:-2]}{n:02d}")
    first = rds.describe_integrations(MaxRecords=20)
    rest = rds.describe_integrations(MaxRecords=20, Marker=first["Marker"])
    names = [i["IntegrationName"] for i in first["Integrations"] + rest["Integrations"]]
    assert names == [f"i{n:02d}" for n in range(25)] and "Marker" not in rest
    assert code(rds.describe_integrations, MaxRecords=10) == "InvalidParameterValue"
