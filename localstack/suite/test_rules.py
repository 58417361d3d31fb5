"""RDS's rules, each refused as RDS refuses it (the page is cited beside each rule in moto_ext),
through boto3 against moto's RDS with moto_ext loaded. Each test failed on the emulator before its
rule was written."""

from __future__ import annotations

import json

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


def blue_green(rds, source, **kwargs):
    return rds.create_blue_green_deployment(BlueGreenDeploymentName=f"bg-{source.rsplit(':', 1)[-1]}",
                                            Source=source, **kwargs)


def instance_arn(rds, name, **kwargs):
    kwargs.setdefault("DBInstanceClass", "db.t3.micro")
    out = rds.create_db_instance(DBInstanceIdentifier=name, MasterUsername="admin",
                                 MasterUserPassword="hunter2hunter2", AllocatedStorage=20, **kwargs)
    return out["DBInstance"]["DBInstanceArn"]


# blue-green-deployments-creating.html (RDS User Guide), "Preparing for a blue/green deployment":
# RDS for MySQL and MariaDB need automated backups.
@pytest.mark.parametrize("engine,version,target", [("mysql", "8.0.40", "8.0.42"), ("mariadb", "10.11.9", "10.11.10")])
def test_a_blue_green_deployment_of_mysql_or_mariadb_needs_automated_backups(rds, engine, version, target):
    arn = instance_arn(rds, "nobackups", Engine=engine, EngineVersion=version, BackupRetentionPeriod=0)
    error = refused(blue_green, rds=rds, source=arn, TargetEngineVersion=target)
    assert error["Code"] == "SourceDatabaseNotSupportedFault"
    assert "Automated backups" in error["Message"]
    assert not rds.describe_blue_green_deployments()["BlueGreenDeployments"]
    rds.modify_db_instance(DBInstanceIdentifier="nobackups", BackupRetentionPeriod=1, ApplyImmediately=True)
    assert blue_green(rds, arn, TargetEngineVersion=target)["BlueGreenDeployment"]["Status"]


# blue-green-deployments-replication-type.html: a PostgreSQL major upgrade replicates logically, which
# needs rds.logical_replication 1 in a custom DB parameter group (blue-green-deployments-creating.html);
# a minor one replicates physically and needs nothing.
def test_a_postgresql_major_upgrade_blue_green_needs_logical_replication(rds):
    arn = instance_arn(rds, "pg", Engine="postgres", EngineVersion="15.8")
    error = refused(blue_green, rds=rds, source=arn, TargetEngineVersion="16.4")
    assert error["Code"] == "SourceDatabaseNotSupportedFault"
    assert "rds.logical_replication" in error["Message"]
    minor = blue_green(rds, arn, TargetEngineVersion="15.10")["BlueGreenDeployment"]
    rds.delete_blue_green_deployment(BlueGreenDeploymentIdentifier=minor["BlueGreenDeploymentIdentifier"])
    rds.create_db_parameter_group(DBParameterGroupName="logical", DBParameterGroupFamily="postgres15",
                                  Description="logical replication")
    rds.modify_db_parameter_group(DBParameterGroupName="logical", Parameters=[
        {"ParameterName": "rds.logical_replication", "ParameterValue": "1", "ApplyMethod": "pending-reboot"}])
    other = instance_arn(rds, "pg2", Engine="postgres", EngineVersion="15.8", DBParameterGroupName="logical")
    assert blue_green(rds, other, TargetEngineVersion="16.4")["BlueGreenDeployment"]["Status"]


def cluster_group(rds, name, family, parameter, value):
    rds.create_db_cluster_parameter_group(DBClusterParameterGroupName=name, DBParameterGroupFamily=family,
                                          Description=name)
    rds.modify_db_cluster_parameter_group(DBClusterParameterGroupName=name, Parameters=[
        {"ParameterName": parameter, "ParameterValue": value, "ApplyMethod": "pending-reboot"}])


def aurora(rds, name, engine="aurora-mysql", **kwargs):
    out = rds.create_db_cluster(DBClusterIdentifier=name, Engine=engine, MasterUsername="admin",
                                MasterUserPassword="hunter2hunter2", **kwargs)
    rds.create_db_instance(DBInstanceIdentifier=f"{name}-1", DBClusterIdentifier=name, Engine=engine,
                           DBInstanceClass="db.r6g.large")
    return out["DBCluster"]["DBClusterArn"]


# Aurora User Guide, blue-green-deployments-creating.html, "Preparing an Aurora MySQL DB cluster": a
# custom DB cluster parameter group with binlog_format on, the writer in sync with it.
def test_an_aurora_mysql_blue_green_needs_a_custom_cluster_group_with_binlog_format_on_and_in_sync(rds):
    default = aurora(rds, "bgdefault")
    error = refused(blue_green, rds=rds, source=default)
    assert error["Code"] == "SourceClusterNotSupportedFault"
    assert "default DB cluster parameter group" in error["Message"]
    cluster_group(rds, "nobinlog", "aurora-mysql8.0", "time_zone", "UTC")
    off = aurora(rds, "bgoff", DBClusterParameterGroupName="nobinlog")
    assert "binlog_format turned off" in refused(blue_green, rds=rds, source=off)["Message"]
    # Turned on, the writer is pending a reboot until it is rebooted.
    rds.modify_db_cluster_parameter_group(DBClusterParameterGroupName="nobinlog", Parameters=[
        {"ParameterName": "binlog_format", "ParameterValue": "ROW", "ApplyMethod": "pending-reboot"}])
    assert "not in sync" in refused(blue_green, rds=rds, source=off)["Message"]
    rds.reboot_db_instance(DBInstanceIdentifier="bgoff-1")
    assert blue_green(rds, off)["BlueGreenDeployment"]["Status"]
    assert len(rds.describe_blue_green_deployments()["BlueGreenDeployments"]) == 1


# The same page, "Preparing an Aurora PostgreSQL DB cluster": rds.logical_replication on.
def test_an_aurora_postgresql_blue_green_needs_logical_replication(rds):
    cluster_group(rds, "plain", "aurora-postgresql16", "timezone", "UTC")
    plain = aurora(rds, "apg", engine="aurora-postgresql", DBClusterParameterGroupName="plain")
    error = refused(blue_green, rds=rds, source=plain)
    assert error["Code"] == "SourceClusterNotSupportedFault"
    assert "rds.logical_replication turned off" in error["Message"]
    cluster_group(rds, "logical", "aurora-postgresql16", "rds.logical_replication", "1")
    on = aurora(rds, "apg2", engine="aurora-postgresql", DBClusterParameterGroupName="logical")
    assert blue_green(rds, on)["BlueGreenDeployment"]["Status"]


def snapshot_status(rds, name, cluster=False):
    if cluster:
        return rds.describe_db_cluster_snapshots(DBClusterSnapshotIdentifier=name)["DBClusterSnapshots"][0]["Status"]
    return rds.describe_db_snapshots(DBSnapshotIdentifier=name)["DBSnapshots"][0]["Status"]


# API_DeleteDBInstance.html: "If you request a final DB snapshot the status of the Amazon RDS DB
# instance is deleting until the DB snapshot is created"; API_DeleteDBCluster.html (SkipFinalSnapshot):
# "a DB cluster snapshot is created before the DB cluster is deleted". A final snapshot takes time,
# as every snapshot does (API_DBSnapshot.html, Status and PercentProgress).
def test_a_final_snapshot_is_creating_and_the_deletion_waits_for_it(rds, monkeypatch):
    import time

    import moto_ext

    instance_arn(rds, "fin", Engine="mysql", EngineVersion="8.0.42")
    cluster(rds, "finc")
    monkeypatch.setitem(moto_ext.CONFIG, "snapshot_delay", 1.5)
    rds.delete_db_instance(DBInstanceIdentifier="fin", FinalDBSnapshotIdentifier="fin-final")
    rds.delete_db_cluster(DBClusterIdentifier="finc", FinalDBSnapshotIdentifier="finc-final")
    assert snapshot_status(rds, "fin-final") == "creating"
    assert snapshot_status(rds, "finc-final", cluster=True) == "creating"
    assert rds.describe_db_instances(DBInstanceIdentifier="fin")["DBInstances"][0]["DBInstanceStatus"] == "deleting"
    assert rds.describe_db_clusters(DBClusterIdentifier="finc")["DBClusters"][0]["Status"] == "deleting"
    # A snapshot still being taken cannot be restored.
    error = refused(rds.restore_db_instance_from_db_snapshot, DBInstanceIdentifier="back",
                    DBSnapshotIdentifier="fin-final")
    assert error["Code"] == "InvalidDBSnapshotState"
    time.sleep(1.6)
    assert snapshot_status(rds, "fin-final") == "available"
    assert snapshot_status(rds, "finc-final", cluster=True) == "available"
    assert not [d for d in rds.describe_db_instances()["DBInstances"] if d["DBInstanceIdentifier"] == "fin"]
    assert not [c for c in rds.describe_db_clusters()["DBClusters"] if c["DBClusterIdentifier"] == "finc"]


# API_CreateDBInstance.html, Errors (InvalidParameterCombination); what is offered:
# API_DescribeOrderableDBInstanceOptions.html and API_DescribeDBEngineVersions.html.
def test_a_class_or_version_rds_does_not_offer_is_refused_and_the_catalog_answers(rds):
    error = refused(instance_arn, rds=rds, name="noclass", Engine="mysql", EngineVersion="8.0.42",
                    DBInstanceClass="db.t3.nonexistent")
    assert error["Code"] == "InvalidParameterCombination"
    assert "DBInstanceClass=db.t3.nonexistent, Engine=mysql, EngineVersion=8.0.42" in error["Message"]
    error = refused(instance_arn, rds=rds, name="noversion", Engine="mysql", EngineVersion="8.0.99")
    assert (error["Code"], error["Message"]) == ("InvalidParameterCombination", "Cannot find version 8.0.99 for mysql")
    error = refused(rds.create_db_cluster, DBClusterIdentifier="nov", Engine="aurora-mysql", EngineVersion="16.4",
                    MasterUsername="admin", MasterUserPassword="hunter2hunter2")
    assert error["Message"] == "Cannot find version 16.4 for aurora-mysql"
    assert not rds.describe_db_instances()["DBInstances"] and not rds.describe_db_clusters()["DBClusters"]
    # Aurora offers no micro class; a member of a cluster is held to Aurora's classes.
    cluster(rds, "aur")
    error = refused(rds.create_db_instance, DBInstanceIdentifier="aur-1", DBClusterIdentifier="aur",
                    Engine="aurora-mysql", DBInstanceClass="db.t3.micro")
    assert error["Code"] == "InvalidParameterCombination"
    # A major version alone is the newest of it, and the instance reports that full version, as RDS's
    # does (MySQL.Concepts.VersionMgmt.html); naming the major version it runs changes nothing; a
    # class change is held too.
    instance_arn(rds, "major", Engine="mysql", EngineVersion="8.0")
    assert rds.describe_db_instances(DBInstanceIdentifier="major")["DBInstances"][0]["EngineVersion"] == "8.0.43"
    rds.modify_db_instance(DBInstanceIdentifier="major", EngineVersion="8.0", ApplyImmediately=True)
    assert rds.describe_db_instances(DBInstanceIdentifier="major")["DBInstances"][0]["EngineVersion"] == "8.0.43"
    made = rds.create_db_cluster(DBClusterIdentifier="majorc", Engine="aurora-postgresql", EngineVersion="16",
                                 MasterUsername="admin", MasterUserPassword="hunter2hunter2")["DBCluster"]
    assert made["EngineVersion"].startswith("16.") and made["EngineVersion"] != "16"
    error = refused(rds.modify_db_instance, DBInstanceIdentifier="major", DBInstanceClass="db.t3.huge",
                    ApplyImmediately=True)
    assert error["Code"] == "InvalidParameterCombination"
    # What is offered, as RDS answers it.
    versions = rds.describe_db_engine_versions(Engine="mysql", DBParameterGroupFamily="mysql8.0")["DBEngineVersions"]
    assert "8.0.42" in [v["EngineVersion"] for v in versions]
    assert {v["DBParameterGroupFamily"] for v in versions} == {"mysql8.0"}
    assert not rds.describe_db_engine_versions(Engine="aurora-mysql", EngineVersion="16.4")["DBEngineVersions"]
    options = rds.describe_orderable_db_instance_options(Engine="mysql", EngineVersion="8.0.42",
                                                         DBInstanceClass="db.t3.micro")["OrderableDBInstanceOptions"]
    assert options and {o["DBInstanceClass"] for o in options} == {"db.t3.micro"}
    assert not rds.describe_orderable_db_instance_options(
        Engine="aurora-mysql", DBInstanceClass="db.t3.micro")["OrderableDBInstanceOptions"]


# API_CreateDBInstance.html, PreferredMaintenanceWindow: ddd:hh24:mi-ddd:hh24:mi, at least 30 minutes;
# a window may run into the next week, as RDS's own example "Sun:23:45-Mon:00:15" does.
def test_a_maintenance_window_may_run_into_the_next_week_and_is_still_held_to_30_minutes(rds):
    instance_arn(rds, "weekly", Engine="mysql", PreferredMaintenanceWindow="sun:23:45-mon:00:15")
    found = rds.describe_db_instances(DBInstanceIdentifier="weekly")["DBInstances"][0]
    assert found["PreferredMaintenanceWindow"] == "sun:23:45-mon:00:15"
    rds.modify_db_instance(DBInstanceIdentifier="weekly", PreferredMaintenanceWindow="sun:23:08-mon:00:08",
                           ApplyImmediately=True)
    error = refused(rds.modify_db_instance, DBInstanceIdentifier="weekly",
                    PreferredMaintenanceWindow="sun:23:50-mon:00:10", ApplyImmediately=True)
    assert error["Message"] == "The maintenance window must be at least 30 minutes."
    error = refused(rds.modify_db_instance, DBInstanceIdentifier="weekly",
                    PreferredMaintenanceWindow="sun:23:00-tue:00:00", ApplyImmediately=True)
    assert error["Message"] == "Maintenance window must be less than 24 hours."


def gov_snapshot(name):
    east = boto3.client("rds", region_name="us-gov-east-1")
    east.create_db_instance(DBInstanceIdentifier=name, Engine="mysql", DBInstanceClass="db.t3.micro",
                            MasterUsername="admin", MasterUserPassword="hunter2hunter2", AllocatedStorage=20,
                            StorageEncrypted=True)
    return east.create_db_snapshot(DBInstanceIdentifier=name, DBSnapshotIdentifier=f"{name}-s")["DBSnapshot"]["DBSnapshotArn"]


def presigned_copy(arn, target, key, secret):
    """A CopyDBSnapshot in us-gov-west-1 with the PreSignedUrl botocore makes (SourceRegion), signed
    in the source region by these credentials."""
    west = boto3.client("rds", region_name="us-gov-west-1", aws_access_key_id=key, aws_secret_access_key=secret)
    return west.copy_db_snapshot(SourceDBSnapshotIdentifier=arn, TargetDBSnapshotIdentifier=target,
                                 KmsKeyId="alias/aws/rds", SourceRegion="us-gov-east-1")


# API_CopyDBSnapshot.html, PreSignedUrl: "a URL that contains a Signature Version 4 signed request";
# RDS authenticates it: only credentials AWS issued sign it, with their own secret.
def test_a_presigned_url_is_authenticated_by_its_access_keys_own_secret():
    with mock_aws():
        arn = gov_snapshot("gov")
        iam = boto3.client("iam", region_name="us-east-1")
        iam.create_user(UserName="copier")
        # Allowed to copy: a request it signs is held to its policies as any other (access.py).
        iam.put_user_policy(UserName="copier", PolicyName="copy", PolicyDocument=json.dumps(
            {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "rds:*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="copier")["AccessKey"]
        for access_key, secret in ((key["AccessKeyId"], "not-its-secret"), ("AKIANOONEISSUEDTHIS", "anything")):
            error = refused(presigned_copy, arn=arn, target="refused", key=access_key, secret=secret)
            assert (error["Code"], error["Message"]) == ("InvalidParameterValue", "PreSignedUrl could not be authenticated.")
        copied = presigned_copy(arn, "copied", key["AccessKeyId"], key["SecretAccessKey"])["DBSnapshot"]
        assert copied["DBSnapshotIdentifier"] == "copied"
        assert presigned_copy(arn, "copied-test", "test", "test")["DBSnapshot"]["DBSnapshotIdentifier"] == "copied-test"


# IAM User Guide, id_roles_use_permissions-to-switch.html and "Cross-account policy evaluation logic":
# a trust policy that names only the caller's account delegates to the caller's own policies, which
# must allow sts:AssumeRole on the role; one that names the caller itself lets it in alone.
def test_assume_role_needs_the_callers_own_permission_unless_the_trust_policy_names_the_caller():
    import json

    def trust(principal):
        return json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": principal}, "Action": "sts:AssumeRole"}]})

    def role(name):
        return f"arn:aws:iam::123456789012:role/{name}"

    with mock_aws():
        iam = boto3.client("iam", region_name="us-east-1")
        iam.create_user(UserName="op")
        key = iam.create_access_key(UserName="op")["AccessKey"]
        iam.create_role(RoleName="by-account", AssumeRolePolicyDocument=trust("arn:aws:iam::123456789012:root"))
        iam.create_role(RoleName="by-user", AssumeRolePolicyDocument=trust("arn:aws:iam::123456789012:user/op"))
        sts = boto3.client("sts", region_name="us-east-1", aws_access_key_id=key["AccessKeyId"],
                           aws_secret_access_key=key["SecretAccessKey"])
        assert sts.assume_role(RoleArn=role("by-user"), RoleSessionName="op-session")["Credentials"]
        error = refused(sts.assume_role, RoleArn=role("by-account"), RoleSessionName="op-session")
        assert error["Code"] == "AccessDenied"
        assert "user/op is not authorized to perform: sts:AssumeRole" in error["Message"]
        iam.put_user_policy(UserName="op", PolicyName="assume", PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": role("by-account")}]}))
        assert sts.assume_role(RoleArn=role("by-account"), RoleSessionName="op-session")["Credentials"]
        # An explicit Deny of its own wins over the trust policy's Allow.
        iam.put_user_policy(UserName="op", PolicyName="deny", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Action": "sts:*", "Resource": "*"}]}))
        assert refused(sts.assume_role, RoleArn=role("by-account"), RoleSessionName="op-session")["Code"] == "AccessDenied"


# API_CreateGlobalCluster.html, SourceDBClusterIdentifier: an existing DB cluster, by its ARN, in
# whatever region it is (moto looked only in us-east-1, where it keeps global databases).
def test_a_global_database_is_made_of_a_primary_in_any_region(rds):
    sydney = boto3.client("rds", region_name="ap-southeast-2")
    arn = sydney.create_db_cluster(DBClusterIdentifier="syd", Engine="aurora-mysql", MasterUsername="admin",
                                   MasterUserPassword="hunter2hunter2")["DBCluster"]["DBClusterArn"]
    made = sydney.create_global_cluster(GlobalClusterIdentifier="gsyd", SourceDBClusterIdentifier=arn)
    members = made["GlobalCluster"]["GlobalClusterMembers"]
    assert [(m["DBClusterArn"], m["IsWriter"]) for m in members] == [(arn, True)]
