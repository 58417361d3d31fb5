"""access.py: an RDS request signed by an IAM user's own key is held to the user's policies as
AWS evaluates them (resources, aws:RequestTag, aws:ResourceTag, aws:TagKeys; explicit Deny wins),
here with the operator's shipped policy (deploy/iam-policy.json); moto's default key is not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

POLICY = Path(os.environ["MOTO_EXT_DIR"]).parent / "deploy" / "iam-policy.json"
OWNER = [{"Key": "rds.operator.rs/owner-uid", "Value": "uid-1"}]


def _operator_client():
    iam = boto3.client("iam", region_name="us-east-1")
    iam.create_user(UserName="rds-operator")
    iam.put_user_policy(UserName="rds-operator", PolicyName="shipped",
                        PolicyDocument=POLICY.read_text())
    key = iam.create_access_key(UserName="rds-operator")["AccessKey"]
    return boto3.client("rds", region_name="us-east-1", aws_access_key_id=key["AccessKeyId"],
                        aws_secret_access_key=key["SecretAccessKey"])


def _instance(client, identifier, tags):
    return client.create_db_instance(
        DBInstanceIdentifier=identifier, DBInstanceClass="db.t3.micro", Engine="mysql",
        AllocatedStorage=20, MasterUsername="admin", MasterUserPassword="Sup3r-Secret-Passw0rd",
        Tags=tags)


def _refused(call) -> str:
    with pytest.raises(ClientError) as e:
        call()
    assert e.value.response["Error"]["Code"] == "AccessDenied", e.value.response
    return e.value.response["Error"]["Message"]


@mock_aws
def test_the_shipped_policy_allows_the_operators_calls_and_refuses_the_rest():
    operator = _operator_client()
    admin = boto3.client("rds", region_name="us-east-1")
    # Allowed: reading; making with the owner tag; changing, retagging, deleting what carries it.
    operator.describe_db_instances()
    _instance(operator, "ours", OWNER)
    operator.modify_db_instance(DBInstanceIdentifier="ours", AllocatedStorage=30,
                                ApplyImmediately=True)
    arn = operator.describe_db_instances(DBInstanceIdentifier="ours")["DBInstances"][0]["DBInstanceArn"]
    operator.add_tags_to_resource(ResourceName=arn, Tags=[{"Key": "team", "Value": "coffee"}])
    operator.remove_tags_from_resource(ResourceName=arn, TagKeys=["team"])
    # Refused: making without the owner tag; removing it; changing what does not carry it.
    message = _refused(lambda: _instance(operator, "untagged", []))
    assert "rds:CreateDBInstance on resource: arn:aws:rds:us-east-1:123456789012:db:untagged" in message
    assert "user/rds-operator" in message
    _refused(lambda: operator.remove_tags_from_resource(
        ResourceName=arn, TagKeys=["rds.operator.rs/owner-uid"]))
    _instance(admin, "theirs", [])
    _refused(lambda: operator.modify_db_instance(DBInstanceIdentifier="theirs", AllocatedStorage=30,
                                                 ApplyImmediately=True))
    _refused(lambda: operator.delete_db_instance(DBInstanceIdentifier="theirs",
                                                 SkipFinalSnapshot=True))
    # An action the policy never names.
    _refused(lambda: operator.create_db_security_group(DBSecurityGroupName="sg",
                                                       DBSecurityGroupDescription="d"))
    # moto's default key is not held to anything here.
    admin.modify_db_instance(DBInstanceIdentifier="theirs", AllocatedStorage=30, ApplyImmediately=True)
    operator.delete_db_instance(DBInstanceIdentifier="ours", SkipFinalSnapshot=True)
    assert {d["action"] for d in __import__("moto_ext").access.denied()} >= {
        "rds:CreateDBInstance", "rds:RemoveTagsFromResource", "rds:ModifyDBInstance",
        "rds:DeleteDBInstance", "rds:CreateDBSecurityGroup"}


def test_the_condition_operators_read_as_aws_does():
    from moto_ext import access

    tags = {"rds.operator.rs/owner-uid": "u"}
    for condition, request_tags, keys, resource_tags, expected in [
        ({"Null": {"aws:RequestTag/rds.operator.rs/owner-uid": "false"}}, tags, list(tags), {}, True),
        ({"Null": {"aws:RequestTag/rds.operator.rs/owner-uid": "false"}}, {}, [], {}, False),
        ({"Null": {"aws:ResourceTag/rds.operator.rs/owner-uid": "true"}}, {}, [], tags, False),
        ({"ForAnyValue:StringEquals": {"aws:TagKeys": ["a", "b"]}}, {}, ["b", "c"], {}, True),
        ({"ForAnyValue:StringEquals": {"aws:TagKeys": ["a"]}}, {}, [], {}, False),
        ({"ForAllValues:StringEquals": {"aws:TagKeys": ["a", "b"]}}, {}, ["a", "c"], {}, False),
        ({"StringLike": {"aws:ResourceTag/team": "coffee-*"}}, {}, [], {"team": "coffee-x"}, True),
        # Not evaluated here: a key this evaluator does not have, an operator it does not know.
        ({"StringEquals": {"iam:PassedToService": "rds.amazonaws.com"}}, {}, [], {}, None),
        ({"DateGreaterThan": {"aws:CurrentTime": "2026-01-01"}}, {}, [], {}, None),
    ]:
        got = access.condition_holds(condition, request_tags, keys, resource_tags)
        assert got is expected, (condition, got)
    shipped = json.loads(POLICY.read_text())
    # An explicit Deny wins over the Allow that matches the same call.
    assert access.decide([shipped], "rds:RemoveTagsFromResource", "arn:aws:rds:us-east-1:1:db:x",
                         {}, ["rds.operator.rs/owner-uid"], tags) == "Deny"
    assert access.decide([shipped], "rds:RemoveTagsFromResource", "arn:aws:rds:us-east-1:1:db:x",
                         {}, ["team"], tags) == "Allow"


def test_not_action_and_not_resource_name_every_one_but_those_listed():
    """reference_policies_elements_notaction.html, reference_policies_elements_notresource.html:
    a Deny with NotAction denies every action but those listed; an Allow with NotResource allows
    on every resource but those listed; an explicit Deny still wins."""
    from moto_ext import access

    db = "arn:aws:rds:us-east-1:1:db:coffee"
    other = "arn:aws:rds:us-east-1:1:db:payroll"
    allow_all_but_payroll = {"Statement": [{"Effect": "Allow", "Action": "rds:*",
                                            "NotResource": [other]}]}
    deny_all_but_describe = {"Statement": [{"Effect": "Deny", "NotAction": ["rds:Describe*"],
                                            "Resource": "*"}]}
    for documents, action, arn, expected in [
        ([allow_all_but_payroll], "rds:DeleteDBInstance", db, "Allow"),
        ([allow_all_but_payroll], "rds:DeleteDBInstance", other, ""),
        ([allow_all_but_payroll, deny_all_but_describe], "rds:DeleteDBInstance", db, "Deny"),
        ([allow_all_but_payroll, deny_all_but_describe], "rds:DescribeDBInstances", db, "Allow"),
        ([deny_all_but_describe], "rds:DescribeDBInstances", db, ""),
    ]:
        got = access.decide(documents, action, arn, {}, [], {})
        assert got == expected, (action, arn, got)
