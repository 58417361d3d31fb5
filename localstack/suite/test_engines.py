"""RDS's rules that only real database servers can show (moto_ext/engines.py: MariaDB and PostgreSQL
behind moto's instances and clusters), through boto3 against moto's RDS with moto_ext loaded, in
process. Each test failed on the emulator before its rule was written."""

from __future__ import annotations

import json
import os
import subprocess
import time

import boto3
import pytest
from moto import mock_aws

import moto_ext
from moto_ext import clusters, engines, scope

REAL = [{"Key": engines.TAG, "Value": "true"}]
ACCOUNT = "123456789012"


def at(region="us-east-1"):
    """The emulator's tables, as a request in this region of moto's default account sees them
    (identifiers are unique per account and region: moto_ext/scope.py)."""
    return scope.within(ACCOUNT, region)
PASSWORD = "hunter2hunter2"


@pytest.fixture
def rds():
    with mock_aws():
        try:
            yield boto3.client("rds", region_name="us-east-1")
        finally:
            for identifier in list(clusters.TOPOLOGY):
                clusters.forget(identifier)
            engines.stop_all()


def available(rds, instances, timeout=120):
    """Waits until the instances, and every cluster of the region (whose own server serves once
    the cluster is available), are available."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = {d["DBInstanceIdentifier"]: d["DBInstanceStatus"]
                 for d in rds.describe_db_instances()["DBInstances"]}
        states = [found.get(i) for i in instances]
        states += [c["Status"] for c in rds.describe_db_clusters()["DBClusters"]]
        if all(s == "available" for s in states):
            return
        assert "failed" not in states, (found, states)
        time.sleep(0.5)
    raise AssertionError(f"{instances} not available within {timeout} s")


def aurora_mysql(rds, name, readers):
    rds.create_db_cluster(DBClusterIdentifier=name, Engine="aurora-mysql", MasterUsername="admin",
                          MasterUserPassword=PASSWORD, DatabaseName="app", Tags=REAL)
    members = [f"{name}-{n}" for n in range(readers + 1)]
    for member in members:
        rds.create_db_instance(DBInstanceIdentifier=member, DBClusterIdentifier=name, Engine="aurora-mysql",
                               DBInstanceClass="db.r6g.large")
    available(rds, members)
    return members


def writer_of(rds, name):
    members = rds.describe_db_clusters(DBClusterIdentifier=name)["DBClusters"][0]["DBClusterMembers"]
    return [m["DBInstanceIdentifier"] for m in members if m["IsClusterWriter"]]


# An Aurora failover loses no committed write: Aurora's replicas share the writer's storage volume
# (Aurora.Replication.html), so the new writer has every write the old one acknowledged. Here a
# reader that is kept from applying them (its SQL thread stopped) is not promoted: the writer keeps
# its role and takes writes again (clusters.fail_over). Once it catches up, the failover goes.
def test_an_aurora_failover_to_a_reader_kept_behind_does_not_promote_it_and_loses_no_write(rds, monkeypatch):
    writer, reader = aurora_mysql(rds, "fo", readers=1)
    monkeypatch.setattr(clusters, "CATCH_UP_SECONDS", 1.0)
    with at():
        primary = clusters.server_of("fo")
        behind = engines.get(clusters.member_key(reader))
    primary.query("CREATE TABLE app.orders (id INT PRIMARY KEY); INSERT INTO app.orders VALUES (1);")
    assert behind.caught_up(primary.position(), 10)
    behind.query("STOP SLAVE SQL_THREAD;")
    primary.query("INSERT INTO app.orders VALUES (2);")

    rds.failover_db_cluster(DBClusterIdentifier="fo", TargetDBInstanceIdentifier=reader)

    assert writer_of(rds, "fo") == [writer]
    with at():
        assert clusters.server_of("fo") is primary
    # The writer takes writes again, with every row; the reader is still a reader.
    assert primary.query("SELECT @@GLOBAL.read_only").strip() == "0"
    primary.query("INSERT INTO app.orders VALUES (3);")
    assert primary.query("SELECT COUNT(*) FROM app.orders").strip() == "3"
    assert behind.query("SELECT @@GLOBAL.read_only").strip() == "1"

    # Caught up, the same failover promotes it, with every row.
    behind.query("START SLAVE SQL_THREAD;")
    available(rds, [writer, reader])
    rds.failover_db_cluster(DBClusterIdentifier="fo", TargetDBInstanceIdentifier=reader)
    assert writer_of(rds, "fo") == [reader]
    with at():
        assert clusters.server_of("fo") is behind
    assert behind.query("SELECT COUNT(*) FROM app.orders").strip() == "3"
    assert behind.query("SELECT @@GLOBAL.read_only").strip() == "0"


def global_available(rds, name, timeout=30):
    deadline = time.monotonic() + timeout
    while rds.describe_global_clusters(GlobalClusterIdentifier=name)["GlobalClusters"][0]["Status"] != "available":
        assert time.monotonic() < deadline, f"{name} not available within {timeout} s"
        time.sleep(0.2)


def global_members(rds, name):
    found = rds.describe_global_clusters(GlobalClusterIdentifier=name)["GlobalClusters"][0]
    return {m["DBClusterArn"].rsplit(":", 1)[-1]: m["IsWriter"] for m in found["GlobalClusterMembers"]}


# A global switchover loses no write: Aurora "waits for the secondary DB cluster to be fully
# synchronized with the primary" before it promotes it (aurora-global-database-disaster-recovery.html,
# "switchover"). A secondary kept from applying the primary's writes is not promoted: FailoverState
# is cancelling ("returning to their previous states", API_FailoverState.html), the primary takes
# writes again, and the roles are as they were.
def test_a_global_switchover_to_a_secondary_kept_behind_does_not_promote_it_and_loses_no_write(rds, monkeypatch):
    aurora_mysql(rds, "gp", readers=0)
    rds.create_global_cluster(GlobalClusterIdentifier="g",
                              SourceDBClusterIdentifier=rds.describe_db_clusters(
                                  DBClusterIdentifier="gp")["DBClusters"][0]["DBClusterArn"])
    west = boto3.client("rds", region_name="us-west-2")
    west.create_db_cluster(DBClusterIdentifier="gs", Engine="aurora-mysql", GlobalClusterIdentifier="g")
    west.create_db_instance(DBInstanceIdentifier="gs-0", DBClusterIdentifier="gs", Engine="aurora-mysql",
                            DBInstanceClass="db.r6g.large")
    available(west, ["gs-0"])
    monkeypatch.setattr(clusters, "CATCH_UP_SECONDS", 1.0)
    # The global database is switching-over for a moment, showing FailoverState.
    monkeypatch.setitem(moto_ext.CONFIG, "modify_delay", 1.0)
    with at():
        primary = clusters.server_of("gp")
    with at("us-west-2"):
        secondary = clusters.server_of("gs")
    primary.query("CREATE TABLE app.orders (id INT PRIMARY KEY); INSERT INTO app.orders VALUES (1);")
    assert secondary.caught_up(primary.position(), 10)
    secondary.query("STOP SLAVE SQL_THREAD;")
    primary.query("INSERT INTO app.orders VALUES (2);")
    target = west.describe_db_clusters(DBClusterIdentifier="gs")["DBClusters"][0]["DBClusterArn"]

    out = rds.switchover_global_cluster(GlobalClusterIdentifier="g", TargetDbClusterIdentifier=target)

    assert out["GlobalCluster"]["FailoverState"]["Status"] == "cancelling"
    global_available(rds, "g")
    assert global_members(rds, "g") == {"gp": True, "gs": False}
    assert primary.query("SELECT @@GLOBAL.read_only").strip() == "0"
    primary.query("INSERT INTO app.orders VALUES (3);")
    assert primary.query("SELECT COUNT(*) FROM app.orders").strip() == "3"
    assert secondary.query("SELECT @@GLOBAL.read_only").strip() == "1"

    # Caught up, the same switchover moves the writer, with every row.
    secondary.query("START SLAVE SQL_THREAD;")
    out = rds.switchover_global_cluster(GlobalClusterIdentifier="g", TargetDbClusterIdentifier=target)
    assert out["GlobalCluster"]["FailoverState"]["Status"] == "failing-over"
    global_available(rds, "g")
    assert global_members(rds, "g") == {"gp": False, "gs": True}
    assert secondary.query("SELECT COUNT(*) FROM app.orders").strip() == "3"
    assert secondary.query("SELECT @@GLOBAL.read_only").strip() == "0"


def psql(server, user, password, sql, dbname="postgres"):
    """One statement as a client over the network, as an app logs in."""
    done = subprocess.run([f"{engines.PG_BIN}/psql", "-h", server.address, "-p", str(server.port), "-U", user,
                           "-d", dbname, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                          capture_output=True, env={**os.environ, "PGPASSWORD": password}, timeout=30)
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace").strip()


# The master user of RDS for PostgreSQL is "LOGIN NOSUPERUSER INHERIT CREATEDB CREATEROLE" and granted
# rds_superuser (Appendix.PostgreSQL.CommonDBATasks.Roles.rds_superuser.html): it makes databases
# and roles, and ends other sessions, but what only a superuser may do is refused.
def postgres(rds, name):
    """An RDS for PostgreSQL instance on a real server, available: its server."""
    rds.create_db_instance(DBInstanceIdentifier=name, Engine="postgres", DBInstanceClass="db.t3.micro",
                           MasterUsername="postgres", MasterUserPassword=PASSWORD, DBName="app",
                           AllocatedStorage=20, Tags=REAL)
    available(rds, [name])
    with at():
        return engines.get(name)


def test_the_postgresql_master_user_is_rds_superuser_and_no_superuser(rds):
    server = postgres(rds, "pg")

    def run(sql, dbname="postgres"):
        return psql(server, "postgres", PASSWORD, sql, dbname)

    assert run("SELECT rolsuper FROM pg_roles WHERE rolname = current_user") == (0, "f")
    assert run("SELECT pg_has_role('rds_superuser', 'member')") == (0, "t")
    for refused in ("ALTER SYSTEM SET work_mem = '8MB'",
                    "COPY (SELECT 1) TO PROGRAM 'true'",
                    # C is an untrusted language.
                    "CREATE FUNCTION f() RETURNS int LANGUAGE c AS 'libc', 'abs'"):
        code, out = run(refused)
        assert code != 0, f"{refused} passed: {out}"
        assert "permission denied" in out or "must be superuser" in out, out
    assert run("CREATE ROLE reporting LOGIN PASSWORD 'x'")[0] == 0
    assert run("GRANT rds_replication TO reporting")[0] == 0
    assert run("CREATE DATABASE second")[0] == 0
    assert run("CREATE TABLE orders (id INT PRIMARY KEY); INSERT INTO orders VALUES (1)", "app")[0] == 0
    # The server's own superuser is not one a client can log in as.
    assert psql(server, engines.PG_ADMIN, "", "SELECT 1")[0] != 0


# A proxy's endpoint is fixed when it is made (API_DBProxy.html, Endpoint): registering a target
# behind it does not change it, and connections through it reach the target once it is registered
# and the proxy's IAM role may read its secret; with RequireTLS, only connections that ask for TLS.
def test_a_proxy_endpoint_is_fixed_at_creation_needs_its_role_and_requires_tls_once_asked(rds):
    ec2 = boto3.client("ec2", region_name="us-east-1")
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{n}.0/24", AvailabilityZone=f"us-east-1{z}")
               ["Subnet"]["SubnetId"] for n, z in ((1, "a"), (2, "b"))]
    secret = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
        Name="px", SecretString='{"username": "admin", "password": "%s"}' % PASSWORD)["ARN"]
    role = "arn:aws:iam::123456789012:role/px"
    made = rds.create_db_proxy(DBProxyName="px", EngineFamily="MYSQL", RoleArn=role,
                               Auth=[{"SecretArn": secret, "IAMAuth": "DISABLED"}], VpcSubnetIds=subnets)["DBProxy"]
    endpoint = made["Endpoint"]
    assert endpoint
    rds.create_db_instance(DBInstanceIdentifier="pxdb", Engine="mysql", EngineVersion="8.0.42",
                           DBInstanceClass="db.t3.micro", MasterUsername="admin", MasterUserPassword=PASSWORD,
                           AllocatedStorage=20, Tags=REAL)
    available(rds, ["pxdb"])
    rds.register_db_proxy_targets(DBProxyName="px", DBInstanceIdentifiers=["pxdb"])
    assert rds.describe_db_proxies(DBProxyName="px")["DBProxies"][0]["Endpoint"] == endpoint
    # Its RoleArn names no role yet: the proxy cannot read its secret (rds-proxy.troubleshooting.html).
    health = rds.describe_db_proxy_targets(DBProxyName="px")["Targets"][0]["TargetHealth"]
    assert (health["State"], health["Reason"]) == ("UNAVAILABLE", "AUTH_FAILURE"), health
    assert f'The IAM role "{role}" does not exist' in health["Description"]
    assert select_one(endpoint).returncode != 0
    # The role, trusting rds.amazonaws.com, allowed to read the secret (rds-proxy-iam-setup.html).
    iam = boto3.client("iam", region_name="us-east-1")
    iam.create_role(RoleName="px", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "rds.amazonaws.com"}, "Action": "sts:AssumeRole"}]}))
    time.sleep(2.1)  # the target's health is looked at again every 2 s
    health = rds.describe_db_proxy_targets(DBProxyName="px")["Targets"][0]["TargetHealth"]
    assert "is not authorized to read the AWS Secrets Manager secret" in health["Description"], health
    iam.put_role_policy(RoleName="px", PolicyName="secret", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": secret}]}))
    time.sleep(2.1)
    assert rds.describe_db_proxy_targets(DBProxyName="px")["Targets"][0]["TargetHealth"]["State"] == "AVAILABLE"
    assert select_one(endpoint).stdout.strip() == "1"
    # RequireTLS (API_ModifyDBProxy.html): a connection without TLS is refused, one with it served.
    rds.modify_db_proxy(DBProxyName="px", RequireTLS=True)
    # (this client asks for TLS unless told not to)
    plain = select_one(endpoint, "--skip-ssl")
    assert plain.returncode != 0 and "requires TLS" in plain.stderr, plain
    assert select_one(endpoint, "--ssl").stdout.strip() == "1"
    rds.delete_db_proxy(DBProxyName="px")


def select_one(host, *flags):
    return subprocess.run(["mariadb", "--no-defaults", *flags, "-h", host, "-u", "admin", "-N", "-e", "SELECT 1"],
                          env={**os.environ, "MYSQL_PWD": PASSWORD}, capture_output=True, text=True, timeout=30)


# Identifiers are unique per account and region ("unique for each AWS account and AWS Region",
# API_CreateDBInstance.html and API_CreateDBCluster.html): a global database's secondary commonly
# has its primary's identifier, its member too. Each has a server of its own, the secondary's
# replicating the primary's, and each region's cluster endpoint reaches its own.
def test_a_secondary_with_its_primarys_identifiers_in_another_region_has_servers_of_its_own(rds):
    aurora_mysql(rds, "same", readers=0)
    arn = rds.describe_db_clusters(DBClusterIdentifier="same")["DBClusters"][0]["DBClusterArn"]
    rds.create_global_cluster(GlobalClusterIdentifier="g2", SourceDBClusterIdentifier=arn)
    west = boto3.client("rds", region_name="us-west-2")
    west.create_db_cluster(DBClusterIdentifier="same", Engine="aurora-mysql", GlobalClusterIdentifier="g2")
    west.create_db_instance(DBInstanceIdentifier="same-0", DBClusterIdentifier="same", Engine="aurora-mysql",
                            DBInstanceClass="db.r6g.large")
    available(west, ["same-0"])
    with at():
        primary, primary_member = clusters.server_of("same"), clusters.member_server(
            type("M", (), {"db_cluster_identifier": "same", "db_instance_identifier": "same-0"})())
    with at("us-west-2"):
        secondary = clusters.server_of("same")
    assert primary is not None and secondary is not None and primary is not secondary
    assert primary_member is not None
    primary.query("CREATE TABLE app.t (id INT PRIMARY KEY); INSERT INTO app.t VALUES (1);")
    assert secondary.caught_up(primary.position(), 10)
    assert secondary.query("SELECT COUNT(*) FROM app.t").strip() == "1"
    east = rds.describe_db_clusters(DBClusterIdentifier="same")["DBClusters"][0]["Endpoint"]
    there = west.describe_db_clusters(DBClusterIdentifier="same")["DBClusters"][0]["Endpoint"]
    assert east != there
    assert rds.describe_db_instances(DBInstanceIdentifier="same-0")["DBInstances"][0]["DBInstanceStatus"] == "available"


def test_a_server_is_not_given_an_address_something_still_listens_on(rds):
    """A server whose process outlived its registry entry, or another test bed's on this host's
    network, still listens on its address: a new server is given another one and serves, where it
    failed at start with "could not bind IPv4 address ...: Address already in use" (found on a
    fresh machine's make test; moto_ext/engines.py _address)."""
    import socket

    with at():
        taken = [s.address for s in engines.SERVERS.values()]
    first = next(f"{engines.NETWORK}.{n}" for n in range(2, 255) if f"{engines.NETWORK}.{n}" not in taken)
    busy = socket.create_server((first, 5432))
    try:
        server = postgres(rds, "pgb")
        assert server.address != first
        assert psql(server, "postgres", PASSWORD, "SELECT 1") == (0, "1")
    finally:
        busy.close()
