"""IAM roles associated with a DB instance or cluster (API_AddRoleToDBInstance.html,
API_RemoveRoleFromDBInstance.html, API_AddRoleToDBCluster.html, API_RemoveRoleFromDBCluster.html),
where moto 5.2.5 adds roles but has no RemoveRoleFromDBInstance or RemoveRoleFromDBCluster:

- **Remove.** RemoveRoleFromDBInstance of a role the instance does not have is
  ``DBInstanceRoleNotFound`` ("The specified RoleArn value doesn't match the specified feature for
  the DB instance"); RemoveRoleFromDBCluster's is ``DBClusterRoleNotFound``. The instance or cluster
  must be ``available`` (``InvalidDBInstanceState``, ``InvalidDBClusterStateFault``).
- **A feature for an instance.** AddRoleToDBInstance takes FeatureName ("Required: Yes"); without
  it, ``InvalidParameterValue``.
"""

from __future__ import annotations

from typing import Any


def install(lock: Any) -> None:
    from moto.core.responses import EmptyResult
    from moto.rds.exceptions import DBClusterNotFoundError, InvalidDBClusterStateFault, RDSClientError
    from moto.rds.models import RDSBackend as Backend
    from moto.rds.responses import RDSResponse

    def remove(holder: Any, role_arn: str, feature_name: str | None, code: str, what: str) -> None:
        for role in list(holder._associated_roles):
            if role.role_arn == role_arn and (feature_name is None or role.feature_name == feature_name):
                holder._associated_roles.remove(role)
                return
        raise RDSClientError(code, f"Role {role_arn} is not associated with {what}")

    def remove_role_from_db_instance(self: Any, db_instance_identifier: str, role_arn: str,
                                     feature_name: str | None) -> None:
        with lock:
            db = self.describe_db_instances(db_instance_identifier)[0]
            if db.status != "available":
                raise RDSClientError("InvalidDBInstanceState",
                                     f"Instance {db_instance_identifier} should be in a valid state to remove a role.")
            remove(db, role_arn, feature_name, "DBInstanceRoleNotFound", f"DB instance {db_instance_identifier}")

    def remove_role_from_db_cluster(self: Any, db_cluster_identifier: str, role_arn: str,
                                    feature_name: str | None) -> None:
        with lock:
            cluster = self.clusters.get(db_cluster_identifier)
            if cluster is None:
                raise DBClusterNotFoundError(db_cluster_identifier)
            if cluster.status != "available":
                raise InvalidDBClusterStateFault(
                    f"Cluster {db_cluster_identifier} should be in a valid state to remove a role.")
            remove(cluster, role_arn, feature_name, "DBClusterRoleNotFound", f"DB cluster {db_cluster_identifier}")

    orig_add_instance = Backend.add_role_to_db_instance

    def add_role_to_db_instance(self: Any, db_instance_identifier: str, role_arn: str,
                                feature_name: str | None) -> None:
        if not feature_name:
            raise RDSClientError("InvalidParameterValue", "FeatureName is required for a DB instance role.")
        return orig_add_instance(self, db_instance_identifier, role_arn, feature_name)

    Backend.remove_role_from_db_instance = remove_role_from_db_instance
    Backend.remove_role_from_db_cluster = remove_role_from_db_cluster
    Backend.add_role_to_db_instance = add_role_to_db_instance

    def instance_call(self: Any) -> Any:
        self.backend.remove_role_from_db_instance(self.params.get("DBInstanceIdentifier"),
                                                  self.params.get("RoleArn"), self.params.get("FeatureName"))
        return EmptyResult()

    def cluster_call(self: Any) -> Any:
        self.backend.remove_role_from_db_cluster(self.params.get("DBClusterIdentifier"),
                                                 self.params.get("RoleArn"), self.params.get("FeatureName"))
        return EmptyResult()

    RDSResponse.remove_role_from_db_instance = instance_call
    RDSResponse.remove_role_from_db_cluster = cluster_call
