"""Manual DB snapshots and DB cluster snapshots that take time, as RDS's do (the cluster
snapshots' part is ``install_clusters``).

moto makes a DB snapshot ``available`` the moment CreateDBSnapshot returns. RDS answers with the
snapshot ``creating`` at ``PercentProgress`` 0 and reaches ``available`` at 100 minutes later
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBSnapshot.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBSnapshot.html: Status,
PercentProgress). Here:

* CreateDBSnapshot -> ``creating`` for ``snapshot_delay`` seconds (MOTO_RDS_SNAPSHOT_DELAY, or
  ``POST /_rds_ext/config {"snapshot_delay": 3}``), its PercentProgress rising with the time, then
  ``available`` at 100;
* the final snapshot of a DeleteDBInstance or DeleteDBCluster likewise, and the instance or cluster
  stays ``deleting`` until it is taken: "If you request a final DB snapshot the status of the
  Amazon RDS DB instance is deleting until the DB snapshot is created"
  (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DeleteDBInstance.html); "a DB
  cluster snapshot is created before the DB cluster is deleted"
  (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DeleteDBCluster.html,
  SkipFinalSnapshot). ``final_snapshot_delay`` gives the seconds the deletion waits for it;
* CopyDBSnapshot likewise (``creating`` for ``snapshot_delay`` seconds,
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBSnapshot.html; its source must
  be ``available``, else InvalidDBSnapshotState), and with real
  engines the copy keeps the source's dump, so a restore of the copy has its rows;
* DeleteDBSnapshot of a snapshot that is not ``available`` is refused with
  InvalidDBSnapshotState, as RDS does ("The DB snapshot must be in the available state":
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DeleteDBSnapshot.html);
* RestoreDBInstanceFromDBSnapshot of a snapshot that is not ``available`` is refused the same way
  (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_RestoreDBInstanceFromDBSnapshot.html:
  InvalidDBSnapshotState);
* DescribeDBSnapshots pages with ``MaxRecords`` (20 to 100, default 100) and ``Marker``, as
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeDBSnapshots.html says;
  moto answers every snapshot at once;
* a snapshot shared with an account (ModifyDBSnapshotAttribute ``restore``, moto's) is found by its
  ARN from that account, by DescribeDBSnapshots, RestoreDBInstanceFromDBSnapshot and CopyDBSnapshot
  ("If you are copying from a shared manual DB snapshot, this parameter must be the Amazon Resource
  Name (ARN) of the shared DB snapshot":
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBSnapshot.html), which moto
  only looks for in the caller's own account; one not shared with it is not found
  (DBSnapshotNotFound), as in RDS ("DBSnapshotIdentifier ... If you are restoring from a shared
  manual DB snapshot, the DBSnapshotIdentifier must be the ARN of the shared DB snapshot":
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_RestoreDBInstanceFromDBSnapshot.html,
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ModifyDBSnapshotAttribute.html).
"""

from __future__ import annotations

import os
import shutil
import time
from typing import Any

from . import engines, paging


def _now() -> float:
    return time.monotonic()


def _progress(snapshot: Any) -> tuple[str, int]:
    """The snapshot's state and percent taken, from the time it was asked for."""
    d = snapshot.__dict__
    start, until = d.get("_ext_started"), d.get("_ext_until")
    if start is None or until is None or _now() >= until:
        return d.get("_ext_status", "available"), 100
    return "creating", int(100 * (_now() - start) / max(until - start, 1e-9))


# Snapshots of other accounts a restore under way reads, by name (under the lock).
SHARED: dict[str, Any] = {}


def _foreign(backend: Any, identifier: str | None) -> tuple[str, Any] | None:
    """For the ARN of a snapshot of another account: its name and the snapshot, when it is shared
    with the caller's account (or public); None for anything else."""
    from moto.rds.exceptions import DBSnapshotNotFoundFault
    from moto.rds.models import rds_backends

    if not identifier or not identifier.startswith("arn:") or ":snapshot:" not in identifier:
        return None
    parts = identifier.split(":")
    region, account, name = parts[3], parts[4], parts[-1].lower()
    if account == backend.account_id:
        return None
    other = rds_backends.get(account, {}).get(region) if account in rds_backends else None
    snapshot = getattr(other, "database_snapshots", {}).get(name) if other is not None else None
    allowed = snapshot is not None and (
        backend.account_id in snapshot.attributes["restore"] or "all" in snapshot.attributes["restore"])
    if not allowed:
        raise DBSnapshotNotFoundFault(identifier)
    return name, snapshot


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import DBSnapshot, RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    def get_status(self: Any) -> str:
        return _progress(self)[0]

    def set_status(self: Any, value: str) -> None:
        self.__dict__["_ext_status"] = value

    DBSnapshot.status = property(get_status, set_status)
    DBSnapshot.percent_progress = property(lambda self: _progress(self)[1])

    def available(snapshot: Any, action: str) -> None:
        state = _progress(snapshot)[0]
        if state != "available":
            raise RDSClientError(
                "InvalidDBSnapshotState",
                f"{action}: the DB snapshot {snapshot.db_snapshot_identifier} is {state}; it must be "
                "in the available state.")

    orig_create = Response.create_db_snapshot
    orig_delete = Backend.delete_db_snapshot
    orig_restore = Backend.restore_db_instance_from_db_snapshot

    # The API calls only: a deletion's final snapshot keeps moto's timing.
    create_db_snapshot = _taking(lock, config, orig_create, "DBSnapshotIdentifier",
                                 "database_snapshots")
    copy_db_snapshot_response = _taking(lock, config, Response.copy_db_snapshot,
                                        "TargetDBSnapshotIdentifier", "database_snapshots")
    orig_copy = Backend.copy_db_snapshot

    def copy_db_snapshot(self: Any, source_db_snapshot_identifier: str,
                         target_db_snapshot_identifier: str, *args: Any, **kwargs: Any) -> Any:
        with lock:
            source = source_db_snapshot_identifier.split(":snapshot:")[-1].lower()
            # A snapshot of another account is copied by its ARN when it is shared with this one
            # (moto looks only in the caller's account); the source must be available.
            foreign = _foreign(self, source_db_snapshot_identifier)
            found = foreign[1] if foreign else self.database_snapshots.get(source)
            if found is not None:
                available(found, "CopyDBSnapshot")
            if foreign:
                self.__dict__["get_db_snapshot"] = lambda _identifier: foreign[1]
            try:
                copy = orig_copy(self, source_db_snapshot_identifier,
                                 target_db_snapshot_identifier, *args, **kwargs)
            finally:
                self.__dict__.pop("get_db_snapshot", None)
            _copy_dump(source, target_db_snapshot_identifier)
            return copy

    def delete_db_snapshot(self: Any, db_snapshot_identifier: str) -> Any:
        with lock:
            snapshot = self.database_snapshots.get(db_snapshot_identifier)
            if snapshot is not None:
                available(snapshot, "DeleteDBSnapshot")
            return orig_delete(self, db_snapshot_identifier)

    def restore_db_instance_from_db_snapshot(self: Any, from_snapshot_id: str,
                                             overrides: dict[str, Any]) -> Any:
        with lock:
            foreign = _foreign(self, from_snapshot_id)
            name = from_snapshot_id.split(":snapshot:")[-1].lower()
            snapshot = foreign[1] if foreign else self.database_snapshots.get(name)
            if snapshot is not None:
                available(snapshot, "RestoreDBInstanceFromDBSnapshot")
            if foreign:
                SHARED[name] = snapshot
            try:
                return orig_restore(self, from_snapshot_id, overrides)
            finally:
                SHARED.pop(name, None)

    orig_describe = Backend.describe_db_snapshots

    def describe_db_snapshots(self: Any, db_instance_identifier: Any = None,
                              db_snapshot_identifier: Any = None, *args: Any, **kwargs: Any) -> Any:
        with lock:
            foreign = _foreign(self, db_snapshot_identifier)
            if foreign:
                return [foreign[1]]
            name = (db_snapshot_identifier or "").lower()
            if name in SHARED and name not in self.database_snapshots:
                return [SHARED[name]]
            return orig_describe(self, db_instance_identifier, db_snapshot_identifier, *args, **kwargs)

    Backend.describe_db_snapshots = describe_db_snapshots

    orig_describe_response = Response.describe_db_snapshots

    def describe_db_snapshots_paged(self: Any) -> Any:
        paging.size(self.params)
        with lock:
            result = orig_describe_response(self)
            snapshots = sorted(result.result["DBSnapshots"], key=lambda s: s.db_snapshot_identifier)
            return ActionResult(paging.page(self.params, "DBSnapshots", snapshots))

    Response.describe_db_snapshots = describe_db_snapshots_paged

    Response.create_db_snapshot = create_db_snapshot
    Response.copy_db_snapshot = copy_db_snapshot_response
    Backend.copy_db_snapshot = copy_db_snapshot
    Backend.delete_db_snapshot = delete_db_snapshot
    Backend.restore_db_instance_from_db_snapshot = restore_db_instance_from_db_snapshot
    install_clusters(lock, config)


def start_taking(snapshot: Any, delay: float) -> None:
    """The snapshot is ``creating`` for ``delay`` seconds from now, then ``available``."""
    if delay > 0 and snapshot is not None:
        snapshot.__dict__["_ext_started"] = _now()
        snapshot.__dict__["_ext_until"] = _now() + delay


def final_snapshot_delay(config: dict[str, float], store: dict[str, Any], name: Any) -> float:
    """A deletion's final snapshot (``name`` in the backend's ``store``, just made) is ``creating``
    for ``snapshot_delay`` seconds: the seconds the deletion stays ``deleting`` for it."""
    snapshot = store.get(str(name).lower()) if name else None
    delay = config.get("snapshot_delay", 0.0) if snapshot is not None else 0.0
    start_taking(snapshot, delay)
    return delay


def _taking(lock: Any, config: dict[str, float], orig: Any, key: str, store: str) -> Any:
    """The API call ``orig`` (a create or copy) with the snapshot it makes, named by the parameter
    ``key`` and kept in the backend's ``store``, ``creating`` for ``snapshot_delay`` seconds."""

    def handler(self: Any) -> Any:
        with lock:
            result = orig(self)
            snapshot = getattr(self.backend, store).get(str(self.params[key]).lower())
            start_taking(snapshot, config.get("snapshot_delay", 0.0))
            return result

    return handler


def _copy_dump(source: str, target: str) -> None:
    """With real engines: the copy keeps the source's dump, so a restore of it has the rows."""
    dump = os.path.join(engines.SNAPSHOTS, f"{source.replace(':', '_')}.sql")
    if os.path.exists(dump):
        shutil.copyfile(dump, os.path.join(engines.SNAPSHOTS, f"{target.lower().replace(':', '_')}.sql"))


def install_clusters(lock: Any, config: dict[str, float]) -> None:
    """DB cluster snapshots as RDS takes them, where moto makes them ``available`` at once and
    answers every one in one page (moto's own cluster snapshots, with clusters.py's dumps):

    * CreateDBClusterSnapshot and CopyDBClusterSnapshot -> ``creating`` for ``snapshot_delay``
      seconds, PercentProgress rising, then ``available``
      (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBClusterSnapshot.html:
      Status, PercentProgress), and a deletion's final snapshot likewise (``final_snapshot_delay``);
      the automated snapshots keep moto's timing;
    * a copy's source must be ``available`` (InvalidDBClusterSnapshotStateFault,
      https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CopyDBClusterSnapshot.html),
      and with real engines the copy keeps the source's dump;
    * DeleteDBClusterSnapshot: "The DB cluster snapshot must be in the available state to be
      deleted" (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DeleteDBClusterSnapshot.html),
      else InvalidDBClusterSnapshotStateFault; RestoreDBClusterFromSnapshot likewise
      (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_RestoreDBClusterFromSnapshot.html);
    * DBClusterSnapshot carries DbClusterResourceId, the cluster's (moto leaves it out);
    * DescribeDBClusterSnapshots pages with MaxRecords (20 to 100) and Marker
      (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DescribeDBClusterSnapshots.html).
    """
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import DBClusterSnapshot, RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    def set_status(self: Any, value: str) -> None:
        self.__dict__["_ext_status"] = value

    DBClusterSnapshot.status = property(lambda self: _progress(self)[0], set_status)
    # moto's constructor sets it to 100; the time decides it here.
    DBClusterSnapshot.percent_progress = property(lambda self: _progress(self)[1],
                                                  lambda self, value: None)
    DBClusterSnapshot.db_cluster_resource_id = property(
        lambda self: getattr(self.cluster, "db_cluster_resource_id", None))

    def available(snapshot: Any, action: str) -> None:
        state = _progress(snapshot)[0]
        if state != "available":
            raise RDSClientError(
                "InvalidDBClusterSnapshotStateFault",
                f"{action}: the DB cluster snapshot {snapshot.db_cluster_snapshot_identifier} is "
                f"{state}; it must be in the available state.")

    Response.create_db_cluster_snapshot = _taking(
        lock, config, Response.create_db_cluster_snapshot, "DBClusterSnapshotIdentifier",
        "cluster_snapshots")
    Response.copy_db_cluster_snapshot = _taking(
        lock, config, Response.copy_db_cluster_snapshot, "TargetDBClusterSnapshotIdentifier",
        "cluster_snapshots")

    orig_copy = Backend.copy_db_cluster_snapshot

    def copy_db_cluster_snapshot(self: Any, source_db_cluster_snapshot_identifier: str,
                                 target_db_cluster_snapshot_identifier: str, *args: Any,
                                 **kwargs: Any) -> Any:
        with lock:
            source = self.get_db_cluster_snapshot(source_db_cluster_snapshot_identifier)
            available(source, "CopyDBClusterSnapshot")
            copy = orig_copy(self, source_db_cluster_snapshot_identifier,
                             target_db_cluster_snapshot_identifier, *args, **kwargs)
            _copy_dump(source.db_cluster_snapshot_identifier, target_db_cluster_snapshot_identifier)
            return copy

    orig_delete = Backend.delete_db_cluster_snapshot

    def delete_db_cluster_snapshot(self: Any, db_snapshot_identifier: str) -> Any:
        with lock:
            snapshot = self.cluster_snapshots.get(db_snapshot_identifier)
            if snapshot is not None:
                available(snapshot, "DeleteDBClusterSnapshot")
            return orig_delete(self, db_snapshot_identifier)

    orig_restore = Backend.restore_db_cluster_from_snapshot

    def restore_db_cluster_from_snapshot(self: Any, from_snapshot_id: str,
                                         overrides: dict[str, Any]) -> Any:
        with lock:
            try:
                snapshot = self.get_db_cluster_snapshot(from_snapshot_id)
            except Exception:  # moto's own answer for one it cannot find
                snapshot = None
            if snapshot is not None:
                available(snapshot, "RestoreDBClusterFromSnapshot")
            return orig_restore(self, from_snapshot_id, overrides)

    orig_describe = Response.describe_db_cluster_snapshots

    def describe_db_cluster_snapshots(self: Any) -> Any:
        paging.size(self.params)
        with lock:
            result = orig_describe(self)
            snapshots = sorted(result.result["DBClusterSnapshots"],
                               key=lambda s: s.db_cluster_snapshot_identifier)
            return ActionResult(paging.page(self.params, "DBClusterSnapshots", snapshots))

    Response.describe_db_cluster_snapshots = describe_db_cluster_snapshots
    Backend.copy_db_cluster_snapshot = copy_db_cluster_snapshot
    Backend.delete_db_cluster_snapshot = delete_db_cluster_snapshot
    Backend.restore_db_cluster_from_snapshot = restore_db_cluster_from_snapshot

