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
  GlobalClusterNotFoundFault (API_DescribeGlobalClusters.html); moto answers all of them.
"""

from __future__ import annotations

from typing import Any


def _major(version: str | None) -> str:
    return (version or "").split(".")[0]


def install(lock: Any) -> None:
    from moto.core.responses import ActionResult
    from moto.rds.exceptions import RDSClientError
    from moto.rds.models import RDSBackend as Backend, rds_backends
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
            result = orig_create(self)
            created = store(self.current_account).get(self.params["GlobalClusterIdentifier"])
            if created is not None:
                created.tags = self.params.get("Tags") or []
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
            return orig_delete(self)

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
            member.is_writer = True
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
