"""Aurora clones ("Cloning a volume for an Amazon Aurora DB cluster", Aurora.Managing.Clone.html;
API_RestoreDBClusterToPointInTime.html, RestoreType), where moto 5.2.5 takes RestoreType and
makes the same copy either way:

- **A clone** is RestoreDBClusterToPointInTime with ``RestoreType: copy-on-write``: its data is the
  source's at the latest restorable time (with real engines, the source server's data, copied:
  ``clusters.py``), and from then on neither sees the other's writes.
- **CloneGroupId.** "The ID of the clone group with which the DB cluster is associated"
  (API_DBCluster.html): a clone and its source show the same one; a cluster that is in no clone
  group shows none.
"""

from __future__ import annotations

import uuid
from typing import Any


def _clone_group(self: Any) -> str | None:
    return self.__dict__.get("_ext_clone_group")


def install(lock: Any) -> None:
    from moto.rds.models import DBCluster
    from moto.rds.models import RDSBackend as Backend

    DBCluster.clone_group_id = property(_clone_group)
    orig_pitr = Backend.restore_db_cluster_to_point_in_time

    def restore_db_cluster_to_point_in_time(self: Any, db_cluster_identifier: str,
                                            source_db_cluster_identifier: str, *args: Any,
                                            **kwargs: Any) -> Any:
        clone = orig_pitr(self, db_cluster_identifier, source_db_cluster_identifier, *args, **kwargs)
        if kwargs.get("restore_type") == "copy-on-write":
            with lock:
                source = self.clusters.get(source_db_cluster_identifier)
                group = source.__dict__.setdefault("_ext_clone_group", str(uuid.uuid4())) if source else None
                clone.__dict__["_ext_clone_group"] = group or str(uuid.uuid4())
        else:
            clone.__dict__.pop("_ext_clone_group", None)
        return clone

    Backend.restore_db_cluster_to_point_in_time = restore_db_cluster_to_point_in_time
