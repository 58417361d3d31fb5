"""Aurora's storage configurations, Standard and I/O-Optimized ("Storage configurations for Amazon
Aurora DB clusters", Aurora.Overview.StorageReliability.html#aurora-storage-type;
API_CreateDBCluster.html and API_ModifyDBCluster.html, StorageType), where moto 5.2.5 gives an
Aurora cluster the instance default ``gp2`` and takes any storage type:

- **Values.** An Aurora cluster's StorageType is ``aurora`` (Aurora Standard, the default) or
  ``aurora-iopt1`` (Aurora I/O-Optimized): "Valid Values: Aurora DB clusters - aurora |
  aurora-iopt1"; another value is ``InvalidParameterValue``.
- **The 30 days.** "You can switch your existing database clusters once every 30 days to Aurora
  I/O-Optimized. You can switch back to Aurora Standard at any time" (the storage page): a
  ModifyDBCluster to ``aurora-iopt1`` within ``iopt_switch_after`` seconds (MOTO_RDS_IOPT_SWITCH_AFTER,
  default 30 days) of the cluster's last switch to it is ``InvalidParameterCombination``, and the
  cluster keeps its storage. Choosing I/O-Optimized at creation is not a switch.
"""

from __future__ import annotations

import time
from typing import Any

AURORA_TYPES = ("aurora", "aurora-iopt1")


def _aurora(engine: Any) -> bool:
    return str(engine or "").startswith("aurora")


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import RDSBackend as Backend

    config.setdefault("iopt_switch_after", 30 * 24 * 3600.0)

    def refuse_value(kwargs: dict[str, Any]) -> None:
        wanted = kwargs.get("storage_type")
        if wanted is not None and wanted not in AURORA_TYPES:
            raise RDSClientError(
                "InvalidParameterValue",
                f"Invalid storage type for an Aurora DB cluster: {wanted}. Valid values: aurora, aurora-iopt1.")

    orig_create = Backend.create_db_cluster
    orig_modify = Backend.modify_db_cluster

    def create_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        if not _aurora(kwargs.get("engine")):
            return orig_create(self, kwargs)
        refuse_value(kwargs)
        # moto sizes a cluster by an instance storage type and knows neither of Aurora's.
        wanted = kwargs.pop("storage_type", None) or "aurora"
        cluster = orig_create(self, kwargs)
        cluster.storage_type = wanted
        return cluster

    def modify_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        cluster = self.clusters.get(kwargs.get("db_cluster_identifier"))
        wanted = kwargs.get("storage_type")
        switching = (cluster is not None and _aurora(cluster.engine) and wanted is not None
                     and wanted != cluster.storage_type)
        if switching:
            refuse_value(kwargs)
        if switching and wanted == "aurora-iopt1":
            with lock:
                last = cluster.__dict__.get("_ext_iopt_switched_at")
                now = time.monotonic()
                if last is not None and now - last < config["iopt_switch_after"]:
                    raise RDSClientError(
                        "InvalidParameterCombination",
                        f"DB cluster {cluster.db_cluster_identifier} was switched to Aurora I/O-Optimized "
                        "less than 30 days ago: you can switch an existing DB cluster to "
                        "aurora-iopt1 once every 30 days.")
        out = orig_modify(self, kwargs)
        if switching and wanted == "aurora-iopt1":
            cluster.__dict__["_ext_iopt_switched_at"] = time.monotonic()
        return out

    Backend.create_db_cluster = create_db_cluster
    Backend.modify_db_cluster = modify_db_cluster
