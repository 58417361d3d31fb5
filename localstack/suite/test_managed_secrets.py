"""The master user secrets RDS manages (moto_ext/managed_secrets.py), through boto3 against moto with
moto_ext loaded: the secret holds the database's own master user and a generated password, and a
rotation (ModifyDBInstance or ModifyDBCluster RotateMasterUserPassword, or Secrets Manager
RotateSecret) makes a new AWSCURRENT password, the last one AWSPREVIOUS
(rds-secrets-manager.html). Each test but the last failed on plain moto 5.2.5; the last holds the
emulator to the KMS key moto already keeps, which the operator's test relies on."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws


@pytest.fixture
def clients():
    with mock_aws():
        yield (boto3.client("rds", region_name="us-east-1"),
               boto3.client("secretsmanager", region_name="us-east-1"),
               boto3.client("kms", region_name="us-east-1"))


def instance(rds, name, **extra):
    db = rds.create_db_instance(DBInstanceIdentifier=name, Engine="mysql", EngineVersion="8.0.42",
                                DBInstanceClass="db.t3.micro", AllocatedStorage=20,
                                MasterUsername="coffee_admin", ManageMasterUserPassword=True,
                                **extra)["DBInstance"]
    return db["MasterUserSecret"]


def value(sm, arn, stage="AWSCURRENT"):
    return json.loads(sm.get_secret_value(SecretId=arn, VersionStage=stage)["SecretString"])


def test_the_secret_holds_the_master_user_and_a_generated_password(clients):
    rds, sm, _ = clients
    one = value(sm, instance(rds, "one")["SecretArn"])
    two = value(sm, instance(rds, "two")["SecretArn"])
    assert one["username"] == "coffee_admin"
    assert one["password"] != "P@55w0rd!"
    assert one["password"] != two["password"], "a password of each secret's own"
    assert len(one["password"]) >= 8 and not set("/\"@ ") & set(one["password"])


def test_rotate_master_user_password_makes_a_new_current_password(clients):
    rds, sm, _ = clients
    arn = instance(rds, "db")["SecretArn"]
    before = value(sm, arn)
    rds.modify_db_instance(DBInstanceIdentifier="db", RotateMasterUserPassword=True,
                           ApplyImmediately=True)
    after = value(sm, arn)
    assert after["username"] == "coffee_admin"
    assert after["password"] != before["password"]
    assert value(sm, arn, "AWSPREVIOUS") == before


def test_a_cluster_secret_rotates_too(clients):
    rds, sm, _ = clients
    c = rds.create_db_cluster(DBClusterIdentifier="c", Engine="aurora-mysql",
                              MasterUsername="admin", ManageMasterUserPassword=True)["DBCluster"]
    arn = c["MasterUserSecret"]["SecretArn"]
    before = value(sm, arn)
    rds.modify_db_cluster(DBClusterIdentifier="c", RotateMasterUserPassword=True,
                          ApplyImmediately=True)
    assert value(sm, arn)["password"] != before["password"]


def test_rotate_secret_on_the_managed_secret_rotates_it_and_keeps_its_rules(clients):
    rds, sm, _ = clients
    arn = instance(rds, "db")["SecretArn"]
    before = value(sm, arn)
    sm.rotate_secret(SecretId=arn, RotationRules={"AutomaticallyAfterDays": 3},
                     RotateImmediately=False)
    assert value(sm, arn) == before, "RotateImmediately=false only sets the rules"
    described = sm.describe_secret(SecretId=arn)
    assert described["RotationEnabled"] is True
    assert described["RotationRules"]["AutomaticallyAfterDays"] == 3
    sm.rotate_secret(SecretId=arn)
    assert value(sm, arn)["password"] != before["password"]


def test_the_kms_key_is_the_one_sent_at_create(clients):
    rds, sm, kms = clients
    key = kms.create_key(Description="coffee secrets")["KeyMetadata"]
    secret = instance(rds, "db", MasterUserSecretKmsKeyId=key["KeyId"])
    assert secret["KmsKeyId"] == key["Arn"]
    assert sm.describe_secret(SecretId=secret["SecretArn"])["KmsKeyId"] == key["KeyId"]


def test_a_schedule_expression_and_its_window_are_described_as_set(clients):
    rds, sm, _ = clients
    arn = instance(rds, "db")["SecretArn"]
    before = value(sm, arn)
    sm.rotate_secret(SecretId=arn, RotateImmediately=False,
                     RotationRules={"ScheduleExpression": "rate(4 days)", "Duration": "3h"})
    rules = sm.describe_secret(SecretId=arn)["RotationRules"]
    assert rules == {"ScheduleExpression": "rate(4 days)", "Duration": "3h"}
    assert value(sm, arn) == before
