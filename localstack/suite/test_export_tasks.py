"""Snapshot exports to S3 (moto_ext/export_tasks.py; USER_ExportSnapshot.html, API_StartExportTask.html,
API_ExportTask.html): refused without the bucket or the role; STARTING, IN_PROGRESS, then COMPLETE
with its export_info file in the bucket; FAILED with its cause when the bucket is gone; made once.
Each test failed on plain moto 5.2.5, whose task is `complete` at once, anywhere."""

from __future__ import annotations

import json
import types

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

import moto_ext  # noqa: F401  (loads the extension)
from moto_ext import CONFIG

TRUST = json.dumps({"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "export.rds.amazonaws.com"}, "Action": "sts:AssumeRole"}]})


@pytest.fixture
def clock(monkeypatch):
    """The export's clock, moved by the test: its progress is read from time.monotonic(), and a
    wall-clock sleep made the IN_PROGRESS check fail under load (the task was COMPLETE)."""
    from moto_ext import export_tasks

    now = [1000.0]
    monkeypatch.setattr(export_tasks, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


@pytest.fixture
def aws(monkeypatch, clock):
    monkeypatch.setitem(CONFIG, "export_delay", 1.0)
    with mock_aws():
        rds = boto3.client("rds", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        role = boto3.client("iam").create_role(RoleName="export", AssumeRolePolicyDocument=TRUST)["Role"]["Arn"]
        s3.create_bucket(Bucket="exports")
        rds.create_db_instance(DBInstanceIdentifier="db", Engine="mysql", DBInstanceClass="db.t3.micro",
                               MasterUsername="admin", MasterUserPassword="hunter2hunter2", AllocatedStorage=20)
        arn = rds.create_db_snapshot(DBInstanceIdentifier="db", DBSnapshotIdentifier="snap")["DBSnapshot"]["DBSnapshotArn"]
        yield rds, s3, role, arn


def start(rds, role, arn, bucket="exports", name="task"):
    return rds.start_export_task(ExportTaskIdentifier=name, SourceArn=arn, S3BucketName=bucket, S3Prefix="out",
                                 IamRoleArn=role, KmsKeyId="arn:aws:kms:us-east-1:123456789012:key/k")


def task(rds, name="task"):
    return rds.describe_export_tasks(ExportTaskIdentifier=name)["ExportTasks"][0]


def test_an_export_starts_runs_and_completes_with_its_summary_in_the_bucket_once(aws, clock):
    rds, s3, role, arn = aws
    assert start(rds, role, arn)["Status"] == "STARTING"
    with pytest.raises(ClientError) as e:
        start(rds, role, arn)
    assert e.value.response["Error"]["Code"] == "ExportTaskAlreadyExists"
    clock[0] += 0.5
    found = task(rds)
    assert found["Status"] == "IN_PROGRESS" and 0 < found["PercentProgress"] < 100, found
    clock[0] += 0.6
    found = task(rds)
    assert (found["Status"], found["PercentProgress"]) == ("COMPLETE", 100)
    body = s3.get_object(Bucket="exports", Key="out/task/export_info_task.json")["Body"].read()
    assert json.loads(body)["sourceArn"] == arn
    with pytest.raises(ClientError) as e:
        rds.cancel_export_task(ExportTaskIdentifier="task")
    assert e.value.response["Error"]["Code"] == "InvalidExportTaskStateFault"


def test_a_missing_bucket_or_role_is_refused_and_a_bucket_gone_fails_the_task(aws, clock):
    rds, s3, role, arn = aws
    for bucket, role_arn, code in (("nowhere", role, "InvalidS3BucketFault"),
                                   ("exports", role.replace("export", "nobody"), "IamRoleNotFound")):
        with pytest.raises(ClientError) as e:
            start(rds, role_arn, arn, bucket=bucket, name="refused")
        assert e.value.response["Error"]["Code"] == code
    s3.create_bucket(Bucket="brief")
    start(rds, role, arn, bucket="brief", name="lost")
    s3.delete_bucket(Bucket="brief")
    clock[0] += 1.1
    found = task(rds, "lost")
    assert found["Status"] == "FAILED" and "brief" in found["FailureCause"], found
