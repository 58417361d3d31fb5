"""Aurora global databases where moto's differ from the API reference.

moto 5.2.5 keeps global clusters (in its us-east-1 backend, reached from every region) with their
members, but takes no tags, has no ModifyGlobalCluster, and deletes a protected one. Here, as
https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/ says:

* CreateGlobalCluster takes ``Tags`` and DescribeGlobalClusters answers them in ``TagList``
  (API_CreateGlobalCluster.html, API_GlobalCluster.html), and the source cluster it is made of is
  its primary, ``IsWriter`` (API_GlobalClusterMember.html); AddTagsToResource,
  RemoveTagsFromResource and ListTagsForResource reach a global cluster by its ARN
  (``arn:aws:rds::<account>:global-cluster:<id>``, no region);
* ModifyGlobalCluster changes ``DeletionProtection`` and ``EngineVersion`` (a major version only
  with ``AllowMajorVersionUpgrade``, else InvalidParameterCombination) (API_ModifyGlobalCluster.html);
* DeleteGlobalCluster of a protected global cluster is refused (InvalidParameterCombination), and
  of one with members (InvalidGlobalClusterStateFault, moto's) (API_DeleteGlobalCluster.html);
* RemoveFromGlobalCluster detaches the member its ``DbClusterIdentifier`` ARN names into a
  standalone cluster (API_RemoveFromGlobalCluster.html; moto finds none by ARN and says nothing);
  DeleteDBCluster of a member is refused until then ("This cluster is a part of a global cluster,
  please remove it from globalcluster first", InvalidDBClusterStateFault);
* DescribeGlobalClusters with ``GlobalClusterIdentifier`` answers that one, or
  GlobalClusterNotFoundFault (API_DescribeGlobalClusters.html); moto answers all of them;
* a member cluster's ``GlobalClusterIdentifier`` in DescribeDBClusters is the global database's
  identifier ("Contains a user-supplied global database cluster identifier", API_DBCluster.html);
  moto sets the source cluster's to the global database's ARN;
* CreateDBCluster with ``GlobalClusterIdentifier`` of a global database that has a primary makes a
  secondary (API_CreateDBCluster.html, "GlobalClusterIdentifier: The global cluster ID of an
  Aurora cluster that becomes the primary cluster in the new global database cluster", and
  aurora-global-database-attaching.html): it takes no master user, password or database name,
  which RDS refuses with InvalidParameterCombination ("Cannot specify password for cross region
  replication cluster", as RDS answers it; the user name and database name in the same words),
  and has its primary's ``MasterUsername`` and ``DatabaseName``. With real engines (``engines.py``)
  its server replicates the primary's writer, read-only ("Secondary clusters ... are read-only",
  aurora-global-database.html), until RemoveFromGlobalCluster makes it a standalone, writable
  cluster ("the secondary cluster is promoted to a standalone cluster ... able to accept writes",
  aurora-global-database-detaching.html);
* the global writer ``Endpoint`` (API_GlobalCluster.html: "The writer endpoint for the new global
  database cluster. This endpoint always points to the writer DB instance in the current primary
  cluster") is, with real engines, an endpoint of its own (``endpoints.Endpoint``) forwarding each
  connection to the current primary's writer server;
* SwitchoverGlobalCluster (API_SwitchoverGlobalCluster.html) and FailoverGlobalCluster
  (API_FailoverGlobalCluster.html; ``AllowDataLoss`` makes it a failover, without it the call is a
  switchover, and both together are refused) name the target by ``TargetDbClusterIdentifier``
  (its ARN, or its identifier): a cluster not a member is DBClusterNotFoundFault, a global database
  not ``available`` or a target that is already the primary InvalidGlobalClusterStateFault. The
  global database is ``switching-over`` or ``failing-over`` for ``modify_delay`` seconds, with
  ``FailoverState`` (``Status`` ``failing-over`` for either, ``FromDbClusterArn``,
  ``ToDbClusterArn``, ``IsDataLossAllowed``, API_FailoverState.html), then ``available`` with the target ``IsWriter``. With real engines the
  data moves at the call: for a switchover the primary's writer stops taking writes and the
  target catches up with it before it takes them ("no data loss", aurora-global-database-disaster-recovery.html);
  a target that has not caught up within ``clusters.CATCH_UP_SECONDS`` is not promoted, the primary
  takes writes again and ``FailoverState`` is ``cancelling`` ("returning to their previous
  states"); for a failover the target takes writes at once, with what it has; the old primary then
  replicates the new one, read-only, as a secondary. The global writer endpoint reaches the new
  primary once the roles have changed.
"""

from __future__ import annotations

import time
from typing import Any

from . import clusters, endpoints, scope

# The global writer endpoint of each global database whose primary has a real server.
WRITER_ENDPOINTS: dict[str, endpoints.Endpoint] = {}

# What a secondary cannot be created with: CreateDBCluster parameter, the words RDS uses.
SECONDARY_REFUSED = (
    ("master_user_password", "password"),
    ("manage_master_user_password", "password"),
    ("master_username", "user name"),
    ("database_name", "database name"),
)


def _major(version: str | None) -> str:
    return (version or "").split(".")[0]


def writer_of(found: Any) -> Any:
    """The primary member cluster of a global database, or None."""
    return next((m for m in found.members if getattr(m, "is_writer", False)), None)


def writer_server(found: Any) -> Any:
    """The real server of the current primary's writer, or None."""
    writer = writer_of(found)
    if writer is None:
        return None
    # In the writer's own region (scope.py): a secondary may have its primary's identifier.
    with scope.of(writer):
        return clusters.server_of(writer.db_cluster_identifier)


def install(lock: Any, config: dict[str, float]) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import GlobalCluster, RDSBackend as Backend, rds_backends
    from moto.rds.responses import RDSResponse as Response

    def store(account: str) -> Any:
        return rds_backends[account]["us-east-1"].global_clusters

    def find(account: str, identifier: str) -> Any:
        found = store(account).get(identifier.split(":global-cluster:")[-1])
        if found is None:
            raise RDSClientError("GlobalClusterNotFoundFault",
                                 f"Global cluster {identifier} not found.")
        return found

    orig_create = Response.create_global_cluster

    def create_global_cluster(self: Any) -> Any:
        with lock:
            # The source cluster is found in its own region: moto looks for it in us-east-1's
            # backend only, where global databases are kept, and refused a primary anywhere else
            # (API_CreateGlobalCluster.html: SourceDBClusterIdentifier, "the Amazon Resource Name
            # (ARN) for an existing DB cluster", in any region).
            source = str(self.params.get("SourceDBClusterIdentifier") or "")
            parts = source.split(":")
            home = self.global_backend
            elsewhere = None
            if len(parts) > 6 and parts[2] == "rds" and parts[5] == "cluster" and parts[3] != home.region_name:
                there = rds_backends.get(parts[4] or self.current_account, {}).get(parts[3])
                elsewhere = getattr(there, "clusters", {}).get(parts[6].lower()) if there is not None else None
            if elsewhere is not None:
                home.__dict__["describe_db_clusters"] = lambda *args, **kwargs: [elsewhere]
            try:
                result = orig_create(self)
            finally:
                home.__dict__.pop("describe_db_clusters", None)
            created = store(self.current_account).get(self.params["GlobalClusterIdentifier"])
            if created is not None:
                created.tags = self.params.get("Tags") or []
                for member in created.members:
                    member.global_cluster_identifier = created.global_cluster_identifier
                # The source cluster is the primary: IsWriter (API_GlobalClusterMember.html);
                # moto marks only clusters created into a global cluster.
                for member in created.members[:1]:
                    member.is_writer = True
            return result

    def describe_global_clusters(self: Any) -> Any:
        with lock:
            identifier = self.params.get("GlobalClusterIdentifier")
            if identifier:
                return ActionResult({"GlobalClusters": [find(self.current_account, identifier)]})
            return ActionResult({"GlobalClusters": list(store(self.current_account).values())})

    def modify_global_cluster(self: Any) -> Any:
        with lock:
            found = find(self.current_account, self.params["GlobalClusterIdentifier"])
            protection = self.params.get("DeletionProtection")
            version = self.params.get("EngineVersion")
            if version and _major(version) != _major(found.engine_version) \
                    and not self.params.get("AllowMajorVersionUpgrade"):
                raise RDSClientError(
                    "InvalidParameterCombination",
                    "The AllowMajorVersionUpgrade flag must be present when upgrading to a new "
                    "major version.")
            if protection is not None:
                found.deletion_protection = protection in (True, "true", "True")
            if version:
                found.engine_version = version
            return ActionResult({"GlobalCluster": found})

    orig_delete = Response.delete_global_cluster

    def delete_global_cluster(self: Any) -> Any:
        with lock:
            found = find(self.current_account, self.params["GlobalClusterIdentifier"])
            if found.deletion_protection:
                raise RDSClientError(
                    "InvalidParameterCombination",
                    "Cannot delete protected Global Cluster, please disable deletion protection "
                    "and try again.")
            result = orig_delete(self)
            endpoint = WRITER_ENDPOINTS.pop(found.global_cluster_identifier, None)
            if endpoint is not None:
                endpoint.close()
            return result

    def remove_from_global_cluster(self: Any) -> Any:
        # DbClusterIdentifier is the member's ARN (API_RemoveFromGlobalCluster.html); moto looks
        # it up as an identifier and, not finding it, removes nothing and says nothing.
        with lock:
            found = find(self.current_account, self.params["GlobalClusterIdentifier"])
            wanted = str(self.params.get("DbClusterIdentifier") or "")
            member = next((m for m in found.members
                           if wanted in (m.db_cluster_arn, m.db_cluster_identifier)), None)
            if member is None:
                raise RDSClientError("DBClusterNotFoundFault",
                                     f"DBCluster {wanted} is not a member of {found.global_cluster_identifier}.")
            found.members.remove(member)
            member.global_cluster_identifier = None
            was_writer, member.is_writer = getattr(member, "is_writer", False), True
            with scope.of(member):
                server = clusters.server_of(member.db_cluster_identifier)
            if not was_writer and server is not None and server.source is not None:
                server.promote()
            return ActionResult({"GlobalCluster": found})

    orig_delete_cluster = Backend.delete_db_cluster

    def delete_db_cluster(self: Any, cluster_identifier: str, *args: Any, **kwargs: Any) -> Any:
        # "This cluster is a part of a global cluster, please remove it from globalcluster
        # first" (InvalidDBClusterStateFault): a member is detached before it is deleted.
        with lock:
            for found in store(self.account_id).values():
                if any(m.db_cluster_identifier == cluster_identifier.lower() and m.region == self.region_name
                       for m in found.members):
                    raise RDSClientError(
                        "InvalidDBClusterStateFault",
                        "This cluster is a part of a global cluster, please remove it from "
                        "globalcluster first")
            return orig_delete_cluster(self, cluster_identifier, *args, **kwargs)

    orig_create_cluster = Backend.create_db_cluster

    def create_db_cluster(self: Any, kwargs: dict[str, Any]) -> Any:
        global_id = kwargs.get("global_cluster_identifier")
        if not global_id:
            return orig_create_cluster(self, kwargs)
        with lock:
            found = find(self.account_id, global_id)
            primary = writer_of(found)
            if primary is not None:
                for parameter, what in SECONDARY_REFUSED:
                    if kwargs.get(parameter) not in (None, False, "false", ""):
                        raise RDSClientError(
                            "InvalidParameterCombination",
                            f"Cannot specify {what} for cross region replication cluster")
            identifier = kwargs["db_cluster_identifier"].lower()
            source = writer_server(found)
            if primary is not None and source is not None:
                clusters.SECONDARIES[identifier] = source
            try:
                cluster = orig_create_cluster(self, kwargs)
            finally:
                clusters.SECONDARIES.pop(identifier, None)
            cluster.global_cluster_identifier = found.global_cluster_identifier
            if primary is not None:
                cluster.master_username = primary.master_username
                cluster.database_name = primary.database_name
            return cluster

    def switch(self: Any, failover: bool) -> Any:
        params = self.params
        loss = str(params.get("AllowDataLoss")).lower() == "true"
        if failover and loss and str(params.get("Switchover")).lower() == "true":
            raise RDSClientError("InvalidParameterCombination",
                                 "AllowDataLoss can't be specified together with Switchover.")
        losing = failover and loss
        with lock:
            found = find(self.current_account, params["GlobalClusterIdentifier"])
            wanted = str(params.get("TargetDbClusterIdentifier") or "")
            target = next((m for m in found.members
                           if wanted in (m.db_cluster_arn, m.db_cluster_identifier)), None)
            if target is None:
                raise RDSClientError("DBClusterNotFoundFault",
                                     f"DBCluster {wanted} is not a member of {found.global_cluster_identifier}.")
            if found.status != "available":
                raise RDSClientError("InvalidGlobalClusterStateFault",
                                     f"Global cluster {found.global_cluster_identifier} is not in available state.")
            old = writer_of(found)
            if old is target:
                raise RDSClientError("InvalidGlobalClusterStateFault",
                                     f"DBCluster {wanted} is already the primary cluster of "
                                     f"{found.global_cluster_identifier}.")
            moved = move_data(old, target, losing)
            found.__dict__["_ext_switch"] = (time.time() + config["modify_delay"], old, target if moved else old)
            found.__dict__["_ext_switch_status"] = "failing-over" if losing else "switching-over"
            # FailoverState's Status is pending, failing-over or cancelling, for a switchover too
            # ("failing-over – ... during the switchover or failover process"; "cancelling – ...
            # returning to their previous states", API_FailoverState.html).
            found.__dict__["_ext_failover_state"] = {
                "Status": "failing-over" if moved else "cancelling",
                "FromDbClusterArn": old.db_cluster_arn if old is not None else None,
                "ToDbClusterArn": target.db_cluster_arn,
                "IsDataLossAllowed": losing,
            }
            return ActionResult({"GlobalCluster": found})

    def move_data(old: Any, target: Any, losing: bool) -> bool:
        """The data moves to `target`; False when a switchover's target could not catch up.

        A switchover loses no write: "Aurora ... waits for the secondary DB cluster to be fully
        synchronized with the primary" before it promotes it (aurora-global-database-disaster-recovery.html,
        "switchover"); a target that has not applied the primary's writes within
        clusters.CATCH_UP_SECONDS is not promoted and the primary takes writes again (the
        global database's FailoverState is then ``cancelling``). A failover (AllowDataLoss)
        promotes the target with what it has."""
        old_server = None
        if old is not None:
            with scope.of(old):
                old_server = clusters.server_of(old.db_cluster_identifier)
        with scope.of(target):
            new_server = clusters.server_of(target.db_cluster_identifier)
        if new_server is None:
            return True
        if old_server is not None and not losing:
            old_server.set_read_only(True)
            if not new_server.caught_up(old_server.position(), clusters.CATCH_UP_SECONDS):
                old_server.set_read_only(False)
                return False
        new_server.promote()
        if old_server is not None:
            old_server.follow(new_server)
        return True

    def status_get(self: Any) -> str:
        switching = self.__dict__.get("_ext_switch")
        if switching is None:
            return self.__dict__.get("_ext_status", "available")
        until, old, target = switching
        if time.time() < until:
            return self.__dict__["_ext_switch_status"]
        if old is not None:
            old.is_writer = False
        target.is_writer = True
        del self.__dict__["_ext_switch"]
        self.__dict__.pop("_ext_failover_state", None)
        return self.__dict__.get("_ext_status", "available")

    def status_set(self: Any, value: str) -> None:
        self.__dict__["_ext_status"] = value

    GlobalCluster.status = property(status_get, status_set)
    GlobalCluster.failover_state = property(lambda self: self.__dict__.get("_ext_failover_state"))
    Response.switchover_global_cluster = lambda self: switch(self, False)
    Response.failover_global_cluster = lambda self: switch(self, True)

    orig_endpoint = GlobalCluster.endpoint

    def endpoint(self: Any) -> Any:
        with lock:
            server = writer_server(self)
            known = WRITER_ENDPOINTS.get(self.global_cluster_identifier)
            if server is None and known is None:
                return orig_endpoint.fget(self)
            if known is None:
                known = endpoints.Endpoint(f"{self.global_cluster_identifier}.global", server.port,
                                           lambda: writer_server(self))
                WRITER_ENDPOINTS[self.global_cluster_identifier] = known
            return known.address

    def tagged(orig: Any) -> Any:
        def handler(self: Any, arn: str, *args: Any) -> Any:
            if ":global-cluster:" not in arn:
                return orig(self, arn, *args)
            with lock:
                found = find(self.account_id, arn)
                if orig is orig_list:
                    return found.get_tags()
                if orig is orig_add:
                    return found.add_tags(args[0])
                return found.remove_tags(args[0])
        return handler

    orig_list = Backend.list_tags_for_resource
    orig_add = Backend.add_tags_to_resource
    orig_remove = Backend.remove_tags_from_resource
    Backend.list_tags_for_resource = tagged(orig_list)
    Backend.add_tags_to_resource = tagged(orig_add)
    Backend.remove_tags_from_resource = tagged(orig_remove)
    Response.create_global_cluster = create_global_cluster
    Response.describe_global_clusters = describe_global_clusters
    Response.modify_global_cluster = modify_global_cluster
    Response.delete_global_cluster = delete_global_cluster
    Response.remove_from_global_cluster = remove_from_global_cluster
    Backend.delete_db_cluster = delete_db_cluster
    Backend.create_db_cluster = create_db_cluster
    GlobalCluster.endpoint = property(endpoint)
