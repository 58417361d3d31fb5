"""RestoreDBInstanceFromS3 (moto_ext/s3_import.py; MySQL.Procedural.Importing.html,
API_RestoreDBInstanceFromS3.html): an RDS for MySQL instance made from the SQL backup under a prefix
of a bucket, whose rows its real server has; refused for another engine, a bucket or role that does
not exist, or a prefix with no backup. moto 5.2.5 has no RestoreDBInstanceFromS3."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.exceptions import ClientError

import moto_ext  # noqa: F401  (loads the extension)
from moto_ext import clusters, engines
from test_engines import PASSWORD, REAL, at, available, rds  # noqa: F401  (rds: the fixture)

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "rds.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
BACKUP = b"""CREATE DATABASE IF NOT EXISTS COFFEE;
USE COFFEE;
CREATE TABLE suppliers (name VARCHAR(40));
INSERT INTO suppliers VALUES ('Beans & Co');
"""


@pytest.fixture
def backup(rds):
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="onprem")
    s3.put_object(Bucket="onprem", Key="coffee/2026-12-06/backup.sql", Body=BACKUP)
    s3.put_object(Bucket="onprem", Key="coffee/2026-12-06/README.txt", Body=b"not a backup file")
    role = boto3.client("iam").create_role(RoleName="import", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
    return rds, role


def restore(rds, role, **change):
    params = dict(DBInstanceIdentifier="imported", DBInstanceClass="db.t3.micro", Engine="mysql",
                  AllocatedStorage=20, MasterUsername="admin", MasterUserPassword=PASSWORD,
                  SourceEngine="mysql", SourceEngineVersion="8.0.36", S3BucketName="onprem",
                  S3Prefix="coffee/2026-12-06", S3IngestionRoleArn=role, Tags=REAL)
    params.update(change)
    return rds.restore_db_instance_from_s3(**{k: v for k, v in params.items() if v is not None})


def test_the_backups_rows_are_in_the_new_instance(backup):
    rds, role = backup
    assert restore(rds, role)["DBInstance"]["DBInstanceStatus"] == "creating"
    available(rds, ["imported"])
    with at():
        server = engines.get("imported")
    assert server.query("SELECT name FROM COFFEE.suppliers").strip() == "Beans & Co"


@pytest.mark.parametrize("change, code", [
    (dict(Engine="postgres"), "InvalidParameterValue"),
    (dict(SourceEngine="mariadb"), "InvalidParameterValue"),
    (dict(S3BucketName="elsewhere"), "InvalidS3BucketFault"),
    (dict(S3Prefix="nothing-here"), "InvalidS3BucketFault"),
    (dict(S3IngestionRoleArn="arn:aws:iam::123456789012:role/nobody"), "InvalidParameterValue"),
])
def test_what_rds_refuses_is_refused_and_nothing_is_made(backup, change, code):
    rds, role = backup
    with pytest.raises(ClientError) as e:
        restore(rds, role, **change)
    assert e.value.response["Error"]["Code"] == code
    assert rds.describe_db_instances()["DBInstances"] == []


def test_an_aurora_mysql_cluster_restored_from_s3_serves_the_backups_rows(backup):
    rds, role = backup
    made = rds.restore_db_cluster_from_s3(
        DBClusterIdentifier="imported-aurora", Engine="aurora-mysql", MasterUsername="admin",
        MasterUserPassword=PASSWORD, SourceEngine="mysql", SourceEngineVersion="8.0.36",
        S3BucketName="onprem", S3Prefix="coffee/2026-12-06", S3IngestionRoleArn=role, Tags=REAL)
    assert made["DBCluster"]["DBClusterIdentifier"] == "imported-aurora"
    available(rds, [])
    with at():
        server = clusters.server_of("imported-aurora")
    assert server.query("SELECT name FROM COFFEE.suppliers").strip() == "Beans & Co"
    with pytest.raises(ClientError) as e:
        rds.restore_db_cluster_from_s3(
            DBClusterIdentifier="not-aurora", Engine="mysql", MasterUsername="admin",
            MasterUserPassword=PASSWORD, SourceEngine="mysql", SourceEngineVersion="8.0.36",
            S3BucketName="onprem", S3IngestionRoleArn=role)
    assert e.value.response["Error"]["Code"] == "InvalidParameterValue"
