"""Aurora DB clusters as RDS runs them, on moto's own clusters.

moto 5.2.5 makes a cluster ``available`` on the first describe after CreateDBCluster, applies every
ModifyDBCluster at once, deletes at once, and serves DescribeDBClusters in one page. This module
gives clusters the lifecycle instances have in ``__init__.py``, following the Amazon RDS API
Reference:

* CreateDBCluster and RestoreDBClusterFromSnapshot / ToPointInTime -> ``creating`` for
  ``create_delay`` seconds (or until the real server serves), then ``available``
  (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/accessing-monitoring.html#Aurora.Status,
  "Viewing DB cluster status");
* ModifyDBCluster -> ``modifying`` for ``modify_delay`` seconds; ``EngineVersion`` sent without
  ApplyImmediately waits in ``PendingModifiedValues`` (ClusterPendingModifiedValues,
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ClusterPendingModifiedValues.html)
  until an immediate modification or ``POST /_rds_ext/apply-pending?cluster=ID``;
* a ModifyDBCluster or DeleteDBCluster while the cluster is busy is refused with
  ``InvalidDBClusterStateFault`` (API_ModifyDBCluster.html, API_DeleteDBCluster.html, "Errors");
* DeleteDBCluster is refused while a member is not deleting: "Cluster cannot be deleted, it still
  contains DB instances in non-deleting state." (InvalidDBClusterStateFault); then ``deleting`` for
  ``delete_delay`` seconds; its ``FinalDBSnapshotIdentifier`` snapshot is taken at the call;
* DescribeDBClusters pages with ``MaxRecords`` (20 to 100, default 100) and ``Marker``
  (API_DescribeDBClusters.html);
* a member instance (CreateDBInstance with DBClusterIdentifier) takes the cluster-owned settings
  from the cluster: a ModifyDBInstance of a member that sends one is refused with
  ``InvalidParameterCombination``, as RDS refuses them ("The specified DB instance is a member of a
  DB cluster. Modify ... for the DB Cluster using the ModifyDbCluster API"), and a DeleteDBInstance
  of a member with a final snapshot is refused ("FinalDBSnapshotIdentifier can not be specified
  when deleting a clustered instance", API_DeleteDBInstance.html: the setting "doesn't apply to
  Amazon Aurora DB instances");
* a DB subnet group a cluster uses cannot be deleted (InvalidDBSubnetGroupStateFault).

With real engines (``engines.py``), an aurora-mysql cluster is served by MariaDB servers and an
aurora-postgresql one by PostgreSQL servers, with the endpoints of "Amazon Aurora endpoint
connections" (https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Overview.Endpoints.html),
each on an address of its own:

* the cluster's data is on the writer's server, made with the cluster (a cluster with no member
  keeps it); the first member is the writer and its instance endpoint reaches that server;
* every other member is a reader: a server of its own at its own address that replicates the
  writer's and is read-only ("Aurora Replicas ... support only read operations", Aurora.Replication.html),
  ``creating`` until it has the writer's data;
* the cluster endpoint forwards each connection to the current writer ("The cluster endpoint ...
  connects to the current primary DB instance for that DB cluster"); the reader endpoint to a
  reader, one after another ("load-balancing for read-only connections"), or to the writer when
  the cluster has no reader ("If the cluster contains only a primary instance and no Aurora
  Replicas, the reader endpoint connects to the primary instance");
* FailoverDBCluster (API_FailoverDBCluster.html), RebootDBInstance of the writer with
  ForceFailover (API_RebootDBInstance.html), and the deletion of a writer that has readers,
  promote a reader ("Aurora Replica is promoted to primary ... the cluster endpoint ... points to
  the new primary"): the old writer stops taking writes, the reader catches up and takes them, and
  the old writer (when it lives on) replicates the new one.

A cluster snapshot keeps a dump of its writer's database, which a restore loads.
"""

from __future__ import annotations

from typing import Any

from . import endpoints, engines, paging, scope, snapshots

# Cluster settings RDS applies in the maintenance window unless ApplyImmediately, and their names
# in ClusterPendingModifiedValues.
DEFERRABLE = {"engine_version": "EngineVersion"}
CONTROL = {"db_cluster_identifier", "apply_immediately", "allow_major_version_upgrade"}
BUSY = {"creating", "modifying", "deleting", "rebooting", "upgrading", "backing-up"}
# Settings a member instance takes from its cluster, by ModifyDBInstance parameter.
CLUSTER_OWNED = {
    "allocated_storage": "the allocated storage",
    "engine_version": "the DB engine version",
    "master_user_password": "the master user password",
    "backup_retention_period": "the backup retention period",
    "preferred_backup_window": "the preferred backup window",
    "storage_type": "the storage type",
    "iops": "the IOPS",
    "vpc_security_group_ids": "the VPC security groups",
    "deletion_protection": "the deletion protection",
    "copy_tags_to_snapshot": "the copy tags to snapshot setting",
}
RESTORING: dict[str, str] = scope.Scoped()
# A secondary cluster of a global database being created: the writer server of its primary, which
# its own server replicates (set by global_clusters.py around CreateDBCluster).
SECONDARIES: dict[str, Any] = scope.Scoped()
# A cluster with real servers: its writer's server key and each member's (engines.SERVERS keys).
TOPOLOGY: dict[str, dict[str, Any]] = scope.Scoped()
# A cluster's (writer, reader) endpoints.
ENDPOINTS: dict[str, tuple[endpoints.Endpoint, endpoints.Endpoint]] = scope.Scoped()
_TURNS: dict[str, int] = scope.Scoped()


def server_key(cluster_identifier: str) -> str:
    """The key of the server a cluster is made with among the instances': clusters and instances
    have identifiers of their own, which may be equal."""
    return f"cluster-{cluster_identifier}.cluster"


def member_key(instance_identifier: str) -> str:
    return f"member-{instance_identifier}.reader"


def server_of(cluster_identifier: str | None) -> Any:
    """The cluster's writer server: the one with its data."""
    topology = TOPOLOGY.get(cluster_identifier or "")
    return engines.get(topology["primary"]) if topology else None


def reader_of(cluster_identifier: str) -> Any:
    """The next reader a reader-endpoint connection goes to, or the writer when there is none."""
    topology = TOPOLOGY.get(cluster_identifier)
    if topology is None:
        return None
    readers = [engines.get(k) for k in sorted(topology["members"].values()) if k != topology["primary"]]
    readers = [r for r in readers if r is not None and r.ready]
    if not readers:
        return server_of(cluster_identifier)
    turn = _TURNS.get(cluster_identifier, 0)
    _TURNS[cluster_identifier] = turn + 1
    return readers[turn % len(readers)]


def member_server(db: Any) -> Any:
    """The server a member instance's own endpoint reaches."""
    topology = TOPOLOGY.get(getattr(db, "db_cluster_identifier", None) or "")
    key = topology["members"].get(db.db_instance_identifier) if topology else None
    return engines.get(key)


def open_endpoints(identifier: str, port: int) -> None:
    if identifier not in ENDPOINTS:
        ENDPOINTS[identifier] = (
            endpoints.Endpoint(f"{identifier}.cluster", port, lambda: server_of(identifier)),
            endpoints.Endpoint(f"{identifier}.cluster-ro", port, lambda: reader_of(identifier)),
        )


def forget(identifier: str) -> None:
    """A deleted cluster: its endpoints closed, its servers stopped."""
    close_endpoints(identifier)
    topology = TOPOLOGY.pop(identifier, None)
    if topology is not None:
        for key in {topology["primary"], *topology["members"].values()}:
            engines.remove(key)


def close_endpoints(identifier: str) -> None:
    for endpoint in ENDPOINTS.pop(identifier, ()):
        endpoint.close()


def rename(frm: str, to: str, members: dict[str, str]) -> None:
    """A cluster renamed `to` (a blue/green switchover), its members as `members` says: its servers
    go with it under their new keys, and `to`'s endpoints (opened when it has none) reach them, as
    they forward by name."""
    topology = TOPOLOGY.pop(frm, None)
    if topology is None:
        return

    def rekey(key: str) -> str:
        new = key
        if key == server_key(frm):
            new = server_key(to)
        elif key.startswith("member-") and key.endswith(".reader"):
            instance = key[len("member-"):-len(".reader")]
            new = member_key(members.get(instance, instance))
        if new != key:
            engines.rename(key, new)
        return new

    keys = {k: rekey(k) for k in {topology["primary"], *topology["members"].values()}}
    TOPOLOGY[to] = {"primary": keys[topology["primary"]],
                    "members": {members.get(i, i): keys[k] for i, k in topology["members"].items()}}
    server = engines.get(TOPOLOGY[to]["primary"])
    if to not in ENDPOINTS and server is not None:
        open_endpoints(to, server.port)


# How long a failover waits for its target to apply the writer's last writes.
CATCH_UP_SECONDS = 10.0


def fail_over(identifier: str, target: str) -> bool:
    """The writer's role moves to member `target`: the old writer stops taking writes, the new one
    catches up with it, stops replicating and takes writes; the old one (when it lives on)
    replicates the new one. The cluster endpoint follows, as it forwards to the writer.

    An Aurora failover loses no committed write: the replicas share the writer's storage
    volume ("Aurora ... replicas share the same underlying storage", Aurora.Replication.html). A
    target that has not applied the writer's writes within CATCH_UP_SECONDS is not promoted:
    the writer takes writes again and keeps its role, and False is answered."""
    topology = TOPOLOGY.get(identifier)
    if topology is None or target not in topology["members"]:
        return True
    old, new = engines.get(topology["primary"]), engines.get(topology["members"][target])
    if new is None or old is new:
        return True
    if old is not None and old.process is not None:
        old.set_read_only(True)
        if not new.caught_up(old.position(), CATCH_UP_SECONDS):
            old.set_read_only(False)
            return False
    new.promote()
    previous = topology["primary"]
    topology["primary"] = topology["members"][target]
    if old is not None and previous in topology["members"].values():
        old.follow(new)
    elif old is not None:
        engines.remove(previous)
    return True


def install(lock: Any, config: dict[str, float], start_phase: Any, advance_all: Any,
            apply: Any, get_status: Any, set_status: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds import models, responses
    from moto.rds.exceptions import DBClusterNotFoundError, RDSClientError

    Cluster = models.DBCluster
    Backend = models.RDSBackend
    Cluster.status = property(get_status, set_status)

    def pending(self: Any) -> dict[str, Any] | None:
        with lock:
            merged = dict(self.__dict__.get("_ext_pending", {}))
            merged.update(self.__dict__.get("_ext_inflight", {}))
            return {DEFERRABLE[k]: v for k, v in merged.items() if k in DEFERRABLE} or None

    Cluster.pending_modified_values = property(pending)

    orig_backup = Cluster.save_automated_backup

    def save_automated_backup(self: Any) -> None:
        # moto names a new cluster's automated snapshot by the minute and refuses a second of the
        # same name: a cluster restored in the minute its namesake was created (or deleted) would
        # fail to be created. RDS names automated snapshots uniquely; the older one goes here.
        name = f"rds:{self.db_cluster_identifier}-{models.utcnow().strftime('%Y-%m-%d-%H-%M')}"
        self.backend.cluster_snapshots.pop(name, None)
        orig_backup(self)

    Cluster.save_automated_backup = save_automated_backup

    orig_endpoint, orig_reader = Cluster.endpoint, Cluster.reader_endpoint

    def endpoint_of(original: Any, which: int) -> Any:
        def get(self: Any) -> Any:
            if self.status == "creating":
                return None
            endpoints = ENDPOINTS.get(self.db_cluster_identifier)
            return endpoints[which].address if endpoints is not None else original.fget(self)
        return property(get)

    Cluster.endpoint = endpoint_of(orig_endpoint, 0)
    Cluster.reader_endpoint = endpoint_of(orig_reader, 1)

    def busy(identifier: str, status: str) -> Exception:
        return RDSClientError("InvalidDBClusterStateFault",
                              f"DB cluster {identifier} is not in the available state (it is {status}).")

    orig_create = Backend.create_db_cluster
    orig_modify = Backend.modify_db_cluster
    orig_snapshot = Backend.create_db_cluster_snapshot
    orig_restore = Backend.restore_db_cluster_from_snapshot
    orig_pitr = Backend.restore_db_cluster_to_point_in_time

    def create_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        with lock:
            advance_all(self)
            cluster = orig_create(self, kwargs)
            cluster.__dict__["_ext_gone"] = (self.clusters, cluster.db_cluster_identifier)
            password = cluster.__dict__.get("_master_user_password")
            tags = [{"Key": t.get("Key"), "Value": t.get("Value")} for t in cluster.tags or []
                    if hasattr(t, "get")]
            # A Multi-AZ DB cluster (mysql, postgres: multi_az.py) is served as an Aurora one is.
            family = {"aurora-mysql": "mysql", "aurora-postgresql": "postgres",
                      "mysql": "mysql", "postgres": "postgres"}.get(cluster.engine)
            # A restore of a cluster whose server kept a dump is served by a server loaded with it.
            restoring = cluster.db_cluster_identifier in RESTORING
            source = SECONDARIES.get(cluster.db_cluster_identifier)
            if family and source is not None:
                start_engine(self, cluster, family, source.password, source)
            elif family and (engines.wanted(family, tags) or restoring) and password:
                start_engine(self, cluster, family, password)
            elif config["create_delay"] > 0:
                start_phase(cluster, "creating", config["create_delay"])
            return cluster

    def start_engine(backend: Any, cluster: Any, family: str, password: str, source: Any = None) -> None:
        # A server that does not start is shown as instances show theirs ("failed"): RDS has no
        # cluster status for the test bed's own fault.
        on_ready, on_error = engines.callbacks(lock, cluster)

        identifier = cluster.db_cluster_identifier
        try:
            open_endpoints(identifier, cluster.port or engines.default_port(family))
            # A secondary's server replicates its primary's writer, read-only, with its users.
            user = source.user if source is not None else cluster.master_username
            dbname = source.dbname if source is not None else cluster.database_name
            engines.create(server_key(identifier), family, cluster.port, user, password, dbname,
                           on_ready, on_error, RESTORING.pop(identifier, None), source=source)
        except engines.EngineError as e:
            del backend.clusters[identifier]
            forget(identifier)
            raise RDSClientError("InsufficientDBClusterCapacityFault", str(e))
        TOPOLOGY[identifier] = {"primary": server_key(identifier), "members": {}}
        start_phase(cluster, "creating", float("inf"))

    def modify_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        with lock:
            advance_all(self)
            identifier = kwargs["db_cluster_identifier"]
            cluster = self.clusters.get(identifier)
            if cluster is None:
                raise DBClusterNotFoundError(identifier)
            if cluster.status in BUSY:
                raise busy(identifier, cluster.status)
            deferred = {k: kwargs.pop(k) for k in list(kwargs) if k in DEFERRABLE and kwargs[k] is not None}
            immediate = [k for k, v in kwargs.items() if k not in CONTROL and v is not None]
            if kwargs.get("port") is not None:
                kwargs["port"] = int(kwargs["port"])
            renamed = (kwargs.get("new_db_cluster_identifier") or "").lower() or None
            orig_modify(self, kwargs)
            if renamed and renamed != identifier:
                # NewDBClusterIdentifier renames the cluster at once (API_ModifyDBCluster.html): its
                # servers and endpoints go with it, as a switchover's renames do.
                # The old name's endpoints no longer answer.
                self.clusters.pop(identifier, None)
                close_endpoints(identifier)
                rename(identifier, renamed, {})
                identifier = renamed
            cluster = self.clusters[identifier]
            server = server_of(identifier)
            if server is not None:
                if kwargs.get("master_user_password") is not None:
                    server.set_password(kwargs["master_user_password"])
                if kwargs.get("port") is not None:
                    server.set_port(int(kwargs["port"]))
                    for endpoint in ENDPOINTS.get(identifier, ()):
                        endpoint.move(int(kwargs["port"]))
            waiting = cluster.__dict__.setdefault("_ext_pending", {})
            if kwargs.get("apply_immediately"):
                deferred = {**waiting, **deferred}
                waiting.clear()
            else:
                waiting.update(deferred)
                deferred = {}
            if config["modify_delay"] > 0 and (immediate or deferred):
                cluster.__dict__["_ext_inflight"] = deferred
                start_phase(cluster, "modifying", config["modify_delay"])
            else:
                apply(cluster, deferred)
            return cluster

    def delete_db_cluster(self: Any, cluster_identifier: str, snapshot_name: str | None = None) -> Any:
        with lock:
            advance_all(self)
            cluster = self.clusters.get(cluster_identifier)
            if cluster is None:
                raise DBClusterNotFoundError(cluster_identifier)
            if cluster.status in ("deleting", "modifying", "creating"):
                raise busy(cluster_identifier, cluster.status)
            if cluster.deletion_protection:
                raise RDSClientError(
                    "InvalidParameterCombination",
                    "Cannot delete protected Cluster, please disable deletion protection and try again.")
            if any(m.status != "deleting" for m in cluster._members):
                raise RDSClientError(
                    "InvalidDBClusterStateFault",
                    "Cluster cannot be deleted, it still contains DB instances in non-deleting state.")
            if snapshot_name:
                create_db_cluster_snapshot(self, cluster_identifier, snapshot_name)
            if cluster.manage_master_user_password:
                cluster.master_user_secret.delete_secret()
            forget(cluster_identifier)
            # Deleting until its final snapshot is taken (snapshots.final_snapshot_delay).
            delay = config["delete_delay"] + snapshots.final_snapshot_delay(config, self.cluster_snapshots, snapshot_name)
            if delay > 0:
                start_phase(cluster, "deleting", delay)
            else:
                del self.clusters[cluster_identifier]
            return cluster

    def create_db_cluster_snapshot(self: Any, db_cluster_identifier: str, db_cluster_snapshot_identifier: str,
                                   *args: Any, **kwargs: Any) -> Any:
        with lock:
            snapshot = orig_snapshot(self, db_cluster_identifier, db_cluster_snapshot_identifier, *args, **kwargs)
            server = server_of(db_cluster_identifier)
            if server is not None and server.ready:
                server.dump(db_cluster_snapshot_identifier)
            return snapshot

    def restore_db_cluster_from_snapshot(self: Any, from_snapshot_id: str, overrides: dict[str, Any]) -> Any:
        with lock:
            RESTORING[overrides["db_cluster_identifier"].lower()] = from_snapshot_id.split(":cluster-snapshot:")[-1]
            try:
                return orig_restore(self, from_snapshot_id, overrides)
            finally:
                RESTORING.pop(overrides["db_cluster_identifier"].lower(), None)

    def restore_db_cluster_to_point_in_time(self: Any, db_cluster_identifier: str,
                                            source_db_cluster_identifier: str, *args: Any, **kwargs: Any) -> Any:
        # The data of the source as it is now stands for its data at the time asked: the test bed
        # keeps no transaction log.
        with lock:
            server = server_of(source_db_cluster_identifier)
            if server is not None and server.ready:
                dump = f"pitr-{db_cluster_identifier.lower()}"
                server.dump(dump)
                RESTORING[db_cluster_identifier.lower()] = dump
            try:
                return orig_pitr(self, db_cluster_identifier, source_db_cluster_identifier, *args, **kwargs)
            finally:
                RESTORING.pop(db_cluster_identifier.lower(), None)

    orig_modify_instance = Backend.modify_db_instance
    orig_create_instance = Backend.create_db_instance
    orig_delete_instance = Backend.delete_db_instance
    orig_delete_group = Backend.delete_subnet_group

    def modify_db_instance(self: Any, db_instance_identifier: str, db_kwargs: Any) -> Any:
        db = self.databases.get(db_instance_identifier)
        if db is not None and getattr(db, "db_cluster_identifier", None):
            for key, what in CLUSTER_OWNED.items():
                if db_kwargs.get(key) is not None:
                    raise RDSClientError(
                        "InvalidParameterCombination",
                        f"The specified DB instance is a member of a DB cluster. Modify {what} "
                        "for the DB Cluster using the ModifyDbCluster API.")
        return orig_modify_instance(self, db_instance_identifier, db_kwargs)

    def delete_db_instance(self: Any, db_instance_identifier: str, final_db_snapshot_identifier: Any = None,
                           *args: Any, **kwargs: Any) -> Any:
        db = self.databases.get(db_instance_identifier)
        if db is not None and getattr(db, "db_cluster_identifier", None) and final_db_snapshot_identifier:
            raise RDSClientError(
                "InvalidParameterCombination",
                "FinalDBSnapshotIdentifier can not be specified when deleting a clustered instance")
        with lock:
            gone = orig_delete_instance(self, db_instance_identifier, final_db_snapshot_identifier, *args, **kwargs)
            leave(self, gone)
            return gone

    def leave(backend: Any, db: Any) -> None:
        """A member deleted: a reader's server goes; a writer's role goes to a reader (its server
        then goes too), or, with no reader, the cluster keeps the writer's server and data."""
        identifier = getattr(db, "db_cluster_identifier", None)
        topology = TOPOLOGY.get(identifier or "")
        if topology is None or db.db_instance_identifier not in topology["members"]:
            return
        key = topology["members"].pop(db.db_instance_identifier)
        if key != topology["primary"]:
            engines.remove(key)
            return
        cluster = backend.clusters.get(identifier)
        others = [m for m in (cluster._members if cluster else []) if m is not db
                  and m.db_instance_identifier in topology["members"] and m.status != "deleting"]
        if not others:
            return
        target = sorted(others, key=lambda m: (m.promotion_tier, m.db_instance_identifier))[0]
        db.is_cluster_writer = False
        target.is_cluster_writer = True
        fail_over(identifier, target.db_instance_identifier)

    def create_db_instance(self: Any, db_kwargs: dict[str, Any]) -> Any:
        identifier = db_kwargs["db_instance_identifier"]
        cluster_id = (db_kwargs.get("db_cluster_identifier") or "").lower()
        topology = TOPOLOGY.get(cluster_id)
        if topology is None or identifier in self.databases:
            return orig_create_instance(self, db_kwargs)
        with lock:
            has_writer = topology["primary"] in topology["members"].values()
            if has_writer:
                try:
                    engines.reserve(member_key(identifier))
                except engines.EngineError as e:
                    raise RDSClientError("InsufficientDBInstanceCapacity", str(e))
            try:
                db = orig_create_instance(self, db_kwargs)
            finally:
                engines.release(member_key(identifier))
            if not has_writer:
                topology["members"][identifier] = topology["primary"]
                return db
            writer = engines.get(topology["primary"])
            ready, failed = engines.callbacks(lock, db)
            try:
                engines.create(member_key(identifier), writer.family if writer else "mysql", writer.port,
                               writer.user, writer.password, writer.dbname, ready, failed, source=writer)
            except engines.EngineError as e:
                del self.databases[identifier]
                raise RDSClientError("InsufficientDBInstanceCapacity", str(e))
            topology["members"][identifier] = member_key(identifier)
            start_phase(db, "creating", float("inf"))
            return db

    orig_failover = Backend.failover_db_cluster

    def failover_db_cluster(self: Any, db_cluster_identifier: str, target_db_instance_identifier: str | None = None,
                            **_: Any) -> Any:
        with lock:
            advance_all(self)
            found = self.clusters.get(db_cluster_identifier)
            before = found.writer if found is not None else None
            cluster = orig_failover(self, db_cluster_identifier, target_db_instance_identifier)
            writer = cluster.writer
            if writer is not None and not fail_over(cluster.db_cluster_identifier, writer.db_instance_identifier):
                # The target was behind: the writer stays the writer (fail_over).
                for member in cluster._members:
                    member.is_cluster_writer = member is before
            return cluster

    def delete_subnet_group(self: Any, subnet_name: str) -> Any:
        with lock:
            users = sorted(i for i, c in self.clusters.items() if c.db_subnet_group_name == subnet_name)
            if users:
                raise RDSClientError(
                    "InvalidDBSubnetGroupStateFault",
                    f"Cannot delete the subnet group '{subnet_name}' because at least one database "
                    f"cluster: {users[0]} is still using it.")
        return orig_delete_group(self, subnet_name)

    def describe_db_clusters_paged(self: Any) -> Any:
        # MaxRecords and Marker (paging.py). moto's own paginator has no unique attribute for
        # clusters and fails past a page.
        paging.size(self.params)
        with lock:
            advance_all(self.backend)
            _id = self.params.get("DBClusterIdentifier")
            filters = {f["Name"]: f["Values"] for f in self.params.get("Filters", [])}
            clusters = self.backend.describe_db_clusters(db_cluster_identifier=_id, filters=filters)
            clusters = sorted(clusters, key=lambda c: c.db_cluster_identifier)
            return ActionResult(paging.page(self.params, "DBClusters", clusters))

    Backend.create_db_cluster = create_db_cluster
    Backend.modify_db_cluster = modify_db_cluster
    Backend.delete_db_cluster = delete_db_cluster
    orig_delete_call = responses.RDSResponse.delete_db_cluster

    def delete_db_cluster_call(self: Any) -> Any:
        # "If SkipFinalSnapshot is disabled, you must specify a FinalDBSnapshotIdentifier
        # parameter", and "Specifying this parameter and also skipping the creation of a final DB
        # cluster snapshot with the SkipFinalShapshot parameter results in an error"
        # (API_DeleteDBCluster.html). moto took either way.
        skip = str(self.params.get("SkipFinalSnapshot", "false")).lower() == "true"
        final = self.params.get("FinalDBSnapshotIdentifier")
        if not skip and not final:
            raise RDSClientError("InvalidParameterCombination",
                                 "FinalDBSnapshotIdentifier is required unless SkipFinalSnapshot is specified.")
        if skip and final:
            raise RDSClientError("InvalidParameterCombination",
                                 "FinalDBSnapshotIdentifier can not be specified when deleting a cluster "
                                 "with SkipFinalSnapshot enabled.")
        return orig_delete_call(self)

    responses.RDSResponse.delete_db_cluster = delete_db_cluster_call
    Backend.create_db_cluster_snapshot = create_db_cluster_snapshot
    Backend.restore_db_cluster_from_snapshot = restore_db_cluster_from_snapshot
    Backend.restore_db_cluster_to_point_in_time = restore_db_cluster_to_point_in_time
    Backend.modify_db_instance = modify_db_instance
    Backend.delete_db_instance = delete_db_instance
    Backend.create_db_instance = create_db_instance
    Backend.failover_db_cluster = failover_db_cluster
    orig_reboot = responses.RDSResponse.reboot_db_instance

    def reboot_db_instance(self: Any) -> Any:
        # moto reads no ForceFailover; RDS fails a cluster's writer over to a reader with it.
        identifier = self.params.get("DBInstanceIdentifier")
        db = self.backend.databases.get(identifier or "")
        force = str(self.params.get("ForceFailover")).lower() == "true"
        cluster_id = getattr(db, "db_cluster_identifier", None) if db is not None else None
        if force and cluster_id and getattr(db, "is_cluster_writer", False):
            failover_db_cluster(self.backend, cluster_id)
        return orig_reboot(self)

    responses.RDSResponse.reboot_db_instance = reboot_db_instance
    Backend.delete_subnet_group = delete_subnet_group
    responses.RDSResponse.describe_db_clusters = describe_db_clusters_paged

