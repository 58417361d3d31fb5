"""Multi-AZ DB clusters (engine ``mysql`` or ``postgres``) as RDS runs them, on moto's clusters.

moto 5.2.5 makes a ``mysql`` or ``postgres`` cluster as it makes an Aurora one: empty, with any
class, storage and IOPS, and it takes instances added to it. RDS ("Multi-AZ DB cluster
deployments", multi-az-db-clusters-concepts.html; API_CreateDBCluster.html):

- **Its instances are RDS's.** "If you create a Multi-AZ DB cluster, the request creates a writer
  and two reader DB instances for you, each in a different Availability Zone": here
  ``<cluster>-instance-1`` (the writer), ``-instance-2`` and ``-instance-3``, in the region's
  zones a, b and c, of the cluster's class. CreateDBInstance with the DBClusterIdentifier of a
  Multi-AZ DB cluster is refused (InvalidDBClusterStateFault): RDS adds no instance to one.
  DeleteDBCluster deletes them with the cluster; DeleteDBInstance of one is refused.
- **What CreateDBCluster needs** (each parameter's "Valid for Cluster Type: Multi-AZ DB
  clusters"): AllocatedStorage ("This setting is required to create a Multi-AZ DB cluster");
  StorageType ``io1`` (the default), ``io2`` or ``gp3``; Iops "a multiple between .5 and 50 of the
  storage amount"; an identifier of at most 52 characters ("1 to 52 (for Multi-AZ DB clusters)");
  no Serverless v2, global database or Data API, which are Aurora's. A refusal is
  InvalidParameterValue (a value) or InvalidParameterCombination (a missing or unfitting one),
  RDS's codes; the wording is ours. ModifyDBCluster holds new storage and IOPS to the same rules.
- **What is not checked, and why.** moto's own tests (``tests/test_rds/``, which must pass here)
  make 49 ``postgres`` clusters of class ``db.m1.small`` with 10 GiB of ``io1`` and no Iops, and
  more ``mysql`` and ``postgres`` clusters with no class at all, as stand-ins for any cluster.
  RDS refuses all of them. So a ``mysql`` or ``postgres`` cluster without DBClusterInstanceClass is
  moto's (empty, no instances made), and the class ("Instance class availability for Multi-AZ DB
  clusters") and the Iops that ``io1`` and ``io2`` require are not checked. The operator checks
  these at ``kubectl apply`` (docs/dbcluster.md), so it never sends them.
- **The data path.** With real engines (``engines.py``) the writer's server has the cluster's data,
  and each reader is a server of its own that replicates the writer's and is read-only ("RDS
  replicates data from the writer DB instance to both of the reader DB instances using the DB
  engine's native replication capabilities"; "Reader DB instances ... serve read traffic"): the
  cluster endpoint reaches the writer and the reader endpoint a reader, as ``clusters.py`` serves
  Aurora's. RDS's replication is semisynchronous (one reader acknowledges each commit); here it is
  the engines' asynchronous replication, which the readers apply within moments.
"""

from __future__ import annotations

from typing import Any

ENGINES = ("mysql", "postgres")
STORAGE_TYPES = ("io1", "io2", "gp3")
MEMBERS = 3


def is_multi_az(cluster: Any) -> bool:
    """A mysql or postgres cluster with a DBClusterInstanceClass (a cluster, or CreateDBCluster's
    arguments). One without a class is moto's, as moto's own tests make it (see the module's text)."""
    # moto's request parameters are a mapping, not a dict.
    get = cluster.get if hasattr(cluster, "keys") else lambda k: getattr(cluster, k, None)
    return str(get("engine") or "") in ENGINES and bool(get("db_cluster_instance_class"))


def member_names(identifier: str) -> list[str]:
    return [f"{identifier}-instance-{n}" for n in range(1, MEMBERS + 1)]


def storage_refused(storage_type: str | None, allocated: Any, iops: Any) -> tuple[str, str] | None:
    """The (code, message) RDS answers for this storage of a Multi-AZ DB cluster, or None."""
    kind = storage_type or "io1"
    if kind not in STORAGE_TYPES:
        return ("InvalidParameterValue",
                f"Invalid storage type for a Multi-AZ DB cluster: {kind}. Valid values: io1, io2, gp3.")
    if iops is not None and allocated:
        ratio = int(iops) / int(allocated)
        if ratio < 0.5 or ratio > 50:
            return ("InvalidParameterCombination",
                    f"The IOPS to allocated storage ratio must be between 0.5 and 50 (Iops {iops}, "
                    f"AllocatedStorage {allocated}).")
    return None


def creation_refused(kwargs: dict[str, Any]) -> tuple[str, str] | None:
    """The (code, message) RDS answers to this CreateDBCluster of a Multi-AZ DB cluster, or None."""
    identifier = str(kwargs.get("db_cluster_identifier") or "")
    if len(identifier) > 52:
        return ("InvalidParameterValue",
                f"The DB cluster identifier {identifier} is longer than 52 characters, the most a "
                "Multi-AZ DB cluster's may have.")
    if not kwargs.get("allocated_storage"):
        return ("InvalidParameterCombination",
                "AllocatedStorage is required to create a Multi-AZ DB cluster.")
    for key, what in (("serverless_v2_scaling_configuration", "Serverless v2"),
                      ("global_cluster_identifier", "a global database"),
                      ("enable_http_endpoint", "the Data API")):
        if kwargs.get(key):
            return ("InvalidParameterCombination", f"{what} is for Aurora DB clusters, not Multi-AZ DB clusters.")
    return storage_refused(kwargs.get("storage_type"), kwargs.get("allocated_storage"), kwargs.get("iops"))


def install(lock: Any) -> None:
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import RDSBackend as Backend

    def refuse(found: tuple[str, str] | None) -> None:
        if found is not None:
            raise RDSClientError(*found)

    orig_create = Backend.create_db_cluster
    orig_modify = Backend.modify_db_cluster
    orig_delete = Backend.delete_db_cluster
    orig_create_instance = Backend.create_db_instance
    orig_delete_instance = Backend.delete_db_instance

    def multi_az_cluster(backend: Any, identifier: Any) -> Any:
        cluster = backend.clusters.get(str(identifier or "").lower())
        return cluster if cluster is not None and is_multi_az(cluster) else None

    def create_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        if not is_multi_az(kwargs):
            return orig_create(self, kwargs)
        refuse(creation_refused(kwargs))
        kwargs["storage_type"] = kwargs.get("storage_type") or "io1"
        with lock:
            cluster = orig_create(self, kwargs)
            zones = [f"{self.region_name}{z}" for z in "abc"]
            group = cluster.db_subnet_group_name
            for n, name in enumerate(member_names(cluster.db_cluster_identifier)):
                orig_create_instance(self, {
                    "db_instance_identifier": name, "db_cluster_identifier": cluster.db_cluster_identifier,
                    "engine": cluster.engine, "engine_version": cluster.engine_version,
                    "db_instance_class": cluster.db_cluster_instance_class,
                    "availability_zone": zones[n], "tags": list(cluster.tags or []),
                    # moto names "default" when none was sent, a group it does not have.
                    "db_subnet_group_name": group if group in self.subnet_groups else None,
                })
            return cluster

    def modify_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        cluster = multi_az_cluster(self, kwargs.get("db_cluster_identifier"))
        if cluster is not None and any(kwargs.get(k) is not None for k in ("storage_type", "allocated_storage", "iops")):
            refuse(storage_refused(kwargs.get("storage_type") or cluster.storage_type,
                                   kwargs.get("allocated_storage") or cluster.allocated_storage,
                                   kwargs.get("iops") if kwargs.get("iops") is not None else cluster.iops))
        out = orig_modify(self, kwargs)
        if cluster is not None and kwargs.get("db_cluster_instance_class"):
            for member in cluster._members:
                member.db_instance_class = kwargs["db_cluster_instance_class"]
        return out

    def delete_db_cluster(self: Any, cluster_identifier: str, snapshot_name: str | None = None) -> Any:
        cluster = multi_az_cluster(self, cluster_identifier)
        if cluster is None or cluster.deletion_protection or cluster.status in ("creating", "modifying", "deleting"):
            return orig_delete(self, cluster_identifier, snapshot_name)
        with lock:
            # The cluster's instances go with it: they are RDS's, not the user's to delete.
            for member in list(cluster._members):
                self.databases.pop(member.db_instance_identifier, None)
            return orig_delete(self, cluster_identifier, snapshot_name)

    def create_db_instance(self: Any, db_kwargs: dict[str, Any]) -> Any:
        cluster = multi_az_cluster(self, db_kwargs.get("db_cluster_identifier"))
        if cluster is not None:
            raise RDSClientError(
                "InvalidDBClusterStateFault",
                f"DB cluster {cluster.db_cluster_identifier} is a Multi-AZ DB cluster: RDS makes its writer and "
                "two reader DB instances, and adds no other.")
        return orig_create_instance(self, db_kwargs)

    def delete_db_instance(self: Any, db_instance_identifier: str, *args: Any, **kwargs: Any) -> Any:
        db = self.databases.get(db_instance_identifier)
        cluster = multi_az_cluster(self, getattr(db, "db_cluster_identifier", None))
        if cluster is not None:
            raise RDSClientError(
                "InvalidDBInstanceState",
                f"DB instance {db_instance_identifier} is an instance of Multi-AZ DB cluster "
                f"{cluster.db_cluster_identifier}: it is deleted with the cluster (DeleteDBCluster).")
        return orig_delete_instance(self, db_instance_identifier, *args, **kwargs)

    Backend.create_db_cluster = create_db_cluster
    Backend.modify_db_cluster = modify_db_cluster
    Backend.delete_db_cluster = delete_db_cluster
    Backend.create_db_instance = create_db_instance
    Backend.delete_db_instance = delete_db_instance
