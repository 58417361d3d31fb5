"""Manual DB snapshots that take time, as RDS's do.

moto makes a DB snapshot ``available`` the moment CreateDBSnapshot returns. RDS answers with the
snapshot ``creating`` at ``PercentProgress`` 0 and reaches ``available`` at 100 minutes later
(https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBSnapshot.html,
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBSnapshot.html: Status,
PercentProgress). Here:

* CreateDBSnapshot -> ``creating`` for ``snapshot_delay`` seconds (MOTO_RDS_SNAPSHOT_DELAY, or
  ``POST /_rds_ext/config {"snapshot_delay": 3}``), its PercentProgress rising with the time, then
  ``available`` at 100; the final snapshots of deletions keep moto's (at once);
* DeleteDBSnapshot of a snapshot that is not ``available`` is refused with
  InvalidDBSnapshotState, as RDS does ("The DB snapshot must be in the available state":
  https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DeleteDBSnapshot.html);
* RestoreDBInstanceFromDBSnapshot of a snapshot that is not ``available`` is refused the same way
  (https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_RestoreDBInstanceFromDBSnapshot.html:
  InvalidDBSnapshotState).
"""

from __future__ import annotations

import time
from typing import Any


def _now() -> float:
    return time.monotonic()


def _progress(snapshot: Any) -> tuple[str, int]:
    """The snapshot's state and percent taken, from the time it was asked for."""
    d = snapshot.__dict__
    start, until = d.get("_ext_started"), d.get("_ext_until")
    if start is None or until is None or _now() >= until:
        return d.get("_ext_status", "available"), 100
    return "creating", int(100 * (_now() - start) / max(until - start, 1e-9))


def install(lock: Any, config: dict[str, float]) -> None:
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

    def create_db_snapshot(self: Any) -> Any:
        # The API call only: a deletion's final snapshot keeps moto's timing.
        with lock:
            result = orig_create(self)
            delay = config.get("snapshot_delay", 0.0)
            name = str(self.params["DBSnapshotIdentifier"]).lower()
            snapshot = self.backend.database_snapshots.get(name)
            if delay > 0 and snapshot is not None:
                snapshot.__dict__["_ext_started"] = _now()
                snapshot.__dict__["_ext_until"] = _now() + delay
            return result

    def delete_db_snapshot(self: Any, db_snapshot_identifier: str) -> Any:
        with lock:
            snapshot = self.database_snapshots.get(db_snapshot_identifier)
            if snapshot is not None:
                available(snapshot, "DeleteDBSnapshot")
            return orig_delete(self, db_snapshot_identifier)

    def restore_db_instance_from_db_snapshot(self: Any, from_snapshot_id: str,
                                             overrides: dict[str, Any]) -> Any:
        with lock:
            name = from_snapshot_id.split(":snapshot:")[-1].lower()
            snapshot = self.database_snapshots.get(name)
            if snapshot is not None:
                available(snapshot, "RestoreDBInstanceFromDBSnapshot")
            return orig_restore(self, from_snapshot_id, overrides)

    Response.create_db_snapshot = create_db_snapshot
    Backend.delete_db_snapshot = delete_db_snapshot
    Backend.restore_db_instance_from_db_snapshot = restore_db_instance_from_db_snapshot

