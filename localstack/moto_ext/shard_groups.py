"""Aurora PostgreSQL Limitless Database DB shard groups as RDS runs them, on moto's.

moto 5.2.5 has CreateDBShardGroup and DescribeDBShardGroups only: the group is ``available`` at
once, of any cluster, and cannot be changed, rebooted or deleted. RDS ("Aurora PostgreSQL Limitless
Database", limitless.html; limitless-shard.html; API_CreateDBShardGroup.html,
API_ModifyDBShardGroup.html, API_DeleteDBShardGroup.html, API_RebootDBShardGroup.html,
API_DescribeDBShardGroups.html, API_DBShardGroup.html):

- **Its cluster.** CreateDBCluster takes ``ClusterScalabilityType`` (``standard``, the default, or
  ``limitless``: API_CreateDBCluster.html), reported on the cluster. A shard group is made only for
  an Aurora PostgreSQL cluster whose scalability type is ``limitless`` ("you create a DB shard group
  ... in a DB cluster that uses the limitless cluster scalability type", limitless-cluster.html),
  else InvalidDBClusterStateFault; one shard group per cluster (MaxDBShardGroupLimitReached). A
  cluster RDS lacks is DBClusterNotFoundFault (moto: the same).
- **Capacity.** ``MinACU`` below ``MaxACU`` (moto: the same); ``ComputeRedundancy`` 0, 1 or 2
  (moto: the same).
- **States.** ``creating`` for the create delay, then ``available``; ModifyDBShardGroup (MaxACU,
  MinACU, ComputeRedundancy) ``modifying`` for the modify delay; RebootDBShardGroup ``rebooting``;
  DeleteDBShardGroup ``deleting`` for the delete delay, then gone. A reboot or deletion of one that
  is not ``available`` is InvalidDBShardGroupState, a change InvalidDBClusterStateFault (the only
  state fault ModifyDBShardGroup's errors list); one RDS lacks is DBShardGroupNotFound.
- **Its endpoint** is ``<cluster>.limitless-<id>.<region>.rds.amazonaws.com`` (limitless-shard.html,
  "DB shard group endpoint"); moto gives the cluster's own name.
- **The cluster waits for it.** DeleteDBCluster of a cluster with a shard group is
  InvalidDBClusterStateFault ("delete the DB shard group first", limitless-deleting.html).
- **Pages and tags.** DescribeDBShardGroups pages with ``MaxRecords`` (20 to 100) and ``Marker``, and
  filters by ``db-cluster-id``; the tag calls reach a group by its ARN
  (``arn:aws:rds:<region>:<account>:shard-group:<id>``), which moto's tag calls do not take.

Not modelled: the shards and routers themselves (no Limitless engine is here; a real PostgreSQL
cluster serves the cluster's endpoints as any Aurora PostgreSQL one), and the capacity's ranges.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from . import paging

def status(group: Any) -> str:
    """The group's state now (its phase, kept on the group), the phase over once its time has come."""
    phase = group.__dict__.get("_ext_phase")
    if phase is not None and time.time() >= phase[1]:
        if phase[0] == "deleting":
            return "deleted"
        group.__dict__["_ext_phase"] = None
        return "available"
    return phase[0] if phase is not None else "available"


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import DBCluster, DBShardGroup, RDSBackend as Backend
    from moto.rds.responses import RDSResponse as Response

    from . import tagging  # here: tagging is installed after this module

    def begin(group: Any, phase: str, delay: float) -> None:
        if delay > 0:
            group.__dict__["_ext_phase"] = (phase, time.time() + delay)

    def live(backend: Any) -> dict[str, Any]:
        for name, group in list(backend.shard_groups.items()):
            if status(group) == "deleted":
                backend.shard_groups.pop(name, None)
        return backend.shard_groups

    def found(backend: Any, identifier: str) -> Any:
        group = live(backend).get(str(identifier or ""))
        if group is None:
            raise RDSClientError("DBShardGroupNotFound", f"DBShardGroup {identifier} not found.")
        return group

    def available(group: Any, code: str = "InvalidDBShardGroupState") -> None:
        if status(group) != "available":
            raise RDSClientError(code, f"DB shard group {group.db_shard_group_identifier} is {status(group)}.")

    # The cluster's scalability type (API_CreateDBCluster.html, ClusterScalabilityType).
    orig_cluster_init = DBCluster.__init__

    def cluster_init(self: Any, *args: Any, **kwargs: Any) -> None:
        orig_cluster_init(self, *args, **kwargs)
        self.cluster_scalability_type = str(kwargs.get("cluster_scalability_type") or "standard")

    DBCluster.__init__ = cluster_init

    orig_create = Backend.create_db_shard_group

    def create_db_shard_group(self: Any, kwargs: dict[str, Any]) -> Any:
        # A bad parameter is refused first (moto's own checks: ComputeRedundancy, MinACU), the
        # cluster's kind after.
        redundancy, min_acu = kwargs.get("compute_redundancy"), kwargs.get("min_acu")
        if redundancy not in (None, 0, 1, 2) or (min_acu is not None and min_acu >= kwargs["max_acu"]):
            return orig_create(self, kwargs)
        with lock:
            cluster = self.clusters.get(kwargs.get("db_cluster_identifier"))
            if cluster is not None and (cluster.engine != "aurora-postgresql"
                                        or getattr(cluster, "cluster_scalability_type", "") != "limitless"):
                raise RDSClientError("InvalidDBClusterStateFault",
                                     f"DB cluster {cluster.db_cluster_identifier} is not an Aurora PostgreSQL "
                                     "cluster of the limitless cluster scalability type.")
            if cluster is not None and any(g.db_cluster_identifier == cluster.db_cluster_identifier
                                           for g in live(self).values()):
                raise RDSClientError("MaxDBShardGroupLimitReached",
                                     f"DB cluster {cluster.db_cluster_identifier} has a DB shard group.")
            group = orig_create(self, kwargs)
            digest = hashlib.sha1(f"{self.account_id}{group.db_shard_group_identifier}".encode()).hexdigest()[:12]
            group.endpoint = f"{group.db_cluster_identifier}.limitless-{digest}.{self.region_name}.rds.amazonaws.com"
            begin(group, "creating", config["create_delay"])
            return group

    def modify_db_shard_group(self: Any) -> Any:
        from moto.core.responses import ActionResult

        p = self.params
        with lock:
            group = found(self.backend, p.get("DBShardGroupIdentifier"))
            # ModifyDBShardGroup's errors list no shard group state fault: the cluster's
            # (API_ModifyDBShardGroup.html, Errors).
            available(group, "InvalidDBClusterStateFault")
            max_acu = float(p["MaxACU"]) if p.get("MaxACU") is not None else group.max_acu
            min_acu = float(p["MinACU"]) if p.get("MinACU") is not None else group.min_acu
            if min_acu is not None and min_acu >= max_acu:
                raise RDSClientError("InvalidParameterValue", "min_acu cannot be larger than max_acu")
            redundancy = p.get("ComputeRedundancy")
            if redundancy is not None and int(redundancy) not in (0, 1, 2):
                raise RDSClientError("InvalidParameterValue",
                                     f"Invalid ComputeRedundancy value: '{redundancy}'. "
                                     "Valid values are 0 (no standby), 1 (1 standby AZ), 2 (2 standby AZs).")
            group.max_acu, group.min_acu = max_acu, min_acu
            if redundancy is not None:
                group.compute_redundancy = int(redundancy)
            begin(group, "modifying", config["modify_delay"])
            return ActionResult(group)

    def reboot_db_shard_group(self: Any) -> Any:
        from moto.core.responses import ActionResult

        with lock:
            group = found(self.backend, self.params.get("DBShardGroupIdentifier"))
            available(group)
            begin(group, "rebooting", config["modify_delay"])
            return ActionResult(group)

    def delete_db_shard_group(self: Any) -> Any:
        from moto.core.responses import ActionResult

        with lock:
            group = found(self.backend, self.params.get("DBShardGroupIdentifier"))
            available(group)
            begin(group, "deleting", max(config["delete_delay"], 0.01))
            return ActionResult(group)

    def describe_db_shard_groups(self: Any) -> Any:
        from moto.core.responses import ActionResult

        p = self.params
        paging.size(p)
        with lock:
            wanted = p.get("DBShardGroupIdentifier")
            groups = [found(self.backend, wanted)] if wanted else list(live(self.backend).values())
            filters = {f["Name"]: list(f.get("Values", [])) for f in p.get("Filters", [])}
            if "db-cluster-id" in filters:
                groups = [g for g in groups if g.db_cluster_identifier in filters["db-cluster-id"]]
            groups.sort(key=lambda g: g.db_shard_group_identifier)
            return ActionResult(paging.page(p, "DBShardGroups", groups))

    orig_delete_cluster = Backend.delete_db_cluster

    def delete_db_cluster(self: Any, cluster_identifier: str, *args: Any, **kwargs: Any) -> Any:
        with lock:
            if any(g.db_cluster_identifier == cluster_identifier for g in live(self).values()):
                raise RDSClientError("InvalidDBClusterStateFault",
                                     f"DB cluster {cluster_identifier} has a DB shard group: delete it first.")
        return orig_delete_cluster(self, cluster_identifier, *args, **kwargs)

    # The state moto reports is the phase's (moto's attribute is a plain "available").
    DBShardGroup.status = property(status, lambda self, value: None)
    Backend.create_db_shard_group = create_db_shard_group
    Backend.delete_db_cluster = delete_db_cluster
    Response.modify_db_shard_group = modify_db_shard_group
    Response.reboot_db_shard_group = reboot_db_shard_group
    Response.delete_db_shard_group = delete_db_shard_group
    Response.describe_db_shard_groups = describe_db_shard_groups
    tagging.route(lock, ":shard-group:",
                  lambda backend, arn: found(backend, arn.split(":shard-group:", 1)[1]))
