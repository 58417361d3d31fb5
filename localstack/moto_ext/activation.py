"""Stopping and starting DB instances as RDS does ("Stopping an Amazon RDS DB instance
temporarily", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_StopInstance.html;
API_StopDBInstance.html, API_StartDBInstance.html), where moto 5.2.5 flips the status at once and
keeps the database serving:

- **States.** StopDBInstance answers ``stopping``, then the instance is ``stopped``; StartDBInstance
  answers ``starting``, then ``available`` (each for the modify delay). With a real engine, the
  server stops with the instance (its data kept: nothing connects to a stopped database) and
  starts again with it.
- **What cannot be stopped** (the page's Limitations), refused with ``InvalidDBInstanceState``: an
  instance that is not ``available``; a read replica, or an instance with read replicas; a Multi-AZ
  RDS for SQL Server instance; an Aurora instance ("This command doesn't apply to ... Aurora MySQL,
  and Aurora PostgreSQL. For Aurora clusters, use StopDBCluster instead"). moto answered
  InvalidDBClusterStateFault for a replica.
- **What cannot be done to a stopped instance.** StartDBInstance of one that is not ``stopped`` is
  ``InvalidDBInstanceState``; so is ModifyDBInstance of a stopped one ("You can't modify a stopped
  DB instance", the page's Limitations). A stopped instance can be deleted.
- **The 7-day start.** "The instance restarts automatically after 7 days" (API_StopDBInstance.html):
  a stopped instance starts by itself ``auto_start_after`` seconds after it stopped
  (MOTO_RDS_AUTO_START_AFTER, default 604800, or ``/_rds_ext/config?auto_start_after=``).

DB clusters ("Stopping and starting an Amazon Aurora DB cluster",
https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-cluster-stop-start.html;
API_StopDBCluster.html, API_StartDBCluster.html), where moto 5.2.5 flips the cluster's status at
once, answers StartDBCluster with the state ``started`` (RDS has none such) and leaves the members
serving:

- **States.** StopDBCluster's reply still shows the cluster ``available`` (moto's
  test_stop_db_cluster, checked against AWS: "the immediate response show it's still available"),
  then the cluster and each member are ``stopping``, then ``stopped`` (their servers stop, the data
  kept); StartDBCluster answers ``starting``, then ``available``, the members with it. Either
  refuses a cluster in another state with ``InvalidDBClusterStateFault``, in RDS's words.
- **What cannot be stopped** (the page's limitations): a cluster that is part of a global database,
  an Aurora Serverless v1 cluster (EngineMode serverless): ``InvalidDBClusterStateFault``.
- **A stopped cluster** can't be modified ("You can't modify the configuration of an Aurora DB
  cluster, or any of its DB instances, while the cluster is stopped"): ModifyDBCluster and
  ModifyDBInstance of a member are ``InvalidDBClusterStateFault`` / ``InvalidDBInstanceState``.
- **The 7-day start**: "If you don't manually start your DB cluster after it is stopped for seven
  consecutive days, Aurora automatically starts it", after ``auto_start_after`` seconds here.
"""

from __future__ import annotations

import time
from typing import Any

from . import engines

# A stopped instance's status, and the time it starts by itself (time.monotonic()).
STOPPED = "stopped"
# The states in which RDS refuses a modification: stopped, and on the way to or from it.
QUIET = {"stopping", STOPPED, "starting"}


def _start_those_due(lock: Any, found: list[Any], begin_start: Any) -> None:
    """Starts each stopped instance or cluster whose 7 days (``auto_start_after``) are over."""
    now = time.monotonic()
    for db in found:
        starts_at = db.__dict__.get("_ext_starts_at")
        if starts_at is not None and now >= starts_at and db.status == STOPPED:
            with lock:
                begin_start(db)


def _refuse(identifier: str, why: str) -> Exception:
    from moto.rds.exceptions import RDSClientError

    return RDSClientError("InvalidDBInstanceState", f"DB instance {identifier}: {why}")


def _why_not_stoppable(db: Any) -> str | None:
    if db.status != "available":
        return f"the instance is {db.status}, not available"
    if getattr(db, "is_replica", False) or getattr(db, "source_db_identifier", None):
        return "a read replica can't be stopped"
    if getattr(db, "read_replica_db_instance_identifiers", None) or getattr(db, "replicas", None):
        return "an instance with read replicas can't be stopped"
    engine = (db.engine or "").lower()
    if engine.startswith("sqlserver") and getattr(db, "multi_az", False):
        return "a Multi-AZ RDS for SQL Server instance can't be stopped"
    if engine.startswith("aurora") or getattr(db, "db_cluster_identifier", None):
        return "an Aurora instance can't be stopped: stop its cluster (StopDBCluster)"
    return None


def install(lock: Any, config: dict[str, float], start_phase: Any) -> None:
    from moto.rds.models import RDSBackend as Backend

    config.setdefault("auto_start_after", 7 * 24 * 3600.0)

    def server_stop(db: Any) -> None:
        server = engines.get(db.db_instance_identifier)
        if server is not None:
            server.stop(remove=False)

    def server_start(db: Any) -> None:
        server = engines.get(db.db_instance_identifier)
        if server is not None and server.process is None:
            server.start()

    def begin_start(db: Any) -> None:
        server_start(db)
        db.__dict__["_ext_status"] = "available"
        db.__dict__.pop("_ext_starts_at", None)
        start_phase(db, "starting", config["modify_delay"])

    def stop_db_instance(self: Any, db_instance_identifier: str,
                         db_snapshot_identifier: str | None = None) -> Any:
        with lock:
            self._validate_db_identifier(db_instance_identifier)
            db = self.describe_db_instances(db_instance_identifier)[0]
            why = _why_not_stoppable(db)
            if why:
                raise _refuse(db_instance_identifier, why)
            if db_snapshot_identifier:
                self.create_db_snapshot(db_instance_identifier, db_snapshot_identifier)
            server_stop(db)
            db.__dict__["_ext_status"] = STOPPED
            db.__dict__["_ext_starts_at"] = time.monotonic() + config["auto_start_after"]
            start_phase(db, "stopping", config["modify_delay"])
            return db

    def start_db_instance(self: Any, db_instance_identifier: str) -> Any:
        with lock:
            self._validate_db_identifier(db_instance_identifier)
            db = self.describe_db_instances(db_instance_identifier)[0]
            if db.status != STOPPED:
                raise _refuse(db_instance_identifier, f"the instance is {db.status}, not stopped")
            begin_start(db)
            return db

    Backend.stop_db_instance = stop_db_instance
    Backend.start_db_instance = start_db_instance

    orig_modify = Backend.modify_db_instance

    def modify_db_instance(self: Any, db_instance_identifier: str, db_kwargs: dict[str, Any]) -> Any:
        db = self.databases.get(db_instance_identifier)
        if db is not None and db.status in QUIET:
            raise _refuse(db_instance_identifier, f"you can't modify a DB instance that is {db.status}")
        return orig_modify(self, db_instance_identifier, db_kwargs)

    Backend.modify_db_instance = modify_db_instance

    orig_describe = Backend.describe_db_instances

    def describe_db_instances(self: Any, db_instance_identifier: str | None = None,
                              filters: Any = None) -> Any:
        found = orig_describe(self, db_instance_identifier, filters)
        # RDS starts a stopped instance by itself after 7 days (here auto_start_after).
        _start_those_due(lock, found, begin_start)
        return found

    Backend.describe_db_instances = describe_db_instances


def _refuse_cluster(identifier: str, why: str) -> Exception:
    from moto.rds.exceptions import RDSClientError

    return RDSClientError("InvalidDBClusterStateFault", f"DB cluster {identifier}: {why}")


def _wrong_state(cluster: Any, expected: str) -> Exception:
    from moto.rds.exceptions import RDSClientError

    return RDSClientError("InvalidDBClusterStateFault",
                          f"DbCluster {cluster.db_cluster_identifier} is in {cluster.status} state but "
                          f"expected it to be one of {expected}.")


def _why_cluster_not_stoppable(cluster: Any) -> str | None:
    if getattr(cluster, "global_cluster_identifier", None):
        return "a cluster that is part of a global database can't be stopped"
    if getattr(cluster, "engine_mode", "provisioned") == "serverless":
        return "an Aurora Serverless v1 cluster can't be stopped"
    return None


def install_clusters(lock: Any, config: dict[str, float], start_phase: Any, advance_all: Any) -> None:
    import copy

    from moto.rds.exceptions import DBClusterNotFoundError
    from moto.rds.models import RDSBackend as Backend

    from . import clusters

    def servers(identifier: str) -> list[Any]:
        topology = clusters.TOPOLOGY.get(identifier)
        if topology is None:
            return []
        keys = [topology["primary"], *topology["members"].values()]
        return [s for s in (engines.get(k) for k in keys) if s is not None]

    def begin_start(cluster: Any) -> None:
        for server in servers(cluster.db_cluster_identifier):
            if server.process is None:
                server.start()
        for db in (cluster, *cluster.members):
            db.__dict__["_ext_status"] = "available"
            db.__dict__.pop("_ext_starts_at", None)
            start_phase(db, "starting", config["modify_delay"])

    def find(backend: Any, identifier: str) -> Any:
        cluster = backend.clusters.get(identifier)
        if cluster is None:
            raise DBClusterNotFoundError(identifier)
        return cluster

    def stop_db_cluster(self: Any, cluster_identifier: str) -> Any:
        with lock:
            advance_all(self)
            cluster = find(self, cluster_identifier)
            if cluster.status != "available":
                raise _wrong_state(cluster, "available")
            why = _why_cluster_not_stoppable(cluster)
            if why:
                raise _refuse_cluster(cluster_identifier, why)
            reply = copy.deepcopy(cluster)
            for server in servers(cluster_identifier):
                server.stop(remove=False)
            for db in (cluster, *cluster.members):
                db.__dict__["_ext_status"] = STOPPED
                start_phase(db, "stopping", config["modify_delay"])
            cluster.__dict__["_ext_starts_at"] = time.monotonic() + config["auto_start_after"]
            return reply

    def start_db_cluster(self: Any, cluster_identifier: str) -> Any:
        with lock:
            advance_all(self)
            cluster = find(self, cluster_identifier)
            if cluster.status != STOPPED:
                raise _wrong_state(cluster, "stopped,inaccessible-encryption-credentials-recoverable")
            begin_start(cluster)
            return cluster

    Backend.stop_db_cluster = stop_db_cluster
    Backend.start_db_cluster = start_db_cluster

    orig_modify_cluster = Backend.modify_db_cluster

    def modify_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        cluster = self.clusters.get(kwargs.get("db_cluster_identifier"))
        if cluster is not None and cluster.status in QUIET:
            raise _refuse_cluster(cluster.db_cluster_identifier,
                                  f"you can't modify a DB cluster that is {cluster.status}")
        return orig_modify_cluster(self, kwargs)

    Backend.modify_db_cluster = modify_db_cluster

    orig_describe = Backend.describe_db_clusters

    def describe_db_clusters(self: Any, db_cluster_identifier: str | None = None,
                             filters: Any = None) -> Any:
        found = orig_describe(self, db_cluster_identifier, filters)
        # Aurora starts a stopped cluster by itself after 7 days (here auto_start_after).
        _start_those_due(lock, found, begin_start)
        return found

    Backend.describe_db_clusters = describe_db_clusters
