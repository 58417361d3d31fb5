"""Multi-AZ DB clusters (moto_ext/multi_az.py; multi-az-db-clusters-concepts.html,
API_CreateDBCluster.html): RDS makes the writer and two readers itself, in three zones; storage is
io1, io2 or gp3 within the IOPS ratio; no instance is added to one, and its instances go with it.
With real engines, the readers replicate the writer and refuse writes. Each test failed on plain
moto 5.2.5, which made an empty cluster and took any storage."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

import moto_ext  # noqa: F401  (loads the extension)
from moto_ext import clusters, engines
from test_engines import PASSWORD, REAL, at, available, rds  # noqa: F401  (rds: the fixture)

BASE = dict(Engine="mysql", DBClusterInstanceClass="db.m6gd.large", AllocatedStorage=20, StorageType="gp3",
            MasterUsername="admin", MasterUserPassword=PASSWORD)


def code(call):
    with pytest.raises(ClientError) as e:
        call()
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def test_rds_makes_a_writer_and_two_readers_in_three_zones_and_deletes_them_with_the_cluster(rds):
    cluster = rds.create_db_cluster(DBClusterIdentifier="maz", **BASE)["DBCluster"]
    assert cluster["StorageType"] == "gp3"
    members = {m["DBInstanceIdentifier"]: m["IsClusterWriter"] for m in cluster["DBClusterMembers"]}
    assert members == {"maz-instance-1": True, "maz-instance-2": False, "maz-instance-3": False}
    found = {d["DBInstanceIdentifier"]: d for d in rds.describe_db_instances()["DBInstances"]}
    assert sorted(d["AvailabilityZone"] for d in found.values()) == ["us-east-1a", "us-east-1b", "us-east-1c"]
    assert {d["DBInstanceClass"] for d in found.values()} == {"db.m6gd.large"}

    assert code(lambda: rds.create_db_instance(DBInstanceIdentifier="extra", DBClusterIdentifier="maz",
                                               Engine="mysql", DBInstanceClass="db.m6gd.large"))[0] \
        == "InvalidDBClusterStateFault"
    assert code(lambda: rds.delete_db_instance(DBInstanceIdentifier="maz-instance-2"))[0] == "InvalidDBInstanceState"

    rds.delete_db_cluster(DBClusterIdentifier="maz", SkipFinalSnapshot=True)
    assert rds.describe_db_instances()["DBInstances"] == []


@pytest.mark.parametrize("change, refused", [
    (dict(StorageType="gp2"), "InvalidParameterValue"),
    (dict(StorageType="aurora-iopt1"), "InvalidParameterValue"),
    (dict(StorageType="io1", Iops=5000), "InvalidParameterCombination"),  # 250 IOPS a GiB
    (dict(AllocatedStorage=None), "InvalidParameterCombination"),
    (dict(EnableHttpEndpoint=True), "InvalidParameterCombination"),
    (dict(DBClusterIdentifier="m" * 53), "InvalidParameterValue"),
])
def test_what_rds_refuses_of_a_multi_az_db_cluster_is_refused(rds, change, refused):
    params = {"DBClusterIdentifier": "maz", **BASE, **change}
    params = {k: v for k, v in params.items() if v is not None}
    assert code(lambda: rds.create_db_cluster(**params))[0] == refused
    assert rds.describe_db_clusters()["DBClusters"] == []
    assert rds.describe_db_instances()["DBInstances"] == []


def test_storage_and_class_are_changed_within_the_rules(rds):
    rds.create_db_cluster(DBClusterIdentifier="maz", **BASE)
    assert code(lambda: rds.modify_db_cluster(DBClusterIdentifier="maz", StorageType="io1", Iops=2000,
                                              ApplyImmediately=True))[0] == "InvalidParameterCombination"
    rds.modify_db_cluster(DBClusterIdentifier="maz", StorageType="io1", Iops=1000, AllocatedStorage=100,
                          DBClusterInstanceClass="db.r6gd.large", ApplyImmediately=True)
    found = rds.describe_db_clusters(DBClusterIdentifier="maz")["DBClusters"][0]
    assert (found["StorageType"], found["Iops"], found["AllocatedStorage"], found["DBClusterInstanceClass"]) \
        == ("io1", 1000, 100, "db.r6gd.large")
    assert {d["DBInstanceClass"] for d in rds.describe_db_instances()["DBInstances"]} == {"db.r6gd.large"}


def test_the_readers_replicate_the_writer_and_refuse_writes(rds):
    rds.create_db_cluster(DBClusterIdentifier="maz", DatabaseName="app", Tags=REAL, **BASE)
    members = ["maz-instance-1", "maz-instance-2", "maz-instance-3"]
    available(rds, members)
    with at():
        writer = clusters.server_of("maz")
        readers = [engines.get(clusters.member_key(m)) for m in members[1:]]
    writer.query("CREATE TABLE app.orders (id INT PRIMARY KEY); INSERT INTO app.orders VALUES (7);")
    for reader in readers:
        assert reader is not writer
        assert reader.caught_up(writer.position(), 10)
        assert reader.query("SELECT id FROM app.orders").strip() == "7"
        assert reader.query("SELECT @@GLOBAL.read_only").strip() == "1"
